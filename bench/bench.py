"""Core benchmark (issue 2): every figure is a ratio against a reference measured in the same run.

    python bench/bench.py [--mb 100] [--repeat 5]

Generates its own files under bench/_work/core/ (ignored by git) and prints one line per figure.
Use the real interpreter (not a shim): python3 -c 'import sys; print(sys.executable)'.
"""

import argparse
import importlib.util
import os
import py_compile
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULE = HERE.parent / "better_edit.py"
WORK = HERE / "_work" / "core"  # (its own folder: bench/_work also holds the venv others reuse)
PY = [sys.executable, "-E"]

SNIPPET = """\
def handler_{n}(request, context=None):
    \"\"\"Handle request {n}: validate, transform and answer.\"\"\"
    values = [int(v) for v in request.get("values", []) if str(v).isdigit()]
    if not values:
        return {{"status": "empty", "id": {n}, "note": "nothing to do (see #{n})"}}
    total = sum(values) / max(len(values), 1)
    return {{"status": "ok", "id": {n}, "mean": round(total, 3)}}

"""


def make_source(path, megabytes):
    chunk = "".join(SNIPPET.format(n=n) for n in range(200)).encode()
    with open(path, "wb") as handle:
        written = 0
        while written < megabytes * 1_000_000:
            handle.write(chunk)
            written += len(chunk)
    return path


def median_in_process(work, repeat):
    """The median seconds of `repeat` runs of `work()` in this process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed(cmd, env=None, repeat=5, setup=None):
    """Median wall time of `cmd` (a list), and the largest peak RSS seen (bytes)."""
    times, peak = [], 0
    for _ in range(repeat):
        if setup:
            setup()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"failed: {' '.join(map(str, cmd))}: {proc.stderr.read().decode()}")
        proc.stderr.close()
        peak = max(peak, usage.ru_maxrss * 1024)
    return statistics.median(times), peak


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100, help="size of the big file in MB (default 100)")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env["BETTER_EDIT_CACHE_DIR"] = str(WORK / "cache")
    no_snapshot = dict(env, BETTER_EDIT_SNAPSHOT_PERSIST="false")
    big = make_source(WORK / "big.py", options.mb)
    size = big.stat().st_size
    total_lines = big.read_bytes().count(b"\n")
    middle = total_lines // 2
    be = [*PY, str(MODULE)]
    print(f"file: {size / 1e6:.0f} MB, {total_lines} lines; interpreter {sys.executable}")

    copy = WORK / "copy.py"
    ref_cp, _ = timed(["sh", "-c", f"cp '{big}' '{copy}' && sync '{copy}'"], repeat=options.repeat)
    print(f"reference  cp + fsync of the file            {ref_cp * 1000:8.1f} ms")

    flip = {"n": 0}

    def replace_cmd():
        flip["n"] += 1
        return [*be, "replace", "-f", str(big), "-s", str(middle), "-e", str(middle + 4), "-c",
                "\n".join(f"    edited = {flip['n']}  # line {i}" for i in range(5)), "--brief"]  # fmt: skip

    for label, run_env, target in (("without snapshot", no_snapshot, 5), ("with snapshot", env, 10)):
        times, peak = [], 0
        for _ in range(options.repeat):
            shutil.rmtree(WORK / "cache", ignore_errors=True)
            t, p = timed(replace_cmd(), env=run_env, repeat=1)
            times.append(t)
            peak = max(peak, p)
        t = statistics.median(times)
        print(
            f"replace 5 lines, {label:17s}          {t * 1000:8.1f} ms = {t / ref_cp:5.2f}x cp+fsync (target <= {target}x)"
        )
        print(
            f"  peak RSS of that edit                      {peak / 1e6:8.1f} MB = {peak / size:5.2f}x file (target <= 3x)"
        )

    ref_count, _ = timed(
        [*PY, "-c", f"print(open('{big}','rb').read().count(b'\\n'))"], repeat=options.repeat
    )
    read_t, read_peak = timed(
        [*be, "read", "-f", str(big), "-s", "1", "-e", "50"], env=env, repeat=options.repeat
    )
    print(f"reference  python: read file + bytes.count    {ref_count * 1000:8.1f} ms")
    print(
        f"read lines 1-50                               {read_t * 1000:8.1f} ms = {read_t / ref_count:5.2f}x (target <= 3x)"
    )

    small = WORK / "small.py"
    small.write_bytes(SNIPPET.format(n=1).encode() * 3)
    bare, _ = timed([sys.executable, "-S", "-E", "-c", "pass"], repeat=15)
    print(f"reference  python -S -E -c pass               {bare * 1000:8.1f} ms")
    module_env = dict(env, PYTHONPATH=str(MODULE.parent))
    # -m loads __pycache__; write it explicitly, PYTHONDONTWRITEBYTECODE may be set
    py_compile.compile(str(MODULE), cfile=importlib.util.cache_from_source(str(MODULE)), doraise=True)
    for label, cmd in (
        ("python better_edit.py", be),
        ("python -m better_edit (cached bytecode)", [*PY, "-m", "better_edit"]),
    ):
        small_t, _ = timed(
            [*cmd, "replace", "-f", str(small), "-s", "2", "-c", "    # edited"], env=module_env, repeat=15
        )
        print(
            f"CLI replace, 1 KB file, {label:38s} {small_t * 1000:6.1f} ms = {small_t / bare:5.2f}x bare start"
        )
    source = MODULE.read_text()
    start = time.perf_counter()
    compile(source, str(MODULE), "exec")
    print(
        f"  of which compiling the module's source (no .pyc for a script): {(time.perf_counter() - start) * 1000:.1f} ms"
    )
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
