"""Tool errors through the official TypeScript MCP SDK client (@modelcontextprotocol/sdk).

That SDK validates every structuredContent against the tool's outputSchema, isError or not; when
an error result did not fit, `client.callTool` threw -32602 and the client lost the error code,
message and hint. So: one failing call per error code we can cause from outside (and at least one
per tool, since each tool has its own outputSchema) goes through tests/ts_client/client.mjs, and
the SDK must hand back the error intact. The same calls then go through the official Python `mcp`
SDK, which must see the very same error objects.

The node dependencies are installed once per session with `npm ci` (skipped when node_modules
already matches package-lock.json); without node and npm the tests fail, they do not skip. The
server is started through `be_command_prefix()`, so BE_EXE runs this module against the frozen
executable (tests/test_frozen.py does).
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import be_command_prefix
from test_mcp import _get, run_sdk

TS_DIR = Path(__file__).resolve().parent / "ts_client"
STAMP = TS_DIR / "node_modules" / ".better-edit-installed"  # sha256 of the lock file npm ci installed
VIEW = "<viewed_code_id of stale.txt>"  # replaced by the id read before stale.txt changed
CHIP_ID = re.compile(r"chip://[0-9a-f]{6,12}")

# (id, expected code, tool, arguments): every call fails, none changes a file.
CASES = [
    ("unknown-argument", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "bogus": 1}),
    ("wrong-type", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "start": "x"}),
    ("encoding-not-a-string", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "encoding": 5}),
    ("missing-argument", "INVALID_ARGUMENT", "be-insert", {"after_line": 0, "content": "x"}),
    ("trx-status-unknown-argument", "INVALID_ARGUMENT", "be-trx-status", {"bogus": True}),
    ("trx-commit-unknown-argument", "INVALID_ARGUMENT", "be-trx-commit", {"bogus": True}),
    ("unknown-encoding", "ENCODING", "be-read", {"file": "three.txt", "encoding": "no-such-codec"}),
    ("not-utf8", "ENCODING", "be-read", {"file": "latin1.txt"}),
    ("missing-file", "NOT_FOUND", "be-read", {"file": "missing.txt"}),
    ("balance-missing-file", "NOT_FOUND", "be-balance", {"file": "missing.txt"}),
    ("no-function", "NOT_FOUND", "be-func-range", {"file": "three.txt", "line": 1}),
    ("no-tag", "NOT_FOUND", "be-tag-range", {"file": "three.txt", "line": 1}),
    ("missing-chip", "NOT_FOUND", "be-insert-chip", {"from": "chip://0000000000", "to": "three.txt:0"}),
    ("missing-snapshot", "NOT_FOUND", "be-trx-rollback", {"event_id": "000000"}),
    ("replace-line-99", "OUT_OF_RANGE", "be-replace", {"file": "three.txt", "start": 99, "content": "x"}),
    ("insert-after-99", "OUT_OF_RANGE", "be-insert", {"file": "three.txt", "after_line": 99, "content": "x"}),
    ("old-not-found", "MISMATCH", "be-replace", {"file": "three.txt", "old": "four", "content": "x"}),
    ("old-differs-at-start", "MISMATCH", "be-replace", {"file": "three.txt", "start": 2, "old": "TWO", "content": "x"}),
    ("old-twice", "AMBIGUOUS", "be-replace", {"file": "twice.txt", "old": "dup", "content": "x"}),
    ("changed-since-read", "STALE_VIEW", "be-replace", {"file": "stale.txt", "start": 1, "content": "x", "viewed_code_id": VIEW}),
    ("delete-lone-brace", "UNBALANCED", "be-delete", {"file": "open.js", "start": 1, "end": 1}),
    ("nul-byte", "BINARY_FILE", "be-read", {"file": "nul.bin"}),
    ("read-outside-root", "SANDBOX", "be-read", {"file": "../outside.txt"}),
    ("write-outside-root", "SANDBOX", "be-write", {"file": "../new.txt", "content": "x"}),
    ("read-only-file", "PERMISSION", "be-replace", {"file": "ro.txt", "start": 1, "content": "x"}),
    ("rollback-after-change", "CONFLICT", "be-trx-rollback", {"file": "conflict.txt"}),
]  # fmt: skip
TOOLS = {
    "be-read", "be-replace", "be-insert", "be-delete", "be-write", "be-balance", "be-func-range",
    "be-tag-range", "be-insert-chip", "be-trx-status", "be-trx-commit", "be-trx-rollback",
}  # fmt: skip


# ---- the node client ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ts_client():
    """[node, client.mjs], after `npm ci` in tests/ts_client unless node_modules is already current."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not (node and npm):
        pytest.fail(
            "node and npm are needed to test the official TypeScript MCP SDK client "
            f"(node: {node or 'missing'}, npm: {npm or 'missing'}); install Node.js 20 or later"
        )
    digest = hashlib.sha256((TS_DIR / "package-lock.json").read_bytes()).hexdigest()
    if not (STAMP.is_file() and STAMP.read_text() == digest):
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=str(TS_DIR), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert result.returncode == 0, f"npm ci failed in {TS_DIR}:\n{result.stdout}\n{result.stderr}"
        STAMP.write_text(digest)
    return [node, str(TS_DIR / "client.mjs")]


# ---- one workspace, both SDKs ----------------------------------------------------------------------


def clean_env(cache, root):
    """As conftest's be_env: private cache, English, no inherited BETTER_EDIT_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BETTER_EDIT_", "LC_", "LANG"))}
    env.update(BETTER_EDIT_CACHE_DIR=str(cache), BETTER_EDIT_WORKSPACE=str(root))
    env.update(LANG="C.UTF-8", PYTHONIOENCODING="utf-8")
    return env


def prepare(root, cli):
    """The files every case needs; returns the viewed_code_id that stale.txt no longer matches."""
    (root / "three.txt").write_text("one\ntwo\nthree\n")
    (root / "twice.txt").write_text("dup\nmiddle\ndup\n")
    (root / "open.js").write_text("function f() {\n  return 1;\n}\n")
    (root / "nul.bin").write_bytes(b"a\0b\n")
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (root.parent / "outside.txt").write_text("outside the root\n")
    (root / "stale.txt").write_text("v1\nv2\n")
    view = json.loads(cli("read", "-f", "stale.txt", "-o", "json"))["viewed_code_id"]
    (root / "stale.txt").write_text("changed on disk\nv2\n")
    (root / "conflict.txt").write_text("c1\n")
    cli("replace", "-f", "conflict.txt", "-s", "1", "-c", "c2")  # a snapshot the rollback would undo
    (root / "conflict.txt").write_text("changed on disk\n")
    (root / "ro.txt").write_text("read only\n")
    os.chmod(root / "ro.txt", 0o444)
    return view


def reset(pristine, live):
    """Put back the workspace and cache as prepare left them, so each SDK starts from the same state."""
    if (live / "root" / "ro.txt").exists():
        os.chmod(live / "root" / "ro.txt", 0o644)  # removable on Windows too
    for name in ("root", "cache"):
        if (live / name).exists():
            shutil.rmtree(live / name)
        shutil.copytree(pristine / name, live / name, symlinks=True)


def run_ts(ts_client, command, env, root, calls):
    """The tool list line and one outcome per call, as client.mjs printed them."""
    result = subprocess.run(
        [*ts_client, *command, "--root", str(root)],
        input=json.dumps([{"name": name, "arguments": arguments} for name, arguments in calls]),
        cwd=str(root), env=env, capture_output=True, text=True, encoding="utf-8", timeout=60,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == len(calls) + 1, (
        f"client.mjs exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return json.loads(lines[0])["tools"], [json.loads(line) for line in lines[1:]]


def run_python(command, env, root, tmp_path, calls):
    """One outcome per call through the official Python SDK, in client.mjs's format."""

    async def body(session, init):
        await session.list_tools()
        outcomes = []
        for name, arguments in calls:
            try:
                result = await session.call_tool(name, arguments)
            except Exception as exc:  # the SDK refused the result
                outcomes.append({"thrown": {"code": getattr(exc, "code", None), "message": str(exc)}})
                continue
            outcomes.append(
                {
                    "isError": bool(_get(result, "is_error", "isError")),
                    "structuredContent": _get(result, "structured_content", "structuredContent"),
                    "text": "\n".join(item.text for item in result.content if item.type == "text"),
                }
            )
        return outcomes

    return run_sdk(command, env, root, tmp_path, body, ("--root", str(root)))


@pytest.fixture(scope="module")
def outcomes(ts_client, tmp_path_factory):
    """{"tools": what the TS client listed, "ts": {case id: outcome}, "py": {case id: outcome}}."""
    base = tmp_path_factory.mktemp("ts_client")
    live, pristine = base / "live", base / "pristine"
    root, cache = live / "root", live / "cache"
    for path in (root, cache, pristine):
        path.mkdir(parents=True)
    command, env = be_command_prefix(), clean_env(cache, root)

    def cli(*args):
        result = subprocess.run([*command, *args], cwd=str(root), env=env, capture_output=True, timeout=60)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        return result.stdout

    view = prepare(root, cli)
    for name in ("root", "cache"):
        os.rename(live / name, pristine / name)
    calls = [(tool, {k: view if v == VIEW else v for k, v in args.items()}) for _, _, tool, args in CASES]
    ids = [case[0] for case in CASES]

    reset(pristine, live)
    tools, ts = run_ts(ts_client, command, env, root, calls)
    reset(pristine, live)
    py = run_python(command, env, root, base, calls)
    return {"tools": tools, "ts": dict(zip(ids, ts)), "py": dict(zip(ids, py))}


# ---- the tests --------------------------------------------------------------------------------------


def test_cases_cover_every_tool_and_the_sdk_knows_every_output_schema(outcomes):
    assert {tool for _, _, tool, _ in CASES} == TOOLS
    assert outcomes["tools"] == dict.fromkeys(TOOLS, True)  # so callTool validates each result


def test_ts_sdk_is_pinned():
    package = json.loads((TS_DIR / "package.json").read_text())
    lock = json.loads((TS_DIR / "package-lock.json").read_text())
    pinned = package["dependencies"]["@modelcontextprotocol/sdk"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), "pin an exact version"
    assert lock["packages"]["node_modules/@modelcontextprotocol/sdk"]["version"] == pinned


@pytest.mark.parametrize("case_id, code", [case[:2] for case in CASES], ids=[case[0] for case in CASES])
def test_ts_sdk_returns_the_error_intact(outcomes, case_id, code):
    outcome = outcomes["ts"][case_id]
    assert "thrown" not in outcome, f"the TypeScript SDK threw the {code} result away: {outcome['thrown']}"
    assert outcome["isError"] is True
    structured = outcome["structuredContent"]
    assert structured["status"] == "error"
    error = structured["error"]
    assert error["code"] == code, error
    assert error["message"].strip() and error["hint"].strip(), error
    assert outcome["text"].startswith(f"{code}: {error['message']}\nhint: {error['hint']}")


@pytest.mark.parametrize("case_id", [case[0] for case in CASES])
def test_python_sdk_sees_the_same_error(outcomes, case_id):
    ts, py = outcomes["ts"][case_id], outcomes["py"][case_id]
    assert "thrown" not in py, py["thrown"]
    assert py["isError"] is True

    def comparable(outcome):
        structured = outcome.get("structuredContent") or {}
        error = {k: v for k, v in structured.get("error", {}).items() if k != "chip"}
        return dict(structured, error=error), CHIP_ID.sub("chip://ID", outcome.get("text", ""))

    assert comparable(py) == comparable(ts)
