"""Shared fixtures: every test gets its own root and cache, so no test touches the real cache.

How the program is started (the module, or the frozen executable named by BE_EXE), the raw MCP
client and the stress knob live in tests/harness.py; this file only turns them into fixtures.
"""

import pytest
from harness import MODULE, REPO, be_command_prefix, clean_env, prepare_module, run_cli

__all__ = ["MODULE", "REPO", "be_command_prefix"]  # older imports `from conftest import ...` keep working


def pytest_configure(config):
    prepare_module()  # bytecode for `python -m better_edit`, and this checkout first on PYTHONPATH


def pytest_collection_modifyitems(config, items):
    """The files that share one long set-up (an xdist_group: the executable, npm, npx, the mirror)
    first: each runs on one worker, so one started last would leave the other worker idle at the end."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)


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
    return clean_env(cache_dir, root)


@pytest.fixture
def run_be(be_command, be_env, root):
    """Run the CLI: run_be("read", "-f", "x.txt", input=b"...", cwd=...) -> CompletedProcess (bytes)."""

    def run(*args, input=None, cwd=None, env=None, timeout=60):
        return run_cli(
            *args,
            input=input,
            cwd=cwd or root,
            env=dict(be_env, **(env or {})),
            timeout=timeout,
            command=be_command,
        )

    return run
