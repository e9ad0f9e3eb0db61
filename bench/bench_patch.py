"""Reading a large patch: `parse_patch` of a diff that creates a file of N lines (default 20,000),
against one regex pass over the same text in the same run (the reference).

    python -S -E bench/bench_patch.py [--lines 20000] [--repeat 3] [--difflib]

Each line of a hunk used to count every line before it (whether the hunk held its counts yet):
20,000 lines took 14 s in a CLI `patch --preview` here, 0.38 s after the counts were asked only
where a hunk may end (docs/decisions.md).

Then the diff shown of a patch's result, full_diff, where a call is renamed on every 7th line:
difflib alone is quadratic there (`--difflib` times it too); full_diff matches unique lines first.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_scanners import best_of  # noqa: E402

import better_edit as be  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--difflib", action="store_true", help="also time difflib alone (seconds)")
    options = parser.parse_args()
    body = "".join(f"+line {n}\n" for n in range(options.lines))
    patch = f"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,{options.lines} @@\n{body}"
    assert len(be.parse_patch(patch)) == 1
    took = best_of(lambda: be.parse_patch(patch), options.repeat)
    floor = best_of(lambda: sum(1 for _ in re.finditer(r"\n", patch)), options.repeat)
    print(f"parse_patch of {options.lines} lines: {took * 1000:.1f} ms = {took / floor:.0f}x one regex pass")
    # the diff a patch's result shows: a call renamed on every 7th line (one hunk over the file)
    old = [(f"    value_{n} = compute({n}, 'x')", "\n") for n in range(options.lines)]
    new = [(t.replace("compute", "calc") if n % 7 == 0 else t, e) for n, (t, e) in enumerate(old)]
    text = "".join(t + e for t, e in old)
    took = best_of(lambda: be.full_diff("f.py", old, new), options.repeat)
    floor = best_of(lambda: sum(1 for _ in re.finditer(r"\n", text)), options.repeat)
    print(
        f"full_diff of {options.lines} lines, every 7th changed: {took * 1000:.1f} ms = {took / floor:.0f}x one regex pass"
    )
    if options.difflib:
        import difflib

        show = [[t for t, _e in side] for side in (old, new)]
        took = best_of(lambda: list(difflib.unified_diff(*show, n=3, lineterm="")), 1)
        print(
            f"  difflib.unified_diff alone (before 0.3's anchoring): {took * 1000:.0f} ms = {took / floor:.0f}x"
        )


if __name__ == "__main__":
    main()
