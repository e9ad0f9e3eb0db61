"""The one-file executable (docs/install.md): build it once, smoke-test it, then run the
TypeScript-client suite against it (and under BE_STRESS=1 the CLI and MCP suites too).

The executable is built from build.spec into a temporary directory once per session, unless the
environment variable BE_EXE names one already built (the release workflow sets it and runs only
the smoke tests: `pytest tests/test_frozen.py -k smoke`). Without PyInstaller and without BE_EXE
the module is skipped with the reason.
"""

import contextlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from harness import REPO, be_command_prefix, scaled

pytestmark = pytest.mark.xdist_group("frozen")  # one build of the executable (pyproject.toml: addopts)

EXE_NAME = "better-edit-tools" + (".exe" if os.name == "nt" else "")
# Against the executable: both SDK clients (every tool, every error code we can cause) every time,
# beside the smoke tests of its CLI below; the CLI and raw-stdio MCP suites too under BE_STRESS=1
# (they add about 50 s of two cores).
SUITES = scaled(
    ["tests/test_ts_client.py"],
    ["tests/test_cli.py", "tests/test_mcp.py", "tests/test_ts_client.py"],
)
TOOLS = {
    "be-read", "be-replace", "be-insert", "be-delete", "be-write", "be-balance", "be-func-range",
    "be-tag-range", "be-insert-chip", "be-trx-status", "be-trx-commit", "be-trx-rollback", "be-edit",
}  # fmt: skip


def module_version():
    text = (REPO / "better_edit.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


@pytest.fixture(scope="session")
def frozen_exe(tmp_path_factory):
    """Path of the executable: BE_EXE's, or one built now from build.spec."""
    if os.environ.get("BE_EXE"):
        exe = Path(be_command_prefix()[0])
        if not exe.is_file():
            pytest.fail(f"BE_EXE={os.environ['BE_EXE']} does not exist")
        return exe
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        pytest.skip("PyInstaller is not installed (pip install -e '.[dev]'), and BE_EXE names no executable")
    work = tmp_path_factory.mktemp("frozen")
    result = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(work / "dist"), "--workpath", str(work / "build"), str(REPO / "build.spec")],
        cwd=str(work), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    exe = work / "dist" / EXE_NAME
    assert result.returncode == 0 and exe.is_file(), f"PyInstaller failed:\n{result.stdout}\n{result.stderr}"
    return exe


# ---- smoke tests (also run by the release workflow on every platform) --------------------------


def test_smoke_version(frozen_exe, be_env):
    for flag in ("--version", "-V"):
        result = subprocess.run(
            [str(frozen_exe), flag], env=be_env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == module_version()


def test_smoke_cli_write_then_read(frozen_exe, be_env, root):
    target = root / "notes.txt"
    write = subprocess.run(
        [str(frozen_exe), "write", "--file", str(target), "--content", "hello\nwörld\n"],
        env=be_env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert write.returncode == 0, write.stderr
    assert target.read_bytes() == "hello\nwörld\n".encode()
    read = subprocess.run(
        [str(frozen_exe), "read", "--file", str(target), "--output", "json"],
        env=be_env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr
    result = json.loads(read.stdout)
    assert result["total"] == 2
    assert result["content"] == "1\thello\n2\twörld"
    assert result["viewed_code_id"].startswith("v1:1-2:")


def test_smoke_cli_patch_of_diff_n_deletes_the_file(frozen_exe, be_env, root):
    """The epoch stamp of `diff -uN` marks a missing file; its test imported `datetime`, which the
    executable leaves out: INTERNAL there (found by the contract audit's import check)."""
    (root / "gone.txt").write_text("x\n")
    patch = "--- a/gone.txt\t2026-12-06 02:01:22 +0000\n+++ b/gone.txt\t1970-01-01 00:00:00 +0000\n@@ -1 +0,0 @@\n-x\n"
    done = subprocess.run(
        [str(frozen_exe), "patch"],
        input=patch.encode(),
        cwd=root,
        env=be_env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and not (root / "gone.txt").exists(), done.stderr


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_smoke_cli_help_in_both_languages(frozen_exe, be_env, lang):
    """argparse and the message table in the executable: a command's help, in each language."""
    result = subprocess.run(
        [str(frozen_exe), "--lang", lang, "edit", "--help"], env=be_env, capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode("utf-8")
    words = ("usage:", "example:") if lang == "en" else ("用法：", "示例：")
    assert "--edits-file" in out and all(word in out for word in words), out


def test_smoke_mcp_initialize_and_tools_list(frozen_exe, be_env, root):
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    stdin = "".join(json.dumps(r) + "\n" for r in requests).encode()
    # stdin closes after the last request: the server must answer, then exit 0 at EOF (docs/behaviour.md#json-rpc-transport).
    result = subprocess.run(
        [str(frozen_exe)], input=stdin, env=be_env, cwd=str(root), capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]  # the notification got no answer
    init = replies[0]["result"]
    assert init["protocolVersion"] == "2025-06-18"
    assert init["serverInfo"]["name"] == "better-edit-tools"
    assert init["serverInfo"]["version"] == module_version()
    assert {tool["name"] for tool in replies[1]["result"]["tools"]} == TOOLS


# ---- what is inside ------------------------------------------------------------------------------


def bundled_modules(exe):
    """Names of the Python modules in the executable (PYZ and base_library.zip) and its binaries.

    An extension module that build.spec unpacks on first import is in the PYZ as _be_lazy_NAME; it
    counts as NAME."""
    readers = pytest.importorskip(
        "PyInstaller.archive.readers", reason="PyInstaller is needed to list the bundle"
    )
    archive = readers.CArchiveReader(str(exe))
    names = set(readers.pkg_archive_contents(str(exe)))
    if "base_library.zip" in archive.toc:
        with zipfile.ZipFile(io.BytesIO(archive.extract("base_library.zip"))) as base:
            names |= {re.sub(r"(/__init__)?\.pyc$", "", n).replace("/", ".") for n in base.namelist()}
    names |= {n[len("_be_lazy_") :] for n in names if n.startswith("_be_lazy_")}
    return names


def _imported_by_the_program():
    """Every module better_edit.py imports (at its top or inside a function), found by reading it."""
    import ast

    tree = ast.parse((REPO / "better_edit.py").read_text(encoding="utf-8"))
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return found | {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }


def test_bundle_has_what_the_program_imports_and_not_the_rest(frozen_exe):
    """Every module the program imports that this platform has is in the executable (the contract
    audit: build.spec bundled `secrets`, which the program no longer imports; and the regression
    pass: it left out `datetime`, which a diff -N header's stamp needed: INTERNAL)."""
    import importlib.util

    names = bundled_modules(frozen_exe)
    for module in sorted(_imported_by_the_program()):
        if module in sys.builtin_module_names or importlib.util.find_spec(module.split(".")[0]) is None:
            continue  # (in the interpreter itself, or not on this platform: msvcrt, _sha2)
        extension = any(re.search(rf"(^|/){re.escape(module)}[.\w-]*\.(so|pyd)$", n) for n in names)
        assert module in names or extension, f"{module} is not in the executable"
    spec = (REPO / "build.spec").read_text(encoding="utf-8")
    hidden = re.search(r"HIDDEN_IMPORTS = \[(.*?)\]", spec, re.S).group(1)
    for module in re.findall(r'"([\w.]+)"', hidden):
        assert module in _imported_by_the_program(), f"build.spec bundles {module}, which nothing imports"
    for module in ["tkinter", "unittest", "email", "http", "xml", "pydoc", "lib2to3", "ensurepip", "logging"]:
        assert module not in names, f"{module} should have been excluded"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="build.spec unpacks on import on Linux only")
def test_what_runs_before_the_unpack_on_import_hook_is_unpacked_at_start(frozen_exe):
    """PyInstaller's importer needs zlib and _struct, and the interpreter's start-up needs the codec
    of the locale's encoding (the CJK ones are extension modules): these cannot wait for the hook."""
    readers = pytest.importorskip(
        "PyInstaller.archive.readers", reason="PyInstaller is needed to list the bundle"
    )
    unpacked = {Path(name).name.split(".")[0] for name in readers.CArchiveReader(str(frozen_exe)).toc}
    at_start = ["zlib", "_struct", "_multibytecodec", "_codecs_cn", "_codecs_jp", "_codecs_kr", "_codecs_tw"]
    for module in at_start:
        assert module in unpacked, f"{module} must be unpacked at start"
    if os.environ.get("BE_LAZY_EXTENSIONS", "1") != "0":
        assert "unicodedata" not in unpacked  # the largest one left to its first import


def test_starts_under_a_cjk_locale(frozen_exe, be_env, root, tmp_path):
    """Under a GBK locale the interpreter needs _codecs_cn before any of our code runs (GBK, not
    GB18030 of the same module: its locale takes 1 s to make, not 12)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the locale is made with glibc's localedef")
    if shutil.which("localedef") is None or not Path("/usr/share/i18n/locales/zh_CN").is_file():
        pytest.skip("no localedef or no zh_CN locale source to make the locale from")
    made = subprocess.run(
        ["localedef", "-i", "zh_CN", "-f", "GBK", str(tmp_path / "zh_CN.GBK")],
        capture_output=True, timeout=120,
    )  # fmt: skip
    if not (tmp_path / "zh_CN.GBK").is_dir():
        pytest.skip(f"localedef could not make zh_CN.GBK: {made.stderr[-300:]!r}")
    target = root / "gbk.txt"
    target.write_bytes("你好\n".encode("gbk"))
    env = dict(be_env, LOCPATH=str(tmp_path), LC_ALL="zh_CN.GBK")
    result = subprocess.run(
        [str(frozen_exe), "read", "--file", str(target), "--encoding", "gbk"],
        env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    assert "你好".encode("gbk") in result.stdout


def test_keeps_the_scan_of_a_large_file_between_runs(frozen_exe, be_env, root, cache_dir):
    """The executable unpacks its module anew at every start: its kept scans are stamped with the
    executable itself, so a script's next edit of a large file finds the last run's scan."""
    target = root / "big.js"
    target.write_text("".join(f"function f{n}(a) {{\n  return [a, {{k: {n}}}];\n}}\n" for n in range(40000)))
    env = dict(be_env, BETTER_EDIT_SNAPSHOT_PERSIST="false")
    kept = []
    for line, content in ((2, "  return [a, {k: 'x'}];"), (5, "  return [a, {k: 'y'};")):
        result = subprocess.run(
            [str(frozen_exe), "replace", "-f", str(target), "-s", str(line), "-c", content, "-o", "json"],
            env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        kept.append(sorted(p.read_bytes() for p in (cache_dir / "scans").glob("*.json")))
    assert json.loads(result.stdout)["balance"] == 'edit left 1 unclosed "[" (line 5)'
    assert len(kept[0]) == 1 and len(kept[1]) == 1 and kept[0] != kept[1]  # kept, then replaced
    assert json.loads(kept[1][0])["program"][1:] == [frozen_exe.stat().st_size, frozen_exe.stat().st_mtime_ns]


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")),
    reason="the size target is set for Linux x86-64",
)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_sigkill_of_the_launcher_kills_the_program_too(frozen_exe, be_env, root):
    """Found by an attack: the one-file executable runs as a launcher (the PID the caller knows)
    and the program it unpacked. SIGKILL of the launcher left the program editing on its own: the
    caller saw the process gone and the file untouched, retried, and the edit was made twice. The
    program now dies with its launcher, as the module does, and the next call undoes its commit."""
    import signal
    import time

    target = root / "k.txt"
    target.write_text("a\n")
    env = dict(be_env, BETTER_EDIT_FAULT="applied:STOP")  # (the program stops with the file put in place)
    launcher = subprocess.Popen(
        [str(frozen_exe), "replace", "-f", str(target), "-s", "1", "-c", "b"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    program, deadline = None, time.monotonic() + 30
    while program is None and time.monotonic() < deadline:
        time.sleep(0.02)
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{launcher.pid}/task/{launcher.pid}/children").read_text().split()
            if children and Path(f"/proc/{children[0]}/stat").read_text().split()[2] == "T":
                program = int(children[0])
    assert program is not None, "the program never stopped at the fault point"
    launcher.kill()
    launcher.wait(30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(program):
        time.sleep(0.05)
    if _running(program):  # (the old behaviour: let it finish, then fail)
        os.kill(program, signal.SIGCONT)
        pytest.fail("the program outlived its launcher")
    read = subprocess.run(
        [str(frozen_exe), "read", "-f", str(target)], env=be_env, capture_output=True, timeout=60
    )
    assert read.returncode == 0 and target.read_text() == "a\n", read.stdout + read.stderr
    assert b"was undone" in read.stdout, read.stdout


def _running(pid):
    """Whether process `pid` exists and is no zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_executable_is_at_most_8_mib(frozen_exe):
    assert frozen_exe.stat().st_size <= 8 * 1024 * 1024


# ---- the CLI and MCP suites, against the executable ----------------------------------------------


def test_cli_and_mcp_suites_pass_against_the_executable(frozen_exe):
    suites = [s for s in SUITES if (REPO / s).is_file()]
    if not suites:
        pytest.skip(f"none of {', '.join(SUITES)} exists yet")
    env = dict(os.environ, BE_EXE=str(frozen_exe))
    workers = scaled("0", "2")  # (one suite: the outer run's other worker has the second core)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *suites, "-q", "-p", "no:cacheprovider", "-n", workers],
        cwd=str(REPO), env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    tail = "\n".join(result.stdout.splitlines()[-40:])
    assert result.returncode == 0, f"the suites failed against {frozen_exe}:\n{tail}\n{result.stderr[-2000:]}"
