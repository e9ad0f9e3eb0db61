"""Shared fixtures: every test gets its own root and cache, so no test touches the real cache.

`be_command` is how tests start the program: the module under the current interpreter, or the frozen
executable when the environment variable BE_EXE names one (SPEC §8, issue 5).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "better_edit.py"


def be_command_prefix():
    exe = os.environ.get("BE_EXE")
    if exe:
        return [str(Path(exe).resolve())]
    return [sys.executable, str(MODULE)]


@pytest.fixture
def be_command():
    return be_command_prefix()


@pytest.fixture
def cache_dir(tmp_path):
    path = tmp_path / "cache"
    path.mkdir()
    return path


@pytest.fixture
def root(tmp_path):
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def be_env(cache_dir, root):
    """A clean environment for subprocesses: private cache, English, no inherited BETTER_EDIT_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BETTER_EDIT_", "LC_", "LANG"))}
    if os.environ.get("BETTER_EDIT_PORTABLE_FALLBACKS"):  # the Windows code paths, on POSIX
        env["BETTER_EDIT_PORTABLE_FALLBACKS"] = os.environ["BETTER_EDIT_PORTABLE_FALLBACKS"]
    env["BETTER_EDIT_CACHE_DIR"] = str(cache_dir)
    env["BETTER_EDIT_WORKSPACE"] = str(root)
    env["LANG"] = "C.UTF-8"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture
def run_be(be_command, be_env, root):
    """Run the CLI: run_be("read", "-f", "x.txt", input=b"...", cwd=...) -> CompletedProcess (bytes)."""

    def run(*args, input=None, cwd=None, env=None, timeout=60):
        merged = dict(be_env)
        if env:
            merged.update(env)
        return subprocess.run(
            [*be_command, *map(str, args)],
            input=input,
            cwd=str(cwd or root),
            env=merged,
            capture_output=True,
            timeout=timeout,
        )

    return run
