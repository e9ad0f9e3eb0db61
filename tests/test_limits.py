"""Edges found from outside on 0.1 (issue 10): strict JSON, exit status, signals, encodings of
names, huge and odd files, line-argument codes, store limits, the portable (Windows) code paths.

Each test failed on 0.1. The CLI and the server run as real subprocesses (`BE_EXE` runs them
against the frozen executable); BE_STRESS=1 runs the stress sizes in full (`harness.scaled`).
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest
from harness import FROZEN, REPO, Server, be_command_prefix, run_cli, run_json, scaled, strict_loads

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals, FIFOs and file names")


@pytest.fixture
def server(be_env, root):
    srv = Server(root, be_env)
    yield srv
    srv.close()


# ---- viewed_code_id of an empty range (docs/behaviour.md#viewed_code_id) -----------------------------------


def test_view_of_an_empty_file_goes_stale_when_lines_appear(be_env, root):
    (root / "e.txt").write_bytes(b"")
    _done, view = run_json("read", "-f", "e.txt", cwd=root, env=be_env)
    token = view["viewed_code_id"]
    (root / "e.txt").write_bytes(b"someone else wrote this\n")
    done, result = run_json(
        "insert",
        "-f",
        "e.txt",
        "--after-line",
        "0",
        "-c",
        "x",
        "--viewed-code-id",
        token,
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 1, result
    assert result["error"]["code"] == "STALE_VIEW"
    assert (root / "e.txt").read_bytes() == b"someone else wrote this\n"


# ---- strict JSON in and out (docs/behaviour.md#json-rpc-transport) -----------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused_and_never_echoed(server, root, cache_dir, number):
    (root / "f.txt").write_text("a\nb\n")
    long_text = "x" * 80  # long enough for the arguments to be kept as a chip
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"be-replace","arguments":'
        f'{{"file":"f.txt","start":{number},"content":"{long_text}"}}}}}}'
    )
    server.send_raw(line.encode())
    reply = server.recv()
    raw = server.stdout_lines[-1]
    strict_loads(raw.decode("utf-8"))  # the whole reply is RFC 8259 JSON
    assert reply["result"]["isError"] is True
    error = reply["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_ARGUMENT", error
    chips = list((cache_dir / "chips").rglob("chip-*.json"))
    assert chips, "the failed call's arguments were not kept"
    for chip in chips:
        record = strict_loads(chip.read_text(encoding="utf-8"))
        assert record["args"]["start"] in ("NaN", "Infinity", "-Infinity"), record["args"]
    assert (root / "f.txt").read_text() == "a\nb\n"


def test_non_utf8_file_name_is_echoed_as_replacement_characters(run_be, root):
    name = b"caf\xe9.txt"
    with open(os.path.join(os.fsencode(root), name), "wb") as handle:
        handle.write(b"one\n")
    done = run_be("read", "-f", os.fsdecode(name), "-o", "json")
    assert done.returncode == 0, done.stderr
    result = strict_loads(done.stdout.decode("utf-8"))  # valid UTF-8, valid JSON
    assert "caf\ufffd.txt" in result["path"]
    assert result["content"] == "1\tone"


def test_lone_surrogate_and_nul_in_names_are_clear_errors(server, root):
    _result, error = server.call("be-read", {"file": "bad\ud800.txt"})
    assert error["code"] == "INVALID_ARGUMENT", error
    _result, error = server.call("be-read", {"file": "bad\u0000.txt"})
    assert error["code"] == "SANDBOX"
    assert not error["hint"].endswith(".hint"), error  # a message key shown raw
    for raw in server.stdout_lines:
        strict_loads(raw.decode("utf-8"))


# ---- exit status with a closed stdout or a broken pipe (docs/cli.md) ---------------------------------------


def test_an_applied_edit_exits_0_when_stdout_is_closed(be_env, root):
    (root / "f.txt").write_text("a\n")
    done = subprocess.run(
        [*be_command_prefix(), "insert", "-f", "f.txt", "--after-line", "-1", "-c", "once"],
        cwd=root,
        env=be_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert (root / "f.txt").read_text() == "a\nonce\n"


def test_read_into_a_closed_pipe_ends_quietly_by_sigpipe(be_env, root):
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(200_000)))
    reader = subprocess.Popen(
        [*be_command_prefix(), "read", "-f", "big.txt"],
        cwd=root,
        env=be_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    reader.stdout.read(100)
    reader.stdout.close()  # what `| head -1` does
    stderr = reader.stderr.read()
    status = reader.wait(30)
    assert status in (-signal.SIGPIPE, 128 + signal.SIGPIPE), (status, stderr)
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr


# ---- signals leave no temp file (docs/behaviour.md#writing-safely) -----------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_a_large_write_leaves_no_temp_file(be_env, root, tmp_path, signum):
    content = tmp_path / "content.txt"
    content.write_bytes(b"y" * (200 << 20))  # 200 MiB: the write takes long enough to be caught
    (root / "f.txt").write_text("old\n")
    writer = subprocess.Popen(
        [*be_command_prefix(), "write", "-f", "f.txt", "--content-file", str(content), "--brief"],
        cwd=root,
        env=be_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        restore_signals=True,
        start_new_session=True,
        # a suite started in the background passes SIGINT on ignored (a new session does not undo
        # that), and the program rightly keeps an ignored SIGINT ignored: give the child the default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    caught = False
    while time.monotonic() < deadline and writer.poll() is None:
        if any(name.startswith(".f.txt.be-") for name in os.listdir(root)):
            writer.send_signal(signum)
            caught = True
            break
        time.sleep(0.001)
    status = writer.wait(60)
    leftovers = [name for name in os.listdir(root) if name != "f.txt"]
    assert leftovers == [], leftovers
    if caught:
        assert status in (-signum, 128 + signum), (status, writer.stderr.read())
        assert (root / "f.txt").read_bytes() in (b"old\n", content.read_bytes())
    else:
        pytest.skip("the write finished before the temp file was seen")


# ---- whole-file reads before any check (docs/behaviour.md#limits) ------------------------------------------


def _child_peak_mib(command, **kwargs):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    out, err = proc.communicate(timeout=120)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc.returncode, out, err, usage.ru_maxrss / 1024


def test_a_huge_binary_file_is_refused_from_its_first_bytes(be_env, root, tmp_path):
    sparse = root / "disk.img"
    with open(sparse, "wb") as handle:
        handle.write(b"\0")
        handle.truncate(2 << 30)  # 2 GiB, sparse: costs no disk
    # measured in a fresh child of a fresh process, so the peak is the tool's own
    probe = (
        "import resource, subprocess, sys; "
        "p = subprocess.run(sys.argv[1:], capture_output=True); "
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.stdout.write(p.stdout.decode())"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", probe, *be_command_prefix(), "read", "-f", "disk.img", "-o", "json"],
        cwd=root,
        env=be_env,
        capture_output=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    first, _, rest = done.stdout.decode().partition("\n")
    code, peak_kib = map(int, first.split())
    assert code == 1
    assert strict_loads(rest)["error"]["code"] == "BINARY_FILE"
    assert peak_kib < 300 * 1024, f"peak {peak_kib // 1024} MiB for a refused 2 GiB file"
    print(f"\n[huge binary] 2 GiB sparse file refused in {elapsed:.2f} s, peak {peak_kib // 1024} MiB")


# ---- small rules (docs/behaviour.md#text-model, docs/behaviour.md#line-arguments, docs/cli.md) -------------


def test_line_argument_codes(be_env, root):
    (root / "f.txt").write_text("1\n2\n3\n")
    _done, result = run_json("replace", "-f", "f.txt", "-s", "2", "--end=-9", "-c", "x", cwd=root, env=be_env)
    assert result["error"]["code"] == "OUT_OF_RANGE", result
    assert "-9" in result["error"]["message"]
    _done, result = run_json("read", "-f", "f.txt", "-s", "9", "-e", "7", cwd=root, env=be_env)
    assert result["error"]["code"] == "INVALID_ARGUMENT", result
    _done, result = run_json("delete", "-f", "f.txt", "-s", "3", "-e", "2", cwd=root, env=be_env)
    assert result["error"]["code"] == "INVALID_ARGUMENT", result
    _done, result = run_json("read", "-f", "f.txt", "-s", "2", "--end=-3", cwd=root, env=be_env)
    assert result["error"]["code"] == "OUT_OF_RANGE", result
    assert (root / "f.txt").read_text() == "1\n2\n3\n"


def test_cli_error_prefixes_are_fixed_in_chinese(run_be, root):
    done = run_be("--lang", "zh", "read", "-f", "missing.txt")
    stderr = done.stderr.decode()
    assert done.returncode == 1
    assert stderr.startswith("error[NOT_FOUND]: "), stderr
    assert "\nhint: " in stderr
    assert "文件不存在" in stderr  # the words after the prefix follow the language


def test_deleting_the_last_line_keeps_an_empty_line(run_be, root):
    (root / "f.txt").write_bytes(b"\nz")
    done = run_be("delete", "-f", "f.txt", "-s", "2")
    assert done.returncode == 0, done.stderr
    assert (root / "f.txt").read_bytes() == b"\n"


# ---- stores (docs/behaviour.md#snapshots, docs/chips.md) ---------------------------------------------------


def test_a_failed_store_write_leaves_no_temp_file(be_env, root, cache_dir):
    """A chip that cannot be written (file-size limit) leaves no temp file in the cache."""
    (root / "f.txt").write_text("a\n")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    srv = Server(root, be_env, preexec_fn=small_files)
    try:
        _result, error = srv.call("be-replace", {"file": "missing.txt", "start": 1, "content": "z" * 20000})
        assert error["code"] == "NOT_FOUND"
        assert any("chip" in w for w in error.get("warnings", [])), error
    finally:
        srv.close()
    leftovers = [p for p in cache_dir.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_lock_fallback_folder_must_be_private(be_env, root, tmp_path):
    """With the cache unusable, locks go to TMPDIR/better-edit-tools-locks-UID: a link planted
    there (or a folder of someone else's mode) is refused, never followed."""
    (root / "f.txt").write_text("a\n")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    temp = tmp_path / "tmp"
    temp.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (temp / f"better-edit-tools-locks-{os.getuid()}").symlink_to(elsewhere)
    env = dict(be_env, BETTER_EDIT_CACHE_DIR=str(blocker / "cache"), TMPDIR=str(temp))
    done = run_cli("replace", "-f", "f.txt", "-s", "1", "-c", "b", "-o", "json", cwd=root, env=env)
    assert done.returncode == 1, done.stdout
    assert strict_loads(done.stdout)["error"]["code"] == "PERMISSION"
    assert list(elsewhere.iterdir()) == []
    assert (root / "f.txt").read_text() == "a\n"


def test_many_stored_snapshots_are_evicted_in_one_pass(be_env, root, cache_dir, tmp_path):
    """A store filled with a thousand planted snapshots (3000 under BE_STRESS=1): one edit evicts
    them with one warning, and be-trx-status lists only files inside this root."""
    count = scaled(1000, 3000)
    (root / "f.txt").write_text("a\n")
    srv = Server(root, be_env)
    try:
        first = srv.ok("be-replace", {"file": "f.txt", "start": 1, "content": "b"})
        store = next((cache_dir / "snapshots").iterdir())
        outside = str(tmp_path / "elsewhere.txt")
        for n in range(count):
            base = store / f"{n + 1:020d}-{n:06x}"
            record = {
                "event_id": f"{n:06x}",
                "tool": "replace",
                "file": outside,
                "before": "absent",
                "before_size": 0,
                "after_sha256": "0" * 64,
                "created_at": 0,
                "summary": "planted",
                "seq": n + 1,
            }
            base.with_suffix(".json").write_text(json.dumps(record))
        status = srv.ok("be-trx-status", {})
        assert [s["event_id"] for s in status["snapshots"]] == [first["event_id"]]
        result = srv.ok("be-replace", {"file": "f.txt", "start": 1, "content": "c"})
        warnings = result.get("warnings", [])
        assert len(warnings) <= 2, warnings[:5]
        assert any(str(count - 28) in w or "dropped" in w for w in warnings), warnings
        assert len(list(store.glob("*.json"))) == 30
    finally:
        srv.close()


# ---- the portable code paths (issue 10, item 15) -------------------------------------------------------


@pytest.mark.skipif(FROZEN, reason="runs the module's own suites")
def test_core_edit_suites_pass_on_the_portable_code_paths(tmp_path):
    """The Windows branches (no dir_fd, msvcrt-style locks, no copy_file_range, chmod by name)
    forced on POSIX by BETTER_EDIT_PORTABLE_FALLBACKS=1: the core edit suites must pass there too."""
    env = dict(os.environ, BETTER_EDIT_PORTABLE_FALLBACKS="1")
    env.pop("BE_EXE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            *scaled(["tests/test_tools.py"], ["tests/test_tools.py", "tests/test_cli.py"]),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout.decode()[-3000:]
    probe = subprocess.run(
        [sys.executable, "-c", "import better_edit as be; print(be._use_dir_fd(), be.PORTABLE_FALLBACKS)"],
        cwd=REPO,
        env=env,
        capture_output=True,
    )
    assert probe.stdout.split() == [b"False", b"True"]


HUGE_TEXT_MIB = scaled(512, 2048)  # above 300 MiB, so a file loaded whole fails the peak check


def test_a_range_of_a_huge_text_file_is_read_in_bounded_memory(be_env, root):
    """A 512 MiB text file (2 GiB under BE_STRESS=1; sparse after its first lines): reading lines 2-3
    streams, memory stays far below the file (on 0.1 it was loaded whole: the file's size and more)."""
    path = root / "huge.txt"
    head = b"".join(b"line %d\n" % n for n in range(1, 1001))
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(HUGE_TEXT_MIB << 20)
    probe = (
        "import resource, subprocess, sys; "
        "p = subprocess.run(sys.argv[1:], capture_output=True); "
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.stdout.write(p.stdout.decode())"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            *be_command_prefix(),
            "read",
            "-f",
            "huge.txt",
            "-s",
            "2",
            "-e",
            "3",
            "-o",
            "json",
        ],
        cwd=root,
        env=be_env,
        capture_output=True,
        timeout=300,
    )
    first, _, rest = done.stdout.decode().partition("\n")
    code, peak_kib = map(int, first.split())
    assert code == 0, done.stderr
    result = strict_loads(rest)
    assert result["content"] == "2\tline 2\n3\tline 3"
    assert result["total"] == 1001  # the zeros after the last newline are one more (unterminated) line
    assert peak_kib < 300 * 1024, f"peak {peak_kib // 1024} MiB reading 2 lines of a {HUGE_TEXT_MIB} MiB file"
    print(f"\n[huge text] lines 2-3 of a {HUGE_TEXT_MIB} MiB file, peak {peak_kib // 1024} MiB")


def test_server_started_by_hand_says_what_it_waits_for(be_env, root):
    """On a terminal the server prints one line on stderr; on a pipe it prints nothing."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        be_command_prefix(), stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root, env=be_env
    )
    os.close(slave)
    time.sleep(0.5)
    os.write(master, b"\x04")  # Ctrl-D: end of input
    try:
        _out, err = proc.communicate(timeout=20)
    finally:
        os.close(master)
    assert proc.returncode == 0, err
    assert b"MCP server waiting for JSON-RPC" in err and b"--help" in err
    assert err.count(b"\n") == 1, err
    piped = subprocess.run(
        be_command_prefix(), input=b"", capture_output=True, cwd=root, env=be_env, timeout=20
    )
    assert piped.returncode == 0 and piped.stderr == b""


def test_read_back_finds_any_difference(tmp_path):
    """The read-back after writing a temp file (docs/behaviour.md#writing-safely) compares every
    byte of every payload piece, whatever kind of buffer holds it: one changed byte, a missing or
    an extra byte makes it fail."""
    import better_edit as be

    body = bytes(range(256)) * 40000  # 10 MB, no repeating 16 MiB chunk boundary luck
    block = b"new block\n" * 3
    payloads = [
        [(body, 0, 5000, 0), (block, 0, len(block), None), (body, 6000, len(body), 6000)],
        [(memoryview(body), 0, len(body), None)],
        [(bytearray(block), 0, len(block), None)],
    ]
    for payload in payloads:
        data = b"".join(bytes(memoryview(source)[start:stop]) for source, start, stop, _ in payload)
        path = tmp_path / "f"
        edge = min(be._READ_BACK_CHUNK, len(data) - 1)  # (the last byte of the first chunk read back)
        flipped = data[: edge - 1] + bytes([data[edge - 1] ^ 1]) + data[edge:]
        for changed in (
            data,
            data[:-1],
            data + b"x",
            data[:7] + b"\xff" + data[8:],
            data[:-1] + b"\x00",
            flipped,
        ):
            path.write_bytes(changed)
            fd = os.open(path, os.O_RDONLY)
            try:
                assert be._holds(fd, payload) == (changed == data)
            finally:
                os.close(fd)
