"""Following a moved view (issue 21): the search for the viewed lines after lines were added above
them, as a process that never saw the read does it (docs/behaviour.md#viewed_code_id).

    python bench/bench_relocate.py [--lines N] [--repeat N]

A file of N distinct lines (default 10,000) is read at lines 5,000.. for views of 1, 100 and 1,000
lines; one line is then added at the top and the view's token is checked against the new file
(check_view, with a fresh Context: no remembered text). Reported: the median time of that check,
and one regex pass over the file (`re.finditer(b"\\n")`) in the same run, as the reference.
Target: a few milliseconds for a 1,000-line view.
"""

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import better_edit as be  # noqa: E402
from bench import median_in_process  # noqa: E402


def timed(function, repeat):
    """The median of `repeat` runs, in ms (bench.median_in_process, the measure of every bench)."""
    return median_in_process(function, repeat) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "f.py"
        uniform = "".join(f"value_{n} = compute({n}, 'text {n % 97}')\n" for n in range(ns.lines))
        code = Path(be.__file__).read_text().splitlines(keepends=True)[: ns.lines]
        for name, text in (
            ("lines of one length (the worst case)", uniform),
            ("better_edit.py's own lines", "".join(code)),
        ):
            print(f"--- {name}")
            path.write_text(text)
            run(be, root, path, ns)


def run(be, root, path, ns):
    body = path.read_bytes()
    regex = timed(lambda: sum(1 for _ in re.finditer(b"\n", body)), ns.repeat)
    print(f"{ns.lines} lines, {len(body)} bytes; one regex pass: {regex:.2f} ms")
    for size in (1, 100, 1000):
        ctx = be.Context(root=str(root), cache_dir=str(root / ".cache"))
        start = ns.lines // 2
        while True:  # the first view from the middle on whose lines stand nowhere else
            window = {"file": "f.py", "start": start, "end": start + size - 1}
            token = be.call_tool(ctx, be.find_tool("read"), window)["viewed_code_id"]
            if ":u" in token:
                break
            start += 1
        original = path.read_bytes()
        path.write_bytes(b"# one more line\n" + original)
        fresh = be.Context(root=str(root), cache_dir=str(root / ".cache"))  # (remembers no read)
        real, text = be.read_text(fresh, "f.py")
        opened = be.Opened("f.py", real, text)

        def check(token=token, opened=opened, start=start, fresh=fresh):
            _warnings, moved = be.check_view(fresh, {"viewed_code_id": token}, opened, start, start)
            assert moved == 1

        took = timed(check, ns.repeat)
        print(
            f"view of {size:5} lines: moved view found in {took:.2f} ms = {took / regex:.2f}x one regex pass"
        )
        path.write_bytes(original)


if __name__ == "__main__":
    main()
