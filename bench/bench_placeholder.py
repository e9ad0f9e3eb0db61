"""The placeholder guard's two figures (issue 21): recall on lazy-placeholder lines as models write
them, and false alarms on real code.

    python bench/bench_placeholder.py [FOLDER ...]

Recall: the share of tests/placeholder_corpus/lazy.txt (one placeholder a line) that the guard
catches. False alarms: lines of real source files that the guard would take for placeholders, per
million lines, over FOLDERs (default: this Python's standard library, /usr/include, the node
modules of tests/ts_client and /usr/share/perl*). Documentation prose (Markdown, reST, HTML, plain
text) is exempt, as the guard exempts it; every alarm is listed so a person can judge it.
"""

import os
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import better_edit as be  # noqa: E402

CODE = {
    ".py",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".jsx",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".java",
    ".go",
    ".rs",
    ".rb",
    ".lua",
    ".sql",
    ".sh",
    ".bash",
    ".pl",
    ".pm",
    ".el",
    ".lisp",
    ".scm",
    ".tex",
    ".erl",
    ".m",
    ".css",
    ".scss",
    ".php",
    ".swift",
    ".kt",
    ".cs",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".vue",
    ".svelte",
    ".ml",
    ".hs",
    ".xml",
    ".jinja",
    ".j2",
    ".asm",
    ".s",
}


def recall():
    lines = (REPO / "tests" / "placeholder_corpus" / "lazy.txt").read_text(encoding="utf-8").splitlines()
    missed = [line for line in lines if next(be.placeholder_lines(line), None) is None]
    return len(lines), missed


def embedded_docs(path, text):
    """Line numbers inside documentation embedded in code: Python docstrings and other multi-line
    strings, Perl POD (`=head1` ... `=cut`). Documentation prose is exempt from the guard's figure."""
    lines = set()
    if path.endswith((".pm", ".pl")):
        inside = False
        for number, line in enumerate(text.split("\n"), 1):
            if line.startswith("="):
                inside = not line.startswith("=cut")
                lines.add(number)
            elif inside:
                lines.add(number)
    elif path.endswith(".py"):
        import io
        import tokenize

        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                    lines.update(range(token.start[0], token.end[0] + 1))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass
    return lines


def false_alarms(folders):
    """(lines read, alarms in code, alarms inside embedded documentation)."""
    total, alarms, in_docs = 0, [], []
    for folder in folders:
        for base, _dirs, names in os.walk(folder):
            for name in names:
                path = os.path.join(base, name)
                if os.path.splitext(name)[1].lower() not in CODE or os.path.islink(path):
                    continue
                try:
                    text = open(path, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                total += text.count("\n") + 1
                found = list(be.placeholder_lines(text))
                docs = embedded_docs(path, text) if found else set()
                for number, line in found:
                    (in_docs if number in docs else alarms).append(f"{path}:{number}: {line.strip()[:100]}")
    return total, alarms, in_docs


def main():
    folders = sys.argv[1:] or [
        sysconfig.get_paths()["stdlib"],
        "/usr/include",
        str(REPO / "tests" / "ts_client" / "node_modules"),
        *[str(p) for p in Path("/usr/share").glob("perl*")],
    ]
    count, missed = recall()
    print(
        f"recall: {count - len(missed)} of {count} lazy-placeholder lines caught = {(count - len(missed)) / count:.1%}"
    )
    for line in missed:
        print(f"  missed: {line!r}")
    total, alarms, in_docs = false_alarms([f for f in folders if os.path.isdir(f)])
    per_million = len(alarms) / max(total, 1) * 1e6
    print(f"false alarms: {len(alarms)} in {total:,} lines of code = {per_million:.2f} per million")
    print(f"  (and {len(in_docs)} inside documentation embedded in code: docstrings, POD; exempt)")
    for alarm in alarms:
        print(f"  alarm: {alarm}")
    for alarm in in_docs:
        print(f"  in docs: {alarm}")


if __name__ == "__main__":
    main()
