"""One `edit` of many `old` items in one large file: before and after.

    python bench/bench_items.py [--before REV] [--items N] [--lines N] [--runs N]

A CLI `edit --brief` of N items (default 500), each an `old` naming one line of a generated file
of --lines lines (default 200,000), so every item is found by its text. The module of git revision
REV (default the commit before the items shared the file's decoded text) and the module of this
checkout run in one run, alternating, each on a fresh copy of the file. The reference is `cp` +
fsync of the file, in the same run.
"""

import json
import os
import shutil
import subprocess
import sys
import time

from bench_journal import alternate, comparison_options, env_for


def edit_ms(folder, work, items, lines, run):
    (work / "f.py").write_text("".join(f"line_{n} = {n}\n" for n in range(lines)))
    step = max(1, lines // items)
    edits = [
        {"file": "f.py", "old": f"line_{n * step} = {n * step}", "content": f"x{n} = {run}"}
        for n in range(items)
    ]
    (work / "items.json").write_text(json.dumps(edits))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "better_edit", "edit", "--brief", "--edits-file", "items.json"],
        cwd=work,
        env=env_for(folder, work / "cache"),
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    return (time.perf_counter() - started) * 1000


def cp_fsync_ms(work):
    started = time.perf_counter()
    shutil.copyfile(work / "f.py", work / "copy.py")
    fd = os.open(work / "copy.py", os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return (time.perf_counter() - started) * 1000


def main():
    ns = comparison_options(__doc__, "HEAD~1", items=500, lines=200_000, runs=3)
    alternate(
        ns,
        lambda work: None,
        lambda folder, work, run: edit_ms(folder, work, ns.items, ns.lines, run),
        cp_fsync_ms,
        (f"edit of {ns.items} old items", f"the {ns.lines}-line file"),
    )


if __name__ == "__main__":
    main()
