"""Package a built executable as a release asset, and write checksums.txt (docs/install.md).

    python scripts/package.py archive VERSION OS ARCH [--exe dist/better-edit-tools] [--out release]
    python scripts/package.py checksums DIR

`archive` makes better-edit-tools_VERSION_OS_ARCH.tar.gz (.zip for windows) holding the executable
at its top level, mode 0755, with no owner names or timestamps from the build machine. `checksums`
writes DIR/checksums.txt in `sha256sum` format ("HASH  NAME", sorted by name) over every other file
in DIR (the archives and install.sh). install.sh reads that file; it is what lets it find the latest version (docs/install.md).

Standard library only, so it runs the same on every release runner.
"""

import argparse
import hashlib
import io
import sys
import tarfile
import zipfile
from pathlib import Path

PROGRAM = "better-edit-tools"
OSES = ("linux", "darwin", "windows")
ARCHES = ("amd64", "arm64")
# A fixed timestamp (2020-01-01) so that the same executable gives the same archive.
FIXED_MTIME = 1577836800


def asset_name(version, os_name, arch):
    ext = "zip" if os_name == "windows" else "tar.gz"
    return f"{PROGRAM}_{version}_{os_name}_{arch}.{ext}"


def make_archive(exe, version, os_name, arch, out_dir):
    """Writes the asset into OUT_DIR and returns its path."""
    if os_name not in OSES or arch not in ARCHES:
        raise ValueError(f"unknown platform {os_name}/{arch}")
    data = Path(exe).read_bytes()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / asset_name(version, os_name, arch)
    if os_name == "windows":
        info = zipfile.ZipInfo(PROGRAM + ".exe", date_time=(2020, 1, 1, 0, 0, 0))
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    archive = commands.add_parser("archive", help="package one executable")
    archive.add_argument("version")
    archive.add_argument("os", choices=OSES)
    archive.add_argument("arch", choices=ARCHES)
    archive.add_argument("--exe", help="the executable (default dist/better-edit-tools[.exe])")
    archive.add_argument("--out", default="release", help="output directory (default: release)")
    checksums = commands.add_parser("checksums", help="write DIR/checksums.txt")
    checksums.add_argument("dir")
    args = parser.parse_args(argv)
    if args.command == "archive":
        exe = args.exe or ("dist/" + PROGRAM + (".exe" if args.os == "windows" else ""))
        print(make_archive(exe, args.version.lstrip("v"), args.os, args.arch, args.out))
    else:
        print(write_checksums(args.dir).read_text(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
