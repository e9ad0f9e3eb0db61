"""The MCP server (issue 3): raw JSON-RPC lines and the official `mcp` client SDK.

Every server is a real subprocess (`harness.Server`) started through `be_command` (so `BE_EXE`
runs the same tests against the frozen executable), with `cwd=root` and the private `be_env`. The
`serve` fixture checks at teardown that everything the server wrote on stdout was one valid
JSON-RPC message per line, so every test also checks docs/behaviour.md#json-rpc-transport "stdout carries only protocol
messages".

Sections: protocol (docs/behaviour.md#json-rpc-transport), tools (docs/mcp.md), viewed_code_id (docs/behaviour.md#viewed_code_id), transactions (docs/transactions.md),
chips (docs/chips.md), the official SDK as a client.
"""

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import pytest
from harness import (
    REPLY_TIMEOUT,
    REPO,
    Server,
    be_command_prefix,
    canonical,
    run_cli,
    run_json,
    scaled,
    strict_loads,
)

TOOL_BASES = (
    "read", "replace", "insert", "delete", "write", "balance", "func-range", "tag-range",
    "insert-chip", "trx-status", "trx-commit", "trx-rollback", "edit",
)  # fmt: skip
READ_ONLY = {"read", "balance", "func-range", "tag-range", "trx-status"}
DESTRUCTIVE = {"delete", "write", "replace", "edit"}
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
CHIP_RE = re.compile(r"chip://([0-9a-f]{6,12})")
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_PHRASE = re.compile(r"\b[A-Za-z]{2,}\s+[A-Za-z]{2,}\b")  # two English words in a row


def english_phrase(text):
    """Two English words in a row, ignoring ids such as chip abcdef (they may be all letters)."""
    return ENGLISH_PHRASE.search(re.sub(r"\b[0-9a-f]{6,12}\b", "", text))


HAVE_JSONSCHEMA = importlib.util.find_spec("jsonschema") is not None  # (else results go unchecked)


@pytest.fixture
def serve(be_command, be_env, root):
    """serve(*flags, env=None, init=True) -> a started harness.Server (initialized unless init=False);
    every success is checked against its outputSchema, and UTF-8 is sent as is."""
    started = []

    def start(*flags, env=None, init=True):
        env = dict(be_env, **(env or {}))
        server = Server(
            root, env, flags, command=be_command, check_schemas=HAVE_JSONSCHEMA, ensure_ascii=False
        )
        started.append(server)
        if init:
            server.initialize()
        return server

    yield start
    for server in started:
        try:
            server.close()
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
    for server in started:
        server.check_stdout()


@pytest.fixture
def cli(run_be):
    """cli(*args, input=None) -> CompletedProcess of the CLI, same cache and workspace as the servers."""
    return run_be


def numbered(n, prefix="line"):
    return "".join(f"{prefix} {i}\n" for i in range(1, n + 1))


def file_state(path):
    """Bytes and inode: a tool error must neither change the bytes nor replace the file."""
    st = os.stat(path)
    return path.read_bytes(), st.st_ino, st.st_mtime_ns


# =================================================================================================
# 1. Protocol (docs/behaviour.md#json-rpc-transport)
# =================================================================================================


@pytest.mark.parametrize("version", VERSIONS)
def test_initialize_echoes_supported_versions(serve, version):
    server = serve(init=False)
    result = server.initialize(version)
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    info = result["serverInfo"]
    assert (
        info["name"] == "better-edit-tools"
        and info["title"]
        and re.fullmatch(r"0\.\d+\.\d+", info["version"])
    )
    assert isinstance(result["instructions"], str) and "viewed_code_id" in result["instructions"]


def test_initialize_unknown_version_gets_the_newest(serve):
    server = serve(init=False)
    assert server.initialize("1999-01-01")["protocolVersion"] == "2025-11-25"
    reply = server.request("initialize", {})
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_ping_and_ids_echoed(serve):
    server = serve()
    assert server.request("ping")["result"] == {}
    assert server.request("ping", request_id="abc-1")["result"] == {}
    assert server.request("ping", request_id=0)["result"] == {}
    assert server.request("ping", request_id=987654321)["result"] == {}
    reply = server.request("tools/list", request_id="str-id")
    assert reply["id"] == "str-id" and len(reply["result"]["tools"]) == len(TOOL_BASES)


def test_notifications_are_never_answered(serve):
    server = serve()
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    server.send({"jsonrpc": "2.0", "method": "notifications/something-unknown", "params": {"x": 1}})
    server.send({"jsonrpc": "2.0", "method": "tools/list"})  # no id: a notification too
    server.send({"jsonrpc": "2.0", "method": "no/such/method"})
    server.send_line("")  # blank lines are ignored
    server.send({"jsonrpc": "2.0", "id": 5, "result": {}})  # responses to what it never asked, too
    server.send({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "no"}})
    # Requests are answered in order, so the very next reply must be the ping's.
    reply = server.request("ping", request_id="after-notifications")
    assert reply == {"jsonrpc": "2.0", "id": "after-notifications", "result": {}}


@pytest.mark.parametrize(
    "line, reply_id, detail",
    [
        (
            b'{"jsonrpc":"2.0","method":1,"params":"bar"}',
            None,
            "method must be a string",
        ),  # (JSON-RPC 2.0, 7)
        (b"{}", None, "method must be a string"),
        (b'{"jsonrpc":"2.0"}', None, "method must be a string"),
        (b'{"jsonrpc":"2.0","id":6}', 6, "method must be a string"),
        (b'{"id":2,"method":"ping"}', 2, 'jsonrpc must be "2.0"'),
        (b'{"jsonrpc":"1.0","id":3,"method":"ping"}', 3, 'jsonrpc must be "2.0"'),
        (b'{"jsonrpc":2.0,"id":"x","method":"ping"}', "x", 'jsonrpc must be "2.0"'),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, "id must be"),
    ],
)
def test_an_invalid_request_is_answered_with_its_id_when_it_has_a_valid_one(serve, line, reply_id, detail):
    """Found by an attack: invalid requests without an id (the JSON-RPC spec's own example) got no
    answer at all, and `jsonrpc` was never checked. Each is -32600, with the request's id when it
    has a valid one (else null), and the server goes on (also inside a batch, which protocol
    version 2025-03-26 takes)."""
    server = serve(init=False)
    server.initialize("2025-03-26")
    server.send_raw(line)
    reply = server.recv()
    assert reply["id"] == reply_id and reply["error"]["code"] == -32600, reply
    assert detail in reply["error"]["message"], reply
    server.send_raw(b"[" + line + b"]")
    assert server.recv()[0]["error"]["code"] == -32600
    assert server.request("ping")["result"] == {}


def test_an_id_with_a_lone_surrogate_comes_back_as_it_was_sent(serve):
    """Found by an attack: an id "\\ud800" was answered as "\ufffd", which the client cannot match
    to its request: it waited forever. It now comes back escaped, exactly as sent (also in a
    batch, which protocol version 2025-03-26 takes)."""
    server = serve(init=False)
    server.initialize("2025-03-26")
    server.send_raw(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
    assert server.recv() == {"jsonrpc": "2.0", "id": "\ud800", "result": {}}
    server.send_raw(
        b'[{"jsonrpc":"2.0","id":"a\\udfff","method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]'
    )
    assert [one["id"] for one in server.recv()] == ["a\udfff", 9]


def test_an_id_of_more_digits_than_int_takes_comes_back_as_it_was_sent(serve):
    """Found by an attack: an integer id of 5,000 digits (Python's int() takes 4,300 from text)
    was a parse error with id null, so the client waited for ever. The id comes back digit for
    digit, and such a number as an argument is refused by the argument's name."""
    server = serve()
    big = "9" * 5000
    server.send_line('{"jsonrpc":"2.0","id":-' + big + ',"method":"ping"}')
    assert server.recv(parse_int=str) == {"jsonrpc": "2.0", "id": "-" + big, "result": {}}
    line = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"be-read","arguments":%s}}'
    server.send_line(line % ('{"file":"a.txt","start":' + big + "}"))
    result = server.recv()["result"]
    message = result["structuredContent"]["error"]["message"]
    assert result["isError"] and message.startswith("argument 'start' must be an integer, got 999"), result
    assert server.request("ping")["result"] == {}


def test_arguments_nested_too_deep_are_an_invalid_argument_and_no_chip(serve, root, cache_dir):
    """Found by an attack: an argument nested 330 levels deep was INTERNAL (RecursionError); as a
    JSON string, arguments nested 1,000 deep were a JSON-RPC -32603; and a chip was saved of
    arguments nested 980 deep that could not be read back, after which every chip listing warned
    on stderr. Arguments nested more than 64 levels are INVALID_ARGUMENT, and kept as no chip."""
    server = serve()
    deep = "[" * 330 + "]" * 330
    line = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be-read","arguments":{"file":%s}}}'
    )
    server.send_line(line % deep)
    result = server.recv()["result"]
    assert result["isError"] and "more than 64 levels" in result["structuredContent"]["error"]["message"]
    reply = server.request("tools/call", {"name": "be-read", "arguments": "[" * 1000})
    assert (
        reply["result"]["isError"]
        and reply["result"]["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
    )
    deeper = "[" * 980 + "]" * 980
    line = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"be-write","arguments":{"file":"x.txt","content":"a","extra":%s}}}'
    server.send_line(line % deeper)
    error = server.recv()["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_ARGUMENT" and "chip://" not in error["message"], error
    assert not (root / "x.txt").exists()
    chips = list((cache_dir / "chips").rglob("*.json"))
    assert chips  # (the arguments sent as a string were kept)
    for chip in chips:
        json.loads(chip.read_text())  # (every chip kept can be read back)
    server.call("be-write", {"file": "y.txt", "content": "b", "unknown_argument": "x" * 60})  # (a chip save)
    assert not server.stderr_has(b"unreadable", timeout=0.5)


def test_unknown_method(serve):
    server = serve()
    reply = server.request("resources/list", request_id=41)
    assert reply["id"] == 41 and reply["error"]["code"] == -32601
    assert "resources/list" in reply["error"]["message"]


def test_short_non_json_line_is_a_parse_error_without_chip(serve):
    server = serve()
    server.send_line("not json")
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert "chip://" not in reply["error"]["message"]
    assert server.ok("be-insert-chip")["chips"] == []


def test_long_non_json_line_is_kept_as_a_chip(serve):
    server = serve()
    raw = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"be-write","arguments":{"content":"oops'
    assert len(raw.encode()) > 50
    server.send_line(raw)
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    chip_id = CHIP_RE.search(reply["error"]["message"]).group(1)
    record = server.ok("be-insert-chip", {"from": f"chip://{chip_id}"})
    assert record["text"] == raw
    assert record["tool"] == "jsonrpc"


def test_invalid_utf8_line_is_a_parse_error(serve):
    server = serve()
    server.send_line(b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}')
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert "not UTF-8 (first bad byte at byte 45)" in reply["error"]["message"]  # (it said character 0)
    server.send_line(b"\xef\xbb\xbf\x80\x81 not utf-8 at all")
    assert server.recv()["error"]["code"] == -32700
    assert server.request("ping")["result"] == {}


def test_utf8_encoded_surrogates_are_a_parse_error_at_their_byte(serve):
    """Found by an attack: json.loads of bytes decodes with surrogatepass, so a CESU-8 line (an
    emoji as two encoded surrogates, or one alone as an id) was taken as text: a ping with id
    "\ud800" was answered, and a write was refused as "half of a pair (a \\u escape was cut)". Such
    a line is not UTF-8: -32700 naming its first bad byte, counted from the line's first byte."""
    server = serve()
    server.send_line(b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}')
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    assert "first bad byte at byte 23" in reply["error"]["message"], reply
    server.send_line(b'  {"jsonrpc":"2.0","id":1,"method":"ping","x":"\xed\xa0\xbd\xed\xb8\x80"}')
    assert "first bad byte at byte 47" in server.recv()["error"]["message"]
    server.send_line(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}')
    assert "first bad byte at byte 26" in server.recv()["error"]["message"]  # (the BOM's 3 bytes count)
    server.send_line(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":3,"method":"ping"}')  # (a BOM is still skipped)
    assert server.recv() == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.parametrize("request_id", [7, "seven"])
def test_a_request_too_deep_for_json_is_answered_with_its_id(serve, root, request_id):
    """Found by an attack: a request whose arguments nested 1000 arrays (valid JSON, too deep for
    Python's json) was a -32700 parse error, "not JSON (first problem at character 0)", with id
    null: the client waiting for id 7 was never answered. It is now -32600 for that id, saying
    why, and nothing is done."""
    (root / "a.txt").write_text("one\n")
    server = serve()
    shown = f'"id":{json.dumps(request_id)},'
    deep = "[" * 1000 + "]" * 1000
    server.send_line(
        f'{{"jsonrpc":"2.0",{shown}"method":"tools/call","params":{{"name":"be-write",'
        f'"arguments":{{"file":"a.txt","content":"x","target":{deep}}}}}}}'
    )
    reply = server.recv()
    assert reply["id"] == request_id and reply["error"]["code"] == -32600, reply
    assert "too deeply" in reply["error"]["message"]
    assert (root / "a.txt").read_text() == "one\n"
    assert server.request("ping")["result"] == {}


def test_a_response_or_notification_too_deep_for_json_is_answered_by_nothing(serve, root):
    """Found by the server attack: nested 3,000 levels deep, a stray response `{"id": 2, "result":
    …}` was answered with -32600 for id 2 (which a client may take for the answer to its own
    request 2), and a notification with id null; shallow ones got no answer, as JSON-RPC says."""
    (root / "a.txt").write_text("one\n")
    server = serve()
    deep = "[" * 3000 + "]" * 3000
    server.send_line(f'{{"jsonrpc":"2.0","id":2,"result":{{"x":{deep}}}}}')
    server.send_line(f'{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"x":{deep}}}}}')
    # (the regression pass: a nested object's last key was taken for the message's own)
    server.send_line(f'{{"jsonrpc":"2.0","method":"notifications/foo","params":{{"deep":{deep},"id":1}}}}')
    server.send_line(f'{{"jsonrpc":"2.0","id":7,"result":{{"deep":{deep},"method":"x"}}}}')
    server.send_line(
        f'{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"be-write",'
        f'"arguments":{{"file":"a.txt","content":"x","target":{deep}}}}}}}'
    )
    reply = server.request("ping")
    assert reply == {"jsonrpc": "2.0", "id": reply["id"], "result": {}}, reply  # (the first reply)
    assert (root / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("line", ["[]", "42", '"ping"', "null", "true"])
def test_valid_json_that_is_not_a_request_object(serve, line):
    server = serve()
    server.send_line(line)
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert server.request("ping")["result"] == {}


def test_a_batch_gets_one_array_of_replies_in_order(serve, root):
    """Protocol version 2025-03-26, which the server accepts, says a server MUST take JSON-RPC
    batches; an array of requests was answered with one -32600 and none of them ran. Now each
    message of the array is handled in order, and their replies come as one array (notifications
    and stray responses get none; an array of notifications alone, no reply at all). Under a later
    version, which dropped batches, or before `initialize`, it is -32600 as the contract says, and
    nothing in it runs (the contract audit: 0.3 took it under every version)."""
    (root / "a.txt").write_text("a\n")
    for server in (serve(init=False), serve()):
        server.send([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "be-insert", "arguments": {"file": "a.txt", "after_line": 1, "content": "x"}}}])  # fmt: skip
        reply = server.recv()
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
        assert "only under protocol version 2025-03-26" in reply["error"]["message"], reply
    assert (root / "a.txt").read_text() == "a\n"
    server = serve(init=False)
    server.initialize("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "w", "method": "tools/call",
         "params": {"name": "be-insert", "arguments": {"file": "a.txt", "after_line": 1, "content": "b"}}},
        42,
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
    ]  # fmt: skip
    server.send(batch)
    replies = server.recv()
    assert [r["id"] for r in replies] == [1, "w", None, 3]
    assert replies[0]["result"] == {} and replies[1]["result"]["structuredContent"]["added"] == 1
    assert replies[2]["error"]["code"] == -32600 and replies[3]["error"]["code"] == -32601
    assert (root / "a.txt").read_text() == "a\nb\n"
    server.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert server.request("ping")["result"] == {}  # (the notifications got no reply)


def test_bad_request_members(serve):
    server = serve()
    server.send({"jsonrpc": "2.0", "id": 1, "method": 5})
    assert server.recv()["error"]["code"] == -32600
    server.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
    assert server.recv()["error"]["code"] == -32600
    reply = server.request("tools/call", ["be-read"])
    assert reply["error"]["code"] == -32602
    assert server.request("ping")["result"] == {}


def test_huge_write_in_one_line(serve, root):
    server = serve()
    content = "".join(f"{i:08d} ünïcødé €\n" for i in range(800_000))
    data = content.encode("utf-8")
    assert len(data) >= 20_000_000
    result = server.ok("be-write", file="big.txt", content=content, brief=True)
    assert result["created"] is True and result["bytes"] == len(data) and result["lines"] == 800_000
    assert (root / "big.txt").read_bytes() == data
    assert server.request("ping")["result"] == {}


def test_eof_exits_zero_promptly(serve):
    server = serve()
    assert server.request("ping")["result"] == {}
    began = time.monotonic()
    assert server.close(timeout=5) == 0
    assert time.monotonic() - began < 2.0


@pytest.mark.skipif(os.name != "posix", reason="O_NONBLOCK pipes")
@pytest.mark.parametrize("which", ["stdin", "stdout"])
def test_a_non_blocking_pipe_is_served_like_any_other(be_command, be_env, root, which):
    """Found by an attack: a launcher that handed over a non-blocking pipe made the server exit 0
    at once, with nothing said: a read that would wait returned nothing and was taken for the
    end of input (stdin), or a write that would wait for the client to go away (stdout, after 4
    of 10 replies)."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end if which == "stdin" else write_end, False)
    pipes = (
        {"stdin": read_end, "stdout": subprocess.PIPE}
        if which == "stdin"
        else {"stdin": subprocess.PIPE, "stdout": write_end}
    )
    proc = subprocess.Popen(be_command, cwd=root, env=be_env, stderr=subprocess.PIPE, **pipes)
    os.close(read_end if which == "stdin" else write_end)
    requests = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % n for n in range(10))
    if which == "stdin":
        time.sleep(0.5)  # (the server waits for its first line)
        os.write(write_end, requests)
        os.close(write_end)
        out = proc.stdout.read()
    else:
        proc.stdin.write(requests)
        proc.stdin.close()
        time.sleep(1.0)  # (the replies fill the pipe before they are read)
        with os.fdopen(read_end, "rb") as replies:
            out = replies.read()
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert [json.loads(line)["id"] for line in out.splitlines()] == list(range(10))


def test_a_cursor_the_server_never_issued_is_invalid_params(serve):
    """Found by an attack: tools/list answered any `cursor` with the whole list. The list comes in
    one page (no nextCursor), so every cursor is one it never issued: -32602, as the MCP
    pagination rules say an invalid cursor should be."""
    server = serve()
    for cursor in ("never-issued", 42):
        reply = server.request("tools/list", {"cursor": cursor})
        assert reply["error"]["code"] == -32602 and "cursor" in reply["error"]["message"], reply
        assert reply["error"]["message"].startswith("invalid params: "), reply  # (not "invalid request")
    assert len(server.request("tools/list", {"cursor": None})["result"]["tools"]) == 13


def test_a_tools_call_without_a_tool_name_says_so(serve):
    """Found by the protocol attack: a tools/call with no `name` was "unknown tool 'None'"."""
    server = serve()
    for params in ({"arguments": {}}, {"name": 7}):
        reply = server.request("tools/call", params)
        assert reply["error"]["code"] == -32602, reply
        assert "names no tool: params.name must be one of" in reply["error"]["message"], reply
        assert "None" not in reply["error"]["message"] and reply["error"]["data"]["closest"], reply


def test_an_unknown_patch_tool_points_at_be_edit_and_its_patch_argument(serve):
    """Found by the agent-mistakes attack: `be-patch` (the CLI has `patch`; hosts call theirs
    `apply_patch`) got `closest: be-replace, be-balance, be-insert-chip`, none of which takes a
    diff. Any unknown name with "patch" in it now names be-edit and its `patch` argument."""
    server = serve()
    for name in ("be-patch", "apply_patch"):
        reply = server.request("tools/call", {"name": name, "arguments": {}})
        error = reply["error"]
        assert error["code"] == -32602 and error["data"]["closest"][0] == "be-edit", reply
        assert "a unified diff is applied by be-edit with its `patch` argument" in error["message"], reply
    reply = server.request("tools/call", {"name": "be-reed", "arguments": {}})
    assert reply["error"]["data"]["closest"][0] == "be-read", reply


def test_eof_without_any_request_exits_zero(serve):
    server = serve(init=False)
    assert server.close(timeout=5) == 0
    assert server.stdout_lines == []


def test_deeply_nested_json_does_not_kill_the_server(serve):
    server = serve()
    server.send_line("[" * 100_000)
    reply = server.recv()
    assert reply["id"] is None and reply["error"]["code"] in (-32700, -32600)
    server.send_line("[" * 100_000 + "]" * 100_000)
    assert server.recv()["error"]["code"] in (-32700, -32600)
    nested = "[" * 900 + "]" * 900
    server.send_line(
        '{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"be-read","arguments":{"file":'
        + nested
        + "}}}"
    )
    reply = server.recv()
    assert reply["id"] in ("deep", None)
    assert server.request("ping")["result"] == {}
    assert server.proc.poll() is None


def test_unknown_tool_names_closest(serve):
    server = serve()
    reply = server.request("tools/call", {"name": "be-raed", "arguments": {"file": "x"}})
    assert reply["error"]["code"] == -32602
    assert "be-read" in reply["error"]["message"]
    reply = server.request("tools/call", {"name": "trx_rolback", "arguments": {}})
    assert reply["error"]["code"] == -32602
    assert "be-trx-rollback" in reply["error"]["message"]


def test_a_name_of_a_megabyte_is_not_sent_back_whole(serve, root):
    """A method, tool, argument or file name the caller sent is shown cut to 60 characters: before,
    each reply repeated the whole megabyte (twice for a tool error) into the agent's context."""
    server = serve()
    (root / "a.txt").write_text("a\n")
    big = "x" * 1_000_000
    sizes = {}

    def size(label, reply):
        sizes[label] = len(json.dumps(reply))
        return reply

    reply = size("method", server.request(big))
    assert reply["error"]["code"] == -32601 and "xxx..." in reply["error"]["message"]
    reply = size("tool", server.request("tools/call", {"name": big, "arguments": {}}))
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["closest"]
    error = server.err("be-read", "INVALID_ARGUMENT", {"file": "a.txt", big: 1})
    assert error["message"].startswith("unknown argument 'xxx") and "..." in error["message"]
    size("argument", error)
    error = server.err("be-read", "INVALID_ARGUMENT", {"file": big})
    assert "1000000 characters" in error["message"], error["message"]
    size("file", error)
    error = server.err("be-edit", "INVALID_ARGUMENT", {"edits": [{"file": "a.txt", "op": "write", big: 1}]})
    size("edit item", error)
    size("choice", server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": "chip://x", "as": big}))
    size("encoding", server.err("be-read", "ENCODING", {"file": "a.txt", "encoding": big}))
    size("event", server.err("be-trx-rollback", "NOT_FOUND", {"event_id": big}))
    size("source", server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": big}))
    size(
        "item file",
        server.err("be-edit", "INVALID_ARGUMENT", {"edits": [{"file": big, "op": "write", "content": ""}]}),
    )
    assert all(n < 5000 for n in sizes.values()), sizes  # (a path or an id is cut at 1,000 characters)
    assert (root / "a.txt").read_text() == "a\n"


def test_numbers_of_thousands_of_digits_are_refused_never_an_internal_error(serve, root):
    """Python's int() refuses more than 4,300 digits (ValueError): a viewed_code_id, a patch hunk
    header, a read-prefix in `old` or a chip's `to` line of 5,000 digits ended in INTERNAL. Each
    is now an ordinary refusal, and the file is untouched."""
    server = serve()
    (root / "a.txt").write_text("a\n")
    big = "9" * 5000
    view = f"v1:1-{big}:0123456789abcdef"
    error = server.err(
        "be-replace",
        "INVALID_ARGUMENT",
        {"file": "a.txt", "start": 1, "content": "b", "viewed_code_id": view},
    )
    assert len(error["message"]) < 300, error["message"]
    patch = f"--- a/a.txt\n+++ b/a.txt\n@@ -1,{big} +1 @@\n-a\n+b\n"
    server.err("be-edit", "INVALID_ARGUMENT", {"patch": patch})
    server.err("be-replace", "MISMATCH", {"file": "a.txt", "old": f"{big}\tfoo", "content": "x"})
    chip = server.tool_result(
        "be-read", {"file": "missing.txt", "padding": "x" * 60}
    )  # a failed call: a chip
    chip_id = re.search(r"chip://(\w+)", chip["content"][0]["text"]).group(1)
    error = server.err(
        "be-insert-chip", "INVALID_ARGUMENT", {"from": f"chip://{chip_id}", "to": f"a.txt:{big}"}
    )
    assert (root / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("codec", ["punycode", "undefined", "cp037", "unicode_escape"])
def test_a_codec_that_moves_line_breaks_or_fails_whole_is_refused(serve, root, codec):
    """punycode and "undefined" fail with a bare UnicodeError (it escaped as INTERNAL); EBCDIC and
    unicode-escape do not write "\\n" as byte 0x0A, so a write made a file no later call could
    split into lines. Each is ENCODING, for reads and writes, and nothing is written."""
    server = serve()
    (root / "a.txt").write_text("a\n")
    error = server.err("be-read", "ENCODING", {"file": "a.txt", "encoding": codec})
    assert codec in error["message"] and "ASCII" in error["hint"]
    server.err("be-write", "ENCODING", {"file": "new.txt", "content": "x\n", "encoding": codec})
    server.err("be-write", "ENCODING", {"file": "a.txt", "content": "x\n", "encoding": codec})
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"] and (root / "a.txt").read_text() == "a\n"


def test_the_codecs_that_keep_ascii_line_breaks_still_write_and_read(serve, root):
    server = serve()
    for codec, expected in (("utf-8-sig", "\ufeffhé\n".encode()), ("utf-32", "hé\n".encode("utf-32"))):
        server.ok("be-write", {"file": f"{codec}.txt", "content": "hé\n", "encoding": codec})
        assert (root / f"{codec}.txt").read_bytes() == expected
        assert server.ok("be-read", {"file": f"{codec}.txt", "encoding": codec})["content"] == "1\thé"
    # idna has no "ignore" error handler: the look at a file's first bytes for its language was
    # INTERNAL; a host name's codec writes `é` as `xn--9ca` but `éé` as `xn--9caa`, no file encoding
    (root / "es.txt").write_text("abc\ndef\n")
    error = server.err(
        "be-replace", "ENCODING", {"file": "es.txt", "start": 2, "content": "x", "encoding": "idna"}
    )
    assert "idna" in error["message"] and (root / "es.txt").read_text() == "abc\ndef\n"


def test_a_balance_with_thousands_of_problems_lists_the_first_thousand(serve, root, be_command, be_env):
    """300,000 unclosed braces were a 40 MB reply (the list, twice): the server lists the first
    1,000 problems and says how many there are; the CLI, for scripts, still lists them all."""
    (root / "u.js").write_text("{\n" * 3000)
    result = serve().ok("be-balance", {"file": "u.js"})
    assert result["status"] == "unbalanced" and result["counts"] == {"{": 3000}
    assert [u["line"] for u in result["unmatched"]] == list(range(1, 1001))
    assert result["warnings"] == [
        "unmatched lists the first 1000 of 3000 problems (counts has every bracket)"
    ]
    done = subprocess.run(
        [*be_command, "balance", "-f", "u.js", "-o", "json"],
        cwd=root,
        env=be_env,
        capture_output=True,
        timeout=60,
    )
    assert len(json.loads(done.stdout)["unmatched"]) == 3000


def test_a_diff_of_a_large_edit_is_cut_at_the_read_budget(serve, root):
    """Found by the server attack: a 78-byte be-delete of 100,000 lines (preview) sent back a 3 MB
    diff, and a be-replace of a whole 200,000-line file 9.6 MB. A diff is cut to its first 100,000
    characters at a line's end, with a warning; the edit itself is whole."""
    (root / "big.txt").write_text("".join(f"line number {n}\n" for n in range(100_000)))
    server = serve()
    result = server.ok("be-delete", {"file": "big.txt", "start": 1, "end": 100_000, "preview": True})
    assert len(result["diff"]) <= 100_000 and result["diff"].endswith("\n"), len(result["diff"])
    [warning] = [w for w in result["warnings"] if w.startswith("the diff of big.txt shows its first")]
    assert "of 100003 lines" in warning, warning
    result = server.ok("be-delete", {"file": "big.txt", "start": 1, "end": 99_990})
    assert len(result["diff"]) <= 100_000 and (root / "big.txt").read_text() == "".join(
        f"line number {n}\n" for n in range(99_990, 100_000)
    )


def test_a_cli_error_with_its_places_cut_says_how_many_there_are(root, be_env):
    """The regression pass: the CLI's `-o json` AMBIGUOUS held 1,000 of 1,500 candidates with no
    word of the rest (the server's warns)."""
    (root / "m.txt").write_text("a\n" * 1500)
    done, answer = run_json("replace", "-f", "m.txt", "--old", "a", "-c", "b", cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 1 and len(error["candidates"]) == 1000, error["code"]
    assert error["warnings"] == ["candidates lists the first 1000 of 1500"], error.get("warnings")
    # (the second regression pass: text mode said nothing of the rest, and an `edit` named the first
    # item's list twice and no item's)
    done = run_cli("replace", "-f", "m.txt", "--old", "a", "-c", "b", cwd=root, env=be_env)
    assert (
        "18-18, 19-19, 20-20, … (+1480)\nwarning: candidates lists the first 1000 of 1500"
        in done.stderr.decode()
    )
    (root / "e.json").write_text(json.dumps([{"file": "m.txt", "old": "a", "content": "b"}] * 2))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    assert answer["error"]["warnings"] == [
        "failed[0].candidates lists the first 500 of 1500",
        "failed[1].candidates lists the first 500 of 1500",
    ], answer["error"].get("warnings")


def test_the_failed_items_of_an_edit_share_one_list_of_places(root, be_env, serve):
    """500 AMBIGUOUS items whose `old` stood 100 times each made a 4 MB reply: each failed item
    listed its 100 places (up to 1,000 each). All items' lists now hold LISTED_MAX places together,
    an equal share each (5 at least), and one warning says so of all of them."""
    (root / "f.txt").write_text("".join(f"line {n % 50}\n" for n in range(5000)))
    items = [{"file": "f.txt", "old": f"line {n % 50}", "content": "x"} for n in range(500)]
    (root / "e.json").write_text(json.dumps(items))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 1 and [len(one["candidates"]) for one in error["failed"]] == [5] * 500
    assert error["warnings"][-1] == (
        "500 lists of places (failed[0].candidates and the failed items after it) list 2500 of their 50000"
    ), error["warnings"]
    assert len(done.stdout) < 400_000, len(done.stdout)
    error = serve().err("be-edit", "AMBIGUOUS", {"edits": items[:20]})
    assert [len(one["candidates"]) for one in error["failed"]] == [50] * 20, error["warnings"]


def test_a_verbose_balance_lists_the_first_thousand_pairs(serve, root):
    """Found by the server attack: `verbose` sent every matched pair, uncut and unwarned: 300,000
    calls `f(a);` were a 61 MB reply. The pairs are cut as `unmatched` is."""
    (root / "p.js").write_text("f(a);\n" * 3000)
    result = serve().ok("be-balance", {"file": "p.js", "verbose": True})
    assert result["status"] == "balanced" and len(result["pairs"]) == 1000, len(result.get("pairs", ()))
    assert result["warnings"] == ["pairs lists the first 1000 of 3000 pairs"]


def test_an_edit_built_from_a_cut_line_is_refused_before_it_deletes_the_rest(serve, root):
    """Found by an attack: a read shows a 150,000-character line cut at 99,998 characters; an
    agent sends that text plus its change back for line 1 (by line, by old, or as the whole file)
    and the 50,000 characters it never saw were deleted. Content that starts like a replaced long
    line but lacks its end is now PLACEHOLDER, nothing written; a whole-line replace by other text,
    one that keeps the end, and force: true still write."""
    import random

    rng = random.Random(7)
    line = "".join(rng.choice("abcdefgh(){};= ") for _ in range(150_000))
    original = f"{line}\nend\n"
    (root / "min.js").write_text(original)
    server = serve()
    read = server.ok("be-read", {"file": "min.js"})
    shown = read["content"].split("\t", 1)[1]
    assert line.startswith(shown) and len(shown) < len(line)
    view = read["viewed_code_id"]
    error = server.err(
        "be-replace",
        "PLACEHOLDER",
        {"file": "min.js", "start": 1, "content": shown + ";x()", "viewed_code_id": view},
    )
    assert "lacks its end" in error["message"] and error["line"] == 1 and "force" in error["hint"], error
    server.err("be-write", "PLACEHOLDER", {"file": "min.js", "content": shown + ";x()\nend\n"})
    server.err("be-replace", "PLACEHOLDER", {"file": "min.js", "old": line, "content": shown + ";x()"})
    # (found by an attack: a change within the first 1,000 characters escaped the guard)
    edited = {"file": "min.js", "start": 1, "content": "Z" + shown[1:], "viewed_code_id": view}
    assert "lacks its end" in server.err("be-replace", "PLACEHOLDER", edited)["message"]
    assert (root / "min.js").read_text() == original
    server.ok("be-replace", {"file": "min.js", "old": line[:5000], "content": line[:5000] + ";y()"})
    line = line[:5000] + ";y()" + line[5000:]
    assert (root / "min.js").read_text() == f"{line}\nend\n"
    server.ok("be-replace", {"file": "min.js", "old": line[-10:], "content": line[-10:] + ";x()"})
    assert (root / "min.js").read_text() == f"{line};x()\nend\n"
    server.ok("be-replace", {"file": "min.js", "start": 1, "content": shown, "force": True})
    assert (root / "min.js").read_text() == f"{shown}\nend\n"


def test_an_edit_built_from_a_cut_line_that_repeats_itself_is_refused(serve, root):
    """Found by the encodings attack: a sparse CSV row ('0,' * 150,000), read cut at 99,998
    characters and sent back with its first cell changed, was written: 200,003 characters gone.
    The guard took the row's last 200 characters standing anywhere in the new line for its end;
    in a row that repeats itself they do. A line too short to have kept most of what was never
    shown is built from the view."""
    row = "0," * 150_000 + "0"
    original = f"id\n{row}\n"
    (root / "sparse.csv").write_text(original)
    server = serve()
    read = server.ok("be-read", {"file": "sparse.csv", "start": 2, "end": 2})
    shown = read["content"].split("\t", 1)[1]
    assert row.startswith(shown) and len(shown) < len(row)
    edited = {
        "file": "sparse.csv",
        "start": 2,
        "content": "1" + shown[1:],
        "viewed_code_id": read["viewed_code_id"],
    }
    assert "lacks its end" in server.err("be-replace", "PLACEHOLDER", edited)["message"]
    server.err("be-write", "PLACEHOLDER", {"file": "sparse.csv", "content": "id\n1" + shown[1:] + "\n"})
    assert (root / "sparse.csv").read_text() == original
    server.ok("be-replace", {"file": "sparse.csv", "start": 2, "content": "1" + row[1:]})  # (the whole row)
    assert (root / "sparse.csv").read_text() == "id\n1" + row[1:] + "\n"
    # (found by the regression pass: a line whose end stands nowhere else, its middle cut out on
    # purpose, was refused by the first version of this rule)
    import random

    rng = random.Random(3)
    line = "".join(rng.choice("abcdefgh(){};= ") for _ in range(220_000))
    (root / "min.js").write_text(line + "\n")
    server.ok("be-write", {"file": "min.js", "content": line[:50_000] + line[200_000:] + "\n"})
    assert (root / "min.js").read_text() == line[:50_000] + line[200_000:] + "\n"


def test_a_stale_view_whose_lines_read_the_same_says_what_changed(serve, root):
    """Found by the encodings attack: a file converted from LF to CRLF by another program (or given
    a final newline) made a viewed_code_id STALE_VIEW with an empty `changes` diff and the same
    `current`: nothing said what changed. The message now says it is where a read does not show."""
    (root / "a.txt").write_bytes(b"a\nb\n")
    server = serve()
    view = server.ok("be-read", {"file": "a.txt"})["viewed_code_id"]
    (root / "a.txt").write_bytes(b"a\r\nb\r\n")
    error = server.err(
        "be-replace", "STALE_VIEW", {"file": "a.txt", "start": 1, "content": "A", "viewed_code_id": view}
    )
    assert "their text is the same, but a line ending" in error["message"], error
    (root / "a.txt").write_bytes(b"a\nB\n")
    error = server.err(
        "be-replace", "STALE_VIEW", {"file": "a.txt", "start": 1, "content": "A", "viewed_code_id": view}
    )
    assert "their text is the same" not in error["message"] and "+2\tB" in error["changes"], error
    # (the contract audit: a view of an empty file that gained a line said "their text is the same")
    (root / "e.txt").write_bytes(b"")
    view = server.ok("be-read", {"file": "e.txt"})["viewed_code_id"]
    (root / "e.txt").write_bytes(b"hello\n")
    error = server.err(
        "be-insert", "STALE_VIEW", file="e.txt", after_line=0, content="x", viewed_code_id=view
    )
    assert (
        error["message"]
        == f"e.txt changed since it was read empty (viewed_code_id {view}): it has 1 line now"
    )
    assert (root / "e.txt").read_bytes() == b"hello\n"


def test_a_reply_holds_no_character_a_unicode_line_splitter_breaks_on(serve, root):
    """Found by the encodings attack: a read of a line holding U+2028, U+2029 or U+0085 sent them
    raw; valid JSON, but a client splitting lines with str.splitlines cut the reply into pieces."""
    (root / "a.txt").write_text("a\u2028b\u0085c\u2029d\n", encoding="utf-8")
    server = serve()
    assert server.ok("be-read", {"file": "a.txt"})["content"] == "1\ta\u2028b\u0085c\u2029d"
    server.close()
    lines = [x.decode("utf-8") if isinstance(x, bytes) else x for x in server.stdout_lines]
    (raw,) = [line for line in lines if '"content":"1\\ta' in line]  # (the read's reply)
    assert len(raw.splitlines()) == 1 and "\\u2028" in raw and "\\u0085" in raw, raw


def test_a_replace_by_old_at_the_end_of_a_long_line_is_no_cut_line(serve, root):
    """Found by the encodings attack: `old` 'version="1.0.0"' at the end of a 150,000-character
    line (a minified bundle) was PLACEHOLDER "built from a replaced line ... but lacks its end":
    the guard compared the whole new line with the old one, whose end the edit itself changed.
    A replace by old keeps the rest of its lines; what stands in place of old is its content."""
    line = "var a=" + "x" * 150_000 + ';version="1.0.0"'
    (root / "min.js").write_text(line + "\n")
    server = serve()
    server.ok("be-replace", {"file": "min.js", "old": 'version="1.0.0"', "content": 'version="1.0.1"'})
    assert (root / "min.js").read_text() == line.replace("1.0.0", "1.0.1") + "\n"


def test_a_read_of_long_lines_is_cut_in_characters_as_in_lines(serve, root, be_command, be_env):
    """A minified file of one 3 MB line came back whole, twice (the text and the structured
    content): 6 MB of a model's context for a default read. The server's read stops at 100,000
    characters of content as it stops at max_lines lines, at the last whole line that fits
    (truncated, next_start); a first line longer than that is shown cut, with a warning, and its
    view still covers the whole line. max_lines 0 and the CLI show everything."""
    (root / "min.js").write_text("x" * 3_000_000 + "\nend\n")
    server = serve()
    reply = server.tool_result("be-read", {"file": "min.js"})
    assert len(json.dumps(reply)) < 250_000
    read = reply["structuredContent"]
    assert (read["start"], read["end"], read["truncated"], read["next_start"]) == (1, 1, True, 2)
    assert read["content"] == "1\t" + "x" * 99_998
    assert read["warnings"] == [
        "line 1 has 3000000 characters: content shows the first 99998 (max_lines 0 shows it whole)",
        "output cut at 100000 characters; continue with start 2",
    ]
    whole = server.ok("be-read", {"file": "min.js", "max_lines": 0})
    assert whole["content"] == "1\t" + "x" * 3_000_000 + "\n2\tend" and "truncated" not in whole
    server.ok(
        "be-replace", {"file": "min.js", "start": 1, "content": "y", "viewed_code_id": read["viewed_code_id"]}
    )
    assert (root / "min.js").read_text() == "y\nend\n"

    lines = [f"{n:05d} " + "w" * 94 for n in range(3000)]  # 100 characters each: 300 kB in all
    (root / "wide.txt").write_text("\n".join(lines) + "\n")
    read = server.ok("be-read", {"file": "wide.txt"})
    shown = read["content"].split("\n")
    assert shown == [f"{n}\t{lines[n - 1]}" for n in range(1, read["end"] + 1)]
    nxt = f"{read['end'] + 1}\t{lines[read['end']]}"
    assert (
        len(read["content"]) <= 100_000 < len(read["content"]) + 1 + len(nxt)
    )  # (the last whole line that fits)
    assert read["truncated"] and read["next_start"] == read["end"] + 1
    more = server.ok("be-read", {"file": "wide.txt", "start": read["next_start"]})
    assert more["content"].split("\n")[0] == nxt
    assert server.ok("be-read", {"file": "wide.txt", "max_lines": 0})["end"] == 3000
    _done, answer = run_json("read", "-f", "min.js", cwd=root, env=be_env, command=be_command)
    assert answer["content"] == "1\ty\n2\tend"
    _done, answer = run_json("read", "-f", "wide.txt", cwd=root, env=be_env, command=be_command)
    assert answer["end"] == 3000


def test_a_mismatch_against_megabytes_sends_back_a_bounded_block(serve, root):
    """An `old` of 2 MB with one word changed found its closest block, and the server sent the
    2 MB block back whole in `actual` (the text content cut it to 30 lines, but not their
    length). `actual`, `current` and `changes` stop at 100,000 characters, at a line's end, with a
    warning; a line of megabytes in the text content stops at 4,000 characters. (The everyday run
    uses an `old` of 300 KB, three times the bound; BE_STRESS=1 the 2.7 MB.)"""
    count = scaled(12_000, 100_000)
    lines = [f"row_{n} = compute({n})" for n in range(count)]
    (root / "big.py").write_text("\n".join(lines) + "\n")
    old = lines[:]
    old[count // 2] = old[count // 2].replace("compute", "Compute")
    server = serve()
    reply = server.tool_result(
        "be-replace", {"file": "big.py", "old": "\n".join(old), "content": "x"}, timeout=120
    )
    assert reply["isError"] and len(json.dumps(reply)) < 300_000
    error = reply["structuredContent"]["error"]
    assert error["code"] == "MISMATCH" and error["closest"]["start"] == 1
    whole = "\n".join(lines)
    assert error["actual"] == whole[: whole.rfind("\n", 0, 100_000) + 1]
    assert (
        f"actual shows the first {len(error['actual'])} of its {len(whole)} characters" in error["warnings"]
    )
    (root / "one.txt").write_text("z" * 1_000_000 + "\n")
    reply = server.tool_result("be-replace", {"file": "one.txt", "start": 1, "old": "q", "content": "x"})
    error = reply["structuredContent"]["error"]
    assert error["actual"] == "z" * 100_000 and len(reply["content"][0]["text"]) < 10_000
    assert (root / "big.py").read_text() == "\n".join(lines) + "\n"


def test_an_edit_beside_a_line_of_megabytes_sends_a_bounded_diff(serve, root, be_command, be_env):
    """Replacing the last line of a minified file sent its 3 MB first line back twice (the diff's
    context, in the text and the structured content). The server's diff lines stop at 2,000
    characters, with a warning; the change itself is in the diff whole; the CLI cuts nothing."""
    (root / "min.js").write_text("x" * 3_000_000 + "\nend\n")
    server = serve()
    for name, args in [
        ("be-replace", {"file": "min.js", "start": 2, "content": "END"}),
        ("be-edit", {"edits": [{"file": "min.js", "start": 2, "content": "End"}]}),
    ]:
        reply = server.tool_result(name, args)
        assert not reply.get("isError") and len(json.dumps(reply)) < 20_000
        result = reply["structuredContent"]
        diff = result["diff"] if "diff" in result else result["files"][0]["diff"]
        assert " " + "x" * 1999 in diff.split("\n") and diff.endswith(("-end\n+END", "-END\n+End"))
        assert result["warnings"][-1] == "diff lines cut to their first 2000 characters: 1"
    _done, answer = run_json(
        "replace", "-f", "min.js", "-s", "2", "-c", "e", cwd=root, env=be_env, command=be_command
    )
    assert " " + "x" * 3_000_000 in answer["diff"].split("\n")
    assert (root / "min.js").read_text() == "x" * 3_000_000 + "\ne\n"


def test_new_text_with_a_nul_character_is_refused(serve, root, be_command, be_env):
    """`"\\u0000"` in a model's JSON is a NUL character: written into a text file it made the file
    binary, and every later read or edit of it was BINARY_FILE. Every way of writing text refuses
    it (naming its line), and nothing is changed."""
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve()
    calls = [
        ("be-replace", {"file": "a.txt", "start": 1, "content": "x\u0000y"}, 1),
        ("be-insert", {"file": "a.txt", "after_line": 0, "content": "ok\nx\u0000"}, 2),
        ("be-write", {"file": "a.txt", "content": "a\nb\nc\u0000"}, 3),
        ("be-write", {"file": "new.txt", "content": "\u0000"}, 1),
        ("be-edit", {"edits": [{"file": "a.txt", "start": 2, "content": "\u0000"}]}, 1),
        ("be-replace", {"file": "a.txt", "old": "two", "content": "ok\nt\u0000o"}, 2),
        ("be-edit", {"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+o\u0000e\n two\n"}, 1),
    ]
    for name, args, line in calls:
        error = server.err(name, "INVALID_ARGUMENT", args)
        assert f"NUL character (U+0000) on its line {line}" in error["message"], error
    assert (root / "a.txt").read_text() == "one\ntwo\n" and not (root / "new.txt").exists()
    (root / "nul.bin").write_bytes(b"x\0y\n")
    done, answer = run_json("replace", "-f", "a.txt", "-s", "1", "--content-file", "nul.bin", cwd=root, env=be_env,
                            command=be_command)  # fmt: skip
    assert (
        done.returncode == 2 and "NUL character" in answer["error"]["message"]
    )  # (INVALID_ARGUMENT: exit 2)
    assert (root / "a.txt").read_text() == "one\ntwo\n"


def test_a_nul_the_file_holds_on_the_line_of_an_old_is_kept(serve, root):
    """Found by a fuzzer: in a UTF-16 file (where NUL is text), a replace by `old` of `b` on the
    line `a<NUL>b` was refused as new text holding a NUL: the whole rebuilt line was checked, the
    file's own NUL too. Only the new text is."""
    (root / "u.txt").write_bytes("a\0b\n".encode("utf-16"))
    server = serve()
    server.ok("be-replace", {"file": "u.txt", "old": "b", "content": "c"})
    server.ok("be-edit", {"edits": [{"file": "u.txt", "old": "c", "content": "d"}]})
    assert (root / "u.txt").read_bytes() == "a\0d\n".encode("utf-16")
    error = server.err("be-replace", "INVALID_ARGUMENT", {"file": "u.txt", "old": "d", "content": "e\u0000"})
    assert "NUL character (U+0000) on its line 1" in error["message"], error


def test_an_old_found_a_hundred_thousand_times_is_answered_at_once_and_listed_in_part(serve, root):
    """`old: "a"` in a file of 300,000 lines "a" took 89 s (each match's line was counted from the
    top of the file) and sent back a 10 MB list of candidates; a marker target found on each line
    sent the same list. The places are found in one pass now, and the server lists the first 1,000
    of them, saying how many there are (the message still counts them all)."""
    (root / "m.txt").write_text("a\n" * 100_000)
    server = serve()
    for name, args in [
        ("be-replace", {"file": "m.txt", "old": "a", "content": "b"}),
        ("be-replace", {"file": "m.txt", "old": "a  ", "content": "b"}),  # (the trailing-space tier)
        ("be-delete", {"file": "m.txt", "target": "marker:a"}),
    ]:
        reply = server.tool_result(name, args, timeout=30)
        error = reply["structuredContent"]["error"]
        assert error["code"] == "AMBIGUOUS" and len(json.dumps(reply)) < 200_000
        assert error["candidates"][:2] == [{"start": 1, "end": 1}, {"start": 2, "end": 2}]
        assert len(error["candidates"]) == 1000 and "100000" in error["message"]
        assert error["warnings"] == ["candidates lists the first 1000 of 100000"]
    assert (root / "m.txt").read_text() == "a\n" * 100_000


def test_the_tools_own_snapshots_are_never_written_by_a_call(serve, root):
    """With the cache inside the root (a server started in the home folder keeps it in ~/.cache),
    a call could write over the snapshots its own rollback needs. Writing into the tool's state
    folders is SANDBOX, for every writing tool and for a whole be-edit; reading them is allowed,
    and the rollback still works."""
    (root / "a.txt").write_text("a\n")
    server = serve(env={"BETTER_EDIT_CACHE_DIR": str(root / ".cache-be")})
    server.ok("be-replace", file="a.txt", start=1, content="A")
    [snapshot] = [p.relative_to(root).as_posix() for p in (root / ".cache-be" / "snapshots").rglob("*.json")]
    before = (root / snapshot).read_bytes()
    for name, args in [
        ("be-write", {"file": snapshot, "content": "{}"}),
        ("be-replace", {"file": snapshot, "start": 1, "content": "{}"}),
        ("be-write", {"file": ".cache-be/journal/new.json", "content": "{}"}),
        (
            "be-edit",
            {
                "edits": [
                    {"file": "a.txt", "start": 1, "content": "B"},
                    {"file": snapshot, "start": 1, "content": "x"},
                ]
            },
        ),
    ]:
        error = server.err(name, "SANDBOX", args)
        assert "snapshots, chips, commit records and kept old texts" in error["message"], error
    assert (root / snapshot).read_bytes() == before and (root / "a.txt").read_text() == "A\n"
    assert not (root / ".cache-be" / "journal" / "new.json").exists()
    assert server.ok("be-read", file=snapshot)["total"] == 1
    server.ok("be-trx-rollback")
    assert (root / "a.txt").read_text() == "a\n"


def test_a_path_ending_in_a_slash_or_through_a_file_says_so(serve, root):
    """`be-write` of "new/" made a file called "new"; "f.txt/b.txt" was "file not found" with a
    hint to resolve paths against "f.txt/b.txt". A trailing slash names a folder; a file in the
    middle of a path is named."""
    server = serve()
    (root / "f.txt").write_text("a\n")
    error = server.err("be-write", "INVALID_ARGUMENT", {"file": "new/", "content": "x"})
    assert "names a folder" in error["message"]
    server.err("be-read", "INVALID_ARGUMENT", {"file": "f.txt/"})
    error = server.err("be-write", "NOT_FOUND", {"file": "f.txt/b.txt", "content": "x"})
    assert "f.txt is a file, not a folder" in error["message"] and "resolve against" not in error["hint"]
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"] and (root / "f.txt").read_text() == "a\n"


def test_stdout_only_protocol_even_when_things_go_wrong(serve, root, cache_dir):
    """Warnings, errors and store problems go to stderr; stdout holds only the replies."""
    (root / "a.txt").write_text("x\n")
    workspace_id = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    chips = cache_dir / "chips" / workspace_id
    chips.mkdir(parents=True)
    (chips / "chip-abcdef.json").write_text("this is not json")  # an unreadable store file
    server = serve()
    server.err("be-read", "NOT_FOUND", file="missing.txt")
    server.send_line("{broken")
    server.recv()
    server.ok("be-read", file="a.txt")
    assert server.ok("be-insert-chip")["chips"] == []
    assert server.close() == 0
    server.check_stdout()
    # initialize, read error, parse error, tools/list (schema check), read, chip list
    assert len(server.stdout_lines) == 6
    assert b"chip-abcdef.json" in server.stderr


# =================================================================================================
# 2. Tools (docs/mcp.md)
# =================================================================================================


def test_tools_list_has_all_twelve_with_schemas_and_annotations(serve):
    jsonschema = pytest.importorskip("jsonschema")  # (in the test extra; skipped cleanly without it)
    server = serve()
    tools = server.tools()
    instructions = server.request("initialize", {"protocolVersion": "2025-06-18"})["result"]["instructions"]
    assert [t["name"] for t in tools] == ["be-" + b for b in TOOL_BASES]
    for tool in tools:
        base = canonical(tool["name"])
        assert tool["title"] and isinstance(tool["title"], str)
        assert tool["description"] and isinstance(tool["description"], str)
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        jsonschema.Draft202012Validator.check_schema(schema)
        for name, prop in schema["properties"].items():
            # an argument is described in its tool, or once in the instructions (shared arguments)
            assert prop.get("description") or name in instructions, (base, name)
        out = tool["outputSchema"]
        assert out["properties"]["status"]["enum"][-1] == "error" and "error" in out["properties"]
        assert out["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(out)
        hints = tool["annotations"]
        assert hints["openWorldHint"] is False
        assert hints["readOnlyHint"] is (base in READ_ONLY), base
        if base in DESTRUCTIVE:
            assert hints["destructiveHint"] is True, base
        if base in READ_ONLY:
            assert hints.get("destructiveHint") is not True, base
        assert isinstance(hints["idempotentHint"], bool)
    required = {canonical(t["name"]): set(t["inputSchema"]["required"]) for t in tools}
    assert required["read"] == {"file"}
    assert required["replace"] == {"file", "content"}
    assert required["insert"] == {"file", "after_line", "content"}
    assert required["write"] == {"file", "content"}
    assert required["func-range"] == {"file", "line"}
    assert required["trx-status"] == set()


@pytest.mark.parametrize(
    "flags, expected",
    [
        ((), ["be-" + b for b in TOOL_BASES]),
        (("--no-prefix",), list(TOOL_BASES)),
        (("--underscore-names",), ["be_" + b.replace("-", "_") for b in TOOL_BASES]),
        (("--no-prefix", "--underscore-names"), [b.replace("-", "_") for b in TOOL_BASES]),
    ],
)
def test_naming_modes_and_every_spelling_callable(serve, root, flags, expected):
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve(*flags)
    assert [t["name"] for t in server.tools()] == expected
    for spelling in ("be-read", "read", "be_read", "BE-READ"):
        assert server.ok(spelling, file="a.txt")["total"] == 2
    for spelling in ("be-trx-status", "trx-status", "be_trx_status", "trx_status"):
        assert server.ok(spelling)["snapshots"] == []
    for spelling in ("be-func-range", "func-range", "be_func_range", "func_range"):
        result = server.tool_result(spelling, file="a.txt", line=1)
        assert result["content"][0]["type"] == "text"  # a tool result (ok or tool error), never -32602
    reply = server.request("tools/call", {"name": "be-nope"})
    assert reply["error"]["code"] == -32602
    assert any(name in reply["error"]["message"] for name in expected)
    # (the contract audit: argument errors named the tool `func-range`, whatever the mode)
    listed = expected[TOOL_BASES.index("func-range")]
    missing = server.err("be-func-range", "INVALID_ARGUMENT", file="a.txt")["message"]
    assert missing == f"missing required argument 'line' for {listed}", missing
    unknown = server.err("be-func-range", "INVALID_ARGUMENT", file="a.txt", line=1, x=1)["message"]
    assert unknown.startswith(f"unknown argument 'x' for {listed};"), unknown
    # (the regression pass: an edit's item is named by its op, not by a tool to call instead)
    item = server.err("be-edit", "INVALID_ARGUMENT", edits=[{"op": "replace", "file": "a.txt", "start": 1}])
    assert "missing required argument 'content' for replace" in item["message"], item


def test_lang_zh_descriptions_and_errors(serve, root):
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve("--lang", "zh")
    for tool in server.tools():
        assert CJK.search(tool["description"]), tool["name"]
        for prop in tool["inputSchema"]["properties"].values():
            assert "description" not in prop or CJK.search(prop["description"]), (tool["name"], prop)
    errors = [
        server.err("be-read", "OUT_OF_RANGE", file="a.txt", start=9),
        server.err("be-read", "NOT_FOUND", file="missing.txt"),
        server.err("be-read", "INVALID_ARGUMENT", file="a.txt", bogus=1),
        server.err("be-replace", "MISMATCH", file="a.txt", start=1, old="zzz", content="x"),
        server.err("be-insert", "INVALID_ARGUMENT", file="a.txt", after_line=1),
        server.err("be-replace", "AMBIGUOUS", file="a.txt", old="o", content="x"),
        server.err(
            "be-delete", "STALE_VIEW", file="a.txt", start=1, viewed_code_id="v1:1-2:0123456789abcdef"
        ),
        server.err("be-insert-chip", "NOT_FOUND", {"from": "chip://abcdef"}),
        server.err("be-trx-rollback", "NOT_FOUND"),
    ]
    for error in errors:
        for text in (error["message"], error["hint"]):
            assert CJK.search(text), error
            assert not english_phrase(text), error
    assert (root / "a.txt").read_text() == "one\ntwo\n"
    reply = server.request("no/such")
    assert CJK.search(reply["error"]["message"])


def test_lang_zh_mistyped_argument_message_is_all_chinese(serve, root):
    (root / "a.txt").write_text("one\n")
    server = serve("--lang", "zh")
    for error in (
        server.err("be-read", "INVALID_ARGUMENT", file="a.txt", start=True),
        server.err("be-insert", "INVALID_ARGUMENT", file="a.txt", after_line=0, content=5),
        server.err("be-read", "INVALID_ARGUMENT", file="a.txt", brief="maybe"),
    ):
        assert not english_phrase(error["message"]), error["message"]


def test_lang_zh_invalid_request_message_is_all_chinese(serve):
    server = serve("--lang", "zh")
    server.send_line("42")  # (not an object, and not a batch)
    message = server.recv()["error"]["message"]
    assert CJK.search(message) and not english_phrase(message), message


def test_results_validate_against_output_schema(serve, root):
    """Server.ok (check_schemas) validates every success against the outputSchema; exercise many result shapes."""
    (root / "a.txt").write_bytes(b"alpha\r\nbeta\nno newline")
    server = serve()
    server.ok("be-read", file="a.txt")
    server.ok("be-read", file="a.txt", start=1, end=99)
    server.ok("be-read", file="a.txt", max_lines=1)
    server.ok("be-read", file="a.txt", brief=True)
    server.ok("be-replace", file="a.txt", start=1, content="ALPHA", preview=True)
    server.ok("be-replace", file="a.txt", old="beta", content="BETA", format="plain")
    server.ok("be-insert", file="a.txt", after_line=0, content="top")
    deleted = server.ok("be-delete", file="a.txt", start=1)
    server.ok("be-write", file="b.txt", content="new\n")
    server.ok("be-write", file="b.txt", content="newer\n")
    server.ok("be-balance", file="a.txt", verbose=True)
    server.ok("be-insert-chip")
    server.ok("be-insert-chip", {"from": f"chip://{deleted['chip']}"})
    server.ok("be-insert-chip", {"from": f"chip://{deleted['chip']}", "to": "a.txt:0"})
    server.ok("be-trx-status")
    server.ok("be-trx-rollback")
    server.ok("be-trx-commit")


def test_tool_error_shape_small_arguments(serve, root):
    (root / "a.txt").write_text("one\n")
    server = serve()
    result = server.tool_result("be-read", file="a.txt", start=5)
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert set(error) >= {"code", "message", "hint"} and error["code"] == "OUT_OF_RANGE"
    assert error["total"] == 1
    assert result["content"] == [
        {"type": "text", "text": f"OUT_OF_RANGE: {error['message']}\nhint: {error['hint']}"}
    ]
    assert "chip" not in error
    assert server.ok("be-insert-chip")["chips"] == []


def test_tool_error_with_large_arguments_saves_a_chip(serve, root):
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve()
    content = "a replacement that is long enough\n\tto make the arguments exceed fifty bytes\n"
    arguments = {"file": "a.txt", "start": 1, "old": "not what is there", "content": content}
    assert len(json.dumps(arguments)) > 50
    result = server.tool_result("be-replace", arguments)
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "MISMATCH" and error["actual"] == "one" and error["found_at"] == []
    text = result["content"][0]["text"]
    chip_id = error["chip"]
    # the text also carries what the model needs to fix the call: here the actual text of the lines
    assert text == (
        f"MISMATCH: {error['message']}\nhint: {error['hint']}\nactual:\none\narguments saved as chip://{chip_id}"
    )
    record = server.ok("be-insert-chip", {"from": f"chip://{chip_id}"})
    assert record["args"] == arguments
    assert record["text"] == content
    assert "MISMATCH" in record["err_msg"]
    # as: text gives the content argument back, byte for byte
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "a.txt:2"})
    assert (root / "a.txt").read_text() == "one\ntwo\n" + content


def test_a_failed_call_with_a_number_too_long_for_python_still_keeps_its_content(serve, root):
    """Found by the server attack: a `start` of 5,000 digits (kept as its digits: Python's int()
    takes 4,300) made json.dumps fail, and the call's long content was kept in no chip; a `start`
    of 4,000 digits was echoed twice in the message (16 KB)."""
    (root / "t.py").write_text("a\n")
    server = serve()
    content = "def important():\n    return 42\n" * 20
    server.send_line(
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"be-replace","arguments":'
        f'{{"file":"t.py","start":{"9" * 5000},"content":{json.dumps(content)}}}}}}}'
    )
    error = server.recv()["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_ARGUMENT" and "chip" in error, error
    assert server.ok("be-insert-chip", {"from": f"chip://{error['chip']}"})["text"] == content
    server.send_line(
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"be-read","arguments":'
        f'{{"file":"t.py","start":{"9" * 4000}}}}}}}'
    )
    reply = server.recv()["result"]
    assert reply["isError"] is True and len(json.dumps(reply)) < 2000, len(json.dumps(reply))
    assert (root / "t.py").read_text() == "a\n"


def test_arguments_as_a_json_string(serve, root):
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve()
    reply = server.request(
        "tools/call", {"name": "be-read", "arguments": json.dumps({"file": "a.txt", "start": 2})}
    )
    result = reply["result"]
    assert not result.get("isError")
    assert result["structuredContent"]["content"] == "2\ttwo"
    reply = server.request(
        "tools/call",
        {"name": "be-replace", "arguments": json.dumps({"file": "a.txt", "start": 1, "content": "ONE"})},
    )
    assert not reply["result"].get("isError")
    assert (root / "a.txt").read_text() == "ONE\ntwo\n"


@pytest.mark.parametrize(
    "tool, arguments, name",
    [
        ("be-read", {"file": "a.txt", "bogus": 1}, "bogus"),
        ("be-read", {"file": "a.txt", "start": "two"}, "start"),
        ("be-read", {"file": "a.txt", "start": True}, "start"),
        ("be-read", {"file": "a.txt", "start": 1.5}, "start"),
        ("be-read", {"file": 7}, "file"),
        ("be-read", {}, "file"),
        ("be-replace", {"file": "a.txt", "start": 1, "content": ["x"]}, "content"),
        ("be-replace", {"file": "a.txt", "start": 1, "content": "x", "format": "fancy"}, "format"),
        ("be-delete", {"file": "a.txt", "start": 1, "force": "yes please"}, "force"),
        ("be-insert", {"file": "a.txt", "content": "x"}, "after_line"),
        ("be-trx-rollback", {"steps": "many"}, "steps"),
        ("be-insert-chip", {"as": "poem"}, "as"),
    ],
)
def test_unknown_or_mistyped_arguments(serve, root, tool, arguments, name):
    (root / "a.txt").write_text("one\ntwo\n")
    before = file_state(root / "a.txt")
    server = serve()
    error = server.err(tool, "INVALID_ARGUMENT", arguments)
    assert repr(name) in error["message"] or name in error["message"], error
    if name == "bogus":
        assert "file" in error["message"] and "max_lines" in error["message"]  # the accepted ones
    assert file_state(root / "a.txt") == before


def test_numeric_strings_and_integral_floats_accepted(serve, root):
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    server = serve()
    assert server.ok("be-read", file="a.txt", start="2", end=3.0)["content"] == "2\ttwo\n3\tthree"
    # (the contract audit: "3.0", a numeric string of an integral number, was refused)
    assert server.ok("be-read", file="a.txt", start="2.0", end=" 3.00 ")["content"] == "2\ttwo\n3\tthree"
    for wrong in ("2.5", "1e1", "2.0.0", ".0"):
        server.err("be-read", "INVALID_ARGUMENT", file="a.txt", start=wrong)


def test_tool_errors_never_change_the_file(serve, root):
    path = root / "a.txt"
    path.write_bytes(b"same\r\nsame\nthird line\n\tindented  \nlast")
    server = serve()
    token = server.ok("be-read", file="a.txt", start=3, end=3)["viewed_code_id"]
    before = file_state(path)
    long = "a long content argument that certainly exceeds fifty bytes of JSON\n"
    errors = [
        server.err("be-replace", "MISMATCH", file="a.txt", start=3, old="not third", content=long),
        server.err("be-replace", "MISMATCH", file="a.txt", old="nowhere to be found", content=long),
        server.err("be-replace", "AMBIGUOUS", file="a.txt", old="same", content=long),
        server.err("be-replace", "OUT_OF_RANGE", file="a.txt", start=6, content=long),
        server.err("be-delete", "OUT_OF_RANGE", file="a.txt", start=2, end=9),
        server.err("be-insert", "OUT_OF_RANGE", file="a.txt", after_line=6, content=long),
        server.err("be-replace", "INVALID_ARGUMENT", file="a.txt", start=3, end=2, content=long),
        server.err("be-insert", "INVALID_ARGUMENT", file="a.txt", after_line=-2, content=long),
        server.err("be-delete", "INVALID_ARGUMENT", file="a.txt", start=0),
        server.err("be-delete", "AMBIGUOUS", file="a.txt", target={"kind": "marker", "value": "same"}),
        server.err("be-delete", "NOT_FOUND", file="a.txt", target={"kind": "marker", "value": "zzz"}),
        server.err("be-write", "INVALID_ARGUMENT", file="a.txt", content=None),
    ]
    assert errors[2]["candidates"] == [{"start": 1, "end": 1}, {"start": 2, "end": 2}]
    assert errors[3]["total"] == 5
    assert file_state(path) == before
    # a stale view: change line 3 from outside, then every edit with the token is refused
    path.write_bytes(b"same\r\nsame\nTHIRD line\n\tindented  \nlast")
    before = file_state(path)
    server.err("be-replace", "STALE_VIEW", file="a.txt", start=3, content=long, viewed_code_id=token)
    server.err("be-delete", "STALE_VIEW", file="a.txt", start=3, viewed_code_id=token)
    server.err("be-insert", "STALE_VIEW", file="a.txt", after_line=3, content="x", viewed_code_id=token)
    assert file_state(path) == before
    assert server.ok("be-trx-status")["snapshots"] == []  # no snapshot for a failed edit
    assert not [n for n in os.listdir(root) if n.endswith(".tmp")]


# =================================================================================================
# 3. viewed_code_id (docs/behaviour.md#viewed_code_id)
# =================================================================================================


def test_viewed_code_id_format_and_hash(serve, root):
    (root / "a.txt").write_bytes(b"one\r\ntwo\nthree\n")
    result = serve().ok("be-read", file="a.txt", start=2, end=3)
    token = result["viewed_code_id"]
    assert re.fullmatch(
        r"v1:2-3:[0-9a-f]{16}:u10\.[0-9a-f]{8}\.[0-9a-f]{8}\.3\.[0-9a-f]{8}\.00000000", token
    )  # (lines 2-3, 10 bytes, stand nowhere else, in 3 lines; a line above them, none below)
    assert result["path"] == os.path.realpath(root / "a.txt")
    (root / "a.txt").write_bytes(b"one\r\ntwo\r\nthree\n")  # only a terminator in the range changes
    assert serve().ok("be-read", file="a.txt", start=2, end=3)["viewed_code_id"] != token
    (root / "a.txt").write_bytes(b"ONE\r\ntwo\nthree\n")  # outside the range: same hash, and it holds
    again = serve().ok("be-read", file="a.txt", start=2, end=3)["viewed_code_id"]
    assert again.split(":")[:3] == token.split(":")[:3] and again != token  # (the line above is marked)
    serve().ok("be-replace", file="a.txt", start=3, content="THREE", viewed_code_id=token)


def test_edits_with_a_fresh_viewed_code_id_succeed(serve, root):
    path = root / "a.txt"
    path.write_text(numbered(6))
    server = serve()
    token = server.ok("be-read", file="a.txt", start=2, end=4)["viewed_code_id"]
    result = server.ok("be-replace", file="a.txt", start=3, content="THREE", viewed_code_id=token)
    assert "warnings" not in result
    token = server.ok("be-read", file="a.txt", start=2, end=4)["viewed_code_id"]
    result = server.ok("be-insert", file="a.txt", after_line=3, content="inserted", viewed_code_id=token)
    assert "warnings" not in result
    token = server.ok("be-read", file="a.txt", start=2, end=5)["viewed_code_id"]
    server.ok("be-delete", file="a.txt", start=4, viewed_code_id=token)
    token = server.ok("be-read", file="a.txt")["viewed_code_id"]
    server.ok("be-replace", file="a.txt", old="line 5", content="five", viewed_code_id=token)
    assert path.read_text() == "line 1\nline 2\nTHREE\nline 4\nfive\nline 6\n"


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("be-replace", {"start": 3, "content": "new three"}),
        ("be-replace", {"old": "line 3", "content": "new three"}),
        ("be-insert", {"after_line": 3, "content": "new"}),
        ("be-delete", {"start": 3}),
    ],
)
def test_stale_view_refuses_and_explains(serve, root, tool, arguments):
    path = root / "a.txt"
    path.write_text(numbered(6))
    server = serve()
    token = server.ok("be-read", file="a.txt", start=2, end=4)["viewed_code_id"]
    path.write_text(numbered(6).replace("line 3", "changed 3"))  # someone else edits
    if "old" in arguments:
        path.write_text(numbered(6).replace("line 2", "changed 2"))
    before = file_state(path)
    error = server.err(tool, "STALE_VIEW", dict(arguments, file="a.txt", viewed_code_id=token))
    assert file_state(path) == before
    n = 2 if "old" in arguments else 3
    lines = {2: "line 2", 3: "line 3", 4: "line 4"}
    lines[n] = f"changed {n}"
    assert error["current"] == "\n".join(f"{k}\t{v}" for k, v in lines.items())
    changes = error["changes"].splitlines()  # a unified diff: viewed text -> current text
    assert f"-{n}\tline {n}" in changes and f"+{n}\tchanged {n}" in changes
    assert server.ok("be-trx-status")["snapshots"] == []


def test_the_server_remembers_views_up_to_a_budget_of_characters(serve, root):
    """Found by measuring: a server remembered the text of its last 256 reads whatever their size,
    and full reads of a 16 MB file after each edit grew it by 18 MB a read. Views are now also
    bounded by characters (32 Mi): the oldest is forgotten first, and its STALE_VIEW then comes
    without the diff, while a newer one still has it."""
    path = root / "big.txt"
    path.write_text(
        "".join(f"{n:07d} a line of a large file, long enough to add up quickly\n" for n in range(200_000))
    )
    server = serve()
    tokens = []
    for n in range(3):  # three views of about 14 million characters each
        tokens.append(server.ok("be-read", file="big.txt", max_lines=0, brief=True)["viewed_code_id"])
        server.ok("be-replace", file="big.txt", start=1, content=f"edit {n}", brief=True)
    oldest = server.err(
        "be-insert", "STALE_VIEW", file="big.txt", after_line=1, content="x", viewed_code_id=tokens[0]
    )
    newest = server.err(
        "be-insert", "STALE_VIEW", file="big.txt", after_line=1, content="x", viewed_code_id=tokens[2]
    )
    assert "changes" not in oldest
    assert newest["changes"].splitlines()[2:] == ["@@ -1,4 +1,4 @@", "-1\tedit 1", "+1\tedit 2"] + [
        f" {k}\t{k - 1:07d} a line of a large file, long enough to add up quickly" for k in (2, 3, 4)
    ]


def test_stale_view_when_the_viewed_range_is_gone(serve, root):
    path = root / "a.txt"
    path.write_text(numbered(6))
    server = serve()
    token = server.ok("be-read", file="a.txt", start=4, end=6)["viewed_code_id"]
    path.write_text(numbered(3))
    before = file_state(path)
    server.err("be-replace", "STALE_VIEW", file="a.txt", start=1, content="x", viewed_code_id=token)
    assert file_state(path) == before


def test_viewed_code_id_works_across_servers_and_cli(serve, cli, root):
    path = root / "a.txt"
    path.write_text(numbered(5))
    reader = serve()
    token = reader.ok("be-read", file="a.txt", start=1, end=3)["viewed_code_id"]
    reader.close()
    editor = serve()
    editor.ok("be-replace", file="a.txt", start=2, content="TWO", viewed_code_id=token)
    assert path.read_text() == numbered(5).replace("line 2", "TWO")
    # the token is now stale: another server says so (without `changes`: it never saw the text)
    error = serve().err("be-delete", "STALE_VIEW", file="a.txt", start=2, viewed_code_id=token)
    assert error["current"] == "1\tline 1\n2\tTWO\n3\tline 3"
    # the CLI checks a server's token too
    token = editor.ok("be-read", file="a.txt", start=1, end=3)["viewed_code_id"]
    done = cli("replace", "-f", "a.txt", "-s", "3", "-c", "THREE", "--viewed-code-id", token, "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "ok"
    assert path.read_text() == "line 1\nTWO\nTHREE\nline 4\nline 5\n"
    done = cli("delete", "-f", "a.txt", "-s", "1", "--viewed-code-id", token, "-o", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "STALE_VIEW"
    assert path.read_text() == "line 1\nTWO\nTHREE\nline 4\nline 5\n"
    # and a server accepts a token the CLI printed
    done = cli("read", "-f", "a.txt", "-s", "4", "-e", "5", "-o", "json")
    token = json.loads(done.stdout)["viewed_code_id"]
    editor.ok("be-delete", file="a.txt", start=5, viewed_code_id=token)
    assert path.read_text() == "line 1\nTWO\nTHREE\nline 4\n"


def test_viewed_code_id_of_an_empty_file_and_through_a_symlink(serve, root):
    (root / "empty.txt").write_bytes(b"")
    (root / "a.txt").write_text("one\ntwo\n")
    os.symlink("a.txt", root / "link.txt")
    server = serve()
    token = server.ok("be-read", file="empty.txt")["viewed_code_id"]
    server.ok("be-insert", file="empty.txt", after_line=0, content="first", viewed_code_id=token)
    assert (root / "empty.txt").read_bytes() == b"first\n"
    token = server.ok("be-read", file="link.txt")["viewed_code_id"]  # the hash uses the real path
    server.ok("be-replace", file="a.txt", start=2, content="TWO", viewed_code_id=token)
    assert (root / "a.txt").read_text() == "one\nTWO\n" and (root / "link.txt").is_symlink()


def test_edit_outside_the_viewed_range_warns(serve, root):
    path = root / "a.txt"
    path.write_text(numbered(10))
    server = serve()
    token = server.ok("be-read", file="a.txt", start=1, end=2)["viewed_code_id"]
    result = server.ok("be-replace", file="a.txt", start=8, content="EIGHT", viewed_code_id=token)
    assert any("outside the viewed lines 1-2" in w for w in result["warnings"]), result
    assert "EIGHT" in path.read_text()


def test_malformed_viewed_code_id(serve, root):
    (root / "a.txt").write_text("one\n")
    before = file_state(root / "a.txt")
    server = serve()
    for token in ("abc", ""):  # (an empty one checked nothing: `"$ID"` of an unset variable)
        error = server.err(
            "be-replace", "INVALID_ARGUMENT", file="a.txt", start=1, content="x", viewed_code_id=token
        )
        assert "viewed_code_id" in error["message"] and "leave the argument out" in error["hint"]
        assert file_state(root / "a.txt") == before
    error = server.err(
        "be-edit",
        "INVALID_ARGUMENT",
        edits=[{"file": "a.txt", "start": 1, "content": "x", "viewed_code_id": ""}],
    )
    assert file_state(root / "a.txt") == before


# =================================================================================================
# 4. Transactions (docs/transactions.md)
# =================================================================================================


def test_trx_status_newest_first_metadata_only(serve, root):
    (root / "a.txt").write_text("SECRET-BEFORE-A\n")
    (root / "b.txt").write_text("SECRET-BEFORE-B\n")
    server = serve()
    ids = [
        server.ok("be-replace", file="a.txt", start=1, content="SECRET-AFTER-A")["event_id"],
        server.ok("be-write", file="b.txt", content="SECRET-AFTER-B\n")["event_id"],
        server.ok("be-write", file="c.txt", content="SECRET-CREATED-C\n")["event_id"],
        server.ok("be-insert", file="a.txt", after_line=1, content="SECRET-INSERTED")["event_id"],
    ]
    assert all(re.fullmatch(r"[0-9a-f]{6}|[0-9a-f]{12}", i) for i in ids) and len(set(ids)) == 4
    server.send({"jsonrpc": "2.0", "id": "st", "method": "tools/call", "params": {"name": "be-trx-status"}})
    raw = server.lines.get(timeout=REPLY_TIMEOUT)
    assert b"SECRET" not in raw
    snapshots = json.loads(raw)["result"]["structuredContent"]["snapshots"]
    assert [s["event_id"] for s in snapshots] == ids[::-1]
    for snap in snapshots:
        assert set(snap) == {"event_id", "tool", "file", "created_at", "summary"}
        assert os.path.isabs(snap["file"])
    assert [s["tool"] for s in snapshots] == ["insert", "write", "write", "replace"]
    assert snapshots[0]["file"] == os.path.realpath(root / "a.txt")


def test_rollback_by_steps_event_id_and_file(serve, root):
    a, b = root / "a.txt", root / "b.txt"
    a.write_text("a0\n")
    b.write_bytes(b"b0\r\n")
    server = serve()
    e1 = server.ok("be-replace", file="a.txt", start=1, content="a1")["event_id"]
    e2 = server.ok("be-replace", file="b.txt", start=1, content="b1")["event_id"]
    e3 = server.ok("be-replace", file="a.txt", start=1, content="a2")["event_id"]
    e4 = server.ok("be-replace", file="b.txt", start=1, content="b2")["event_id"]
    e5 = server.ok("be-replace", file="a.txt", start=1, content="a3")["event_id"]
    # per file: only a.txt's newest
    result = server.ok("be-trx-rollback", file="a.txt")
    assert result["rolled_back"] == [e5] and result["files"] == [os.path.realpath(a)]
    assert a.read_text() == "a2\n" and b.read_bytes() == b"b2\r\n"
    # by steps, across files, newest first
    result = server.ok("be-trx-rollback", steps=2)
    assert result["rolled_back"] == [e4, e3]
    assert a.read_text() == "a1\n" and b.read_bytes() == b"b1\r\n"
    # by event id: down to and including it
    result = server.ok("be-trx-rollback", event_id=e1)
    assert result["rolled_back"] == [e2, e1]
    assert a.read_text() == "a0\n" and b.read_bytes() == b"b0\r\n"
    assert server.ok("be-trx-status")["snapshots"] == []
    server.err("be-trx-rollback", "NOT_FOUND")
    server.err("be-trx-rollback", "NOT_FOUND", event_id="abcdef")


def test_a_rollback_that_undoes_another_processs_edit_says_so(serve, root):
    """Found by the races attack: with two servers in one workspace, `be-trx-rollback {}` from A
    undid B's later edit of another file, answered ok, and neither A's model nor B was told whose
    edit that was. The rollback is still the workspace's (docs/transactions.md); each undone event
    another process made is named in a warning. Its own edits give none."""
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    one, two = serve(), serve()
    one.ok("be-replace", file="a.txt", start=1, content="A")
    theirs = two.ok("be-replace", file="b.txt", start=1, content="B")["event_id"]
    result = one.ok("be-trx-rollback")
    assert result["rolled_back"] == [theirs] and (root / "b.txt").read_text() == "b\n", result
    assert any(
        f"event {theirs} (" in w and "not made by this server process" in w for w in result["warnings"]
    ), result
    mine = one.ok("be-trx-rollback")
    assert (root / "a.txt").read_text() == "a\n" and "warnings" not in mine, mine


def test_rollback_conflict_rolls_back_nothing_then_force(serve, root):
    a, b = root / "a.txt", root / "b.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    server = serve()
    e1 = server.ok("be-replace", file="a.txt", start=1, content="a1")["event_id"]
    e2 = server.ok("be-replace", file="b.txt", start=1, content="b1")["event_id"]
    a.write_text("changed by someone else\n")
    error = server.err("be-trx-rollback", "CONFLICT", steps=2)
    assert "a.txt" in error["message"] and e1 in error["message"]
    assert b.read_text() == "b1\n"  # the newer, unconflicted snapshot was not undone either
    assert a.read_text() == "changed by someone else\n"
    assert [s["event_id"] for s in server.ok("be-trx-status")["snapshots"]] == [e2, e1]
    error = server.err("be-trx-rollback", "CONFLICT", event_id=e1)
    assert b.read_text() == "b1\n"
    result = server.ok("be-trx-rollback", steps=2, force=True)
    assert result["rolled_back"] == [e2, e1]
    assert any(e1 in w for w in result["warnings"])
    assert a.read_text() == "a0\n" and b.read_text() == "b0\n"


def test_a_forced_rollback_keeps_what_it_overwrote(serve, root):
    """`force` restored the old bytes over a line the user had added since, and nothing kept the
    user's line: the hint of the CONFLICT invites an agent to pass force. A forced rollback is
    now an event of its own, holding every file's bytes before it: rolling that event back brings
    the user's line (and a file the user deleted: deleted again) back; a rollback that is not
    forced keeps nothing, as before."""
    a, b, c = root / "a.txt", root / "b.txt", root / "c.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    c.write_text("c0\n")
    server = serve()
    server.ok(
        "be-edit",
        edits=[
            {"file": "a.txt", "start": 1, "content": "a1"},
            {"file": "b.txt", "start": 1, "content": "b1"},
        ],
    )
    a.write_text("a1\nthe user's line\n")
    b.unlink()
    result = server.ok("be-trx-rollback", force=True)
    kept = result["event_id"]
    assert a.read_text() == "a0\n" and b.read_text() == "b0\n"
    assert result["warnings"][-1] == (
        f"what the forced rollback overwrote is kept as event {kept}: roll that event back to bring it back"
    )
    [snapshot] = [s for s in server.ok("be-trx-status")["snapshots"] if s["event_id"] == kept]
    assert snapshot["tool"] == "rollback"
    again = server.ok("be-trx-rollback", event_id=kept)
    assert again["rolled_back"] == [kept] and "event_id" not in again
    assert a.read_text() == "a1\nthe user's line\n" and not b.exists()
    server.ok("be-replace", file="c.txt", start=1, content="c1")
    assert "event_id" not in server.ok("be-trx-rollback", file="c.txt")
    assert server.ok("be-trx-status")["snapshots"] == [] and c.read_text() == "c0\n"
    # with room for one snapshot, the kept event takes the place of the one it undoes, silently
    one = serve(env={"BETTER_EDIT_MAX_SNAPSHOTS": "1"})
    undone = one.ok("be-replace", file="c.txt", start=1, content="c2")["event_id"]
    c.write_text("c2\nuser\n")
    result = one.ok("be-trx-rollback", force=True)
    assert not any(undone in w and "dropped" in w for w in result["warnings"]), result["warnings"]
    assert [s["event_id"] for s in one.ok("be-trx-status")["snapshots"]] == [result["event_id"]]


def test_edits_through_two_names_of_one_file_roll_back_as_one_file(serve, root):
    """Found by an attack: f edited (event 1), then g, a hard link to f (event 2). Rolling back both
    said CONFLICT ("f no longer holds what event 1 wrote": event 2 had changed it, through g); with
    force it said both were rolled back, and the file kept event 1's change. Two names of one file
    are one file: the events chain, and the file gets back what it held before event 1."""
    for force in (False, True):
        (root / "g").unlink(missing_ok=True)
        (root / "f").write_text("one\ntwo\nthree\n")
        os.link(root / "f", root / "g")
        server = serve()
        server.ok("be-replace", file="f", start=1, content="ONE")
        server.ok("be-replace", file="g", start=3, content="THREE")
        result = server.ok("be-trx-rollback", steps=2, force=force)
        assert len(result["rolled_back"]) == 2, result
        assert [w for w in result["warnings"] if "2 hard links: written in place" not in w] == [], result
        assert (root / "f").read_text() == "one\ntwo\nthree\n" and (root / "g").samefile(root / "f")
    # (the regression pass: `file` naming one name chose only the events made through that name)
    server.ok("be-replace", file="f", start=1, content="ONE")
    server.ok("be-replace", file="g", start=3, content="THREE")
    result = server.ok("be-trx-rollback", file="f", steps=1)
    assert (root / "f").read_text() == "ONE\ntwo\nthree\n", result  # (the newest, made through g)


def test_rollback_conflict_when_file_deleted(serve, root):
    a = root / "a.txt"
    a.write_text("a0\n")
    server = serve()
    server.ok("be-replace", file="a.txt", start=1, content="a1")
    a.unlink()
    error = server.err("be-trx-rollback", "CONFLICT")
    # (found by an attack: it said the file "no longer holds what event … wrote", hint "read the file")
    assert f"{a} is gone (deleted, or moved away" in error["message"] and "put it back" in error["hint"], (
        error
    )
    assert not a.exists()
    server.ok("be-trx-rollback", force=True)
    assert a.read_text() == "a0\n"
    server.ok("be-replace", file="a.txt", start=1, content="a2")
    a.unlink()
    a.mkdir()  # (a folder took its name: "name a file inside it" was the hint, with force too)
    for force in (False, True):
        error = server.err("be-trx-rollback", "CONFLICT", force=force)
        assert "is no regular file now" in error["message"] and "move that away" in error["hint"], error
    assert a.is_dir()


def test_rollback_of_a_created_file_deletes_it(serve, root):
    server = serve()
    result = server.ok("be-write", file="sub/dir/new.txt", content="fresh\n")
    assert result["created"] is True
    assert (root / "sub/dir/new.txt").read_text() == "fresh\n"
    rolled = server.ok("be-trx-rollback")
    assert rolled["rolled_back"] == [result["event_id"]]
    assert not (root / "sub/dir/new.txt").exists()
    # (the regression pass: a created file deleted since was told "pass force to make it again with
    # its text from before the event", which it never had)
    made = server.ok("be-write", file="made.txt", content="fresh\n")["event_id"]
    (root / "made.txt").unlink()
    error = server.err("be-trx-rollback", "CONFLICT")
    assert f"event {made} created it: nothing of it is left to undo" in error["hint"], error
    assert server.ok("be-trx-rollback", force=True)["rolled_back"] == [made]
    assert not (root / "made.txt").exists()


def test_cli_snapshots_are_rolled_back_by_the_server(serve, cli, root):
    path = root / "a.txt"
    original = b"keep\r\nme\r\n  exactly \r\n"
    path.write_bytes(original)
    done = cli("replace", "-f", "a.txt", "-s", "2", "-c", "changed", "-o", "json")
    assert done.returncode == 0, done.stderr
    event_id = json.loads(done.stdout)["event_id"]
    done = cli("write", "-f", "created.txt", "-c", "new\n", "-o", "json")
    assert done.returncode == 0, done.stderr
    created_id = json.loads(done.stdout)["event_id"]
    assert path.read_bytes() == b"keep\r\nchanged\r\n  exactly \r\n"
    server = serve()
    snapshots = server.ok("be-trx-status")["snapshots"]
    assert [s["event_id"] for s in snapshots] == [created_id, event_id]
    assert snapshots[1]["file"] == os.path.realpath(path)
    result = server.ok("be-trx-rollback", steps=2)
    assert result["rolled_back"] == [created_id, event_id]
    assert path.read_bytes() == original
    assert not (root / "created.txt").exists()


def test_trx_commit_forgets(serve, root):
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    server = serve()
    server.ok("be-replace", file="a.txt", start=1, content="a1")
    server.ok("be-replace", file="b.txt", start=1, content="b1")
    server.ok("be-replace", file="a.txt", start=1, content="a2")
    assert server.ok("be-trx-commit", file="b.txt")["committed"] == 1
    assert len(server.ok("be-trx-status")["snapshots"]) == 2
    # another process sees the same store
    assert serve().ok("be-trx-commit")["committed"] == 2
    assert server.ok("be-trx-status")["snapshots"] == []
    assert server.ok("be-trx-commit")["committed"] == 0
    server.err("be-trx-rollback", "NOT_FOUND")
    assert (root / "a.txt").read_text() == "a2\n"


def test_an_empty_file_never_means_every_file_to_commit_or_rollback(serve, root):
    """Found by an attack: `be-trx-commit {"file": ""}` forgot the snapshots of every file, and
    `be-trx-rollback {"file": ""}` undid the newest edit of any file: an empty field was taken
    for "no file given". It is INVALID_ARGUMENT, and nothing is forgotten or undone."""
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    server = serve()
    server.ok("be-replace", file="a.txt", start=1, content="a1")
    server.ok("be-replace", file="b.txt", start=1, content="b1")
    for tool in ("be-trx-commit", "be-trx-rollback"):
        error = server.err(tool, "INVALID_ARGUMENT", file="")
        assert error["message"] == "argument 'file' must be a non-empty path, got ''", error
    assert len(server.ok("be-trx-status")["snapshots"]) == 2
    assert (root / "a.txt").read_text() == "a1\n" and (root / "b.txt").read_text() == "b1\n"


def test_a_rollback_never_follows_a_link_put_in_place_of_its_file(serve, root):
    """Found by an attack: n.txt created by a write, then replaced by a link to the user's
    docs/keep.txt holding the same bytes: the rollback of the creation deleted docs/keep.txt (and
    a rollback of an edit wrote into the link's target). The recorded path now leads elsewhere:
    CONFLICT, even with force, and nothing is undone."""
    (root / "docs").mkdir()
    server = serve()
    server.ok("be-write", file="n.txt", content="hello")
    (root / "docs" / "keep.txt").write_text((root / "n.txt").read_text())
    (root / "n.txt").unlink()
    (root / "n.txt").symlink_to(root / "docs" / "keep.txt")
    for force in (False, True):
        error = server.err("be-trx-rollback", "CONFLICT", force=force)
        assert "now leads to" in error["message"] and "keep.txt" in error["message"], error
    assert (root / "docs" / "keep.txt").read_text() == "hello" and (root / "n.txt").is_symlink()


def test_a_rollback_gives_a_deleted_file_back_its_permission_bits(serve, root):
    """Found by an attack: a 0600 secret.env and a 0755 run.sh deleted by a patch came back from
    the rollback as 0644 (the secret readable by all, the script no longer runnable). The snapshot
    keeps the bits, and a file made anew gets them."""
    (root / "secret.env").write_text("TOKEN=s3cret\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "secret.env", 0o600)
    os.chmod(root / "run.sh", 0o755)
    patch = (
        "--- a/secret.env\n+++ /dev/null\n@@ -1 +0,0 @@\n-TOKEN=s3cret\n"
        "--- a/run.sh\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo hi\n"
    )
    server = serve()
    server.ok("be-edit", patch=patch)
    assert not (root / "secret.env").exists() and not (root / "run.sh").exists()
    server.ok("be-trx-rollback")
    assert (root / "secret.env").stat().st_mode & 0o7777 == 0o600
    assert (root / "run.sh").stat().st_mode & 0o7777 == 0o755
    assert (root / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    # (found by the next attack: deleted again, made again by someone else at 0644, then a forced
    # rollback wrote the secret into that 0644 file; a restore gives no bit the old file lacked)
    server.ok("be-edit", patch=patch.split("--- a/run.sh")[0])
    (root / "secret.env").write_text("other\n")
    os.chmod(root / "secret.env", 0o644)
    server.ok("be-trx-rollback", force=True)
    assert (root / "secret.env").read_text() == "TOKEN=s3cret\n"
    assert (root / "secret.env").stat().st_mode & 0o7777 == 0o600


def test_a_rollback_refuses_old_bytes_written_since_through_an_open_descriptor(serve, root):
    """Found by an attack: the old bytes of an edit are kept as a second name of the old file; a
    program that had it open wrote "QQQ" into it after the edit, and the rollback put "QQQ\n" in
    the file, bytes it never held. The kept file's size and modification time are checked:
    CONFLICT, nothing undone."""
    path = root / "g.txt"
    path.write_text("abc\n")
    server = serve()
    with open(path, "r+b") as kept_open:
        server.ok("be-replace", file="g.txt", start=1, content="xyz")
        kept_open.write(b"QQQ")
    error = server.err("be-trx-rollback", "CONFLICT")
    assert "were written since" in error["message"], error
    assert path.read_text() == "xyz\n"


def test_a_forced_rollback_at_the_snapshot_limit_drops_no_other_event(serve, root):
    """Found by an attack: with 3 snapshots kept at most and 3 events, a forced rollback of the
    newest made its own event (what it overwrote) before the undone one was gone, so the oldest
    event was evicted ("oldest snapshot … was dropped") and 2 were left, under the limit."""
    server = serve(env={"BETTER_EDIT_MAX_SNAPSHOTS": "3"})
    events = []
    for name in ("a", "b", "c"):
        (root / name).write_text("1\n")
        events.append(server.ok("be-replace", file=name, start=1, content="X")["event_id"])
    (root / "c").write_text("X\nuser\n")
    result = server.ok("be-trx-rollback", force=True)
    assert not any("dropped" in w for w in result.get("warnings", [])), result
    listed = [s["event_id"] for s in server.ok("be-trx-status")["snapshots"]]
    assert listed == [result["event_id"], events[1], events[0]], (listed, events)


@pytest.mark.parametrize("why", ["too large", "store busy"])
def test_a_forced_rollback_that_cannot_keep_what_it_overwrites_writes_nothing(serve, root, cache_dir, why):
    """Found by an attack: a forced rollback over a file the user had made 108 MiB (more than the
    snapshots hold), or while another process held the snapshot store, answered ok with a
    warning: the user's text was overwritten and kept nowhere. Its snapshot is the only copy of
    what it overwrites: where that cannot be kept, it is refused and nothing is written."""
    server = serve(env={"BETTER_EDIT_LOCK_WAIT": "1"})
    (root / "data.txt").write_text("a1\n")
    event = server.ok("be-replace", file="data.txt", start=1, content="a2")["event_id"]
    user = "user row\n" * (12 << 20) if why == "too large" else "USER WORK\n"
    (root / "data.txt").write_text(user)
    holder = None
    if why == "store busy":
        hold = (
            "import sys, time; sys.path.insert(0, sys.argv[1]); import better_edit as be; "
            "ctx = be.Context(root=sys.argv[2], cache_dir=sys.argv[3]); lock = be.SnapshotStore(ctx).lock(); "
            "lock.__enter__(); print('held', flush=True); time.sleep(30)"
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", hold, str(REPO), str(root), str(cache_dir)], stdout=subprocess.PIPE
        )
        assert holder.stdout.readline() == b"held\n"
    try:
        result = server.tool_result("be-trx-rollback", {"force": True})
    finally:
        if holder:
            holder.kill()
            holder.wait()
    error = result["structuredContent"].get("error", {})
    assert error.get("code") == ("TOO_LARGE" if why == "too large" else "CONFLICT"), result
    assert "nothing was written" in error["message"], error
    same = (root / "data.txt").read_text() == user  # (a bool: pytest would diff 100 MB)
    assert same
    assert [s["event_id"] for s in server.ok("be-trx-status")["snapshots"]] == [event]


@contextlib.contextmanager
def two_roots_edited(root, be_command, be_env):
    """Servers with roots A and B in one checkout (one store), each having replaced A/f.txt or
    B/f.txt ("1" -> "2"): yields (servers, their results)."""
    (root / ".git").mkdir()
    for name in ("A", "B"):
        (root / name).mkdir()
        (root / name / "f.txt").write_text("1\n")
    servers = [Server(root / name, be_env, ("--root", str(root / name)), command=be_command) for name in "AB"]
    try:
        for server in servers:
            server.initialize()
        yield servers, [server.ok("be-replace", file="f.txt", start=1, content="2") for server in servers]
    finally:
        for server in servers:
            server.close()


def test_a_rollback_counts_the_events_its_root_sees(root, be_command, be_env):
    """Found by an attack: two servers with roots A and B in one checkout share its store; A's
    trx-status listed only A's event, yet A's rollback took B's newer event first and answered
    SANDBOX. A rollback chooses among the events its trx-status lists."""
    with two_roots_edited(root, be_command, be_env) as (servers, done):
        listed = [s["event_id"] for s in servers[0].ok("be-trx-status")["snapshots"]]
        assert listed == [done[0]["event_id"]], listed
        assert servers[0].ok("be-trx-rollback")["rolled_back"] == [done[0]["event_id"]]
        assert (root / "A" / "f.txt").read_text() == "1\n" and (root / "B" / "f.txt").read_text() == "2\n"


def test_a_commit_forgets_only_the_events_its_root_sees(root, be_command, be_env):
    """Found by an attack: in one checkout, a server with root A ran be-trx-commit {}: it forgot
    the snapshot of B's edit too, which A's trx-status did not list, so B's rollback found
    nothing. A commit forgets the events its trx-status lists."""
    with two_roots_edited(root, be_command, be_env) as (servers, done):
        assert servers[0].ok("be-trx-commit")["committed"] == 1
        assert servers[1].ok("be-trx-rollback")["rolled_back"] == [done[1]["event_id"]]
        assert (root / "B" / "f.txt").read_text() == "1\n" and (root / "A" / "f.txt").read_text() == "2\n"


def test_rollback_keeps_hard_links_shared(serve, root):
    a, b = root / "a.txt", root / "linked.txt"
    a.write_text("one\ntwo\n")
    os.link(a, b)
    server = serve()
    result = server.ok("be-replace", file="a.txt", start=2, content="TWO")
    assert any("hard link" in w for w in result["warnings"])
    assert b.read_text() == "one\nTWO\n"
    rolled = server.ok("be-trx-rollback")
    assert a.read_text() == "one\ntwo\n" and b.read_text() == "one\ntwo\n"
    assert os.stat(a).st_ino == os.stat(b).st_ino and os.stat(a).st_nlink == 2
    # Found by an attack: the rollback said nothing of it, though the edit warns. A hard-linked
    # backup made after the edit (`cp -al`, rsnapshot) got the old text back without a word.
    assert any("2 hard links: written in place" in w for w in rolled.get("warnings", [])), rolled


def test_a_server_of_a_folder_leaves_events_that_reach_outside_it_whole(serve, root):
    """Found by an attack: a server started with `--root sub` in a checkout listed the event of a
    be-edit of sub/a.txt and b.txt (by a server of the whole checkout); its rollback said SANDBOX
    "use a path inside ROOT" of a path nobody gave, and its commit forgot the whole event, b.txt's
    undo with it. Both now leave such an event to a server that reaches all its files, saying so;
    the commit counts events, as trx-status lists them (it counted one per file)."""
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    outer, inner = serve(), serve("--root", "sub")
    event = outer.ok(
        "be-edit",
        edits=[
            {"file": "sub/a.txt", "start": 1, "content": "A"},
            {"file": "b.txt", "start": 1, "content": "B"},
        ],
    )["event_id"]
    error = inner.err("be-trx-rollback", "SANDBOX")
    assert f"event {event} also changed {root / 'b.txt'}, outside the root" in error["message"], error
    assert "whose root holds all its files" in error["hint"], error
    committed = inner.ok("be-trx-commit")
    assert committed["committed"] == 0 and f"event {event} also changed" in committed["warnings"][0], (
        committed
    )
    assert (root / "sub" / "a.txt").read_text() == "A\n" and (root / "b.txt").read_text() == "B\n"
    assert [s["event_id"] for s in outer.ok("be-trx-status")["snapshots"]] == [event]
    outer.ok("be-replace", file="b.txt", start=1, content="B2")
    assert outer.ok("be-trx-commit")["committed"] == 2  # (two events, three files)
    assert outer.ok("be-trx-status")["snapshots"] == []


def test_rollback_restores_exact_bytes_after_many_edits(serve, root):
    path = root / "a.txt"
    original = "\ufeffbom line\r\nmixed\nend without newline".encode()
    path.write_bytes(original)
    server = serve()
    server.ok("be-replace", file="a.txt", start=1, content="first\n")
    server.ok("be-insert", file="a.txt", after_line=-1, content="appended")
    server.ok("be-delete", file="a.txt", start=2)
    server.ok("be-write", file="a.txt", content="all new\n")
    result = server.ok("be-trx-rollback", steps=4)
    assert len(result["rolled_back"]) == 4
    assert path.read_bytes() == original


# =================================================================================================
# 5. Chips (docs/chips.md)
# =================================================================================================


def _failed_call_chip(server, word):
    content = f"{word} content long enough to be worth keeping as a chip\n"
    error = server.err("be-replace", "NOT_FOUND", file="missing.txt", start=1, content=content)
    return error["chip"]


def test_a_chip_goes_back_by_a_view_that_follows_lines_added_above(serve, root):
    """Found by an attack: be-insert-chip took no viewed_code_id, so a chip put back "after line 3"
    of a read went after another line once someone had added two imports on top (b() landed
    inside a()). It takes one now, checked and followed as be-insert's."""
    app = root / "app.py"
    app.write_text("def a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    return 3\n")
    server = serve()
    chip = server.ok("be-delete", file="app.py", start=4, end=6)["chip"]
    view = server.ok("be-read", file="app.py", start=2, end=3)["viewed_code_id"]
    app.write_text("import os\nimport sys\n" + app.read_text())
    put = server.ok("be-insert-chip", **{"from": f"chip://{chip}", "to": "app.py:3", "viewed_code_id": view})
    assert put["relocated"] == 2 and put["after_line"] == 5, put
    assert (
        app.read_text()
        == "import os\nimport sys\ndef a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    return 3\n"
    )
    app.write_text("def a():\n    return 10\n\ndef c():\n    return 3\n")  # (the lines read changed)
    server.err(
        "be-insert-chip", "STALE_VIEW", **{"from": f"chip://{chip}", "to": "app.py:3", "viewed_code_id": view}
    )
    assert app.read_text() == "def a():\n    return 10\n\ndef c():\n    return 3\n"
    for listing in ({}, {"from": f"chip://{chip}"}):  # (list and show: a token there checks nothing)
        error = server.err("be-insert-chip", "INVALID_ARGUMENT", viewed_code_id=view, **listing)
        assert "viewed_code_id was given without from and to" in error["message"], error
    error = server.err("be-insert-chip", "INVALID_ARGUMENT", to="app.py:1", viewed_code_id=view)
    assert "to was given without from" in error["message"], error  # (what is missing: from)


def test_chip_list_oldest_first_with_filter(serve, root):
    (root / "a.txt").write_text("deleted words here\nkeep\n")
    server = serve()
    ids = [_failed_call_chip(server, word) for word in ("alpha", "beta", "gamma")]
    ids.append(server.ok("be-delete", file="a.txt", start=1)["chip"])
    listing = server.ok("be-insert-chip")
    assert listing["chips"] == ids
    assert [item["id"] for item in listing["items"]] == ids
    for item in listing["items"]:
        assert set(item) >= {"id", "tool", "created_at", "bytes", "summary", "err_msg"}
        assert isinstance(item["created_at"], (int, float)) and isinstance(item["bytes"], int)
    assert listing["items"][0]["tool"] == "be-replace" and "NOT_FOUND" in listing["items"][0]["err_msg"]
    assert listing["items"][0]["summary"].startswith("alpha")
    assert listing["items"][3]["tool"] == "be-delete" and listing["items"][3]["bytes"] == len(
        "deleted words here\n"
    )
    assert server.ok("be-insert-chip", filter="beta")["chips"] == [ids[1]]
    assert server.ok("be-insert-chip", filter="NOT_FOUND")["chips"] == ids[:3]
    assert server.ok("be-insert-chip", filter="deleted words")["chips"] == [ids[3]]
    assert server.ok("be-insert-chip", filter="nothing-matches-this")["chips"] == []


def test_chip_fetch_one_and_missing(serve):
    server = serve()
    chip_id = _failed_call_chip(server, "fetch")
    record = server.ok("be-insert-chip", {"from": f"chip://{chip_id}"})
    assert record["id"] == chip_id and record["tool"] == "be-replace"
    assert record["args"]["file"] == "missing.txt"
    assert record["text"].startswith("fetch content")
    assert isinstance(record["created_at"], (int, float)) and "NOT_FOUND" in record["err_msg"]
    server.err("be-insert-chip", "NOT_FOUND", {"from": "chip://abcdef"})
    server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": "nonsense"})


@pytest.mark.parametrize(
    "original",
    [
        b"one\ntwo\nthree\nfour\n",
        b"one\r\ntwo  \r\n\tthree\r\nfour\r\n",
        b"one\r\ntwo\r\nthree\r\nfour",
        "\ufeffün\r\nwide € ✓\r\nthree\r\nfour\r\n".encode(),
        b"one\ntw\ro \t\n\nfour\n",
    ],
    ids=["lf", "crlf", "crlf-no-final", "bom-utf8", "lone-cr-and-blank"],
)
def test_delete_then_insert_chip_gives_back_the_exact_bytes(serve, root, original):
    path = root / "a.txt"
    path.write_bytes(original)
    server = serve()
    deleted = server.ok("be-delete", file="a.txt", start=2, end=3)
    chip_id = deleted["chip"]
    assert f"deleted content saved as chip://{chip_id}" in deleted["warnings"]
    assert path.read_bytes() != original
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "a.txt:1"})
    assert path.read_bytes() == original


@pytest.mark.parametrize("original", [b"one\ntwo", b"one\r\ntwo\r\n", b"one\ntwo\n\n"])
def test_delete_last_line_then_insert_chip_at_the_end(serve, root, original):
    path = root / "a.txt"
    path.write_bytes(original)
    server = serve()
    total = server.ok("be-read", file="a.txt")["total"]
    chip_id = server.ok("be-delete", file="a.txt", start=total)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "a.txt:-1"})
    assert path.read_bytes() == original


@pytest.mark.parametrize("original", [b"x\ny", b"x\ny\n", b"x", b"a\r\nb\r\n"])
def test_a_whole_file_deleted_then_inserted_back_from_its_chip_is_byte_for_byte(serve, root, original):
    """Found by an attack: every line of `x\ny` (no final newline) deleted, then its chip inserted
    into the now empty file gave `x\ny\n`: an insert into an empty file ends its text with a
    newline. A chip goes in as its text ends."""
    path = root / "a.txt"
    path.write_bytes(original)
    server = serve()
    total = server.ok("be-read", file="a.txt")["total"]
    chip_id = server.ok("be-delete", file="a.txt", start=1, end=total)["chip"]
    assert path.read_bytes() == b""
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "a.txt:0"})
    assert path.read_bytes() == original


def test_a_chip_put_back_into_a_file_left_without_line_breaks_keeps_its_own(serve, root):
    """Found by an attack: `x\r\ny\r\nz` with lines 2-3 deleted (the file is `x`), then the chip
    put back after line 1, gave `x\ny\nz`: a file without any line break gave its lines LF. A chip
    then keeps its own line ending."""
    (root / "tail.txt").write_bytes(b"x\r\ny\r\nz")
    server = serve()
    chip_id = server.ok("be-delete", file="tail.txt", start=2, end=3)["chip"]
    assert (root / "tail.txt").read_bytes() == b"x"
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "tail.txt:1"})
    assert (root / "tail.txt").read_bytes() == b"x\r\ny\r\nz"
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfonly\r\n")
    chip_id = server.ok("be-delete", file="bom.txt", start=1)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "bom.txt:0"})
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfonly\r\n"


def test_insert_chip_into_a_name_that_starts_with_a_space(serve, root):
    """Found by an attack: `to: " lead.txt:0"` went into `lead.txt` (the target was stripped),
    while be-insert and be-trx-rollback take ` lead.txt` as named."""
    (root / " lead.txt").write_text("spaced\n")
    (root / "lead.txt").write_text("plain\n")
    (root / "src.txt").write_text("chip\nkeep\n")
    server = serve()
    chip_id = server.ok("be-delete", file="src.txt", start=1)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": " lead.txt:0 "})
    assert (root / " lead.txt").read_text() == "chip\nspaced\n" and (
        root / "lead.txt"
    ).read_text() == "plain\n"
    chip_id = server.ok("be-delete", file="src.txt", start=1)["chip"]  # (a stray blank before an
    server.ok(
        "be-insert-chip", {"from": f"chip://{chip_id}", "to": f"\t{root / 'lead.txt'}:0"}
    )  # absolute name)
    assert (root / "lead.txt").read_text() == "keep\nplain\n"


def test_insert_chip_follows_the_target_eol(serve, root):
    (root / "crlf.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    (root / "lf.txt").write_bytes(b"x\ny\n")
    server = serve()
    crlf_chip = server.ok("be-delete", file="crlf.txt", start=1, end=2)["chip"]
    lf_chip = server.ok("be-delete", file="lf.txt", start=1)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{crlf_chip}", "to": "lf.txt:-1"})
    assert (root / "lf.txt").read_bytes() == b"y\na\nb\n"
    server.ok("be-insert-chip", {"from": f"chip://{lf_chip}", "to": f"file://{root / 'crlf.txt'}:0"})
    assert (root / "crlf.txt").read_bytes() == b"x\r\nc\r\n"


def test_insert_chip_from_an_empty_file_says_the_file_is_empty(serve, root):
    """Found by an attack: `from: file://…/empty.txt` said "chip None keeps no single text (tool
    file)" and advised `as: annotated`: there is no chip None, and the advice does not apply."""
    (root / "empty.txt").write_text("")
    (root / "a.txt").write_text("a\n")
    source = f"file://{root / 'empty.txt'}"
    error = serve().err("be-insert-chip", "INVALID_ARGUMENT", {"from": source, "to": "a.txt:0"})
    assert error["message"] == f"{source} is empty: there is nothing to insert", error
    assert "annotated" not in error["hint"] and (root / "a.txt").read_text() == "a\n"


def test_insert_chip_annotated(serve, root):
    (root / "notes.txt").write_text("top\n")
    server = serve()
    error = server.err(
        "be-read", "NOT_FOUND", file="nowhere/at/all.txt", target={"kind": "marker", "value": "needle"}
    )
    chip_id = error["chip"]
    record = server.ok("be-insert-chip", {"from": f"chip://{chip_id}"})
    assert record["text"] is None
    server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": f"chip://{chip_id}", "to": "notes.txt:1"})
    result = server.ok(
        "be-insert-chip", {"from": f"chip://{chip_id}", "to": "notes.txt:1", "as": "annotated"}
    )
    assert result["added"] >= 3
    text = (root / "notes.txt").read_text()
    assert text.startswith("top\n")
    assert f'Chip {chip_id} from tool "be-read"' in text
    assert "Original arguments:" in text
    assert '"nowhere/at/all.txt"' in text and '"needle"' in text
    inserted = text.splitlines()[1:]
    prefix = inserted[0].split(" ")[0]
    assert prefix and all(line.startswith(prefix) for line in inserted)


def test_max_chips_evicts_oldest_with_warning(serve, root):
    (root / "a.txt").write_text(numbered(6))
    server = serve("--max-chips", "3")
    chips, last = [], None
    for _ in range(4):
        last = server.ok("be-delete", file="a.txt", start=1)
        chips.append(last["chip"])
    assert f"oldest chip {chips[0]} was evicted (queue max 3)" in last["warnings"]
    assert server.ok("be-insert-chip")["chips"] == chips[1:]
    server.err("be-insert-chip", "NOT_FOUND", {"from": f"chip://{chips[0]}"})


def test_max_chips_eviction_by_a_failed_call_is_reported(serve):
    server = serve("--max-chips", "3")
    first = _failed_call_chip(server, "one")
    for word in ("two", "three"):
        _failed_call_chip(server, word)
    result = server.tool_result("be-replace", file="missing.txt", start=1, content="four " * 20)
    assert len(server.ok("be-insert-chip")["chips"]) == 3
    assert f"oldest chip {first} was evicted (queue max 3)" in json.dumps(result)


def test_failed_calls_and_garbage_lines_do_not_evict_the_chip_of_deleted_text(serve, root):
    """Found by the protocol attack: 30 lines that were not JSON (a host garbling its output, or
    another session in the folder) evicted the chip of code be-delete had just deleted, its only
    copy; the eviction was said only in errors with id null, which hosts log. Chips of failed calls
    and of garbage lines now go first; a chip of deleted text goes only when no other is left."""
    (root / "victim.py").write_text("def precious():\n    return 42\n")
    server = serve("--max-chips", "3")
    deleted = server.ok("be-delete", file="victim.py", start=1, end=2)["chip"]
    for n in range(4):
        server.send_line(
            '{"jsonrpc":"2.0","id":' + str(n) + ',"method":"tools/list" and then garbage from a host'
        )
        assert server.recv()["error"]["code"] == -32700
    _failed_call_chip(server, "five")
    assert deleted in server.ok("be-insert-chip")["chips"]
    server.ok("be-insert-chip", {"from": f"chip://{deleted}", "to": "victim.py:0"})
    assert (root / "victim.py").read_text() == "def precious():\n    return 42\n"
    # (the regression pass: a failed call's chip, the newest among deleted text, outlives the next delete)
    (root / "more.py").write_text("a = 1\nb = 2\nc = 3\n")
    kept = [server.ok("be-delete", file="more.py", start=1)["chip"] for _ in range(2)]
    failed = _failed_call_chip(server, "six")
    result = server.ok("be-delete", file="more.py", start=1)
    assert failed in server.ok("be-insert-chip")["chips"], result
    assert f"oldest chip {kept[0]} was evicted" in " ".join(result["warnings"]), result


def test_chips_are_shared_between_processes(serve, root):
    (root / "a.txt").write_text("x\n")
    first = serve()
    chip_id = _failed_call_chip(first, "shared")
    first.close()
    second = serve()
    assert chip_id in second.ok("be-insert-chip")["chips"]
    second.ok("be-insert-chip", {"from": f"chip://{chip_id}", "to": "a.txt:1"})
    assert (root / "a.txt").read_text() == "x\nshared content long enough to be worth keeping as a chip\n"


def test_write_rescues_double_escaped_content(serve, root):
    server = serve()
    original = 'a\\nb\\n\\tc \\"q\\"'
    result = server.ok("be-write", file="r.txt", content=original)
    assert (root / "r.txt").read_bytes() == b'a\nb\n\tc "q"'
    (warning,) = [w for w in result["warnings"] if "chip://" in w]
    chip_id = CHIP_RE.search(warning).group(1)
    record = server.ok("be-insert-chip", {"from": f"chip://{chip_id}"})
    assert record["text"] == original
    # content with a real newline is never unescaped; a single \n is not enough either
    verbatim = "x\\ny\\nz\nreal"
    result = server.ok("be-write", file="v.txt", content=verbatim)
    assert (root / "v.txt").read_text() == verbatim and "warnings" not in result
    server.ok("be-write", file="w.txt", content="only one \\n here")
    assert (root / "w.txt").read_text() == "only one \\n here"
    minified = '{"greeting":"hello\\nworld","path":"C:\\\\temp","sig":"a\\tb\\nc"}'  # (escapes in strings)
    result = server.ok("be-write", file="data.json", content=minified)
    assert (root / "data.json").read_text() == minified and "warnings" not in result
    assert json.loads((root / "data.json").read_text())["greeting"] == "hello\nworld"


def test_a_be_edit_write_item_is_rescued_as_be_write_is_and_line_edits_are_not(serve, root):
    """Found by an attack: content encoded twice (`def f(x):\\n    return 2\\n`) was unescaped by
    be-write but written as one line by a be-edit write item, the same operation: it is rescued the
    same way now, with a chip of the original. One-line content of be-replace, be-insert and line
    items is real code far more often (`split(/\\n\\n+/)`, a comment naming `\\n`: 3 % of 3,974 real
    lines holding two literal `\\n` read as double-escaped, in the regression pass on a first
    version that rescued them too), and stays as sent."""
    server = serve()
    twice = "def f(x):\\n    return 2\\n"
    result = server.ok("be-edit", {"edits": [{"file": "w.py", "op": "write", "content": twice}]})
    assert (root / "w.py").read_text() == "def f(x):\n    return 2\n"
    [warning] = [w for w in result["warnings"] if "double-escaped" in w]
    assert (
        server.ok("be-insert-chip", {"from": f"chip://{CHIP_RE.search(warning).group(1)}"})["text"] == twice
    )
    code = "parts = text.split(/\\n\\n+/);  // paragraphs end at \\n\\n"
    calls = [
        ("be-replace", {"file": "r.js", "start": 2, "content": code}, "a\n" + code + "\nz\n"),
        ("be-insert", {"file": "r.js", "after_line": 1, "content": code}, "a\n" + code + "\nx\nz\n"),
        ("be-edit", {"edits": [{"file": "r.js", "start": 2, "content": code}]}, "a\n" + code + "\nz\n"),
    ]
    for tool, args, after in calls:
        (root / "r.js").write_text("a\nx\nz\n")
        result = server.ok(tool, args)
        assert (root / "r.js").read_text() == after, (tool, result)
        assert not any("double-escaped" in w for w in result.get("warnings", [])), result


def test_write_never_unescapes_backslashes_no_json_encoder_makes(serve, root):
    """Found by an attack: one-line LaTeX (`\\newcommand{\\R}...`) or a Windows path
    (`C:\\data\\new\\notes`) was taken for double-escaped and its `\\n` became line breaks. Sent
    escaped twice, every backslash of the text arrives doubled: a `\\R`, `\\d` or `\\m` that no JSON
    escape makes proves it was not."""
    server = serve()
    for name, content in [
        ("macros.tex", r"\newcommand{\R}{\mathbb{R}} \newcommand{\N}{\mathbb{N}}"),
        (".env", r"DATA_DIR=C:\data\new\notes"),
        ("re.txt", r"\d+\n\s*\n"),
        # (the regression: TeX whose backslashes all start JSON escapes, \f \b \n \t; a path of \n names)
        ("frac.tex", r"\newcommand{\foo}{\frac12} \newline \bf x"),
        ("lines.tex", r"\noindent text \newline more \newline end"),
        ("ne.tex", r"Here $a \ne b$ and $c \nmid d$ hold."),  # (the second pass: any TeX word)
    ]:
        result = server.ok("be-write", file=name, content=content)
        assert (root / name).read_text() == content, name
        assert "warnings" not in result, result
    # (the regression pass on the TeX rule: Markdown's hard breaks, escaped twice, are still repaired)
    server.ok("be-write", file="hard.md", content=r"# Title  \nline one  \nline two  \n")
    assert (root / "hard.md").read_text() == "# Title  \nline one  \nline two  \n"
    twice = r"print(\"C:\\\\data\")\nprint(1)\n"  # (a text holding a backslash, escaped twice)
    server.ok("be-write", file="twice.py", content=twice)
    assert (root / "twice.py").read_text() == 'print("C:\\\\data")\nprint(1)\n'


def test_write_rescue_in_preview_says_so_and_saves_no_chip(serve, root):
    server = serve()
    result = server.ok("be-write", file="r.txt", content="a\\nb\\nc", preview=True)
    assert result["preview"] is True and result["lines"] == 3
    assert not (root / "r.txt").exists()
    assert server.ok("be-insert-chip")["chips"] == []
    assert any("double-escaped" in w for w in result.get("warnings", [])), result


# =================================================================================================
# 6. The official MCP Python SDK as a client
# =================================================================================================


def _get(obj, snake, camel):
    """mcp 2.x uses snake_case attributes, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def run_sdk(be_command, be_env, root, tmp_path, body, flags=()):
    """Start the server with the SDK's stdio_client, initialize, run `await body(session, init)`."""
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=be_command[0], args=[*be_command[1:], *flags], env=dict(be_env), cwd=str(root)
    )

    async def main():
        with open(tmp_path / "server-stderr.log", "w") as errlog, anyio.fail_after(60):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return await body(session, init)

    return anyio.run(main)


def _structured(result):
    assert not _get(result, "is_error", "isError"), result.content[0].text
    structured = _get(result, "structured_content", "structuredContent")
    assert json.loads(result.content[0].text) == structured
    return structured


def test_sdk_client_calls_every_tool(be_command, be_env, root, tmp_path):
    (root / "a.txt").write_text("one\ntwo\nthree\n")

    async def body(session, init):
        assert _get(init, "protocol_version", "protocolVersion") in VERSIONS
        assert _get(init, "server_info", "serverInfo").name == "better-edit-tools"
        assert init.instructions
        await session.send_ping()
        listed = await session.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert sorted(tools) == sorted("be-" + b for b in TOOL_BASES)
        assert _get(tools["be-read"].annotations, "read_only_hint", "readOnlyHint") is True
        assert _get(tools["be-write"].annotations, "destructive_hint", "destructiveHint") is True
        assert _get(tools["be-read"], "input_schema", "inputSchema")["additionalProperties"] is False
        called = set()

        async def ok(name, arguments):
            called.add(name)
            return _structured(await session.call_tool(name, arguments))

        read = await ok("be-read", {"file": "a.txt"})
        assert read["content"] == "1\tone\n2\ttwo\n3\tthree"
        await ok(
            "be-replace",
            {"file": "a.txt", "start": 2, "content": "TWO", "viewed_code_id": read["viewed_code_id"]},
        )
        await ok("be-insert", {"file": "a.txt", "after_line": 0, "content": "zero"})
        deleted = await ok("be-delete", {"file": "a.txt", "start": 1})
        await ok("be-write", {"file": "b.txt", "content": "bee\n"})
        await ok("be-balance", {"file": "a.txt"})
        chips = await ok("be-insert-chip", {})
        assert deleted["chip"] in chips["chips"]
        await ok("be-insert-chip", {"from": f"chip://{deleted['chip']}", "to": "a.txt:0"})
        status = await ok("be-trx-status", {})
        assert len(status["snapshots"]) == 5
        rolled = await ok("be-trx-rollback", {"steps": 1})
        assert rolled["rolled_back"] == [status["snapshots"][0]["event_id"]]
        committed = await ok("be-trx-commit", {})
        assert committed["committed"] == 4
        edited = await ok(
            "be-edit",
            {
                "edits": [
                    {"file": "b.txt", "start": 1, "content": "BEE"},
                    {"file": "a.txt", "after_line": 0, "content": "top"},
                ]
            },
        )
        assert edited["changed"] is True and [f["file"] for f in edited["files"]] == ["a.txt", "b.txt"]
        assert [i["index"] for i in edited["items"]] == [0, 1] and edited["event_id"]
        # both structure tools answer (a result, possibly a tool error, never a protocol error)
        for name in ("be-func-range", "be-tag-range"):
            called.add(name)
            result = await session.call_tool(name, {"file": "a.txt", "line": 1})
            assert result.content
        bad = await session.call_tool("be-read", {"file": "does-not-exist.txt"})
        assert _get(bad, "is_error", "isError") is True
        assert _get(bad, "structured_content", "structuredContent")["error"]["code"] == "NOT_FOUND"
        assert bad.content[0].text.startswith("NOT_FOUND: ")
        bad = await session.call_tool("be-read", {"file": "a.txt", "start": "x"})
        assert _get(bad, "is_error", "isError") is True
        return called

    called = run_sdk(be_command, be_env, root, tmp_path, body)
    assert called == {"be-" + b for b in TOOL_BASES}
    assert (root / "a.txt").read_text() == "top\none\nTWO\nthree\n"  # insert-chip rolled back, then be-edit
    assert (root / "b.txt").read_text() == "BEE\n"


def test_sdk_client_func_range_and_tag_range_succeed(be_command, be_env, root, tmp_path):
    (root / "m.py").write_text("import os\n\n\ndef f(x):\n    y = x\n    return y\n")
    (root / "p.html").write_text("<html>\n<body>\n<div>\n<p>hi</p>\n</div>\n</body>\n</html>\n")

    async def body(session, init):
        func = _structured(await session.call_tool("be-func-range", {"file": "m.py", "line": 5}))
        tag = _structured(await session.call_tool("be-tag-range", {"file": "p.html", "line": 4}))
        return func, tag

    func, tag = run_sdk(be_command, be_env, root, tmp_path, body)
    assert (func["start"], func["end"], func["name"]) == (4, 6, "f")
    assert (tag["start"], tag["end"], tag["tag"]) == (4, 4, "p")


def test_sdk_client_with_underscore_names(be_command, be_env, root, tmp_path):
    (root / "a.txt").write_text("one\n")

    async def body(session, init):
        names = [t.name for t in (await session.list_tools()).tools]
        assert "func_range" in names and "read" in names
        result = _structured(await session.call_tool("read", {"file": "a.txt"}))
        assert result["total"] == 1
        return _structured(await session.call_tool("be-trx-status", {}))

    assert (
        run_sdk(be_command, be_env, root, tmp_path, body, ("--no-prefix", "--underscore-names"))["snapshots"]
        == []
    )


def test_sdk_unknown_tool_is_a_protocol_error(be_command, be_env, root, tmp_path):
    async def body(session, init):
        try:
            result = await session.call_tool("be-nonexistent", {})
        except Exception as exc:  # McpError in both 1.x and 2.x
            return str(exc)
        return result

    outcome = run_sdk(be_command, be_env, root, tmp_path, body)
    assert isinstance(outcome, str) and "closest" in outcome


# ---- edges found from outside on 0.1 (issue 10): strict JSON, names, a server started by hand ---------------------------------------

POSIX = pytest.mark.skipif(os.name == "nt", reason="POSIX signals, FIFOs and file names")


@pytest.fixture
def server(be_env, root):
    """A plain started server (no initialize, no schema checks): raw lines are sent as they are."""
    srv = Server(root, be_env)
    yield srv
    srv.close()


# ---- strict JSON in and out (docs/behaviour.md#json-rpc-transport) -----------------------------------------


@POSIX
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


@POSIX
def test_lone_surrogate_and_nul_in_names_are_clear_errors(server, root):
    _result, error = server.call("be-read", {"file": "bad\ud800.txt"})
    assert error["code"] == "INVALID_ARGUMENT", error
    _result, error = server.call("be-read", {"file": "bad\u0000.txt"})
    assert error["code"] == "SANDBOX"
    assert not error["hint"].endswith(".hint"), error  # a message key shown raw
    for raw in server.stdout_lines:
        strict_loads(raw.decode("utf-8"))


@POSIX
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


def test_a_missing_file_is_answered_with_the_names_it_nearly_named(serve, root):
    """NOT_FOUND's `did_you_mean`: another case, spaces around the name, another extension; a name
    with nothing like it gets the plain hint (docs/behaviour.md#errors)."""
    (root / "README.md").write_text("# r\n")
    (root / "app.ts").write_text("x\n")
    (root / "Readme").mkdir()  # (a folder is no suggestion)
    server = serve()
    for asked, near in (("readme.md", ["README.md"]), (" app.ts", ["app.ts"]), ("app.js", ["app.ts"])):
        error = server.err("be-read", "NOT_FOUND", file=asked)
        assert error["did_you_mean"] == near, error
        assert f'did you mean "{near[0]}"?' in error["hint"]
    (root / "sub").mkdir()
    error = server.err("be-replace", "NOT_FOUND", {"file": "sub/../README.mdx", "start": 1, "content": "x"})
    assert error["did_you_mean"] == ["sub/../README.md"], error
    error = server.err("be-read", "NOT_FOUND", file="nothing.txt")
    assert "did_you_mean" not in error and error["hint"].startswith("check the path")


def test_the_insert_schema_says_what_insert_takes(serve, root):
    """Found by an attack: be-insert's `content` was described as `new text ("" = no lines)`, the
    words of replace and write, and an insert of "" was then refused. Its schema now says so."""
    (root / "a.txt").write_text("one\n")
    server = serve()
    (insert,) = [t for t in server.tools() if t["name"] == "be-insert"]
    words = insert["inputSchema"]["properties"]["content"]["description"]
    assert "not empty" in words and '""' not in words
    error = server.err("be-insert", "INVALID_ARGUMENT", file="a.txt", after_line=1, content="")
    assert "must not be empty" in error["message"]
    assert (root / "a.txt").read_text() == "one\n"


def test_a_mismatch_text_names_the_closest_block_once(serve, root):
    """Found by an attack: a MISMATCH of `old` searched in the whole file printed `closest:` and
    then `actual:` with the same block, which the docs say comes only when there is no closest."""
    (root / "calc.py").write_text("\n\n\ndef add(a, b):\n    return a + b\n")
    server = serve()
    result = server.tool_result(
        "be-replace", {"file": "calc.py", "old": "def add(a, b):\n  return a + b", "content": "x"}
    )
    text = result["content"][0]["text"]
    assert result["isError"] and "\nclosest: lines 4-5" in text and "\nactual:" not in text, text
    (root / "two.txt").write_text("one\ntwo\nthree\n")  # (found by a regression attack: the lines named
    result = server.tool_result("be-replace", {"file": "two.txt", "start": 1, "old": "three", "content": "x"})
    text = result["content"][0]["text"]  # by number, closest elsewhere: the hint says see 'actual')
    assert "\nclosest: lines 3-3" in text and "\nactual:\none" in text, text


@pytest.mark.parametrize(
    "line, code, request_id",
    [
        (
            '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"x":' + "[" * 5000,
            -32700,
            None,
        ),  # cut short
        (
            '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"x":' + "[" * 5000 + "]" * 5000 + "}} x",
            -32700,
            None,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","params":' + "[" * 5000 + "]" * 5000 + "}",
            -32600,
            2,
        ),
        (
            '{"jsonrpc":"2.0","\\u0069d":"e","method":"ping","params":' + "[" * 5000 + "]" * 5000 + "}",
            -32600,
            "e",
        ),
        # (found by a second regression pass: a BOM json takes, whitespace it does not, a batch)
        (
            '\ufeff{"jsonrpc":"2.0","id":6,"method":"ping","params":' + "[" * 5000 + "]" * 5000 + "}",
            -32600,
            6,
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"ping","params":' + "[" * 5000 + "]" * 5000 + "}\u00a0",
            -32700,
            None,
        ),
        ('[{"id":1},99,' + "[" * 5000 + "]" * 5000 + "]", -32600, None),
    ],
)
def test_a_line_too_deep_for_json_is_answered_as_json_would_read_it(serve, line, code, request_id):
    """Found by a regression attack on the fix above: a deep line that is no JSON at all (cut
    short, junk after it) got -32600 "too deeply to be read" with an id; a shallow one is a parse
    error, id null. And a repeated "id" key answered the first (json keeps the last), an escaped
    key none. The deep line is now read as json would read it, without recursion."""
    server = serve()
    server.send_line(line)
    reply = server.recv()
    assert reply["error"]["code"] == code and reply["id"] == request_id, reply
    assert server.request("ping")["result"] == {}


def test_a_change_whose_old_bytes_pass_the_store_bound_keeps_the_other_snapshots(serve, root):
    """Found by an attack: an edit of a file of more than 100 MiB (the snapshots' bound) dropped
    every older snapshot to make room, then its own, and still answered its event_id, with a
    warning calling it the oldest. It now drops only its own and says it cannot be rolled back."""
    for name in ("a", "b", "c"):
        (root / f"{name}.txt").write_text("x\n")
    (root / "big.txt").write_bytes(b"line\n" * (21 << 20))  # (105 MiB)
    server = serve()
    for name in ("a", "b", "c"):
        server.ok("be-replace", file=f"{name}.txt", start=1, content=name.upper())
    result = server.ok("be-replace", file="big.txt", start=1, content="first", brief=True)
    assert "event_id" not in result or result["event_id"] is None, result
    assert any("cannot be rolled back" in w for w in result["warnings"]), result
    assert not any("oldest snapshot" in w for w in result["warnings"]), result
    assert len(server.ok("be-trx-status")["snapshots"]) == 3


def test_committing_one_file_of_an_event_forgets_the_event_whole(serve, root):
    """Found by an attack: be-trx-commit {file: a.txt} forgot only a.txt's part of an event of a,
    b and c; a rollback of that event then undid b and c and said ok, a keeping the edit. A commit
    by file now takes the events that touched it whole, as a rollback by file does."""
    for name in "abc":
        (root / f"{name}.txt").write_text(f"{name}\n")
    server = serve()
    edits = [{"file": f"{name}.txt", "start": 1, "content": name.upper()} for name in "abc"]
    event = server.ok("be-edit", edits=edits)["event_id"]
    assert server.ok("be-trx-commit", file="a.txt")["committed"] == 1  # (one event: as trx-status counts)
    assert server.ok("be-trx-status")["snapshots"] == []
    server.err("be-trx-rollback", "NOT_FOUND", event_id=event)
    assert [(root / f"{name}.txt").read_text() for name in "abc"] == ["A\n", "B\n", "C\n"]


def test_a_failed_insert_chip_keeps_no_chip_and_drops_none(serve, root):
    """Found by an attack: with the queue of chips full, a be-insert-chip that failed (a line past
    the end) was kept as a chip itself, and that dropped the oldest: the very chip it was putting
    back. The retry found nothing. A failed be-insert-chip keeps no chip."""
    name = "src/components/widget_controller.py"  # (arguments long enough to be kept: over 50 bytes)
    (root / "src" / "components").mkdir(parents=True)
    (root / name).write_text("a\nb\nc\nd\ne\n")
    server = serve(env={"BETTER_EDIT_MAX_CHIPS": "3"})
    deleted = server.ok("be-delete", file=name, start=2, end=3)["chip"]
    for n in range(2):  # (the queue full: 3 chips, the deleted text the oldest)
        server.err("be-replace", "MISMATCH", file=name, old=f"nothing like this {n} " * 3, content="x")
    target = {"from": f"chip://{deleted}", "to": f"{name}:99"}
    server.err("be-insert-chip", "OUT_OF_RANGE", target)
    server.ok("be-insert-chip", dict(target, to=f"{name}:1"))
    assert (root / name).read_text() == "a\nb\nc\nd\ne\n"


def test_a_rollback_keeps_a_mode_bit_added_since_the_edit(serve, root):
    """Found by an attack: run.sh edited, then made executable (chmod 755) by its user; a rollback
    (the file held what the edit wrote) put its old text back at 0644, without a word. A file
    that is there keeps its own mode, as any edit keeps it."""
    path = root / "run.sh"
    path.write_text("echo one\n")
    os.chmod(path, 0o644)
    server = serve()
    server.ok("be-replace", file="run.sh", start=1, content="echo two")
    os.chmod(path, 0o755)
    server.ok("be-trx-rollback")
    assert path.read_text() == "echo one\n" and os.stat(path).st_mode & 0o777 == 0o755


def test_expired_chips_go_when_chips_are_listed(serve, root, cache_dir):
    """Found by an attack: with BETTER_EDIT_CHIP_TTL, a listing of chips left out the expired ones
    but left them on disk, a deleted secret with them, until some later call saved a new chip;
    the docs say a listing deletes them. It does."""
    (root / "a.env").write_text("x\nAPI_KEY=secret\n")
    server = serve(env={"BETTER_EDIT_CHIP_TTL": "1"})
    server.ok("be-delete", file="a.env", start=2)
    assert len(list(cache_dir.glob("chips/*/*.json"))) == 1
    time.sleep(1.5)
    assert server.ok("be-insert-chip")["chips"] == []
    assert list(cache_dir.glob("chips/*/*.json")) == []


@pytest.mark.parametrize(
    "name, first",
    [
        ("s.css", '/* Chip {id} from tool "be-delete" */'),
        ("p.html", '<!-- Chip {id} from tool "be-delete" -->'),
        ("n.md", '<!-- Chip {id} from tool "be-delete" -->'),
        ("a.py", '# Chip {id} from tool "be-delete"'),
    ],
)
def test_an_annotated_chip_is_a_comment_of_the_files_language(serve, root, name, first):
    """Found by an attack: `as: annotated` put `//` before each line in CSS, HTML, XML and
    Markdown, where it is no comment: the "comment" became content. JSON, which has no comments,
    is refused."""
    (root / "src.txt").write_text("one\ntwo --> */ -- x\n")
    (root / name).write_text("")
    (root / "d.json").write_text("{}\n")
    server = serve()
    chip = server.ok("be-delete", file="src.txt", start=2)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{chip}", "to": f"{name}:0", "as": "annotated"})
    lines = (root / name).read_text().splitlines()
    assert lines[0] == first.format(id=chip)
    if not name.endswith(".py"):
        end = "*/" if name.endswith(".css") else "-->"
        assert all(line.endswith(" " + end) and line.count(end) == 1 for line in lines), lines
        assert not name.endswith((".html", ".md")) or all(line[4:-4].count("--") == 0 for line in lines), (
            lines
        )
    server.err(
        "be-insert-chip", "INVALID_ARGUMENT", {"from": f"chip://{chip}", "to": "d.json:0", "as": "annotated"}
    )
    assert (root / "d.json").read_text() == "{}\n"


def test_an_annotated_chip_in_markup_holds_no_dashes_pair_and_jsonc_takes_one(serve, root):
    """Found by an attack: the arguments of an annotated chip holding `---` (a Markdown rule) or
    `--->` kept a `--` after the escape, which ends no comment in XML but breaks it (minidom
    refused the page); and `.jsonc` / `.json5` files, made for `//` comments, were refused as
    JSON."""
    import xml.dom.minidom

    (root / "src.txt").write_text("---\nA ---> B ---- C\n")
    (root / "page.xml").write_text("<root>\n</root>\n")
    (root / "tsconfig.jsonc").write_text("{\n}\n")
    server = serve()
    chip = server.ok("be-delete", file="src.txt", start=1, end=2)["chip"]
    server.ok("be-insert-chip", {"from": f"chip://{chip}", "to": "page.xml:1", "as": "annotated"})
    text = (root / "page.xml").read_text()
    xml.dom.minidom.parseString(text)  # (raises on a comment holding --)
    comments = [line for line in text.splitlines() if line.startswith("<!--")]
    assert comments and all("--" not in line[4:-3] for line in comments), comments
    server.ok("be-insert-chip", {"from": f"chip://{chip}", "to": "tsconfig.jsonc:1", "as": "annotated"})
    lines = (root / "tsconfig.jsonc").read_text().splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and all(line.startswith("// ") for line in lines[1:-1]), lines


def test_a_forced_rollback_of_files_already_gone_says_what_it_did(serve, root):
    """Found by an attack: a forced rollback of a file an event made and the user deleted since
    said "its current content was overwritten" and "the file was deleted", though it did neither;
    one of an edited file deleted since said it overwrote it, though it made it again."""
    server = serve()
    server.ok("be-write", file="new.txt", content="made\n")
    (root / "new.txt").unlink()
    result = server.ok("be-trx-rollback", force=True)
    assert not any("overwritten" in w or "was deleted" in w for w in result.get("warnings", [])), result
    (root / "old.txt").write_text("one\n")
    server.ok("be-replace", file="old.txt", start=1, content="two")
    (root / "old.txt").unlink()
    result = server.ok("be-trx-rollback", force=True)
    assert any("was gone" in w and "made again" in w for w in result["warnings"]), result
    assert not any("overwritten" in w for w in result["warnings"]), result
    assert (root / "old.txt").read_text() == "one\n"


def test_a_rollback_whose_kept_bytes_are_gone_says_so(serve, root, cache_dir):
    """Found by an attack: a rollback whose snapshot's .bin had been removed (by hand, or by a
    cleaner of caches) was an I/O error whose hint said to check free space."""
    (root / "a.txt").write_text("one\n")
    server = serve()
    server.ok("be-replace", file="a.txt", start=1, content="two")
    (kept,) = cache_dir.glob("snapshots/*/*.bin")
    kept.unlink()
    error = server.err("be-trx-rollback", "NOT_FOUND")
    assert "are gone from the snapshot folder" in error["message"] and "free space" not in error["hint"], (
        error
    )
    assert (root / "a.txt").read_text() == "two\n"


def test_a_lone_surrogate_in_content_is_named_as_such(serve, root):
    """Found by an attack: content holding "\\ud800" (a cut JSON escape of a pair) was refused
    as characters utf-8 cannot encode, with the hint to convert the file to UTF-8, which it was."""
    (root / "a.txt").write_text("one\n")
    server = serve()
    arguments = '{"file": "a.txt", "start": 1, "content": "x\\ud800"}'  # (escaped, as JSON sends it)
    server.send_line(
        f'{{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {{"name": "be-replace", "arguments": {arguments}}}}}'
    )
    error = server.recv()["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_ARGUMENT", error
    assert "U+D800, half of a UTF-16 pair" in error["message"] and "convert" not in error["hint"], error
    assert (root / "a.txt").read_text() == "one\n"
    # (the attack on the server: in `old`, of a file holding the whole character, it was a plain
    # MISMATCH, "read the file to see its current text", with no closest block; in an edit item too)
    (root / "a.txt").write_text("a \U0001f600 b\n")
    for name, arguments in (
        ("be-replace", '{"file": "a.txt", "old": "\\ud83d", "content": "x"}'),
        ("be-edit", '{"edits": [{"file": "a.txt", "old": "a \\ud83d", "content": "x"}]}'),
    ):
        server.send_line(
            f'{{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {{"name": "{name}", "arguments": {arguments}}}}}'
        )
        error = server.recv()["result"]["structuredContent"]["error"]
        assert (
            error["code"] == "INVALID_ARGUMENT"
            and "old holds U+D83D, half of a UTF-16 pair" in error["message"]
        ), error
        assert error["hint"] == "send the character itself, or both halves of its pair", error
    assert (root / "a.txt").read_text() == "a \U0001f600 b\n"


def test_every_unknown_argument_is_named_with_the_one_it_likely_means(serve, root):
    """Found by the agent-mistakes attack: `{"path", "old_string", "new_string"}` named only `path`,
    so three calls fixed three names; a be-edit item with `new_content` was taken for a delete
    and told its accepted names, which made removing the key (deleting the line) look right."""
    (root / "a.txt").write_text("one\ntwo\n")
    server = serve()
    args = {"path": "a.txt", "old_string": "one", "new_string": "ONE"}
    message = server.err("be-replace", "INVALID_ARGUMENT", args)["message"]
    assert "'path', 'old_string', 'new_string'" in message, message
    assert "'path' → 'file', 'old_string' → 'old', 'new_string' → 'content'" in message, message
    item = {"file": "a.txt", "start": 2, "end": 2, "new_content": "TWO"}
    message = server.err("be-edit", "INVALID_ARGUMENT", {"edits": [item]})["message"]
    assert "'new_content' → 'content'" in message, message
    # (the agent-mistakes probe: that item was still called a delete, with delete's names, and a
    # `type` for `op` got no name at all)
    assert "for replace" in message and "accepted: content," in message, message
    item = {"type": "replace", "file": "a.txt", "start": 2, "content": "TWO"}
    message = server.err("be-edit", "INVALID_ARGUMENT", {"edits": [item]})["message"]
    assert "'type' → 'op'" in message and "for replace" in message, message
    item = {"op": "insert", "file": "a.txt", "start": 1, "content": "x"}  # (the regression pass)
    message = server.err("be-edit", "INVALID_ARGUMENT", {"edits": [item]})["message"]
    assert "'start' → 'after_line'" in message and "'start' → 'start'" not in message, message
    message = server.err("be-insert", "INVALID_ARGUMENT", {"file": "a.txt", "line": 1, "content": "x"})[
        "message"
    ]
    assert "'line' → 'after_line'" in message, message
    message = server.err("be-read", "INVALID_ARGUMENT", {"fiel": "a.txt", "zzz": 1})["message"]
    assert "'fiel' → 'file'" in message and "'zzz' →" not in message, message
    assert (root / "a.txt").read_text() == "one\ntwo\n"


def test_a_snapshots_summary_counts_in_english(serve, root):
    """Found by the regression pass: summaries built outside the message table said
    `write: 1 lines`, `-> 1 lines` and `edit: 1 file(s), 1 item(s)`."""
    server = serve()
    server.ok("be-write", {"file": "a.txt", "content": "one"})
    server.ok("be-replace", {"file": "a.txt", "start": 1, "content": "two"})
    server.ok("be-edit", {"edits": [{"file": "a.txt", "start": 1, "content": "x\ny"}]})
    summaries = [s["summary"] for s in server.ok("be-trx-status")["snapshots"]]
    assert summaries == ["edit: 1 file, 1 item", "replace: lines 1-1 -> 1 line", "write: 1 line (created)"]


# ---- descriptors a host shares, cuts short or makes non-blocking --------------------------------


def _call_line(number, name, **arguments):
    message = {
        "jsonrpc": "2.0",
        "id": number,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return (json.dumps(message) + "\n").encode()


def _read_reply(fd, deadline=REPLY_TIMEOUT):
    """One reply line from descriptor `fd` (blocking or not), waiting at most `deadline` seconds."""
    import select

    data, end = b"", time.monotonic() + deadline
    while not data.endswith(b"\n"):
        if not select.select([fd], [], [], max(0, end - time.monotonic()))[0]:
            raise AssertionError(f"no whole reply in {deadline} s: {data[:200]!r}")
        chunk = os.read(fd, 1 << 20)
        assert chunk, data[:200]
        data += chunk
    return data


def _leave_mid_reply(root, env, requests):
    """Send `requests` (bytes) to a new server, read 10 bytes of its first reply and close its
    stdout, as a host that leaves; its exit status must be 0: its stderr."""
    import select

    out_r, out_w = os.pipe()
    server = subprocess.Popen(
        be_command_prefix(), stdin=subprocess.PIPE, stdout=out_w, stderr=subprocess.PIPE, cwd=root, env=env
    )
    os.close(out_w)
    try:
        server.stdin.write(requests)
        server.stdin.flush()
        assert select.select([out_r], [], [], REPLY_TIMEOUT)[0]
        os.read(out_r, 10)
        os.close(out_r)  # (the host leaves in the middle of the first reply)
        server.stdin.close()
        assert server.wait(REPLY_TIMEOUT) == 0
        return server.stderr.read().decode()
    finally:
        server.kill()


@pytest.mark.parametrize("unbuffered", [False, True])
def test_a_host_that_leaves_during_a_reply_gets_no_more_edits(root, be_env, unbuffered):
    """Found by an attack: with PYTHONUNBUFFERED=1 (common in hosts' settings and containers) the
    server's stdout is a raw stream, which takes part of a large reply and returns that count. The
    count went unchecked: a host that closed the pipe mid-reply went unnoticed and the next edit it
    had queued was made. Replies are written whole now, so the broken pipe stops the server."""
    (root / "a.txt").write_text("a\nb\n")
    (root / "d.txt").write_text("".join(f"line {n} " + "x" * 100 + "\n" for n in range(3000)))
    env = (
        dict(be_env, PYTHONUNBUFFERED="1")
        if unbuffered
        else {k: v for k, v in be_env.items() if k != "PYTHONUNBUFFERED"}
    )
    content = "".join(f"new {n}\n" for n in range(3000))
    said = _leave_mid_reply(
        root,
        env,
        _call_line(1, "be-replace", file="d.txt", start=1, end=3000, content=content)
        + _call_line(2, "be-replace", file="a.txt", start=1, content="EDITED AFTER THE HOST LEFT"),
    )
    assert (root / "a.txt").read_text() == "a\nb\n", said
    assert (root / "d.txt").read_text() == content  # (the first edit was made: stderr says it stands)
    assert "the change was made (event " in said and "it stands" in said, said


@pytest.mark.parametrize("which", ["stdin", "stdout"])
def test_a_descriptor_made_non_blocking_after_the_start_is_waited_on(root, be_env, which):
    """Found by an attack: a launcher that shares the server's stdin or stdout (Node's `stdio:
    'inherit'`) may make it non-blocking after the server started. A read with nothing yet was
    then taken for the end of input (the server quit), and a large reply was cut at 61,440
    bytes. Both wait now: every reply arrives whole."""
    (root / "a.txt").write_text("a\nb\n")
    (root / "d.txt").write_text("".join(f"line {n} " + "x" * 100 + "\n" for n in range(3000)))
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = subprocess.Popen(
        be_command_prefix(), stdin=in_r, stdout=out_w, stderr=subprocess.PIPE, cwd=root, env=be_env
    )
    try:
        os.write(in_w, _call_line(1, "be-read", file="a.txt"))
        assert json.loads(_read_reply(out_r))["id"] == 1
        # (the server's descriptor shares its open pipe with ours, and with it the flag)
        os.set_blocking(in_r if which == "stdin" else out_w, False)
        time.sleep(0.3)  # (a server that takes "nothing yet" for the end has quit by now)
        os.write(in_w, _call_line(2, "be-read", file="d.txt", max_lines=0))
        reply = json.loads(_read_reply(out_r))
        assert reply["id"] == 2 and reply["result"]["structuredContent"]["content"].count("\n") == 2999, (
            reply["id"]
        )
        os.write(in_w, _call_line(3, "be-replace", file="a.txt", start=1, content="A"))
        assert json.loads(_read_reply(out_r))["result"]["structuredContent"]["changed"] is True
    finally:
        os.close(in_w)
        assert server.wait(REPLY_TIMEOUT) == 0
        for fd in (in_r, out_w, out_r):
            os.close(fd)
    assert (root / "a.txt").read_text() == "A\nb\n"


def test_a_batch_whose_reply_is_lost_names_every_change_that_stands(root, be_env):
    """Found by an attack: a batch of two edits and a large read whose reply the host stopped
    reading said on stderr that the second change stands, and nothing of the first."""
    (root / "a.txt").write_text("a\nb\n")
    (root / "d.txt").write_text("".join(f"line {n} " + "x" * 100 + "\n" for n in range(3000)))
    calls = [
        json.loads(_call_line(1, "be-replace", file="a.txt", start=1, content="one")),
        json.loads(_call_line(2, "be-replace", file="a.txt", start=2, content="two")),
        json.loads(_call_line(3, "be-read", file="d.txt", max_lines=0)),
    ]
    start = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})  # fmt: skip
    said = _leave_mid_reply(root, be_env, (start + "\n" + json.dumps(calls) + "\n").encode())
    assert (root / "a.txt").read_text() == "one\ntwo\n"
    assert len(re.findall(r"the change was made \(event [0-9a-f]+\).*it stands", said)) == 2, said
