"""The journal's cost (issue 20): a 1 KB MCP replace and a 10 MB CLI replace, before and after.

    python bench/bench_journal.py [--before REV] [--calls N] [--runs N]

Runs the module of git revision REV (default: the last commit before the journal, 3cabfbf) and the
module of this checkout in one run, on the same files, alternating, so the machine's noise falls
on both. The 1 KB figure is the median round trip of N `be-replace` calls to one server (each call
really writes, snapshots on); the 10 MB figure is the median of N `replace -s 2 -c x --brief`
CLI runs, given as a ratio to `cp` + `sync` of the same file measured in the same run. The
interpreter is the real one (sys.executable), with bytecode cached.
"""

import argparse
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

from bench_mcp import INIT  # (the same initialize request)

REPO = Path(__file__).resolve().parent.parent


def module_of(rev, folder):
    """A copy of better_edit.py at `rev` (None: this checkout) in `folder`, compiled."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "better_edit.py"
    if rev is None:
        shutil.copy(REPO / "better_edit.py", target)
    else:
        target.write_bytes(
            subprocess.run(
                ["git", "show", f"{rev}:better_edit.py"], cwd=REPO, capture_output=True, check=True
            ).stdout
        )
    py_compile.compile(
        str(target), cfile=str(folder / "__pycache__" / f"better_edit.{sys.implementation.cache_tag}.pyc")
    )
    return folder


def comparison_options(doc, before, **counts):
    """The options of a benchmark that compares the module at `--before` (a git revision) with
    this checkout: `--before` and one integer option per `counts` item (name=default)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--before", default=before)
    for name, default in counts.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    return parser.parse_args()


def before_and_after(rev, tmp):
    """{"before": the module of git revision `rev`, "after": this checkout's}, compiled, in `tmp`."""
    return {"before": module_of(rev, tmp / "before"), "after": module_of(None, tmp / "after")}


def alternate(ns, prepare, measure, reference, what):
    """Run `measure(module folder, work folder, run)` for the module of --before and this
    checkout's, alternating, --runs times, each in a work folder `prepare(work)` made, and
    `reference(after's work folder)` once a round; print each median as a multiple of the
    reference's (`what` names the measured edit and the reference, for the printed lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        modules = before_and_after(ns.before, tmp)
        works = {name: tmp / f"work-{name}" for name in modules}
        for work in works.values():
            work.mkdir()
            prepare(work)
        times, floors = {name: [] for name in modules}, []
        for run in range(ns.runs):
            for name, folder in modules.items():
                times[name].append(measure(folder, works[name], run))
            floors.append(reference(works["after"]))
        floor = statistics.median(floors)
        print(f"cp + fsync of {what[1]}: {floor:.0f} ms (median of {ns.runs})")
        for name in modules:
            each = ", ".join(f"{t:.0f}" for t in times[name])
            median = statistics.median(times[name])
            print(f"{name}: {what[0]} {median:.0f} ms = {median / floor:.1f}x cp+fsync  (runs: {each})")


def env_for(folder, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env.update(PYTHONPATH=str(folder), BETTER_EDIT_CACHE_DIR=str(cache), LANG="C.UTF-8")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def mcp_replace_ms(folder, work, calls):
    (work / "small.txt").write_bytes(b"x" * 60 + b"\n" + b"line of text\n" * 80)
    env = env_for(folder, work / "cache")
    proc = subprocess.Popen(
        [sys.executable, "-m", "better_edit"],
        cwd=work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )

    def ask(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    ask(INIT)
    times = []
    for n in range(calls):
        args = {"file": "small.txt", "start": 1, "content": f"y{n}", "brief": True}
        message = {
            "jsonrpc": "2.0",
            "id": n + 1,
            "method": "tools/call",
            "params": {"name": "be-replace", "arguments": args},
        }
        started = time.perf_counter()
        reply = ask(message)
        times.append(time.perf_counter() - started)
        assert not reply["result"].get("isError"), reply
    proc.stdin.close()
    proc.wait()
    return statistics.median(times) * 1000


def cli_replace_ms(folder, work, big, runs):
    env = env_for(folder, work / "cache")
    times = []
    for n in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "better_edit",
                "replace",
                "-f",
                big.name,
                "-s",
                "2",
                "-c",
                f"x{n}",
                "--brief",
            ],
            cwd=work,
            env=env,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr
    return statistics.median(times) * 1000


def cp_sync_ms(big, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        shutil.copyfile(big, big.with_suffix(".copy"))
        fd = os.open(big.with_suffix(".copy"), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        times.append(time.perf_counter() - started)
    big.with_suffix(".copy").unlink()
    return statistics.median(times) * 1000


def main():
    ns = comparison_options(__doc__, "3cabfbf", calls=300, runs=15)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        modules = before_and_after(ns.before, tmp)
        results = {name: {"mcp": [], "cli": []} for name in modules}
        work = tmp / "work"
        work.mkdir()
        big = work / "big.py"
        big.write_bytes(
            b"".join(b"def f%d(x):\n    return x + %d\n\n" % (n, n) for n in range(350_000))[: 10 << 20]
        )
        reference = []
        for _round in range(3):
            for name, folder in modules.items():
                results[name]["mcp"].append(mcp_replace_ms(folder, work, ns.calls))
                results[name]["cli"].append(cli_replace_ms(folder, work, big, ns.runs // 3 or 1))
            reference.append(cp_sync_ms(big, 3))
        ref = statistics.median(reference)
        print(f"cp + fsync of {big.stat().st_size / 1e6:.1f} MB: {ref:.1f} ms")
        for name in modules:
            mcp = statistics.median(results[name]["mcp"])
            cli = statistics.median(results[name]["cli"])
            print(
                f"{name:6} ({ns.before if name == 'before' else 'this checkout'}): 1 KB MCP replace median {mcp:.2f} ms; 10 MB CLI replace {cli:.1f} ms = {cli / ref:.2f}x cp+fsync"
            )


if __name__ == "__main__":
    main()
