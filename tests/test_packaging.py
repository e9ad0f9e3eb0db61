"""The MCP Bundle (.mcpb) and the MCP registry's server.json that scripts/package.py writes.

- server.json for the module's version validates against the registry's JSON schema, stored as
  tests/data/server.schema.json: the 2025-12-11 schema, published at
  https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json (in the repository
  github.com/modelcontextprotocol/static, schemas/2025-12-11/server.schema.json, commit a9ba437d).
- A bundle is built around a stand-in for the frozen executable: BE_EXE's executable when that is set,
  else a shell script of the same name that runs this checkout's better_edit.py. Packed by this
  script's own zip writer (always) and by the official CLI (`npx -y @anthropic-ai/mcpb@2.1.2`, which
  is skipped when npx is missing or the package cannot be fetched), it is unpacked as a host would
  and started with the manifest's command and arguments (${__dirname} and ${user_config.root}
  filled in); it must answer initialize and tools/list with the 13 tools the manifest names, and
  write inside the chosen root.
- The release workflow packs a bundle in each build job and writes server.json after checksums.txt.

Runtime: about 1.5 s for the npx-free tests; the official CLI adds about 1.5 s per npx call (three)
once npm has cached the package, whose first download adds some 8 s (measured: 15 s cold, 7 s warm).
"""

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from harness import MODULE, REPO, load_script

pytestmark = pytest.mark.xdist_group("packaging")  # one npx set-up (pyproject.toml: addopts)

SCHEMA = Path(__file__).resolve().parent / "data" / "server.schema.json"
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
HOST_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform, "linux")


PACKAGE = load_script("package")


def module_version():
    text = MODULE.read_text(encoding="utf-8")
    return next(line.split('"')[1] for line in text.splitlines() if line.startswith("__version__ = "))


@pytest.fixture(scope="module")
def tools():
    """The manifest's tool list, from the module (as `bundle` makes it): asked once."""
    return PACKAGE.tool_summaries()


# ---- server.json ---------------------------------------------------------------------------------


def registry_validator():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is needed (pip install jsonschema)")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == PACKAGE.SERVER_SCHEMA  # the file is the schema server.json names
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_server_json_validates_against_the_registry_schema(tmp_path):
    validator = registry_validator()
    version = module_version()
    platforms = [(os_name, arch) for os_name in PACKAGE.OSES for arch in PACKAGE.ARCHES]
    checksums = tmp_path / "checksums.txt"
    sums = {}
    for index, (os_name, arch) in enumerate(platforms):
        sums[PACKAGE.bundle_name(version, os_name, arch)] = f"{index:x}" * 64
        sums[PACKAGE.asset_name(version, os_name, arch)] = "f" * 64
    checksums.write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items())))
    out = tmp_path / "server.json"
    assert PACKAGE.main(["server-json", "v" + version, "--checksums", str(checksums), "--out", str(out)]) == 0
    server = json.loads(out.read_text(encoding="utf-8"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(server)]
    assert errors == []
    assert server["$schema"] == PACKAGE.SERVER_SCHEMA
    assert server["name"] == "io.github.better-edit-tools/better-edit-tools"
    assert server["version"] == version
    pypi, *bundles = server["packages"]
    assert (pypi["registryType"], pypi["identifier"], pypi["version"]) == (
        "pypi",
        "better-edit-tools",
        version,
    )
    assert pypi["transport"] == {"type": "stdio"}
    assert len(bundles) == len(platforms)
    for package, (os_name, arch) in zip(bundles, platforms):
        name = PACKAGE.bundle_name(version, os_name, arch)
        assert package["registryType"] == "mcpb"
        assert package["identifier"] == (
            f"https://github.com/better-edit-tools/better-edit-tools/releases/download/v{version}/{name}"
        )
        assert package["fileSha256"] == sums[name]
        assert package["transport"] == {"type": "stdio"}

    # Without checksums: the PyPI package alone, still valid; checksums without any bundle: an error.
    alone = PACKAGE.server_json(version)
    assert [p["registryType"] for p in alone["packages"]] == ["pypi"]
    assert list(validator.iter_errors(alone)) == []
    with pytest.raises(ValueError, match="mcpb"):
        PACKAGE.server_json(version, {PACKAGE.asset_name(version, "linux", "amd64"): "0" * 64})


# ---- the bundle ----------------------------------------------------------------------------------


def test_manifest_names_every_tool_for_each_platform(tools):
    listed = json.loads(
        subprocess.run(
            [sys.executable, str(MODULE), "--lang", "en", "--dump-tools", "json"],
            capture_output=True,
            check=True,
        ).stdout
    )
    assert len(listed) == 13
    assert [tool["name"] for tool in tools] == [tool["name"] for tool in listed]
    for summary, tool in zip(tools, listed):
        assert summary["description"] and tool["description"].startswith(summary["description"])
    for os_name, platform, exe in (
        ("linux", "linux", "better-edit-tools"),
        ("darwin", "darwin", "better-edit-tools"),
        ("windows", "win32", "better-edit-tools.exe"),
    ):
        manifest = PACKAGE.bundle_manifest("1.2.3", os_name, tools)
        server = manifest["server"]
        assert (server["type"], server["entry_point"]) == ("binary", "server/" + exe)
        assert server["mcp_config"] == {
            "command": "${__dirname}/server/" + exe,
            "args": ["--root", "${user_config.root}"],
        }
        assert manifest["user_config"]["root"]["type"] == "directory"
        assert manifest["compatibility"] == {"platforms": [platform]}
        assert manifest["version"] == "1.2.3"


@pytest.fixture
def stand_in(tmp_path):
    """An executable named like the frozen one: BE_EXE's, or a script running this checkout's module."""
    if os.environ.get("BE_EXE"):
        return Path(os.environ["BE_EXE"]).resolve()
    if os.name == "nt":
        pytest.skip("the stand-in executable is a shell script; set BE_EXE to a built executable")
    exe = tmp_path / "dist" / PACKAGE.exe_name(HOST_OS)
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(MODULE))} "$@"\n')
    exe.chmod(0o755)
    return exe


def unpack(bundle, folder):
    """Unzips BUNDLE into FOLDER as a host does, keeping the Unix modes; returns {name: mode}."""
    modes = {}
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            target = Path(archive.extract(info, folder))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                target.chmod(mode)
            modes[info.filename] = mode
    return modes


def check_bundle_runs(folder, root, env, tools):
    """Starts the unpacked bundle as its manifest says; initialize, tools/list and one write in ROOT."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    config = manifest["server"]["mcp_config"]

    def fill(text):
        return text.replace("${__dirname}", str(folder)).replace("${user_config.root}", str(root))

    command = [fill(config["command"]), *(fill(arg) for arg in config["args"])]
    assert Path(command[0]) == folder / manifest["server"]["entry_point"]
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "be-write", "arguments": {"file": "hello.txt", "content": "hi\n"}}},
    ]  # fmt: skip
    stdin = "".join(json.dumps(request) + "\n" for request in requests).encode()
    result = subprocess.run(command, input=stdin, env=env, cwd=str(folder), capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert replies[0]["result"]["serverInfo"]["name"] == "better-edit-tools"
    listed = [tool["name"] for tool in replies[1]["result"]["tools"]]
    assert len(listed) == 13
    assert listed == [tool["name"] for tool in manifest["tools"]] == [tool["name"] for tool in tools]
    assert not replies[2]["result"].get("isError"), replies[2]
    assert (root / "hello.txt").read_text() == "hi\n"  # --root ${user_config.root} took effect


def test_zip_packer_bundle_unpacks_and_serves(tmp_path, stand_in, tools, be_env, root):
    out = tmp_path / "release"
    path = PACKAGE.make_bundle(stand_in, "0.0.1", HOST_OS, "amd64", out, packer="zip", tools=tools)
    assert path == (out / f"better-edit-tools_0.0.1_{HOST_OS}_amd64.mcpb").resolve()
    entry = "server/" + PACKAGE.exe_name(HOST_OS)
    modes = unpack(path, tmp_path / "installed")
    assert modes == {entry: 0o755, "manifest.json": 0o644}
    again = PACKAGE.make_bundle(
        stand_in, "0.0.1", HOST_OS, "amd64", tmp_path / "again", packer="zip", tools=tools
    )
    assert again.read_bytes() == path.read_bytes(), "the same executable gives the same bundle"
    check_bundle_runs(tmp_path / "installed", root, be_env, tools)


@pytest.fixture(scope="module")
def mcpb_cli():
    """[npx, -y, @anthropic-ai/mcpb@VERSION], once it has answered --version; else the test is skipped."""
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not on PATH (Node.js runs the official mcpb CLI)")
    command = [npx, "-y", PACKAGE.MCPB_CLI]
    # One retry, not npm's two with back-off: without a registry this gives up in ~10 s instead of ~70 s.
    env = dict(os.environ)
    env.setdefault("npm_config_fetch_retries", "1")
    try:
        result = subprocess.run(
            [*command, "--version"],
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"{PACKAGE.MCPB_CLI} could not be fetched within 300 s")
    if result.returncode != 0:
        pytest.skip(f"{PACKAGE.MCPB_CLI} could not be fetched or run: {result.stderr.strip()[-500:]}")
    assert result.stdout.strip() == PACKAGE.MCPB_CLI.rsplit("@", 1)[1]
    return command


def test_official_cli_validates_and_packs_the_bundle(tmp_path, stand_in, tools, be_env, root, mcpb_cli):
    stage = tmp_path / "stage"
    PACKAGE.stage_bundle(stand_in, "0.0.1", HOST_OS, "amd64", stage, tools)
    validate = subprocess.run(
        [*mcpb_cli, "validate", "manifest.json"], cwd=stage, capture_output=True, text=True, timeout=120
    )
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "validation passes" in validate.stdout

    path = PACKAGE.make_bundle(
        stand_in, "0.0.1", HOST_OS, "amd64", tmp_path / "release", packer="mcpb", tools=tools
    )
    assert path.name == f"better-edit-tools_0.0.1_{HOST_OS}_amd64.mcpb"
    entry = "server/" + PACKAGE.exe_name(HOST_OS)
    modes = unpack(path, tmp_path / "installed")
    assert sorted(modes) == ["manifest.json", entry]
    if os.name != "nt":
        assert modes[entry] & stat.S_IXUSR
    installed = json.loads((tmp_path / "installed" / "manifest.json").read_text(encoding="utf-8"))
    assert installed == json.loads((stage / "manifest.json").read_text(encoding="utf-8"))
    check_bundle_runs(tmp_path / "installed", root, be_env, tools)


# ---- the release workflow ------------------------------------------------------------------------


def test_release_workflow_packs_bundles_and_writes_server_json():
    yaml = pytest.importorskip("yaml", reason="PyYAML is needed to parse the workflow (pip install pyyaml)")
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]

    def runs(job):
        return "\n".join(str(step.get("run", "")) for step in jobs[job]["steps"])

    build = runs("build")
    assert "scripts/package.py bundle" in build and "--out release --packer mcpb" in build
    assert any(str(step.get("uses", "")).startswith("actions/setup-node@") for step in jobs["build"]["steps"])
    assemble = runs("assemble")
    # checksums.txt covers every file in release/ (the .mcpb too); server.json reads it afterwards.
    assert assemble.index("package.py checksums release") < assemble.index("package.py server-json")
    assert "--checksums release/checksums.txt" in assemble
