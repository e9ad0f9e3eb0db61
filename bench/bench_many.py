"""An `edit` of many small files: the snapshot store's passes per event, before and after.

    python bench/bench_many.py [--before REV] [--files N] [--crowd N] [--runs N]

One CLI `edit --brief` of N one-line files in 7 folders (default 500), repeated --runs times on
one cache, so the snapshot store fills as a user's does. `--crowd N` puts N more files that the
edit does not touch in each folder (a large source folder: each edited file's folder is looked
through for temporaries that killed processes left). The module of git revision REV (default
the commit before the store was tidied once per event) and the module of this checkout run in one
run, alternating. The reference is `cp` + fsync of the same N files, in the same run.
"""

import json
import os
import shutil
import subprocess
import sys
import time

from bench_journal import alternate, comparison_options, env_for


def prepare(work, files, crowd):
    for n in range(files):
        folder = work / f"d{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_text("a\n")
    for n in range(7 * crowd):
        (work / f"d{n % 7}" / f"other{n}.txt").write_text("b\n")


def edit_ms(folder, work, files, run):
    edits = work.parent / f"{work.name}-{run}.json"
    items = [{"file": f"d{n % 7}/f{n}.txt", "start": 1, "content": f"r{run}"} for n in range(files)]
    edits.write_text(json.dumps(items))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "better_edit", "edit", "--brief", "--edits-file", str(edits)],
        cwd=work,
        env=env_for(folder, work.parent / f"{work.name}-cache"),
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    return (time.perf_counter() - started) * 1000


def cp_fsync_ms(work, files):
    started = time.perf_counter()
    for n in range(files):
        source = work / f"d{n % 7}" / f"f{n}.txt"
        target = source.with_suffix(".copy")
        shutil.copyfile(source, target)
        fd = os.open(target, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        target.unlink()
    return (time.perf_counter() - started) * 1000


def main():
    ns = comparison_options(__doc__, "aa14446", files=500, crowd=0, runs=5)
    alternate(
        ns,
        lambda work: prepare(work, ns.files, ns.crowd),
        lambda folder, work, run: edit_ms(folder, work, ns.files, run),
        lambda work: cp_fsync_ms(work, ns.files),
        (f"edit of {ns.files} files", f"{ns.files} files"),
    )


if __name__ == "__main__":
    main()
