"""Reading a large patch: `parse_patch` of a diff that creates a file of N lines (default 20,000),
against one regex pass over the same text in the same run (the reference).

    python -S -E bench/bench_patch.py [--lines 20000] [--repeat 3]

Each line of a hunk used to count every line before it (whether the hunk held its counts yet):
20,000 lines took 14 s in a CLI `patch --preview` here, 0.38 s after the counts were asked only
where a hunk may end (docs/decisions.md).
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
    options = parser.parse_args()
    body = "".join(f"+line {n}\n" for n in range(options.lines))
    patch = f"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,{options.lines} @@\n{body}"
    assert len(be.parse_patch(patch)) == 1
    took = best_of(lambda: be.parse_patch(patch), options.repeat)
    floor = best_of(lambda: sum(1 for _ in re.finditer(r"\n", patch)), options.repeat)
    print(f"parse_patch of {options.lines} lines: {took * 1000:.1f} ms = {took / floor:.0f}x one regex pass")


if __name__ == "__main__":
    main()
