"""Handlers called through the tool table on temporary folders (CONTRIBUTING.md#tests)."""

import json
import os
import re
import tempfile
import time
from pathlib import Path

import pytest
from harness import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import better_edit as be


@pytest.fixture
def ctx(root, cache_dir):
    return be.Context(root=str(root), cache_dir=str(cache_dir), workspace=str(root), mcp=True)


def call(ctx, name, **args):
    return be.call_tool(ctx, be.find_tool(name), args)


def error_of(ctx, name, **args):
    with pytest.raises(be.ToolError) as err:
        call(ctx, name, **args)
    return err.value


def test_every_tool_is_in_the_table_once():
    names = [t.name for t in be.TOOLS if t.mcp]
    assert sorted(names) == sorted(
        ["read", "replace", "insert", "delete", "write", "balance", "func-range", "tag-range", "insert-chip",
         "trx-status", "trx-commit", "trx-rollback", "edit"]
    )  # fmt: skip
    assert [t.cli for t in be.TOOLS if not t.mcp] == ["patch"]  # the CLI form of be-edit's patch
    for spelling in ("be-read", "be_read", "read", "BE-READ", "be_func_range", "func_range"):
        assert be.find_tool(spelling) is not None
    assert be.find_tool("be-raed") is None


def test_arguments_are_checked_against_the_table(ctx, root):
    (root / "f.txt").write_text("a\n")
    assert error_of(ctx, "read", file="f.txt", colour="red").code == "INVALID_ARGUMENT"
    assert "colour" in error_of(ctx, "read", file="f.txt", colour="red").to_dict("en")["message"]
    assert error_of(ctx, "read", file="f.txt", start=True).code == "INVALID_ARGUMENT"
    assert error_of(ctx, "read", file="f.txt", start=1.5).code == "INVALID_ARGUMENT"
    assert call(ctx, "read", file="f.txt", start=1.0, end="1")["content"] == "1\ta"
    assert be.validate_args(be.find_tool("read"), '{"file": "f.txt"}') == {"file": "f.txt"}
    assert error_of(ctx, "replace", file="f.txt", start=1).code == "INVALID_ARGUMENT"  # content missing


def test_conflict_when_the_file_changes_underneath(ctx, root):
    path = root / "f.txt"
    path.write_text("a\nb\n")
    st_before = os.stat(path)
    raw = path.read_bytes()
    time.sleep(0.01)
    path.write_text("a\nB\n")  # another program writes between our read and our rename
    with pytest.raises(be.ToolError) as err:
        with be.locate(ctx, "f.txt") as place:
            be.commit_files(ctx, "replace", [be.FileCommit(place, st_before, raw, be.payload_of(b"mine\n"))])
    assert err.value.code == "CONFLICT"
    assert path.read_bytes() == b"a\nB\n"
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]  # no temp file left


def test_snapshots_are_bounded_with_a_warning(root, cache_dir):
    ctx = be.Context(root=str(root), cache_dir=str(cache_dir), max_snapshots=3)
    (root / "f.txt").write_text("0\n")
    results = [call(ctx, "replace", file="f.txt", start=1, content=str(i)) for i in range(1, 5)]
    assert len(be.SnapshotStore(ctx).list()) == 3
    assert any("dropped" in w for w in results[-1]["warnings"])
    status = call(ctx, "trx-status")["snapshots"]
    assert [s["event_id"] for s in status] == [r["event_id"] for r in reversed(results[1:])]


def test_chips_fifo_eviction_and_ttl(root, cache_dir):
    ctx = be.Context(root=str(root), cache_dir=str(cache_dir), max_chips=2)
    store = be.ChipStore(ctx)
    first, _ = store.save("t", {"a": 1}, "", "one")
    second, _ = store.save("t", {"a": 2}, "", "two")
    third, warnings = store.save("t", {"a": 3}, "", "three")
    assert [c["id"] for c in store.list()] == [second, third]
    assert warnings == [("w.chip_evicted", {"id": first, "max": 2})]
    assert be.tr("en", *warnings[0][:1], **warnings[0][1]) == f"oldest chip {first} was evicted (queue max 2)"
    ttl_ctx = be.Context(root=str(root), cache_dir=str(cache_dir), chip_ttl=1)
    for path in Path(store.dir).glob("chip-*.json"):
        record = json.loads(path.read_text())
        record["created_at"] -= 10
        path.write_text(json.dumps(record))
    assert be.ChipStore(ttl_ctx).list() == []
    assert len(list(Path(store.dir).glob("chip-*.json"))) == 2  # (listing deletes nothing)
    fourth, _ = be.ChipStore(ttl_ctx).save("t", {"a": 4}, "", "four")
    assert [c["id"] for c in be.ChipStore(ttl_ctx).list()] == [fourth]
    assert len(list(Path(store.dir).glob("chip-*.json"))) == 1  # (a save removes the expired ones)


def test_unreadable_store_files_are_skipped(ctx, root, capsys):
    (root / "f.txt").write_text("a\n")
    call(ctx, "replace", file="f.txt", start=1, content="b")
    store = be.SnapshotStore(ctx)
    Path(store.dir, "00000000000000000001-abcdef.json").write_text("{not json")
    Path(store.dir, "00000000000000000002-abcdee.json").write_text('{"seq": "x"}')
    chips = be.ChipStore(ctx)
    os.makedirs(chips.dir, exist_ok=True)
    Path(chips.dir, "chip-123456.json").write_text("[1, 2")
    assert len(store.list()) == 1 and chips.list() == []
    assert "skipped" in capsys.readouterr().err


def test_a_tampered_snapshot_cannot_write_outside_the_root(ctx, root, tmp_path):
    (root / "f.txt").write_text("a\n")
    call(ctx, "replace", file="f.txt", start=1, content="b")
    (meta,) = Path(be.SnapshotStore(ctx).dir).glob("*.json")
    victim = tmp_path / "victim.txt"
    victim.write_text("safe\n")
    record = json.loads(meta.read_text())
    record["file"] = str(victim)
    meta.write_text(json.dumps(record))
    # (SANDBOX, or NOT_FOUND: a rollback chooses among the events trx-status lists for its root)
    assert error_of(ctx, "trx-rollback").code in ("SANDBOX", "NOT_FOUND")
    assert victim.read_text() == "safe\n"


def test_snapshot_keeps_the_old_inode_instead_of_a_copy(ctx, root):
    path = root / "f.txt"
    path.write_text("old\n")
    inode = os.stat(path).st_ino
    event = call(ctx, "replace", file="f.txt", start=1, content="new")["event_id"]
    (bin_file,) = Path(be.SnapshotStore(ctx).dir).glob(f"*-{event}.bin")
    assert os.stat(bin_file).st_ino == inode and bin_file.read_bytes() == b"old\n"
    assert oct(os.stat(bin_file).st_mode & 0o777) == "0o600"


def test_preview_changes_nothing_anywhere(ctx, root, cache_dir):
    (root / "f.txt").write_text("a\nb\n")
    for name, args in (
        ("replace", {"start": 1, "content": "x"}),
        ("insert", {"after_line": 1, "content": "x"}),
        ("delete", {"start": 1}),
        ("write", {"content": "x"}),
    ):
        result = call(ctx, name, file="f.txt", preview=True, **args)
        assert result["preview"] is True and "event_id" not in result
    assert (root / "f.txt").read_bytes() == b"a\nb\n"
    assert not list(cache_dir.glob("snapshots/*/*")) and not list(cache_dir.glob("chips/*/*"))


def test_rescue_of_double_escaped_write_is_mcp_only(root, cache_dir):
    mcp = be.Context(root=str(root), cache_dir=str(cache_dir), mcp=True)
    result = call(mcp, "write", file="a.py", content='print(\\"hi\\")\\nx = 1\\n')
    assert (root / "a.py").read_text() == 'print("hi")\nx = 1\n'
    chip = next(c for c in be.ChipStore(mcp).list() if c["tool"] == "be-write")
    assert chip["text"] == 'print(\\"hi\\")\\nx = 1\\n' and chip["id"] in result["warnings"][0]
    cli = be.Context(root=str(root), cache_dir=str(cache_dir))
    call(cli, "write", file="b.py", content="a\\nb\\n")
    assert (root / "b.py").read_text() == "a\\nb\\n"


# --- the recovery promise as a property: any edits, then rollback, give back the exact bytes ----------

EDITS = st.lists(
    st.one_of(
        st.tuples(st.just("replace"), st.integers(1, 6), st.integers(0, 2), st.text("ab\n\t ", max_size=8)),
        st.tuples(st.just("insert"), st.integers(-1, 6), st.just(0), st.text("cd\n", min_size=1, max_size=8)),
        st.tuples(st.just("delete"), st.integers(1, 6), st.integers(0, 2), st.just("")),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.binary(max_size=60).map(lambda b: b.replace(b"\0", b"")),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
    EDITS,
)
def test_any_edits_then_rollback_restore_the_exact_bytes(original, bom, edits):
    try:
        original.decode("utf-8")
    except UnicodeDecodeError:
        original = original.decode("latin-1").encode("utf-8")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder, "root")
        root.mkdir()
        ctx = be.Context(root=str(root), cache_dir=str(Path(folder, "cache")), mcp=True)
        path = root / "f.txt"
        path.write_bytes(bom + original)
        done = 0
        for kind, line, span, content in edits:
            args = (
                {"file": "f.txt", "force": True}
                if kind == "delete"
                else {"file": "f.txt", "content": content}
            )
            if kind == "insert":
                args["after_line"] = line
            else:
                args.update(start=line, end=line + span)
            try:
                done += call(ctx, kind, **args)["changed"]  # an edit that changes nothing leaves no snapshot
            except be.ToolError as exc:
                assert exc.code in ("OUT_OF_RANGE", "INVALID_ARGUMENT")
        if done:
            result = call(ctx, "trx-rollback", steps=done)
            assert len(result["rolled_back"]) == done
        assert path.read_bytes() == bom + original


@settings(
    max_examples=scaled(100, 150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(["a", "b", "", "c c"]), max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.sampled_from(["replace", "insert", "delete"]),
    st.integers(-1, 13),
    st.integers(0, 3),
    st.text("xy\n", max_size=6),
)
def test_windowed_diff_equals_a_diff_of_the_whole_files(lines, eol, final, kind, line, span, content):
    """The diff is cut from a window around the edit; it must equal the one of the whole files."""
    original = eol.join(lines) + (eol if final and lines else "")
    with tempfile.TemporaryDirectory() as folder:
        ctx = be.Context(root=folder, cache_dir=str(Path(folder, ".cache")))
        Path(folder, "f.txt").write_bytes(original.encode())
        args = {"file": "f.txt", "preview": True}
        if kind == "insert":
            args.update(after_line=line, content=content or "z")
        else:
            args.update(start=max(1, line), end=max(1, line) + span, force=True)
            if kind == "replace":
                args["content"] = content
        try:
            result = call(ctx, kind, **args)
        except be.ToolError as exc:
            assert exc.code in ("OUT_OF_RANGE", "INVALID_ARGUMENT")
            return
        text = be.decode_file(original.encode(), "f.txt")
        change_args = {k: v for k, v in args.items() if k != "preview"}
        new_bytes = _apply_without_writing(kind, text, change_args)
        old_lines = be.split_decoded(original)
        first, last = (
            (result["after_line"] + 1, result["after_line"])
            if kind == "insert"
            else (result["start"], result["end"])
        )
        expected = be.unified_hunk(
            "f.txt",
            old_lines,
            be.split_decoded(new_bytes.decode()),
            1,
            around=(first - 1, len(old_lines) - last),
        )
        if not result["changed"]:  # a no-op edit shows no diff (and writes nothing)
            assert new_bytes == original.encode() and result["diff"] == ""
        else:
            assert result["diff"] == expected
        assert result["total"] == be.line_count(new_bytes)


def _apply_without_writing(kind, text, args):
    body = text.body
    eol = be.dominant_eol(body)
    if kind == "insert":
        after = text.total() if args["after_line"] == -1 else args["after_line"]
        a = be.skip_lines(body, 0, after)
        return be.join_splice(
            body,
            be.splice_plan(body, a, a, be.encode_block(text, be.content_lines(args["content"]), eol), eol),
        )
    a, b = be.line_span(body, args["start"], args["end"])
    block = be.encode_block(text, be.content_lines(args["content"]), eol) if kind == "replace" else b""
    return be.join_splice(body, be.splice_plan(body, a, b, block, eol))


@settings(max_examples=scaled(100, 300), deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"bb", "é".encode(), b"\n", b"\r\n", b"\r", b"x\n", b"\xff"]), max_size=30
    ),
    bom=st.booleans(),
    start=st.integers(1, 8),
    end=st.one_of(st.none(), st.integers(-5, 12).filter(bool)),
    max_lines=st.integers(0, 4),
    chunk=st.integers(1, 9),
    budget=st.one_of(st.none(), st.integers(3, 14)),
)
@example(
    data=[b"\r", b"\r"], bom=False, start=1, end=None, max_lines=1, chunk=1, budget=3
)  # (a CR is no terminator)
def test_streaming_read_equals_whole_read(tmp_path_factory, data, bom, start, end, max_lines, chunk, budget):
    """A large file is read by range in two bounded passes; the result must be the whole read's,
    also when the server's character budget (`budget`, for READ_MAX_CHARS) cuts it."""
    root = tmp_path_factory.mktemp("stream")
    ctx = be.Context(root=str(root), cache_dir=str(root / ".cache"), mcp=budget is not None)
    (root / "f.txt").write_bytes((b"\xef\xbb\xbf" if bom else b"") + b"".join(data))
    args = {"file": "f.txt", "start": start, "max_lines": max_lines}
    if end is not None:
        args["end"] = end

    def outcome():
        try:
            result = be.call_tool(ctx, be.find_tool("read"), dict(args))
        except be.ToolError as exc:
            return exc.code
        # (a streamed read does not look for other copies of the lines: its view carries no
        # uniqueness mark, so it never follows moved lines; the rest is the same)
        result["viewed_code_id"] = re.sub(
            r":(?:u\d+\.[0-9a-f]{8}\.[0-9a-f]{8}\.\d+|n\d+)\.[0-9a-f]{8}\.[0-9a-f]{8}(?:\.[0-9a-f]{8}\.[0-9a-f]{8})?$",
            "",
            result["viewed_code_id"],
        )
        return result

    original = (be.STREAM_READ_BYTES, be._STREAM_CHUNK, be.READ_MAX_CHARS)
    try:
        be.READ_MAX_CHARS = budget or original[2]
        whole = outcome()
        be.STREAM_READ_BYTES, be._STREAM_CHUNK = -1, chunk
        assert outcome() == whole
        if budget and not isinstance(whole, str) and "content" in whole:
            assert len(whole["content"]) <= budget or max_lines == 0
    finally:
        be.STREAM_READ_BYTES, be._STREAM_CHUNK, be.READ_MAX_CHARS = original


def test_a_new_tool_needs_no_cli_code(monkeypatch, capsys):
    """The CLI is driven by the tool table: a 13th tool is a handler plus a table entry (issue 11)."""

    def tool_echo(ctx, args):
        return {"status": "ok", "file": args["file"], "path": "/nowhere", "warnings": ["just a test"]}

    tool = be.Tool("echo", tool_echo, [be.P_FILE, be.P_CONTENT], "Echo", {"file": "string"}, read_only=True)
    monkeypatch.setattr(be, "TOOLS", [*be.TOOLS, tool])
    monkeypatch.setitem(be.MESSAGES, "d.echo", ("Echo a file name.", "回显文件名。"))
    monkeypatch.setitem(be.MESSAGES, "x.echo", ("example: echo -f a.txt -c x", "示例：echo -f a.txt -c x"))
    assert be.main(["echo", "-f", "a.txt", "-c", "x"]) == 0
    assert capsys.readouterr().out == "a.txt: ok\nwarning: just a test\n"
    assert be.main(["echo", "-f", "a.txt"]) == 2  # content is required: -c or --content-file
    assert "--content-file" in capsys.readouterr().err


def test_scanner_errors_are_not_swallowed(ctx, root, monkeypatch):
    """A scanner bug is INTERNAL at the tool boundary, never "no function found" or "balanced";
    during an edit it is a warning and the edit goes on (issue 11)."""
    (root / "a.js").write_text("function f() {\n  return 1;\n}\n")

    def broken(*args, **kwargs):
        raise RuntimeError("scanner bug")

    monkeypatch.setattr(be, "_balance_problems", broken)
    monkeypatch.setattr(be, "_scan_brackets", broken)  # the post-edit check's own route
    monkeypatch.setattr(be, "_function_range_in", broken)
    for name, args in (("balance", {}), ("func-range", {"line": 2})):
        with pytest.raises(RuntimeError):
            be.call_tool(ctx, be.find_tool(name), dict(args, file="a.js"))
    result = be.call_tool(
        ctx, be.find_tool("replace"), {"file": "a.js", "start": 2, "content": "  return 2;"}
    )
    assert any("structure check failed" in w for w in result["warnings"]), result
    assert (root / "a.js").read_text() == "function f() {\n  return 2;\n}\n"


def test_snapshots_kept_in_memory_are_reported_on_every_edit(root, tmp_path, monkeypatch):
    """The cache fails during a session: that edit warns, and so does every later one and
    be-trx-status, instead of persistence silently staying off (issue 11)."""
    import tempfile

    blocker = tmp_path / "blocker"
    blocker.write_text("")  # a file where the cache folder should be
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    ctx = be.Context(root=str(root), cache_dir=str(blocker / "cache"), mcp=True)
    (root / "f.txt").write_text("a\n")
    first = call(ctx, "replace", file="f.txt", start=1, content="b")
    assert any("not persisted" in w for w in first["warnings"]), first
    second = call(ctx, "replace", file="f.txt", start=1, content="c")
    assert any("memory only" in w for w in second["warnings"]), second
    assert any("memory only" in w for w in call(ctx, "trx-status")["warnings"])
    assert call(ctx, "trx-rollback", steps=2)["rolled_back"] == [second["event_id"], first["event_id"]]
    assert (root / "f.txt").read_text() == "a\n"


def test_the_global_options_known_to_the_command_line_reader_are_the_parsers(
    root, cache_dir, monkeypatch, capsys
):
    """main() finds the command word before argparse runs, skipping the value of each global option
    that takes one: every option the usage line shows goes before the command, its value (if it
    takes one) included. A value not skipped would be taken for the command; an option wrongly
    skipped past would swallow the command word."""
    (root / "a.txt").write_text("hello\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("BETTER_EDIT_CACHE_DIR", str(cache_dir))
    with pytest.raises(SystemExit) as done:
        be.main(["--help"])
    assert done.value.code == 0
    usage = capsys.readouterr().out.split("\n\n")[0]
    options = re.findall(r"\[(--[\w-]+)(?: ([^\]]+))?\]", usage)
    values = {"--lang": "en", "--root": str(root), "--max-chips": "5", "--encoding": "utf-8"}
    assert len(options) >= 6 and {flag for flag, taking in options if taking} == set(values), options
    for flag, taking in options:
        argv = [flag, values[flag]] if taking else [flag]
        assert be.main([*argv, "read", "-f", "a.txt", "-o", "json"]) == 0, argv
        assert json.loads(capsys.readouterr().out)["content"] == "1\thello", argv


def test_the_public_surface_is_declared_and_documented():
    """`__all__` names what scripts and tests may rely on: each name exists and each function or
    class in it says what it does; the module docstring names every command and every section."""
    import inspect

    assert len(be.__all__) == len(set(be.__all__))
    for name in be.__all__:
        value = getattr(be, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert value.__doc__ and value.__doc__.strip(), name
    commands = [tool.cli for tool in be.TOOLS if tool.cli]
    assert all(f"``{command}``" in be.__doc__ for command in commands)
    source = Path(be.__file__).read_text(encoding="utf-8")
    headings = re.findall(r"^# (\d+)\. (\w+)", source, re.M)
    assert [int(number) for number, _ in headings] == list(range(2, 2 + len(headings)))
    for number, word in headings:
        assert re.search(rf"^ *{number}\. +{word.lower()}", be.__doc__, re.M | re.I), (number, word)


def test_every_top_level_function_and_class_is_used_by_the_program():
    """A function or class that only tests call is dead weight the tests keep alive: each
    definition is referenced by the module itself (or named in `__all__` for scripts)."""
    import ast
    import collections

    tree = ast.parse(Path(be.__file__).read_text(encoding="utf-8"))
    used = collections.Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used[node.id] += 1
        elif isinstance(node, ast.Attribute):
            used[node.attr] += 1
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    unused = [name for name in defined if not used[name] and name not in be.__all__]
    assert not unused, f"defined but never used by the module: {unused}"
