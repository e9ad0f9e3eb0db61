"""be-edit / `edit` (issue 13): an edit of N items in one file against a single replace in it.

    python bench/bench_edit.py [--mb 10] [--items 50] [--repeat 5]

Both run as the CLI on a fresh copy of the same source file (with the post-edit balance check, a
snapshot and fsync), measured side by side in one run; the figure is the ratio of the medians.
Target: an edit of 50 items costs <= 1.5x a single replace (one read, one write, one balance
check before and after, whatever the number of items).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench import make_source  # noqa: E402


def run_timed(args, cwd, env, repeat, source, stdin=None):
    times = []
    for _ in range(repeat):
        shutil.copyfile(source, cwd / "big.js")
        start = time.perf_counter()
        done = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"failed: {args}: {done.stderr.decode()[-500:]}")
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="be-bench-edit-"))
    try:
        source = make_source(work / "source.js", options.mb)
        total = sum(1 for _ in open(source, "rb"))
        env = dict(os.environ, BETTER_EDIT_CACHE_DIR=str(work / "cache"), PYTHONPATH=str(REPO))
        command = [sys.executable, "-m", "better_edit"]
        single = run_timed(
            [
                *command,
                "replace",
                "-f",
                "big.js",
                "-s",
                str(total // 2),
                "-e",
                str(total // 2 + 4),
                "-c",
                "// one",
            ],
            work,
            env,
            options.repeat,
            source,
        )
        step = total // (options.items + 1)
        edits = [
            {"file": "big.js", "start": step * (n + 1), "end": step * (n + 1) + 4, "content": f"// item {n}"}
            for n in range(options.items)
        ]
        many = run_timed(
            [*command, "edit", "--edits-file", "-"],
            work,
            env,
            options.repeat,
            source,
            json.dumps(edits).encode(),
        )
        size = os.path.getsize(source) / 1e6
        print(f"file: {size:.1f} MB, {total} lines; median of {options.repeat}")
        print(f"single replace (5 lines):        {single * 1000:8.1f} ms")
        print(f"edit of {options.items} items (5 lines each): {many * 1000:8.1f} ms")
        print(f"ratio edit/replace: {many / single:.2f}x (target <= 1.5x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
