"""be-edit, `edit` and `patch` (issue 13): several edits as one atomic change.

Properties (hypothesis): for random files and random non-overlapping items, be-edit gives exactly
the bytes of applying the items one by one from the bottom of each file up; a patch made by
difflib.unified_diff of two random texts, applied to the first, gives the second byte for byte.
Then the rules through the CLI and the server: every failure listed, nothing written on failure,
files put back when a later write fails, one event for rollback, CRLF/LF patches, creation and
deletion by patch.
"""

import difflib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import FROZEN, Server, be_command_prefix, run_cli, run_json, scaled
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import better_edit as be

EXAMPLES = scaled(50, 1000)


def _ctx(root, cache):
    return be.Context(root=str(root), cache_dir=str(cache), mcp=True)


def call(ctx, name, **args):
    return be.call_tool(ctx, be.find_tool(name), args)


# ---- properties ------------------------------------------------------------------------------------

LINE = st.text(alphabet="ab {}\t", max_size=6)


@st.composite
def files_and_items(draw):
    """Two files, each with random lines/line endings, and random non-overlapping items on them."""
    files, items = {}, []
    for name in ("a.txt", "b.txt"):
        # two lines no item touches: one by one, a file never passes through a state without line
        # terminators, where a single edit would fall back to LF (be-edit keeps the file's own)
        lines = ["k1", "k2"] + draw(st.lists(LINE, max_size=10))
        eol = draw(st.sampled_from(["\n", "\r\n"]))
        final = draw(st.booleans())
        body = eol.join(lines) + (eol if lines and final else "")
        files[name] = body.encode()
        total = be.line_count(files[name])
        # disjoint ranges first, then insertion points outside their insides
        points = sorted(set(draw(st.lists(st.integers(3, max(total, 3)), max_size=6)))) if total > 2 else []
        taken, cursor = [], 3
        for first in points:
            if first < cursor:
                continue
            last = draw(st.integers(first, min(total, first + 2)))
            if draw(st.booleans()):
                taken.append((first, last))
                cursor = last + 1
        for first, last in taken:
            op = draw(st.sampled_from(["replace", "delete"]))
            item = {"op": op, "file": name, "start": first, "end": last}
            if op == "replace":
                item["content"] = "\n".join(draw(st.lists(LINE, max_size=3)))
            items.append(item)
        for _ in range(draw(st.integers(0, 3))):
            after = draw(st.integers(2, total))
            if any(first <= after < last for first, last in taken):
                continue
            content = "\n".join(draw(st.lists(LINE, min_size=1, max_size=2)))
            item = {"op": "insert", "file": name, "after_line": after, "content": content}
            lines = content.removesuffix("\n")  # (`a` and `a\n` insert one line: twice is refused)
            same = [i for i in items if i["op"] == "insert" and (i["file"], i["after_line"]) == (name, after)]
            if content and all(i["content"].removesuffix("\n") != lines for i in same):
                items.append(item)
    order = draw(st.permutations(range(len(items))))
    return files, [items[i] for i in order]


def _bottom_up(items):
    """The items of each file from the bottom up (inserts at one point: the later item first)."""

    def key(pair):
        index, item = pair
        position = item["after_line"] + 0.5 if item["op"] == "insert" else item["start"]
        return (item["file"], position, index)

    return [item for _index, item in sorted(enumerate(items), key=key, reverse=True)]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=files_and_items())
def test_edit_equals_items_applied_one_by_one_from_the_bottom(tmp_path_factory, case):
    files, items = case
    one, two = tmp_path_factory.mktemp("edit"), tmp_path_factory.mktemp("single")
    for root in (one, two):
        for name, data in files.items():
            (root / name).write_bytes(data)
    if items:
        call(_ctx(one, one / ".cache"), "edit", edits=items)
    single = _ctx(two, two / ".cache")
    for item in _bottom_up(items):
        args = {k: v for k, v in item.items() if k != "op"}
        call(single, item["op"], **args)
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes(), (name, files[name], items)


@pytest.mark.parametrize(
    "before, deleted", [("a\nb 405\nc", {"start": 3}), ("a\nb 405\n\nc", {"start": 3, "end": 4})]
)
def test_a_replace_by_old_above_a_deleted_last_line_keeps_the_missing_final_newline(
    tmp_path, before, deleted
):
    """Found by an attack: in a file without a final newline, an item deleting the last lines and
    an item replacing text by `old` on the line left last gave "a\nb 406\n": the replace put
    back, with its line, the newline the delete had taken. One by one they give "a\nb 406"."""
    (tmp_path / "f.txt").write_text(before)
    items = [dict(deleted, file="f.txt"), {"file": "f.txt", "old": "405", "content": "406"}]
    call(_ctx(tmp_path, tmp_path / ".cache"), "edit", edits=items)
    assert (tmp_path / "f.txt").read_bytes() == b"a\nb 406"


def _difflib_case(root, old, new):
    """f.txt holding the lines `old`; (its text, the text of `new`, difflib's patch between them)."""
    first = "".join(line + "\n" for line in old)
    second = "".join(line + "\n" for line in new)
    (root / "f.txt").write_text(first)
    patch = "".join(
        difflib.unified_diff(first.splitlines(True), second.splitlines(True), "a/f.txt", "b/f.txt")
    )
    return first, second, patch


TEXT_LINES = st.lists(st.text(alphabet="xy z", max_size=4), max_size=12)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=TEXT_LINES, new=TEXT_LINES, final_old=st.booleans(), final_new=st.booleans())
def test_a_difflib_patch_turns_the_first_text_into_the_second(
    tmp_path_factory, old, new, final_old, final_new
):
    root = tmp_path_factory.mktemp("patch")
    first, second, patch = _difflib_case(root, old, new)
    if not patch:
        return  # equal texts: nothing to apply
    call(_ctx(root, root / ".cache"), "edit", patch=patch)
    assert (root / "f.txt").read_text() == second


# ---- the rules, through the CLI and the server --------------------------------------------------------


def test_every_failing_item_is_listed_and_nothing_is_written(root, be_env):
    (root / "a.txt").write_text("1\n2\n3\n")
    (root / "b.txt").write_text("x\n")
    edits = [
        {"file": "a.txt", "start": 2, "content": "two"},
        {"file": "a.txt", "start": 1, "end": 2, "content": "overlap"},
        {"file": "missing.txt", "start": 1, "content": "q"},
        {"file": "b.txt", "start": 1, "old": "not there", "content": "y"},
        {"file": "b.txt", "colour": "red"},
    ]
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(edits).encode(), cwd=root, env=be_env
    )
    assert done.returncode in (1, 2)
    error = answer["error"]
    assert error["index"] == 1 and error["code"] == "INVALID_ARGUMENT"
    assert error["items"] == [0, 1]
    assert [(f["index"], f["code"]) for f in error["failed"]] == [
        (1, "INVALID_ARGUMENT"),
        (2, "NOT_FOUND"),
        (3, "MISMATCH"),
        (4, "INVALID_ARGUMENT"),
    ]
    assert (root / "a.txt").read_text() == "1\n2\n3\n" and (root / "b.txt").read_text() == "x\n"


def test_one_event_rolled_back_whole_or_not_at_all(root, be_env):
    (root / "a.txt").write_text("a\n")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("b\n")
    server = Server(root, be_env)
    try:
        result = server.ok(
            "be-edit",
            {
                "edits": json.dumps(
                    [
                        {"file": "sub/b.txt", "start": 1, "content": "B"},
                        {"file": "a.txt", "start": 1, "content": "A"},
                    ]
                )
            },
        )
        assert result["changed"] is True and [f["file"] for f in result["files"]] == ["a.txt", "sub/b.txt"]
        assert all(f["viewed_code_id"].startswith("v1:1-1:") for f in result["files"])
        status = server.ok("be-trx-status", {})["snapshots"]
        assert len(status) == 1 and status[0]["event_id"] == result["event_id"]
        assert sorted(status[0]["files"]) == sorted([str(root / "a.txt"), str(root / "sub" / "b.txt")])
        (root / "sub" / "b.txt").write_text("changed by someone\n")
        error = server.err("be-trx-rollback", "CONFLICT")
        assert "b.txt" in error["message"]
        assert (root / "a.txt").read_text() == "A\n"  # nothing was rolled back
        server.ok("be-trx-rollback", {"force": True})
        assert (root / "a.txt").read_text() == "a\n" and (root / "sub" / "b.txt").read_text() == "b\n"
    finally:
        server.close()


def test_a_failed_second_write_puts_the_first_file_back(root, be_env):
    """b.txt is hard-linked (written in place): a failure at each step of the commit, from keeping
    b's old and new bytes to writing it in place, leaves both files as they were; when a.txt was
    written first, it is restored before the error returns and `restored` names it."""
    edits = json.dumps(
        [{"file": "a.txt", "start": 1, "content": "A"}, {"file": "b.txt", "start": 1, "content": "B"}]
    )

    def reset():
        for name in ("a.txt", "b.txt", "b-link.txt"):
            (root / name).unlink(missing_ok=True)
        (root / "a.txt").write_text("a\n")
        (root / "b.txt").write_text("b\n")
        os.link(root / "b.txt", root / "b-link.txt")

    reset()
    done = run_cli(
        "edit",
        "--edits-file",
        "-",
        input=edits.encode(),
        cwd=root,
        env=dict(be_env, BETTER_EDIT_FAULT="count"),
    )
    steps = int(re.search(rb"fault steps: (\d+)", done.stderr).group(1))
    restored = 0
    for k in range(1, steps + 1):
        reset()
        env = dict(be_env, BETTER_EDIT_FAULT=f"{k}:EFBIG")
        done, answer = run_json("edit", "--edits-file", "-", input=edits.encode(), cwd=root, env=env)
        if done.returncode == 0:
            continue  # (past the commit point, or a step with a way around it: a snapshot's link)
        assert answer["error"]["code"] == "IO", (k, answer)
        assert (root / "a.txt").read_text() == "a\n" and (root / "b-link.txt").read_text() == "b\n", k
        restored += answer["error"].get("restored") == [str(root / "a.txt")]
    assert restored, "no failure came after a.txt was written"


def test_preview_answers_what_the_edit_would(root, be_env):
    (root / "a.txt").write_text("1\n2\n3\n4\n")
    edits = json.dumps(
        [
            {"file": "a.txt", "start": 4, "content": "four"},
            {"file": "a.txt", "after_line": 0, "content": "zero"},
        ]
    )
    _done, preview = run_json(
        "edit", "--edits-file", "-", "--preview", input=edits.encode(), cwd=root, env=be_env
    )
    assert (root / "a.txt").read_text() == "1\n2\n3\n4\n"
    _done, real = run_json("edit", "--edits-file", "-", input=edits.encode(), cwd=root, env=be_env)
    assert preview.pop("preview") is True and "event_id" not in preview
    real.pop("event_id")
    assert preview == real and real["files"][0]["viewed_code_id"]
    assert real["items"] == [
        {"index": 0, "file": "a.txt", "op": "replace", "added": 1, "removed": 1, "start": 5, "end": 5},
        {"index": 1, "file": "a.txt", "op": "insert", "added": 1, "removed": 0, "start": 1, "end": 1},
    ]
    assert (root / "a.txt").read_text() == "zero\n1\n2\n3\nfour\n"


def test_an_edit_that_changes_nothing_writes_nothing(root, be_env):
    (root / "a.txt").write_text("same\n")
    _done, result = run_json(
        "edit",
        "--edits-file",
        "-",
        input=b'[{"file": "a.txt", "start": 1, "content": "same"}]',
        cwd=root,
        env=be_env,
    )
    assert result["changed"] is False and "event_id" not in result
    assert any("already" in w for w in result["warnings"])


@pytest.mark.parametrize("file_eol, patch_eol", [("\n", "\r\n"), ("\r\n", "\n")])
def test_patch_line_endings_never_leak_in(root, be_env, file_eol, patch_eol):
    (root / "f.txt").write_bytes(f"one{file_eol}two{file_eol}three{file_eol}".encode())
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n".replace("\n", patch_eol)
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, done.stderr
    assert (root / "f.txt").read_bytes() == f"one{file_eol}TWO{file_eol}three{file_eol}".encode()
    assert "warnings" not in result


@pytest.mark.parametrize("names", [("f.txt", "b/f.txt"), ("a/f.txt", "f.txt")])
def test_patch_with_one_prefixed_name_patches_the_bare_one(root, be_env, names):
    # a model's `--- f.txt` / `+++ b/f.txt` was NOT_FOUND (b/f.txt), though both name one file
    (root / "f.txt").write_text("a\nb\nc\n")
    patch = f"--- {names[0]}\n+++ {names[1]}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, result
    assert (root / "f.txt").read_text() == "a\nB\nc\n" and not (root / "b").exists()


def test_patch_of_a_name_ending_in_a_space_patches_that_file(root, be_env):
    """Found by the patch differential test: git writes `--- a/notes \t` for the file `notes `
    (the tab marks the space as the name's); the name was stripped, and `notes` was patched."""
    (root / "notes ").write_text("one\ntwo\n")
    (root / "notes").write_text("one\ntwo\n")
    patch = (
        "diff --git a/notes  b/notes \n--- a/notes \t\n+++ b/notes \t\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, result
    assert (root / "notes ").read_text() == "one\nTWO\n" and (root / "notes").read_text() == "one\ntwo\n"


def test_patch_with_a_space_typed_before_the_stamp_patches_the_file_named(root, be_env):
    """`--- f.txt \t<stamp>` (a space before the tab) was NOT_FOUND `f.txt `; without such a file
    the name is the one without the space. A file whose name does end in a space stays its own."""
    (root / "f.txt").write_text("one\ntwo\n")
    stamp = "\t2026-12-06 10:00:00.000000000 +0000"
    patch = f"--- f.txt {stamp}\n+++ f.txt {stamp}\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, result
    assert (root / "f.txt").read_text() == "one\nTWO\n"
    (root / "f.txt ").write_text("one\ntwo\n")
    done, result = run_json("patch", input=patch.replace("TWO", "2").encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt ").read_text() == "one\n2\n", result
    assert (root / "f.txt").read_text() == "one\nTWO\n"


def test_patch_of_diff_n_deletes_and_creates_by_the_epoch_stamp(root, be_env):
    """`diff -uN` marks a file missing on one side with the epoch, not /dev/null: its deletion left
    an empty file behind (exit 0) and its creation was NOT_FOUND."""
    (root / "gone.txt").write_text("x\n")
    patch = (
        "--- a/gone.txt\t2026-12-06 02:01:22.019106671 +0000\n+++ b/gone.txt\t1970-01-01 00:00:00.000000000 +0000\n"
        "@@ -1 +0,0 @@\n-x\n"
        "--- a/new.txt\t1969-12-31 19:00:00.000000000 -0500\n+++ b/new.txt\t2026-12-06 02:01:22.0 +0000\n"
        "@@ -0,0 +1 @@\n+y\n"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, result
    assert not (root / "gone.txt").exists() and (root / "new.txt").read_text() == "y\n"


def test_patch_of_a_file_last_changed_at_the_epoch_edits_it(root, be_env):
    """The regression pass on the fix above: a file really last changed at time 0 (`touch -d @0`)
    diffed with `diff -u` was taken for a missing one: the patch deleted the other file (exit 0).
    The epoch marks a missing side only when the hunk holds no line on that side."""
    for name in ("f.txt.orig", "f.txt"):
        (root / name).write_text("one\ntwo\nthree\n")
    stamps = ("2026-12-06 03:02:44.444545576 +0000", "1970-01-01 00:00:00.000000000 +0000")
    hunk = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    patch = f"--- f.txt.orig\t{stamps[0]}\n+++ f.txt\t{stamps[1]}\n{hunk}"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt.orig").exists(), result
    assert (root / "f.txt").read_text() == "one\nTWO\nthree\n"


def test_patch_line_like_one_between_files_inside_a_hunk_is_refused_not_dropped(root, be_env):
    """The regression pass: an undercounted hunk with an RST underline `=====` (its space stripped
    by an editor) and more hunk lines after it: the rest of the hunk was dropped with exit 0."""
    source = "Title\nold\n======================\ntext\nmore\n"
    (root / "f.rst").write_text(source)
    underline = "=" * 22
    body = f" Title\n-old\n+new\n{underline}\n text\n-more\n+MORE\n"
    done, result = run_json(
        "patch", input=f"--- a/f.rst\n+++ b/f.rst\n@@ -1,2 +1,2 @@\n{body}".encode(), cwd=root, env=be_env
    )
    assert done.returncode == 2 and result["error"]["code"] == "INVALID_ARGUMENT", result
    assert (root / "f.rst").read_text() == source


def test_patch_between_files_and_epoch_stamps_take_blank_lines(root, be_env):
    """The second regression pass: `diff -ru` output whose last `Only in` line is followed by a
    blank line (a pasted patch) was refused, and a `diff -N` creation with a blank line before its
    `@@` was NOT_FOUND."""
    (root / "f.txt").write_text("x\ny\n")
    patch = "diff -ru a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\nOnly in a: zzz.txt\n\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "x\nY\n", result
    created = "--- new.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ new.txt\t2024-05-01 10:00:00 +0200\n\n@@ -0,0 +1 @@\n+one\n"
    done, result = run_json("patch", input=created.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "new.txt").read_text() == "one\n", result


def test_patch_between_real_one_letter_folders_patches_the_file_named(root, be_env):
    """The regression pass: `diff -u i/f.txt w/f.txt` of real folders `i` and `w` was read as git's
    mnemonic prefixes and patched ./f.txt; they are git's only in a `diff --git` section."""
    for name in ("i/f.txt", "w/f.txt", "f.txt"):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("l1\nl2\n")
    patch = "--- i/f.txt\t2024-01-01 00:00:00 +0000\n+++ w/f.txt\t2024-01-02 00:00:00 +0000\n@@ -1,2 +1,2 @@\n l1\n-l2\n+L2\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "w/f.txt").read_text() == "l1\nL2\n", result
    assert (root / "f.txt").read_text() == "l1\nl2\n"


def test_patch_mail_whose_message_names_mode_160000_is_applied(root, be_env):
    """The regression pass: a commit message line `index size raised from 80000 to 160000` was
    refused as a submodule."""
    (root / "f.txt").write_text("a\nb\n")
    patch = (
        "From 1a2b Mon Sep 17 00:00:00 2001\nSubject: [PATCH] bigger\n\nindex size raised from 80000 to 160000\n"
        "---\n f.txt | 2 +-\n\ndiff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n--- a/f.txt\n"
        "+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n-- \n2.43.0\n"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "a\nB\n", result


def test_patch_adding_a_submodule_is_refused_not_written_as_a_file(root, be_env):
    """A git diff of a new submodule (`new file mode 160000`, `+Subproject commit …`) was written as
    a regular file `sub` holding that line, exit 0, with a warning to chmod it."""
    patch = (
        "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..12d7a30\n--- /dev/null\n+++ b/sub\n"
        "@@ -0,0 +1 @@\n+Subproject commit 12d7a30c3e7f0b0d3f1e0a5e1b2c3d4e5f6a7b8c\n"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and result["error"]["code"] == "INVALID_ARGUMENT", result
    assert "submodule" in result["error"]["message"] and not (root / "sub").exists()


def test_patch_goes_on_past_the_lines_diff_tools_write_between_files(root, be_env):
    """`diff -ru a b` writes its command and `Only in` lines between files, Subversion `Index:` and
    `===` lines, `git format-patch` of several commits a signature and the next mail: each was
    "not a hunk line" inside hunk 1. After a hunk that holds what it counts, the patch goes on at
    the next file header; a miscounted hunk before such a line is still refused."""
    for name in ("one.txt", "two.txt"):
        (root / name).write_text("a\nb\n")
    hunk = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    between = [
        "diff -ru a/two.txt b/two.txt\nOnly in a: extra\n",
        "Index: two.txt\n===================================================================\n",
        "-- \n2.39.5\n\nFrom 1a2b Mon Sep 17 00:00:00 2001\nSubject: [PATCH 2/2] two\n\n- a list in the message\n---\n"
        " two.txt | 2 +-\n\n",
    ]
    for lines in between:
        for name in ("one.txt", "two.txt"):
            (root / name).write_text("a\nb\n")
        patch = f"--- a/one.txt\n+++ b/one.txt\n{hunk}{lines}--- a/two.txt\n+++ b/two.txt\n{hunk}"
        done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
        assert done.returncode == 0, (lines, result)
        assert (root / "one.txt").read_text() == (root / "two.txt").read_text() == "a\nB\n"
    miscounted = f"--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n{between[0]}"
    done, result = run_json("patch", input=miscounted.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and result["error"]["code"] == "INVALID_ARGUMENT", result
    # (the regression pass: Subversion's words on a binary file between two text files were "not a
    # hunk line"; the binary change cannot be applied, so the patch is refused as git's is)
    binary = "Index: logo.png\n" + "=" * 67 + "\nCannot display: file marked as a binary type.\n"
    binary += "svn:mime-type = application/octet-stream\n"
    patch = f"--- one.txt\n+++ one.txt\n{hunk}{binary}{between[1]}--- two.txt\n+++ two.txt\n{hunk}"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and "not supported: Cannot display" in result["error"]["message"], result
    assert (root / "one.txt").read_text() == "a\nB\n"  # (unchanged by this last call)


def test_patch_words_of_gits_headers_in_a_mails_message_are_text(root, be_env):
    """A commit message line `rename from the old API` (before the first `diff --git`), or
    `index 1a2b..3c4d 160000` in the second mail of a `git format-patch` series, refused the
    patch as a rename or a submodule; those words mean so only in a git section's header. A rename
    there after another file's hunks is still refused, and so is `Binary files … differ`."""
    for name in ("one.txt", "two.txt"):
        (root / name).write_text("a\nb\n")
    hunk = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    mail = "From 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b Mon Sep 17 00:00:00 2001\nSubject: [PATCH {n}/2] {n}\n\n{text}\n---\n"
    patch = (
        mail.format(n=1, text="rename from the old API")
        + f"diff --git a/one.txt b/one.txt\nindex 1111111..2222222 100644\n--- a/one.txt\n+++ b/one.txt\n{hunk}"
        + "-- \n2.39.5\n\n"
        + mail.format(n=2, text="index 1a2b..3c4d 160000")
        + f"diff --git a/two.txt b/two.txt\nindex 3333333..4444444 100644\n--- a/two.txt\n+++ b/two.txt\n{hunk}"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, result
    assert (root / "one.txt").read_text() == (root / "two.txt").read_text() == "a\nB\n"
    # (the second regression pass: an mbox mail's `From sender date` line, or headers pasted from
    # `Subject:`, start a message too; and a message ends at a line only a diff has, `index`)
    for head in ("From git@z Thu Jan  1 00:00:00 1970\nSubject: x\n", "Subject: [PATCH] x\n"):
        (root / "two.txt").write_text("a\nb\n")
        text = f"{head}\nrename from the old API\n---\ndiff --git a/two.txt b/two.txt\n--- a/two.txt\n+++ b/two.txt\n{hunk}"
        done, result = run_json("patch", input=text.encode(), cwd=root, env=be_env)
        assert done.returncode == 0 and (root / "two.txt").read_text() == "a\nB\n", result
    binary = "index 1111111..2222222 100644\nGIT binary patch\nliteral 5\nMcmZ?l\n\n"
    text = (
        mail.format(n=1, text="msg").replace("\n---\n", "\n")
        + binary
        + "--- a/one.txt\n+++ b/one.txt\n"
        + hunk
    )
    done, result = run_json("patch", input=text.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and "GIT binary patch" in result["error"]["message"], result
    rename = "similarity index 90%\nrename from one.txt\nrename to six.txt\n--- a/one.txt\n+++ b/six.txt\n"
    text = mail.format(n=1, text="msg").replace("\n---\n", "\n") + rename + hunk  # (was NOT_FOUND six.txt)
    done, result = run_json("patch", input=text.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and "rename from one.txt" in result["error"]["message"], result
    for after in (
        "diff --git a/one.txt b/six.txt\nsimilarity index 90%\nrename from one.txt\nrename to six.txt\n",
        "diff -ru a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n",
    ):
        before = f"diff --git a/two.txt b/two.txt\n--- a/two.txt\n+++ b/two.txt\n{hunk.replace('b', 'B', 1)}"
        done, result = run_json("patch", input=(before + after).encode(), cwd=root, env=be_env)
        assert done.returncode == 2 and "not supported" in result["error"]["message"], result


def test_patch_header_words_pasted_without_their_diff_git_line_are_still_refused(root, be_env):
    """The regression pass: with git's header words taken as text outside a git section, a
    `GIT binary patch` pasted from its `index` line on was dropped in silence and the text hunk
    applied; a rename became NOT_FOUND of the new name. Outside a mail's message they are refused."""
    (root / "f.txt").write_text("a\nb\nc\n")
    hunk = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    for head in (
        "index 1111111..2222222 100644\nGIT binary patch\nliteral 5\nMcmZ?l\n\nliteral 3\nKcmZ\n\n",
        "similarity index 90%\nrename from f.txt\nrename to g.txt\n",
    ):
        done, result = run_json("patch", input=(head + hunk).encode(), cwd=root, env=be_env)
        assert done.returncode == 2 and "not supported" in result["error"]["message"], result
    assert (root / "f.txt").read_text() == "a\nb\nc\n"


def test_a_line_of_a_space_after_a_hunk_that_holds_its_counts_is_its_context(root, be_env):
    """Found by the miscount property test: `@@ -1,0 +1,1 @@`, `+-- a`, ` `: the ` ` line was taken
    for a blank line after the hunk, which then inserted after line 1. A hunk's body runs to the
    next @@, file header or end of the patch: ` ` is a context line of an empty line, and the
    hunk is recounted with a warning (a blank line, with no space, still ends it). Where that
    context matches only another copy, the offset warning names the place (the regression pass)."""
    (root / "f.txt").write_text("\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,0 +1,1 @@\n+-- a\n \n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "-- a\n\n", result
    assert any("the body has 1 and 2 lines: recounted" in w for w in result["warnings"]), result
    (root / "g.txt").write_text("q\nw\na\nb\nc\nd\ne\nf\na\nb\n\n")
    patch = "--- a/g.txt\n+++ b/g.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n \n"
    done, result = run_json("patch", "--preview", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and any("offset +8" in w for w in result["warnings"]), result
    done, result = run_json("patch", input=patch.replace("+B\n \n", "+B\n\n").encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and result["error"]["code"] == "AMBIGUOUS", result  # (two copies of a, b)


def test_patch_with_gits_mnemonic_prefixes_patches_the_file(root, be_env):
    (root / "m.txt").write_text("a\nb\n")
    patch = "diff --git i/m.txt w/m.txt\n--- i/m.txt\n+++ w/m.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "m.txt").read_text() == "a\nB\n", result


def test_patch_insertion_without_context_says_its_newline_marker_was_not_applied(root, be_env):
    """`git diff -U0` adding a last line without a newline (`@@ -2,0 +3 @@`, `+c`, `\\ No newline
    at end of file`): the file keeps its newline, but no warning said so, as the -U3 hunk's did."""
    (root / "f.txt").write_text("a\nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -2,0 +3 @@\n+c\n\\ No newline at end of file\n"
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "a\nb\nc\n", result
    assert any("also changes whether the file ends with a newline" in w for w in result["warnings"]), result


def test_patch_offset_creation_deletion_and_rollback(root, be_env):
    (root / "f.txt").write_text("new first\n" + "".join(f"line {n}\n" for n in range(1, 11)))
    (root / "gone.txt").write_text("bye\n")
    patch = (
        "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"
        "diff --git a/made.txt b/made.txt\nnew file mode 100644\n--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    server = Server(root, be_env)
    try:
        result = server.ok("be-edit", {"patch": patch})
        assert any("applied at line 5 (offset +1)" in w for w in result["warnings"]), result
        assert "LINE 5\n" in (root / "f.txt").read_text()
        assert (root / "made.txt").read_text() == "hello\nworld\n"
        assert not (root / "gone.txt").exists()
        server.ok("be-trx-rollback", {})
        assert "line 5\n" in (root / "f.txt").read_text()
        assert not (root / "made.txt").exists() and (root / "gone.txt").read_text() == "bye\n"
    finally:
        server.close()


COPIED = "def f():\n    x = load()\n    return x\n"
DIFF_OF_F = "--- a/t.py\n+++ b/t.py\n@@ -9,3 +9,3 @@\n def f():\n-    x = load()\n+    x = load(fast=True)\n     return x\n"


@pytest.mark.parametrize(
    "edited, stands",
    [
        (("    x = load()\n", "    x = load(cache=1)\n"), (9, "def f():")),  # first and last stand
        (("def f():\n", "def f(y):\n"), (11, "return x")),  # only the last line stands
        (("    return x\n", "    return x or 0\n"), (9, "def f():")),  # only the first stands
    ],
    ids=["middle", "last", "first"],
)
def test_a_hunk_whose_lines_were_changed_in_place_never_applies_to_a_copy(root, be_env, edited, stands):
    """The diff was made when lines 9-11 held f; since then f was changed there, and a copy of the
    old f stands at lines 2-4. The copy is the only place the hunk matches, but an edge line of the
    hunk still stands at line 9 or 11: MISMATCH naming it, `actual` the lines at 9-11, no `closest`
    (it would be the copy), nothing written. Before, the hunk went to the copy "at offset -7"."""
    tail = "\n".join(f"x{n} = {n}" for n in range(3)) + "\n\n" + COPIED.replace(*edited) + "end = 1\n"
    text = "import os\n" + COPIED + tail
    assert text.splitlines()[8:11] == COPIED.replace(*edited).splitlines()
    (root / "t.py").write_text(text)
    done, answer = run_json("patch", input=DIFF_OF_F.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    error = answer["error"]
    assert f'its line "{stands[1]}" still stands at line {stands[0]}' in error["message"], error
    assert "the same lines at line 2 are another copy" in error["message"]
    assert error["actual"] == COPIED.replace(*edited).rstrip("\n") and error["closest"] is None
    assert (root / "t.py").read_text() == text


@pytest.mark.skipif(os.name == "nt", reason="a symbolic link to a folder")
def test_a_patch_never_joins_two_creations_of_one_file_spelled_two_ways(root, be_env):
    """Found by the patch-and-edit attack: two `--- /dev/null` hunks for one file were refused when
    both headers spelled it the same, but `b/n.py` and `b/./n.py` (or a folder and a link to it)
    made one file of both bodies, exit 0. Each is refused now, nothing written, as `git apply`."""
    (root / "real").mkdir()
    (root / "lnk").symlink_to("real")
    server = Server(root, be_env)
    try:
        for first, second, made in (("n.py", "./n.py", "n.py"), ("real/m.py", "lnk/m.py", "real/m.py")):
            patch = (
                f"--- /dev/null\n+++ b/{first}\n@@ -0,0 +1 @@\n+def one(): pass\n"
                f"--- /dev/null\n+++ b/{second}\n@@ -0,0 +1 @@\n+def two(): pass\n"
            )
            error = server.err("be-edit", "INVALID_ARGUMENT", {"patch": patch})
            assert "creates or deletes the whole file" in error["message"], error
            assert [one["index"] for one in error["failed"]] == [0, 1], error
            assert not (root / made).exists()
    finally:
        server.close()
    (root / "p.diff").write_text(
        "--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+x = 1\n--- a/./x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"
    )
    done = run_cli("patch", "--patch-file", "p.diff", cwd=root, env=be_env)
    assert done.returncode == 2 and not (root / "x.py").exists(), done.stderr


def test_a_patch_never_deletes_a_file_through_a_symbolic_link(root, be_env):
    """Found by an attack: `+++ /dev/null` for a link deleted the file it pointed to and kept the
    link, dangling; the diff named the link."""
    (root / "tgt.txt").write_text("x\n")
    (root / "link.txt").symlink_to("tgt.txt")
    patch = "--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "is a symbolic link" in answer["error"]["message"], answer
    assert (root / "tgt.txt").read_text() == "x\n" and (root / "link.txt").is_symlink()
    patch = "--- a/tgt.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and not (root / "tgt.txt").exists(), answer


def test_items_that_use_one_path_as_a_file_and_as_a_folder_are_refused(root, be_env):
    """Found by an attack: `write nd1/nd2/new.txt` with `write nd1/nd2/new.txt/x` (or a patch that
    creates `pp` and `pp/q`) failed as a CONFLICT "changed by another program"; nothing else ran."""
    edits = [
        {"file": "a/b", "op": "write", "content": "1"},
        {"file": "a/b.txt", "op": "write", "content": "2"},
        {"file": "a/b/c", "op": "write", "content": "3"},
    ]
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(edits).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "use a/b both as a file and as a folder" in answer["error"]["message"], answer
    patch = "--- /dev/null\n+++ b/pp\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/pp/q\n@@ -0,0 +1 @@\n+y\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert answer["error"]["code"] == "INVALID_ARGUMENT" and "as a folder" in answer["error"]["message"], (
        answer
    )
    assert sorted(os.listdir(root)) == []


def test_a_hunk_whose_removed_line_still_stands_never_applies_to_a_copy(root, be_env):
    """Found by an attack: the first and last lines of load_a changed since the diff, its `-` line
    (1 of the hunk's 3, under the "more than half" rule) still stands at line 3; the hunk went to
    load_b "at offset +5". A `-` line standing where the hunk says is the line the diff changes."""
    text = (
        "def load_a(path):\n    with open(path, encoding=enc) as f:\n        data = f.read()\n    return data or None\n\n"
        "def load_b(path):\n    with open(path) as f:\n        data = f.read()\n    return data\n"
    )
    patch = (
        "--- a/r.py\n+++ b/r.py\n@@ -2,3 +2,3 @@\n     with open(path) as f:\n-        data = f.read()\n"
        "+        data = f.read().strip()\n     return data\n"
    )
    error = refused_patch(root, be_env, ("r.py", text), patch, "MISMATCH")
    assert 'its line "data = f.read()" still stands at line 3' in error["message"], error
    moved = "import os\n\n\n\n\n" + text.replace("open(path, encoding=enc)", "open(path)").replace(
        " or None", ""
    )
    (root / "r.py").write_text(moved)  # (the same lines moved down by 5, nothing changed in place)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert answer["error"]["code"] == "AMBIGUOUS", answer  # (two copies now: load_a and load_b)
    (root / "r.py").write_text("import os\n\n\n\n\n" + text.split("\n\n", 1)[1])
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and "data = f.read().strip()" in (root / "r.py").read_text(), answer


def test_a_hunk_still_applies_at_an_offset_when_only_blank_lines_stand_where_it_was(root, be_env):
    """A blank context line at the stated place says nothing: the hunk moved by the lines added above."""
    (root / "t.py").write_text("a = 1\n\n\ndef f():\n    return 1\n")
    patch = "--- a/t.py\n+++ b/t.py\n@@ -2,3 +2,3 @@\n \n def f():\n-    return 1\n+    return 2\n"
    server = Server(root, be_env)
    try:
        result = server.ok("be-edit", {"patch": patch})
        assert any("applied at line 3 (offset +1)" in w for w in result["warnings"]), result
    finally:
        server.close()
    assert (root / "t.py").read_text() == "a = 1\n\n\ndef f():\n    return 2\n"


def test_a_hunk_moved_onto_a_place_whose_first_line_is_like_its_own_still_applies(root, be_env):
    """Lines added above moved the hunk by two; the line now at its stated place happens to equal
    its first line, but nothing else of it stands there: an offset, not lines changed in place."""
    text = "x = 1\nreturn_value = 0\ny = 2\nreturn_value = 0\nz = 3\nw = 4\n"
    (root / "t.py").write_text(text)
    patch = "--- a/t.py\n+++ b/t.py\n@@ -2,3 +2,3 @@\n return_value = 0\n-z = 3\n+z = 30\n w = 4\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and any("offset +2" in w for w in answer["warnings"]), answer
    assert (root / "t.py").read_text() == text.replace("z = 3\n", "z = 30\n")


def test_patch_ambiguous_and_mismatch(root, be_env):
    (root / "f.txt").write_text("x\nsame\nx\nsame\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -9,1 +9,1 @@\n-same\n+other\n"
    _done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert answer["error"]["code"] == "AMBIGUOUS"
    assert answer["error"]["candidates"] == [{"start": 2, "end": 2}, {"start": 4, "end": 4}]
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-nowhere\n+other\n"
    _done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert answer["error"]["code"] == "MISMATCH" and "closest" in answer["error"]
    assert (root / "f.txt").read_text() == "x\nsame\nx\nsame\n"


def test_a_hunk_without_context_past_the_end_is_out_of_range_not_appended(root, be_env):
    """Found by an attack: `@@ -7,0 +8 @@` on a 2-line file was appended at its end, with no word."""
    (root / "z.txt").write_text("a\nb\n")
    for stated in (3, 7, 999999999999):
        patch = f"--- a/z.txt\n+++ b/z.txt\n@@ -{stated},0 +{stated + 1} @@\n+END\n"
        done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
        assert done.returncode == 1 and answer["error"]["code"] == "OUT_OF_RANGE", answer
        assert f"after line {stated}, but z.txt has 2 lines" in answer["error"]["message"], answer
        assert (root / "z.txt").read_text() == "a\nb\n"
    done, answer = run_json(
        "patch", input=b"--- a/z.txt\n+++ b/z.txt\n@@ -2,0 +3 @@\n+END\n", cwd=root, env=be_env
    )
    assert done.returncode == 0 and (root / "z.txt").read_text() == "a\nb\nEND\n", answer


def test_an_event_of_several_files_falls_back_to_memory_with_the_cache(tmp_path, monkeypatch):
    """The cache cannot be written: the edit still happens, its one event lives in memory (with a
    warning) and rolls back whole, as a single edit's snapshot would."""
    import tempfile

    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "blocker").write_text("")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    ctx = be.Context(root=str(root), cache_dir=str(tmp_path / "blocker" / "cache"), mcp=True)
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    result = call(
        ctx,
        "edit",
        edits=[{"file": "a.txt", "start": 1, "content": "A"}, {"file": "b.txt", "start": 1, "content": "B"}],
    )
    assert any("not persisted" in w for w in result["warnings"]), result
    status = call(ctx, "trx-status")
    assert len(status["snapshots"]) == 1 and len(status["snapshots"][0]["files"]) == 2
    call(ctx, "trx-rollback")
    assert (root / "a.txt").read_text() == "a\n" and (root / "b.txt").read_text() == "b\n"


def test_patch_context_lines_keep_their_bytes_and_hunks_are_numbered_per_file(root, be_env):
    """Context lines are not rewritten (trailing spaces, their own line ending); a warning names the
    hunk by its number in its own file."""
    (root / "a.txt").write_bytes(b"x  \ny\r\nz\n")
    (root / "b.txt").write_text("one\ntwo\nthree\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n two\n-three\n+THREE\n"
    )
    done, result = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, done.stderr
    assert (root / "a.txt").read_bytes() == b"x  \nY\nz\n"  # the context line kept its trailing spaces
    assert any(w.startswith("hunk 1 of b.txt applied at line 2") for w in result["warnings"]), result


def test_deleted_text_of_an_edit_item_is_kept_as_a_chip(root, be_env):
    (root / "d.txt").write_text("keep\ngone\n")
    _done, result = run_json(
        "edit", "--edits-file", "-", input=b'[{"file": "d.txt", "start": 2}]', cwd=root, env=be_env
    )
    chip = next(w.split("chip://")[1] for w in result["warnings"] if "chip://" in w)
    server = Server(root, be_env)
    try:
        assert server.ok("be-insert-chip", {"from": f"chip://{chip}"})["text"] == "gone\n"
    finally:
        server.close()


def test_text_output_names_what_an_edit_broke(root, be_env):
    (root / "f.js").write_text("x();\n")
    done = run_cli(
        "edit",
        "--edits-file",
        "-",
        cwd=root,
        env=be_env,
        input=b'[{"file": "f.js", "start": 1, "content": "function f() {"}]',
    )
    assert done.returncode == 0 and b'f.js: edit left 1 unclosed "{"' in done.stdout, done.stdout


# ---- strict patches: no line is ever dropped (issue 21) ---------------------------------------------


# Lines of SQL, Lua or Haskell comments ("-- note") and of "++" and "--" alone: removed and added,
# they become patch lines "--- note" and "+++ x", which look like a file's header.
DASH_LINES = st.lists(
    st.sampled_from(["-- a", "-- b", "++ a", "++ b", "--", "++", "- a", "+ a", "a", ""]), max_size=12
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=DASH_LINES, new=DASH_LINES, other=st.booleans())
def test_a_patch_removing_and_adding_lines_that_start_with_dashes_applies_whole(
    tmp_path_factory, old, new, other
):
    """A hunk's counts hold its "--- x" and "+++ y" lines: they are a removed "-- x" and an added
    "++ y", not the header of a file "x" (the whole rest of the hunk was lost, with "ok"). With a
    second file's hunk after it, both files change."""
    root = tmp_path_factory.mktemp("dashes")
    first, second, patch = _difflib_case(root, old, new)
    if not patch:
        return
    if other:
        (root / "g.txt").write_text("g\n")
        patch += "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"
    call(_ctx(root, root / ".cache"), "edit", patch=patch)
    assert (root / "f.txt").read_text() == second
    assert not other or (root / "g.txt").read_text() == "G\n"


# Lines a unified diff's own syntax is made of, as a file's text
DIFF_LIKE = [
    "-- a",
    "++ b",
    "--- a",
    "+++ b",
    "-- ",
    "@@ -1 +1 @@",
    "\\ x",
    "diff --git a/f b/f",
    "a",
    "",
    "-",
    "+",
]


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
@settings(
    max_examples=scaled(30, 500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(old=["x", "-- a", "x"], new=["x", "++ b", "x"], final=True)  # (read as a header before)
@given(
    old=st.lists(st.sampled_from(DIFF_LIKE), min_size=1, max_size=10),
    new=st.lists(st.sampled_from(DIFF_LIKE), max_size=10),
    final=st.booleans(),
)
def test_git_diffs_of_text_that_looks_like_diff_syntax_apply_exactly(tmp_path_factory, old, new, final):
    """`git diff --no-index` of files whose lines look like diff syntax (headers, hunk headers,
    markers, signatures) turns the first into the second (the file keeps its final-newline state)."""
    base = tmp_path_factory.mktemp("gitdiff")
    first = "\n".join(old) + "\n" * final
    second = "".join(line + "\n" for line in new) if final else "\n".join(new)
    assume(first and first.endswith("\n") == final and second.endswith("\n") in (final, not new))  # (alike)
    for side, text in (("a", first), ("b", second)):
        (base / side).mkdir()
        (base / side / "f.txt").write_text(text)
    done = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "a/f.txt", "b/f.txt"],
        cwd=base,
        capture_output=True,
        text=True,
    )
    patch = done.stdout.replace(" a/a/f.txt", " a/f.txt").replace(" b/b/f.txt", " b/f.txt")
    if not patch:
        return
    root = base / "root"
    root.mkdir()
    (root / "f.txt").write_text(first)
    call(_ctx(root, base / "cache"), "edit", patch=patch)
    assert (root / "f.txt").read_text() == second, patch


def test_the_diff_of_a_file_whose_name_holds_a_newline_is_a_patch_that_names_it(root, be_env):
    """The diff header of `n<newline>l "q".txt` was two lines (`--- a/n`, `l "q".txt`): no patch
    tool could read it back. Names with control characters, quotes or backslashes are quoted as
    git quotes them, and `patch` takes the result back."""
    name = 'n\nl "q".txt'
    (root / name).write_text("a\n")
    done, answer = run_json("replace", "-f", name, "-s", "1", "-c", "b", cwd=root, env=be_env)
    assert done.returncode == 0, answer
    diff = answer["diff"]
    assert diff.split("\n")[:2] == ['--- "a/n\\nl \\"q\\".txt"', '+++ "b/n\\nl \\"q\\".txt"'], diff
    (root / name).write_text("a\n")
    done, answer = run_json("patch", input=(diff + "\n").encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / name).read_text() == "b\n", answer


def test_a_diff_of_sql_comments_applies_through_the_cli(root, be_env):
    """`diff -u` of a SQL file whose comment "-- a" became "++ b": the hunk's middle lines read
    "--- a" and "+++ b". They were taken for a file header: status ok, "the files already hold
    this text", nothing written."""
    (root / "q.sql").write_text("select 1;\n-- a\nselect 2;\n")
    patch = "--- q.sql\n+++ q.sql\n@@ -1,3 +1,3 @@\n select 1;\n--- a\n+++ b\n select 2;\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "q.sql").read_text() == "select 1;\n++ b\nselect 2;\n"
    assert "warnings" not in answer and answer["changed"] is True
    # a header counting one line too many on each side, before the next file's header: that pair
    # names files as headers do (a/ and b/), so it stays a header and the hunk is recounted
    (root / "g.txt").write_text("g\n")
    patch = (
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n select 1;\n"
        "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"
    )
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "g.txt").read_text() == "G\n", answer
    assert any("recounted" in warning for warning in answer["warnings"]), answer


def test_a_miscounted_hunk_before_a_pair_naming_its_own_file_again_is_refused(root, be_env):
    """A hunk counting more lines than it holds, then `--- a/f.txt` `+++ b/f.txt` (a removed
    "-- a/f.txt" and an added "++ b/f.txt", or a second header of f.txt?): the pair was taken for
    a header and the change it made was dropped with only a "recounted" warning."""
    before = "one\n-- a/f.txt\ntwo\nthree\nfour\n"
    (root / "f.txt").write_text(before)
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n one\n--- a/f.txt\n+++ b/f.txt\n@@ -4 +4 @@\n-four\n+FOUR\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert answer["error"]["message"] == (
        "hunk 1 of f.txt miscounts its lines and ends at line 5 of the patch, a ---/+++ pair naming "
        "f.txt again: a removed and an added line of the hunk, or a second header?"
    ), answer
    assert "@@ counts" in answer["error"]["hint"], answer
    assert (root / "f.txt").read_text() == before
    # with counts that hold the pair and a context line after it, it is the hunk's removed and
    # added lines
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n--- a/f.txt\n+++ b/f.txt\n two\n"
    patch += "@@ -5 +5 @@\n-four\n+FOUR\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and "warnings" not in answer, answer
    assert (root / "f.txt").read_text() == "one\n++ b/f.txt\ntwo\nthree\nFOUR\n"


def test_a_patch_sent_twice_never_changes_another_copy(root, be_env):
    """Found by an attack: a patch applied a second time matched nowhere at its stated line, so its
    old lines went to another copy ("applied at line 2 (offset -3)"): both objects then said 5.
    When the hunk's new lines stand at its stated place it is MISMATCH, nothing written."""
    before = '[\n  {\n    "retries": 3\n  },\n  {\n    "retries": 3\n  },\n  {\n    "retries": 1\n  }\n]\n'
    (root / "s.json").write_text(before)
    patch = '--- a/s.json\n+++ b/s.json\n@@ -5,3 +5,3 @@\n   {\n-    "retries": 3\n+    "retries": 5\n   },\n'
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    after = (root / "s.json").read_text()
    assert after == before.replace('3\n  },\n  {\n    "retries": 1', '5\n  },\n  {\n    "retries": 1')
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    assert "its new lines stand at line 5 already: the patch looks applied" in answer["error"]["message"]
    assert (root / "s.json").read_text() == after
    (root / "c.ini").write_text("a = 1\ntimeout = 10\nb = 2\ntimeout = 30\n")  # (no context at all)
    patch = "--- a/c.ini\n+++ b/c.ini\n@@ -4 +4 @@\n-timeout = 10\n+timeout = 30\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    assert (root / "c.ini").read_text() == "a = 1\ntimeout = 10\nb = 2\ntimeout = 30\n"


def test_an_append_after_its_context_sent_twice_is_refused(root, be_env):
    """Found by an attack (39 of 333 patches sent twice): a hunk that only adds lines after its
    context still matched at its stated line after it was applied, so a second run added them
    again (`-- end` twice). Its added lines standing right after its context already: MISMATCH."""
    (root / "e.sql").write_text("SELECT 1;\nSELECT 2;\nSELECT 3;\n")
    patch = "--- a/e.sql\n+++ b/e.sql\n@@ -1,3 +1,4 @@\n SELECT 1;\n SELECT 2;\n SELECT 3;\n+-- end\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    after = (root / "e.sql").read_text()
    assert after == "SELECT 1;\nSELECT 2;\nSELECT 3;\n-- end\n"
    error = refused_patch(root, be_env, ("e.sql", after), patch, "MISMATCH")
    assert "applying it again would add them twice" in error["message"], error
    # (and after a last line without a newline, which git's diff removes and adds back with one)
    (root / "f").write_text("a\nb\nc")
    patch = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n+d\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    refused_patch(root, be_env, ("f", (root / "f").read_text()), patch, "MISMATCH")


def test_the_same_insert_item_twice_is_refused_as_a_repeated_hunk_is(root, be_env):
    """Found by an attack: two identical insert items in one edit (a retry, a copy) inserted the
    lines twice with status ok, where the same two hunks of a patch are refused. Refused the same
    way now; inserts of other lines, or at another place, still land in item order."""
    (root / "a.py").write_text("import os\nx = 1\n")
    item = {"file": "a.py", "after_line": 1, "content": "import sys"}
    again = dict(item, content="import sys\n")  # (one line, as `import sys` is)
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps([item, again]).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "items 0 and 1 (a.py) insert the same lines at the same place" in answer["error"]["message"], (
        answer
    )
    assert (root / "a.py").read_text() == "import os\nx = 1\n"
    items = [item, dict(item, content="import re"), dict(item, after_line=2)]
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(items).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 0, answer
    assert (root / "a.py").read_text() == "import os\nimport sys\nimport re\nx = 1\nimport sys\n"


def test_a_hunk_adding_one_more_copy_of_the_lines_after_it_says_it_may_be_applied_and_force_adds_it(
    root, be_env
):
    """Found by an attack: a hunk adding a third `"slow",` to a list that holds it twice was refused
    as applied, with the hint "it already holds this change", which is false, and --force did not
    get past it (git apply adds it). The file cannot tell the two apart: the refusal now says the
    patch may be applied, and --force adds the line."""
    before = 'retries = [\n    "fast",\n    "slow",\n    "slow",\n]\n'
    (root / "conf.py").write_text(before)
    patch = '--- a/conf.py\n+++ b/conf.py\n@@ -2,2 +2,3 @@\n     "fast",\n+    "slow",\n     "slow",\n'
    error = refused_patch(root, be_env, ("conf.py", before), patch, "MISMATCH")
    assert "may be applied already" in error["message"] and "run it again with --force" in error["hint"], (
        error
    )
    done, answer = run_json("patch", "--force", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "conf.py").read_text() == before.replace('"slow",\n', '"slow",\n    "slow",\n', 1)


def test_a_crlf_patch_of_a_crlf_file_saved_with_crlf_writes_no_stray_cr(root, be_env):
    """Found by an attack: git's diff of a CRLF file, saved with CRLF line endings, ends each line
    with \r\r: one \r was cut, the other matched as trailing whitespace, and `+inserted\r` wrote
    "inserted\r\r\n" into the file, with status ok."""
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    patch = (
        b"--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,3 +1,4 @@\r\n one\r\r\n two\r\r\n+inserted\r\r\n three\r\r\n"
    )
    done, answer = run_json("patch", input=patch, cwd=root, env=be_env)
    assert done.returncode == 0 and "warnings" not in answer, answer
    assert (root / "w.txt").read_bytes() == b"one\r\ntwo\r\ninserted\r\nthree\r\n"


def test_a_file_created_by_a_diff_of_a_crlf_file_keeps_crlf(root, be_env):
    """Found by trying it: `git diff` of a new CRLF file (`+a\r`), applied, made an LF file where
    `git apply` keeps CRLF. A diff saved with CRLF (its own header lines end with \r) adds one \r
    of its own to every line: a new LF file stays LF, a new CRLF file stays CRLF."""
    cases = {
        "lf_diff_crlf_file": (b"\n", b"\r\n", b"a\r\nb\r\n"),
        "crlf_diff_crlf_file": (b"\r\n", b"\r\r\n", b"a\r\nb\r\n"),
        "crlf_diff_lf_file": (b"\r\n", b"\r\n", b"a\nb\n"),
    }
    # (found by the regression pass: a CRLF file without a final newline; its last line has no \r)
    nl = b"--- /dev/null\n+++ b/no_final\n@@ -0,0 +1,2 @@\n+a\r\n+b\n\\ No newline at end of file\n"
    done, answer = run_json("patch", input=nl, cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "no_final").read_bytes() == b"a\r\nb", answer
    for name, (header_eol, line_eol, expected) in cases.items():
        patch = header_eol.join([b"--- /dev/null", b"+++ b/" + name.encode(), b"@@ -0,0 +1,2 @@", b""])
        patch += b"+a" + line_eol + b"+b" + line_eol
        done, answer = run_json("patch", input=patch, cwd=root, env=be_env)
        assert done.returncode == 0, answer
        assert (root / name).read_bytes() == expected, name


def test_a_git_header_without_a_hunk_before_other_names_is_refused(root, be_env):
    """Found by an attack: `diff --git` deleting an empty file, then ---/+++ of another file: the
    other file's hunk was counted as the git header's, so the deletion was dropped in silence."""
    (root / "y.txt").write_text("a\nb\n")
    (root / "old_empty.txt").write_text("")
    patch = (
        "diff --git a/old_empty.txt b/old_empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"
        "--- a/y.txt\n+++ b/y.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    )
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert answer["error"]["message"] == (
        "the ---/+++ header at line 4 of the patch names y.txt, but the diff --git header before it names "
        "old_empty.txt"
    )
    assert (root / "y.txt").read_text() == "a\nb\n" and (root / "old_empty.txt").exists()


def test_a_patch_never_writes_through_a_link_to_a_folder_outside(root, be_env, tmp_path):
    """Found by an attack: without --root a patch path was checked as text only (absolute, `..`),
    so `docs/conf.txt`, with docs a link to a folder outside, was changed, and `docs/new.txt`
    created there. Both are SANDBOX, as git apply refuses a path beyond a link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "conf.txt").write_text("secret=1\n")
    (root / "docs").symlink_to(outside)
    for patch in (
        "--- a/docs/conf.txt\n+++ b/docs/conf.txt\n@@ -1 +1 @@\n-secret=1\n+secret=2\n",
        "--- /dev/null\n+++ b/docs/new.txt\n@@ -0,0 +1 @@\n+planted\n",
    ):
        done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
        assert done.returncode == 1 and answer["error"]["code"] == "SANDBOX", answer
    assert sorted(p.name for p in outside.iterdir()) == ["conf.txt"]
    assert (outside / "conf.txt").read_text() == "secret=1\n"


def test_a_removed_dash_space_line_before_more_hunk_lines_is_no_signature(root, be_env):
    """Found by an attack: a hunk whose counts already held, then `-- ` (a removed "- ", an empty
    Markdown item) and `+- a`: the `-- ` was taken for git format-patch's signature and what
    followed dropped, so the patch said "the files already hold this text". A signature is
    followed by a version line, not a hunk line: this is a miscounted hunk, recounted."""
    (root / "list.md").write_text("# List\n- \n- b\n")
    patch = "--- a/list.md\n+++ b/list.md\n@@ -1 +1 @@\n # List\n-- \n+- a\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and any("recounted" in w for w in answer["warnings"]), answer
    assert (root / "list.md").read_text() == "# List\n- a\n- b\n"
    (root / "list.md").write_text("# List\n- \n- b\n")  # (git format-patch's own signature still ends it)
    signed = patch.replace("-1 +1", "-1,2 +1,2") + "-- \n2.43.0\n\n"
    done, answer = run_json("patch", input=signed.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and "warnings" not in answer, answer
    assert (root / "list.md").read_text() == "# List\n- a\n- b\n"


def test_a_hunk_counting_old_lines_but_holding_only_added_ones_is_refused(root, be_env):
    """Found by an attack: `@@ -1,1 +1,1 @@` then only `+` lines was inserted after line 1 with a
    "recounted" warning: the header says lines stand there, the body gives none to find them by."""
    (root / "f.txt").write_text("a\nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n+x\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "counts 1 line of old text but holds only + lines" in answer["error"]["message"], answer
    assert (root / "f.txt").read_text() == "a\nb\n"


def test_a_deletion_matched_only_without_trailing_whitespace_says_so(root, be_env):
    """Found by an attack: `+++ /dev/null` deleted a file that differed from the hunk in trailing
    whitespace without the warning every other loose match gives."""
    (root / "d.txt").write_text("keep  \nthis\t\n")
    patch = "--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-keep\n-this\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and not (root / "d.txt").exists(), answer
    assert "hunk 1 of d.txt matched only when trailing whitespace is ignored" in answer["warnings"], answer


def test_an_added_comment_above_a_context_line_does_not_excuse_a_placeholder_below_it(root, be_env):
    """Found by an attack: the guard read a hunk's added lines as if they stood together, so
    `+// Sum the values` (above the function's first line, a context line) was the prose comment
    that `+  // ...` below belonged to: the loop it stood for was deleted, status ok."""
    before = "function total(xs) {\n  let s = 0;\n  for (const x of xs) s += x;\n  return s;\n}\n"
    patch = (
        "--- a/p.js\n+++ b/p.js\n@@ -1,5 +1,5 @@\n+// Sum the values\n function total(xs) {\n"
        "-  let s = 0;\n-  for (const x of xs) s += x;\n+  // ...\n   return s;\n }\n"
    )
    refused_patch(root, be_env, ("p.js", before), patch, "PLACEHOLDER")


def refused_patch(root, env, file, patch, code, status=1):
    """Write `file` (name, text), apply `patch` through the CLI: it must fail with `code` (exit
    `status`) and leave the file as it was. Returns the error."""
    name, before = file
    (root / name).write_text(before)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=env)
    assert done.returncode == status and answer["error"]["code"] == code, answer
    assert (root / name).read_text() == before
    return answer["error"]


def test_lines_after_a_file_header_that_no_hunk_holds_are_refused(root, be_env):
    """A file header must be followed by a hunk: hunk lines without one were skipped in silence."""
    (root / "f.txt").write_text("a\nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n a\n-b\n+B\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert answer["error"]["message"] == (
        "no @@ line follows the header of f.txt (line 1 of the patch): line 3 is ' a'"
    ), answer
    assert "@@ -START,COUNT +START,COUNT @@" in answer["error"]["hint"], answer
    assert (root / "f.txt").read_text() == "a\nb\n"
    for patch, said in (
        ("--- a/f.txt\n+++ b/f.txt\n", "the patch ends there"),
        (
            "--- a/f.txt\n+++ b/f.txt\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n",
            "line 3 is '--- a/g.txt'",
        ),
        ("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n@@ -1 +1 @@\n-a\n+A\n", "hunk 1 of f.txt holds no line"),
    ):
        done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
        assert done.returncode == 2 and said in answer["error"]["message"], (patch, answer)
        assert (root / "f.txt").read_text() == "a\nb\n"


def test_a_file_the_patch_creates_or_deletes_takes_one_hunk(root, be_env):
    """Two hunks creating n.txt (two versions of a new file) were joined into one file, "ok"."""
    twice = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+y\n"
    (root / "f.txt").write_text("a\nb\n")
    gone_and_changed = (
        "--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-b\n+B\n"
    )
    for patch in (twice, gone_and_changed):
        done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
        assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
        assert "hunk 1 of " in answer["error"]["message"] and "has 2 hunks" in answer["error"]["message"]
        assert answer["error"]["hint"].endswith("send the file with write"), answer  # (the CLI's words)
    assert not (root / "n.txt").exists() and (root / "f.txt").read_text() == "a\nb\n"


def _miscount(patch, rng):
    """The patch with every hunk header's counts moved by -2..+2 (never below 0)."""
    out = []
    for line in patch.split("\n"):
        match = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if match:
            counts = [int(match.group(n)) if match.group(n) is not None else 1 for n in (2, 4)]
            old, new = (max(0, count + rng.choice((-2, -1, 1, 2))) for count in counts)
            line = f"@@ -{match.group(1)},{old} +{match.group(3)},{new} @@"
        out.append(line)
    return "\n".join(out)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.sampled_from([TEXT_LINES, DASH_LINES]).flatmap(lambda lines: st.tuples(lines, lines)),
    seed=st.integers(0, 1 << 16),
)
def test_a_miscounted_difflib_patch_still_turns_the_first_text_into_the_second_or_is_refused(
    tmp_path_factory, lines, seed
):
    import random

    old, new = lines
    root = tmp_path_factory.mktemp("miscount")
    first, second, patch = _difflib_case(root, old, new)
    if not patch:
        return
    try:
        call(_ctx(root, root / ".cache"), "edit", patch=_miscount(patch, random.Random(seed)))
    except be.ToolError:
        assert (root / "f.txt").read_text() == first  # refused: nothing written
        return
    assert (root / "f.txt").read_text() == second  # never a partial result


def test_a_hunk_whose_header_miscounts_its_body_is_recounted_with_a_warning(root, be_env):
    (root / "f.txt").write_text("a\nb\nc\nd\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n-b\n-c\n+A\n+B\n+C\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.txt").read_text() == "A\nB\nC\nd\n"
    assert any(
        "the header counts -1,2 +1,2, the body has 3 and 3 lines: recounted" in w for w in answer["warnings"]
    )


def test_a_stray_line_inside_a_hunk_is_refused_naming_it(root, be_env):
    (root / "f.txt").write_text("a\nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\nThis fixes the bug.\n+B\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "line 6" in answer["error"]["message"] and "This fixes the bug." in answer["error"]["message"]
    assert "every line of a hunk starts with ' ' (context)" in answer["error"]["hint"], answer
    assert (root / "f.txt").read_text() == "a\nb\n"


def _git(root, *args):
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_git_diff_creating_and_deleting_empty_files_applies_whole(tmp_path, be_env):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "gone.txt").write_text("")
    (repo / "x.txt").write_text("one\ntwo\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (repo / "gone.txt").unlink()
    (repo / "empty.txt").write_text("")
    (repo / "x.txt").write_text("one\nTWO\n")
    _git(repo, "add", "-A")
    patch = _git(repo, "diff", "--cached", "--no-renames")  # (two empty files look like a rename)
    _git(repo, "reset", "-q", "--hard")
    (repo / "empty.txt").unlink(missing_ok=True)
    done, answer = run_json("patch", input=patch.encode(), cwd=repo, env=be_env)
    assert done.returncode == 0, answer
    assert (repo / "empty.txt").read_bytes() == b"" and not (repo / "gone.txt").exists()
    assert (repo / "x.txt").read_text() == "one\nTWO\n"
    only_creation = "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
    done, answer = run_json("patch", input=only_creation.encode(), cwd=repo, env=be_env)
    assert done.returncode == 0 and (repo / "new.txt").read_bytes() == b"", answer


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_a_mode_change_in_a_git_diff_is_said_not_applied(tmp_path, be_env):
    """`git diff` of a file made executable and edited: the text applies, and the result says the
    mode is not (before, nothing said so); a new executable file likewise."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "run.sh").write_text("echo one\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (repo / "run.sh").write_text("echo two\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "new.sh").write_text("echo new\n")
    (repo / "new.sh").chmod(0o755)
    _git(repo, "add", "-A")
    patch = _git(repo, "diff", "--cached")
    _git(repo, "reset", "-q", "--hard")
    (repo / "new.sh").unlink(missing_ok=True)
    (repo / "run.sh").chmod(0o644)
    done, answer = run_json("patch", input=patch.encode(), cwd=repo, env=be_env)
    assert done.returncode == 0, answer
    assert (repo / "run.sh").read_text() == "echo two\n" and (repo / "new.sh").read_text() == "echo new\n"
    said = [w for w in answer["warnings"] if "sets mode 100755, which is not applied" in w]
    assert sorted(w.split(":")[0] for w in said) == ["new.sh", "run.sh"], answer


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_git_diff_of_a_bom_file_touching_line_one_applies(tmp_path, be_env):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "b.txt").write_bytes(b"\xef\xbb\xbfone\ntwo\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (repo / "b.txt").write_bytes(b"\xef\xbb\xbfONE\ntwo\n")
    patch = _git(repo, "diff")
    _git(repo, "checkout", "-q", "b.txt")
    done, answer = run_json("patch", input=patch.encode(), cwd=repo, env=be_env)
    assert done.returncode == 0, answer
    assert (repo / "b.txt").read_bytes() == b"\xef\xbb\xbfONE\ntwo\n"


def test_a_hunk_whose_line_carries_the_bom_applies_at_line_one_or_nowhere(root, be_env):
    """Found by a differential fuzzer: git shows a file's BOM at the start of its first line. A
    file of its BOM alone (no line at all) refused git's valid patch `-BOM` / `+a`; and a hunk
    whose context line `BOM x` had lost its neighbour was cut to `x` and applied at line 2, a
    plain `x`, with success."""
    bom = b"\xef\xbb\xbf"
    (root / "f.txt").write_bytes(bom)
    patch = b"--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-" + bom + b"\n\\ No newline at end of file\n+a\n"
    done, answer = run_json("patch", input=patch, cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.txt").read_bytes() == bom + b"a\n"
    (root / "g.txt").write_bytes(bom + b"x\nx\ny\n")
    patch = b"--- a/g.txt\n+++ b/g.txt\n@@ -1,2 +1,3 @@\n+new\n " + bom + b"x\n y\n"
    done, answer = run_json("patch", input=patch, cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    assert (root / "g.txt").read_bytes() == bom + b"x\nx\ny\n"
    patch = b"--- a/g.txt\n+++ b/g.txt\n@@ -1,2 +1,3 @@\n+new\n " + bom + b"x\n x\n"
    done, answer = run_json("patch", input=patch, cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "g.txt").read_bytes() == bom + b"new\nx\nx\ny\n", answer


def test_a_hunk_at_its_stated_place_but_for_trailing_spaces_is_not_sent_to_a_copy(root, be_env):
    """Found by an attack: a hunk whose lines stand at its stated line but for trailing spaces, with
    an exact copy further down, was refused as "changed in place, the copy is another one"; without
    the copy it applied with the whitespace warning. The stated place now wins in both cases."""
    (root / "f.txt").write_text("x  \ny\nz\nq\nx\ny\nz\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert any("trailing whitespace" in w for w in answer["warnings"]), answer
    assert (root / "f.txt").read_text() == "x  \nY\nz\nq\nx\ny\nz\n"


def test_force_reaches_a_hunk_without_context(root, be_env):
    (root / "f.js").write_text("a();\nb();\nc();\n")
    patch = "--- a/f.js\n+++ b/f.js\n@@ -3,0 +4,1 @@\n+// ... rest unchanged ...\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "PLACEHOLDER", answer
    done, answer = run_json("patch", "--force", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.js").read_text() == "a();\nb();\nc();\n// ... rest unchanged ...\n"


@pytest.mark.parametrize("target", ["../outside.txt", "/tmp/be-outside-{pid}.txt"])
def test_cli_patch_paths_leaving_the_folder_are_refused(root, be_env, target):
    target = target.format(pid=os.getpid())
    header = (
        f"--- /dev/null\n+++ b/{target}\n" if not target.startswith("/") else f"--- /dev/null\n+++ {target}\n"
    )
    patch = header + "@@ -0,0 +1,1 @@\n+escaped\n"
    outside = (root / target).resolve() if not target.startswith("/") else Path(target)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "SANDBOX", answer
    assert not outside.exists()
    done, answer = run_json("patch", "--unsafe-paths", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert outside.read_text() == "escaped\n"
    outside.unlink()


def test_a_final_newline_only_patch_says_what_it_did(root, be_env):
    (root / "f.txt").write_text("a\nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert any("changes only whether the file ends with a newline" in w for w in answer["warnings"])
    assert not any("this text: nothing was written" in w for w in answer["warnings"])
    assert (root / "f.txt").read_text() == "a\nb\n"


# ---- contract details (issue 21) --------------------------------------------------------------------


def test_items_of_one_file_naming_different_encodings_are_refused(root, be_env):
    (root / "f.txt").write_text("a\nb\n")
    edits = [
        {"file": "f.txt", "start": 1, "content": "A", "encoding": "utf-8"},
        {"file": "f.txt", "start": 2, "content": "B", "encoding": "latin-1"},
    ]
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(edits).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
    assert "different encodings" in answer["error"]["message"]
    assert sorted(f["index"] for f in answer["error"]["failed"]) == [0, 1]
    same = [dict(edits[0], encoding="UTF8"), dict(edits[1], encoding="utf-8")]  # one codec, two spellings
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(same).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 0, answer


def test_a_patch_and_items_of_a_file_in_a_legacy_encoding_take_the_calls_encoding(root, be_env):
    """A latin-1 file could not be patched at all: the ENCODING error's hint said `--encoding`, which
    `patch --help` listed, and the call then failed with "unknown argument 'encoding'" (be-edit had
    no such argument either). The call's `encoding` is now the encoding of every file whose items
    name none; an item's own `encoding` still decides for its file."""
    (root / "l.txt").write_bytes("café\nb\n".encode("latin-1"))
    patch = "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n café\n-b\n+bé\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "ENCODING", answer
    assert "--encoding" in answer["error"]["hint"]
    done, answer = run_json("patch", "--encoding", "latin-1", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "l.txt").read_bytes() == "café\nbé\n".encode("latin-1")
    (root / "u.txt").write_text("ü\n")
    edits = [
        {"file": "l.txt", "start": 2, "content": "b"},
        {"file": "u.txt", "start": 1, "content": "ä", "encoding": "utf-8"},
    ]
    flags = ("--edits-file", "-", "--encoding", "cp1252")  # (u.txt's item names its own)
    done, answer = run_json("edit", *flags, input=json.dumps(edits).encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "l.txt").read_bytes() == "café\nb\n".encode("latin-1")
    assert (root / "u.txt").read_bytes() == "ä\n".encode()
    server = Server(root, be_env)
    try:
        server.initialize()
        result, error = server.call("be-edit", {"patch": patch.replace("bé", "BÉ"), "encoding": "latin-1"})
    finally:
        server.close()
    assert error is None and result["changed"] is True, error
    assert (root / "l.txt").read_bytes() == "café\nBÉ\n".encode("latin-1")


def test_the_overlap_message_names_each_item_as_given(root, be_env):
    (root / "f.txt").write_text("a\nb\nc\n")
    edits = [
        {"file": "f.txt", "start": 1, "end": 2, "content": "x"},
        {"file": "./f.txt", "start": 2, "content": "y"},
    ]
    done, answer = run_json(
        "edit", "--edits-file", "-", input=json.dumps(edits).encode(), cwd=root, env=be_env
    )
    assert done.returncode == 2, answer
    assert "items 0 (f.txt) and 1 (./f.txt) touch overlapping lines" in answer["error"]["message"], answer
    # a patch's hunks are named by their numbers, from 1, as its other messages name them
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+one\n b\n@@ -2,2 +2,2 @@\n-b\n+two\n c\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert (
        done.returncode == 2
        and "hunks 1 and 2 of f.txt touch overlapping lines" in answer["error"]["message"]
    )
    assert (root / "f.txt").read_text() == "a\nb\nc\n"


def test_old_empty_with_start_matches_an_empty_line(root, be_env):
    (root / "f.txt").write_text("a\n\nc\n")
    done, answer = run_json("replace", "-f", "f.txt", "-s", "2", "--old", "", "-c", "m", cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.txt").read_text() == "a\nm\nc\n"
    done, answer = run_json("replace", "-f", "f.txt", "-s", "1", "--old", "", "-c", "m", cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH"
    done, answer = run_json("replace", "-f", "f.txt", "--old", "", "-c", "m", cwd=root, env=be_env)
    assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT"


def test_similarity_is_one_only_for_an_identical_block():
    found = be.closest_block(["a" * 300 + "b", "next"], ["a" * 300 + "c"])
    assert found is not None and found["similarity"] == 0.99
    assert be.closest_block(["same line", "next"], ["same line"])["similarity"] == 1.0


@pytest.mark.skipif(os.name == "nt", reason="SIGSTOP")
@pytest.mark.skipif(FROZEN, reason="SIGSTOP reaches the frozen program's child, not the process we wait on")
def test_a_file_removed_during_a_call_is_a_conflict(root, be_env):
    """Another program removes the file between the read and the write (the CLI stopped by
    BETTER_EDIT_FAULT=journal:STOP right before the commit prepares it): CONFLICT, not an I/O
    error, and nothing is created."""
    import signal

    (root / "f.txt").write_text("a\nb\n")
    proc = subprocess.Popen(
        [*be_command_prefix(), "replace", "-f", "f.txt", "-s", "1", "-c", "A", "-o", "json"],
        cwd=root,
        env=dict(be_env, BETTER_EDIT_FAULT="journal:STOP"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), f"ended with status {status}: {proc.stderr.read().decode()}"
        os.unlink(root / "f.txt")
    finally:
        proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and json.loads(out)["error"]["code"] == "CONFLICT", err
    assert os.listdir(root) == []


def test_dev_null_headers_get_their_own_messages(root, be_env):
    patch = "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 2 and "/dev/null on both sides" in answer["error"]["message"], answer
    (root / "del.txt").write_text("y\n")
    patch = "--- a/del.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    assert "deletes del.txt (+++ /dev/null), but the lines it removes" in answer["error"]["message"]
    assert (root / "del.txt").read_text() == "y\n"


def test_a_second_section_of_a_file_whose_lines_the_first_adds_is_not_moved(root, be_env):
    """Found by an attack: `git diff A B; git diff B C` in one patch names f.py in two sections.
    The second changed `"b": 2` in the block the first one added (at its line 4), but was read
    against the file as it is: its lines stood at line 9 (another block), and it was applied
    there with an offset warning, where git applies the sections one after the other. Such a hunk
    is AMBIGUOUS when it would move and the earlier section adds lines like its own."""
    text = (
        'header\n\nx1 = 1\nx2 = 2\nx3 = 3\nx4 = 4\n\nconfig = {\n    "a": 1,\n    "b": 2,\n    "c": 3,\n}\n'
    )
    first = (
        "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,9 @@\n header\n \n+defaults = {\n"
        '+    "a": 1,\n+    "b": 2,\n+    "c": 3,\n+}\n+\n x1 = 1\n'
    )
    second = '--- a/f.py\n+++ b/f.py\n@@ -4,3 +4,3 @@ defaults = {\n     "a": 1,\n-    "b": 2,\n+    "b": 20,\n     "c": 3,\n'
    error = refused_patch(root, be_env, ("f.py", text), first + second, "AMBIGUOUS")
    assert "second ---/+++ section" in error["message"], error
    # (hunks of one file under headers of their own, whose lines the first one does not add, still move)
    plain = "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,4 @@\n header\n \n+defaults = {}\n x1 = 1\n"
    (root / "f.py").write_text(text)
    done, answer = run_json("patch", input=(plain + second).encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and "offset" in answer["warnings"][0], answer
    assert (root / "f.py").read_text() == text.replace('"b": 2', '"b": 20').replace(
        "x1 = 1", "defaults = {}\nx1 = 1"
    )


def test_every_read_only_file_of_an_edit_is_named_with_its_items(root, be_env):
    """Found by the patch-and-edit attack: an edit of a.txt, b.txt and c.txt, the last two
    read-only, was PERMISSION for b.txt alone, with no `index` and no `failed`; the retry after
    fixing b.txt failed on c.txt. Each such file's items are named now, nothing written, as
    docs/cli.md's all-or-nothing says ("so one retry can fix them all")."""
    for name in "abc":
        (root / f"{name}.txt").write_text("l1\n")
    os.chmod(root / "b.txt", 0o444)
    os.chmod(root / "c.txt", 0o444)
    edits = [{"file": f"{name}.txt", "start": 1, "content": name.upper()} for name in "abc"]
    (root / "e.json").write_text(json.dumps(edits))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 1 and error["code"] == "PERMISSION" and error["index"] == 1, answer
    assert [(one["index"], one["code"]) for one in error["failed"]] == [(1, "PERMISSION"), (2, "PERMISSION")]
    assert "c.txt" in error["failed"][1]["message"], error
    assert [(root / f"{name}.txt").read_text() for name in "abc"] == ["l1\n"] * 3
    # (the second regression pass: so they are beside items that fail for other reasons)
    edits = [{"file": "a.txt", "start": 9, "content": "A"}, {"file": "b.txt", "start": 1, "content": "B"}]
    (root / "e.json").write_text(json.dumps(edits))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    failed = [(one["index"], one["code"]) for one in answer["error"]["failed"]]
    assert done.returncode == 1 and failed == [(0, "OUT_OF_RANGE"), (1, "PERMISSION")], answer


def test_hunks_of_two_names_of_one_file_are_named_as_such(root, be_env):
    """Found by an attack: a patch changing a.txt and deleting b.txt, two hard links of one file,
    was refused as "hunks 1 and 1 of b.txt touch overlapping lines": two sections named one file."""
    (root / "a.txt").write_text("a\nb\n")
    os.link(root / "a.txt", root / "b.txt")
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n--- a/b.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    error = refused_patch(root, be_env, ("a.txt", "a\nb\n"), patch, "INVALID_ARGUMENT", status=2)
    assert error["message"] == (
        "item 1 (b.txt): hunk 1 of a.txt and hunk 1 of b.txt touch overlapping lines of one file: a.txt and "
        "b.txt name the same file [1 of 2 items failed; see 'failed'; nothing was written]"
    ), error
    assert os.stat(root / "a.txt").st_ino == os.stat(root / "b.txt").st_ino


def test_a_hunk_repeated_line_for_line_is_refused(root, be_env):
    """Found by an attack: a `-U0` hunk that only adds lines, sent twice in one patch (a model
    repeating itself), added `NEW` twice, as git apply does; one with context was refused as
    overlapping. Both are INVALID_ARGUMENT naming the copy."""
    text = "".join(f"{n}\n" for n in range(1, 11))
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -3,0 +4,1 @@\n+NEW\n@@ -3,0 +4,1 @@\n+NEW\n"
    error = refused_patch(root, be_env, ("f.txt", text), patch, "INVALID_ARGUMENT", status=2)
    assert error["message"] == "hunk 2 of f.txt repeats hunk 1 line for line, at the same place", error
    done, answer = run_json(
        "patch",
        input=patch.replace("@@ -3,0 +4,1 @@\n+NEW\n", "@@ -7,0 +8,1 @@\n+NEW\n", 1).encode(),
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0 and (root / "f.txt").read_text().count("NEW") == 2, answer


LATER_SECTIONS_APPLIED = {
    # (the regression pass, 20 of 380 diffs split one section per hunk): hunk 2 numbered as the
    # file stands after hunk 1 (@@ -7, one line later), hunk 1 adding a `log()` like one of its own
    "numbered-after-the-earlier-hunks": (
        "def a():\n    x = 1\n    return x\n\n\ndef b():\n    log()\n    y = 2\n    return y\n",
        "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,4 @@\n def a():\n+    log()\n     x = 1\n     return x\n"
        "--- a/m.py\n+++ b/m.py\n@@ -7,3 +7,3 @@\n def b():\n     log()\n-    y = 2\n+    y = 3\n",
        [("y = 2", "y = 3"), ("def a():\n", "def a():\n    log()\n")],
    ),
    # (the second regression pass): hunk 2 off by one line, as models number them, with a
    # `return None` among its lines like the one hunk 1 adds; `if y is None` is no line of hunk 1's
    "off-by-one-beside-added-lines": (
        "def f(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n\n"
        "def g(y):\n    if y is None:\n        return None\n    return y + 1\n",
        "--- a/m.py\n+++ b/m.py\n@@ -2,3 +2,5 @@\n     if x < 0:\n         raise ValueError(x)\n"
        "+    if x is None:\n+        return None\n     return x\n"
        "--- a/m.py\n+++ b/m.py\n@@ -6,3 +6,3 @@\n     if y is None:\n         return None\n"
        "-    return y + 1\n+    return y + 2\n",
        [("y + 1", "y + 2"), ("ValueError(x)\n", "ValueError(x)\n    if x is None:\n        return None\n")],
    ),
}


@pytest.mark.parametrize("case", sorted(LATER_SECTIONS_APPLIED))
def test_a_later_section_that_cannot_stand_on_an_earlier_ones_lines_is_applied(root, be_env, case):
    """Found by regression passes over the rule for later ---/+++ sections of a file: these were
    refused as AMBIGUOUS, though read in turn (or against the file as it is) each hunk lands on
    the same block, and its lines cannot stand on the lines an earlier section adds."""
    text, patch, changes = LATER_SECTIONS_APPLIED[case]
    (root / "m.py").write_text(text)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    for old, new in changes:
        text = text.replace(old, new, 1)
    assert (root / "m.py").read_text() == text


@pytest.mark.parametrize(
    "before, patch, moved",
    [
        # an append after its context, then a line added on top, then the same patch again
        (
            "import x\na = 1\nb = 2\nc = 3\n",
            "@@ -2,3 +2,4 @@\n a = 1\n b = 2\n c = 3\n+d = 4\n",
            "import y\n",
        ),
        # a line put before the file's first lines, then a shebang added, then the same patch again
        (
            "a = 1\nb = 2\nc = 3\n",
            "@@ -1,3 +1,4 @@\n+NEW = 0\n a = 1\n b = 2\n c = 3\n",
            "#!/usr/bin/env python3\n",
        ),
    ],
)
def test_a_patch_that_adds_lines_sent_again_after_the_file_moved_adds_nothing(
    root, be_env, before, patch, moved
):
    """Found by an attack: a patch applied, then sent again after a line was added above it (a
    retry), found its context one line lower and added its lines a second time. That is the
    MISMATCH of a patch applied already ("may be applied already": --force adds the lines again)."""
    patch = "--- a/f.py\n+++ b/f.py\n" + patch
    (root / "f.py").write_text(before)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    once = moved + (root / "f.py").read_text()
    error = refused_patch(root, be_env, ("f.py", once), patch, "MISMATCH")
    assert "may be applied already" in error["message"], error
    done, answer = run_json("patch", "--force", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer  # (force: the lines once more, as asked)
    added = [line for line in patch.splitlines()[2:] if line.startswith("+")]
    assert len((root / "f.py").read_text().splitlines()) == len(once.splitlines()) + len(added)


@pytest.mark.parametrize("other", ["./f", "link"])
def test_one_hunk_without_context_sent_for_two_names_of_one_file_is_refused(root, be_env, other):
    """Found by an attack: the same -U0 hunk for `f` and for `./f` (or a link to f) added its line
    twice; for one name it is refused as a repeated hunk, and `edit` refuses two such inserts
    across names. Now a patch does too."""
    (root / "link").symlink_to("f")
    section = "--- a/{0}\n+++ b/{0}\n@@ -2,0 +3 @@\n+X\n"
    patch = section.format("f") + section.format(other)
    refused_patch(root, be_env, ("f", "a\nb\nc\n"), patch, "INVALID_ARGUMENT", status=2)


def test_an_end_counted_from_the_end_with_a_view_never_reaches_lines_added_below_it(root, be_env):
    """Found by an attack: lines 3-4 of a 4-line file read, a line appended by someone else, then
    `replace -s 3 -e -1` with the view: the view still held, -1 was the new last line, and the
    appended line was deleted unseen. That is STALE_VIEW now; the file keeps the line."""
    path = root / "f.py"
    path.write_text("import os\n\ndef old():\n    return 1\n")
    done, answer = run_json("read", "-f", "f.py", "-s", "3", "-e", "4", cwd=root, env=be_env)
    token = answer["viewed_code_id"]
    path.write_text(path.read_text() + "KEEP_ME = True\n")
    before = path.read_text()
    for command in (["replace", "-c", "def new():\n    return 2"], ["delete"]):
        done, answer = run_json(
            *command, "-f", "f.py", "-s", "3", "-e", "-1", "--viewed-code-id", token, cwd=root, env=be_env
        )
        assert done.returncode == 1 and answer["error"]["code"] == "STALE_VIEW", answer
        assert "counted from the end" in answer["error"]["message"]
        assert path.read_text() == before
    path.write_text(
        "# a line added above\n" + before.replace("KEEP_ME = True\n", "")
    )  # (moved alone: still right)
    done, answer = run_json(
        "delete", "-f", "f.py", "-s", "3", "-e", "-1", "--viewed-code-id", token, cwd=root, env=be_env
    )
    assert done.returncode == 0, answer
    assert path.read_text() == "# a line added above\nimport os\n\n"


def test_a_view_of_lines_that_stand_elsewhere_too_numbers_past_the_end_of_a_shorter_file_as_the_view(
    root, be_env
):
    """Found by an attack: a view of a line that stands elsewhere too (`}`), the file one line
    shorter since: an edit of the viewed line number was OUT_OF_RANGE ("lines 6-6 are outside"),
    not STALE_VIEW, as the numbers of a view are checked against the view first."""
    path = root / "f.py"
    path.write_text("import os\nx = 1\n}\ny = 2\nz = 3\n}\n")
    done, answer = run_json("read", "-f", "f.py", "-s", "6", "-e", "6", cwd=root, env=be_env)
    token = answer["viewed_code_id"]
    assert ":n6." in token
    path.write_text("x = 1\n}\ny = 2\nz = 3\n}\n")
    done, answer = run_json(
        "replace",
        "-f",
        "f.py",
        "-s",
        "6",
        "-e",
        "6",
        "-c",
        "};",
        "--viewed-code-id",
        token,
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 1 and answer["error"]["code"] == "STALE_VIEW", answer
    assert path.read_text() == "x = 1\n}\ny = 2\nz = 3\n}\n"


def test_a_hunk_that_starts_the_file_is_not_moved_to_a_copy_when_the_files_first_lines_changed(root, be_env):
    """Found by an attack: a hunk at line 1 (no context above its change, as a diff of a file's
    first lines has) no longer matched there, lines 1-2 having been edited since, and was applied
    to an identical function lower down ("offset +5"). Lines of it that still stand at the top
    say the diff was made for there: MISMATCH, as git apply refuses it."""
    before = "def f(x, y):\n    if x or y:\n        return 1\n    return 0\n\ndef f(x):\n    if x:\n        return 1\n    return 0\n"
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,4 @@\n-def f(x):\n+def f(x):  # renamed\n     if x:\n         return 1\n     return 0\n"
    error = refused_patch(root, be_env, ("m.py", before), patch, "MISMATCH")
    assert "still stands at line 3" in error["message"], error


def test_a_hunk_that_ends_the_file_is_ambiguous_when_a_copy_of_its_lines_stands_at_its_line(root, be_env):
    """Found by an attack: a hunk changing a file's last line (context above, none below: a diff
    gives none only at the end) was applied without a word to a copy of its lines that now stood
    at its stated line, a function added above since; the end of the file holds them too. That is
    AMBIGUOUS, naming both places; with the copy gone it applies at the end."""
    seen = "// util.js\nfunction a(x) {\n  if (x) {\n    log(x);\n  }\n  return x;\n}\n"
    current = (
        "// util.js\nfunction c(x) {\n  while (x) {\n    x--;\n  }\n  return x;\n}\n" + seen.split("\n", 1)[1]
    )
    patch = "--- a/util.js\n+++ b/util.js\n@@ -5,3 +5,3 @@\n   }\n   return x;\n-}\n+} // end of a\n"
    error = refused_patch(root, be_env, ("util.js", current), patch, "AMBIGUOUS")
    assert [c["start"] for c in error["candidates"]] == [5, 11], error
    (root / "util.js").write_text(seen)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "util.js").read_text().endswith("  return x;\n} // end of a\n")


def test_a_later_hunk_whose_lines_stand_where_an_earlier_hunk_moved_to_is_ambiguous(root, be_env):
    """Found by an attack: 4 lines added on top since the diff; hunk 1 was found 4 lines lower,
    and hunk 2, whose line stood at its stated line (another function's copy now) and 4 lines
    lower (where the diff was made for), was applied at its stated line, in the wrong function.
    That is AMBIGUOUS; and a hunk without context after a hunk that moved cannot tell either."""
    seen = '"""Loaders."""\nimport json\n\ndef a():\n    x = load()\n    return x\n\ndef b():\n    x = load()\n    return x\n'
    current = "# SPDX-License-Identifier: MIT\n# (c) 2024\n# generated, do not edit\n\n" + seen
    first = '@@ -1,3 +1,3 @@\n """Loaders."""\n-import json\n+import json, logging\n \n'
    for second, code in (
        ("@@ -9 +9 @@\n-    x = load()\n+    x = load(strict=True)\n", "AMBIGUOUS"),
        ("@@ -9,0 +10 @@\n+    y = 2\n", "AMBIGUOUS"),
    ):
        patch = "--- a/m.py\n+++ b/m.py\n" + first + second
        error = refused_patch(root, be_env, ("m.py", current), patch, code)
        assert "hunk 2 of m.py" in error["message"], error


def test_a_hunk_whose_newline_or_bom_change_is_not_applied_says_so(root, be_env):
    """Found by an attack: a hunk that changed lines and gave the file a final newline (a real
    git diff of this repository) was applied without its newline and without a word; a hunk that
    removed the BOM left it and said "the files already hold this text". Edits keep both as the
    file has them (docs/cli.md#patch), and now each says what it did not apply."""
    (root / "f.json").write_text('{\n "a": 1\n}')
    patch = '--- a/f.json\n+++ b/f.json\n@@ -1,3 +1,4 @@\n {\n- "a": 1\n-}\n\\ No newline at end of file\n+ "a": 1,\n+ "b": 2\n+}\n'
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.json").read_text() == '{\n "a": 1,\n "b": 2\n}'
    assert any("also changes whether the file ends with a newline" in w for w in answer["warnings"]), answer
    (root / "b.txt").write_bytes(b"\xef\xbb\xbfa\nb\n")
    patch = "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-\ufeffa\n+A\n b\n"
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "b.txt").read_bytes() == b"\xef\xbb\xbfA\nb\n", answer
    assert any("byte order mark" in w for w in answer["warnings"]), answer


@pytest.mark.parametrize(
    "first",
    [
        "@@ -2,0 +3 @@\n+NEW = 1\n",  # (no context: whether it moved too, nothing tells)
        "@@ -5 +5 @@\n-    x = load()\n+    x = load(strict=True)\n",  # (its line stands 2 lines lower too)
    ],
)
def test_an_earlier_hunk_that_stayed_while_a_later_one_moved_is_ambiguous(root, be_env, first):
    """Found by an attack (the -U0 stale-base fuzz: 46 of 2,000 put at the wrong place, GNU patch
    right): a hunk placed at its stated line before a later hunk of its file was found 2 lines
    lower. Every hunk of the file is placed first, then those that stayed are looked at again."""
    seen = [
        "a = 1",
        "b = 2",
        "    x = load()",
        "c = 3",
        "    x = load()",
        "d = 4",
        "e = 5",
        "f = 6",
        "g = 7",
        "h = 8",
    ]
    current = "# header 1\n# header 2\n" + "".join(line + "\n" for line in seen)
    patch = "--- a/m.py\n+++ b/m.py\n" + first + "@@ -9 +9 @@\n-g = 7\n+g = 70\n"
    error = refused_patch(root, be_env, ("m.py", current), patch, "AMBIGUOUS")
    assert error["failed"][0]["message"].startswith("hunk 1 of m.py"), error


def test_a_hunk_without_context_whose_lines_stand_after_its_line_applies_and_says_so(root, be_env):
    """Found by an attack: a -U0 hunk sent twice added its line twice without a word. Refusing it
    (a first fix) refused git's own -U0 diff of a duplicated line on its exact base, which puts
    the copy above the line it copies: the file cannot tell the two apart, and a hunk without
    context has nothing more to go by. It applies, and the warning says the lines may now stand
    twice."""
    (root / "a.py").write_text("def three(self):\n    x = 1\n    y = 2\n")
    patch = "--- a/a.py\n+++ b/a.py\n@@ -1,0 +2 @@\n+    x = 1\n"  # (git diff -U0 of x = 1 duplicated)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "a.py").read_text() == "def three(self):\n    x = 1\n    x = 1\n    y = 2\n"
    assert any("if the patch was applied before, they now stand twice" in w for w in answer["warnings"]), (
        answer
    )


def test_a_hunk_without_context_in_a_second_section_after_lines_added_above_is_ambiguous(root, be_env):
    """Found by an attack: two ---/+++ sections of one file made one after the other (git diff A B;
    git diff B C), both -U0: the second's insertion after line 4 of B was put after line 4 of A
    and reported as success. Whether its line is A's or B's cannot be told: AMBIGUOUS."""
    patch = "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+n1\n+n2\n--- a/f\n+++ b/f\n@@ -4,0 +5 @@\n+X\n"
    refused_patch(root, be_env, ("f", "l1\nl2\nl3\nl4\nl5\n"), patch, "AMBIGUOUS")


def test_a_hand_written_last_hunk_ending_without_context_applies_at_its_stated_line(root, be_env):
    """Found by a regression attack: a hand-written hunk with `}` above its change and nothing
    below, at its right stated line, was AMBIGUOUS because the file also ends with `}` (a diff
    gives no context below only at the end of the file; models do so anywhere); also with a
    later hunk of the file after it. Only lines with a letter or a digit at the end, of the last
    hunk of its file, count."""
    before = "function a(){\n  return 1;\n}\n\nfunction b(){\n  return 2;\n}\n"
    patch = "--- a/f.js\n+++ b/f.js\n@@ -3,1 +3,4 @@\n }\n+function c() {\n+  return 3;\n+}\n"
    (root / "f.js").write_text(before)
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.js").read_text() == before.replace("}\n\n", "}\nfunction c() {\n  return 3;\n}\n\n", 1)


@pytest.mark.parametrize(
    "patch, result",
    [
        # the same place twice: which of the two goes first would be a guess (git: a b Y x c d)
        ("--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+x\n--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+Y\n", None),
        # the second section names the file `./f`: one file all the same
        ("--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+n1\n+n2\n--- a/./f\n+++ b/./f\n@@ -4,0 +5 @@\n+X\n", None),
        # a line removed below the place: both readings put X after a
        ("--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n-b\n--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+X\n", "a\nX\nc\nd\n"),
    ],
)
def test_a_hunk_without_context_in_a_later_section_goes_where_both_readings_agree(
    root, be_env, patch, result
):
    """Found by a regression attack on the rule above: an insertion at the place an earlier
    section inserted at was applied after it (git puts it before); naming the file `./f` in the
    second section went round the rule; and a line removed below the place made it AMBIGUOUS,
    saying lines were removed above. The sections of one file are now those of the file its
    names reach, and a place is another only when lines change above it or at it."""
    if result is None:
        refused_patch(root, be_env, ("f", "a\nb\nc\nd\n"), patch, "AMBIGUOUS")
        return
    (root / "f").write_text("a\nb\nc\nd\n")
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f").read_text() == result


@pytest.mark.parametrize(
    "before, patch, after",
    [
        # a real git diff of removing the last line of a file of mixed line ends, no final newline
        (b"x\na\r\nb", "@@ -1,3 +1,2 @@\n x\n a\r\n-b\n\\ No newline at end of file\n", b"x\na"),
        # a hunk without context removing the last line of a file without a final newline
        (b"a\nb", "@@ -2 +1,0 @@\n-b\n", b"a"),
        (b"x\na\nb", "@@ -2,2 +1,0 @@\n-a\n-b\n", b"x"),
    ],
)
def test_a_hunk_reaching_the_unterminated_end_leaves_it_unterminated(root, be_env, before, patch, after):
    """Found by an attack: the last terminator of such a hunk was cut by the file's line ending
    (LF), so a kept CRLF line ended in a lone CR; and a hunk without context lines removing the
    last lines gave the file a final newline. The file keeps its final-newline state, as delete
    keeps it."""
    (root / "f").write_bytes(before)
    done, answer = run_json("patch", input=("--- a/f\n+++ b/f\n" + patch).encode(), cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f").read_bytes() == after


def test_a_patch_sent_twice_says_it_looks_applied(root, be_env):
    """Found by the agent-mistakes attack: a patch adding `import sys` after `import os`, sent a
    second time, was "does not match anywhere else", with a `closest` block that the new text
    made (its first difference "old has 'os' where the file has 'sys'"); following it added the
    line twice. The new lines standing at one place say the patch looks applied already."""
    (root / "ap.py").write_text("import os\n\nDEBUG = False\n")
    patch = "--- a/ap.py\n+++ b/ap.py\n@@ -1,3 +1,4 @@\n import os\n+import sys\n \n DEBUG = False\n"
    done = run_cli("patch", cwd=root, env=be_env, input=patch.encode())
    assert done.returncode == 0 and (root / "ap.py").read_text() == "import os\nimport sys\n\nDEBUG = False\n"
    done, answer = run_json("patch", cwd=root, env=be_env, input=patch.encode())
    error = answer["error"]
    assert done.returncode == 1 and error["code"] == "MISMATCH", answer
    assert "its new lines stand at line 1: the patch looks applied already" in error["message"], error
    assert (root / "ap.py").read_text() == "import os\nimport sys\n\nDEBUG = False\n"
    (root / "ap.py").write_text("import re\n\nDEBUG = True\n")  # (neither side: the mismatch as before)
    done, answer = run_json("patch", cwd=root, env=be_env, input=patch.encode())
    assert done.returncode == 1 and "looks applied" not in answer["error"]["message"], answer
    # (the regression passes: a -U0 hunk's new line standing anywhere, new lines with context standing
    # at another copy tell nothing)
    (root / "a.py").write_text("def f():\n    return None\n\n\ndef g(y):\n    y += 1\n    return y\n")
    patch = "--- a/a.py\n+++ b/a.py\n@@ -7 +7 @@\n-    return y * 2\n+    return None\n"
    done, answer = run_json("patch", cwd=root, env=be_env, input=patch.encode())
    assert done.returncode == 1 and "looks applied" not in answer["error"]["message"], answer
    body = "def load():\n    x = 0\n    retries = 3\n    return fetch(retries)\n\ndef save():\n    x = 0\n    retries = 5\n    return fetch(retries)\n"
    (root / "svc.py").write_text(body)
    patch = "--- a/svc.py\n+++ b/svc.py\n@@ -2,3 +2,3 @@\n     x = 0\n-    retries = 4\n+    retries = 5\n     return fetch(retries)\n"
    done, answer = run_json("patch", cwd=root, env=be_env, input=patch.encode())
    assert done.returncode == 1 and "looks applied" not in answer["error"]["message"], answer


def test_each_failing_item_is_counted_once_and_a_doubled_cr_insert_is_a_repeat(root, be_env):
    """Found by a differential attack: four items on one line said `6 of 4 items failed` and listed
    item 3 three times (once per pair); and an insert sent as `x\\r\\r\\n` beside the same one as
    `x\\n` was taken as two different inserts, so `x` went in twice, although `\\r\\r\\n` is
    written as one line break."""
    (root / "k.txt").write_text("a\n")
    items = [{"file": "k.txt", "start": 1, "content": c} for c in "xyzw"]
    (root / "e.json").write_text(json.dumps(items))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    error = answer["error"]
    assert "[3 of 4 items failed" in error["message"], error
    assert [f["index"] for f in error["failed"]] == [1, 2, 3], error
    (root / "r.txt").write_text("a\n")
    items = [
        {"file": "r.txt", "after_line": 1, "content": "x\r\r\n"},
        {"file": "r.txt", "after_line": 1, "content": "x\n"},
    ]
    (root / "e.json").write_text(json.dumps(items))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    assert done.returncode == 2 and "insert the same lines" in answer["error"]["message"], answer
    assert (root / "r.txt").read_text() == "a\n"


@pytest.mark.parametrize(
    "body, items, want",
    [
        (b"a\nb\nc", [{"old": "b", "content": ""}, {"start": 3}], b"a\n\n"),  # (line 2 stays, empty)
        (b"x\n\nb", [{"old": "b", "content": ""}, {"after_line": -1, "content": "c"}], b"x\n\nc"),
        (b"x\na\nb", [{"old": "a\n", "content": ""}, {"start": 3}], b"x"),
        (b"b\r\na\r\nab", [{"old": "b\r\na", "content": ""}, {"start": 3, "end": 3}], b"\r\n"),
    ],
)
def test_a_replace_by_old_and_an_edit_of_the_unterminated_last_line_below_it_compose(
    root, be_env, body, items, want
):
    """Found by a differential attack: a replace by `old` and a delete (or an append) of the last
    line of a file without a final newline, in one edit, lost the line the replace left empty,
    doubled a line break, or gave the file a final newline: the replace's bytes were computed
    against the file before the call, with the final-newline rule already applied. It now joins
    the others as whole lines, and the rule is applied once, as for items by line numbers."""
    (root / "f.txt").write_bytes(body)
    (root / "e.json").write_text(json.dumps([dict(item, file="f.txt") for item in items]))
    done, answer = run_json("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    assert done.returncode == 0, answer
    assert (root / "f.txt").read_bytes() == want
    assert answer["files"][0]["total"] == len(want.replace(b"\r\n", b"\n").splitlines()), answer


def test_an_edit_preview_warns_when_the_edit_itself_would_be_refused(root, be_env):
    """Found by a review: `replace`, `insert`, `delete` and `write` previews warn that the edit
    would be refused (a read-only file); an `edit` preview showed the diff without a word. It now
    warns for each file the commit would refuse, and still writes nothing."""
    (root / "ro.txt").write_text("a\n")
    (root / "ro.txt").chmod(0o444)
    (root / "rw.txt").write_text("b\n")
    items = [{"file": "ro.txt", "start": 1, "content": "A"}, {"file": "rw.txt", "start": 1, "content": "B"}]
    (root.parent / "items.json").write_text(json.dumps(items))
    done, result = run_json(
        "edit", "--edits-file", str(root.parent / "items.json"), "--preview", cwd=root, env=be_env
    )
    assert done.returncode == 0 and result["preview"] is True, result
    refused = [w for w in result.get("warnings", []) if "would be refused" in w]
    assert len(refused) == 1 and "ro.txt" in refused[0], result
    assert (root / "ro.txt").read_text() == "a\n" and (root / "rw.txt").read_text() == "b\n"


def test_a_later_section_that_changes_lines_an_earlier_one_adds_says_so(root, be_env):
    """`git diff A B; git diff B C` where the second changes a line the first adds matched
    nowhere: MISMATCH said "read the file and make the diff again", with the block most like it
    as a guess. It now says that the sections look meant one after the other, and what to send."""
    text = "a\nb\nc\nd\n"
    first = "--- a/s.txt\n+++ b/s.txt\n@@ -1,3 +1,5 @@\n a\n+X1\n+X2\n b\n c\n"
    second = "--- a/s.txt\n+++ b/s.txt\n@@ -1,4 +1,4 @@\n a\n X1\n-X2\n+Y2\n b\n"
    error = refused_patch(root, be_env, ("s.txt", text), first + second, "MISMATCH")
    assert "an earlier section adds lines like its own" in error["message"], error
    assert error["hint"].startswith("send one ---/+++ section per file"), error
    assert error["closest"] is None, error


def test_a_hunk_line_starting_with_a_backslash_is_no_end_of_file_marker(root, be_env):
    """Found by the wrong-place attack: `\\item old`, a LaTeX context line that lost its leading
    space, was read as `\\ No newline at end of file`: ignored, the hunk applied without it, with
    a warning about the file's last newline. Only `\\ ` is that marker (as git reads it)."""
    patch = "--- a/doc.tex\n+++ b/doc.tex\n@@ -1,3 +1,4 @@\n a\n+\\item new\n\\item old\n b\n c\n"
    error = refused_patch(root, be_env, ("doc.tex", "a\nb\nc\n"), patch, "INVALID_ARGUMENT", status=2)
    assert "line 6 of the patch is inside hunk 1 of doc.tex but is not a hunk line" in error["message"], error
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    (root / "f.txt").write_text("a")
    done, answer = run_json("patch", input=patch.encode(), cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "b", answer


def test_a_bare_hunk_header_is_named_as_one_without_its_line_numbers(root, be_env):
    """Found by the agent-mistakes probe: `@@` alone after a file header said "no @@ line follows
    the header …: line 3 is '@@'", which contradicts itself. It says what the line lacks now."""
    patch = "--- a/h.txt\n+++ b/h.txt\n@@\n-a\n+A\n b\n"
    error = refused_patch(root, be_env, ("h.txt", "a\nb\n"), patch, "INVALID_ARGUMENT", status=2)
    assert error["message"].startswith(
        "line 3 of the patch, '@@', opens a hunk of h.txt without the line numbers"
    ), error
