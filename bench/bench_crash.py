"""Crash safety at full size (docs/behaviour.md#writing-safely): SIGKILL a 100 MB write / replace at random moments.

    python bench/bench_crash.py [--mb 100] [--kills 40] [--server-kills 12] [--seed N] [--dir DIR] [--heal]

A CLI `write` (alternating two contents of different lengths) and a CLI `replace` of one line in
the middle are each started --kills/2 times and SIGKILLed after a delay spread evenly over the
measured duration of that operation; then an MCP server is killed --server-kills times while a
be-replace / be-write is in progress. After every kill the target must hold exactly the old bytes
or exactly the new bytes, and every record file of the snapshot and chip stores must parse.

Also reported, without fixing anything up: kills that landed while the process still ran, files
left with a second hard link (a snapshot's .bin whose edit never finished) and stray temp files
beside the target. --heal gives the target a fresh inode whenever a kill left it hard-linked, so
each kill exercises the atomic path alone (what tests/test_workspace_safety.py does). The exit status is 1 when any kill left a mix or a store file that does not load.
Set BE_EXE to measure the frozen executable.
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULE = HERE.parent / "better_edit.py"


def command():
    exe = os.environ.get("BE_EXE")
    return [str(Path(exe).resolve())] if exe else [sys.executable, str(MODULE)]


def text(megabytes, tag):
    line = tag + b" " + b"x" * 70 + b"\n"
    count = megabytes * 1_000_000 // (len(line) + 9)
    return b"".join(b"%08d " % n + line for n in range(count))


def replace_line(data, number, new):
    start = 0
    for _ in range(number - 1):
        start = data.index(b"\n", start) + 1
    stop = data.index(b"\n", start) + 1
    return data[:start] + new + b"\n" + data[stop:]


def stores_load(cache):
    bad = 0
    for kind in ("snapshots", "chips"):
        for path in (cache / kind).glob("*/*.json"):
            try:
                record = json.loads(path.read_bytes())
                assert isinstance(record, dict)
            except (ValueError, AssertionError):
                bad += 1
    return bad


class Tally:
    def __init__(self):
        self.kills = self.landed = self.old = self.new = self.mixed = self.bad_store = 0
        self.linked = 0

    def check(self, target, old, new, cache, landed, heal=False):
        self.kills += 1
        self.landed += landed
        now = target.read_bytes()
        if now == old:
            self.old += 1
        elif now == new:
            self.new += 1
        else:
            self.mixed += 1
            print(f"  MIX after kill {self.kills}: {len(now)} bytes (old {len(old)}, new {len(new)})")
        self.bad_store += stores_load(cache)
        if target.stat().st_nlink > 1:
            self.linked += 1
            if heal:  # a fresh inode, so the next kill tests the atomic path again
                fresh = target.with_name(target.name + ".heal")
                fresh.write_bytes(now)
                os.replace(fresh, target)

    def line(self, label):
        return (
            f"{label:<14} kills {self.kills:3d} (mid-run {self.landed:3d}): old {self.old:3d}, new {self.new:3d}, "
            f"MIXED {self.mixed}, bad store files {self.bad_store}, left hard-linked {self.linked}"
        )


def spread(count, rng):
    fractions = [(index + rng.random()) / count * 1.1 for index in range(count)]
    rng.shuffle(fractions)
    return fractions


def timed(cmd, **kw):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.perf_counter() - start


def kill_after(cmd, delay, **kw):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    time.sleep(delay)
    landed = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return landed


def cli_phase(be, work, cache, env, ns, rng):
    target = work / "big.txt"
    versions = [text(ns.mb, b"aaa"), text(ns.mb, b"bbbb")]
    sources = []
    for index, data in enumerate(versions):
        sources.append(work / f"source{index}.txt")
        sources[-1].write_bytes(data)
    target.write_bytes(versions[0])
    run = {"cwd": str(work), "env": env}

    def write(index):
        return [*be, "write", "-f", str(target), "--content-file", str(sources[index]), "--brief"]

    duration = max(timed(write(1), **run), timed(write(0), **run))
    print(f"CLI write of {ns.mb} MB: {duration:.2f}s")
    writes = Tally()
    for fraction in spread(ns.kills // 2, rng):
        old = target.read_bytes()
        index = 1 if old == versions[0] else 0
        landed = kill_after(write(index), fraction * duration, **run)
        writes.check(target, old, versions[index], cache, landed, ns.heal)
    print(writes.line("write"))

    middle = len(versions[0]) // 2 // 88
    edit = [*be, "replace", "-f", str(target), "-s", str(middle), "--brief", "-c"]
    duration = timed([*edit, "timing"], **run)
    print(f"CLI replace in {ns.mb} MB: {duration:.2f}s")
    replaces = Tally()
    for number, fraction in enumerate(spread(ns.kills - ns.kills // 2, rng)):
        old = target.read_bytes()
        new_text = f"replaced {number} " + "z" * rng.randrange(0, 300)
        landed = kill_after([*edit, new_text], fraction * duration, **run)
        replaces.check(target, old, replace_line(old, middle, new_text.encode()), cache, landed, ns.heal)
    print(replaces.line("replace"))
    return [writes, replaces]


def server_phase(be, work, cache, env, ns, rng):
    target = work / "big.txt"
    target.unlink()  # a fresh inode: no hard link left over from the CLI phase
    target.write_bytes(text(ns.mb, b"srv"))
    middle = 20_000
    content = text(max(1, ns.mb // 5), b"new").decode()

    def request(number):
        if number % 2:
            line = f"server {number} " + "q" * rng.randrange(0, 100)
            args = {"file": "big.txt", "start": middle, "content": line, "brief": True}
            return "be-replace", args, lambda old: replace_line(old, middle, line.encode())
        body = content + f"written {number}\n"
        return "be-write", {"file": "big.txt", "content": body, "brief": True}, lambda old: body.encode()

    def start():
        proc = subprocess.Popen(
            be, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        proc.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"ping"}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        return proc

    def send(proc, name, args):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        }
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    durations = []
    for number in (0, 1):
        proc = start()
        name, args, _expect = request(number)
        begin = time.perf_counter()
        send(proc, name, args)
        reply = json.loads(proc.stdout.readline())
        durations.append(time.perf_counter() - begin)
        assert not reply["result"].get("isError"), reply
        proc.stdin.close()
        proc.wait()
    print(f"server be-write {durations[0]:.2f}s, be-replace {durations[1]:.2f}s")
    tally = Tally()
    for number, fraction in enumerate(spread(ns.server_kills, rng)):
        old = target.read_bytes()
        proc = start()
        name, args, expect = request(number)
        send(proc, name, args)
        time.sleep(fraction * durations[number % 2])
        landed = proc.poll() is None
        proc.kill()
        proc.wait()
        tally.check(target, old, expect(old), cache, landed, ns.heal)
    print(tally.line("server"))
    return [tally]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--kills", type=int, default=40, help="CLI kills, half write, half replace")
    parser.add_argument("--server-kills", type=int, default=12)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--dir", default=str(HERE / "_work"))
    parser.add_argument(
        "--heal", action="store_true", help="give the target a fresh inode after a kill left it hard-linked"
    )
    ns = parser.parse_args()
    seed = ns.seed if ns.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = Path(ns.dir).resolve() / "crash"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cache = work / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
    env.update(BETTER_EDIT_CACHE_DIR=str(cache), BETTER_EDIT_WORKSPACE=str(work), LANG="C.UTF-8")
    be = command()
    print(f"seed {seed}")
    try:
        tallies = cli_phase(be, work, cache, env, ns, rng) + server_phase(be, work, cache, env, ns, rng)
        stray = [p.name for p in work.iterdir() if p.name.startswith(".big.txt.")]
        total = sum(t.kills for t in tallies)
        survived = sum(t.old + t.new for t in tallies)
        print(
            f"TOTAL kills {total}, survived (old or new bytes) {survived}, mixed {sum(t.mixed for t in tallies)}, "
            f"bad store files {sum(t.bad_store for t in tallies)}, left hard-linked {sum(t.linked for t in tallies)}, "
            f"stray temp files {len(stray)}"
        )
        snapshots = len(list((cache / "snapshots").glob("*/*.json")))
        digest = hashlib.sha256((work / "big.txt").read_bytes()).hexdigest()[:12]
        print(f"snapshot records now {snapshots}; final file sha256 {digest}")
        return 1 if survived != total or any(t.bad_store for t in tallies) else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
