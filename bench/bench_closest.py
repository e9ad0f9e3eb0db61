"""Mismatch diagnostics (issue 12): the cost of `closest` on a large file.

    python bench/bench_closest.py [--lines 200000] [--repeat 5]

A 200,000-line Python file; `old` is a 5-line (and a 50-line) block copied with a mistake (spaces for
tabs, a typo on every line, doubled escapes). Reported: the median time of closest_block() and of the
whole failed CLI call, each as a ratio of one `re.finditer` pass over the file measured in the same run.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import better_edit as be  # noqa: E402
from bench import median_in_process  # noqa: E402

BLOCK = "def handler_{n}(request):\n\tvalues = request.get('values', [])\n\tif not values:\n\t\treturn None\n\treturn sum(values) / len(values)\n\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    text = "".join(BLOCK.format(n=n) for n in range(options.lines // 6))
    lines = text.split("\n")[:-1]
    middle = (len(lines) // 12) * 6
    cases = {
        "5 lines, spaces for tabs": [line.replace("\t", "    ") for line in lines[middle : middle + 5]],
        "5 lines, a typo on each": [line.replace("e", "3", 1) for line in lines[middle : middle + 5]],
        "5 lines, doubled escapes": ["\\n".join(lines[middle : middle + 5])],
        "50 lines, one typo": lines[middle : middle + 49] + [lines[middle + 49] + " x"],
    }
    pattern = re.compile(r"[{}()\[\]]")
    reference = median_in_process(lambda: sum(1 for _ in pattern.finditer(text)), options.repeat)
    print(
        f"file: {len(lines):,} lines, {len(text) / 1e6:.1f} MB; one re.finditer pass: {reference * 1000:.1f} ms"
    )
    for name, old in cases.items():
        found = be.closest_block(lines, old)
        took = median_in_process(lambda old=old: be.closest_block(lines, old), options.repeat)
        kind = found and found["first_difference"] and found["first_difference"]["kind"]
        print(
            f"  closest_block, {name:26} {took * 1000:7.1f} ms = {took / reference:5.2f}x  -> lines {found and found['start']}, {kind}"
        )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "big.py")
        path.write_text(text)
        old = "\n".join(cases["5 lines, spaces for tabs"])
        env = dict(os.environ, BETTER_EDIT_CACHE_DIR=str(Path(folder, "cache")), PYTHONPATH=str(REPO))
        command = [sys.executable, "-m", "better_edit", "replace", "-f", str(path), "--old", old, "-c", "x"]
        took = median_in_process(
            lambda: subprocess.run(command, env=env, capture_output=True), options.repeat
        )
        print(
            f"  whole CLI call answering MISMATCH with closest: {took * 1000:.0f} ms = {took / reference:.2f}x"
        )


if __name__ == "__main__":
    main()
