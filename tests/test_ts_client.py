"""Tool errors through the official TypeScript MCP SDK client (@modelcontextprotocol/sdk).

That SDK validates every structuredContent against the tool's outputSchema, isError or not; when
an error result did not fit, `client.callTool` threw -32602 and the client lost the error code,
message and hint. So: one failing call per error code we can cause from outside (and at least one
per tool, since each tool has its own outputSchema) goes through tests/ts_client/client.mjs, and
the SDK must hand back the error intact. be-edit, whose results nest arrays of objects, also gets
successful calls (a multi-file edit and a patch) after the failing ones. The same calls then go
through the official Python `mcp` SDK, which must see the very same results and leave the same files.

The node dependencies are installed once per session with `npm ci` (skipped when node_modules
already matches package-lock.json); without node and npm the tests fail, they do not skip. The
server is started through `harness.be_command_prefix()`, so BE_EXE runs this module against the frozen
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
from harness import be_command_prefix, clean_env, exclusive, run_cli
from test_mcp import _get, run_sdk

pytestmark = pytest.mark.xdist_group("ts_client")  # one npm set-up (pyproject.toml: addopts)

TS_DIR = Path(__file__).resolve().parent / "ts_client"
STAMP = TS_DIR / "node_modules" / ".better-edit-installed"  # sha256 of the lock file npm ci installed
VIEW = "<viewed_code_id of stale.txt>"  # replaced by the id read before stale.txt changed
CHIP_ID = re.compile(r"chip://[0-9a-f]{6,12}")
EVICTED = re.compile(r"chip [0-9a-f]+ was evicted")

# (id, expected code, tool, arguments): every call fails, none changes a file.
INPLACE_OLD = "def f():\n    x = 1\n    return x"
CUT_LINE = "".join(f"{n:06d};" for n in range(21_000))  # 147,000 characters: a read shows it cut
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
    ("missing-file-near-name", "NOT_FOUND", "be-read", {"file": "Three.txt"}),
    ("replace-line-99", "OUT_OF_RANGE", "be-replace", {"file": "three.txt", "start": 99, "content": "x"}),
    ("read-end-back-before-start", "OUT_OF_RANGE", "be-read", {"file": "three.txt", "start": 2, "end": -5}),
    ("occurrence-zero", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "target": {"kind": "marker", "value": "two", "occurrence": 0}}),
    ("insert-after-99", "OUT_OF_RANGE", "be-insert", {"file": "three.txt", "after_line": 99, "content": "x"}),
    ("old-not-found", "MISMATCH", "be-replace", {"file": "three.txt", "old": "four", "content": "x"}),
    ("old-differs-at-start", "MISMATCH", "be-replace", {"file": "three.txt", "start": 2, "old": "TWO", "content": "x"}),
    # lines 5-7 were changed in place since `old` was copied from them; lines 1-3 hold a copy
    ("old-changed-in-place", "MISMATCH", "be-replace", {"file": "inplace.txt", "start": 5, "end": 7, "old": INPLACE_OLD, "content": "x"}),
    ("hunk-changed-in-place", "MISMATCH", "be-edit", {"patch": "--- a/inplace.txt\n+++ b/inplace.txt\n@@ -5,3 +5,3 @@\n def f():\n-    x = 1\n+    x = 3\n     return x\n"}),
    # hunk lines after a file header that no @@ line opens (they were skipped in silence)
    ("patch-header-without-hunk", "INVALID_ARGUMENT", "be-edit", {"patch": "--- a/three.txt\n+++ b/three.txt\n one\n-two\n"}),
    # a rename (git apply's), and text with no diff in it: each says what to do instead
    ("patch-rename", "INVALID_ARGUMENT", "be-edit", {"patch": "diff --git a/three.txt b/four.txt\nsimilarity index 100%\nrename from three.txt\nrename to four.txt\n"}),
    ("patch-no-hunk", "INVALID_ARGUMENT", "be-edit", {"patch": "no diff here\n"}),
    # one insert item sent twice (a retry or a copy): its lines would stand twice
    ("edit-insert-twice", "INVALID_ARGUMENT", "be-edit", {"edits": [{"file": "three.txt", "after_line": 1, "content": "x"}] * 2}),
    ("old-twice", "AMBIGUOUS", "be-replace", {"file": "twice.txt", "old": "dup", "content": "x"}),
    ("changed-since-read", "STALE_VIEW", "be-replace", {"file": "stale.txt", "start": 1, "content": "x", "viewed_code_id": VIEW}),
    ("delete-lone-brace", "UNBALANCED", "be-delete", {"file": "open.js", "start": 1, "end": 1}),
    ("nul-byte", "BINARY_FILE", "be-read", {"file": "nul.bin"}),
    ("read-outside-root", "SANDBOX", "be-read", {"file": "../outside.txt"}),
    ("write-outside-root", "SANDBOX", "be-write", {"file": "../new.txt", "content": "x"}),
    ("read-only-file", "PERMISSION", "be-replace", {"file": "ro.txt", "start": 1, "content": "x"}),
    ("rollback-after-change", "CONFLICT", "be-trx-rollback", {"file": "conflict.txt"}),
    # the server runs under a 400 kB file-size limit (prlimit): a 1 MB write fails part way
    ("file-size-limit", "IO", "be-replace", {"file": "three.txt", "start": 1, "content": "x" * 1_000_000}),
    ("nul-in-content", "INVALID_ARGUMENT", "be-write", {"file": "three.txt", "content": "a\u0000b"}),
    ("lazy-placeholder", "PLACEHOLDER", "be-replace", {"file": "three.txt", "start": 1, "end": 3, "content": "// ... existing code ..."}),
    # the start a read showed of a long line, plus an addition: the rest of the line would go
    ("built-from-a-cut-line", "PLACEHOLDER", "be-replace", {"file": "cut.txt", "start": 1, "content": CUT_LINE[:99_998] + "x();"}),
    ("arguments-nested-too-deep", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "start": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}),
    ("encoding-with-a-shift-state", "ENCODING", "be-read", {"file": "three.txt", "encoding": "utf-7"}),
    # (0.3, later) a target sent as a JSON string nested too deep to decode: INTERNAL (RecursionError) before
    ("target-nested-too-deep", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "target": '{"kind":"line","value":' + "[" * 1000 + "]" * 1000 + "}"}),
    # (0.3) an append after its context already applied; a miscounted hunk before a ---/+++ pair
    # naming its own file; a hunk counting an old line but holding only + lines; an <li> left
    # open named by a tag target; a placeholder inserted
    ("patch-applied-twice", "MISMATCH", "be-edit", {"patch": "--- a/appended.sql\n+++ b/appended.sql\n@@ -1,2 +1,3 @@\n SELECT 1;\n SELECT 2;\n+-- end\n"}),
    ("patch-unclear-pair", "INVALID_ARGUMENT", "be-edit", {"patch": "--- a/pair.txt\n+++ b/pair.txt\n@@ -1,5 +1,5 @@\n one\n--- a/pair.txt\n+++ b/pair.txt\n@@ -3 +3 @@\n-four\n+FOUR\n"}),
    ("patch-only-added-lines", "INVALID_ARGUMENT", "be-edit", {"patch": "--- a/three.txt\n+++ b/three.txt\n@@ -1,1 +1,1 @@\n+x\n"}),
    ("tag-left-open", "NOT_FOUND", "be-read", {"file": "open.html", "target": "tag:li"}),
    ("insert-placeholder", "PLACEHOLDER", "be-insert", {"file": "three.txt", "after_line": 1, "content": "// ... existing code ..."}),
    # (0.3, later) a second ---/+++ section of a file whose lines the first one adds, that would move
    ("patch-later-section", "AMBIGUOUS", "be-edit", {"patch": "--- a/sections.txt\n+++ b/sections.txt\n@@ -1,1 +1,3 @@\n top\n+b = 2\n+c = 3\n--- a/sections.txt\n+++ b/sections.txt\n@@ -2,2 +2,2 @@\n-b = 2\n+b = 20\n c = 3\n"}),
    # (0.3, this session) an old cut inside a word; unknown names with the ones meant; a patch sent
    # twice; a closest block standing twice (no retry token); an old copied with a diff's columns
    ("old-cuts-a-word", "MISMATCH", "be-replace", {"file": "three.txt", "old": "on", "content": "x"}),
    ("unknown-arguments-meant", "INVALID_ARGUMENT", "be-replace", {"path": "three.txt", "old_string": "one", "new_string": "x"}),
    ("patch-applied-nowhere", "MISMATCH", "be-edit", {"patch": "--- a/three.txt\n+++ b/three.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+two\n"}),
    ("closest-stands-twice", "MISMATCH", "be-replace", {"file": "twice.txt", "old": "dux", "content": "x"}),
    ("old-with-diff-columns", "MISMATCH", "be-replace", {"file": "diffcols.py", "old": " def f(a):\n-    b = a * 3\n+    b = a * 2\n     return b", "content": "x"}),
    # (0.3, a later session) an ASCII file named UTF-16; a JSON array that does not parse
    ("named-utf16-not-utf16", "ENCODING", "be-read", {"file": "three.txt", "encoding": "utf-16"}),
    ("edits-json-does-not-parse", "INVALID_ARGUMENT", "be-edit", {"edits": '[{"file": "three.txt", "start": 1,]'}),
    # (0.3, the last session) content relative to a one-line old in Python; content in a Markdown
    # fence; a function target whose line is another function's
    ("content-relative-to-old", "INVALID_ARGUMENT", "be-replace", {"file": "indent.py", "old": "x = 1", "content": "if x:\n    x = 2"}),
    ("content-in-a-fence", "INVALID_ARGUMENT", "be-write", {"file": "indent.py", "content": "```python\nx = 2\n```\n"}),
    ("target-inside-another", "NOT_FOUND", "be-delete", {"file": "callback.js", "target": "function:callback"}),
    # (0.3, a session after) a placeholder found by an attack: "is the same" of the rest of the file
    ("placeholder-rest-is-the-same", "PLACEHOLDER", "be-write", {"file": "indent.py", "content": "x = 2\n# rest of the file is the same\n"}),
    # (0.3, a later session) a comment that names the function it keeps, which the content deletes
    ("placeholder-names-kept", "PLACEHOLDER", "be-write", {"file": "diffcols.py", "content": "x = 2\n# f unchanged\n"}),
    # (0.3, the session after) a stub whose note says the rest is kept (half of a UTF-16 pair in
    # old is no case: the Python SDK cannot send one; tests/test_mcp.py sends it raw)
    ("placeholder-stub-note", "PLACEHOLDER", "be-write", {"file": "diffcols.py", "content": "def f(a):\n    pass  # rest unchanged\n"}),
    # (0.3, this session) an `old` with a read prefix whose text stands twice: the prefix no longer
    # picks one; a several-file edit whose read-only file is named with its item (index, failed)
    ("old-prefixed-twice", "AMBIGUOUS", "be-replace", {"file": "twice.txt", "old": "1\tdup", "content": "x"}),
    ("edit-read-only-item", "PERMISSION", "be-edit", {"edits": [
        {"file": "three.txt", "start": 1, "content": "ONE"},
        {"file": "ro.txt", "start": 1, "content": "x"},
    ]}),
    # (0.3, a later session) a target of another tool's kind word names the one meant; a target
    # value that is no text is refused; an AMBIGUOUS edit item of 1,500 places lists 1,000
    ("target-kind-word", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "target": "func:main"}),
    ("target-value-list", "INVALID_ARGUMENT", "be-read", {"file": "three.txt", "target": {"kind": "marker", "value": ["one"]}}),
    ("edit-item-many-places", "AMBIGUOUS", "be-edit", {"edits": [{"file": "many.txt", "old": "a", "content": "b"}]}),
    # two bad items: line 99 of a 3-line file, and an `old` found twice; the first one's code leads
    ("edit-two-bad-items", "OUT_OF_RANGE", "be-edit", {"edits": [
        {"file": "three.txt", "start": 99, "content": "x"},
        {"file": "twice.txt", "old": "dup", "content": "y"},
    ]}),
    # (0.3, the contract audit) a bare `# ...` inserted; an argument missing, named with the tool
    ("insert-bare-ellipsis", "PLACEHOLDER", "be-insert", {"file": "indent.py", "after_line": 1, "content": "# ...\nx = 3"}),
    ("func-range-without-line", "INVALID_ARGUMENT", "be-func-range", {"file": "indent.py"}),
    # (0.3, this session) a later ---/+++ section changing a line an earlier one adds (`\\item`:
    # a stray hunk line, no end-of-file marker)
    ("patch-sections-in-turn", "MISMATCH", "be-edit", {"patch": "--- a/three.txt\n+++ b/three.txt\n@@ -1,2 +1,4 @@\n one\n+X1\n+X2\n two\n--- a/three.txt\n+++ b/three.txt\n@@ -1,3 +1,3 @@\n one\n X1\n-X2\n+Y2\n"}),
    # (the agent-mistakes probe) a function's body sent for its whole target; a SEARCH/REPLACE block
    ("body-for-function-target", "INVALID_ARGUMENT", "be-replace", {"file": "indent.py", "target": "function:f", "content": "    return 2"}),
    ("search-replace-block", "INVALID_ARGUMENT", "be-replace", {"file": "indent.py", "start": 4, "content": "<<<<<<< SEARCH\n    return x\n=======\n    return 2\n>>>>>>> REPLACE"}),
    ("patch-backslash-line", "INVALID_ARGUMENT", "be-edit", {"patch": "--- a/three.txt\n+++ b/three.txt\n@@ -1,2 +1,3 @@\n one\n+\\item new\n\\item two\n"}),
]  # fmt: skip
if os.environ.get("BE_EXE"):  # a one-file executable unpacks itself: under a file-size limit it cannot
    CASES = [case for case in CASES if case[1] != "IO"]
# (id, tool, arguments): calls that succeed, made after every case above, on files no case reads.
METHODS = (
    "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 2\n"
)
EDITS = [
    # items in no particular order; line numbers are those of the files before the call
    ("edit-two-files", "be-edit", {"edits": [
        {"file": "edit_a.txt", "after_line": -1, "content": "four"},
        {"file": "edit_b.txt", "after_line": 0, "content": "top"},
        {"file": "edit_a.txt", "start": 2, "old": "two", "content": "TWO"},
    ]}),
    # the hunk says line 2, its lines are at line 1: applied there with a warning
    ("patch-string", "be-edit", {"patch": "--- a/patch.txt\n+++ b/patch.txt\n@@ -2,3 +2,3 @@\n alpha\n-beta\n+BETA\n gamma\n"}),
    # self-correcting edits: replace by a target, and an `old` still carrying its read prefixes
    ("replace-by-target", "be-replace", {"file": "target.txt", "target": {"kind": "marker", "value": "beta"}, "content": "BETA"}),
    ("old-with-read-prefixes", "be-replace", {"file": "prefixed.txt", "old": "2\tb", "content": "B"}),
    # a patch of a latin-1 file, in the call's encoding
    ("patch-legacy-encoding", "be-edit", {"patch": "--- a/legacy.txt\n+++ b/legacy.txt\n@@ -1,2 +1,2 @@\n café\n-b\n+bé\n", "encoding": "latin-1"}),
    # a method named with its class, in an item (and a run in class A that must stay)
    ("edit-by-qualified-target", "be-edit", {"edits": [{"file": "methods.py", "target": "function:B.run", "content": "    def run(self):\n        return 3"}]}),
    # a TypeScript function whose return type is an object type: its body goes with it
    ("replace-ts-function-by-target", "be-replace", {"file": "size.ts", "target": "function:size", "content": "const size = () => null;"}),
]  # fmt: skip
EDITED = {  # what the files hold after EDITS, through either SDK
    "edit_a.txt": b"one\nTWO\nthree\nfour\n",
    "edit_b.txt": b"top\nb\n",
    "patch.txt": b"alpha\nBETA\ngamma\n",
    "target.txt": b"alpha\nBETA\n",
    "prefixed.txt": b"a\nB\n",
    "legacy.txt": "café\nbé\n".encode("latin-1"),
    "methods.py": METHODS.replace("return 2", "return 3").encode(),
    "size.ts": b"const size = () => null;\n",
}
EVENT_ID = re.compile(r'"event_id":\s*"[0-9a-f]{6}"')  # in the text of a result (its JSON)
TOOLS = {
    "be-read", "be-replace", "be-insert", "be-delete", "be-write", "be-balance", "be-func-range",
    "be-tag-range", "be-insert-chip", "be-trx-status", "be-trx-commit", "be-trx-rollback", "be-edit",
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
    with exclusive(TS_DIR / "node_modules.lock"):  # (the executable's suite runs this file too)
        if not (STAMP.is_file() and STAMP.read_text() == digest):
            result = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=str(TS_DIR), capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert result.returncode == 0, f"npm ci failed in {TS_DIR}:\n{result.stdout}\n{result.stderr}"
            STAMP.write_text(digest)
    return [node, str(TS_DIR / "client.mjs")]


# ---- one workspace, both SDKs ----------------------------------------------------------------------


def prepare(root, cli):
    """The files every case needs; returns the viewed_code_id that stale.txt no longer matches."""
    (root / "three.txt").write_text("one\ntwo\nthree\n")
    (root / "cut.txt").write_text(CUT_LINE + "\nend\n")
    (root / "twice.txt").write_text("dup\nmiddle\ndup\n")
    (root / "many.txt").write_text("a\n" * 1500)
    (root / "diffcols.py").write_text("def f(a):\n    b = a * 3\n    return b\n")
    (root / "indent.py").write_text("def f():\n    if True:\n        x = 1\n    return x\n")
    (root / "callback.js").write_text(
        "class W {\n  run (rules, callback = () => {}) {\n    return rules\n  }\n}\n"
    )
    (root / "open.js").write_text("function f() {\n  return 1;\n}\n")
    (root / "appended.sql").write_text("SELECT 1;\nSELECT 2;\n-- end\n")
    (root / "pair.txt").write_text("one\n-- a/pair.txt\nthree\nfour\n")
    (root / "open.html").write_text("<ul>\n<li>first\n<li>second\n</ul>\n")
    (root / "sections.txt").write_text("top\nx = 1\n\nb = 2\nc = 3\n")
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
    (root / "edit_a.txt").write_text("one\ntwo\nthree\n")
    (root / "edit_b.txt").write_text("b\n")
    (root / "patch.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "target.txt").write_text("alpha\nbeta\n")
    (root / "prefixed.txt").write_text("a\nb\n")
    (root / "legacy.txt").write_bytes("café\nb\n".encode("latin-1"))
    (root / "methods.py").write_text(METHODS)
    (root / "size.ts").write_text(
        "function size(o: string): {\n  unit: string;\n} | null {\n  return null;\n}\n"
    )
    (root / "inplace.txt").write_text(INPLACE_OLD + "\n\n" + INPLACE_OLD.replace("x = 1", "x = 2") + "\n")
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
    limited = [shutil.which("prlimit") or "prlimit", "--fsize=400000", *command]  # (util-linux)
    if os.environ.get("BE_EXE"):
        limited = command

    def cli(*args):
        result = run_cli(*args, cwd=root, env=env, command=command)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        return result.stdout

    view = prepare(root, cli)
    for name in ("root", "cache"):
        os.rename(live / name, pristine / name)
    calls = [(tool, {k: view if v == VIEW else v for k, v in args.items()}) for _, _, tool, args in CASES]
    calls += [(tool, args) for _, tool, args in EDITS]
    ids = [case[0] for case in CASES] + [edit[0] for edit in EDITS]

    def edited():
        return {name: (root / name).read_bytes() for name in EDITED}

    reset(pristine, live)
    tools, ts = run_ts(ts_client, limited, env, root, calls)
    ts_files = edited()
    reset(pristine, live)
    py = run_python(limited, env, root, base, calls)
    return {
        "tools": tools,
        "ts": dict(zip(ids, ts)),
        "py": dict(zip(ids, py)),
        "files": {"ts": ts_files, "py": edited()},
    }


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


def test_ts_sdk_carries_this_sessions_error_words(outcomes):
    """The errors added in 0.3's late fixes reach a TypeScript client whole: the word an old cuts,
    the names meant, a patch that looks applied, a closest block without a token, a diff's columns."""
    errors = {case: outcomes["ts"][case]["structuredContent"]["error"] for case in (
        "old-cuts-a-word", "unknown-arguments-meant", "patch-applied-nowhere", "closest-stands-twice",
        "old-with-diff-columns",
    )}  # fmt: skip
    assert "it has 'on' where the file has 'one'" in errors["old-cuts-a-word"]["message"]
    assert "'new_string' → 'content'" in errors["unknown-arguments-meant"]["message"]
    assert "the patch looks applied already" in errors["patch-applied-nowhere"]["message"]
    closest = errors["closest-stands-twice"]["closest"]
    assert closest["first_difference"] and "viewed_code_id" not in closest, closest
    assert errors["old-with-diff-columns"]["closest"]["first_difference"]["kind"] == "diff_prefixes"


def test_ts_sdk_carries_the_words_of_the_later_errors(outcomes):
    """Errors added after that: a file named UTF-16 that is not, and edits whose JSON does not
    parse, reach a TypeScript client whole, naming what gives them away."""
    errors = {case: outcomes["ts"][case]["structuredContent"]["error"] for case in (
        "named-utf16-not-utf16", "edits-json-does-not-parse",
    )}  # fmt: skip
    assert "0x0A bytes are no line breaks" in errors["named-utf16-not-utf16"]["message"]
    assert "does not parse (Expecting" in errors["edits-json-does-not-parse"]["message"]


def test_ts_sdk_carries_the_words_of_the_last_errors(outcomes):
    """The refusals added last: content relative to a one-line old, content in a Markdown fence, a
    function target whose line belongs to another function, reach a TypeScript client whole."""
    errors = {case: outcomes["ts"][case]["structuredContent"]["error"] for case in (
        "content-relative-to-old", "content-in-a-fence", "target-inside-another",
    )}  # fmt: skip
    assert "its line 2 is indented less than that line" in errors["content-relative-to-old"]["message"]
    assert "force: true" in errors["content-relative-to-old"]["hint"]
    assert "wrapped in a Markdown code fence" in errors["content-in-a-fence"]["message"]
    assert "function run (lines 2-4)" in errors["target-inside-another"]["message"]
    placeholder = outcomes["ts"]["placeholder-rest-is-the-same"]["structuredContent"]["error"]
    assert "'# rest of the file is the same'" in placeholder["message"], placeholder
    stub = outcomes["ts"]["placeholder-stub-note"]["structuredContent"]["error"]
    assert "'    pass  # rest unchanged'" in stub["message"], stub


def test_ts_sdk_carries_the_later_sessions_hints_and_cut_lists(outcomes):
    """The hint naming the target meant, and an edit item's list of places cut at 1,000 with the
    warning of how many there are, reach a TypeScript client whole."""
    near = outcomes["ts"]["target-kind-word"]["structuredContent"]["error"]
    assert near["hint"].startswith('did you mean "function:main"?'), near
    many = outcomes["ts"]["edit-item-many-places"]["structuredContent"]["error"]
    assert len(many["failed"][0]["candidates"]) == 1000, many["failed"][0].keys()
    assert "failed[0].candidates lists the first 1000 of 1500" in many["warnings"], many.get("warnings")


def test_ts_sdk_carries_this_sessions_refusals(outcomes):
    """An `old` whose read prefix names one of two identical lines, and a several-file edit with a
    read-only file, reach a TypeScript client whole: the candidates, and the failing item."""
    prefixed = outcomes["ts"]["old-prefixed-twice"]["structuredContent"]["error"]
    assert "naming lines 1-1" in prefixed["message"] and "viewed_code_id" in prefixed["hint"], prefixed
    assert prefixed["candidates"] == [{"start": 1, "end": 1}, {"start": 3, "end": 3}], prefixed
    permission = outcomes["ts"]["edit-read-only-item"]["structuredContent"]["error"]
    assert permission["index"] == 1 and [one["index"] for one in permission["failed"]] == [1], permission


def test_ts_sdk_carries_the_contract_audits_messages(outcomes):
    """The contract audit's fixes reach a TypeScript client: a MISMATCH message ending with its
    closest block's difference in words, an argument error naming the tool as listed, PERMISSION
    in the system's words, and a bare `# ...` inserted refused."""
    mismatch = outcomes["ts"]["closest-stands-twice"]["structuredContent"]["error"]
    assert "; closest block: line " in mismatch["message"] and mismatch["closest"], mismatch
    missing = outcomes["ts"]["func-range-without-line"]["structuredContent"]["error"]
    assert missing["message"] == "missing required argument 'line' for be-func-range", missing
    permission = outcomes["ts"]["read-only-file"]["structuredContent"]["error"]
    assert permission["message"].endswith(": Permission denied"), permission
    assert outcomes["ts"]["insert-bare-ellipsis"]["structuredContent"]["error"]["line"] == 1


@pytest.mark.parametrize("case_id", [case[0] for case in CASES])
def test_python_sdk_sees_the_same_error(outcomes, case_id):
    ts, py = outcomes["ts"][case_id], outcomes["py"][case_id]
    assert "thrown" not in py, py["thrown"]
    assert py["isError"] is True

    def comparable(outcome):  # (chip ids differ between the runs: a new one, an evicted one)
        structured = outcome.get("structuredContent") or {}
        error = {k: v for k, v in structured.get("error", {}).items() if k != "chip"}
        said = json.dumps([dict(structured, error=error), CHIP_ID.sub("chip://ID", outcome.get("text", ""))])
        return EVICTED.sub("chip ID was evicted", said)

    assert comparable(py) == comparable(ts)


def test_both_sdks_carry_the_suggestions_and_withhold_the_copy(outcomes):
    """NOT_FOUND's `did_you_mean`, and a MISMATCH of lines changed in place with no candidate in
    the copy, reach a client through each SDK as the server sent them."""
    for sdk in ("ts", "py"):
        error = outcomes[sdk]["missing-file-near-name"]["structuredContent"]["error"]
        assert error["did_you_mean"] == ["three.txt"], (sdk, error)
        error = outcomes[sdk]["old-changed-in-place"]["structuredContent"]["error"]
        assert error["found_at"] == [] and error["closest"] is None, (sdk, error)
        assert 'its line "def f():" still stands at line 5' in error["message"], (sdk, error)
        failed = outcomes[sdk]["hunk-changed-in-place"]["structuredContent"]["error"]
        assert "another copy" in failed["message"] and failed["closest"] is None, (sdk, failed)
        error = outcomes[sdk]["patch-header-without-hunk"]["structuredContent"]["error"]
        assert error["message"].startswith("no @@ line follows the header of three.txt"), (sdk, error)


# ---- be-edit: nested results through both SDKs -----------------------------------------------------


def _ok(outcome):
    assert "thrown" not in outcome, f"the TypeScript SDK threw the result away: {outcome['thrown']}"
    assert outcome["isError"] is False, outcome["text"]
    result = outcome["structuredContent"]
    assert result["status"] == "ok" and re.fullmatch(r"[0-9a-f]{6}", result["event_id"]), result
    assert json.loads(outcome["text"]) == result
    return result


def test_ts_sdk_returns_a_multi_file_edit(outcomes):
    result = _ok(outcomes["ts"]["edit-two-files"])
    assert result["changed"] is True
    files = [(f["file"], f["total"], f["viewed_code_id"].split(":")[1]) for f in result["files"]]
    assert files == [("edit_a.txt", 4, "2-4"), ("edit_b.txt", 2, "1-1")]  # in path order
    assert all(f["diff"].startswith(f"--- a/{f['file']}") for f in result["files"])
    items = [(i["index"], i["file"], i["op"], i.get("start"), i.get("end")) for i in result["items"]]
    assert items == [
        (0, "edit_a.txt", "insert", 4, 4),  # lines of the file after the call
        (1, "edit_b.txt", "insert", 1, 1),
        (2, "edit_a.txt", "replace", 2, 2),
    ]
    assert "warnings" not in result


def test_ts_sdk_returns_every_failed_edit_item(outcomes):
    outcome = outcomes["ts"]["edit-two-bad-items"]
    assert "thrown" not in outcome, outcome["thrown"]
    assert outcome["isError"] is True and outcome["structuredContent"]["status"] == "error"
    error = outcome["structuredContent"]["error"]
    assert error["index"] == 0
    assert [(f["index"], f["code"]) for f in error["failed"]] == [(0, "OUT_OF_RANGE"), (1, "AMBIGUOUS")]
    assert error["failed"][1]["candidates"] == [{"start": 1, "end": 1}, {"start": 3, "end": 3}]


def test_ts_sdk_returns_a_patch(outcomes):
    result = _ok(outcomes["ts"]["patch-string"])
    assert result["changed"] is True and [f["file"] for f in result["files"]] == ["patch.txt"]
    assert [(i["index"], i["op"], i["start"], i["end"]) for i in result["items"]] == [(0, "patch", 1, 3)]
    assert result["warnings"] == ["hunk 1 of patch.txt applied at line 1 (offset -1)"]


def test_both_sdks_leave_the_same_files(outcomes):
    assert outcomes["files"]["ts"] == EDITED
    assert outcomes["files"]["py"] == EDITED


@pytest.mark.parametrize("edit_id", [edit[0] for edit in EDITS])
def test_python_sdk_sees_the_same_edit_results(outcomes, edit_id):
    ts, py = outcomes["ts"][edit_id], outcomes["py"][edit_id]
    assert "thrown" not in py, py["thrown"]

    def comparable(outcome):  # the event ids differ (each SDK's run made its own event)
        structured = dict(outcome["structuredContent"], event_id="ID")
        return outcome["isError"], structured, EVENT_ID.sub('"event_id": "ID"', outcome["text"])

    assert comparable(py) == comparable(ts)


# ---- schemas strict validators take (issue 23) -----------------------------------------------------

NAMINGS = [(), ("--no-prefix",), ("--underscore-names",), ("--no-prefix", "--underscore-names")]


def _listed_tools(flags, lang, tmp_path):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    done = subprocess.run(
        [*be_command_prefix(), "--lang", lang, *flags],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True, cwd=str(tmp_path), env=clean_env(tmp_path / "cache", tmp_path), timeout=60,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[1])["result"]["tools"]


def test_ajv_in_strict_mode_takes_every_schema(ts_client, tmp_path):
    """Gemini CLI and Qwen Code compile tool schemas with Ajv in strict mode; a `"type": [..]` union
    made them print a warning on every call. No schema of any naming, in either language, may make
    Ajv refuse or warn (one node start checks all eight lists)."""
    lists = {
        f"{' '.join(flags) or 'default'} {lang}": _listed_tools(flags, lang, tmp_path)
        for flags in NAMINGS
        for lang in ("en", "zh")
    }
    script = str(TS_DIR / "strict_schemas.mjs")
    done = subprocess.run(
        [ts_client[0], script], input=json.dumps(lists).encode(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    assert sorted(answer) == sorted(lists) and len(answer) == 8
    for label, problems in answer.items():
        assert sorted(problems) == sorted(t["name"] for t in lists[label]) and len(problems) == 13, label
        assert all(found == [] for found in problems.values()), (label, problems)


def test_schemas_can_be_used_without_the_instructions(tmp_path):
    """Some hosts never show `instructions` (Qwen Code, Copilot CLI) and some drop `default` (Codex):
    every argument says what it is, every default is in its words too, each editing tool states the
    read -> viewed_code_id workflow, and be-edit's items have their own schema."""
    for flags in NAMINGS:
        tools = {t["name"]: t for t in _listed_tools(flags, "en", tmp_path)}
        size = len(json.dumps({"tools": list(tools.values())}, separators=(",", ":"), ensure_ascii=False))
        assert size < 13_400, size
        read = next(name for name in tools if name.replace("_", "-").endswith("read"))
        for name, tool in tools.items():
            base = name.replace("_", "-").removeprefix("be-")
            for arg, schema in tool["inputSchema"]["properties"].items():
                if arg in ("preview", "brief"):  # (said once in the instructions; nothing to get wrong)
                    continue
                assert schema.get("description"), (name, arg)
                if "default" in schema:
                    assert str(schema["default"]) in schema["description"], (name, arg)
            workflow = f"Workflow: {read} the lines, then pass its viewed_code_id"
            assert (workflow in tool["description"]) is (base in ("replace", "insert", "delete", "edit")), (
                name
            )
        edits = tools[next(n for n in tools if n.endswith("edit"))]["inputSchema"]["properties"]["edits"]
        item = edits["items"]
        assert item["required"] == ["file"] and item["additionalProperties"] is False
        assert item["properties"]["op"]["enum"] == ["replace", "insert", "delete", "write"]
        assert {"start", "end", "old", "content", "after_line", "viewed_code_id", "target"} <= set(
            item["properties"]
        )
