"""Size and start-up of the one-file executable (issue 5 targets), beside the plain module.

    python bench/bench_exe.py [--exe dist/better-edit-tools] [--runs 31] [--check] [--json]

Measures, each as the median of RUNS timed runs after 3 warm-up runs:
- `--version`: spawn to exit;
- `read` of a 20-line file (CLI, text output): spawn to exit;
- MCP: spawn, send `initialize`, until its reply line arrives (the process is then closed);
for the executable and, for comparison in the same run, for `python better_edit.py`.
Targets (Linux x86-64): executable <= 8 MB, --version <= 100 ms, read <= 130 ms, initialize <=
150 ms. --check exits 1 when one is missed. Nothing here touches the real cache: the runs use a
private BETTER_EDIT_CACHE_DIR.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS_MS = {"version": 100.0, "read": 130.0, "initialize": 150.0}
TARGET_SIZE = 8 * 1024 * 1024
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def time_exit(command, env, cwd):
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def time_initialize(command, env, cwd):
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()
    if b'"protocolVersion"' not in line:
        raise RuntimeError(f"no initialize reply from {command}: {line!r}")
    return elapsed


def median_ms(measure, runs, warmup=3):
    for _ in range(warmup):
        measure()
    samples = [measure() for _ in range(runs)]
    return statistics.median(samples) * 1000, min(samples) * 1000


def bench(prefix, runs, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env.update(BETTER_EDIT_CACHE_DIR=str(work / "cache"), BETTER_EDIT_WORKSPACE=str(work), LANG="C.UTF-8")
    small = work / "small.py"
    small.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 21)))
    return {
        "version": median_ms(lambda: time_exit([*prefix, "--version"], env, work), runs),
        "read": median_ms(lambda: time_exit([*prefix, "read", "--file", str(small)], env, work), runs),
        "initialize": median_ms(lambda: time_initialize(prefix, env, work), runs),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--exe", default=str(REPO / "dist" / ("better-edit-tools" + (".exe" if os.name == "nt" else "")))
    )
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    exe = Path(args.exe)
    if not exe.is_file():
        parser.error(f"{exe} does not exist: build it first (bash scripts/build.sh)")

    with tempfile.TemporaryDirectory(prefix="be-bench-") as tmp:
        work = Path(tmp)
        frozen = bench([str(exe.resolve())], args.runs, work)
        module = bench([sys.executable, str(REPO / "better_edit.py")], args.runs, work)
    size = exe.stat().st_size
    missed = [k for k, limit in TARGETS_MS.items() if frozen[k][0] > limit] + (
        ["size"] if size > TARGET_SIZE else []
    )

    if args.json:
        print(json.dumps({"size": size, "exe": frozen, "module": module, "missed": missed}, indent=2))
    else:
        print(f"executable: {exe} ({size / 1e6:.2f} MB, {size / 2**20:.2f} MiB; target <= 8 MiB)")
        print(
            f"runs: {args.runs} per measure, medians (min) in ms; module = {Path(sys.executable).name} better_edit.py\n"
        )
        print("| measure | target | executable | module | exe/module |")
        print("|---|---|---|---|---|")
        for key, limit in TARGETS_MS.items():
            (exe_med, exe_min), (mod_med, mod_min) = frozen[key], module[key]
            print(
                f"| {key} | <= {limit:.0f} | {exe_med:.1f} ({exe_min:.1f}) | {mod_med:.1f} ({mod_min:.1f}) "
                f"| {exe_med / mod_med:.2f} |"
            )
        print("\nall targets met" if not missed else f"\ntargets missed: {', '.join(missed)}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
