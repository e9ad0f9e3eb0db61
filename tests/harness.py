"""The test harness every test file uses: how the program is started, a raw MCP client, the stress knob.

- `be_command_prefix()`: the command that starts the program. `[sys.executable, "-S", "-m",
  "better_edit"]` (plus `-P` on Python 3.11+, so the test's working directory never shadows a module),
  or the frozen executable when the environment variable BE_EXE names one (docs/install.md, issue 5).
  `-S` skips the interpreter's site set-up: its .pth hooks (an editable-install finder, a machine's
  certificate hook) cost about 40 ms of every start here and are not ours to test; the installed
  console script's full start is run by the README test (test_docs.py) and measured in bench/.
- `prepare_module()`: run once per session by conftest.py. It compiles better_edit.py into
  __pycache__ (PYTHONDONTWRITEBYTECODE may be set, so no subprocess would ever write it) and puts the
  repository, then the folder that holds platformdirs, first on PYTHONPATH, so `-m better_edit` loads
  this checkout's module from cached bytecode instead of compiling 12,000 lines at every start.
- `clean_env(cache_dir, root)`: a subprocess environment with a private cache and workspace, English,
  no inherited BETTER_EDIT_* (except BETTER_EDIT_PORTABLE_FALLBACKS).
- `run_cli(*args, cwd=, env=)`: one CLI run -> CompletedProcess (bytes).
- `Server`: one MCP server subprocess spoken to in raw JSON-RPC lines.
- `STRESS` / `scaled(default, full)`: BE_STRESS=1 runs the stress tests at full size.
"""

import contextlib
import importlib.util
import json
import os
import py_compile
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "better_edit.py"
FROZEN = bool(os.environ.get("BE_EXE"))
REPLY_TIMEOUT = 60  # seconds to wait for one reply line before a test fails

# ---- stress scaling ----------------------------------------------------------------------------------

STRESS = os.environ.get("BE_STRESS") == "1"


@contextlib.contextmanager
def exclusive(path):
    """Hold an exclusive lock on the file `path` (POSIX flock; elsewhere nothing): set-ups that
    write into the checkout (npm ci) run once at a time when test workers run in parallel."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def load_script(name):
    """scripts/NAME.py as a module (the release packager, the docs generator...)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scaled(default, full):
    """`full` under BE_STRESS=1 (the full-scale run), else `default` (the everyday run)."""
    return full if STRESS else default


# ---- starting the program ----------------------------------------------------------------------------


def be_command_prefix():
    """The command that starts the CLI (with arguments) or the MCP server (without)."""
    exe = os.environ.get("BE_EXE")
    if exe:
        return [str(Path(exe).resolve())]
    return module_command()


def module_command():
    """The module under this interpreter, even when BE_EXE is set (for tests of the module itself)."""
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # no cwd on sys.path (what a script gets)
    return [sys.executable, "-S", *safe_path, "-m", "better_edit"]


def prepare_module():
    """Make `python -m better_edit` in every subprocess load this checkout's module from bytecode.

    Compiles better_edit.py into __pycache__ now (a module that does not compile is left to the tests
    to report) and puts the repository first on PYTHONPATH, which every subprocess environment the
    tests build inherits (a PyInstaller executable ignores PYTHONPATH)."""
    with contextlib.suppress(py_compile.PyCompileError, OSError):
        py_compile.compile(str(MODULE), cfile=importlib.util.cache_from_source(str(MODULE)), doraise=True)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    wanted = [str(REPO), dependency_folder()]
    if paths[: len(wanted)] != wanted:
        os.environ["PYTHONPATH"] = os.pathsep.join([*wanted, *(p for p in paths if p not in wanted)])


def dependency_folder():
    """The folder that holds platformdirs (site-packages, or the venv's): `python -S` skips the
    interpreter's site set-up, so this folder reaches the program through PYTHONPATH instead."""
    spec = importlib.util.find_spec("platformdirs")
    return str(Path(spec.submodule_search_locations[0]).parent) if spec else str(REPO)


def clean_env(cache_dir, root):
    """A clean environment for subprocesses: private cache, English, no inherited BETTER_EDIT_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BETTER_EDIT_", "LC_", "LANG"))}
    if os.environ.get("BETTER_EDIT_PORTABLE_FALLBACKS"):  # the Windows code paths, on POSIX
        env["BETTER_EDIT_PORTABLE_FALLBACKS"] = os.environ["BETTER_EDIT_PORTABLE_FALLBACKS"]
    env["BETTER_EDIT_CACHE_DIR"] = str(cache_dir)
    env["BETTER_EDIT_WORKSPACE"] = str(root)
    env["LANG"] = "C.UTF-8"
    env["PYTHONIOENCODING"] = "utf-8"
    # the test's own temporary folder: a frozen executable killed by a test leaves its unpacked
    # program (_MEI*, 8 MB) in TMPDIR, and no run may leave files in the machine's /tmp
    temp = Path(cache_dir).parent / "subprocess-tmp"
    temp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(temp)
    return env


def run_cli(*args, cwd, env, input=None, timeout=60, command=None, **popen_kwargs):
    """Run the CLI once: run_cli("read", "-f", "x.txt", cwd=root, env=env) -> CompletedProcess (bytes).

    `command` replaces be_command_prefix(); other keywords (preexec_fn, ...) go to subprocess.run."""
    return subprocess.run(
        [*(command or be_command_prefix()), *map(str, args)],
        input=input,
        cwd=str(cwd),
        env=env,
        capture_output=True,
        timeout=timeout,
        **popen_kwargs,
    )


def run_json(*args, cwd, env, **kwargs):
    """The one CLI helper for JSON results: run_cli(*args, "-o", "json") -> (CompletedProcess,
    the parsed answer or None). The answer is parsed strictly: NaN or Infinity in it fail the test."""
    done = run_cli(*args, "-o", "json", cwd=cwd, env=env, **kwargs)
    return done, strict_loads(done.stdout.decode("utf-8")) if done.stdout.strip() else None


def strict_loads(text):
    """json.loads that refuses NaN/Infinity (what a JavaScript client does)."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


# ---- a server over raw JSON-RPC lines ------------------------------------------------------------------


def canonical(name):
    """The table name of any spelling of a tool: be-read, be_read, read -> read."""
    key = name.lower().replace("_", "-")
    return key[3:] if key.startswith("be-") else key


class Server:
    """One MCP server subprocess speaking raw JSON lines: send a message, read one reply line.

    Server(cwd, env, flags=(), preexec_fn=None, command=None, check_schemas=False, ensure_ascii=True)

    - `command` replaces be_command_prefix();
    - `check_schemas`: every successful tools/call is also checked against the tool's outputSchema
      (from tools/list, asked once) and its text content against its structured content;
    - `ensure_ascii`: how `send` encodes messages (False sends UTF-8 as is; True escapes, which is the
      only way to send a lone surrogate).

    Everything the server writes is kept: `stdout_lines` (every raw line, in order) and `stderr`
    (bytes); `lines` is the queue of reply lines not yet read (None once stdout is closed).
    """

    def __init__(
        self, cwd, env, flags=(), preexec_fn=None, command=None, check_schemas=False, ensure_ascii=True
    ):
        self.proc = subprocess.Popen(
            [*(command or be_command_prefix()), *flags],
            cwd=str(cwd),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=preexec_fn,
        )
        self.check_schemas = check_schemas
        self.ensure_ascii = ensure_ascii
        self.lines = queue.Queue()
        self.stdout_lines = []
        self.stderr = bytearray()
        self._next_id = 0
        self._output_schemas = None
        self._pumps = [
            threading.Thread(target=self._pump_out, daemon=True),
            threading.Thread(target=self._pump_err, daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    def _pump_out(self):
        for line in self.proc.stdout:
            self.stdout_lines.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr += chunk

    def _stderr_tail(self):
        return bytes(self.stderr[-4000:]).decode("utf-8", "replace")

    # -- sending and receiving

    def send_line(self, data):
        """Write `data` (str or bytes) and a newline, whatever `data` ends with."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send_raw(self, data):
        """Write the bytes `data`, ending them with a newline unless they already end with one."""
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def send(self, message):
        self.send_line(json.dumps(message, ensure_ascii=self.ensure_ascii))

    def recv(self, timeout=REPLY_TIMEOUT, parse_int=None):
        """The next reply line, parsed (integers by `parse_int` when given); fails the test when
        none comes within `timeout` seconds."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout}s; stderr: {self._stderr_tail()}") from None
        if line is None:
            self.lines.put(None)  # stays closed for the next recv
            raise AssertionError(f"server closed stdout ({self.proc.poll()}); stderr: {self._stderr_tail()}")
        return json.loads(line, parse_int=parse_int)

    def new_id(self):
        self._next_id += 1
        return self._next_id

    def request(self, method, params=None, request_id=None, timeout=REPLY_TIMEOUT):
        """Send a request (with a new id unless `request_id` is given) and return its reply."""
        request_id = self.new_id() if request_id is None else request_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv(timeout)
        assert reply.get("id") == request_id, reply
        return reply

    def initialize(self, version="2025-11-25"):
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"},
        }
        reply = self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    def tools(self):
        return self.request("tools/list")["result"]["tools"]

    def alive(self):
        return self.proc.poll() is None and self.request("ping")["result"] == {}

    # -- tools/call

    def tool_result(self, name, args=None, timeout=REPLY_TIMEOUT, **kwargs):
        """The tools/call result object ({"content", "structuredContent", "isError"?})."""
        arguments = dict(args or {}, **kwargs)
        reply = self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)
        assert "result" in reply, reply
        result = reply["result"]
        if self.check_schemas and not result.get("isError"):
            self.check_success(name, result)
        return result

    def check_success(self, name, result):
        structured = result["structuredContent"]
        assert result["content"][0]["type"] == "text"
        assert json.loads(result["content"][0]["text"]) == structured
        if self._output_schemas is None:
            self._output_schemas = {canonical(t["name"]): t["outputSchema"] for t in self.tools()}
        import jsonschema

        jsonschema.validate(structured, self._output_schemas[canonical(name)])

    def call(self, name, args=None, timeout=REPLY_TIMEOUT, **kwargs):
        """(structured result, None) of a successful call, or (None, error object) of a failed one."""
        result = self.tool_result(name, args, timeout=timeout, **kwargs)
        content = result["structuredContent"]
        if result.get("isError"):
            return None, content["error"]
        return content, None

    def ok(self, name, args=None, timeout=REPLY_TIMEOUT, **kwargs):
        """The structured result of a call that must succeed."""
        result = self.tool_result(name, args, timeout=timeout, **kwargs)
        assert not result.get("isError"), result["content"][0]["text"]
        return result["structuredContent"]

    def err(self, name, code, args=None, timeout=REPLY_TIMEOUT, **kwargs):
        """The error object of a call that must fail with `code`."""
        result = self.tool_result(name, args, timeout=timeout, **kwargs)
        assert result.get("isError") is True, result
        error = result["structuredContent"]["error"]
        assert error["code"] == code, error
        return error

    # -- output checks

    def stderr_has(self, needle, timeout=5):
        """stderr is read by a thread: wait a little for text the server has already written."""
        deadline = time.monotonic() + timeout
        while needle not in self.stderr and time.monotonic() < deadline:
            time.sleep(0.01)
        return needle in self.stderr

    def check_stdout(self):
        """Everything the server wrote on stdout was one JSON-RPC response per line, or (the answer
        to a batch) one non-empty array of them (docs/behaviour.md#json-rpc-transport)."""
        for line in self.stdout_lines:
            assert line.endswith(b"\n"), line[:200]
            message = json.loads(line.decode("utf-8"), parse_int=str)  # (ids of any length)
            for one in message if isinstance(message, list) and message else [message]:
                assert isinstance(one, dict) and one.get("jsonrpc") == "2.0", line[:200]
                assert ("result" in one) != ("error" in one), line[:200]
                assert "id" in one, line[:200]

    # -- ending

    def close(self, timeout=10):
        """Close stdin and wait for the exit code; a server still running after `timeout` seconds is
        killed and subprocess.TimeoutExpired raised (a server must exit at end of input)."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._release()
            raise
        self._release()
        return code

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.close()

    def _release(self):
        for pump in self._pumps:  # everything the server wrote has been collected
            pump.join(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()


def close_all(servers, kill_first=False):
    """Close (or first kill) every server, even when one of them fails to close; re-raise the first error."""
    errors = []
    for server in servers:
        try:
            if kill_first and server.proc.poll() is None:
                server.proc.kill()
            server.close()
        except Exception as exc:  # noqa: BLE001 - every server is closed before the first error is raised
            errors.append(exc)
    if errors:
        raise errors[0]
