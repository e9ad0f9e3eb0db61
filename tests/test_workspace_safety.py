"""Safety under attack (issue 6): crash, concurrency, fuzzing, sandbox escapes, stores, huge inputs.

The promise under test: nothing an agent or a user wrote is ever lost, and nothing is written (or
read) where it should not be. The CLI and the MCP server always run as real subprocesses through
`be_command` (so `BE_EXE` runs the same tests against the frozen executable); a few races are made
deterministic by injecting the "attacker" in-process at the exact moment between check and use,
and the text model and scanners are fuzzed in-process.

Long versions live in bench/: bench_crash.py (100 MB, SIGKILL) and bench_huge.py (1 GB, peak RSS).

The loops that make this suite slow (SIGKILLs, concurrent writers, fuzz examples, races) run at an
everyday size; BE_STRESS=1 runs them at full size (`harness.scaled(default, full)`; the sizes are in
CONTRIBUTING.md). BE_FUZZ_EXAMPLES=N sets the fuzz example count alone.

Sections: helpers; 1. crash safety (docs/behaviour.md#writing-safely); 2. concurrency (docs/behaviour.md#writing-safely, docs/behaviour.md#where-state-lives); 3. fuzzing (docs/behaviour.md#json-rpc-transport, docs/behaviour.md#errors);
4. sandbox (docs/behaviour.md#paths-and-the-sandbox); 5. stores under abuse (docs/behaviour.md#snapshots, docs/chips.md); 6. huge inputs (docs/behaviour.md#json-rpc-transport, docs/behaviour.md#limits).
"""

import contextlib
import hashlib
import json
import os
import random
import re
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from harness import FROZEN, REPO, Server, be_command_prefix, close_all, run_cli, scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SECRET = "TOPSECRET-" + hashlib.sha256(str(random.random()).encode()).hexdigest()[:24]

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals, symlinks and rlimits")


# ---- helpers ---------------------------------------------------------------------------------------


@pytest.fixture
def servers(be_env, root):
    """start(**kw) -> harness.Server with cwd=root and env=be_env; every server is closed at teardown."""
    started = []

    def start(cwd=None, env=None, flags=(), preexec_fn=None):
        merged = dict(be_env)
        merged.update(env or {})
        server = Server(cwd or root, merged, flags, preexec_fn)
        started.append(server)
        return server

    yield start
    close_all(started)


def tree_state(top, skip=()):
    """{relative path: (kind, bytes or link text, mode, mtime_ns)} of everything under `top`."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = os.path.relpath(dirpath, top)
        if rel_dir.split(os.sep)[0] in skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel.split(os.sep)[0] in skip:
                continue
            st_ = os.lstat(path)
            if stat.S_ISLNK(st_.st_mode):
                state[rel] = ("link", os.readlink(path), None, None)
            elif stat.S_ISDIR(st_.st_mode):
                state[rel] = ("dir", None, st_.st_mode, None)
            else:
                with open(path, "rb") as handle:
                    state[rel] = ("file", handle.read(), st_.st_mode, st_.st_mtime_ns)
    return state


@pytest.fixture
def outside(tmp_path):
    """Sentinel files outside the root (tmp_path/outside); `outside.check()` asserts nothing changed.

    Also watches tmp_path itself (apart from root/, cache/ and the tests' own work/) so no file
    appears beside the root.
    """
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(f"{SECRET}\nline two {SECRET}\n")
    (out / "code.py").write_text(f"def f():\n    return '{SECRET}'\n")
    (out / "sub").mkdir()
    (out / "sub" / "deep.txt").write_text(SECRET + "\n")
    (tmp_path / "rootx").mkdir()  # a sibling whose name starts with the root's name
    (tmp_path / "rootx" / "secret.txt").write_text(SECRET + "\n")
    before = tree_state(tmp_path, skip=("root", "cache", "work"))

    class Outside:
        path = out

        @staticmethod
        def check():
            after = tree_state(tmp_path, skip=("root", "cache", "work"))
            changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
            assert not changed, f"something outside the root changed: {changed}"

    return Outside


def assert_no_secret(server_or_bytes):
    data = server_or_bytes if isinstance(server_or_bytes, bytes) else b"".join(server_or_bytes.stdout_lines)
    assert SECRET.encode() not in data, "a reply carried the content of a file outside the root"


def store_dirs(cache_dir):
    return [p for kind in ("snapshots", "chips") for p in (cache_dir / kind).glob("*") if p.is_dir()]


def assert_stores_load(cache_dir):
    """Every record file of both stores parses as an object of the right shape."""
    count = 0
    for directory in store_dirs(cache_dir):
        for path in directory.glob("*.json"):
            record = json.loads(path.read_bytes())
            assert isinstance(record, dict), path
            key = "event_id" if directory.parent.name == "snapshots" else "id"
            assert re.fullmatch(r"[0-9a-f]{6,12}", record[key]), path
            count += 1
    return count


def lines_of(data):
    """Line texts without terminators (for comparing untouched lines); BOMs dropped."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", "surrogatepass")
    else:
        text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        text = text.decode("utf-8", "surrogateescape")
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def big_text(megabytes, tag=b"old"):
    line = tag + b" " + b"x" * 70 + b"\n"
    count = megabytes * 1_000_000 // (len(line) + 9)
    return b"".join(b"%08d " % n + line for n in range(count))


def replace_line(data, number, new_text):
    """data with line `number` (1-based) replaced by new_text (+ LF)."""
    start = 0
    for _ in range(number - 1):
        start = data.index(b"\n", start) + 1
    stop = data.index(b"\n", start) + 1
    return data[:start] + new_text + b"\n" + data[stop:]


def spread_delays(count, duration, rng):
    """`count` kill delays stratified over [0, 1.1 x duration], shuffled."""
    delays = [(index + rng.random()) / count * duration * 1.1 for index in range(count)]
    rng.shuffle(delays)
    return delays


def heal_orphan_link(path, orphans):
    """After a SIGKILL between the snapshot's hard link and the rename, the user's file keeps a
    second link in the cache until the next edit drops it (test_crash_leaves_no_hard_link_to_the_user_file).
    Count such events for the report; the next kill then tests that the edit still goes the atomic way."""
    if os.stat(path).st_nlink > 1:
        orphans.append(path)


def kill_run(command, delay, **kw):
    """Start `command`, SIGKILL it after `delay` seconds; True when the kill landed while it ran."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    time.sleep(delay)
    landed = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return landed


def timed_run(command, **kw):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, **kw)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


# ====================================================================================================
# 1. Crash safety (docs/behaviour.md#writing-safely): SIGKILL at random moments leaves the old bytes or the new bytes
# ====================================================================================================

CRASH_MB = scaled(8, 20)
CRASH_KILLS_WRITE = scaled(6, 16)
CRASH_KILLS_REPLACE = scaled(6, 16)
CRASH_KILLS_SERVER = scaled(5, 14)


def recover(target, run):
    """One ordinary command: it finishes (undoes) a commit a killed process left (docs/behaviour.md#journaled-commits)."""
    done = run_cli("read", "-f", str(target), "-s", "1", "-e", "1", **run)
    assert done.returncode == 0, done.stderr


def test_crash_cli_write_and_replace(tmp_path, root, cache_dir, be_command, be_env, outside):
    """A CLI `write` and a `replace` of a CRASH_MB file are SIGKILLed at moments spread over their
    measured duration; after every kill the file holds exactly the old or exactly the new bytes and
    both stores load."""
    rng = random.Random(6)
    target = root / "big.txt"
    versions = [big_text(CRASH_MB, b"aaa"), big_text(CRASH_MB, b"bbbb")]  # different lengths
    sources = []
    (tmp_path / "work").mkdir()
    for index, data in enumerate(versions):
        source = tmp_path / "work" / f"source{index}.txt"
        source.write_bytes(data)
        sources.append(source)
    target.write_bytes(versions[0])

    def write_cmd(index):
        return [*be_command, "write", "-f", str(target), "--content-file", str(sources[index]), "--brief"]

    run = {"cwd": str(root), "env": be_env}
    duration = max(timed_run(write_cmd(1), **run), timed_run(write_cmd(0), **run))
    survived, orphans, landed_total = 0, [], 0
    for delay in spread_delays(CRASH_KILLS_WRITE, duration, rng):
        old = target.read_bytes()
        index = 1 if old == versions[0] else 0
        landed_total += kill_run(write_cmd(index), delay, **run)
        now = target.read_bytes()
        assert now in (old, versions[index]), f"write killed after {delay:.3f}s left a mix"
        recover(target, run)  # a killed call not yet committed is undone by the next command
        assert target.read_bytes() in (old, versions[index])
        survived += 1
        assert_stores_load(cache_dir)
        heal_orphan_link(target, orphans)

    middle = len(lines_of(target.read_bytes())) // 2
    edit = [*be_command, "replace", "-f", str(target), "-s", str(middle), "--brief", "-c"]
    duration = timed_run([*edit, "timing run"], **run)
    for number, delay in enumerate(spread_delays(CRASH_KILLS_REPLACE, duration, rng)):
        old = target.read_bytes()
        text = f"replaced {number} " + "z" * rng.randrange(0, 200)
        landed_total += kill_run([*edit, text], delay, **run)
        now = target.read_bytes()
        assert now in (old, replace_line(old, middle, text.encode())), (
            f"replace killed after {delay:.3f}s left a mix"
        )
        recover(target, run)
        assert target.read_bytes() in (old, replace_line(old, middle, text.encode()))
        survived += 1
        assert_stores_load(cache_dir)
        heal_orphan_link(target, orphans)

    # the stores still load through the product itself, with no warning about a damaged file
    env = dict(be_env)
    server = Server(root, env)
    try:
        assert server.ok("be-trx-status", {})["snapshots"]
        assert server.ok("be-insert-chip", {})["status"] == "ok"
        assert server.alive()
    finally:
        server.close()
    assert b"skipped" not in server.stderr, server.stderr
    outside.check()
    print(
        f"\n[crash] CLI kills survived: {survived} ({landed_total} landed mid-run), orphan hard links: {len(orphans)}"
    )


def test_crash_server_mid_edit(tmp_path, root, cache_dir, be_env, outside):
    """The MCP server is SIGKILLed while a be-replace / be-write of a CRASH_MB file is in progress."""
    rng = random.Random(7)
    target = root / "big.txt"
    target.write_bytes(big_text(CRASH_MB, b"srv"))
    middle = 20_000  # inside both the CRASH_MB file and the 4 MB one be-write leaves
    write_content = big_text(4, b"new").decode()

    def request(number):
        if number % 2:
            text = f"server {number} " + "q" * rng.randrange(0, 100)
            args = {"file": "big.txt", "start": middle, "content": text, "brief": True}
            return "be-replace", args, lambda old: replace_line(old, middle, text.encode())
        content = write_content + f"written {number}\n"
        return (
            "be-write",
            {"file": "big.txt", "content": content, "brief": True},
            lambda old: content.encode(),
        )

    # measure one request of each kind
    durations = []
    for number in (0, 1):
        server = Server(root, be_env)
        assert server.alive()
        name, args, _expect = request(number)
        start = time.perf_counter()
        server.ok(name, args)
        durations.append(time.perf_counter() - start)
        server.close()
    survived, landed, orphans = 0, 0, []
    for number, fraction in enumerate(spread_delays(CRASH_KILLS_SERVER, 1.0, rng)):
        delay = fraction * durations[number % 2]
        old = target.read_bytes()
        server = Server(root, be_env)
        assert server.alive()
        name, args, expect = request(number)
        server.send(
            {
                "jsonrpc": "2.0",
                "id": "edit",
                "method": "tools/call",
                "params": {"name": name, "arguments": args},
            }
        )
        time.sleep(delay)
        landed += server.proc.poll() is None and server.lines.empty()
        server.kill()
        now = target.read_bytes()
        assert now in (old, expect(old)), f"{name} killed after {delay:.3f}s left a mix"
        recover(target, {"cwd": str(root), "env": be_env})
        assert target.read_bytes() in (old, expect(old))
        survived += 1
        assert_stores_load(cache_dir)
        heal_orphan_link(target, orphans)
    server = Server(root, be_env)
    assert server.ok("be-trx-status", {})["status"] == "ok"
    server.close()
    assert b"skipped" not in server.stderr
    outside.check()
    print(
        f"\n[crash] server kills survived: {survived} ({landed} mid-request), orphan hard links: {len(orphans)}"
    )


def test_crash_leaves_no_hard_link_to_the_user_file(root, be_env):
    """Deterministic version of what the SIGKILL loops see: die at each I/O step of a replace
    (BETTER_EDIT_FAULT=K:KILL; the kept old name and the snapshot's .bin are second links of the
    user's file for a moment); the next edit of the file must still be atomic (a new inode), not an
    in-place rewrite, and warn of no hard link."""
    target = root / "f.txt"
    for k in range(1, 40, scaled(2, 1)):  # (every other step in the everyday run)
        target.write_bytes(b"one\ntwo\nthree\n")
        env = dict(be_env, BETTER_EDIT_FAULT=f"{k}:KILL")
        done = run_cli("replace", "-f", "f.txt", "-s", "2", "-c", "TWO", cwd=root, env=env)
        if done.returncode == 0:
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        run_cli("balance", "-f", "f.txt", cwd=root, env=be_env)  # (undoes the killed call first)
        assert target.read_bytes() in (b"one\ntwo\nthree\n", b"one\nTWO\nthree\n"), k  # (TWO: committed)
        inode = target.stat().st_ino
        done = run_cli("replace", "-f", "f.txt", "-s", "3", "-c", "3", "-o", "json", cwd=root, env=be_env)
        result = json.loads(done.stdout)
        assert not any("hard link" in w for w in result.get("warnings", [])), (k, result)
        assert target.stat().st_ino != inode, f"step {k}: the edit was written in place, not atomically"
        assert target.stat().st_nlink == 1
        assert sorted(os.listdir(root)) == ["f.txt"], k
    assert k > 8


# ====================================================================================================
# 2. Concurrency (docs/behaviour.md#writing-safely, docs/behaviour.md#where-state-lives): no lost update, no half line, no lost snapshot or chip
# ====================================================================================================

LINES_PER_WRITER = scaled(60, 200)  # CLI writers insert 2 lines a call: 30 (100) calls each
STORE_ROUNDS = scaled(40, 100)  # rounds of 3 calls by each of 2 servers
CLI_LINES_PER_CALL = 2  # a CLI call costs a process start; 2 lines each keeps the suite fast


def _line(writer, number):
    return f"w{writer}-{number:03d} " + "x" * (number % 37) + " end"


def _cli_writer(be_command, be_env, root, writer, errors):
    position = (0, 1, -1)
    for first in range(0, LINES_PER_WRITER, CLI_LINES_PER_CALL):
        numbers = range(first, min(first + CLI_LINES_PER_CALL, LINES_PER_WRITER))
        content = "\n".join(_line(writer, n) for n in numbers) + "\n"
        after = position[first % 3]
        args = ("insert", "-f", "shared.txt", "--after-line", after, "-c", content, "--brief")
        done = run_cli(*args, cwd=root, env=be_env, command=be_command)
        if done.returncode != 0:
            errors.append((writer, first, done.stderr.decode()))


def _server_writer(server, writer, errors):
    position = (0, 1, -1)
    for number in range(LINES_PER_WRITER):
        try:
            server.ok(
                "be-insert",
                {
                    "file": "shared.txt",
                    "after_line": position[number % 3],
                    "content": _line(writer, number),
                    "brief": True,
                },
            )
        except AssertionError as exc:
            errors.append((writer, number, str(exc)))


@pytest.mark.parametrize("writers", [2, 4])
def test_concurrent_writers_lose_no_line(writers, root, be_command, be_env, servers, outside):
    """Half the writers are CLI processes, half are servers; every line must land exactly once."""
    shared = root / "shared.txt"
    shared.write_text("HEADER\n")
    env = dict(be_env, BETTER_EDIT_MAX_SNAPSHOTS="5")
    errors, threads = [], []
    for writer in range(writers):
        if writer % 2:
            server = servers(env=env)
            assert server.alive()
            threads.append(threading.Thread(target=_server_writer, args=(server, writer, errors)))
        else:
            threads.append(threading.Thread(target=_cli_writer, args=(be_command, env, root, writer, errors)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not errors, errors[:5]
    lines = shared.read_text().split("\n")
    assert lines.pop() == "", "the file lost its final newline"
    assert lines.count("HEADER") == 1
    lines.remove("HEADER")
    expected = sorted(_line(w, n) for w in range(writers) for n in range(LINES_PER_WRITER))
    pattern = re.compile(r"w\d-\d{3} x* end")
    assert all(pattern.fullmatch(line) for line in lines), [x for x in lines if not pattern.fullmatch(x)][:5]
    assert sorted(lines) == expected, "a line was lost or duplicated"
    outside.check()
    print(f"\n[concurrency] {writers} writers x {LINES_PER_WRITER} lines: {len(lines)} lines checked")


def test_two_servers_share_the_stores(root, cache_dir, be_env, servers):
    """Two servers on one workspace take snapshots and make chips at the same time: none is lost."""
    env = dict(be_env, BETTER_EDIT_MAX_SNAPSHOTS="1000", BETTER_EDIT_MAX_CHIPS="1000")
    rounds = STORE_ROUNDS
    made = {}

    def work(server, name):
        events, chips = [], {}
        for number in range(rounds):
            file = f"{name}.py"
            result = server.ok(
                "be-write", {"file": file, "content": f"# {name} {number}\nx = 1\ny = 2\n", "brief": True}
            )
            events.append(result["event_id"])
            result = server.ok("be-delete", {"file": file, "start": 2, "brief": True})
            events.append(result["event_id"])
            chips[result["chip"]] = "x = 1\n"
            args = {
                "file": f"missing-{name}.txt",
                "start": 1,
                "content": f"lost work {name} {number} " + "w" * 40,
            }
            _result, error = server.call("be-replace", args)
            assert error["code"] == "NOT_FOUND"
            chips[error["chip"]] = args["content"]
        made[name] = (events, chips)

    pair = [servers(env=env) for _ in range(2)]
    threads = [threading.Thread(target=work, args=(server, f"s{n}")) for n, server in enumerate(pair)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert set(made) == {"s0", "s1"}
    checker = servers(env=env)
    listed = [s["event_id"] for s in checker.ok("be-trx-status", {})["snapshots"]]
    all_events = made["s0"][0] + made["s1"][0]
    assert sorted(listed) == sorted(all_events), "a snapshot was lost"
    assert len(set(all_events)) == len(all_events) == 4 * rounds
    chip_ids = checker.ok("be-insert-chip", {})["chips"]
    wanted = {**made["s0"][1], **made["s1"][1]}
    assert len(wanted) == 4 * rounds and set(chip_ids) == set(wanted), "a chip was lost"
    for chip_id, text in list(wanted.items())[::7]:
        assert checker.ok("be-insert-chip", {"from": f"chip://{chip_id}"})["text"] == text
    assert assert_stores_load(cache_dir) == 8 * rounds
    stray = [p for d in store_dirs(cache_dir) for p in d.iterdir() if p.name.endswith(".tmp")]
    assert not stray, stray
    for server in pair + [checker]:
        assert server.alive()
        assert b"skipped" not in server.stderr
    print(f"\n[concurrency] 2 servers: {len(all_events)} snapshots and {len(wanted)} chips, none lost")


# ====================================================================================================
# 3. Fuzzing (docs/behaviour.md#json-rpc-transport, docs/behaviour.md#errors): the server answers everything, stays alive, touches only what it says
# ====================================================================================================

TOOL_PARAMS = {
    "be-read": ["file", "start", "end", "target", "brief", "encoding", "max_lines"],
    "be-replace": [
        "file",
        "content",
        "start",
        "end",
        "old",
        "viewed_code_id",
        "preview",
        "brief",
        "format",
        "encoding",
    ],
    "be-insert": [
        "file",
        "after_line",
        "content",
        "viewed_code_id",
        "preview",
        "brief",
        "format",
        "encoding",
    ],
    "be-delete": [
        "file",
        "start",
        "end",
        "target",
        "viewed_code_id",
        "force",
        "preview",
        "brief",
        "format",
        "encoding",
    ],
    "be-write": ["file", "content", "preview", "brief", "encoding"],
    "be-balance": ["file", "verbose"],
    "be-func-range": ["file", "line", "outer"],
    "be-tag-range": ["file", "line"],
    "be-insert-chip": ["from", "to", "as", "filter", "preview"],
    "be-trx-status": [],
    "be-trx-commit": ["file"],
    "be-trx-rollback": ["steps", "event_id", "file", "force"],
}
EDIT_TOOLS = {"be-replace", "be-insert", "be-delete", "be-write", "be-insert-chip"}
FUZZ_FILES = {
    "a.txt": b"alpha\nbeta\ngamma\ndelta\n",
    "b.py": b"def f(x):\n    return [x, {x: (x)}]\n\n\nclass C:\n    def m(self):\n        pass\n",
    "c.html": b"<html>\n<body>\n<div id='a'>\n<p>hi</p>\n</div>\n</body>\n</html>\n",
    "crlf.txt": b"one\r\ntwo\r\nthree",
    "empty.txt": b"",
    "sub/d.js": b"function g() {\n  return `x${1}`;\n}\n",
    "bom.txt": b"\xef\xbb\xbfhead\nbody\n",
    "\u65e5\u672c.txt": "\u65e5\u672c\u8a9e\n\u884c\n".encode(),
}


def _fuzz_world(root, outside_dir):
    for name, data in FUZZ_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "link_out").symlink_to(outside_dir / "secret.txt")
    (root / "link_in").symlink_to("a.txt")
    out = str(outside_dir)
    return [
        *FUZZ_FILES,
        "new.txt",
        "sub/new/n.txt",
        "link_in",
        "link_out",
        "../outside/secret.txt",
        f"{out}/secret.txt",
        f"file://{out}/secret.txt",
        f"file://{root}/../outside/code.py",
        "..\\outside\\secret.txt",
        "a.txt\x00../../outside/secret.txt",
        "",
        ".",
        "sub",
    ]


def _nasty_scalars():
    return st.one_of(
        st.integers(min_value=-5, max_value=12),
        st.sampled_from(
            [0, -1, 2**31, 2**63, -(2**63), 10**30, 1.0, 2.5, float("inf"), float("nan"), True, False, None]
        ),
        st.sampled_from(["1", " 3 ", "-1", "1e3", "0x10", "", "\x00", "\u202e", "\ud800"]),
        st.text(max_size=40),
    )


def _nasty_values():
    return st.recursive(
        _nasty_scalars(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )


@st.composite
def tool_calls(draw, files, root):
    tool = draw(st.sampled_from(sorted(TOOL_PARAMS)))
    params = TOOL_PARAMS[tool]
    args = {}
    good = {
        "file": st.sampled_from(files),
        "content": st.one_of(
            st.text(max_size=60), st.sampled_from(["x\n", "", "a\r\nb", "\x00", "\\n\\n", "\ud800"])
        ),
        "old": st.one_of(st.sampled_from(["beta", "alpha\nbeta", "x", ""]), st.text(max_size=10)),
        "start": st.integers(-3, 9),
        "end": st.integers(-3, 9),
        "after_line": st.integers(-3, 9),
        "line": st.integers(-1, 9),
        "steps": st.integers(-1, 3),
        "max_lines": st.integers(-1, 5),
        "target": st.sampled_from(
            ["line:2", "marker:beta", "function:f", "tag:div", {"kind": "line", "value": 99}]
        ),
        "encoding": st.sampled_from(["utf-8", "latin-1", "gbk", "utf-16", "nope"]),
        "format": st.sampled_from(["unified", "plain", "x"]),
        "as": st.sampled_from(["text", "annotated", "x"]),
        "from": st.sampled_from(
            [
                "chip://000000",
                "chip://zz",
                f"file://{root}/a.txt",
                f"file://{root}/../outside/secret.txt",
                "x",
            ]
        ),
        "to": st.one_of(st.sampled_from(files).map(lambda f: f + ":0"), st.text(max_size=12)),
        "event_id": st.text(alphabet="0123456789abcdef", min_size=0, max_size=7),
        "viewed_code_id": st.sampled_from(
            ["v1:1-2:0000000000000000", "v1:1-1:", "junk", "v1:2-1:ffffffffffffffff"]
        ),
        "filter": st.text(max_size=6),
    }
    required = {"file", "content", "after_line", "line"}
    for name in params:
        if draw(st.integers(0, 9)) < (9 if name in required else 4):
            strategy = good.get(name, st.booleans())
            args[name] = draw(_nasty_values() if draw(st.integers(0, 7)) == 0 else strategy)
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=8))] = draw(_nasty_values())
    form = draw(st.integers(0, 19))
    if form == 0:
        return tool, json.dumps(args)  # double-encoded arguments are accepted
    if form == 1:
        return tool, draw(_nasty_values())
    return tool, args


def _changed(before, after):
    return {name for name in set(before) | set(after) if before.get(name) != after.get(name)}


def _check_edit(tool, args, result, before, after):
    """A successful call changed only what its result names, and the way it says."""
    changed = _changed(before, after)
    if (
        result.get("preview")
        or tool not in EDIT_TOOLS | {"be-trx-rollback"}
        or "total" not in result
        and "bytes" not in result
        and "files" not in result
    ):
        assert not changed, (tool, args, result, changed)
        return
    if tool == "be-trx-rollback":
        assert changed <= set(result["files"])
        return
    assert changed <= {result["path"]}, (tool, changed, result["path"])
    path = result["path"]
    new = after.get(path)
    if tool == "be-write":
        assert new is not None and len(new) == result["bytes"]
        return
    codec = str(args.get("encoding", "")).lower().replace("_", "-")
    if codec.startswith(("utf-16", "utf-32")):
        return  # (a UTF-16 file without BOM has 0x0A bytes that are no line break: no byte-level oracle)
    old_lines, new_lines = lines_of(before[path]), lines_of(new)
    assert len(new_lines) == result["total"]
    if tool in ("be-insert", "be-insert-chip"):
        first, last = result["after_line"] + 1, result["after_line"]
    else:
        first, last = result["start"], result["end"]
    added = result.get("added", 0)
    assert new_lines[: first - 1] == old_lines[: first - 1], "a line before the edit changed"
    assert new_lines[first - 1 + added :] == old_lines[last:], "a line after the edit changed"


def _root_files(root):
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


FUZZ_EXAMPLES = int(os.environ.get("BE_FUZZ_EXAMPLES", scaled(60, 500)))


def test_fuzz_tool_arguments(root, servers, outside):
    """Random and mutated tool arguments to one long-lived server: every call answered, nothing
    outside the root touched or leaked, only the file a result names changed, the way it says."""
    files = _fuzz_world(root, outside.path)
    server = servers()
    seen = {"count": 0, "codes": {}}

    @settings(
        deadline=None, max_examples=FUZZ_EXAMPLES, suppress_health_check=list(HealthCheck), database=None
    )
    @given(call=tool_calls(files, str(root)))
    def run(call):
        tool, args = call
        before = _root_files(root)
        reply = server.request("tools/call", {"name": tool, "arguments": args})
        seen["count"] += 1
        after = _root_files(root)
        outside.check()
        if "error" in reply:
            assert reply["error"]["code"] == -32603, reply  # e.g. arguments nested too deep to echo
            code = "rpc-error"
        elif reply["result"].get("isError"):
            code = reply["result"]["structuredContent"]["error"]["code"]
        else:
            code = "ok"
        seen["codes"][code] = seen["codes"].get(code, 0) + 1
        if code != "ok":
            assert _changed(before, after) == set(), (tool, args, reply)
            return
        result = reply["result"]["structuredContent"]
        if args is None:  # no arguments: the server takes {} (a rollback of the last event, say)
            given = {}
        else:
            given = args if isinstance(args, dict) else json.loads(args)
        _check_edit(tool, given, result, before, after)

    run()
    assert server.alive()
    assert_no_secret(server)
    print(f"\n[fuzz] tool-argument examples: {seen['count']}, outcomes {seen['codes']}")


def _expected_replies(line):
    """How many replies docs/behaviour.md#json-rpc-transport promises for one raw line (0 for blank lines, notifications, responses)."""
    stripped = line.strip()
    if not stripped:
        return 0
    try:
        message = json.loads(stripped)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return 1
    if isinstance(message, list) and message:  # a batch: one line of replies, if any is answered
        return int(any(_answered(one) for one in message))
    return int(_answered(message))


def _answered(message):
    """Whether one parsed message gets a reply: not a valid notification nor a stray response (an
    invalid message without an id is answered, with id null)."""
    if not isinstance(message, dict):
        return True
    if "method" not in message and ("result" in message or "error" in message):
        return False
    valid = isinstance(message.get("method"), str) and message.get("jsonrpc") == "2.0"
    return "id" in message or not valid


def _valid_messages():
    ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=8))
    call = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": ids,
            "method": st.just("tools/call"),
            "params": st.fixed_dictionaries(
                {
                    "name": st.sampled_from(sorted(TOOL_PARAMS)),
                    "arguments": st.dictionaries(
                        st.sampled_from(["file", "start", "content", "line"]), _nasty_values(), max_size=3
                    ),
                }
            ),
        }
    )
    other = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": ids,
            "method": st.sampled_from(["initialize", "ping", "tools/list", "nope", "tools/call"]),
            "params": _nasty_values(),
        }
    )
    return st.one_of(call, other)


@st.composite
def raw_lines(draw):
    kind = draw(st.integers(0, 5))
    if kind == 0:
        data = draw(st.binary(max_size=200))
    elif kind == 1:
        data = json.dumps(draw(_nasty_values())).encode()
    elif kind == 2:
        message = draw(
            st.dictionaries(
                st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
                _nasty_values(),
                max_size=5,
            )
        )
        data = json.dumps(message).encode()
    else:
        data = bytearray(
            json.dumps(draw(_valid_messages()), ensure_ascii=draw(st.booleans())).encode(
                "utf-8", "surrogatepass"
            )
        )
        for _ in range(draw(st.integers(0, 4))):  # byte-level mutations
            if not data:
                break
            where = draw(st.integers(0, len(data) - 1))
            action = draw(st.integers(0, 2))
            if action == 0:
                data[where] = draw(st.integers(0, 255))
            elif action == 1:
                del data[where]
            else:
                data[where:where] = draw(st.binary(min_size=1, max_size=4))
        data = bytes(data)
    return data.replace(b"\n", b" ")


def _exchange(server, line, sync):
    """Send one raw line and a ping; the replies that came before the ping's."""
    server.send_raw(line + b"\n")
    server.send({"jsonrpc": "2.0", "id": sync, "method": "ping"})
    replies = []
    while True:
        reply = server.recv(parse_int=str)  # (an id of 5,000 digits comes back as sent)
        if isinstance(reply, dict) and reply.get("id") == sync:
            return replies
        replies.append(reply)


def test_fuzz_raw_jsonrpc_lines(root, servers, outside):
    """Random bytes and mutated JSON-RPC messages: each request gets exactly one reply, in order."""
    _fuzz_world(root, outside.path)
    server = servers()
    count = [0]

    @settings(
        deadline=None, max_examples=FUZZ_EXAMPLES, suppress_health_check=list(HealthCheck), database=None
    )
    @given(line=raw_lines())
    def run(line):
        count[0] += 1
        replies = _exchange(server, line, f"sync-{count[0]}")
        assert len(replies) == _expected_replies(line), (line, replies)
        for reply in replies[0] if replies and isinstance(replies[0], list) else replies:  # (a batch's)
            assert reply.get("jsonrpc") == "2.0" and ("result" in reply) != ("error" in reply), reply
        outside.check()

    run()
    assert server.alive()
    assert_no_secret(server)
    print(f"\n[fuzz] raw JSON-RPC lines: {count[0]}")


NASTY_LINES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"be-read","arguments":{"file":'
    + b"[" * 3000
    + b"]" * 3000
    + b"}}}",
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"be-write","arguments":{"file":"n.txt","content":'
    + b"{" * 0
    + b'"x"'
    + b',"extra":'
    + b'{"a":' * 900
    + b"1"
    + b"}" * 900
    + b"}}}",
    b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":[1],"method":"ping"}',
    b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"\\u0000":"\\ud800"}}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":6,"method":"ping"}'.encode("utf-16"),
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}\x00',
    b"\xff\xfe\xfd garbage \x00\x01",
    b"[]",
    b"[{}]",
    b"{}",
    b'"just a string"',
    b"null",
    b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"be-read","arguments":"{\\"file\\": \\"a.txt\\"}"}}',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"be-read","arguments":"[1,2]"}}',
    b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":["be-read"]}}',
    b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"be-read","arguments":{"file":"a.txt","start":1e308}}}',
    b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"be-read","arguments":{"file":"a.txt","start":-1e308}}}',
    b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"be-read","arguments":{"file":"a.txt","start":'
    + b"9" * 4000
    + b"}}}",
]


def test_fuzz_nasty_messages(root, servers, outside):
    """Hand-picked poison: deep nesting, huge numbers, NUL, BOMs, UTF-16, 10 MB strings."""
    _fuzz_world(root, outside.path)
    server = servers()
    huge = "\u00e9" * (5 * 1024 * 1024)  # 10 MB of UTF-8
    lines = list(NASTY_LINES)
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 20, "method": huge}).encode())
    lines.append(
        json.dumps({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": huge}}).encode()
    )
    lines.append(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 22,
                "method": "tools/call",
                "params": {"name": "be-read", "arguments": {"file": huge}},
            }
        ).encode()
    )
    lines.append(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 23,
                "method": "tools/call",
                "params": {"name": "be-replace", "arguments": {"file": "a.txt", "old": huge, "content": "x"}},
            }
        ).encode()
    )
    lines.append(b"not json " + huge.encode())
    before = _root_files(root)
    for number, line in enumerate(lines):
        replies = _exchange(server, line.replace(b"\n", b" "), f"sync-{number}")
        assert len(replies) == _expected_replies(line.replace(b"\n", b" ")), (number, line[:100], replies)
    content = "\u00e9" * (5 * 1024 * 1024) + "\n"
    result = server.ok("be-write", {"file": "ten-mb.txt", "content": content, "brief": True})
    assert (root / "ten-mb.txt").read_bytes() == content.encode() and result["bytes"] == len(content.encode())
    (root / "ten-mb.txt").unlink()
    assert _root_files(root) == before
    assert server.alive()
    outside.check()
    assert_no_secret(server)


# --- the text model and the scanners, in process ------------------------------------------------------

ENCODINGS = [
    None,
    "utf-8",
    "latin-1",
    "cp1252",
    "gbk",
    "gb18030",
    "shift_jis",
    "utf-16",
    "utf-16-le",
    "bogus-codec",
]
EXTENSIONS = [
    ".py",
    ".js",
    ".ts",
    ".c",
    ".go",
    ".rs",
    ".html",
    ".xml",
    ".vue",
    ".json",
    ".css",
    ".md",
    ".sh",
    ".sql",
    ".yaml",
    ".txt",
    "",
]


def _module():
    sys.path.insert(0, str(REPO))
    import better_edit

    return better_edit


@st.composite
def file_bytes(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.binary(max_size=400))
    text = draw(
        st.text(
            alphabet=st.sampled_from(list("{}[]()<>/\\\"'`#*-$ \t\r\nabcdef=:;,.!?|\u00e9\u4e2d\ud7ff"))
            | st.characters(),
            max_size=300,
        )
    )
    codec = draw(st.sampled_from(["utf-8", "utf-16", "latin-1", "gbk", "utf-8-sig"]))
    data = text.encode(codec, "ignore") if codec != "utf-8" else text.encode("utf-8", "surrogatepass")
    if kind == 3 and data:  # damage it
        where = draw(st.integers(0, len(data) - 1))
        data = data[:where] + draw(st.binary(max_size=3)) + data[where + 1 :]
    return data


@settings(deadline=None, max_examples=FUZZ_EXAMPLES, suppress_health_check=list(HealthCheck))
@given(
    data=file_bytes(),
    ext=st.sampled_from(EXTENSIONS),
    encoding=st.sampled_from(ENCODINGS),
    line=st.integers(-2, 12),
)
def test_fuzz_text_model_and_scanners(data, ext, encoding, line, tmp_path):
    """Random bytes in random encodings through every read-side tool: only ToolError may escape."""
    be = _module()
    work = tmp_path / "fuzz-text"
    work.mkdir(exist_ok=True)
    target = work / ("f" + ext)
    target.write_bytes(data)
    ctx = be.Context(root=str(work), cache_dir=str(tmp_path / "fuzz-cache"), workspace=str(work), mcp=True)
    calls = [
        ("read", {"file": target.name}),
        ("read", {"file": target.name, "start": 1, "end": 0}),
        ("balance", {"file": target.name, "verbose": True}),
        ("func-range", {"file": target.name, "line": line}),
        ("tag-range", {"file": target.name, "line": line}),
        ("read", {"file": target.name, "target": "function:f"}),
        ("read", {"file": target.name, "target": "tag:div"}),
        ("insert", {"file": target.name, "after_line": line, "content": "a\nb", "preview": True}),
        ("replace", {"file": target.name, "start": max(line, 1), "content": "z", "preview": True}),
        ("replace", {"file": target.name, "old": "a", "content": "z", "preview": True}),
        ("delete", {"file": target.name, "start": max(line, 1), "preview": True, "force": True}),
    ]
    for name, args in calls:
        if encoding:
            args = (
                dict(args, encoding=encoding) if name not in ("balance", "func-range", "tag-range") else args
            )
        try:
            be.call_tool(ctx, be.find_tool(name), args)
        except be.ToolError:
            pass
    assert target.read_bytes() == data
    try:
        text = be.decode_file(data, "f", encoding)
    except be.ToolError:
        return
    string = text.decode()
    language = be.detect_language("f" + ext, string[:512])
    if language:
        be.check_balance(string, language, True)
        for number in range(1, min(text.total(), 12) + 1):
            be.function_range(string, language, number)
            be.function_range(string, language, number, True)
            be.tag_range(string, language, number)
        be.function_names(string, language)
        be.tag_names(string, language)


# ====================================================================================================
# 4. Sandbox (docs/behaviour.md#paths-and-the-sandbox): every escape is SANDBOX and touches nothing; legitimate names work
# ====================================================================================================


def _sandbox_world(root, tmp_path):
    """Files, links and dangling links inside the root that point outside (tmp_path/outside)."""
    out = tmp_path / "outside"
    (root / "real.txt").write_text("alpha\nbeta\n")
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_text("inner\n")
    (root / "link_file").symlink_to(out / "secret.txt")
    (root / "link_dir").symlink_to(out)
    (root / "rel_link").symlink_to("../outside/secret.txt")
    (root / "dangling").symlink_to(out / "created-by-escape.txt")
    (root / "dangling_dir").symlink_to(out / "newdir")
    (root / "chain1").symlink_to("chain2")
    (root / "chain2").symlink_to("sub/chain3")
    (root / "sub" / "chain3").symlink_to("../../outside/secret.txt")
    (root / "chain_dangling").symlink_to("sub/chain_dangling2")
    (root / "sub" / "chain_dangling2").symlink_to(out / "nothing-here.txt")
    (root / "sub" / "up").symlink_to("../..")
    (root / "sub" / "code.py").symlink_to(out / "code.py")


ESCAPES = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "./../outside/secret.txt",
    "{out}/secret.txt",
    "{root}/../outside/secret.txt",
    "//{out}/secret.txt",
    "{tmp}/rootx/secret.txt",
    "../rootx/secret.txt",
    "/",
    "..",
    "link_file",
    "rel_link",
    "link_dir/secret.txt",
    "link_dir/sub/deep.txt",
    "link_dir",
    "link_dir/new-file.txt",
    "dangling",
    "dangling_dir/new.txt",
    "chain1",
    "chain_dangling",
    "sub/up/outside/secret.txt",
    "sub/code.py",
    "../outside/new-dir/new.txt",
    "file://{out}/secret.txt",
    "file://localhost{out}/secret.txt",
    "file://{root}/../outside/secret.txt",
    "file://{root}/%2e%2e/outside/secret.txt",
    "file://{root}/sub/..%2F..%2Foutside/secret.txt",
    "file://{root}/link_file",
    "file://evil.example.com{out}/secret.txt",
    "..\\outside\\secret.txt",
    "sub\\..\\..\\outside\\secret.txt",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "\\\\server\\share\\secret.txt",
    "real.txt\x00../../outside/secret.txt",
    "\x00",
    "file://{root}/real.txt%00.txt",
]
SANDBOX_TOOLS = [
    ("be-read", {}),
    ("be-replace", {"start": 1, "content": "pwned"}),
    ("be-replace", {"old": SECRET, "content": "pwned"}),
    ("be-insert", {"after_line": 0, "content": "pwned"}),
    ("be-delete", {"start": 1, "force": True}),
    ("be-write", {"content": "pwned\n"}),
    ("be-balance", {}),
    ("be-func-range", {"line": 1}),
    ("be-tag-range", {"line": 1}),
    ("be-trx-commit", {}),
    ("be-trx-rollback", {}),
]


def _fill(template, root, tmp_path):
    return template.format(root=root, out=tmp_path / "outside", tmp=tmp_path)


@pytest.mark.parametrize("template", ESCAPES)
def test_sandbox_escape_refused(template, root, tmp_path, servers, outside):
    _sandbox_world(root, tmp_path)
    path = _fill(template, root, tmp_path)
    server = servers()
    server.ok("be-write", {"file": "seed.txt", "content": "x\n"})  # something to roll back
    before = tree_state(root)
    for tool, extra in SANDBOX_TOOLS:
        args = dict(extra, file=path)
        result, error = server.call(tool, args)
        assert error is not None and error["code"] == "SANDBOX", (tool, path, result, error)
    # as a chip source (insert it, or just show its record) and as a chip destination
    source = path if path.startswith("file://") else "file://" + path
    inside = "file://" + str(root / "real.txt")
    for args in ({"from": source, "to": "real.txt:0"}, {"from": source}, {"from": inside, "to": path + ":0"}):
        result, error = server.call("be-insert-chip", args)
        assert error is not None and error["code"] == "SANDBOX", (args, result, error)
    assert tree_state(root) == before
    outside.check()
    assert_no_secret(server)
    assert server.alive()


ESCAPE_WAYS = scaled(1, 2)  # CLI forms each escape is tried in (--root, BETTER_EDIT_ROOT, a write)


def test_sandbox_escape_through_cli_root(root, tmp_path, run_be, outside):
    """The CLI sandboxes too when --root or BETTER_EDIT_ROOT is given (docs/behaviour.md#paths-and-the-sandbox)."""
    _sandbox_world(root, tmp_path)
    before = tree_state(root)
    attempts = 0
    for number, template in enumerate(ESCAPES):
        path = _fill(template, root, tmp_path)
        if "\x00" in path:
            continue  # a NUL cannot be passed in argv
        forms = (
            (["--root", str(root), "read", "-f", path, "-o", "json"], None),
            (["write", "-f", path, "-c", "pwned", "-o", "json"], {"BETTER_EDIT_ROOT": str(root)}),
            (["replace", "--root", str(root), "-f", path, "-s", "1", "-c", "pwned", "-o", "json"], None),
        )
        ways = (forms[number % 3], forms[(number + 1) % 3])[:ESCAPE_WAYS]  # (of the three, in turn)
        for args, env in ways:
            done = run_be(*args, env=env)
            assert done.returncode == 1, (args, done.stdout, done.stderr)
            assert json.loads(done.stdout)["error"]["code"] == "SANDBOX", (args, done.stdout)
            assert SECRET.encode() not in done.stdout + done.stderr
            attempts += 1
    assert (
        attempts >= len([e for e in ESCAPES if "\x00" not in e]) * ESCAPE_WAYS
    )  # (every escape but the NUL ones)
    assert tree_state(root) == before
    outside.check()


LEGITIMATE = [
    ("..notes", "..notes"),
    ("...", "..."),
    ("a..b.txt", "a..b.txt"),
    ("sub/..hidden", "sub/..hidden"),
    ("sub/../real2.txt", "real2.txt"),
    ("./real2.txt", "real2.txt"),
    ("{root}/real2.txt", "real2.txt"),
    ("file://{root}/real2.txt", "real2.txt"),
    ("file://{root}/sub/%2e%2e/real2.txt", "real2.txt"),
    ("inner_link", "real2.txt"),
    ("inner_dir/inner.txt", "sub/inner.txt"),
    ("sub/self/sub/inner.txt", "sub/inner.txt"),
    ("dir with space/\u00fc \u65e5.txt", "dir with space/\u00fc \u65e5.txt"),
    ("back\\slash.txt", "back\\slash.txt"),
    ("~/tilde.txt", "~/tilde.txt"),
]


@pytest.mark.parametrize("template,real_name", LEGITIMATE)
def test_sandbox_legitimate_names_work(template, real_name, root, tmp_path, servers, outside):
    _sandbox_world(root, tmp_path)
    (root / "real2.txt").write_text("one\ntwo\n")
    (root / "inner_link").symlink_to("real2.txt")
    (root / "inner_dir").symlink_to("sub")
    (root / "sub" / "self").symlink_to("..")
    path = _fill(template, root, tmp_path)
    target = root / real_name
    server = servers()
    if target.exists():
        target.write_text("one\ntwo\n")
    else:
        result = server.ok("be-write", {"file": path, "content": "one\ntwo\n"})
        assert result["created"] is True
    assert server.ok("be-read", {"file": path})["content"] == "1\tone\n2\ttwo"
    result = server.ok("be-replace", {"file": path, "start": 2, "content": "TWO"})
    assert result["path"] == str(target.resolve())
    assert target.read_text() == "one\nTWO\n"
    if template == "inner_link":
        assert (root / "inner_link").is_symlink(), "the link must stay a link"
    assert server.ok("be-trx-rollback", {"file": path})["rolled_back"]
    assert target.read_text() == "one\ntwo\n"
    outside.check()


SWAP_RACE_CALLS = scaled(150, 600)


def _swap_race(path, outside_file, stop, counter):
    """Flip `path` between a regular file and a symlink to outside as fast as possible."""
    aside = str(path) + ".aside"
    while not stop.is_set():
        with contextlib.suppress(OSError):
            os.rename(path, aside)  # keep the inode: a swap back restores the very same file
            os.symlink(outside_file, path)
            counter[0] += 1
            time.sleep(0)
            os.unlink(path)
            os.rename(aside, path)


@pytest.mark.parametrize("hard_link", [False, True], ids=["plain", "hard-linked"])
def test_sandbox_symlink_swapped_between_check_and_use(hard_link, root, tmp_path, servers, outside):
    """A thread swaps the target for a symlink to outside while the server edits it (docs/behaviour.md#paths-and-the-sandbox)."""
    victim = root / "victim.txt"
    victim.write_text("v1\nv2\nv3\n")
    if hard_link:
        os.link(victim, root / "victim-alias.txt")  # edits of hard-linked files go in place
    server = servers()
    stop, counter = threading.Event(), [0]
    racer = threading.Thread(
        target=_swap_race, args=(victim, tmp_path / "outside" / "secret.txt", stop, counter)
    )
    racer.start()
    outcomes = {}
    try:
        for number in range(SWAP_RACE_CALLS):
            tool, args = [
                ("be-replace", {"file": "victim.txt", "start": 1, "content": f"r{number}", "brief": True}),
                (
                    "be-insert",
                    {"file": "victim.txt", "after_line": 0, "content": f"i{number}", "brief": True},
                ),
                ("be-write", {"file": "victim.txt", "content": f"w{number}\nv2\n", "brief": True}),
                ("be-read", {"file": "victim.txt"}),
            ][number % 4]
            result, error = server.call(tool, args)
            code = "ok" if error is None else error["code"]
            outcomes[code] = outcomes.get(code, 0) + 1
            if code == "INTERNAL":  # the realpath race of test_sandbox_realpath_race_is_not_internal
                assert "No such file or directory" in error["message"], (tool, error)
            else:
                # PERMISSION: os.access on a name that is missing for an instant says "not writable"
                assert code in (
                    "ok",
                    "SANDBOX",
                    "CONFLICT",
                    "NOT_FOUND",
                    "IO",
                    "PERMISSION",
                    "INVALID_ARGUMENT",
                ), (tool, error)
            outside.check()
    finally:
        stop.set()
        racer.join()
    outside.check()
    assert_no_secret(server)
    assert server.alive()
    print(f"\n[sandbox race] {counter[0]} swaps; outcomes {outcomes}")


def _inject(monkeypatch, be, name, action):
    """Run `action()` once, right before the module's function `name` (or `Class.method`) is next called."""
    owner = be
    if "." in name:
        class_name, name = name.split(".")
        owner = getattr(be, class_name)
    original = getattr(owner, name)
    fired = []

    def wrapper(*args, **kwargs):
        if not fired:
            fired.append(True)
            action()
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return fired


def _ctx(be, root, cache_dir):
    return be.Context(root=str(root), cache_dir=str(cache_dir), workspace=str(root), mcp=True)


@pytest.mark.skipif(FROZEN, reason="in-process race injection")
def test_sandbox_race_in_place_write_follows_symlink(root, cache_dir, tmp_path, monkeypatch, outside):
    be = _module()
    victim = root / "victim.txt"
    victim.write_text("a\nb\n")
    os.link(victim, root / "alias.txt")
    secret = tmp_path / "outside" / "secret.txt"

    def swap():
        os.rename(victim, root / "aside.txt")
        os.symlink(secret, victim)

    fired = _inject(monkeypatch, be, "_Folder.write_in_place", swap)
    ctx = _ctx(be, root, cache_dir)
    with contextlib.suppress(be.ToolError):
        be.call_tool(ctx, be.find_tool("replace"), {"file": "victim.txt", "start": 1, "content": "PWNED"})
    assert fired
    outside.check()


@pytest.mark.skipif(FROZEN, reason="in-process race injection")
def test_sandbox_race_new_file_parent_swapped(root, cache_dir, tmp_path, monkeypatch, outside):
    be = _module()
    (root / "dir").mkdir()
    out_dir = tmp_path / "outside" / "sub"

    def swap():
        os.rename(root / "dir", root / "dir-aside")
        os.symlink(out_dir, root / "dir")

    fired = _inject(monkeypatch, be, "check_writable", swap)
    ctx = _ctx(be, root, cache_dir)
    with contextlib.suppress(be.ToolError):
        be.call_tool(ctx, be.find_tool("write"), {"file": "dir/new.txt", "content": "PWNED\n"})
    assert fired
    outside.check()


@pytest.mark.skipif(FROZEN, reason="in-process race injection")
def test_sandbox_realpath_race_is_not_internal(root, cache_dir, monkeypatch):
    """What the swap race above hits now and then, made deterministic: the link vanishes mid-realpath."""
    be = _module()
    (root / "real.txt").write_text("a\n")
    (root / "link.txt").symlink_to("real.txt")

    def vanished(path, *args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr(os, "readlink", vanished)
    ctx = _ctx(be, root, cache_dir)
    with pytest.raises(be.ToolError):
        be.call_tool(ctx, be.find_tool("read"), {"file": "link.txt"})


@pytest.mark.skipif(FROZEN, reason="in-process race injection")
def test_sandbox_race_file_swapped_before_rename(root, cache_dir, tmp_path, monkeypatch, outside):
    """The plain (non-hard-linked) path: a swap right before the rename replaces the link, not its target."""
    be = _module()
    victim = root / "victim.txt"
    victim.write_text("a\nb\n")
    secret = tmp_path / "outside" / "secret.txt"
    calls = []
    original = be._still_same

    def still_same(*args):
        calls.append(1)
        answer = original(*args)
        if len(calls) == 1:  # the conflict check right before os.replace: swap after it
            os.rename(victim, root / "aside.txt")
            os.symlink(secret, victim)
        return answer

    monkeypatch.setattr(be, "_still_same", still_same)
    ctx = _ctx(be, root, cache_dir)
    with contextlib.suppress(be.ToolError):
        be.call_tool(ctx, be.find_tool("replace"), {"file": "victim.txt", "start": 1, "content": "PWNED"})
    assert calls  # the swap happened
    outside.check()


# ====================================================================================================
# 5. Stores under abuse (docs/behaviour.md#where-state-lives): damaged records are skipped, rollback stays inside the root
# ====================================================================================================


def _make_records(server, root):
    (root / "f.txt").write_text("1\n2\n3\n")
    events = [
        server.ok("be-replace", {"file": "f.txt", "start": n, "content": f"L{n}"})["event_id"] for n in (1, 2)
    ]
    chip = server.ok("be-delete", {"file": "f.txt", "start": 3})["chip"]
    return events, chip


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbage": lambda data: b"\x00\xff{{{not json",
    "list": lambda data: b"[1, 2, 3]",
    "string": lambda data: b'"snapshot"',
    "utf16": lambda data: data.decode().encode("utf-16"),
    "huge-number": lambda data: b'{"seq": ' + b"9" * 5000 + b"}",
    "nested": lambda data: b"[" * 100_000 + b"]" * 100_000,
}


def _edited(data, **changes):
    record = json.loads(data)
    for key, value in changes.items():
        if value is ...:
            record.pop(key, None)
        else:
            record[key] = value
    return json.dumps(record).encode()


SNAPSHOT_EDITS = {
    "no-seq": {"seq": ...},
    "seq-string": {"seq": "12"},
    "seq-float": {"seq": 1.5},
    "event-path": {"event_id": "../../x"},
    "event-int": {"event_id": 123456},
    "file-int": {"file": 5},
    "before-odd": {"before": "base64"},
    "no-sha": {"after_sha256": ...},
    "created-string": {"created_at": "yesterday"},
    "summary-object": {"summary": {"a": [1]}},
}
CHIP_EDITS = {
    "no-id": {"id": ...},
    "id-int": {"id": 7},
    "id-path": {"id": "../../../outside/secret"},
    "created-string": {"created_at": "yesterday"},
    "seq-string": {"seq": "12"},
    "seq-list": {"seq": [1]},
    "text-int": {"text": 12},
    "args-string": {"args": "x"},
}


def _store(cache_dir, kind):
    (directory,) = list((cache_dir / kind).iterdir())
    return directory


def _damage(victim, damage, edits, tmp_path):
    """Damage one store file the way `damage` names."""
    data = victim.read_bytes()
    if damage == "dir-not-file":
        victim.unlink()
        victim.mkdir()
    elif damage == "symlink-outside":
        victim.unlink()
        victim.symlink_to(tmp_path / "outside" / "secret.txt")
    elif damage.startswith("edit:"):
        victim.write_bytes(_edited(data, **edits[damage[5:]]))
    else:
        victim.write_bytes(DAMAGE[damage](data))


def _damages(edits, bugs):
    names = sorted(DAMAGE) + ["dir-not-file", "symlink-outside"] + [f"edit:{k}" for k in edits]
    return [pytest.param(name, marks=bugs[name]) if name in bugs else name for name in names]


@pytest.mark.parametrize("damage", _damages(SNAPSHOT_EDITS, {}))
def test_damaged_snapshot_is_skipped(damage, root, cache_dir, tmp_path, servers, outside):
    server = servers()
    events, _chip = _make_records(server, root)
    directory = _store(cache_dir, "snapshots")
    victim = sorted(directory.glob("*.json"))[0]  # the oldest: events[0]
    _damage(victim, damage, SNAPSHOT_EDITS, tmp_path)
    listed = [s["event_id"] for s in server.ok("be-trx-status", {})["snapshots"]]
    assert events[1] in listed and len(listed) >= 2  # the good ones are still there (plus the delete)
    shape_ok = damage in ("edit:created-string", "edit:summary-object", "utf16")  # still a valid record
    if not shape_ok:
        assert events[0] not in listed
        assert server.stderr_has(b"skipped"), "a damaged store file must be reported on stderr"
    # rollback of the good ones still works, and an edit after that too
    assert server.ok("be-trx-rollback", {"steps": 2})["rolled_back"]
    assert (root / "f.txt").read_text() == "L1\n2\n3\n"
    server.ok("be-insert", {"file": "f.txt", "after_line": 0, "content": "z"})
    assert server.alive()
    outside.check()
    assert_no_secret(server)


@pytest.mark.parametrize(
    "damage",
    _damages(CHIP_EDITS, {}),
)
def test_damaged_chip_is_skipped(damage, root, cache_dir, tmp_path, servers, outside):
    server = servers()
    _events, chip = _make_records(server, root)
    _result, error = server.call("be-replace", {"file": "gone.txt", "start": 1, "content": "keep me " * 10})
    good = error["chip"]
    victim = _store(cache_dir, "chips") / f"chip-{chip}.json"
    _damage(victim, damage, CHIP_EDITS, tmp_path)
    listed = server.ok("be-insert-chip", {})["chips"]
    assert good in listed
    if damage not in (
        "utf16",
        "edit:text-int",
        "edit:args-string",
        "edit:id-path",
    ):  # those still parse as chips
        assert chip not in listed
        assert server.stderr_has(b"skipped"), "a damaged store file must be reported on stderr"
    assert server.ok("be-insert-chip", {"from": f"chip://{good}"})["text"] == "keep me " * 10
    assert server.ok("be-insert-chip", {"from": f"chip://{good}", "to": "f.txt:0"})["status"] == "ok"
    for number in range(3):  # new chips can still be made (and the queue evicts) next to the damaged one
        server.call("be-replace", {"file": "gone.txt", "start": 1, "content": f"more {number} " * 10})
    assert server.ok("be-insert-chip", {"filter": "keep me"})["chips"]
    assert server.ok("be-delete", {"file": "f.txt", "start": 1})["chip"]  # a delete still saves its chip
    assert server.alive()
    outside.check()
    assert_no_secret(server)


@pytest.mark.parametrize("kind", ["snapshots", "chips"])
def test_fifo_in_store_does_not_hang(kind, root, cache_dir, servers):
    """An unreadable special file (a FIFO named like a record) must be skipped, not block the server."""
    server = servers()
    _make_records(server, root)
    name = "00000000000000000001-abcdef.json" if kind == "snapshots" else "chip-abcdef.json"
    os.mkfifo(_store(cache_dir, kind) / name)
    tool = "be-trx-status" if kind == "snapshots" else "be-insert-chip"
    try:
        result, error = server.call(tool, {}, timeout=3)
    finally:  # unblock a server stuck opening the FIFO, so teardown is quick
        with contextlib.suppress(OSError):
            os.close(os.open(_store(cache_dir, kind) / name, os.O_WRONLY | os.O_NONBLOCK))
    assert error is None, error


@pytest.mark.parametrize(
    "tamper",
    ["absolute-outside", "dotdot", "symlink-inside", "absent-outside", "relative-outside", "file-url"],
)
def test_tampered_snapshot_cannot_roll_back_outside(tamper, root, cache_dir, tmp_path, servers, outside):
    """A snapshot whose `file` names a place outside the root is refused: SANDBOX, or NOT_FOUND
    where the event is one this root does not list (a rollback chooses among the events
    trx-status lists for its root)."""
    _sandbox_world(root, tmp_path)
    server = servers()
    (root / "f.txt").write_text("a\n")
    event = server.ok("be-replace", {"file": "f.txt", "start": 1, "content": "b"})["event_id"]
    secret = tmp_path / "outside" / "secret.txt"
    target = {
        "absolute-outside": str(secret),
        "dotdot": f"{root}/../outside/secret.txt",
        "symlink-inside": str(root / "link_file"),
        "absent-outside": str(secret),
        "relative-outside": "../outside/secret.txt",
        "file-url": f"file://{secret}",
    }[tamper]
    (meta,) = _store(cache_dir, "snapshots").glob(f"*-{event}.json")
    changes = {"file": target, "after_sha256": hashlib.sha256(secret.read_bytes()).hexdigest()}
    if tamper == "absent-outside":
        changes["before"] = "absent"  # a rollback would delete the file
    meta.write_bytes(_edited(meta.read_bytes(), **changes))
    for args in (
        {},
        {"event_id": event},
        {"force": True},
        {"event_id": event, "force": True},
        {"file": target},
    ):
        result, error = server.call("be-trx-rollback", args)
        assert error is not None and error["code"] in ("SANDBOX", "NOT_FOUND"), (args, result, error)
    outside.check()
    assert_no_secret(server)


def _modes(cache_dir):
    found = {}
    for directory in store_dirs(cache_dir):
        found[str(directory)] = stat.S_IMODE(directory.stat().st_mode)
        for path in directory.iterdir():
            found[str(path)] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_store_permissions(root, cache_dir, run_be, servers):
    """Store folders are 0700 and record files 0600, whatever the umask or the edited file's mode."""
    target = root / "f.txt"
    target.write_text("1\n2\n3\n4\n")
    target.chmod(0o644)
    old_umask = os.umask(0o002)
    try:
        assert run_be("replace", "-f", "f.txt", "-s", "1", "-c", "one").returncode == 0
        assert run_be("delete", "-f", "f.txt", "-s", "2").returncode == 0
        server = servers()
        server.ok("be-write", {"file": "g.txt", "content": "new\n"})
        server.call("be-replace", {"file": "nope.txt", "start": 1, "content": "x" * 80})
    finally:
        os.umask(old_umask)
    modes = _modes(cache_dir)
    assert len([p for p in modes if p.endswith(".json")]) >= 5
    for path, mode in modes.items():
        expected = 0o700 if os.path.isdir(path) else 0o600
        assert mode == expected, f"{path}: {oct(mode)}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644, "the user's file keeps its mode"


def _fsize_limit(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


@pytest.mark.parametrize("op", ["write-existing", "write-new", "replace", "insert", "delete"])
def test_full_disk_cli_is_io_error(op, root, cache_dir, be_command, be_env, tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: error IO, exit 1, target untouched, no temp file left."""
    target = root / "f.txt"
    original = b"".join(b"line %06d\n" % n for n in range(60_000))  # ~720 kB
    target.write_bytes(original)
    content = tmp_path / "work" / "content.txt"
    content.parent.mkdir()
    content.write_bytes(original + original)  # twice the limit below
    args = {
        "write-existing": ["write", "-f", "f.txt", "--content-file", str(content)],
        "write-new": ["write", "-f", "new.txt", "--content-file", str(content)],
        "replace": ["replace", "-f", "f.txt", "-s", "10", "--content-file", str(content)],
        "insert": ["insert", "-f", "f.txt", "--after-line", "5", "--content-file", str(content)],
        "delete": ["delete", "-f", "f.txt", "-s", "1"],
    }[op]
    limit = len(original) - 1000 if op == "delete" else len(original) + 1000
    if op == "delete":
        # a delete shrinks the file; the limit still stops the temp copy before it is complete
        limit = len(original) // 2
    done = run_cli(
        *args, "-o", "json", cwd=root, env=be_env, command=be_command, preexec_fn=_fsize_limit(limit)
    )
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert json.loads(done.stdout)["error"]["code"] == "IO"
    assert target.read_bytes() == original
    assert target.stat().st_nlink == 1
    assert not (root / "new.txt").exists()
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"], "a temp file was left behind"
    assert_stores_load(cache_dir)
    snapshots = list((cache_dir / "snapshots").rglob("*.json")) if (cache_dir / "snapshots").exists() else []
    assert not snapshots, "a failed edit left a snapshot"


def test_full_disk_server_keeps_serving(root, be_env, servers):
    target = root / "f.txt"
    original = b"x\n" * 50_000
    target.write_bytes(original)
    server = servers(preexec_fn=_fsize_limit(150_000))
    _result, error = server.call("be-write", {"file": "f.txt", "content": "y\n" * 100_000})
    assert error["code"] == "IO"
    _result, error = server.call("be-write", {"file": "new.txt", "content": "y\n" * 100_000})
    assert error["code"] == "IO"
    assert target.read_bytes() == original and not (root / "new.txt").exists()
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]
    assert server.ok("be-replace", {"file": "f.txt", "start": 1, "content": "small"})["total"] == 50_000
    assert server.alive()


# ====================================================================================================
# 6. Huge inputs (docs/behaviour.md#json-rpc-transport, docs/behaviour.md#limits); the 1 GB edit and its peak memory are measured in bench/bench_huge.py
# ====================================================================================================


HUGE_LINE_MB = scaled(20, 50)  # a request line of this many MB (both are far past any buffer size)


def _address_space(megabytes):
    """A preexec_fn that limits the child's address space (memory) to `megabytes` MiB."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return limit


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_a_request_line_larger_than_memory_is_answered_and_the_server_goes_on(root, servers):
    """Under a 160 MiB memory limit, a 200 MB request line: the server died with a MemoryError
    traceback, ending the session. It now reads the line to its end, drops it, answers an error
    (id null: the line was never whole, so its id is unknown) and serves the next request."""
    server = servers(preexec_fn=_address_space(160))
    server.ok("be-write", {"file": "small.txt", "content": "ok"})
    head = b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"be-write","arguments":'
    server.send_raw(head + b'{"file":"big.txt","content":"' + b"x" * (200 << 20) + b'"}}}\n')
    reply = server.recv(120)
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "did not fit in this server's memory" in reply["error"]["message"]
    assert server.ok("be-read", {"file": "small.txt"})["content"] == "1\tok"
    assert not (root / "big.txt").exists() and b"Traceback" not in server.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
@pytest.mark.parametrize("megabytes", [180, 210])
def test_a_line_read_whole_but_too_large_to_join_never_costs_the_next_request(root, servers, megabytes):
    """Found by an attack: a 100 MB line under a memory limit between one and two times its size
    was read to its end, newline included, before joining it failed; the skip to the end of that
    line then ate the next request, which got no answer at all (a be-write was never written, and
    nothing said so). The line is read in pieces: one whose last piece ended it is not skipped."""
    server = servers(preexec_fn=_address_space(megabytes))
    head = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"'
    server.send_raw(head + b"a" * (100 << 20) + b'"}}\n')
    server.send_raw(b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
    replies = [server.recv(120), server.recv(60)]
    assert [reply["id"] for reply in replies] == [None, 8], replies
    assert "did not fit in this server's memory" in replies[0]["error"]["message"], replies


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_a_long_line_that_is_no_json_and_cannot_be_kept_is_answered_and_the_server_goes_on(root, servers):
    """Found by an attack: under a 488 MiB limit, a 100 MB line that is no JSON was read, then
    keeping it as a chip ran out of memory outside every handler: the server died, and the request
    after it was never answered. It is now -32700 without a chip, and the server goes on."""
    server = servers(preexec_fn=_address_space(488))
    server.send_raw(b'{"a":"' + b"ab" * (50 << 20) + b"\n")
    server.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    replies = [server.recv(120), server.recv(60)]
    assert [reply["id"] for reply in replies] == [None, 2], replies
    assert replies[0]["error"]["code"] == -32700 and b"Traceback" not in server.stderr, replies


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_a_failed_call_whose_arguments_are_too_large_to_keep_says_its_own_error(root, servers):
    """Found by an attack: be-replace of a missing file with 100 MB of content, under a 700 MiB
    limit: keeping the arguments as a chip ran out of memory, and the answer was -32603 "internal
    error: MemoryError" instead of the call's NOT_FOUND."""
    server = servers(preexec_fn=_address_space(700))
    arguments = {"file": "missing.txt", "start": 1, "content": "x" * (100 << 20)}
    result = server.tool_result("be-replace", arguments, timeout=120)
    assert result.get("isError") and result["structuredContent"]["error"]["code"] == "NOT_FOUND", str(result)[
        :500
    ]
    assert server.alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_a_reply_too_large_to_send_is_too_large_and_the_server_goes_on(root, be_env):
    """Found by an attack: a be-read of a 13 MB file (max_lines 0) under a memory limit just below
    the one it needs: the call succeeded, then encoding its reply ran out of memory outside every
    handler, and the server died (the ping after it was never answered). Found by bisection, the
    limits just below the one that succeeds now answer TOO_LARGE for the call, then the ping."""
    (root / "r.txt").write_text("".join(f"line number {n} with some text\n" for n in range(400_000)))
    requests = b"".join(
        json.dumps(request).encode() + b"\n"
        for request in (
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "be-read", "arguments": {"file": "r.txt", "max_lines": 0}}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        )
    )  # fmt: skip

    def outcome(megabytes):
        done = subprocess.run(
            be_command_prefix(), input=requests, cwd=root, env=be_env, capture_output=True, timeout=120,
            preexec_fn=_address_space(megabytes),
        )  # fmt: skip
        replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        assert [reply["id"] for reply in replies] == [1, 2], (megabytes, done.stderr[-1500:])
        result = replies[0]["result"]
        return result["structuredContent"]["error"]["message"] if result.get("isError") else "ok"

    low, high = 60, 600  # (the smallest limit that reads it whole lies between)
    assert outcome(high) == "ok"
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if outcome(middle) == "ok" else (middle, high)
    said = {outcome(megabytes) for megabytes in range(high - scaled(6, 16), high)}
    assert said <= {
        "ok",
        "be-read ran out of memory",
        "the result of this call did not fit in memory to be sent",
    }, said


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_cli_content_larger_than_memory_is_too_large_not_a_traceback(root, be_env):
    done = run_cli(
        "write", "-f", "big.txt", "--content-file", "-", "-o", "json",
        input=b"x" * (200 << 20), cwd=root, env=be_env, preexec_fn=_address_space(160),
    )  # fmt: skip
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and answer["error"]["code"] == "TOO_LARGE", (answer, done.stderr[-2000:])
    assert answer["error"]["message"] == "--content-file - does not fit in memory"
    assert not (root / "big.txt").exists() and b"Traceback" not in done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the heap on Linux")
def test_an_edit_short_of_memory_at_any_point_is_too_large_and_writes_nothing(root, be_env):
    """A replace by `old` of a 20 MB file under memory limits from 40 to 120 MiB: each run either
    succeeds or is TOO_LARGE with the file untouched (a MemoryError in the middle of the call was
    INTERNAL, "a bug in better-edit-tools"), and no temporary file stays beside it."""
    line = "0123456789abcdef" * 63 + "\n"
    body = "first\n" + line * (20 * 1024)
    (root / "big.txt").write_text(body)
    outcomes = []
    for megabytes in range(40, 140, 20):
        first = body[: body.index("\n")]
        done = run_cli(
            "replace", "-f", "big.txt", "--old", first, "-c", f"line {megabytes}", "-o", "json",
            cwd=root, env=be_env, preexec_fn=_address_space(megabytes),
        )  # fmt: skip
        answer = json.loads(done.stdout)
        if done.returncode == 0:
            outcomes.append("ok")
            body = f"line {megabytes}" + body[len(first) :]
        else:
            outcomes.append(answer["error"]["code"])
            assert answer["error"]["code"] == "TOO_LARGE", (megabytes, answer, done.stderr[-2000:])
        same = (root / "big.txt").read_text() == body  # (a bool: pytest would diff 20 MB)
        assert same, (megabytes, outcomes)
        assert sorted(os.listdir(root)) == ["big.txt"], os.listdir(root)
    assert "TOO_LARGE" in outcomes and "ok" in outcomes, outcomes


def test_fifty_megabyte_jsonrpc_line(root, servers):
    """A 50 MB single-line request (be-write) works, and so does a 50 MB line that is not JSON
    (20 MB in the everyday run)."""
    server = servers()
    line = "0123456789abcdef" * 63 + "\n"  # 1 KiB lines
    content = line * (HUGE_LINE_MB * 1024)
    result = server.ok("be-write", {"file": "huge.txt", "content": content, "brief": True}, timeout=120)
    assert result["bytes"] == len(content) and result["lines"] == HUGE_LINE_MB * 1024
    assert (root / "huge.txt").read_bytes() == content.encode()
    result = server.ok("be-read", {"file": "huge.txt", "start": 10_000, "end": 10_001})
    assert (
        result["content"] == f"10000\t{line[:-1]}\n10001\t{line[:-1]}"
        and result["total"] == HUGE_LINE_MB * 1024
    )
    server.send_raw(b"{" + b"z" * (HUGE_LINE_MB * 1024 * 1024) + b"\n")
    reply = server.recv(120)
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    assert server.alive()


SYSTEM_PYTHON = "/usr/bin/python3"  # (one another user can run: the test interpreter may sit under /root)


def folder_for_another_user(base, name, mode, uid):
    """BASE/NAME with `mode`, and BASE/cache owned by `uid`, the user the test then runs as."""
    os.chmod(base, 0o755)
    folder, cache = Path(base) / name, Path(base) / "cache"
    folder.mkdir(mode=0o777)
    os.chmod(folder, mode)
    cache.mkdir()
    os.chown(cache, uid, uid)
    return folder, cache


AS_ANOTHER_USER = pytest.mark.skipif(
    os.name != "posix"
    or os.geteuid() != 0
    or not os.access(SYSTEM_PYTHON, os.X_OK)
    or bool(os.environ.get("BE_EXE")),
    reason="needs root (to run as another user) and a system Python",
)


@AS_ANOTHER_USER
def test_another_users_file_in_a_sticky_folder_is_written_in_place_leaving_no_name(tmp_path):
    """Found by an attack: as `nobody`, a root-owned 0666 file in a 1777 folder (as /tmp). The old
    file got its second name, then the rename over it failed (EPERM: the sticky bit), and that
    name could not be removed either: PERMISSION, a stray `.f.txt.be-...old`, and every later
    edit took the file for hard-linked. Such a file is written in place, with a warning."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as base:
        folder, cache = folder_for_another_user(base, "sticky", 0o1777, 65534)
        (folder / "f.txt").write_text("a\nb\n")
        os.chmod(folder / "f.txt", 0o666)

        def as_nobody():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)

        env = {"PATH": "/usr/bin:/bin", "BETTER_EDIT_CACHE_DIR": str(cache), "LANG": "C.UTF-8"}
        for line, text in (("1", "X"), ("2", "Y")):
            done = subprocess.run(
                [SYSTEM_PYTHON, "-S", str(REPO / "better_edit.py"), "replace", "-f", "f.txt", "-s", line, "-c", text, "-o", "json"],
                cwd=folder, env=env, preexec_fn=as_nobody, capture_output=True, timeout=60,
            )  # fmt: skip
            answer = json.loads(done.stdout)
            assert done.returncode == 0, answer
            assert any("sticky bit" in w for w in answer["warnings"]), answer
            assert sorted(p.name for p in folder.iterdir()) == ["f.txt"], line
        assert (folder / "f.txt").read_text() == "X\nY\n" and os.stat(folder / "f.txt").st_nlink == 1
        # (found by an attack: its deletion made the kept name first, then failed, and the name stayed)
        done = subprocess.run(
            [SYSTEM_PYTHON, "-S", str(REPO / "better_edit.py"), "patch", "-o", "json"],
            input=b"--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-X\n-Y\n",
            cwd=folder, env=env, preexec_fn=as_nobody, capture_output=True, timeout=60,
        )  # fmt: skip
        error = json.loads(done.stdout)["error"]
        assert done.returncode == 1 and error["code"] == "PERMISSION" and "sticky bit" in error["hint"], error
        assert (
            sorted(p.name for p in folder.iterdir()) == ["f.txt"] and os.stat(folder / "f.txt").st_nlink == 1
        )


@AS_ANOTHER_USER
def test_another_users_group_writable_file_keeps_its_owner_and_group(tmp_path):
    """Found by an attack: uid 1002, in group 1500, edited f.txt (1001:1500, 0660) in a shared
    folder: the new file replaced the old one by a rename and was 1002:1002, and uid 1001 could no
    longer read its own file; no warning. It is now written in place and keeps 1001:1500."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as base:
        folder, cache = folder_for_another_user(base, "proj", 0o777, 1002)
        (folder / "f.txt").write_text("owner text\n")
        os.chown(folder / "f.txt", 1001, 1500)
        os.chmod(folder / "f.txt", 0o660)

        def as_group_member():
            os.setgroups([1500])
            os.setgid(1002)
            os.setuid(1002)

        env = {"PATH": "/usr/bin:/bin", "BETTER_EDIT_CACHE_DIR": str(cache), "LANG": "C.UTF-8"}
        done = subprocess.run(
            [SYSTEM_PYTHON, "-S", str(REPO / "better_edit.py"), "replace", "-f", "f.txt", "-s", "1", "-c", "edited", "-o", "json"],
            cwd=folder, env=env, preexec_fn=as_group_member, capture_output=True, timeout=60,
        )  # fmt: skip
        answer = json.loads(done.stdout)
        assert done.returncode == 0, answer
        assert any("belongs to another user (uid 1001)" in w for w in answer["warnings"]), answer
        st = os.stat(folder / "f.txt")
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1001, 1500, 0o660)
        assert (folder / "f.txt").read_text() == "edited\n"
        assert sorted(p.name for p in folder.iterdir()) == ["f.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="root passes the access checks that refuse others")
def test_a_hard_linked_file_in_a_read_only_folder_is_not_deleted(root, be_env):
    """Found by an attack (as root): a patch deleting a file of a folder with no write bit was
    refused, but the same deletion of a hard-linked file went through (a file with two names is
    written in place, which needs no folder; a deletion always does), and its rollback was then
    refused: it could not be undone. Both are refused now."""
    (root / "ro").mkdir()
    (root / "ro" / "x").write_text("x1\n")
    os.link(root / "ro" / "x", root / "x2")
    os.chmod(root / "ro", 0o555)
    try:
        done = run_cli(
            "patch",
            "-o",
            "json",
            cwd=root,
            env=be_env,
            input=b"--- a/ro/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x1\n",
        )
        error = json.loads(done.stdout)["error"]
        assert (
            done.returncode == 1 and error["code"] == "PERMISSION" and "folder has no write" in error["hint"]
        ), error
        assert (root / "ro" / "x").read_text() == "x1\n"
    finally:
        os.chmod(root / "ro", 0o755)


@pytest.mark.parametrize("folder", ["snapshots", "chips", "locks", "journal", "scans", "kept"])
def test_no_call_writes_into_the_tools_own_state(folder, root, be_env):
    """A server started in the home folder has the cache inside its root: a write over a snapshot,
    a commit record or the old text an undo kept (BASE/kept, found missing by an attack) would take
    away what undoes an edit. Each is SANDBOX, the file untouched; reading it is allowed."""
    base = root / ".cache" / "be"
    kept = base / folder / "0123456789abcdef" / "app.py.123-abcd1234-0.old"
    kept.parent.mkdir(parents=True)
    kept.write_text("old text kept after an undo\n")
    env = dict(be_env, BETTER_EDIT_CACHE_DIR=str(base))
    rel = str(kept.relative_to(root))
    done = run_cli("--root", ".", "write", "-f", rel, "-c", "overwritten", "-o", "json", cwd=root, env=env)
    assert done.returncode != 0 and json.loads(done.stdout)["error"]["code"] == "SANDBOX", done.stdout
    assert kept.read_text() == "old text kept after an undo\n"
    read = run_cli("--root", ".", "read", "-f", rel, cwd=root, env=env)
    assert read.returncode == 0 and b"old text kept" in read.stdout


def test_a_temp_holding_new_text_is_ours_alone_until_it_has_the_files_mode(root, be_env):
    """Found by an attack: the temporary beside a 0600 file was made with the umask's 0644 and only
    given the file's mode after the new text was in it; another user who opened it meanwhile read
    the new secret through the descriptor it kept. At every write step of the edit, a temporary
    that exists has no group or other bits."""
    (root / "secrets.env").write_text("API_KEY=old\n")
    os.chmod(root / "secrets.env", 0o600)
    proc = stopping(
        root, be_env, "write:STOP", "replace", "-f", "secrets.env", "--old", "old", "-c", "new-secret"
    )
    seen = []
    while True:
        _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            break
        seen += [stat.S_IMODE(p.lstat().st_mode) for p in root.glob(".secrets.env.be-*.tmp")]
        os.kill(proc.pid, signal.SIGCONT)
    assert os.WEXITSTATUS(status) == 0
    assert seen and all(mode & 0o077 == 0 for mode in seen), [oct(m) for m in seen]
    assert (root / "secrets.env").read_text() == "API_KEY=new-secret\n"
    assert stat.S_IMODE((root / "secrets.env").stat().st_mode) == 0o600


def stopping(root, be_env, fault, *args, input=None):
    """The CLI started with BETTER_EDIT_FAULT=`fault` (it stops itself there: os.waitpid with
    WUNTRACED sees it, SIGCONT resumes it)."""
    proc = subprocess.Popen(
        [*be_command_prefix(), *args],
        cwd=root,
        env=dict(be_env, BETTER_EDIT_FAULT=fault),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if input is not None:
        proc.stdin.write(input)
    proc.stdin.close()
    return proc


def test_a_patch_deletion_of_a_name_that_was_a_link_when_walked_deletes_nothing(root, be_env):
    """Found by an attack: a patch deleting f.txt, a symlink to precious.txt, checked whether f.txt
    was a link by its path, after the walk had followed it; the link replaced by a plain file
    meanwhile (here while the call held its locks), the call deleted precious.txt, the link's
    target, and f.txt stayed. The walk now says whether it followed a link: INVALID_ARGUMENT, and
    both files stay."""
    (root / "precious.txt").write_text("line1\nline2\n")
    (root / "f.txt").symlink_to("precious.txt")
    patch = b"--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-line1\n-line2\n"
    proc = stopping(root, be_env, "locked:STOP", "patch", "-o", "json", input=patch)
    _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), proc.stderr.read()
    (root / "f.txt").unlink()
    (root / "f.txt").write_text("line1\nline2\n")
    os.kill(proc.pid, signal.SIGCONT)
    out = proc.stdout.read()
    proc.wait(timeout=30)
    assert proc.returncode != 0 and json.loads(out)["error"]["code"] == "INVALID_ARGUMENT", out
    assert (root / "precious.txt").read_text() == "line1\nline2\n"
    assert (root / "f.txt").read_text() == "line1\nline2\n"


def test_a_patch_whose_folder_is_swapped_for_a_link_after_its_check_writes_nothing_outside(tmp_path, be_env):
    """Found by an attack: without --root, a patch's paths were checked to stay in the current
    folder (realpath), and then walked again with nothing to check: a folder swapped for a link to
    outside in between sent the write outside, with status ok. The walk itself is now checked."""
    ws, out = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    out.mkdir()
    (ws / "sub" / "x.txt").write_text("one\n")
    (out / "x.txt").write_text("one\n")
    patch = b"--- a/sub/x.txt\n+++ b/sub/x.txt\n@@ -1 +1 @@\n-one\n+PATCHED\n"
    proc = stopping(ws, be_env, "items:STOP", "patch", "-o", "json", input=patch)
    _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), proc.stderr.read()
    (ws / "sub").rename(ws / "sub.moved")
    (ws / "sub").symlink_to("../outside")
    os.kill(proc.pid, signal.SIGCONT)
    answer = proc.stdout.read()
    proc.wait(timeout=30)
    assert proc.returncode != 0 and b'"SANDBOX"' in answer, answer
    assert (out / "x.txt").read_text() == "one\n"
    assert (ws / "sub.moved" / "x.txt").read_text() == "one\n"


def test_a_hard_link_made_while_an_edit_runs_keeps_its_mode_and_leaves_the_snapshot_alone(
    root, cache_dir, be_env
):
    """Found by an attack: a backup's hard link to a.txt (`cp -al`, `rsync --link-dest`) made while
    an edit of a.txt ran kept the old inode, which was also the snapshot's .bin: the edit made it
    0600, and a later edit of the backup, a hard-linked file written in place, wrote into the
    snapshot, so the first edit could no longer be rolled back. The backup now keeps its mode and
    its old text, and the snapshot is a file of its own."""
    (root / "a.txt").write_text("old\n")
    os.chmod(root / "a.txt", 0o644)
    proc = stopping(
        root, be_env, "1:STOP", "replace", "-f", "a.txt", "--old", "old", "-c", "new", "-o", "json"
    )
    _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), proc.stderr.read()
    os.link(root / "a.txt", root / "backup.txt")
    os.kill(proc.pid, signal.SIGCONT)
    answer = json.loads(proc.stdout.read())
    proc.wait(timeout=30)
    assert proc.returncode == 0, answer
    assert (root / "a.txt").read_text() == "new\n" and (root / "backup.txt").read_text() == "old\n"
    assert stat.S_IMODE((root / "backup.txt").stat().st_mode) == 0o644
    (snapshot,) = cache_dir.glob(f"snapshots/*/*-{answer['event_id']}.bin")
    assert snapshot.stat().st_nlink == 1 and stat.S_IMODE(snapshot.stat().st_mode) == 0o600
    backup = run_cli(
        "replace", "-f", "backup.txt", "--old", "old", "-c", "backup edited", cwd=root, env=be_env
    )
    assert backup.returncode == 0 and b"hard link" not in backup.stderr, backup.stderr
    server = Server(root, be_env)
    try:
        server.initialize()
        server.ok("be-trx-rollback", {"event_id": answer["event_id"]})
    finally:
        server.close()
    assert (root / "a.txt").read_text() == "old\n"


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0, reason="needs root to give a file to another user"
)
def test_a_rollback_that_makes_a_deleted_file_again_gives_it_its_owner(root, be_env):
    """Found by an attack (as root): a patch deleted notes.txt (uid 1001, mode 0600), and its
    rollback made it again 0600 but root's: its owner could no longer read it. The snapshot keeps
    the owner and group, and the rollback gives them back where it may."""
    path = root / "notes.txt"
    path.write_text("private\n")
    os.chown(path, 1001, 1001)
    os.chmod(path, 0o600)
    done = run_cli(
        "patch",
        "-o",
        "json",
        input=b"--- a/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-private\n",
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0 and not path.exists(), done.stdout
    server = Server(root, be_env)
    try:
        server.initialize()
        server.ok("be-trx-rollback", {})
    finally:
        server.close()
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1001, 1001, 0o600)
    assert path.read_text() == "private\n"


def test_a_file_deeper_than_the_systems_path_limit_can_be_edited(tmp_path, be_env):
    """Found by an attack: a file whose whole path is longer than the 4096 bytes a path may have
    (a short argument in a deep tree under --root) is walked to by folder handles, but the commit
    then fsynced its folder by path: every edit failed, saying a name was longer than 255 bytes.
    The folder is now fsynced through its handle."""
    name = "d" * 200  # (10 folders of 200 bytes in the root's path, 11 in the argument's: 4,300 in all)
    root = tmp_path.joinpath(*[name] * 10)
    root.mkdir(parents=True)
    fd = os.open(root, os.O_RDONLY)
    for _ in range(11):
        os.mkdir(name, dir_fd=fd)
        fd, old = os.open(name, os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(os.open("x.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    deep = "/".join([name] * 11)
    for args in (
        ["write", "-f", deep + "/new/y.txt", "-c", "hello"],
        ["write", "-f", deep + "/x.txt", "-c", "a"],
    ):
        done = run_cli("--root", str(root), *args, cwd=root, env=be_env)
        assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(fd)) == ["new", "x.txt"]
    with open(os.open("x.txt", os.O_RDONLY, dir_fd=fd)) as handle:
        assert handle.read() == "a"
    os.close(fd)


def test_a_hard_linked_file_under_a_root_says_its_other_names_may_lie_outside(tmp_path, be_env):
    """Found by an attack: under --root, a file hard-linked to one outside the root (pnpm's store,
    uv's cache) is written in place, as every hard-linked file is (its links stay shared), so the
    edit reaches the name outside too; the warning did not say so. It does now."""
    project, store = tmp_path / "project", tmp_path / "store"
    (project / "node_modules" / "pkg").mkdir(parents=True)
    store.mkdir()
    (store / "index.js").write_text("module.exports = 1;\n")
    os.link(store / "index.js", project / "node_modules" / "pkg" / "index.js")
    done = run_cli(
        "--root",
        str(project),
        "replace",
        "-f",
        "node_modules/pkg/index.js",
        "-s",
        "1",
        "-c",
        "module.exports = 2;",
        "-o",
        "json",
        cwd=project,
        env=be_env,
    )
    answer = json.loads(done.stdout)
    assert done.returncode == 0, answer
    assert any("may lie outside the root" in w for w in answer["warnings"]), answer
    assert (store / "index.js").read_text() == "module.exports = 2;\n"  # (shared, as the warning says)


def test_a_streamed_read_of_a_file_written_between_its_passes_is_a_conflict(root, be_env):
    """Found by an attack: a file over 64 MiB is read in two passes (count, then cut); another
    program that rewrote part of it in between, with bytes that are not UTF-8, made the read an
    INTERNAL error ("a bug"). The file is looked at again after the second pass: CONFLICT."""
    path = root / "log.txt"
    path.write_bytes(b"a line of a large log file\n" * (65 * 1024 * 1024 // 27 + 1))
    proc = stopping(
        root, be_env, "streamed:STOP", "read", "-f", "log.txt", "-s", "1", "-e", "3", "-o", "json"
    )
    _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), proc.stderr.read()
    with open(path, "r+b") as other:  # (another program, writing in place between the passes)
        other.write(b"\xff\xfe" + b"x" * 10)
    os.kill(proc.pid, signal.SIGCONT)
    answer = json.loads(proc.stdout.read())
    proc.wait(timeout=60)
    assert proc.returncode == 1 and answer["error"]["code"] == "CONFLICT", answer
    path.unlink()


@pytest.mark.skipif(FROZEN, reason="SIGSTOP reaches the frozen program's child, not the process we wait on")
def test_a_folder_swapped_while_a_call_waits_for_its_lock_is_conflict_not_an_edit_elsewhere(root, be_env):
    """Found by the races attack: a call found its file's folder, then waited for the lock another
    call held; meanwhile a checkout moved the folder away and put a new one at its path. The edit
    went into the moved folder (outside the root, when moved there), and the result said ok for
    the path, which was untouched. Such a call is CONFLICT now, nothing written."""
    folder = root / "proj" / "src"
    folder.mkdir(parents=True)
    (folder / "f.txt").write_text("a\nb\nc\n")
    holder = subprocess.Popen(
        [*be_command_prefix(), "insert", "-f", "proj/src/f.txt", "--after-line", "0", "-c", "H", "-o", "json"],
        cwd=root, env=dict(be_env, BETTER_EDIT_FAULT="locked:STOP"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    _pid, status = os.waitpid(holder.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), status
    waiter = subprocess.Popen(
        [*be_command_prefix(), "replace", "-f", "proj/src/f.txt", "--old", "b", "-c", "B", "-o", "json"],
        cwd=root, env=be_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    time.sleep(1.5)  # (it found the folder and waits for the lock)
    os.rename(folder, root / "proj" / "src.old")
    folder.mkdir()
    (folder / "f.txt").write_text("a\nb\nc\n")
    os.kill(holder.pid, signal.SIGCONT)
    holder.communicate(timeout=60)
    out, err = waiter.communicate(timeout=60)
    answer = json.loads(out)
    assert answer.get("error", {}).get("code") == "CONFLICT", (answer, err)
    assert "folder of proj/src/f.txt was moved or replaced" in answer["error"]["message"], answer
    assert "B" not in (root / "proj" / "src.old" / "f.txt").read_text().split("\n")
    assert (folder / "f.txt").read_text() == "a\nb\nc\n"


def test_a_file_moved_away_for_a_moment_is_never_called_immutable(root, be_env):
    """Found by the races attack: a file another program renamed away and back (an editor's save, a
    sync tool) was refused as PERMISSION "the system refuses writes although the permission bits
    allow them ... immutable or append-only" in about one edit of ten: the check of its write
    access met the name gone. Such an edit is CONFLICT or NOT_FOUND now; none is PERMISSION."""
    (root / "a.txt").write_text("L0\n")
    stop = threading.Event()

    def move_around():
        while not stop.is_set():
            os.rename(root / "a.txt", root / "b.txt")
            time.sleep(0.0002)
            os.rename(root / "b.txt", root / "a.txt")
            time.sleep(0.0005)

    mover = threading.Thread(target=move_around)
    server = Server(cwd=root, env=be_env)
    codes = {}
    mover.start()
    try:
        for n in range(scaled(150, 600)):
            result = server.tool_result("be-insert", {"file": "a.txt", "after_line": -1, "content": f"i{n}"})
            code = result["structuredContent"].get("error", {}).get("code", "ok")
            codes[code] = codes.get(code, 0) + 1
    finally:
        stop.set()
        mover.join()
        server.close()
    assert set(codes) <= {"ok", "CONFLICT", "NOT_FOUND"}, codes
