"""The post-edit balance check on large source files (issue 14, item 2), as ratios in one run.

    python bench/bench_check.py [--mb 10] [--repeat 5] [--edits 10]

For a generated Python file and a generated JavaScript file of MB megabytes each, measures:
- the reference: `cp` of the file plus fsync (`sync FILE`);
- the floor of any Python CLI: a new `python -S -E` process that only reads the file, inserts the
  5 lines in the middle, writes a temporary file, fsyncs it, renames it over the file and fsyncs
  the folder (no parser, no check, no read-back: FLOOR below);
- a CLI `replace` of 5 lines in the middle, with the post-edit check (the default result): with
  no scan kept (BASE/scans/ emptied before each run) and with the scan the previous run kept; and
  with `--brief` (no diff, no check). Each is a fresh process of the console script as users run
  it: installed by pip into the clean virtual environment of bench_startup.py (bench/_work/venv;
  `--dev` runs `python -m better_edit` of this interpreter instead, whose site may load editable
  installs and .pth files), snapshots off; every call writes new content;
- one MCP server doing EDITS such replaces of the same file in a row: the first call scans the
  file, the later ones reuse the scan of the text the previous edit left (median of the later);
- in one process: `check_balance` of the file (the quick check of a balanced file) and one full
  exact scan saving its states (`_BalanceScan`), against the check of one edit (`_breaks_of_plan`)
  with and without the remembered scan.
Targets: CLI replace with the check <= 3x cp+fsync. Use the real interpreter.
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODULE = REPO / "better_edit.py"
WORK = HERE / "_work" / "check"

FLOOR = """import os, sys
path = sys.argv[1]
with open(path, "rb") as f:
    data = f.read()
middle = len(data) // 2
middle = data.index(b"\\n", middle) + 1
new = data[:middle] + b"  value = 1;\\n" * 5 + data[middle:]
fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, new)
os.fsync(fd)
os.close(fd)
os.replace(path + ".tmp", path)
fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
os.fsync(fd)
os.close(fd)
"""
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_scanners import JS_SNIPPETS, build  # noqa: E402
from bench_startup import make_venv  # noqa: E402

import better_edit as be  # noqa: E402
from bench import make_source, median_in_process  # noqa: E402


def timed(command, env, repeat, before=None):
    times = []
    for n in range(repeat):
        if before:
            before(n)
        start = time.perf_counter()
        proc = subprocess.run(command(n), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"failed: {proc.stderr.decode()}")
    return statistics.median(times)


def replace_args(path, middle, n, language):
    line = "    value = {n}  # edited" if language == "python" else "  value = {n}; // edited"
    content = "\n".join(line.format(n=f"{n}{i}") for i in range(5))
    return ["replace", "-f", str(path), "-s", str(middle), "-e", str(middle + 4), "-c", content]


def server_edits(cli, path, middle, language, env, edits):
    proc = subprocess.Popen(cli, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}})  # fmt: skip
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    times, answers = [], []
    for n in range(edits):
        args = replace_args(path, middle, 1000 + n, language)
        arguments = {"file": str(path), "start": middle, "end": middle + 4, "content": args[-1]}
        start = time.perf_counter()
        reply = ask({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                     "params": {"name": "be-replace", "arguments": arguments}})  # fmt: skip
        times.append(time.perf_counter() - start)
        answers.append(reply["result"]["structuredContent"].get("balance"))
    proc.stdin.close()
    proc.wait()
    assert all(answer == "ok" for answer in answers), answers
    return times[0], statistics.median(times[1:])


def measure(cli, language, path, env, options):
    text = path.read_text()
    middle = text.count("\n") // 2
    copy = WORK / "copy"
    cp = timed(lambda n: ["sh", "-c", f"cp '{path}' '{copy}' && sync '{copy}'"], env, options.repeat)
    shutil.copyfile(path, copy)
    floor = timed(lambda n: [sys.executable, "-S", "-E", "-c", FLOOR, str(copy)], env, options.repeat)
    scans = WORK / "cache" / "scans"
    checked = timed(
        lambda n: [*cli, *replace_args(path, middle, n, language)],
        env,
        options.repeat,
        before=lambda n: shutil.rmtree(scans, ignore_errors=True),
    )
    subprocess.run([*cli, *replace_args(path, middle, 50, language)], env=env, stdout=subprocess.DEVNULL)
    kept = timed(lambda n: [*cli, *replace_args(path, middle, 60 + n, language)], env, options.repeat)
    brief = timed(
        lambda n: [*cli, *replace_args(path, middle, 100 + n, language), "--brief"], env, options.repeat
    )
    first, later = server_edits(cli, path, middle, language, env, options.edits)
    print(f"{language}: {path.stat().st_size / 1e6:.1f} MB")
    print(f"  reference cp + fsync                      {cp * 1000:8.1f} ms")
    print(f"  floor: python -S -E, bare atomic insert   {floor * 1000:8.1f} ms = {floor / cp:5.2f}x cp+fsync")
    print(
        f"  CLI replace 5 lines, with the check       {checked * 1000:8.1f} ms = {checked / cp:5.2f}x cp+fsync (target <= 3)"
    )
    print(
        f"  the same, the scan kept by the last run   {kept * 1000:8.1f} ms = {kept / cp:5.2f}x cp+fsync (target <= 3)"
    )
    print(f"  CLI replace 5 lines, --brief (no check)   {brief * 1000:8.1f} ms = {brief / cp:5.2f}x cp+fsync")
    print(f"  MCP replace, first call of a session      {first * 1000:8.1f} ms = {first / cp:5.2f}x cp+fsync")
    print(f"  MCP replace, later calls (median)         {later * 1000:8.1f} ms = {later / cp:5.2f}x cp+fsync")
    if not hasattr(be, "_breaks_of_plan"):
        return  # a version before the incremental check (bench/ run against an older checkout)
    # in one process: the check alone
    raw = path.read_bytes()
    opened = be.Text(raw)
    a, b = be.line_span(raw, middle, middle + 4)
    plan = (a, replace_args(path, middle, 7, language)[-1].encode() + b"\n", b)
    quick = median_in_process(lambda: be.check_balance(text, language), options.repeat)
    full = median_in_process(lambda: be._BalanceScan(text, language), options.repeat)
    assert be._breaks_of_plan(opened, [plan], language) == []
    cold = median_in_process(lambda: be._breaks_of_plan(be.Text(raw), [plan], language), options.repeat)
    memory = be._ScanMemory()
    be._breaks_of_plan(opened, [plan], language, memory, "k")
    text_after = be.Text(be.join_splice(raw, plan))
    again = (a, plan[1].replace(b"7", b"8"), a + len(plan[1]))
    start = time.perf_counter()
    assert be._breaks_of_plan(text_after, [again], language, memory, "k") == []
    warm = time.perf_counter() - start
    print(f"  in process: check_balance (quick check)   {quick * 1000:8.1f} ms")
    print(f"  in process: one full scan (exact, saved)  {full * 1000:8.1f} ms")
    print(
        f"  in process: check of one edit, cold       {cold * 1000:8.1f} ms = {cold / full:5.2f}x one full scan"
    )
    print(
        f"  in process: check of one edit, warm       {warm * 1000:8.1f} ms = {warm / full:5.2f}x one full scan"
    )
    # the guard rails of docs/decisions.md ("A module a maintainer wants to live in")
    print(f"  rail: CLI first edit / (one full scan + --brief)  {checked / (full + brief):5.2f} (<= 1.2)")
    print(f"  rail: kept scan / bare atomic insert              {kept / floor:5.2f} (<= 2)")
    print(f"  rail: MCP later calls / one full scan             {later / full:5.2f} (<= 0.15)")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--dev", action="store_true", help="run python -m better_edit of this interpreter")
    options = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    py_compile.compile(str(MODULE), cfile=importlib.util.cache_from_source(str(MODULE)), doraise=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env.update(PYTHONPATH=str(REPO), BETTER_EDIT_CACHE_DIR=str(WORK / "cache"))
    env["BETTER_EDIT_SNAPSHOT_PERSIST"] = "false"
    files = [("python", make_source(WORK / "big.py", options.mb))]
    js = WORK / "big.js"
    js.write_text(build(JS_SNIPPETS, options.mb * 1_000_000))
    files.append(("javascript", js))
    if options.dev:
        cli = [sys.executable, "-m", "better_edit"]
    else:
        cli = [str(make_venv(HERE / "_work" / "venv")[1])]
        env.pop("PYTHONPATH")
    print(f"CLI {' '.join(cli)}; {options.mb} MB files; medians of {options.repeat}")
    for language, path in files:
        measure(cli, language, path, env, options)
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
