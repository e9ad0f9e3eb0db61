"""Package a built executable as release assets; write checksums.txt and server.json (docs/install.md).

    python scripts/package.py archive VERSION OS ARCH [--exe dist/better-edit-tools] [--out release]
    python scripts/package.py bundle VERSION OS ARCH [--exe dist/better-edit-tools] [--out release]
                                     [--stage DIR] [--packer auto|mcpb|zip]
    python scripts/package.py checksums DIR
    python scripts/package.py server-json VERSION [--checksums release/checksums.txt] [--out server.json]

`archive` makes better-edit-tools_VERSION_OS_ARCH.tar.gz (.zip for windows) holding the executable
at its top level, mode 0755, with no owner names or timestamps from the build machine. `checksums`
writes DIR/checksums.txt in `sha256sum` format ("HASH  NAME", sorted by name) over every other file
in DIR (the archives, the bundles and install.sh). install.sh reads that file; it is what lets it
find the latest version (docs/install.md).

`bundle` makes better-edit-tools_VERSION_OS_ARCH.mcpb, an MCP Bundle: a zip that Claude Desktop and
other MCP hosts install in one step. It holds manifest.json (manifest_version 0.3, server type
"binary", this one platform) and the executable as server/better-edit-tools (.exe for windows). The
host runs it as `${__dirname}/server/better-edit-tools --root FOLDER`, FOLDER being the workspace
the user picks when installing (user_config.root). The manifest's tool list (each name and the first
sentence of its description) is what `better_edit.py --dump-tools json` prints. The bundle folder is
laid out in --stage (default: a temporary folder, removed afterwards), then packed:
  - by `npx -y @anthropic-ai/mcpb@2.1.2 pack` (MCPB_CLI), which validates the manifest first:
    --packer mcpb, or --packer auto (the default) when npx is on PATH;
  - else by this script's own zip writer (--packer zip, or auto without npx): the same layout
    (manifest.json and server/ at the top, the executable mode 0755, the rest 0644), with fixed
    timestamps so that the same executable gives the same bundle.

`server-json` writes server.json for the official MCP registry (schema 2025-12-11): the server
io.github.better-edit-tools/better-edit-tools with its PyPI package (`uvx better-edit-tools`,
stdio) and, given --checksums, every .mcpb of VERSION listed in that file, by its release download
URL with its SHA-256 (the registry requires fileSha256 for MCPB packages).

Standard library only, so it runs the same on every release runner (the mcpb packer needs Node's npx).
"""

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PROGRAM = "better-edit-tools"
OSES = ("linux", "darwin", "windows")
ARCHES = ("amd64", "arm64")
# A fixed timestamp (2020-01-01) so that the same executable gives the same archive.
FIXED_MTIME = 1577836800
FIXED_DATE = (2020, 1, 1, 0, 0, 0)

MODULE = Path(__file__).resolve().parent.parent / "better_edit.py"
PROJECT_URL = "https://github.com/better-edit-tools/better-edit-tools"
DOWNLOAD_URL = PROJECT_URL + "/releases/download"  # + /vVERSION/ASSET
TITLE = "Better Edit Tools"
SUMMARY = "Exact, atomic, recoverable file edits for LLM agents: an MCP server and a CLI in one program."
DETAILS = (
    "Edits that say exactly what they changed: every change is checked against the lines the model "
    "last read, written atomically, returned as a diff and kept as a snapshot that can be rolled "
    "back. Brackets and tags are checked before a change is written, deleted text is kept as a chip "
    "that can be put back, and several edits (or a unified diff) apply as one change or not at all. "
    "Every path is confined to the workspace folder you choose."
)

# MCP Bundle: manifest.json as specified by github.com/anthropics/mcpb (MANIFEST.md).
MCPB_CLI = "@anthropic-ai/mcpb@2.1.2"  # pinned, so every runner (and the tests) packs with the same tool
MANIFEST_VERSION = "0.3"
MCPB_PLATFORM = {"linux": "linux", "darwin": "darwin", "windows": "win32"}  # Node's process.platform
PACKERS = ("auto", "mcpb", "zip")

# The official MCP registry (github.com/modelcontextprotocol/registry): server.json.
REGISTRY_NAME = "io.github.better-edit-tools/better-edit-tools"
SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def asset_name(version, os_name, arch):
    ext = "zip" if os_name == "windows" else "tar.gz"
    return f"{PROGRAM}_{version}_{os_name}_{arch}.{ext}"


def bundle_name(version, os_name, arch):
    return f"{PROGRAM}_{version}_{os_name}_{arch}.mcpb"


def exe_name(os_name):
    return PROGRAM + (".exe" if os_name == "windows" else "")


def _check_platform(os_name, arch):
    if os_name not in OSES or arch not in ARCHES:
        raise ValueError(f"unknown platform {os_name}/{arch}")


def make_archive(exe, version, os_name, arch, out_dir):
    """Writes the asset into OUT_DIR and returns its path."""
    _check_platform(os_name, arch)
    data = Path(exe).read_bytes()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / asset_name(version, os_name, arch)
    if os_name == "windows":
        info = zipfile.ZipInfo(exe_name(os_name), date_time=FIXED_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (0o100755 & 0xFFFF) << 16
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(info, data)
    else:
        info = tarfile.TarInfo(PROGRAM)
        info.size, info.mode, info.mtime = len(data), 0o755, FIXED_MTIME
        with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
            archive.addfile(info, io.BytesIO(data))
    return path


# ---- MCP Bundle (.mcpb) ------------------------------------------------------------------------------


def first_sentence(text):
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def tool_summaries(module=MODULE):
    """[{"name", "description"}] for each tool the MCP server lists, in its order, in English: the
    name and the first sentence of the description, from `python better_edit.py --dump-tools json`."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    result = subprocess.run(
        [sys.executable, str(module), "--lang", "en", "--dump-tools", "json"],
        capture_output=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{module} --dump-tools json failed: {result.stderr.decode(errors='replace')}")
    tools = json.loads(result.stdout.decode("utf-8"))
    return [{"name": tool["name"], "description": first_sentence(tool["description"])} for tool in tools]


def bundle_manifest(version, os_name, tools):
    """manifest.json (a dict) of the bundle for OS_NAME; its executable is server/better-edit-tools[.exe]."""
    entry = "server/" + exe_name(os_name)
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": PROGRAM,
        "display_name": TITLE,
        "version": version,
        "description": SUMMARY,
        "long_description": DETAILS,
        "author": {"name": "The better-edit-tools authors", "url": PROJECT_URL},
        "repository": {"type": "git", "url": PROJECT_URL + ".git"},
        "homepage": PROJECT_URL,
        "documentation": PROJECT_URL + "/blob/main/docs/mcp.md",
        "support": PROJECT_URL + "/issues",
        "server": {
            "type": "binary",
            "entry_point": entry,
            "mcp_config": {
                "command": "${__dirname}/" + entry,
                "args": ["--root", "${user_config.root}"],
            },
        },
        "tools": list(tools),
        "keywords": ["edit", "files", "patch", "diff", "undo", "refactoring", "coding"],
        "license": "MIT",
        "compatibility": {"platforms": [MCPB_PLATFORM[os_name]]},
        "user_config": {
            "root": {
                "type": "directory",
                "title": "Workspace folder",
                "description": "The folder whose files the tools may read and edit; "
                "paths outside it are refused.",
                "required": True,
            }
        },
    }


def stage_bundle(exe, version, os_name, arch, folder, tools):
    """Lays the bundle out in FOLDER (absent or empty): manifest.json and server/EXE; returns the manifest."""
    _check_platform(os_name, arch)
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} is not empty: the bundle would take in whatever is there")
    manifest = bundle_manifest(version, os_name, tools)
    target = folder / manifest["server"]["entry_point"]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exe, target)
    os.chmod(target, 0o755)
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    (folder / "manifest.json").write_bytes(text.encode("utf-8"))
    return manifest


def zip_bundle(folder, path, executable):
    """Packs FOLDER into the zip PATH: every file under its path relative to FOLDER, the one named
    EXECUTABLE (relative path) with mode 0755 and the others 0644, all dated FIXED_DATE."""
    folder = Path(folder)
    files = sorted((p.relative_to(folder).as_posix(), p) for p in folder.rglob("*") if p.is_file())
    with zipfile.ZipFile(path, "w") as archive:
        for name, file in files:
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the mode below is read
            info.external_attr = ((0o100755 if name == executable else 0o100644) & 0xFFFF) << 16
            archive.writestr(info, file.read_bytes(), compresslevel=9)
    return path


def mcpb_pack(folder, path):
    """Packs FOLDER into PATH with the official CLI (`npx -y MCPB_CLI pack`), which validates the manifest."""
    npx = shutil.which("npx")
    if not npx:
        raise RuntimeError("npx is not on PATH: install Node.js, or pack with --packer zip")
    result = subprocess.run(
        [npx, "-y", MCPB_CLI, "pack", str(folder), str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    sys.stderr.write(result.stdout.decode("utf-8", "replace") + result.stderr.decode("utf-8", "replace"))
    if result.returncode != 0 or not Path(path).is_file():
        raise RuntimeError(f"{MCPB_CLI} pack failed (exit {result.returncode})")
    return path


def make_bundle(exe, version, os_name, arch, out_dir, stage=None, packer="auto", tools=None):
    """Writes OUT_DIR/better-edit-tools_VERSION_OS_ARCH.mcpb and returns its path.

    STAGE: where the bundle folder is laid out and kept (default: a temporary folder).
    PACKER: "mcpb" (npx), "zip" (zip_bundle) or "auto" (mcpb when npx is on PATH, else zip).
    TOOLS: the manifest's tool list (default: tool_summaries() of the module)."""
    _check_platform(os_name, arch)
    if packer not in PACKERS:
        raise ValueError(f"unknown packer {packer!r}")
    if packer == "auto":
        packer = "mcpb" if shutil.which("npx") else "zip"
    tools = tool_summaries() if tools is None else tools
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = (out_dir / bundle_name(version, os_name, arch)).resolve()
    with contextlib.ExitStack() as stack:
        if stage is None:
            stage = Path(stack.enter_context(tempfile.TemporaryDirectory())) / path.stem
        manifest = stage_bundle(exe, version, os_name, arch, stage, tools)
        if path.exists():
            path.unlink()
        if packer == "mcpb":
            mcpb_pack(stage, path)
        else:
            zip_bundle(stage, path, manifest["server"]["entry_point"])
    print(
        f"package.py: {path.name} packed by {MCPB_CLI if packer == 'mcpb' else 'zip_bundle'}", file=sys.stderr
    )
    return path


# ---- checksums.txt -----------------------------------------------------------------------------------


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(directory):
    """Writes DIRECTORY/checksums.txt over every other file there (every asset); returns its path."""
    directory = Path(directory)
    assets = sorted(p for p in directory.iterdir() if p.is_file() and p.name != "checksums.txt")
    if not any(p.name.endswith((".tar.gz", ".zip")) for p in assets):
        raise ValueError(f"no release assets in {directory}")
    path = directory / "checksums.txt"
    path.write_text("".join(f"{sha256_file(p)}  {p.name}\n" for p in assets), newline="\n")
    return path


def read_checksums(path):
    """{NAME: HASH} from a `sha256sum` file ("HASH  NAME" or "HASH *NAME" lines)."""
    sums = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not _SHA256.match(parts[0].lower()):
            raise ValueError(f"{path}:{number}: not a sha256sum line: {line!r}")
        sums[parts[1].strip().lstrip("*")] = parts[0].lower()
    return sums


# ---- server.json (official MCP registry) -------------------------------------------------------------


def server_json(version, checksums=None):
    """The server.json of VERSION (a dict). CHECKSUMS ({asset name: SHA-256}, from read_checksums):
    each .mcpb of VERSION found there is listed as an MCPB package; without it, only the PyPI package."""
    packages = [
        {
            "registryType": "pypi",
            "registryBaseUrl": "https://pypi.org",
            "identifier": PROGRAM,
            "version": version,
            "runtimeHint": "uvx",
            "transport": {"type": "stdio"},
            "packageArguments": [
                {
                    "type": "named",
                    "name": "--root",
                    "description": "Confine every path to this folder (the workspace)",
                    "format": "filepath",
                    "isRequired": False,
                }
            ],
        }
    ]
    for os_name in OSES:
        for arch in ARCHES:
            name = bundle_name(version, os_name, arch)
            if checksums and name in checksums:
                packages.append(
                    {
                        "registryType": "mcpb",
                        "identifier": f"{DOWNLOAD_URL}/v{version}/{name}",
                        "version": version,
                        "fileSha256": checksums[name],
                        "transport": {"type": "stdio"},
                    }
                )
    if checksums is not None and len(packages) == 1:
        raise ValueError(f"no {bundle_name(version, '*', '*')} in the checksums")
    return {
        "$schema": SERVER_SCHEMA,
        "name": REGISTRY_NAME,
        "title": TITLE,
        "description": SUMMARY,
        "version": version,
        "websiteUrl": PROJECT_URL,
        "repository": {"url": PROJECT_URL, "source": "github"},
        "packages": packages,
    }


def write_server_json(version, path, checksums_file=None):
    checksums = read_checksums(checksums_file) if checksums_file else None
    text = json.dumps(server_json(version, checksums), indent=2) + "\n"
    Path(path).write_bytes(text.encode("utf-8"))
    return Path(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for command, what in (("archive", "package one executable"), ("bundle", "make one MCP Bundle (.mcpb)")):
        sub = commands.add_parser(command, help=what)
        sub.add_argument("version")
        sub.add_argument("os", choices=OSES)
        sub.add_argument("arch", choices=ARCHES)
        sub.add_argument("--exe", help="the executable (default dist/better-edit-tools[.exe])")
        sub.add_argument("--out", default="release", help="output directory (default: release)")
        if command == "bundle":
            sub.add_argument("--stage", help="lay the bundle folder out here and keep it (absent or empty)")
            sub.add_argument(
                "--packer",
                choices=PACKERS,
                default="auto",
                help="mcpb (npx), zip, or auto (mcpb when npx is found)",
            )
    checksums = commands.add_parser("checksums", help="write DIR/checksums.txt")
    checksums.add_argument("dir")
    server = commands.add_parser("server-json", help="write server.json for the MCP registry")
    server.add_argument("version")
    server.add_argument(
        "--checksums", help="checksums.txt naming the .mcpb assets (adds them with their SHA-256)"
    )
    server.add_argument("--out", default="server.json", help="output file (default: server.json)")
    args = parser.parse_args(argv)
    if args.command in ("archive", "bundle"):
        exe = args.exe or ("dist/" + exe_name(args.os))
        version = args.version.lstrip("v")
        if args.command == "archive":
            print(make_archive(exe, version, args.os, args.arch, args.out))
        else:
            print(make_bundle(exe, version, args.os, args.arch, args.out, args.stage, args.packer))
    elif args.command == "checksums":
        print(write_checksums(args.dir).read_text(), end="")
    else:
        print(write_server_json(args.version.lstrip("v"), args.out, args.checksums))
    return 0


if __name__ == "__main__":
    sys.exit(main())
