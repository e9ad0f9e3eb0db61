#!/usr/bin/env python3
"""Build a small text report; exercises strings, decorators and nesting."""

import functools
import re

PATTERN = re.compile(r"\((\d+)\]")  # raw string with unbalanced ( and ]
TEMPLATE = """Report {
    title: %(title)s
"""


def memo(func):
    cache = {}

    @functools.wraps(func)
    def wrapper(*args):
        if args not in cache:
            cache[args] = func(*args)
        return cache[args]

    return wrapper


class Report:
    '''A report with sections.

    def not_a_function(): this line is inside the docstring
    '''

    separator = "-" * 20 + "}"

    def __init__(self, title,
                 sections=None):
        self.title = title
        self.sections = list(sections or [])

    @property
    @memo
    def size(self):
        return sum(len(s) for s in self.sections)
        # note: sections are plain strings

    async def render(self):
        lines = [TEMPLATE % {"title": self.title}]
        for section in self.sections:
            lines.append(f"{section!r} ({len(section)} chars)")
        return "\n".join(lines) + self.separator


def main():
    report = Report("demo", ["a(", "b]"])
    print(report.size, PATTERN.pattern)


if __name__ == "__main__":
    main()
