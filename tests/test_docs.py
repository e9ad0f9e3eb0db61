"""The documentation cannot rot (issue 7).

(a) Every fenced block in README.md and README.zh.md (and in docs/*.md) whose info string is exactly
    `sh test` runs with `bash -e` in an empty temporary directory, where `better-edit-tools` is this checkout's program
    (or the executable named by BE_EXE) and the cache is private; each block must exit 0.
(b) docs/mcp.md is what scripts/gen_mcp_docs.py generates from the tool table today.
(c) Every relative link in README*.md and docs/*.md points to an existing file (and heading).
"""

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from harness import REPO, be_command_prefix, load_script, module_command

READMES = [REPO / "README.md", REPO / "README.zh.md"]
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)


def fenced_blocks(path):
    """(info string, body, line number) of every fenced code block in a markdown file."""
    text = path.read_text(encoding="utf-8")
    return [
        (match["info"].strip(), match["body"], text.count("\n", 0, match.start()) + 1)
        for match in FENCE.finditer(text)
    ]


def runnable_blocks(path):
    return [(body, line) for info, body, line in fenced_blocks(path) if info == "sh test"]


# The READMEs must have such blocks; pages under docs/ may, and theirs run the same way.
TESTED_BLOCKS = [
    pytest.param(body, id=f"{path.relative_to(REPO)}:{line}")
    for path in [p for p in READMES if p.exists()] + sorted((REPO / "docs").glob("*.md"))
    for body, line in runnable_blocks(path)
]


# --- (a) the README's commands run ---------------------------------------------------------------


@pytest.fixture
def program_on_path(tmp_path):
    """A folder holding a `better-edit-tools` wrapper for this checkout (or BE_EXE)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    target = "exec " + " ".join(shlex.quote(part) for part in be_command_prefix()) + ' "$@"'
    wrapper = folder / "better-edit-tools"
    wrapper.write_text(f"#!/usr/bin/env bash\n{target}\n", encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def test_readmes_have_runnable_blocks():
    for path in READMES:
        assert runnable_blocks(path), f"{path.name} has no ```sh test block"


def test_setup_commands_come_first():
    """The two set-up commands are the first blocks under the Set up heading, word for word."""
    for path in READMES:
        text = path.read_text(encoding="utf-8")
        heading = re.search(r"^## .*Set up.*$", text, re.M)
        assert heading, f"{path.name} has no Set up heading"
        heading_line = text.count("\n", 0, heading.start()) + 1
        blocks = [body.strip() for _info, body, line in fenced_blocks(path) if line > heading_line]
        assert blocks[:2] == [
            "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]'"
            " && better-edit-tools read -f README.md -s 1 -e 5",
            "pytest",
        ]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("script", TESTED_BLOCKS)
def test_readme_block_runs(script, program_on_path, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BETTER_EDIT_", "LC_", "LANG"))}
    env.update(
        PATH=str(program_on_path) + os.pathsep + env.get("PATH", ""),
        BETTER_EDIT_CACHE_DIR=str(cache),
        BETTER_EDIT_WORKSPACE=str(work),
        LANG="C.UTF-8",
        PYTHONIOENCODING="utf-8",
        TMPDIR=str(work),  # (the README's `cd "$(mktemp -d)"` stays in the test's folder)
    )
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=str(work), env=env, capture_output=True, timeout=120
    )
    assert done.returncode == 0, (
        f"block exited {done.returncode}\n--- script\n{script}\n--- stdout\n"
        f"{done.stdout.decode(errors='replace')}\n--- stderr\n{done.stderr.decode(errors='replace')}"
    )


# --- (b) docs/mcp.md is generated from the tool table ---------------------------------------------


def _generator():
    return load_script("gen_mcp_docs")


def test_mcp_doc_is_up_to_date():
    expected = _generator().render()
    current = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert current == expected, "docs/mcp.md is out of date: run python scripts/gen_mcp_docs.py"


def test_mcp_doc_names_every_tool():
    import json

    listed = subprocess.run(
        [*module_command(), "--lang", "en", "--dump-tools", "json"],
        capture_output=True,
        check=True,
    )
    text = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    for tool in json.loads(listed.stdout):
        assert f"## `{tool['name']}`" in text


# --- (c) relative links point to files -----------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_files():
    return (
        [p for p in READMES if p.exists()]
        + sorted((REPO / "docs").glob("*.md"))
        + [p for p in (REPO / "CONTRIBUTING.md", REPO / "CHANGELOG.md") if p.exists()]
    )


def relative_links(path):
    """(file part, fragment) of every relative link outside code."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))  # links inside code blocks are examples
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in LINK.findall(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue  # http:, https:, mailto:, chip: ...
        file_part, _, fragment = target.partition("#")
        yield file_part, fragment


def anchors(path):
    """GitHub's anchors for the headings of a markdown file."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    slugs = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        candidate, n = slug, 1
        while candidate in slugs:
            candidate, n = f"{slug}-{n}", n + 1
        slugs.add(candidate)
    return slugs


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_exist(path):
    broken = []
    for file_part, fragment in relative_links(path):
        target = (path.parent / file_part) if file_part else path
        if not target.exists():
            broken.append(file_part)
        elif fragment and target.suffix == ".md" and fragment not in anchors(target):
            broken.append(f"{file_part}#{fragment}")
    assert not broken, f"{path.relative_to(REPO)}: broken links {broken}"


# --- (d) the README's install works as written, for a newcomer -------------------------------------


def _block(path, info):
    [body] = [body for found, body, _line in fenced_blocks(path) if found == info]
    return body


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_readme_install_works_in_a_clean_home(tmp_path):
    """The README's install block, run word for word in a copy of the checkout (the clone command
    before it needs the network) with an empty HOME and a PATH holding only Python and the system,
    installs a command that a new shell with ~/.local/bin on PATH finds; then every demo block of
    the README runs with that command, and none of them writes into the checkout."""
    install = _block(REPO / "README.md", "sh install")
    assert install == _block(REPO / "README.zh.md", "sh install")
    clone = [body for info, body, _line in fenced_blocks(REPO / "README.md") if "git clone" in body]
    assert clone and "cd better-edit-tools" in clone[0]
    checkout, home = tmp_path / "better-edit-tools", tmp_path / "home"
    checkout.mkdir()
    home.mkdir()
    for name in ("pyproject.toml", "better_edit.py", "README.md"):
        shutil.copy2(REPO / name, checkout / name)
    # the machine's way to reach a package index stays (pip's variables and the user's pip config:
    # mirrors, certificates, proxies); nothing else of the user's environment or HOME does
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_") or k.lower().endswith("_proxy")}
    env.update({k: os.environ[k] for k in ("SSL_CERT_FILE", "SSL_CERT_DIR") if k in os.environ})
    for config in (".config/pip/pip.conf", ".pip/pip.conf"):
        if (Path.home() / config).is_file():
            (home / config).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path.home() / config, home / config)
    python_dir = os.path.dirname(os.path.realpath(shutil.which("python3") or sys.executable))
    (tmp_path / "tmp").mkdir()
    env.update(
        HOME=str(home), PATH=f"{python_dir}:/usr/bin:/bin", LANG="C.UTF-8", TMPDIR=str(tmp_path / "tmp")
    )
    done = subprocess.run(["bash", "-e", "-c", install], cwd=str(checkout), env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stdout.strip().splitlines()[-1] == _version()
    command = home / ".local" / "bin" / "better-edit-tools"
    assert command.is_symlink() and os.access(command, os.X_OK)
    before = sorted(p.name for p in checkout.iterdir())
    env["PATH"] = f"{home / '.local' / 'bin'}:{env['PATH']}"  # what a new login shell has
    demo = "\n".join(body for body, _line in runnable_blocks(REPO / "README.md"))  # typed in one shell
    done = subprocess.run(["bash", "-e", "-c", demo], cwd=str(checkout), env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    found = subprocess.run(
        ["bash", "-c", "command -v better-edit-tools"], env=env, capture_output=True, text=True
    )
    assert found.stdout.strip() == str(command)
    assert sorted(p.name for p in checkout.iterdir()) == before, "a README example wrote into the checkout"


def _version():
    import better_edit

    return better_edit.__version__


def test_the_examples_in_the_module_docstrings_hold():
    """`>>>` examples in better_edit.py's docstrings are run, so none of them can go stale."""
    import doctest

    import better_edit

    results = doctest.testmod(better_edit, optionflags=doctest.ELLIPSIS)
    assert results.failed == 0 and results.attempted >= 4, results


def test_no_top_level_name_of_the_module_is_bound_twice():
    """Found in this project's own work: a second `_FENCE_OPEN` (a pattern for content wrapped in a
    Markdown fence) took the place of the Markdown scanner's, whose groups it lacked; every scan of
    Markdown then failed with "no such group". ruff does not report a constant bound twice."""
    import ast
    import collections

    import better_edit

    tree = ast.parse(open(better_edit.__file__, encoding="utf-8").read())
    bound = collections.Counter()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound[node.name] += 1
        targets = [t for t in [*getattr(node, "targets", []), getattr(node, "target", None)] if t]
        bound.update(name.id for t in targets for name in ast.walk(t) if isinstance(name, ast.Name))
    assert [name for name, count in bound.items() if count > 1] == []
