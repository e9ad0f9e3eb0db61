#!/usr/bin/env bash
# Build the one-file executable dist/better-edit-tools (.exe on Windows) from build.spec.
#
#   bash scripts/build.sh            # on Linux, macOS, or Windows (Git Bash)
#
# Needs only Python >= 3.9 with venv and pip. It makes a private virtual environment in
# build/venv with the pinned tools of scripts/build-requirements.txt (reused on later runs), runs
# PyInstaller, and checks that the result starts and prints the module's version.
# Environment: PYTHON (the interpreter to build with; default python3, else python; python on Windows),
# BE_WITH_OPENSSL=1 (keep OpenSSL's SHA-256 in the executable; see build.spec),
# BE_LAZY_EXTENSIONS=0 (unpack every extension module at start, as before; see build.spec).
set -euo pipefail

cd "$(dirname "$0")/.."
python=${PYTHON:-}
if [ -z "$python" ]; then
    # On Windows "python3" may be the Microsoft Store stub; "python" is the real interpreter there.
    if [ "${OS:-}" != Windows_NT ] && command -v python3 >/dev/null 2>&1; then python=python3; else python=python; fi
fi

venv=build/venv
if [ ! -d "$venv" ]; then
    echo "build.sh: creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi
if [ -x "$venv/bin/python" ]; then vpython=$venv/bin/python; else vpython=$venv/Scripts/python.exe; fi

"$vpython" -m pip install --quiet --disable-pip-version-check -r scripts/build-requirements.txt
"$vpython" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller build.spec

exe=dist/better-edit-tools
[ -f "$exe" ] || exe=dist/better-edit-tools.exe
expected=$("$vpython" -c 'import re; print(re.search(r"^__version__ = \"([^\"]+)\"", open("better_edit.py", encoding="utf-8").read(), re.M).group(1))')
actual=$("$exe" --version)
if [ "$actual" != "$expected" ]; then
    echo "build.sh: $exe --version printed '$actual', expected '$expected'" >&2
    exit 1
fi
# A write and a read load extension modules that build.spec leaves to their first import (Linux).
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
if ! (cd "$check" && export BETTER_EDIT_CACHE_DIR="$check/cache" BETTER_EDIT_ROOT="$check" &&
    "$OLDPWD/$exe" write --file check.txt --content 'hello' >/dev/null &&
    "$OLDPWD/$exe" read --file check.txt >/dev/null); then
    echo "build.sh: $exe could not write and read a file" >&2
    exit 1
fi
size=$(wc -c <"$exe" | tr -d ' ')
echo "build.sh: built $exe ($size bytes), version $actual"
