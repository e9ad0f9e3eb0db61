"""MCP server speed (issue 3): per-call round trips and start-up, as numbers and ratios.

    python bench/bench_mcp.py [--calls N] [--spawns N]

One server process answers N `be-read` and N `be-replace` calls on a small file (the replace
alternates its content, so every call really writes, with snapshots on as by default); each call is
timed from writing the request line to reading the reply line. Start-up is the time from spawning
`python better_edit.py` to its reply to `initialize`, compared with the bare interpreter start
(`python -c pass`). The interpreter is the real one (sys.executable of `python3`, not a pyenv shim);
BE_EXE names a frozen executable to measure instead of the module.

Targets: read median <= 1 ms, p99 <= 3 ms; replace median <= 3 ms, p99 <= 10 ms;
spawn-to-initialize <= 1.5x the bare interpreter start.
"""

import argparse
import importlib.util
import json
import os
import py_compile
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "better_edit.py"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def real_python():
    """The interpreter behind `python3` (a pyenv shim would add its own start-up to every spawn)."""
    try:
        out = subprocess.run(
            ["python3", "-c", "import sys;print(sys.executable)"], capture_output=True, text=True, check=True
        )
        return out.stdout.strip() or sys.executable
    except (OSError, subprocess.CalledProcessError):
        return sys.executable


def server_command(python):
    exe = os.environ.get("BE_EXE")
    return [str(Path(exe).resolve())] if exe else [python, str(MODULE)]


def bench_env(cache, root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BETTER_EDIT_", "LC_", "LANG"))}
    env.update(BETTER_EDIT_CACHE_DIR=str(cache), BETTER_EDIT_WORKSPACE=str(root), LANG="C.UTF-8")
    return env


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def line(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def round_trips(proc, requests):
    """Send each request and wait for its reply; returns the times in milliseconds."""
    times = []
    for request in requests:
        data = line(request)
        began = time.perf_counter()
        proc.stdin.write(data)
        proc.stdin.flush()
        reply = proc.stdout.readline()
        times.append((time.perf_counter() - began) * 1000)
        message = json.loads(reply)
        if "error" in message or message["result"].get("isError"):
            raise SystemExit(f"call failed: {reply[:300]!r}")
    return times


def bench_calls(python, calls, work):
    root, cache = work / "root", work / "cache"
    root.mkdir()
    cache.mkdir()
    (root / "small.txt").write_text("".join(f"line {i}: some ordinary text\n" for i in range(1, 41)))
    proc = subprocess.Popen(
        server_command(python),
        cwd=root,
        env=bench_env(cache, root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        round_trips(proc, [INIT])
        proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        reads = [
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "be-read", "arguments": {"file": "small.txt", "start": 10, "end": 30}},
            }
            for i in range(1, calls + 1)
        ]
        replaces = [
            {
                "jsonrpc": "2.0",
                "id": calls + i,
                "method": "tools/call",
                "params": {
                    "name": "be-replace",
                    "arguments": {"file": "small.txt", "start": 20, "content": f"line 20: version {i % 2}"},
                },
            }
            for i in range(1, calls + 1)
        ]
        # a short warm-up (first-use imports: hashlib, difflib, secrets ...), not measured
        round_trips(proc, reads[:20])
        round_trips(proc, replaces[:20])
        return round_trips(proc, reads), round_trips(proc, replaces)
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def spawn_to_initialize(python, work, command=None):
    root = work / "spawn-root"
    root.mkdir(exist_ok=True)
    env = bench_env(work / "cache", root)
    env["PYTHONPATH"] = str(MODULE.parent)
    began = time.perf_counter()
    proc = subprocess.Popen(
        command or server_command(python),
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    reply = proc.stdout.readline()
    elapsed = (time.perf_counter() - began) * 1000
    proc.stdin.close()
    proc.wait(timeout=10)
    if b'"protocolVersion"' not in reply:
        raise SystemExit(f"bad initialize reply: {reply[:300]!r}")
    return elapsed


def bare_start(python):
    began = time.perf_counter()
    subprocess.run([python, "-c", "pass"], check=True)
    return (time.perf_counter() - began) * 1000


def verdict(value, target):
    return "ok" if value <= target else "MISSED"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--spawns", type=int, default=20)
    ns = parser.parse_args()
    python = real_python()
    work = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    try:
        reads, replaces = bench_calls(python, ns.calls, work)
        spawns, bares, cached = [], [], []
        # `python better_edit.py` compiles the source at every start (CPython never caches a script's
        # bytecode); `python -m better_edit` (like the console script) loads __pycache__, written here
        # explicitly because PYTHONDONTWRITEBYTECODE may be set.
        py_compile.compile(str(MODULE), cfile=importlib.util.cache_from_source(str(MODULE)), doraise=True)
        for _ in range(ns.spawns):  # interleaved, so all see the same machine load
            bares.append(bare_start(python))
            spawns.append(spawn_to_initialize(python, work))
            cached.append(spawn_to_initialize(python, work, [python, "-m", "better_edit"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"interpreter: {python} ({sys.version.split()[0]} for this script)")
    print(f"server: {' '.join(server_command(python))}")
    rows = [
        ("be-read", reads, 1.0, 3.0),
        ("be-replace", replaces, 3.0, 10.0),
    ]
    for name, times, median_target, p99_target in rows:
        median, p99 = statistics.median(times), percentile(times, 0.99)
        print(
            f"{name:<11} x{len(times)}: median {median:6.3f} ms (target <= {median_target} ms: "
            f"{verdict(median, median_target)}), p99 {p99:6.3f} ms (target <= {p99_target} ms: "
            f"{verdict(p99, p99_target)}), max {max(times):.3f} ms"
        )
    bare = statistics.median(bares)
    print(f"start-up x{ns.spawns}: bare `python -c pass` median {bare:.1f} ms")
    for label, times in (("spawn-to-initialize", spawns), ("  same via python -m better_edit", cached)):
        spawn = statistics.median(times)
        print(
            f"{label:<34} median {spawn:6.1f} ms, ratio {spawn / bare:.2f}x (target <= 1.5x: "
            f"{verdict(spawn / bare, 1.5)})"
        )


if __name__ == "__main__":
    main()
