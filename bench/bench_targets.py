"""A function target whose name is defined in many places (`get` in every class), as a read,
replace or delete by `function:get` finds it: every definition's range (_definition_spans), for
Python, JavaScript and Ruby files of N classes (default 600, about 100 KB) and of 4 N.

    python -S -E bench/bench_targets.py [--classes 600] [--repeat 3]

Reported: the best of REPEAT runs, in seconds, and its ratio to check_balance of the same file in
the same run (the reference). Measured here (docs/decisions.md), before the restart walk was kept
for all the definitions of one call (and the look-ahead of Python and Ruby started at 4 KiB), and
after: 600 classes Python 3.25 -> 0.34 s, JavaScript 1.28 -> 0.27 s, Ruby 1.88 -> 0.21 s; 2,400
classes 13.5 -> 2.3 s, 12.3 -> 2.0 s, 11.5 -> 1.6 s. Before, each definition walked the file to its line.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_scanners import best_of  # noqa: E402

import better_edit as be  # noqa: E402

CLASSES = {
    "python": 'class C{n}:\n    def __init__(self, a):\n        self.a = [a, {{"k": a}}]\n\n'
    "    def get(self):\n        return self.a  # get it\n\n\n",
    "javascript": "class C{n} {{\n  constructor(a) {{\n    this.a = [a, {{k: a}}];\n  }}\n\n"
    "  get() {{\n    return this.a; // get it\n  }}\n}}\n\n",
    "ruby": "class C{n}\n  def initialize(a)\n    @a = [a, {{k: a}}]\n  end\n\n"
    "  def get\n    @a # get it\n  end\nend\n\n",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    for language, snippet in CLASSES.items():
        for count in (options.classes, 4 * options.classes):
            text = "".join(snippet.format(n=n) for n in range(count))
            spans = be._definition_spans(text, language, "get")
            assert len(spans) == count, (language, len(spans))
            took = best_of(lambda t=text, lang=language: be._definition_spans(t, lang, "get"), options.repeat)
            balance = best_of(lambda t=text, lang=language: be.check_balance(t, lang), options.repeat)
            print(
                f"{language:10} {count:5} classes ({len(text) / 1000:6.0f} KB): {took:7.3f} s"
                f" = {took / balance:6.1f}x check_balance ({balance * 1000:.1f} ms)"
            )


if __name__ == "__main__":
    main()
