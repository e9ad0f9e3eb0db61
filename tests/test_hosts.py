"""Opt-in (BE_HOSTS=1): real agent hosts from npm register this server, connect to it, see 13 tools.

Each host is installed from the npm registry (latest versions, nothing pinned) into a temporary npm
prefix of its own, never globally, and runs with a clean HOME (a temp dir beside it), so no user
config is read or written; everything is removed at the end. The server is registered the way a
user would do it, through the host's own CLI (`claude mcp add`, `gemini mcp add`, `qwen mcp add`,
`codex mcp add`, `copilot mcp add`) or, for opencode, whose `mcp add` only asks questions, through
its JSON config (an `mcp` entry of type local). The registered command is this interpreter running
this checkout's better_edit.py with `--root <a temp project>`.

Every check is labelled, in the code and in the printed report, as the host's own or ours:

- OURS, stored: the command and arguments read back from the host's config file are the ones
  registered.
- HOST, list: the host's list command shows the server connected (`claude/gemini/qwen/opencode mcp
  list` start it; `codex mcp list` and `copilot mcp list` only read the config, so there the entry
  must be listed).
- HOST, tools: the 13 tools as the host itself discovered them. No list command shows tool counts,
  so each host is asked another non-interactive way: Claude Code's stream-json control request
  `mcp_status` (what the Agent SDK's mcpServerStatus() sends), Qwen Code's stream-json `init` event
  (for `/context`, a command it answers locally), codex's app-server request
  `mcpServerStatus/list`; none of these calls a model. Gemini CLI, opencode and Copilot CLI show
  their tools only to a model, so they get one prompt against a stub model on 127.0.0.1 (this file's
  StubModel, which answers "ok"), and the tool list in the request they send is checked.
- OURS, tools: the stored command, started by us, answers initialize + tools/list with the 13
  tools (a cross-check that needs no host).

A host whose npm install fails is skipped, with npm's output in the reason; after a successful
install every check must pass. Nothing is interactive: standard input is closed (or a pipe we
close), API keys are placeholders, base URLs point at the stub or at a closed loopback port, and
update checks and telemetry are turned off where the host has a switch; each host's HOME, TMPDIR
and PWD are its sandbox's. Versions, times and the checks made are printed:

    BE_HOSTS=1 python3 -m pytest -s tests/test_hosts.py

About 1.5 minutes here (the six installs run in parallel, about 25 s), and 1.6 GB in a temp dir
that is removed at the end; npm keeps the downloaded packages (about 0.5 GB) in its own cache.
"""

import concurrent.futures
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

if os.environ.get("BE_HOSTS") != "1":
    pytest.skip(
        "set BE_HOSTS=1 to install agent hosts from npm and register the server with each",
        allow_module_level=True,
    )

from harness import Server  # noqa: E402 - needed only when the module runs

SCRIPT = Path(__file__).resolve().parent.parent / "better_edit.py"
NAME = "better-edit"  # the server's name in every host's config
TOOLS = {
    "be-read", "be-replace", "be-insert", "be-delete", "be-write", "be-balance", "be-func-range",
    "be-tag-range", "be-insert-chip", "be-trx-status", "be-trx-commit", "be-trx-rollback", "be-edit",
}  # fmt: skip
INSTALL_TIMEOUT = 900  # seconds for one `npm install` (a host is 50-450 MB unpacked)
COMMAND_TIMEOUT = 180  # seconds for one host command (1-12 s here)
DEAD_URL = "http://127.0.0.1:9"  # the discard port: nothing listens, a request fails at once
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CONNECTED = re.compile(r"(?i)\bconnected\b")  # "Connected", never "Disconnected"

# host -> (npm package, executable)
HOSTS = {
    "claude": ("@anthropic-ai/claude-code", "claude"),
    "gemini": ("@google/gemini-cli", "gemini"),
    "qwen": ("@qwen-code/qwen-code", "qwen"),
    "opencode": ("opencode-ai", "opencode"),
    "codex": ("@openai/codex", "codex"),
    "copilot": ("@github/copilot", "copilot"),
}
# Inherited variables that could hand a host someone's credentials, settings or endpoints: dropped.
SCRUBBED = (
    "ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_", "VERTEX", "QWEN_", "DASHSCOPE_", "OPENAI_", "CODEX_",
    "COPILOT_", "GH_", "GITHUB_", "OPENCODE_", "XDG_", "NODE_OPTIONS", "NPM_CONFIG_", "BETTER_EDIT_",
)  # fmt: skip
# Quiet, non-interactive and offline, for every host (each ignores the others' variables).
QUIET = {
    "CI": "1",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
    "TERM": "dumb",
    "NO_BROWSER": "1",
    "LANG": "C.UTF-8",
    # Claude Code: no auto-update, telemetry, error reports or other non-essential traffic
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ANTHROPIC_BASE_URL": DEAD_URL,
    # Gemini CLI: trust the working folder for this run only (untrusted, it leaves every MCP server off)
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "GEMINI_TELEMETRY_ENABLED": "false",
    # Qwen Code and codex
    "OPENAI_BASE_URL": DEAD_URL,
    # opencode: no self-update, model catalogue fetch, language-server downloads or sharing
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    # Copilot CLI: no self-update
    "COPILOT_AUTO_UPDATE": "false",
}

REPORT = []  # (host, version, {phase: seconds}, [checks]), printed at the end


# ---- installing ----------------------------------------------------------------------------------


class Installed:
    """One host's npm install: its executable and version, or npm's output when it failed."""

    def __init__(self, host, prefix, seconds, result):
        self.host, self.prefix, self.seconds = host, prefix, seconds
        self.package, exe = HOSTS[host]
        self.log = "npm is not on PATH" if result is None else (result.stdout + result.stderr)[-3000:]
        self.version = self.exe = None
        if result is None or result.returncode != 0:
            return
        for modules in (prefix / "lib" / "node_modules", prefix / "node_modules"):  # POSIX, Windows
            manifest = modules / self.package / "package.json"
            if manifest.is_file():
                self.version = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        self.exe = shutil.which(exe, path=os.pathsep.join([str(prefix / "bin"), str(prefix)]))

    def require(self):
        """The executable, or skip this host's test: its install failed."""
        if not (self.exe and self.version):
            pytest.skip(f"npm install of {self.package} failed after {self.seconds:.0f}s:\n{self.log}")
        return self.exe


def npm_install(host, base):
    prefix = base / host
    prefix.mkdir()
    npm = shutil.which("npm")
    started = time.monotonic()
    result = None
    if npm:
        # install scripts run (no --ignore-scripts): Claude Code and opencode put their binary in place there
        command = [npm, "install", "--global", "--prefix", str(prefix), "--no-audit", "--no-fund"]
        command += ["--loglevel=error", HOSTS[host][0]]
        scratch = base / f"{host}-install-tmp"  # for install scripts (opencode's leaves TMPDIR/opencode)
        scratch.mkdir()
        env = dict(os.environ, npm_config_update_notifier="false")
        env.update(TMPDIR=str(scratch), TEMP=str(scratch), TMP=str(scratch))
        try:  # run in the prefix: from a folder holding ./opencode-ai, npm would install that folder
            result = subprocess.run(
                command, cwd=str(prefix), env=env, stdin=subprocess.DEVNULL, capture_output=True,
                text=True, timeout=INSTALL_TIMEOUT,
            )  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            result = subprocess.CompletedProcess(
                command, -1, "", f"timed out after {INSTALL_TIMEOUT}s: {exc}"
            )
    return Installed(host, prefix, time.monotonic() - started, result)


def disk_mb(path):
    """MB under `path`, each hard-linked file once (Claude Code's binary is linked twice)."""
    seen, total = set(), 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total // 2**20


@pytest.fixture(scope="module")
def installs():
    """Every host installed at once (in parallel), each into its own temporary prefix."""
    base = Path(tempfile.mkdtemp(prefix="be-hosts-"))
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(HOSTS)) as pool:
            done = dict(zip(HOSTS, pool.map(lambda host: npm_install(host, base), HOSTS)))
        print(f"\n[hosts] npm install, all in parallel: {time.monotonic() - started:.1f}s, into {base}")
        for item in done.values():
            print(
                f"[hosts]   {item.package}@{item.version or 'FAILED'}: {item.seconds:.1f}s, {disk_mb(item.prefix)} MB"
            )
        yield done
        print_report(base, time.monotonic() - started)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def print_report(base, seconds):
    print(f"\n[hosts] {'host':<12} {'version':<10} times in seconds")
    for host, version, times, checks in REPORT:
        spent = ", ".join(f"{phase} {value:.1f}" for phase, value in times.items())
        print(f"[hosts] {host:<12} {version:<10} {spent}")
        for check in checks:
            print(f"[hosts] {'':<23} - {check}")
    print(f"[hosts] {seconds:.0f}s in all; {disk_mb(base)} MB of hosts and their homes, now removed")


# ---- a stub model on loopback --------------------------------------------------------------------


def gemini_answer(path):
    """(content type, body) of a Gemini generateContent answer: the text "ok"."""
    candidate = {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}
    usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
    answer = json.dumps({"candidates": [candidate], "usageMetadata": usage})
    if "alt=sse" in path:  # streamGenerateContent: server-sent events
        return "text/event-stream", f"data: {answer}\r\n\r\n"
    return "application/json", answer


def openai_answer(body):
    """(content type, body) of an OpenAI chat-completions answer: the text "ok", streamed if asked."""
    head = {"id": "stub", "created": 0, "model": body.get("model", "stub")}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    if not body.get("stream"):
        choice = {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        return "application/json", json.dumps(
            {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        )
    first = {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
    last = {"index": 0, "delta": {}, "finish_reason": "stop"}
    chunks = [
        {**head, "object": "chat.completion.chunk", "choices": [first]},
        {**head, "object": "chat.completion.chunk", "choices": [last], "usage": usage},
    ]
    return "text/event-stream", "".join(
        f"data: {json.dumps(chunk)}\n\n" for chunk in chunks
    ) + "data: [DONE]\n\n"


class StubModel:
    """An HTTP server on 127.0.0.1 that speaks just enough of the OpenAI chat-completions and Gemini
    generateContent APIs to answer every prompt with the text "ok". It keeps each request body: the
    tools a host declares to the model are the tools it discovered."""

    def __init__(self):
        self.requests = []
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # a model list, for a host that asks
                self.send("application/json", json.dumps({"object": "list", "data": [{"id": "stub"}]}))

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                requests.append((self.path, body))
                if "generatecontent" in self.path.lower():  # models/NAME:generateContent or :stream...
                    self.send(*gemini_answer(self.path))
                else:
                    self.send(*openai_answer(body))

            def send(self, content_type, text):
                data = text.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tools_declared(self, since):
        """The tool names in the last request, after the first `since`, that declared any tools."""
        declared = []
        for _, body in self.requests[since:]:
            names = []
            for tool in body.get("tools") or []:
                if "function" in tool:  # OpenAI: {"type": "function", "function": {"name": ...}}
                    names.append(tool["function"]["name"])
                names += [declaration["name"] for declaration in tool.get("functionDeclarations") or []]
            if names:
                declared = names
        assert declared, f"no request declared tools: {[path for path, _ in self.requests[since:]]}"
        return declared

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def stub_model():
    stub = StubModel()
    yield stub
    stub.close()


# ---- one host's sandbox --------------------------------------------------------------------------


class Sandbox:
    """A clean HOME and a temp project for one host, beside its npm prefix (so removed with it)."""

    def __init__(self, installed):
        self.installed = installed
        self.exe = installed.require()
        place = installed.prefix.parent / f"{installed.host}-run"
        self.home = place / "home"
        self.project = (place / "project").resolve()
        self.tmp = place / "tmp"  # the host's temp dir too (Gemini CLI writes error reports there)
        for folder in (self.home, self.project, self.tmp):
            folder.mkdir(parents=True)
        (self.project / "hello.txt").write_text("hello\n", encoding="utf-8")
        self.command = sys.executable  # what is registered: this interpreter and this checkout's module
        self.args = [str(SCRIPT), "--root", str(self.project)]
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(SCRUBBED)}
        env.update(QUIET, HOME=str(self.home), USERPROFILE=str(self.home), APPDATA=str(self.home / "AppData"))
        env.update(TMPDIR=str(self.tmp), TEMP=str(self.tmp), TMP=str(self.tmp))
        env["PWD"] = str(self.project)  # opencode takes its project from PWD, not from the real cwd
        env.update(
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
        )
        self.env = env
        self.times = {}
        self.checks = []

    def run(self, phase, *args, env=None):
        """Run the host with `args` in the project, stdin closed; its output without ANSI codes."""
        started = time.monotonic()
        result = subprocess.run(
            [self.exe, *args], cwd=str(self.project), env=dict(self.env, **(env or {})),
            stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT,
        )  # fmt: skip
        self.times[phase] = time.monotonic() - started
        output = ANSI.sub("", (result.stdout + result.stderr).decode("utf-8", "replace"))
        shown = " ".join([Path(self.exe).name, *args[:3]])
        assert result.returncode == 0, f"`{shown}` exited {result.returncode}:\n{output[-4000:]}"
        return output

    def converse(self, phase, args, talk, env=None):
        """Run the host with `args` on a pipe (harness.Server: JSON lines each way); `talk(process)`
        does the exchange and returns what it found; stdin is then closed and the host must exit."""
        started = time.monotonic()
        process = Server(self.project, dict(self.env, **(env or {})), command=[self.exe, *args])
        try:
            found = talk(process)
        finally:
            process.close(timeout=60)
        self.times[phase] = time.monotonic() - started
        return found

    def list_line(self, phase, label):
        """HOST, list: the host's list command, and its line that names our server."""
        output = self.run(phase, "mcp", "list")
        lines = [line for line in output.splitlines() if NAME in line]
        assert lines, f"{label} does not list {NAME}:\n{output}"
        return lines[0]

    def check_stored(self, command, args):
        """OURS, stored: the host kept exactly the command and arguments that were registered."""
        assert command == self.command, (command, self.command)
        assert list(args) == self.args, (args, self.args)
        self.checks.append("OURS: stored command and args read back from the host's config")

    def check_tool_names(self, names, label):
        """HOST, tools: the names the host discovered (without its prefix) are our 13 tools."""
        names = list(names)
        assert len(names) == len(set(names)) and set(names) == TOOLS, sorted(set(names) ^ TOOLS)
        self.checks.append(f"HOST: {len(names)} tools ({label})")

    def check_tools_ourselves(self, command, args):
        """OURS, tools: the stored command, started by us, does initialize + tools/list: 13 tools."""
        started = time.monotonic()
        server = Server(self.project, self.env, command=[command, *args])
        try:
            info = server.initialize()["serverInfo"]
            names = {tool["name"] for tool in server.tools()}
        finally:
            server.close()
        self.times["ours: tools/list"] = time.monotonic() - started
        assert info["name"] == "better-edit-tools", info
        assert names == TOOLS, sorted(names ^ TOOLS)
        self.checks.append(f"OURS: {len(names)} tools from initialize + tools/list on the stored command")

    def done(self, host):
        REPORT.append((host, self.installed.version, self.times, self.checks))
        spent = ", ".join(f"{phase} {value:.1f}s" for phase, value in self.times.items())
        print(f"\n[hosts] {host} {self.installed.version}: {spent}")


def expect(process, accept, what):
    """Read JSON lines from `process` until one satisfies `accept`, and return it."""
    deadline = time.monotonic() + COMMAND_TIMEOUT
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no {what} within {COMMAND_TIMEOUT}s; stderr: {bytes(process.stderr[-3000:])!r}"
        message = process.recv(timeout=left)
        if accept(message):
            return message


def read_json(path):
    assert path.is_file(), f"the host wrote no {path}"
    return json.loads(path.read_text(encoding="utf-8"))


def without(prefix, names):
    """The names that start with `prefix`, without it."""
    return [name[len(prefix) :] for name in names if name.startswith(prefix)]


# ---- the hosts -----------------------------------------------------------------------------------


def test_claude_code(installs):
    box = Sandbox(installs["claude"])
    # registration as a user types it (local scope: this project, kept in ~/.claude.json)
    box.run("mcp add", "mcp", "add", NAME, "--", box.command, *box.args)
    stored = read_json(box.home / ".claude.json")["projects"][str(box.project)]["mcpServers"][NAME]
    box.check_stored(stored["command"], stored["args"])

    line = box.list_line("mcp list", "`claude mcp list`")  # HOST: it starts the server, reports health
    assert CONNECTED.search(line), line
    box.checks.append("HOST: `claude mcp list` says Connected")

    # HOST, tools: the stream-json control protocol; no prompt is sent, so no model and no login
    def talk(claude):
        def control(request_id, subtype):
            claude.send(
                {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}
            )
            reply = expect(
                claude,
                lambda m: (
                    m.get("type") == "control_response" and m["response"].get("request_id") == request_id
                ),
                f"control_response to {subtype}",
            )
            assert reply["response"]["subtype"] == "success", reply
            return reply["response"].get("response") or {}

        control("init", "initialize")
        deadline = time.monotonic() + COMMAND_TIMEOUT
        for attempt in itertools.count():  # servers connect in the background: ask again while pending
            status = {s["name"]: s for s in control(f"status-{attempt}", "mcp_status")["mcpServers"]}[NAME]
            if status["status"] != "pending" or time.monotonic() > deadline:
                return status
            time.sleep(0.25)

    flags = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    status = box.converse("mcp_status", flags, talk)
    assert status["status"] == "connected", status
    box.check_tool_names([tool["name"] for tool in status["tools"]], "stream-json control request mcp_status")
    box.check_tools_ourselves(stored["command"], stored["args"])
    box.done("Claude Code")


def test_gemini_cli(installs, stub_model):
    box = Sandbox(installs["gemini"])
    # registration in the user scope (~/.gemini/settings.json); no `--` before the command's flags
    box.run("mcp add", "mcp", "add", "--scope", "user", NAME, box.command, *box.args)
    stored = read_json(box.home / ".gemini" / "settings.json")["mcpServers"][NAME]
    box.check_stored(stored["command"], stored["args"])

    line = box.list_line("mcp list", "`gemini mcp list`")  # HOST: initialize + ping
    assert CONNECTED.search(line), line
    box.checks.append("HOST: `gemini mcp list` says Connected")

    # HOST, tools: Gemini CLI shows them only in its interactive /mcp view, so one prompt to the stub.
    # API-key auth is picked the way the first interactive run saves it, in the user settings (a
    # GEMINI_CLI_SYSTEM_SETTINGS_PATH file is ignored under a world-writable /tmp); yolo because
    # headless mode leaves out the tools that would ask for approval (the stub never calls one)
    settings_file = box.home / ".gemini" / "settings.json"
    settings = read_json(settings_file)
    settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
    settings_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    since = len(stub_model.requests)
    box.run(
        "prompt to stub model",
        "--model", "gemini-2.5-flash", "--approval-mode", "yolo", "--output-format", "json", "--prompt", "Say ok.",
        env={"GEMINI_API_KEY": "placeholder", "GOOGLE_GEMINI_BASE_URL": stub_model.url},
    )  # fmt: skip
    sent = stub_model.tools_declared(since)
    box.check_tool_names(without(f"mcp_{NAME}_", sent), "declared in its request to a stub model")
    box.check_tools_ourselves(stored["command"], stored["args"])
    box.done("Gemini CLI")


def test_qwen_code(installs):
    box = Sandbox(installs["qwen"])
    # registration: `qwen mcp add` writes the user scope (~/.qwen/settings.json) by default
    box.run("mcp add", "mcp", "add", NAME, box.command, *box.args)
    stored = read_json(box.home / ".qwen" / "settings.json")["mcpServers"][NAME]
    box.check_stored(stored["command"], stored["args"])

    line = box.list_line("mcp list", "`qwen mcp list`")
    assert CONNECTED.search(line), line
    box.checks.append("HOST: `qwen mcp list` says Connected")

    # HOST, tools: headless stream-json opens with an `init` event listing the tools; `/context` is
    # answered locally, so no model is called (the placeholder key only passes the auth check)
    output = box.run(
        "init event",
        "--auth-type", "openai", "--output-format", "stream-json", "--prompt", "/context",
        env={"OPENAI_API_KEY": "placeholder"},
    )  # fmt: skip
    events = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    init = next(e for e in events if e.get("type") == "system" and e.get("subtype") == "init")
    assert {s["name"]: s["status"] for s in init["mcp_servers"]}.get(NAME) == "connected", init["mcp_servers"]
    box.check_tool_names(without(f"mcp__{NAME}__", init["tools"]), "stream-json init event, server connected")
    box.check_tools_ourselves(stored["command"], stored["args"])
    box.done("Qwen Code")


def test_opencode(installs, stub_model):
    box = Sandbox(installs["opencode"])
    # registration: `opencode mcp add` is interactive only, so the user config file is written
    config = box.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    entry = {"type": "local", "command": [box.command, *box.args], "enabled": True}
    config.write_text(
        json.dumps({"$schema": "https://opencode.ai/config.json", "mcp": {NAME: entry}}, indent=2)
    )
    stored = read_json(config)["mcp"][NAME]["command"]
    box.check_stored(stored[0], stored[1:])

    line = box.list_line("mcp list", "`opencode mcp list`")
    assert CONNECTED.search(line), line
    box.checks.append("HOST: `opencode mcp list` says connected")

    # HOST, tools: opencode shows MCP tools only to a model: one `opencode run` against the stub, its
    # provider given for this run only (OPENCODE_CONFIG_CONTENT is merged over the config file)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"baseURL": f"{stub_model.url}/v1", "apiKey": "placeholder"},
        "models": {"stub": {"name": "stub"}},
    }
    overlay = {"provider": {"stub": provider}, "model": "stub/stub", "small_model": "stub/stub"}
    since = len(stub_model.requests)
    box.run(
        "prompt to stub model", "run", "--format", "json", "Say ok.",
        env={"OPENCODE_CONFIG_CONTENT": json.dumps(overlay)},
    )  # fmt: skip
    sent = stub_model.tools_declared(since)
    box.check_tool_names(without(f"{NAME}_", sent), "declared in its request to a stub model")
    box.check_tools_ourselves(stored[0], stored[1:])
    box.done("opencode")


def test_codex_cli(installs):
    box = Sandbox(installs["codex"])
    # registration: `codex mcp add NAME -- COMMAND ARGS...` writes [mcp_servers.NAME] in ~/.codex/config.toml
    box.run("mcp add", "mcp", "add", NAME, "--", box.command, *box.args)
    config = box.home / ".codex" / "config.toml"
    try:
        import tomllib  # Python 3.11+

        stored = tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"][NAME]
    except ImportError:  # older Pythons read no TOML: the host reads its own file back
        assert config.is_file(), f"the host wrote no {config}"
        output = box.run("mcp get", "mcp", "get", NAME, "--json")  # the JSON, then stderr's warnings
        stored = json.JSONDecoder().raw_decode(output[output.index("{") :])[0]["transport"]
    box.check_stored(stored["command"], stored["args"])

    line = box.list_line("mcp list", "`codex mcp list`")  # HOST: reads the config only (no connection)
    assert re.search(r"\benabled\b", line), line
    box.checks.append("HOST: `codex mcp list` lists it enabled (config only: it does not connect)")

    # HOST, tools: the app server (JSON-RPC on stdio) connects and lists each server's tools; no model
    def talk(codex):
        client = {"clientInfo": {"name": "pytest", "version": "0"}}
        codex.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": client})
        expect(codex, lambda m: m.get("id") == 1, "initialize result")
        codex.send({"jsonrpc": "2.0", "method": "initialized"})
        codex.send({"jsonrpc": "2.0", "id": 2, "method": "mcpServerStatus/list", "params": {}})
        return expect(codex, lambda m: m.get("id") == 2, "mcpServerStatus/list result")

    reply = box.converse("app-server mcpServerStatus/list", ["app-server"], talk)
    assert "result" in reply, reply
    status = {s["name"]: s for s in reply["result"]["data"]}[NAME]
    assert (status.get("serverInfo") or {}).get("name") == "better-edit-tools", status
    box.check_tool_names(status["tools"], "app-server mcpServerStatus/list, with serverInfo")
    box.check_tools_ourselves(stored["command"], stored["args"])
    box.done("Codex CLI")


def test_copilot_cli(installs, stub_model):
    box = Sandbox(installs["copilot"])
    # registration: `copilot mcp add NAME -- COMMAND ARGS...` writes ~/.copilot/mcp-config.json
    box.run("mcp add", "mcp", "add", NAME, "--", box.command, *box.args)
    stored = read_json(box.home / ".copilot" / "mcp-config.json")["mcpServers"][NAME]
    box.check_stored(stored["command"], stored["args"])

    box.list_line("mcp list", "`copilot mcp list`")  # HOST: reads the config only (no connection)
    box.checks.append("HOST: `copilot mcp list` lists it (config only: it does not connect)")

    # HOST, tools: a prompt in offline mode against the stub as a bring-your-own-key provider (no
    # GitHub login); --allow-all-tools is required in prompt mode (the stub never calls a tool)
    since = len(stub_model.requests)
    box.run(
        "prompt to stub model",
        "--prompt", "Say ok.", "--silent", "--allow-all-tools",
        env={"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{stub_model.url}/v1",
             "COPILOT_PROVIDER_API_KEY": "placeholder", "COPILOT_MODEL": "stub"},
    )  # fmt: skip
    sent = stub_model.tools_declared(since)
    box.check_tool_names(without(f"{NAME}-", sent), "declared in its request to a stub model")
    box.check_tools_ourselves(stored["command"], stored["args"])
    box.done("Copilot CLI")
