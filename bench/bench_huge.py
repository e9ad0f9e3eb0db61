"""Huge files (docs/behaviour.md#limits): read by range and edit a 1 GB text file; peak memory as a multiple.

    python bench/bench_huge.py [--gb 1] [--dir DIR] [--keep]

Generates a text file of about --gb gigabytes (80-byte code-like lines) under DIR (default
bench/_work, ignored by git), then runs the CLI as a subprocess and reports for each step the wall
time and the peak RSS of the process (os.wait4 rusage), also as a multiple of the file size:

  read -s 1 -e 50          the first 50 lines (must not split the whole file)
  read -s MID -e MID+9     ten lines in the middle
  replace MID..MID+4       a 5-line replace in the middle (docs/behaviour.md#limits: memory under ~3x the file)
  insert after MID         a 2-line insert in the middle
  reference: cp            copying the file once (the least a rewriting edit can cost)

The file, its snapshot and the cache are deleted afterwards unless --keep. Set BE_EXE to measure
the frozen executable instead of the module.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULE = HERE.parent / "better_edit.py"
LINE = "    value_{n:09d} = compute(alpha, beta, gamma)  # keep the arithmetic honest\n"


def command():
    exe = os.environ.get("BE_EXE")
    return [str(Path(exe).resolve())] if exe else [sys.executable, str(MODULE)]


def generate(path, gigabytes):
    target = int(gigabytes * 1_000_000_000)
    block_lines = 100_000
    written = number = 0
    with open(path, "wb") as handle:
        while written < target:
            block = "".join(LINE.format(n=n) for n in range(number, number + block_lines)).encode()
            handle.write(block)
            written += len(block)
            number += block_lines
    return number, written


def run(cmd, env, cwd):
    """(seconds, peak RSS bytes, stdout) of one subprocess, measured with os.wait4."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err.decode()[-2000:]}")
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return seconds, peak, out


def line_at(path, number, approx_offset):
    """The text of line `number` by reading near where it should be (lines are fixed-width)."""
    with open(path, "rb") as handle:
        handle.seek(approx_offset)
        return handle.read(len(LINE.format(n=number)))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--dir", default=str(HERE / "_work"))
    parser.add_argument("--keep", action="store_true")
    ns = parser.parse_args()
    work = Path(ns.dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    path = work / "huge.py"
    cache = work / "huge-cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env.update(BETTER_EDIT_CACHE_DIR=str(cache), BETTER_EDIT_WORKSPACE=str(work), LANG="C.UTF-8")
    be = command()
    try:
        start = time.perf_counter()
        lines, size = generate(path, ns.gb)
        print(
            f"generated {path.name}: {size / 1e9:.2f} GB, {lines} lines in {time.perf_counter() - start:.1f}s"
        )
        mid = lines // 2
        steps = [
            ("read -s 1 -e 50", ["read", "-f", str(path), "-s", "1", "-e", "50", "-o", "json"]),
            (
                f"read -s {mid} -e {mid + 9}",
                ["read", "-f", str(path), "-s", str(mid), "-e", str(mid + 9), "-o", "json"],
            ),
            (
                f"replace {mid}..{mid + 4} (5 lines)",
                [
                    "replace",
                    "-f",
                    str(path),
                    "-s",
                    str(mid),
                    "-e",
                    str(mid + 4),
                    "-c",
                    "    replaced = True  # bench\n",
                    "--brief",
                ],
            ),
            (
                f"insert after {mid}",
                ["insert", "-f", str(path), "--after-line", str(mid), "-c", "a = 1\nb = 2\n", "--brief"],
            ),
        ]
        results = []
        for label, args in steps:
            seconds, peak, _out = run([*be, *args], env, work)
            results.append((label, seconds, peak))
        # check the edits landed exactly where they should
        width = len(LINE.format(n=0))
        offset = (mid - 1) * width
        with open(path, "rb") as handle:
            handle.seek(offset)
            window = handle.read(width * 4)
        expected = b"    replaced = True  # bench\na = 1\nb = 2\n" + LINE.format(n=mid + 4).encode()
        assert window.startswith(expected), window[:200]
        assert os.path.getsize(path) == size - 5 * width + len(expected) - width, "size after the edits"
        copy = work / "huge-copy.py"
        start = time.perf_counter()
        shutil.copyfile(path, copy)
        os.fsync(os.open(copy, os.O_RDONLY))
        cp_seconds = time.perf_counter() - start
        copy.unlink()
        print(f"{'step':<32} {'seconds':>8} {'peak RSS':>10} {'x file':>7}")
        for label, seconds, peak in results:
            print(f"{label:<32} {seconds:8.2f} {peak / 2**20:8.0f}Mi {peak / size:7.3f}")
        print(f"{'reference: copy the file':<32} {cp_seconds:8.2f}")
        worst = max(peak for label, _s, peak in results if not label.startswith("read")) / size
        print(
            f"memory bound (edit memory <= ~3x file size): worst edit {worst:.2f}x -> {'OK' if worst <= 3 else 'OVER'}"
        )
        digest = hashlib.sha256(window).hexdigest()[:12]
        print(f"edits verified in place (window sha256 {digest})")
    finally:
        if not ns.keep:
            for leftover in (path, work / "huge-copy.py"):
                leftover.unlink(missing_ok=True)
            for temp in work.glob(".huge.py.*"):
                temp.unlink()
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
