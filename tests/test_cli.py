"""The CLI as a subprocess (docs/cli.md): every command, the options, exit codes and error codes.

Every failing case also checks that the file's bytes did not change.
"""

import errno
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from harness import FROZEN, REPO, Server, be_command_prefix, clean_env, run_cli, run_json, strict_loads


def write(path, data):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def as_json(proc):
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def cli(be_command, be_env, root):
    """cli(*args) -> (exit code, parsed JSON): harness.run_json in this suite's root and environment."""

    def call(*args, input=None, env=None):
        done, answer = run_json(
            *args, cwd=root, env=dict(be_env, **(env or {})), input=input, command=be_command
        )
        return done.returncode, answer

    return call


def fails(cli, path, *args, code, status=1, input=None):
    """Run a failing command; assert its code and exit status and that `path` is unchanged."""
    before = Path(path).read_bytes() if path and Path(path).exists() else None
    rc, out = cli(*args, input=input)
    assert rc == status, out
    assert out["error"]["code"] == code, out
    assert out["error"]["message"] and out["error"]["hint"]
    if path:
        assert (Path(path).read_bytes() if Path(path).exists() else None) == before
    return out["error"]


# --- program ---------------------------------------------------------------------------------------


def test_version(run_be):
    import better_edit

    for flag in ("--version", "-V"):
        proc = run_be(flag)
        assert proc.returncode == 0 and proc.stdout.decode().strip() == better_edit.__version__


def test_unknown_command_is_a_usage_error(run_be):
    proc = run_be("raed", "-f", "x")
    assert proc.returncode == 2
    assert b"read, replace, insert" in proc.stderr and not proc.stdout
    assert b"(did you mean read?)" in proc.stderr  # (the newcomer review)
    proc = run_be("frob")
    assert proc.returncode == 2 and b"did you mean" not in proc.stderr


def test_the_top_level_help_says_where_a_command_s_options_and_json_output_are(run_be):
    """Found by the newcomer review: `better-edit-tools --help` named neither `COMMAND --help`, nor
    -o json, nor the environment variables."""
    for lang in ("en", "zh"):
        text = run_be("--lang", lang, "--help").stdout.decode()
        assert "COMMAND --help" in text and "-o json" in text and "BETTER_EDIT_" in text, text


@pytest.mark.parametrize(
    "args, env",
    [(("--lang", "fr", "read", "-f", "x"), None), (("read", "-f", "x"), {"BETTER_EDIT_MAX_CHIPS": "many"}),
     (("read", "-f", "x"), {"BETTER_EDIT_ENCODING": "klingon"}), (("read",), None)],
)  # fmt: skip
def test_usage_errors_exit_2(run_be, args, env):
    proc = run_be(*args, env=env)
    assert proc.returncode == 2 and proc.stderr


@pytest.mark.parametrize(
    "args, says",
    [(("read", "-f", "u.txt", "-o", "json", "--bogus"), "unrecognized arguments: --bogus"),
     (("replace", "-ojson", "-f", "u.txt"), "replace needs --content"),
     (("replace", "-f", "u.txt", "-s", "1", "-c", "x", "--content-file", "y", "--output=json"), "not both"),
     (("read", "-f", "u.txt", "-o=json", "--max-chips", "0"), "--max-chips='0'"),
     (("read", "-f", "u.txt", "--output", "json", "-s"), "--start/-s: expected one argument"),
     (("-f", "u.txt", "--output", "json", "read"), "-f u.txt comes before the command read"),
     (("-o", "json", "raed", "-f", "u.txt"), "unknown command 'raed'")],
)  # fmt: skip
def test_usage_errors_with_json_output_are_json_on_stdout(run_be, root, args, says):
    """docs/cli.md#output-text-and-json: with -o json an error is JSON on stdout. Usage errors
    (argparse's, a missing --content, a bad --max-chips, an unknown command) were text on stderr,
    so a script reading the JSON got nothing to parse."""
    (root / "u.txt").write_text("a\n")
    proc = run_be(*args)
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 2 and not proc.stderr, proc.stderr
    assert error["code"] == "INVALID_ARGUMENT" and says in error["message"], error
    assert "--help" in error["hint"] or "=-x" in error["hint"], error
    assert (root / "u.txt").read_text() == "a\n"
    if "usage" in error:  # (argparse's own errors: the command's usage, on one line)
        assert error["usage"].startswith("better-edit-tools read [-h]"), error


COMMANDS = (
    "read",
    "replace",
    "insert",
    "delete",
    "write",
    "balance",
    "func-range",
    "tag-range",
    "edit",
    "patch",
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_documents_every_command_with_an_example(run_be, lang):
    """A command's help shows its own options and an example; the server's naming flags are shown
    only in the top-level help (still accepted after a command), --max-chips only where chips are kept."""
    top = run_be("--lang", lang, "--help").stdout.decode()
    assert "--no-prefix" in top and "--underscore-names" in top and "--max-chips" in top
    for command in COMMANDS:
        proc = run_be("--lang", lang, command, "--help")
        text = proc.stdout.decode()
        assert proc.returncode == 0
        assert ("--file" in text) is (command not in ("edit", "patch")), command
        example = text.split("example:" if lang == "en" else "示例：")[1]
        assert f"better-edit-tools {command} " in example, command
        assert "--no-prefix" not in text and "--underscore-names" not in text, command
        chips = command in ("delete", "edit")  # (the newcomer review: others keep no chip)
        assert ("--max-chips" in text) is chips, command
        assert "--root" in text and "--lang" in text
        # (0.3, found by the CLI attack: no help said what the exit statuses mean)
        assert ("exit status:" if lang == "en" else "退出状态：") in text and "\n  2  " in text, command


def test_server_flags_are_still_accepted_after_a_command(run_be, root):
    write(root / "a.txt", "x\n")
    proc = run_be("read", "--no-prefix", "--underscore-names", "-f", "a.txt", "--max-chips", "5")
    assert proc.returncode == 0 and b"1\tx" in proc.stdout


def test_no_traceback_ever_reaches_the_user(run_be, root):
    write(root / "a.txt", "x\n")
    for args in (
        ("read", "-f", "a.txt", "-s", "abc"),
        ("replace", "-f", "a.txt", "-s", "1", "-c"),
        ("delete", "-f", "a.txt", "-s", "0"),
    ):
        proc = run_be(*args)
        assert b"Traceback" not in proc.stderr + proc.stdout


# --- read ------------------------------------------------------------------------------------------


def test_read_whole_file_and_ranges(cli, root):
    write(root / "f.txt", "one\ntwo\nthree\nfour\n")
    rc, out = cli("read", "-f", "f.txt")
    assert rc == 0
    assert out["content"] == "1\tone\n2\ttwo\n3\tthree\n4\tfour"
    assert (out["start"], out["end"], out["total"], out["eol"], out["encoding"]) == (1, 4, 4, "lf", "utf-8")
    assert out["path"] == str(root / "f.txt") and out["file"] == "f.txt"
    assert out["viewed_code_id"].startswith("v1:1-4:") and "warnings" not in out
    assert cli("read", "-f", "f.txt", "-s", "2", "-e", "3")[1]["content"] == "2\ttwo\n3\tthree"
    assert cli("read", "-f", "f.txt", "-s", "2", "-e", "-1")[1]["content"].endswith("4\tfour")
    assert cli("read", "-f", "f.txt", "-s", "3")[1]["end"] == 4


def test_a_negative_end_that_lands_before_start_says_it_counted_back(cli, root):
    """`-s 2 -e -5` of a 3-line file said "lines 2--5 are outside f.txt"."""
    write(root / "f.txt", "a\nb\nc\n")
    rc, out = cli("replace", "-f", "f.txt", "-s", "2", "-e", "-5", "-c", "x")
    assert rc == 1 and out["error"]["code"] == "OUT_OF_RANGE" and out["error"]["total"] == 3, out
    assert out["error"]["message"] == (
        "end -5 counts back from the end of f.txt, which has 3 lines, to before start 2"
    )
    assert (root / "f.txt").read_text() == "a\nb\nc\n"


def test_the_hint_of_a_mismatch_by_lines_says_what_its_data_holds(cli, root):
    """The hint said "'found_at' lists where old does occur" also when found_at was empty."""
    write(root / "f.py", "alpha = 1\nbeta = 2\n")
    hints = {}
    for old in ("alpha = 1", "alpha = 3", "zzz"):
        rc, out = cli("replace", "-f", "f.py", "-s", "2", "--old", old, "-c", "x")
        error = out["error"]
        assert rc == 1 and error["code"] == "MISMATCH", out
        hints[old] = (bool(error["found_at"]), error["closest"] is not None, error["hint"])
    assert hints["alpha = 1"][:2] == (True, True) and "'found_at' lists where" in hints["alpha = 1"][2]
    assert (
        hints["alpha = 3"][:2] == (False, True)
        and "'closest' is the block most like" in hints["alpha = 3"][2]
    )
    assert hints["zzz"][:2] == (False, False) and "nothing is like it" in hints["zzz"][2]
    assert (root / "f.py").read_text() == "alpha = 1\nbeta = 2\n"


def test_a_mismatch_by_lines_says_when_old_is_part_of_them_or_runs_past_them(cli, root, be_env):
    """Found by the agent-mistakes attack: `-s 3 --old 'return "hi"'` (part of line 3) was "the
    text at lines 3-3 is not the given old text", hint "your line numbers may be stale", then "old
    occurs at lines: 3-3"; `-s 2` with a two-line old, "old occurs at lines: 2-3". The hint now
    says what start asks of old, and what to pass."""
    source = 'def f(x):\n    if x:\n        return "hi"\n    return None\n'
    write(root / "t.py", source)
    rc, out = cli("replace", "-f", "t.py", "-s", "3", "--old", 'return "hi"', "-c", 'return "yo"')
    assert rc == 1 and out["error"]["found_at"] == [{"start": 3, "end": 3}], out
    assert "not their whole text" in out["error"]["hint"] and "leave --start out" in out["error"]["hint"], out
    rc, out = cli("replace", "-f", "t.py", "-s", "2", "--old", '    if x:\n        return "hi"', "-c", "x")
    assert (
        rc == 1
        and "is lines 2-3, which run past" in out["error"]["hint"]
        and "--end 3" in out["error"]["hint"]
    ), out
    # (the regression pass: only where doing it works: old not whole lines, or standing twice)
    rc, out = cli("replace", "-f", "t.py", "-s", "2", "--old", 'if x:\n        return "hi"', "-c", "x")
    assert rc == 1 and "--end" not in out["error"]["hint"], out
    write(root / "e.txt", "a\nb\n\nc\n")  # (the second pass: a blank old "occurs" at the blank lines)
    rc, out = cli("replace", "-f", "e.txt", "-s", "2", "-e", "3", "--old", "", "-c", "z")
    assert rc == 1 and "leave --start out" not in out["error"]["hint"], out
    write(root / "u.py", "x = 1\ny = 2\nx = 1\n")
    rc, out = cli("replace", "-f", "u.py", "-s", "2", "--old", "x = 1", "-c", "z")
    assert rc == 1 and "leave --start out" not in out["error"]["hint"], out
    # (found by the wrong-place attack: an old standing twice in the named line was "your line
    # numbers may be stale"; it says what start asks, and not to leave it out: that is AMBIGUOUS)
    write(root / "w.py", "a = 1\nx = foo + foo\n")
    rc, out = cli("replace", "-f", "w.py", "-s", "2", "--old", "foo", "-c", "z")
    hint = out["error"]["hint"]
    assert rc == 1 and "stands 2 times inside lines 2-2" in hint and "stale" not in hint, out
    assert (root / "t.py").read_text() == source
    rc, out = cli(
        "replace",
        "-f",
        "t.py",
        "-s",
        "2",
        "-e",
        "3",
        "--old",
        '    if x:\n        return "hi"',
        "-c",
        "    pass",
    )
    assert rc == 0 and (root / "t.py").read_text() == "def f(x):\n    pass\n    return None\n", out
    server = Server(cwd=root, env=be_env)
    try:
        error = server.err(
            "be-replace", "MISMATCH", file="t.py", start=2, old="    pass\n    return None", content="x"
        )
        assert "pass end 3" in error["hint"] and "--" not in error["hint"], error
    finally:
        server.close()


def test_read_clamps_end_with_a_warning(cli, root):
    write(root / "f.txt", "a\nb\n")
    rc, out = cli("read", "-f", "f.txt", "-s", "1", "-e", "99")
    assert rc == 0 and out["end"] == 2 and len(out["warnings"]) == 1 and "99" in out["warnings"][0]


def test_read_max_lines_truncates(cli, root):
    write(root / "f.txt", "".join(f"{i}\n" for i in range(1, 11)))
    rc, out = cli("read", "-f", "f.txt", "--max-lines", "3", "-s", "2")
    assert (out["start"], out["end"], out["truncated"], out["next_start"]) == (2, 4, True, 5)
    rc, out = cli("read", "-f", "f.txt", "--max-lines", "0")
    assert rc == 0 and out["end"] == 10 and "truncated" not in out
    rc, out = cli("read", "-f", "f.txt", "--max-lines", "-1")  # (the message said "1 or more")
    assert (
        rc == 2 and out["error"]["message"] == "--max-lines must be 0 (no limit) or more, got -1"
    )  # (the option)


def test_read_warnings_and_invisible_bom(cli, root):
    write(root / "f.txt", b"\xef\xbb\xbfa\r\nb\nc\tc")
    rc, out = cli("read", "-f", "f.txt")
    assert out["content"] == "1\ta\n2\tb\n3\tc\tc"
    assert out["eol"] == "mixed" and out["encoding"] == "utf-8-bom"
    assert len(out["warnings"]) == 2  # mixed endings, no final newline; never one for tabs


def test_old_ending_in_a_newline_matches_the_last_line_of_a_file_without_one(cli, root):
    """Found by an attack: `a\\nb` and `--old $'b\\n'` was MISMATCH, though `closest` said "old
    matches the file here exactly (line endings aside)"; line endings are ignored in the second
    tier, and the file still ends without a newline."""
    f = write(root / "nf.txt", "a\nb")
    rc, out = cli("replace", "-f", "nf.txt", "--old", "b\n", "-c", "B")
    assert rc == 0 and f.read_bytes() == b"a\nB", out
    assert any("line endings are ignored" in w for w in out["warnings"]), out
    write(root / "nf.txt", "a\nb")
    assert cli("replace", "-f", "nf.txt", "--old", "a\nb\n", "-c", "X")[0] == 0 and f.read_bytes() == b"X"


def test_an_empty_old_by_line_numbers_lists_the_empty_lines(cli, root):
    """Found by an attack: `--old ''` names an empty line; on a mismatch `found_at` listed every
    character (`1-1, 1-1, 2-2, 2-2, ... 4-4` for a 3-line file), and a `closest` of other text."""
    write(root / "o.txt", "a\n\nc\n\n")
    err = fails(
        cli, root / "o.txt", "replace", "-f", "o.txt", "-s", "1", "--old", "", "-c", "x", code="MISMATCH"
    )
    assert err["found_at"] == [{"start": 2, "end": 2}, {"start": 4, "end": 4}] and err["closest"] is None, err
    write(root / "p.txt", "a\nb\n")
    err = fails(
        cli, root / "p.txt", "replace", "-f", "p.txt", "-s", "2", "--old", "", "-c", "x", code="MISMATCH"
    )
    assert err["found_at"] == [], err


def test_an_option_given_twice_with_different_values_is_a_usage_error(run_be, root):
    """Found by an attack: `-s 1 -s 2` edited line 2, `-c X -c Y` wrote Y, `--root a --root b`
    confined to b: the last one won without a word. The same value twice is only said twice."""
    f = write(root / "d.txt", "a\nb\nc\n")
    for args in (
        ["-s", "1", "-s", "2", "-c", "X"],
        ["-s", "1", "--start", "2", "-c", "X"],
        ["-s", "1", "-c", "X", "-c", "Y"],
    ):
        done = run_be("replace", "-f", "d.txt", *args)
        assert done.returncode == 2 and "give" in done.stderr.decode(), (args, done.stderr)
    done = run_be("--root", str(root), "read", "-f", "d.txt", "--root", "/")
    assert done.returncode == 2 and "--root" in done.stderr.decode(), done.stderr
    assert f.read_text() == "a\nb\nc\n"
    assert run_be("replace", "-f", "d.txt", "-s", "2", "-s", "2", "-c", "X").returncode == 0
    assert f.read_text() == "a\nX\nc\n"


def test_two_options_reading_standard_input_are_a_usage_error(run_be, root):
    """Found by an attack: `--old-file - --content-file -` was accepted; the second read nothing."""
    f = write(root / "o.txt", "a\n\nc\n")
    done = run_be("replace", "-f", "o.txt", "-s", "2", "--old-file", "-", "--content-file", "-", input=b"\n")
    assert done.returncode == 2 and "standard input" in done.stderr.decode(), done
    assert f.read_text() == "a\n\nc\n"


def test_a_bom_is_never_written_twice_nor_taken_from_a_content_file(cli, root):
    """Found by an attack: `write` to a UTF-8-BOM file of content starting with U+FEFF gave two
    BOMs; a `--content-file` saved with a BOM (Notepad) put U+FEFF into the edited line."""
    bom = write(root / "bom.txt", "\ufeffold\n")
    assert cli("write", "-f", "bom.txt", "-c", "\ufeffnew")[0] == 0
    assert bom.read_bytes() == b"\xef\xbb\xbfnew"
    (root / "content.txt").write_bytes(b"\xef\xbb\xbfX\n")
    plain = write(root / "t.txt", "a\nb\n")
    assert cli("replace", "-f", "t.txt", "-s", "1", "--content-file", "content.txt")[0] == 0
    assert plain.read_bytes() == b"X\nb\n"


def test_read_of_a_file_broken_by_cr_alone_says_it_is_one_line(cli, root):
    """A classic Mac OS file (lines broken by CR alone) is one line here: a read said only that it
    does not end with a newline, and an edit of "line 2" then met OUT_OF_RANGE unexplained."""
    write(root / "mac.txt", b"a\rb\rc\r")
    rc, out = cli("read", "-f", "mac.txt")
    assert rc == 0 and out["total"] == 1
    assert len(out["warnings"]) == 2 and "CR alone" in out["warnings"][1], out["warnings"]
    write(root / "one.txt", b"a\r\nb\rc\n")  # a stray CR inside a CRLF file is not this case
    assert all("CR alone" not in w for w in cli("read", "-f", "one.txt")[1].get("warnings", []))


def test_an_edit_by_line_numbers_of_a_file_broken_by_cr_alone_is_refused(cli, root):
    """Its one line here is the whole file: replacing "line 1" of a classic Mac OS file replaced
    all of its lines, with no warning. Edits by line numbers are refused naming the file; an edit
    by `old` matches text exactly and still applies."""
    write(root / "mac.txt", b"a\rb\rc\r")
    for args in (
        ("replace", "-s", "1", "-c", "Q"),
        ("delete", "-s", "1"),
        ("insert", "--after", "1", "-c", "Q"),
    ):
        rc, out = cli(*args[:1], "-f", "mac.txt", *args[1:])
        assert rc == 2 and out["error"]["code"] == "INVALID_ARGUMENT", (args, out)
        assert out["error"]["message"].startswith("mac.txt breaks its lines with CR alone"), out
        assert "tr '\\r' '\\n'" in out["error"]["hint"], out
    assert (root / "mac.txt").read_bytes() == b"a\rb\rc\r"
    rc, out = cli("replace", "-f", "mac.txt", "--old", "b", "-c", "B")
    assert rc == 0 and (root / "mac.txt").read_bytes() == b"a\rB\rc\r", out


def test_a_classic_mac_file_with_one_lf_is_still_refused_by_line_numbers(cli, root):
    """Found by the encodings attack: one LF anywhere (an editor appending a newline) turned the
    guard off; `replace -s 1` of `line one\rline two\rline three\r\n` replaced all three lines
    and `delete -s 1` emptied the file, without a warning. Lines broken by CR alone more often
    than by LF now count as such a file."""
    for data in (b"line one\rline two\rline three\r\n", b"line one\rline two\rline three\rappended\n"):
        write(root / "mac.txt", data)
        rc, out = cli("read", "-f", "mac.txt")
        assert rc == 0 and any("CR alone" in w for w in out.get("warnings", [])), out
        for args in (("replace", "-s", "1", "-c", "Q"), ("delete", "-s", "1")):
            rc, out = cli(*args[:1], "-f", "mac.txt", *args[1:])
            assert rc == 2 and "breaks its lines with CR alone" in out["error"]["message"], (args, out)
        assert (root / "mac.txt").read_bytes() == data
    write(root / "stray.txt", b"a\rb\nc\nd\n")  # (one CR inside a line of an LF file: lines as they are)
    assert cli("delete", "-f", "stray.txt", "-s", "3")[0] == 0
    assert (root / "stray.txt").read_bytes() == b"a\rb\nc\n"
    # (the regression pass: a log of progress bars holds more CRs than LFs, in lines of its own)
    log = b"".join(b"step %d: 10%%\r20%%\r50%%\r100%%\n" % n for n in range(5))
    write(root / "log.txt", log)
    rc, out = cli("read", "-f", "log.txt")
    assert rc == 0 and not any("CR alone" in w for w in out.get("warnings", [])), out
    assert cli("delete", "-f", "log.txt", "-s", "5")[0] == 0
    assert (root / "log.txt").read_bytes() == log[: log.index(b"step 4")]


def test_read_empty_file(cli, root):
    write(root / "e.txt", b"")
    rc, out = cli("read", "-f", "e.txt")
    assert rc == 0 and out["total"] == 0 and out["content"] == ""


def test_read_end_auto_without_a_function_gives_a_window(cli, root):
    write(root / "f.txt", "".join(f"line {i}\n" for i in range(1, 101)))
    rc, out = cli("read", "-f", "f.txt", "-s", "50", "-e", "auto")
    assert (out["start"], out["end"]) == (40, 70)


def test_read_targets(cli, root):
    write(root / "f.txt", "alpha\n# TODO one\nbeta\n# TODO two\n")
    assert cli("read", "-f", "f.txt", "--target", "line:3")[1]["content"] == "3\tbeta"
    err = fails(cli, root / "f.txt", "read", "-f", "f.txt", "--target", "marker:TODO", code="AMBIGUOUS")
    assert err["candidates"] == [{"start": 2, "end": 2}, {"start": 4, "end": 4}]
    out = cli("read", "-f", "f.txt", "--target", "marker:TODO", "--occurrence", "2")[1]
    assert out["content"] == "4\t# TODO two"
    fails(cli, None, "read", "-f", "f.txt", "--target", "marker:nothing", code="NOT_FOUND")
    fails(
        cli, None, "read", "-f", "f.txt", "--target", "line:2", "-s", "1", code="INVALID_ARGUMENT", status=2
    )
    fails(cli, None, "read", "-f", "f.txt", "--target", "colour:red", code="INVALID_ARGUMENT", status=2)


def test_read_text_output(run_be, root):
    write(root / "f.txt", "a\nb")
    proc = run_be("read", "-f", "f.txt")
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("f.txt: lines 1-2 of 2") and lines[1:3] == ["1\ta", "2\tb"]
    assert lines[3].startswith("warning: ")


# --- replace ---------------------------------------------------------------------------------------


def test_replace_lines(cli, root):
    f = write(root / "f.txt", "a\nb\nc\n")
    rc, out = cli("replace", "-f", "f.txt", "-s", "2", "-c", "B1\nB2")
    assert rc == 0 and f.read_bytes() == b"a\nB1\nB2\nc\n"
    assert (out["start"], out["end"], out["removed"], out["added"], out["total"]) == (2, 2, 1, 2, 4)
    assert out["diff"] == "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B1\n+B2\n c"
    assert out["balance"] == "not checked" and len(out["event_id"]) == 6


def test_a_lone_cr_ending_new_last_text_stays_in_a_file_without_a_final_newline(cli, root):
    """Found by a fuzzer: `x\\r` (a lone CR is text) as the new last line of a file without a final
    newline lost its CR: the rule that drops the line's terminator took `\\r\\n` as one."""
    f = write(root / "k.txt", "a")
    write(root / "c.txt", b"x\r")
    assert cli("replace", "-f", "k.txt", "-s", "1", "--content-file", "c.txt")[0] == 0
    assert f.read_bytes() == b"x\r"
    f = write(root / "m.txt", b"a\r\nb")  # (a CRLF file keeps dropping its whole terminator)
    assert cli("replace", "-f", "m.txt", "-s", "2", "-c", "B")[0] == 0
    assert f.read_bytes() == b"a\r\nB"


def test_content_whose_line_breaks_carry_a_doubled_cr_gets_the_files_line_ending(root, be_env):
    """Found by the encodings attack: content `p\r\r\nq\r\r\n` (a client turned \\n into \\r\\n in
    text that had \\r\\n already) made an LF file CRLF: the write kept `\\r` + the file's LF, the
    diff showed nothing of it, and replace, insert and be-edit did the same line by line."""
    server = Server(cwd=root, env=be_env)
    try:
        for name, args in (
            ("be-write", {"content": "p\r\r\nq\r\r\n"}),
            ("be-replace", {"start": 2, "content": "B\r\r\n"}),
            ("be-insert", {"after_line": 1, "content": "new\r\r\nline\r\r\n"}),
            ("be-edit", {"edits": [{"file": "f.txt", "start": 2, "content": "B\r\r\n"}]}),
            ("be-replace", {"old": "b", "content": "B\r\r\nC"}),
        ):
            write(root / "f.txt", b"a\nb\n")
            server.ok(name, dict(args, file="f.txt") if name != "be-edit" else args)
            assert b"\r" not in (root / "f.txt").read_bytes(), (name, (root / "f.txt").read_bytes())
    finally:
        server.close()
    write(root / "w.txt", b"a\r\nb\r\n")  # (a CRLF file gets CRLF, one CR each)
    rc = run_cli("replace", "-f", "w.txt", "-s", "1", "-c", "A\r\r\nZ", cwd=root, env=be_env).returncode
    assert rc == 0 and (root / "w.txt").read_bytes() == b"A\r\nZ\r\nb\r\n"
    # (the second regression pass: a file that holds \r\r\n itself, written back as it is, stays so)
    odd = b"line1\r\nline2\r\r\nline3\r\n"
    write(root / "odd.txt", odd)
    write(root / "copy.txt", odd)
    rc = run_cli("write", "-f", "odd.txt", "--content-file", "copy.txt", cwd=root, env=be_env).returncode
    assert rc == 0 and (root / "odd.txt").read_bytes() == odd
    rc = run_cli("replace", "-f", "odd.txt", "-s", "3", "-c", "b\r\r\n", cwd=root, env=be_env).returncode
    assert rc == 0 and (root / "odd.txt").read_bytes() == b"line1\r\nline2\r\r\nb\r\r\n"


def test_replace_keeps_crlf_bom_and_missing_final_newline(cli, root):
    f = write(root / "f.txt", b"\xef\xbb\xbfa\r\nb\r\nc")
    cli("replace", "-f", "f.txt", "-s", "3", "-c", "C\nD\n")
    assert f.read_bytes() == b"\xef\xbb\xbfa\r\nb\r\nC\r\nD"
    cli("replace", "-f", "f.txt", "-s", "1", "-c", "A")
    assert f.read_bytes() == b"\xef\xbb\xbfA\r\nb\r\nC\r\nD"


def test_replace_with_empty_content_deletes_lines(cli, root):
    f = write(root / "f.txt", "a\nb\nc\n")
    assert cli("replace", "-f", "f.txt", "-s", "1", "-e", "2", "-c", "")[0] == 0
    assert f.read_bytes() == b"c\n"


def test_replace_by_old_deleting_the_last_lines_keeps_the_missing_final_newline(cli, root):
    """Found by an attack: `--old 'b\nc'` with empty content in a file `a\nb\nc` left `a\n`, a final
    newline the file never had, where `delete -s 2 -e 3` leaves `a`; in an edit batch too."""
    for old in ("b\nc", "b\nc\n", "b\r\nc"):
        f = write(root / "f.txt", b"a\r\nb\r\nc")
        assert cli("replace", "-f", "f.txt", "--old", old, "-c", "")[0] == 0
        assert f.read_bytes() == b"a", old
    write(root / "f.txt", b"a\nb\nc")
    edits = [{"op": "replace", "file": "f.txt", "old": "b\nc", "content": ""}]
    edits.append({"op": "insert", "file": "f.txt", "after_line": 0, "content": "z"})
    assert cli("edit", "--edits-file", "-", input=json.dumps(edits).encode())[0] == 0
    assert (root / "f.txt").read_bytes() == b"z\na"
    write(root / "g.txt", b"b\nc")  # (every line deleted: an empty file)
    assert cli("replace", "-f", "g.txt", "--old", "b\nc", "-c", "")[0] == 0
    assert (root / "g.txt").read_bytes() == b""


def test_replace_checks_old(cli, root):
    f = write(root / "f.txt", "x = 1\ny = 2\nx = 1\n")
    assert cli("replace", "-f", "f.txt", "-s", "2", "--old", "y = 2\n", "-c", "y = 3")[0] == 0
    err = fails(cli, f, "replace", "-f", "f.txt", "-s", "2", "--old", "x = 1", "-c", "z", code="MISMATCH")
    assert err["actual"] == "y = 3" and err["found_at"] == [{"start": 1, "end": 1}, {"start": 3, "end": 3}]


def test_replace_old_ignores_crlf_differences(cli, root):
    f = write(root / "f.txt", b"a\r\nb\r\n")
    assert cli("replace", "-f", "f.txt", "-s", "1", "-e", "2", "--old", "a\nb", "-c", "c")[0] == 0
    assert f.read_bytes() == b"c\r\n"


def test_replace_by_old_alone(cli, root):
    f = write(root / "f.py", "def f(a, b):\n    return a + b\n")
    rc, out = cli("replace", "-f", "f.py", "--old", "a + b", "-c", "a - b")
    assert rc == 0 and f.read_text() == "def f(a, b):\n    return a - b\n"
    assert (out["start"], out["end"]) == (2, 2)
    cli("replace", "-f", "f.py", "--old", "(a, b):\n    return", "-c", "(a):\n    yield")
    assert f.read_text() == "def f(a):\n    yield a - b\n"


def test_replace_by_old_forgives_trailing_whitespace_with_a_warning(cli, root):
    f = write(root / "f.txt", "keep\nvalue = 1   \nend\n")
    rc, out = cli("replace", "-f", "f.txt", "--old", "value = 1\nend", "-c", "value = 2\nend")
    assert rc == 0 and f.read_text() == "keep\nvalue = 2\nend\n"
    assert any("trailing whitespace" in w for w in out["warnings"])


def test_trailing_whitespace_of_old_forgiven_only_at_the_end_of_a_line(cli, root):
    """Found by an attack: `old` "total = 1 " (its space cut by the loose match) matched the start
    of "total = 10 + y", and the replace made "total = 2 0 + y"; "limit = 1\t" turned "limit =
    100" into "limit = 500". Whitespace cut from old's last line was trailing whitespace: the
    match must end where a line's text ends, else MISMATCH."""
    f = write(root / "a.py", "total = 10 + y\nprint(total)\n")
    fails(cli, f, "replace", "-f", "a.py", "--old", "total = 1 ", "-c", "total = 2 ", code="MISMATCH")
    f = write(root / "b.py", "if retry:\n    limit = 100\n")
    old = "if retry:\n    limit = 1\t"
    fails(cli, f, "replace", "-f", "b.py", "--old", old, "-c", "if retry:\n    limit = 5", code="MISMATCH")
    write(root / "b.py", "if retry:  \n    limit = 1\n")  # (where the line ends there, it still matches)
    rc, out = cli("replace", "-f", "b.py", "--old", old, "-c", "if retry:\n    limit = 5")
    assert rc == 0 and f.read_text() == "if retry:\n    limit = 5\n", out


def test_line_numbers_and_view_ids_take_ascii_digits_only(cli, root):
    """Found by an attack: `-s ١` (an Arabic-Indic one) edited line 1, and a viewed_code_id written
    with full-width digits (`v1:１-１:…`) was read as lines 1-1: \\d matches every script's digits."""
    f = write(root / "k.txt", "a\nb\n")
    bad = ("INVALID_ARGUMENT", 2)
    err = fails(cli, f, "replace", "-f", "k.txt", "-s", "\u0661", "-c", "x", code=bad[0], status=bad[1])
    assert "'--start' must be an integer" in err["message"], err
    _rc, out = cli("read", "-f", "k.txt", "-s", "1", "-e", "1")
    wide = out["viewed_code_id"].replace("v1:1-1", "v1:\uff11-\uff11")
    args = ("replace", "-f", "k.txt", "-s", "1", "-c", "x", "--viewed-code-id", wide)
    fails(cli, f, *args, code=bad[0], status=bad[1])


def test_content_starting_with_a_bom_at_the_start_of_a_bom_file_makes_no_second_bom(cli, root):
    """Found by an attack: in a UTF-8 file with a BOM, `replace -s 1 -c $'\\ufeffONE'` and an
    insert after line 0 wrote EF BB BF EF BB BF: a second BOM, which `write` already drops."""
    f = root / "b.txt"
    f.write_bytes(b"\xef\xbb\xbfone\ntwo\n")
    rc, out = cli("replace", "-f", "b.txt", "-s", "1", "-c", "\ufeffONE")
    assert rc == 0 and f.read_bytes() == b"\xef\xbb\xbfONE\ntwo\n", out
    rc, out = cli("insert", "-f", "b.txt", "--after-line", "0", "-c", "\ufeffZERO")
    assert rc == 0 and f.read_bytes() == b"\xef\xbb\xbfZERO\nONE\ntwo\n", out


def test_replace_by_old_never_forgives_indentation(cli, root):
    f = write(root / "f.txt", "if x:\n    go()\n")
    fails(cli, f, "replace", "-f", "f.txt", "--old", "if x:\n  go()", "-c", "z", code="MISMATCH")


def test_replace_ambiguous_and_missing_old(cli, root):
    f = write(root / "f.txt", "a = 1\nb = 2\na = 1\n")
    err = fails(cli, f, "replace", "-f", "f.txt", "--old", "a = 1", "-c", "z", code="AMBIGUOUS")
    assert err["candidates"] == [{"start": 1, "end": 1}, {"start": 3, "end": 3}]
    err = fails(cli, f, "replace", "-f", "f.txt", "--old", "b = 3", "-c", "z", code="MISMATCH")
    assert err["actual"] == "b = 2" and (err["start"], err["end"]) == (2, 2)
    fails(cli, f, "replace", "-f", "f.txt", "--old", "", "-c", "z", code="INVALID_ARGUMENT", status=2)
    fails(cli, f, "replace", "-f", "f.txt", "-c", "z", code="INVALID_ARGUMENT", status=2)


def test_replace_preview_brief_and_plain(cli, root):
    f = write(root / "f.txt", "a\nb\n")
    rc, out = cli("replace", "-f", "f.txt", "-s", "1", "-c", "A", "--preview")
    assert rc == 0 and out["preview"] is True and "event_id" not in out and f.read_bytes() == b"a\nb\n"
    rc, out = cli("replace", "-f", "f.txt", "-s", "1", "-c", "A", "--brief")
    assert "diff" not in out and "balance" not in out and out["total"] == 2
    rc, out = cli("replace", "-f", "f.txt", "-s", "2", "-c", "B", "--format", "plain")
    assert out["diff"] == "before:\n1\tA\n2\tb\nafter:\n1\tA\n2\tB"


def test_content_and_old_from_stdin_and_files(run_be, root):
    f = write(root / "f.txt", "a\nb\n")
    write(root / "old.txt", "b\n")
    proc = run_be("replace", "-f", "f.txt", "--old-file", "old.txt", "--content-file", "-", input=b"x\ty \n")
    assert proc.returncode == 0, proc.stderr
    assert f.read_bytes() == b"a\nx\ty \n"
    proc = run_be("replace", "-f", "f.txt", "-s", "1", "-c", "z", "--content-file", "old.txt")
    assert proc.returncode == 2 and f.read_bytes() == b"a\nx\ty \n"


def test_cli_content_is_verbatim(cli, root):
    f = write(root / "f.txt", "a\n")
    cli("write", "-f", "f.txt", "-c", "one\\ntwo\\nthree")
    assert f.read_bytes() == b"one\\ntwo\\nthree"


def test_viewed_code_id_in_the_cli(cli, root):
    f = write(root / "f.txt", "a\nb\nc\n")
    token = cli("read", "-f", "f.txt", "-s", "2", "-e", "3")[1]["viewed_code_id"]
    assert cli("replace", "-f", "f.txt", "-s", "2", "-c", "B", "--viewed-code-id", token)[0] == 0
    err = fails(
        cli, f, "replace", "-f", "f.txt", "-s", "3", "-c", "C", "--viewed-code-id", token, code="STALE_VIEW"
    )
    assert err["current"] == "2\tB\n3\tc"
    fails(
        cli,
        f,
        "delete",
        "-f",
        "f.txt",
        "-s",
        "1",
        "--viewed-code-id",
        "nonsense",
        code="INVALID_ARGUMENT",
        status=2,
    )


# --- insert ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "after, expected",
    [("0", b"new\na\nb\n"), ("1", b"a\nnew\nb\n"), ("-1", b"a\nb\nnew\n"), ("2", b"a\nb\nnew\n")],
)
def test_insert_positions(cli, root, after, expected):
    f = write(root / "f.txt", "a\nb\n")
    rc, out = cli("insert", "-f", "f.txt", "--after-line", after, "-c", "new")
    assert rc == 0 and f.read_bytes() == expected and out["added"] == 1 and out["total"] == 3


def test_insert_alias_and_errors(cli, root):
    f = write(root / "f.txt", "a\n")
    assert cli("insert", "-f", "f.txt", "--after", "1", "-c", "b")[0] == 0
    fails(cli, f, "insert", "-f", "f.txt", "--after", "5", "-c", "z", code="OUT_OF_RANGE")
    fails(cli, f, "insert", "-f", "f.txt", "--after", "-2", "-c", "z", code="INVALID_ARGUMENT", status=2)
    fails(cli, f, "insert", "-f", "f.txt", "--after", "1", "-c", "", code="INVALID_ARGUMENT", status=2)


def test_insert_into_empty_file(cli, root):
    f = write(root / "e.txt", b"")
    assert cli("insert", "-f", "e.txt", "--after", "0", "-c", "first")[0] == 0
    assert f.read_bytes() == b"first\n"


# --- delete ----------------------------------------------------------------------------------------


def test_delete_keeps_a_chip_of_the_deleted_text(cli, root, cache_dir):
    f = write(root / "f.txt", "a\r\nb\r\nc\r\n")
    rc, out = cli("delete", "-f", "f.txt", "-s", "2", "-e", "3")
    assert rc == 0 and f.read_bytes() == b"a\r\n"
    chip = out["chip"]
    assert any(chip in w for w in out["warnings"])
    (chip_file,) = cache_dir.glob(f"chips/*/chip-{chip}.json")
    assert json.loads(chip_file.read_text())["text"] == "b\r\nc\r\n"
    assert stat.S_IMODE(chip_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(chip_file.parent.stat().st_mode) == 0o700


def test_delete_last_line_without_final_newline(cli, root):
    f = write(root / "f.txt", "a\nb")
    cli("delete", "-f", "f.txt", "-s", "2")
    assert f.read_bytes() == b"a"


def test_delete_by_marker_and_preview(cli, root, cache_dir):
    f = write(root / "f.txt", "keep\nDROP me\nkeep\n")
    rc, out = cli("delete", "-f", "f.txt", "--target", "marker:DROP", "--preview")
    assert rc == 0 and out["preview"] and "chip" not in out and f.read_bytes() == b"keep\nDROP me\nkeep\n"
    assert not list(cache_dir.glob("chips/*/chip-*.json"))
    cli("delete", "-f", "f.txt", "--target", "marker:DROP")
    assert f.read_bytes() == b"keep\nkeep\n"


def test_delete_errors(cli, root):
    f = write(root / "f.txt", "a\nb\n")
    fails(cli, f, "delete", "-f", "f.txt", code="INVALID_ARGUMENT", status=2)
    fails(cli, f, "delete", "-f", "f.txt", "-s", "0", code="INVALID_ARGUMENT", status=2)
    fails(cli, f, "delete", "-f", "f.txt", "-s", "2", "-e", "1", code="INVALID_ARGUMENT", status=2)
    err = fails(cli, f, "delete", "-f", "f.txt", "-s", "2", "-e", "7", code="OUT_OF_RANGE")
    assert err["total"] == 2 and "1-2" in err["hint"]
    fails(cli, f, "delete", "-f", "f.txt", "-s", "two", code="INVALID_ARGUMENT", status=2)
    fails(cli, f, "delete", "-f", "f.txt", "-s", "1.5", code="INVALID_ARGUMENT", status=2)


# --- write -----------------------------------------------------------------------------------------


def test_write_creates_with_parents(cli, root):
    rc, out = cli("write", "-f", "deep/er/new.txt", "-c", "hello\nworld")
    assert rc == 0 and out["created"] is True and (out["lines"], out["bytes"]) == (2, 11)
    assert (root / "deep/er/new.txt").read_bytes() == b"hello\nworld"


def test_write_overwrite_keeps_eol_bom_encoding_and_mode(cli, root):
    f = write(root / "f.txt", b"\xff\xfe" + "a\r\nb\r\n".encode("utf-16-le"))
    os.chmod(f, 0o640)
    rc, out = cli("write", "-f", "f.txt", "-c", "x\ny\n")
    assert rc == 0 and out["created"] is False and out["diff"].startswith("--- a/f.txt")
    assert f.read_bytes() == b"\xff\xfe" + "x\r\ny\r\n".encode("utf-16-le")
    assert stat.S_IMODE(f.stat().st_mode) == 0o640


@pytest.mark.parametrize("original", [b"a\nb\r\r\nc\n", b"a\nb\r\nc\n", b"a\r\nb\nc\r\nd\r\n"])
def test_a_file_written_back_with_its_own_text_is_left_as_it_is(cli, root, original):
    """Found by the encodings attack: a write whose content is the file's own text, byte for byte,
    turned `\r\r\n` into `\r\n` in an LF file, and a mixed file's minority line endings into the
    dominant one, and said it changed the file (with an event). Its own text leaves it as it is."""
    f = write(root / "f.txt", original)
    rc, out = cli("write", "-f", "f.txt", "--content-file", "-", input=original)
    assert rc == 0 and out["changed"] is False and "event_id" not in out, out
    assert f.read_bytes() == original
    items = json.dumps(
        [{"op": "write", "file": "f.txt", "content": original.decode()}]
    )  # (and as an edit item:
    rc, out = cli("edit", "--edits-file", "-", input=items.encode())  # found by the regression pass)
    assert rc == 0 and out["changed"] is False and "event_id" not in out, out
    assert f.read_bytes() == original


def test_write_empty_content_and_preview(cli, root):
    f = write(root / "f.txt", "a\n")
    assert cli("write", "-f", "f.txt", "-c", "", "--preview")[1]["preview"] is True
    assert f.read_bytes() == b"a\n"
    cli("write", "-f", "f.txt", "-c", "")
    assert f.read_bytes() == b""
    assert not (root / "new").exists() and cli("write", "-f", "new/x.txt", "-c", "z", "--preview")[0] == 0
    assert not (root / "new").exists()


# --- files the tool must refuse ----------------------------------------------------------------------


def test_missing_file_and_directory(cli, root):
    (root / "d").mkdir()
    err = fails(cli, None, "read", "-f", "missing.txt", code="NOT_FOUND")
    assert "missing.txt" in err["message"]
    fails(cli, None, "replace", "-f", "d", "-s", "1", "-c", "x", code="INVALID_ARGUMENT", status=2)


def test_binary_and_encodings(cli, root):
    b = write(root / "b.bin", b"PK\x03\x04\x00\x00data")
    fails(cli, b, "replace", "-f", "b.bin", "-s", "1", "-c", "x", code="BINARY_FILE")
    g = write(root / "g.txt", "你好\n世界\n".encode("gbk"))
    err = fails(cli, g, "read", "-f", "g.txt", code="ENCODING")
    assert "--encoding" in err["hint"]
    assert cli("read", "-f", "g.txt", "--encoding", "gbk")[1]["content"] == "1\t你好\n2\t世界"
    assert cli("replace", "-f", "g.txt", "-s", "2", "-c", "朋友", "--encoding", "gbk")[0] == 0
    assert g.read_bytes() == "你好\n朋友\n".encode("gbk")
    bad = write(root / "bad.txt", b"ok\n\x81\n")
    fails(cli, bad, "replace", "-f", "bad.txt", "-s", "1", "-c", "x", "--encoding", "gbk", code="ENCODING")


def test_sandbox_escapes_are_refused(cli, root, tmp_path):
    outside = write(tmp_path / "outside.txt", "secret\n")
    (root / "link").symlink_to(outside)
    (root / "dirlink").symlink_to(tmp_path)
    for path in ("../outside.txt", str(outside), "link", "dirlink/outside.txt", f"file://{outside}"):
        err = fails(cli, outside, "read", "-f", path, "--root", str(root), code="SANDBOX")
        assert str(root) in err["message"]
    fails(cli, outside, "write", "-f", "../new.txt", "-c", "x", "--root", str(root), code="SANDBOX")
    assert not (tmp_path / "new.txt").exists()
    write(root / "..notes", "fine\n")
    assert cli("read", "-f", "..notes", "--root", str(root))[0] == 0


def test_a_replace_by_target_in_c_with_conditional_arms_keeps_the_next_function(cli, root):
    """Found by an attack: `#if` / `if (x) {` / `#else` / `if (y) {` / `#endif` made a's range run
    to b's `}`; the replace by target removed b and the namespace's `}`, and said `balance: ok`."""
    text = (
        "namespace ns {\nint a(void) {\n#if FOO\n    if (x) {\n#else\n    if (y) {\n#endif\n        return 1;\n"
        "    }\n    return 0;\n}\n\nint b(void) {\n    return 2;\n}\n}  // namespace ns\n"
    )
    f = write(root / "fr3.cpp", text)
    rc, out = cli(
        "replace", "-f", "fr3.cpp", "--target", "function:a", "-c", "int a(void) {\n    return 0;\n}"
    )
    assert rc == 0, out
    assert (
        f.read_text() == "namespace ns {\nint a(void) {\n    return 0;\n}\n" + text[text.index("\nint b") :]
    )


def test_an_empty_root_is_a_usage_error_not_no_root(run_be, root, tmp_path):
    """Found by an attack: `--root "$UNSET"` was taken for no root, so a write left the folder."""
    outside = write(tmp_path / "outside.txt", "secret\n")
    for position in ("before", "after"):
        args = ["write", "-f", str(outside), "-c", "pwned"]
        args = ["--root", "", *args] if position == "before" else [*args, "--root", ""]
        done = run_be(*args)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "--root" in done.stderr.decode() and "empty" in done.stderr.decode()
        assert outside.read_text() == "secret\n"


def test_symlink_inside_is_edited_through(cli, root):
    target = write(root / "real.txt", "a\n")
    (root / "alias.txt").symlink_to("real.txt")
    rc, out = cli("replace", "-f", "alias.txt", "-s", "1", "-c", "b", "--root", str(root))
    assert rc == 0 and target.read_bytes() == b"b\n" and (root / "alias.txt").is_symlink()
    assert out["path"] == str(target)


def test_hard_links_stay_shared(cli, root):
    f = write(root / "f.txt", "a\n")
    os.link(f, root / "g.txt")
    rc, out = cli("replace", "-f", "f.txt", "-s", "1", "-c", "b")
    assert rc == 0 and (root / "g.txt").read_bytes() == b"b\n"
    assert any("hard links" in w for w in out["warnings"])


def test_read_only_file_and_folder(cli, root):
    f = write(root / "ro.txt", "a\n")
    os.chmod(f, 0o444)
    err = fails(cli, f, "replace", "-f", "ro.txt", "-s", "1", "-c", "b", code="PERMISSION")
    # (the contract audit: the message carries the system's words, not English of ours, even in zh)
    assert err["message"].endswith("ro.txt: " + os.strerror(errno.EACCES)), err
    assert "no write permission" in err["hint"]
    folder = root / "locked"
    g = write(folder / "g.txt", "a\n")
    os.chmod(folder, 0o555)
    try:
        fails(cli, g, "replace", "-f", "locked/g.txt", "-s", "1", "-c", "b", code="PERMISSION")
        fails(cli, None, "write", "-f", "locked/new.txt", "-c", "b", code="PERMISSION")
        assert not (folder / "new.txt").exists()
    finally:
        os.chmod(folder, 0o755)


def test_no_temp_files_are_left_behind(cli, root):
    write(root / "f.txt", "a\n")
    for i in range(3):
        cli("replace", "-f", "f.txt", "-s", "1", "-c", str(i))
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]


def test_snapshots_are_persisted_privately(cli, root, cache_dir):
    f = write(root / "f.txt", "before\n")
    event = cli("replace", "-f", "f.txt", "-s", "1", "-c", "after")[1]["event_id"]
    (meta,) = cache_dir.glob(f"snapshots/*/*-{event}.json")
    record = json.loads(meta.read_text())
    assert record["before"] == "bytes" and record["file"] == str(f) and "before\n" not in meta.read_text()
    assert meta.with_suffix(".bin").read_bytes() == b"before\n"
    for path in (meta, meta.with_suffix(".bin")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_chinese_messages(run_be, root):
    write(root / "f.txt", "a\n")
    proc = run_be("read", "-f", "nope.txt", "--lang", "zh")
    assert proc.returncode == 1 and "文件不存在" in proc.stderr.decode()
    proc = run_be("read", "-f", "nope.txt", env={"LANG": "zh_CN.UTF-8"})
    assert "文件不存在" in proc.stderr.decode()


def test_python_module_and_console_script_agree(run_be, root):
    import shutil

    from harness import run_cli

    exe = shutil.which("better-edit-tools")
    if not exe or os.environ.get("BE_EXE"):
        pytest.skip("the console script is not installed")
    write(root / "f.txt", "a\nb\n")
    via_module = run_be("read", "-f", "f.txt", "-o", "json").stdout
    via_script = run_cli("read", "-f", "f.txt", "-o", "json", cwd=root, env=None, command=[exe]).stdout
    assert json.loads(via_module)["content"] == json.loads(via_script)["content"]


# --- structure: balance, func-range, tag-range, and the checks edits make (docs/cli.md#balance-func-range-tag-range, docs/cli.md#delete) -

PY_SOURCE = '''import os


class Store:
    """A store."""

    @property
    def size(self):
        return len(self.items)

    def add(self, item):
        if item:
            self.items.append(item)
        return self


def helper(x):
    return {"x": [x, (x + 1)]}
'''


def test_balance_command(cli, run_be, root):
    write(root / "ok.js", "const s = '(';\nfunction f(a) { return [a, `${a}}`]; }\n")
    rc, out = cli("balance", "-f", "ok.js")
    assert (
        rc == 0 and out["status"] == "balanced" and out["language"] == "javascript" and out["unmatched"] == []
    )
    write(root / "bad.js", "function f(a) {\n  return (a;\n}\n")
    rc, out = cli("balance", "-f", "bad.js", "-v")
    assert (
        out["status"] == "unbalanced"
        and {"symbol": "(", "line": 2, "column": 10, "problem": "unclosed"} in out["unmatched"]
    )
    assert "pairs" in out
    write(root / "notes.unknownext", "(((\n")
    rc, out = cli("balance", "-f", "notes.unknownext")
    assert rc == 0 and out["status"] == "not_checked" and out["reason"]
    write(root / "blob.c", b"\x00\x01(")
    assert cli("balance", "-f", "blob.c")[1]["status"] == "not_checked"
    proc = run_be("balance", "-f", "bad.js")
    assert proc.returncode == 0 and b"2:10: unclosed (" in proc.stdout


def test_func_range_command(cli, root):
    write(root / "store.py", PY_SOURCE)
    rc, out = cli("func-range", "-f", "store.py", "-l", "13")
    assert rc == 0 and (out["start"], out["end"], out["kind"], out["name"]) == (11, 14, "method", "add")
    assert (out["language"], out["file"]) == ("python", "store.py")
    rc, out = cli("func-range", "-f", "store.py", "-l", "9")
    assert (out["start"], out["end"], out["name"]) == (7, 9, "size")  # the decorator belongs to it
    rc, out = cli("func-range", "-f", "store.py", "-l", "13", "--outer")
    assert (out["start"], out["end"], out["kind"], out["name"]) == (4, 14, "class", "Store")
    fails(cli, None, "func-range", "-f", "store.py", "-l", "1", code="NOT_FOUND")
    fails(cli, None, "func-range", "-f", "store.py", "-l", "99", code="OUT_OF_RANGE")


def test_tag_range_command(cli, root):
    write(
        root / "page.html",
        "<html>\n<body>\n<ul>\n  <li>one\n  <li>two\n</ul>\n<div\n  class='a>b'>\n  text\n</div>\n</body>\n</html>\n",
    )
    assert (
        cli("tag-range", "-f", "page.html", "-l", "5")[1]["tag"] == "ul"
    )  # an unclosed <li> does not hide <ul>
    rc, out = cli("tag-range", "-f", "page.html", "-l", "9")
    assert (out["start"], out["end"], out["tag"]) == (7, 10, "div")
    write(root / "plain.py", "x = 1\n")
    fails(cli, None, "tag-range", "-f", "plain.py", "-l", "1", code="NOT_FOUND")


def test_read_end_auto_and_function_targets(cli, root):
    write(root / "store.py", PY_SOURCE)
    rc, out = cli("read", "-f", "store.py", "-s", "12", "-e", "auto")
    assert (out["start"], out["end"]) == (11, 14)
    assert cli("read", "-f", "store.py", "--target", "function:helper")[1]["start"] == 17
    err = fails(cli, None, "read", "-f", "store.py", "--target", "function:halper", code="NOT_FOUND")
    assert "helper" in err["hint"]
    write(root / "page.html", "<main>\n<section id='s'>\n<p>x</p>\n</section>\n</main>\n")
    out = cli("read", "-f", "page.html", "--target", "tag:section")[1]
    assert (out["start"], out["end"]) == (2, 4)


def test_a_csharp_constructor_with_an_expression_body_is_a_definition_of_its_own(cli, root):
    """`--target function:Box` in a C# class Box whose constructor is `public Box(int v) => …;`
    named the whole class (no block holds that constructor), so a delete meant for the
    constructor deleted the class. The class and the constructor are now two definitions: an edit
    is AMBIGUOUS, `--occurrence 2` deletes the constructor alone."""
    source = "class Box\n{\n    int v;\n    public Box(int v) => this.v = v;\n    public int Get() => v;\n}\n"
    f = write(root / "Box.cs", source)
    err = fails(cli, f, "delete", "-f", "Box.cs", "--target", "function:Box", code="AMBIGUOUS")
    assert [(c["start"], c["end"]) for c in err["candidates"]] == [(1, 6), (4, 4)]
    rc, out = cli("delete", "-f", "Box.cs", "--target", "function:Box", "--occurrence", "2")
    assert rc == 0 and f.read_text() == source.replace("    public Box(int v) => this.v = v;\n", ""), out
    rc, out = cli("delete", "-f", "Box.cs", "--target", "function:Get")
    assert rc == 0 and f.read_text() == "class Box\n{\n    int v;\n}\n", out


def test_a_tag_target_is_the_element_its_open_tag_starts(cli, root):
    """Found by an attack (3,014 of 96,442 targets over real HTML differed from parse5): a tag
    target took the innermost element of that name around the line its open tag is on, so in
    `<div class="container"><div class="row">` the first div was the inner one (a replace left a
    stray </div>), and `--occurrence 3` naming an `<li>` left open gave the `<li>` around it (a
    delete of the whole item, balance ok). An `<li>` with no end tag and no `<li>` around it was
    INTERNAL. The Nth open tag names its own element; one without an end tag is NOT_FOUND."""
    f = write(
        root / "nest.html",
        '<body>\n<div class="container"><div class="row">\n  <p>x</p>\n</div>\n</div>\n</body>\n',
    )
    rc, out = cli("read", "-f", "nest.html", "--target", "tag:div")
    assert rc == 0 and (out["start"], out["end"]) == (2, 5), out
    li = "<ol>\n<li>Item one\n  <ul>\n  <li>sub a\n  <li>sub b\n  </ul>\n</li>\n<li>Item two</li>\n</ol>\n"
    f = write(root / "li.html", li)
    err = fails(
        cli, f, "delete", "-f", "li.html", "--target", "tag:li", "--occurrence", "3", code="NOT_FOUND"
    )
    assert (
        err["message"] == "the element <li> that opens at line 5 of li.html has no end tag: it has no range"
    )
    rc, out = cli("delete", "-f", "li.html", "--target", "tag:li", "--occurrence", "4")
    assert rc == 0 and f.read_text() == li.replace("<li>Item two</li>\n", ""), out
    f = write(root / "open.html", "<ul>\n<li>first\n<li>second\n</ul>\n")
    fails(cli, f, "read", "-f", "open.html", "--target", "tag:li", code="NOT_FOUND")


def test_a_function_defined_twice_is_never_guessed(cli, root):
    """`--target function:run` with a `run` in two classes took the first, so a delete or replace
    meant for B.run changed A.run. For an edit several definitions are AMBIGUOUS with their
    ranges, as a marker on several lines is; a read shows the first with a warning;
    `--occurrence N` picks one. A tag target stays the first element of that name, and
    `--occurrence` picks another."""
    source = (
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 2\n"
    )
    f = write(root / "t.py", source)
    err = fails(cli, f, "delete", "-f", "t.py", "--target", "function:run", code="AMBIGUOUS")
    assert [(c["start"], c["end"]) for c in err["candidates"]] == [(2, 3), (6, 7)]
    assert "occurrence" in err["hint"]
    fails(cli, f, "replace", "-f", "t.py", "--target", "function:run", "-c", "x", code="AMBIGUOUS")
    fails(
        cli, f, "delete", "-f", "t.py", "--target", "function:run", "--occurrence", "3", code="OUT_OF_RANGE"
    )
    rc, out = cli("read", "-f", "t.py", "--target", "function:run")  # a read shows the first, and says so
    assert rc == 0 and (out["start"], out["end"]) == (2, 3) and "defined 2 times" in out["warnings"][0]
    assert "add --occurrence N for another" in out["warnings"][0], (
        out
    )  # (the newcomer review: the JSON words)
    rc, out = cli("delete", "-f", "t.py", "--target", "function:run", "--occurrence", "2")
    assert rc == 0 and f.read_text() == "class A:\n    def run(self):\n        return 1\n\nclass B:\n", out
    write(root / "p.html", "<div>\n<p>a</p>\n</div>\n<div>\n<p>b</p>\n</div>\n")
    assert (cli("read", "-f", "p.html", "--target", "tag:div")[1]["start"]) == 1
    rc, out = cli("read", "-f", "p.html", "--target", "tag:div", "--occurrence", "2")
    assert (out["start"], out["end"]) == (4, 6)


def test_a_function_target_may_name_its_class(cli, root):
    """Models name methods as they would call them (`B.run`, `B::run`); that found nothing
    ("function 'B.run' not found"), so a second call got AMBIGUOUS and a third needed
    --occurrence. A qualified name picks the definitions of its last part inside a definition of
    the rest (at any depth: `B.run` also names B.Inner.run, and an edit by it is AMBIGUOUS); a
    qualifier that holds none is NOT_FOUND, never a guess."""
    source = (
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 2\n"
        "\n    class Inner:\n        def run(self):\n            return 3\n"
    )
    f = write(root / "t.py", source)
    for name, lines in (("A.run", (2, 3)), ("B.Inner.run", (10, 11)), ("B::Inner::run", (10, 11))):
        rc, out = cli("read", "-f", "t.py", "--target", "function:" + name)
        assert rc == 0 and (out["start"], out["end"]) == lines and not out.get("warnings"), (name, out)
    err = fails(cli, f, "delete", "-f", "t.py", "--target", "function:B.run", code="AMBIGUOUS")
    assert [(c["start"], c["end"]) for c in err["candidates"]] == [(6, 7), (10, 11)]
    fails(cli, f, "replace", "-f", "t.py", "--target", "function:C.run", "-c", "x", code="NOT_FOUND")
    fails(cli, f, "delete", "-f", "t.py", "--target", "function:A.Inner", code="NOT_FOUND")
    rc, out = cli(
        "replace", "-f", "t.py", "--target", "function:A.run", "-c", "    def run(self):\n        return 0"
    )
    assert rc == 0 and f.read_text() == source.replace("return 1", "return 0"), out
    js = write(
        root / "c.js",
        "class Cart {\n  total() {\n    return 1;\n  }\n}\nfunction total() {\n  return 2;\n}\n",
    )
    rc, out = cli("delete", "-f", "c.js", "--target", "function:Cart.total")
    assert rc == 0 and js.read_text() == "class Cart {\n}\nfunction total() {\n  return 2;\n}\n", out
    # a method written outside its type: a Go receiver, a C++ out-of-class definition
    write(
        root / "c.go",
        "package m\n\ntype Cart struct{}\n\nfunc (c *Cart) Total() int {\n\treturn 1\n}\n\nfunc Total() int {\n\treturn 0\n}\n",
    )
    write(root / "c.cpp", "int shop::Cart::total() {\n  return 1;\n}\nint total() {\n  return 2;\n}\n")
    for file, name, lines in (
        ("c.go", "Cart.Total", (5, 7)),
        ("c.cpp", "Cart::total", (1, 3)),
        ("c.cpp", "shop::Cart::total", (1, 3)),
    ):
        rc, out = cli("read", "-f", file, "--target", "function:" + name)
        assert rc == 0 and (out["start"], out["end"]) == lines, (name, out)
    fails(cli, None, "read", "-f", "c.go", "--target", "function:Shop.Total", code="NOT_FOUND")
    fails(cli, None, "read", "-f", "c.cpp", "--target", "function:Shop::total", code="NOT_FOUND")


def test_the_default_hint_speaks_of_options_and_commands_on_the_command_line(cli, root, be_env):
    """Found by the newcomer review: the CLI's default hint said "correct the argument and call
    again", the server's words."""
    write(root / "t.txt", "hi\n")
    rc, out = cli("read", "-f", "t.txt", "--encoding", "hex")
    assert rc == 2 and out["error"]["hint"] == "correct the option and run the command again", out
    server = Server(cwd=root, env=be_env)
    try:
        error = server.err("be-read", "INVALID_ARGUMENT", file="t.txt", encoding="hex")
        assert error["hint"] == "correct the argument and call again", error
    finally:
        server.close()


@pytest.mark.parametrize(
    "case, code, status, hint",
    [
        ("creates-existing", "INVALID_ARGUMENT", 2, "make the diff against the file as it is now"),
        ("no-hunk", "INVALID_ARGUMENT", 2, "pass a unified diff"),
        ("rename", "INVALID_ARGUMENT", 2, "git apply"),
        ("wrong-encoding", "ENCODING", 1, "name the encoding it is in"),
    ],
)
def test_errors_of_a_wrong_patch_or_encoding_say_what_to_do(cli, root, case, code, status, hint):
    """These said only "correct the argument and call again"."""
    f = write(root / "t.txt", b"caf\xe9\n" if case == "wrong-encoding" else b"hi\n")
    patches = {
        "creates-existing": "--- /dev/null\n+++ b/t.txt\n@@ -0,0 +1 @@\n+x\n",
        "no-hunk": "just some text\n",
        "rename": "diff --git a/t.txt b/u.txt\nsimilarity index 100%\nrename from t.txt\nrename to u.txt\n",
    }
    if case in patches:
        write(root / "p.diff", patches[case])
        err = fails(cli, f, "patch", "--patch-file", "p.diff", code=code, status=status)
    else:
        err = fails(cli, f, "read", "-f", "t.txt", "--encoding", "shift_jis", code=code, status=status)
    assert hint in err["hint"], err


def test_delete_refuses_an_unbalanced_range_unless_forced(cli, root):
    js = write(root / "a.js", "function f() {\n  return 1;\n}\n")
    err = fails(cli, js, "delete", "-f", "a.js", "-s", "1", code="UNBALANCED")
    assert '"{"' in err["message"] and err["unmatched"][0]["line"] == 1
    rc, out = cli("delete", "-f", "a.js", "-s", "1", "--force")
    assert rc == 0 and any("forced" in w for w in out["warnings"]) and js.read_text() == "  return 1;\n}\n"
    f = write(root / "store.py", PY_SOURCE)
    rc, out = cli("delete", "-f", "store.py", "--target", "function:add")
    assert rc == 0 and "def add" not in f.read_text() and out["balance"] == "ok"


def test_deleting_a_function_takes_its_block_comment_whole_even_with_a_blank_line_in_it(cli, root):
    """A block comment holding a blank line above a function (Go's ppc64/obj9.go, commented-out
    code) was climbed only up to that blank line: deleting the function left `/*` without its end,
    which turned the rest of the file into a comment."""
    go = write(root / "a.go", "package p\n\n/*\nold code\n\nmore\n*/\nfunc f() {\n\tx()\n}\n\nfunc g() {}\n")
    rc, out = cli("delete", "-f", "a.go", "--target", "function:f")
    assert rc == 0 and go.read_text() == "package p\n\n\nfunc g() {}\n", out
    write(root / "a.js", "let a = 1; /* note\n\n */\nfunction f() {\n  return a;\n}\n")
    assert cli("func-range", "-f", "a.js", "-l", "5")[1]["start"] == 4  # (code before `/*`: not its doc)


def test_replacing_a_typescript_function_with_an_object_return_type_replaces_its_body_too(cli, root):
    """`): {…} | null {`: the return type's braces were taken for the function, so a replace by
    target left the old body behind it (with only a balance warning)."""
    ts = write(root / "a.ts", "function size(o: string): {\n  unit: string;\n} | null {\n  return null;\n}\n")
    rc, out = cli("replace", "-f", "a.ts", "--target", "function:size", "-c", "const size = () => null;")
    assert rc == 0 and ts.read_text() == "const size = () => null;\n" and out["balance"] == "ok", out


def test_deleting_a_ruby_def_takes_its_heredoc_whole(cli, root):
    """A heredoc holding `end` at the def's indentation (RubyGems' installer.rb) ended the def
    there: a delete by target cut the heredoc in two."""
    rb = write(root / "a.rb", "def script\n  <<-TEXT\nif x\nend\n  TEXT\nend\n\ndef other\nend\n")
    rc, out = cli("delete", "-f", "a.rb", "--target", "function:script")
    assert rc == 0 and rb.read_text() == "\ndef other\nend\n", out


def test_edits_report_only_the_imbalance_they_introduced(cli, root):
    f = write(root / "a.js", "function f() {\n  return [1, 2];\n}\nconst broken = (;\n")
    rc, out = cli("replace", "-f", "a.js", "-s", "2", "-c", "  return [1, 3];")
    assert rc == 0 and out["balance"] == "ok"  # line 4 was broken before: not reported again
    rc, out = cli("replace", "-f", "a.js", "-s", "2", "-c", "  return [1, 3;")
    assert rc == 0 and out["balance"].startswith("edit left") and '"["' in out["balance"]
    assert f.read_text().count("[1, 3;") == 1


def test_replace_by_old_keeps_line_structure(cli, root):
    f = write(root / "f.txt", "a\nb\n")
    assert cli("replace", "-f", "f.txt", "--old", "a\n", "-c", "A")[0] == 0
    assert f.read_bytes() == b"A\nb\n"  # old ended its line, so does the content
    assert cli("replace", "-f", "f.txt", "--old", "b", "-c", "B\n")[0] == 0
    assert f.read_bytes() == b"A\nB\n"  # old stopped inside the line: no newline inserted
    rc, out = cli("replace", "-f", "f.txt", "--old", "A\n", "-c", "")
    assert rc == 0 and f.read_bytes() == b"B\n" and (out["removed"], out["added"], out["total"]) == (1, 0, 1)


def test_unreadable_content_file_is_a_usage_error(cli, root):
    f = write(root / "f.txt", "a\n")
    fails(
        cli,
        f,
        "replace",
        "-f",
        "f.txt",
        "-s",
        "1",
        "--content-file",
        "nope.txt",
        code="INVALID_ARGUMENT",
        status=2,
    )


def test_an_unusable_cache_does_not_stop_an_edit(run_be, root, tmp_path):
    """The edit stands without a snapshot. Found by the resource attack: the CLI answered an
    `event_id` for a snapshot kept nowhere (a command keeps no memory), and said only "another
    process" could not roll it back; it has no id now, and says it cannot be rolled back."""
    f = write(root / "f.txt", "a\n")
    blocker = write(tmp_path / "not-a-folder", "x")
    proc = run_be(
        "replace",
        "-f",
        "f.txt",
        "-s",
        "1",
        "-c",
        "b",
        "-o",
        "json",
        env={"BETTER_EDIT_CACHE_DIR": str(blocker)},
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert f.read_bytes() == b"b\n" and "event_id" not in answer, answer
    assert any(
        "not persisted" in w and "has no snapshot and cannot be rolled back" in w for w in answer["warnings"]
    )
    said = " ".join(answer["warnings"])  # (the resource attack: "(Not a directory)" named no path)
    assert (
        f"could not be kept (Not a directory: {blocker}" in said and f"(Not a directory: {blocker}" in said
    ), said


def test_delete_inside_a_multiline_string_is_not_a_false_alarm(cli, root):
    f = write(root / "doc.py", 'TEXT = """\nopen ( here\nand [ there\n"""\n')
    rc, out = cli("delete", "-f", "doc.py", "-s", "2", "-e", "3")
    assert rc == 0 and f.read_text() == 'TEXT = """\n"""\n' and out["balance"] == "ok"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_value_that_starts_with_a_dash_is_explained(run_be, root, lang):
    """`-c "-x"` (a list item, a flag in a config file): argparse reads -x as an option and said
    only "expected one argument"; the error now says how to give such a value, which then works."""
    (root / "f.txt").write_text("a\n")
    proc = run_be("--lang", lang, "replace", "-f", "f.txt", "-s", "1", "-c", "-x")
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2 and lines[-1].endswith("--content=-x"), lines
    assert lines[-1].startswith("hint: ") and "--content/-c" in lines[-2], lines
    assert (root / "f.txt").read_text() == "a\n"
    proc = run_be("--lang", lang, "replace", "-f", "f.txt", "-s", "1", "--content=-x")
    assert proc.returncode == 0 and (root / "f.txt").read_text() == "-x\n", proc.stderr


def test_chinese_help_and_usage_errors_have_no_english_argparse_words(run_be):
    proc = run_be("--lang", "zh", "replace", "--help")
    text = proc.stdout.decode()
    assert proc.returncode == 0 and "用法" in text and "usage:" not in text and "show this help" not in text
    proc = run_be("--lang", "zh", "read")
    assert (
        proc.returncode == 2
        and "缺少必需参数" in proc.stderr.decode()
        and "required" not in proc.stderr.decode()
    )


def test_a_large_output_reaches_the_pipe_whole(run_be, root):
    """A CLI run ends its own process once done (docs/behaviour.md#limits): all of a large output
    must still be written out first, in text and in JSON."""
    lines = [f"line {n} " + "x" * (n % 70) for n in range(60000)]
    write(root / "big.txt", "\n".join(lines) + "\n")
    text = run_be("read", "-f", "big.txt", "-s", "1", "-e", "60000")
    assert text.returncode == 0 and text.stdout.decode().endswith("\n60000\t" + lines[-1] + "\n")
    result = run_be("read", "-f", "big.txt", "--output", "json")
    out = json.loads(result.stdout)
    assert result.returncode == 0 and out["content"].count("\n") == 59999, out.get("warnings")


def test_global_options_before_the_command_and_unknown_arguments_after_it(run_be, root):
    """A command line whose command comes first, or after global options only, is read by the
    command's own parser: global options work before and after the command, and an unknown
    argument is named with the command's usage."""
    write(root / "a.txt", "one\ntwo\n")
    for args in (
        ("--lang", "zh", "--no-prefix", "read", "-f", "a.txt", "-o", "json"),
        ("--lang=zh", "read", "--no-prefix", "-f", "a.txt", "-o", "json"),
        ("read", "-f", "a.txt", "--no-prefix", "--lang", "zh", "-o", "json"),
        ("--root", str(root), "--underscore-names", "read", "-f", "a.txt", "-o", "json"),
    ):
        proc = run_be(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert json.loads(proc.stdout)["content"] == "1\tone\n2\ttwo", args
    for args in (("--lang", "zh", "read", "-f", "gone.txt"), ("read", "-f", "gone.txt", "--lang=zh")):
        proc = run_be(*args)
        assert proc.returncode == 1 and "gone.txt" in proc.stderr.decode(), args
        assert any("\u4e00" <= ch <= "\u9fff" for ch in proc.stderr.decode()), args  # in Chinese
    sub = root / "sub"
    sub.mkdir()
    for args in (
        ("--root", str(sub), "read", "-f", "../a.txt"),
        ("read", "-f", "../a.txt", "--root", str(sub)),
    ):
        proc = run_be(*args, "-o", "json", cwd=sub)  # outside the root given before or after
        assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "SANDBOX", args
    assert run_be("read", "-f", "../a.txt", cwd=sub).returncode == 0  # (inside the default root)
    proc = run_be("read", "-f", "a.txt", "--bogus")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "better-edit-tools read: error: unrecognized arguments: --bogus" in err
    assert "--file PATH" in err  # the command's usage
    proc = run_be("--bogus", "read", "-f", "a.txt")  # not a global option: the full parser reads it
    assert proc.returncode == 2 and "unrecognized arguments: --bogus" in proc.stderr.decode()


# --- one state directory, with or without platformdirs (issue 23) --------------------------------


def test_a_relative_cache_dir_is_refused_and_a_tilde_is_expanded(root, be_env, tmp_path):
    """Found by trying it: BETTER_EDIT_CACHE_DIR=.be (or `~/be-cache` from a host's JSON
    configuration, where no shell expands it) put the snapshots in a folder inside the project
    that moved with the working folder, so a rollback from elsewhere saw no edit. A relative path
    is a usage error now, for the CLI and the server; `~` is the home folder."""
    (root / "a.txt").write_text("x\n")
    for argv in (["read", "-f", "a.txt"], []):
        done = run_cli(*argv, cwd=root, env=dict(be_env, BETTER_EDIT_CACHE_DIR=".be"), input=b"")
        assert done.returncode == 2, done
        assert "invalid BETTER_EDIT_CACHE_DIR='.be': a relative path" in done.stderr.decode(), done.stderr
        assert not (root / ".be").exists()
    env = dict(be_env, BETTER_EDIT_CACHE_DIR="~/be-cache", HOME=str(tmp_path / "home"))
    done = run_cli("replace", "-f", "a.txt", "--old", "x", "--content", "y", cwd=root, env=env)
    assert done.returncode == 0, done
    assert list((tmp_path / "home" / "be-cache" / "snapshots").iterdir()) and not (root / "~").exists()


@pytest.mark.parametrize("xdg", [None, "", "/srv/cache", "/srv/cache/", "relative/cache", " /srv/padded"])
@pytest.mark.parametrize("home", [None, "/home/ann", "/home/ann/", "relative-home"])
def test_the_fallback_names_the_folder_platformdirs_names_on_every_platform(monkeypatch, xdg, home):
    """user_cache_base() is what platformdirs answers for Linux, macOS and Windows (its classes for
    each platform run on any host; Windows' known folder comes from its documented override)."""
    import platformdirs
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix
    from platformdirs.windows import Windows

    import better_edit

    if tuple(int(n) for n in platformdirs.__version__.split(".")[:2]) < (4, 14):
        pytest.skip(f"the rule is that of platformdirs 4.14; {platformdirs.__version__} is installed")

    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("WIN_PD_OVERRIDE_LOCAL_APPDATA", "C:\\Users\\ann\\AppData\\Local")
    for platform, kind in (("linux", Unix), ("darwin", MacOS), ("win32", Windows)):
        expected = kind(better_edit.CACHE_APP_NAME, appauthor=False).user_cache_dir
        assert better_edit.user_cache_base(platform) == expected, platform


def test_an_edit_without_platformdirs_and_one_with_it_share_one_state(tmp_path):
    """`python3 better_edit.py` in a Python without platformdirs (here: -S, no site-packages) and
    the installed program both keep their snapshots under $XDG_CACHE_HOME: one rollback sees both."""
    root, home, xdg = tmp_path / "project", tmp_path / "home", tmp_path / "xdg"
    for folder in (root, home, xdg):
        folder.mkdir()
    (root / "a.txt").write_text("one\n")
    env = {k: v for k, v in clean_env(tmp_path / "unused", root).items() if k != "BETTER_EDIT_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(xdg), PYTHONPATH=str(REPO))  # (no platformdirs on it)
    module = str(REPO / "better_edit.py")
    bare = run_cli("replace", "-f", "a.txt", "-s", "1", "-c", "two", cwd=root, env=env,
                   command=[sys.executable, "-S", module])  # fmt: skip
    assert bare.returncode == 0, bare.stderr
    probe = subprocess.run([sys.executable, "-S", "-c", "import platformdirs"], env=env, capture_output=True)
    assert probe.returncode != 0  # (that Python really has no platformdirs)
    full = run_cli("replace", "-f", "a.txt", "-s", "1", "-c", "three", cwd=root, env=env,
                   command=[sys.executable, module])  # fmt: skip
    assert full.returncode == 0, full.stderr
    stores = list((xdg / "better-edit-tools-mcp" / "snapshots").iterdir())
    assert len(stores) == 1 and len([p for p in stores[0].iterdir() if p.suffix == ".json"]) == 2
    assert not (home / ".cache").exists()
    srv = Server(root, env, command=[sys.executable, "-S", module])
    try:
        srv.ok("be-trx-rollback", steps=2)
    finally:
        srv.close()
    assert (root / "a.txt").read_text() == "one\n"


# ---- edges found from outside on 0.1 (issue 10): exit status, line arguments, names ---------------------------------------

POSIX = pytest.mark.skipif(os.name == "nt", reason="POSIX signals, FIFOs and file names")


# ---- viewed_code_id of an empty range (docs/behaviour.md#viewed_code_id) -----------------------------------


@POSIX
def test_view_of_an_empty_file_goes_stale_when_lines_appear(be_env, root):
    (root / "e.txt").write_bytes(b"")
    _done, view = run_json("read", "-f", "e.txt", cwd=root, env=be_env)
    token = view["viewed_code_id"]
    (root / "e.txt").write_bytes(b"someone else wrote this\n")
    done, result = run_json(
        "insert",
        "-f",
        "e.txt",
        "--after-line",
        "0",
        "-c",
        "x",
        "--viewed-code-id",
        token,
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 1, result
    assert result["error"]["code"] == "STALE_VIEW"
    assert (root / "e.txt").read_bytes() == b"someone else wrote this\n"


@POSIX
def test_non_utf8_file_name_is_echoed_as_replacement_characters(run_be, root):
    name = b"caf\xe9.txt"
    with open(os.path.join(os.fsencode(root), name), "wb") as handle:
        handle.write(b"one\n")
    done = run_be("read", "-f", os.fsdecode(name), "-o", "json")
    assert done.returncode == 0, done.stderr
    result = strict_loads(done.stdout.decode("utf-8"))  # valid UTF-8, valid JSON
    assert "caf\ufffd.txt" in result["path"]
    assert result["content"] == "1\tone"


# ---- exit status with a closed stdout or a broken pipe (docs/cli.md) ---------------------------------------


@POSIX
def test_an_applied_edit_exits_0_when_stdout_is_closed(be_env, root):
    (root / "f.txt").write_text("a\n")
    done = subprocess.run(
        [*be_command_prefix(), "insert", "-f", "f.txt", "--after-line", "-1", "-c", "once"],
        cwd=root,
        env=be_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert (root / "f.txt").read_text() == "a\nonce\n"
    # (found by an attack: it said nothing, and a retry would make the edit twice)
    assert b"the change was made (event " in done.stderr and b"it stands" in done.stderr, done.stderr


def test_an_edit_whose_reply_the_client_never_reads_says_on_stderr_that_it_stands(be_env, root):
    """Found by an attack: a be-write whose client closed its end before the reply: the file was
    written, the server ended with status 0 and said nothing, so a host that restarts and retries
    makes the change twice. stderr now says that it stands, with its event."""
    (root / "f.txt").write_text("a\n")
    server = subprocess.Popen(
        be_command_prefix(), cwd=root, env=be_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    server.stdout.close()  # (the client's end of the replies, closed before the request)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "be-write", "arguments": {"file": "f.txt", "content": "b\n"}}}  # fmt: skip
    _out, err = server.communicate(json.dumps(request).encode() + b"\n", timeout=60)
    assert server.returncode == 0 and (root / "f.txt").read_text() == "b\n"
    assert b"the change was made (event " in err and b"it stands" in err, err


@POSIX
def test_read_into_a_closed_pipe_ends_quietly_by_sigpipe(be_env, root):
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(200_000)))
    reader = subprocess.Popen(
        [*be_command_prefix(), "read", "-f", "big.txt"],
        cwd=root,
        env=be_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    reader.stdout.read(100)
    reader.stdout.close()  # what `| head -1` does
    stderr = reader.stderr.read()
    status = reader.wait(30)
    assert status in (-signal.SIGPIPE, 128 + signal.SIGPIPE), (status, stderr)
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr


# ---- small rules (docs/behaviour.md#text-model, docs/behaviour.md#line-arguments, docs/cli.md) -------------


@POSIX
def test_line_argument_codes(be_env, root):
    (root / "f.txt").write_text("1\n2\n3\n")
    _done, result = run_json("replace", "-f", "f.txt", "-s", "2", "--end=-9", "-c", "x", cwd=root, env=be_env)
    assert result["error"]["code"] == "OUT_OF_RANGE", result
    assert "-9" in result["error"]["message"]
    _done, result = run_json("read", "-f", "f.txt", "-s", "9", "-e", "7", cwd=root, env=be_env)
    assert result["error"]["code"] == "INVALID_ARGUMENT", result
    _done, result = run_json("delete", "-f", "f.txt", "-s", "3", "-e", "2", cwd=root, env=be_env)
    assert result["error"]["code"] == "INVALID_ARGUMENT", result
    _done, result = run_json("read", "-f", "f.txt", "-s", "2", "--end=-3", cwd=root, env=be_env)
    assert result["error"]["code"] == "OUT_OF_RANGE", result
    assert (root / "f.txt").read_text() == "1\n2\n3\n"


@POSIX
def test_cli_error_prefixes_are_fixed_in_chinese(run_be, root):
    done = run_be("--lang", "zh", "read", "-f", "missing.txt")
    stderr = done.stderr.decode()
    assert done.returncode == 1
    assert stderr.startswith("error[NOT_FOUND]: "), stderr
    assert "\nhint: " in stderr
    assert "文件不存在" in stderr  # the words after the prefix follow the language


@POSIX
def test_deleting_the_last_line_keeps_an_empty_line(run_be, root):
    (root / "f.txt").write_bytes(b"\nz")
    done = run_be("delete", "-f", "f.txt", "-s", "2")
    assert done.returncode == 0, done.stderr
    assert (root / "f.txt").read_bytes() == b"\n"


def test_a_stray_temp_name_with_a_number_beyond_any_pid_does_not_block_edits(cli, root):
    """A file beside the target named like our temporaries, `.NAME.be-PID-XXXXXXXX.tmp`, whose PID
    no C long holds: the sweep of dead writers' temporaries asked os.kill about it and every edit
    of the file ended in INTERNAL (OverflowError). It is not ours: it is left alone."""
    (root / "a.txt").write_text("a\n")
    stray = root / ".a.txt.be-99999999999999999999999-deadbeef.tmp"
    stray.write_bytes(b"not ours")
    rc, out = cli("insert", "-f", "a.txt", "--after-line", "1", "-c", "b", "-o", "json")
    assert rc == 0, out
    assert (root / "a.txt").read_text() == "a\nb\n" and stray.read_bytes() == b"not ours"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_content_file_that_is_an_endless_device_is_refused(be_command, be_env, root):
    """`--content-file /dev/zero` (or stdin from it) read until memory ran out. A device other than
    a terminal or /dev/null is refused at once; /dev/null and pipes are read as before."""
    (root / "a.txt").write_text("a\nb\n")
    for args, stdin in ((["--content-file", "/dev/zero"], None), (["--content-file", "-"], "/dev/zero")):
        with open(stdin or os.devnull, "rb") as handle:
            done, answer = run_json(
                "replace", "-f", "a.txt", "-s", "1", *args, stdin=handle, cwd=root, env=be_env,
                timeout=10, command=be_command,
            )  # fmt: skip
        assert done.returncode == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
        assert "device" in answer["error"]["message"], answer
        assert (root / "a.txt").read_text() == "a\nb\n"
    done, answer = run_json(
        "replace",
        "-f",
        "a.txt",
        "-s",
        "1",
        "--content-file",
        os.devnull,
        cwd=root,
        env=be_env,
        command=be_command,
    )
    assert done.returncode == 0 and (root / "a.txt").read_text() == "b\n", answer
    done, answer = run_json(
        "replace", "-f", "a.txt", "-s", "1", "--content-file", "-", input=b"c\n", cwd=root, env=be_env,
        command=be_command,
    )  # fmt: skip
    assert done.returncode == 0 and (root / "a.txt").read_text() == "c\n", answer


def test_an_empty_standard_input_never_empties_a_file(cli, root):
    """Found by the CLI attack: `false | better-edit-tools write -f f.txt --content-file -` (a
    producer that failed) emptied f.txt with exit 0 and no warning, and `replace -s 2
    --content-file - < /dev/null` deleted line 2. An empty standard input is INVALID_ARGUMENT
    (exit 2), nothing written; `-c ''` still empties on purpose."""
    (root / "f.txt").write_text("one\ntwo\nthree\n")
    for args in (["write", "-f", "f.txt"], ["replace", "-f", "f.txt", "-s", "2"]):
        code, answer = cli(*args, "--content-file", "-", input=b"")
        assert code == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
        assert (
            "standard input was empty" in answer["error"]["message"]
            and "--content ''" in answer["error"]["hint"]
        )
    assert (root / "f.txt").read_text() == "one\ntwo\nthree\n"
    code, answer = cli("insert", "-f", "f.txt", "--after-line", "1", "--content-file", "-", input=b"")
    assert code == 2 and "--content ''" not in answer["error"]["hint"], answer  # (insert refuses that)
    for args in (
        ["replace", "-f", "f.txt", "--old-file", "-", "-c", "x"],
        ["edit", "--edits-file", "-"],
        ["patch"],
    ):
        code, answer = cli(*args, input=b"")  # (the second regression pass: "--old must not be empty")
        assert code == 2 and "standard input was empty" in answer["error"]["message"], (args, answer)
    code, answer = cli("replace", "-f", "f.txt", "-s", "2", "-c", "")
    assert code == 0 and (root / "f.txt").read_text() == "one\nthree\n", answer


@pytest.mark.skipif(os.name == "nt", reason="/dev/stdin and FIFOs are POSIX")
def test_an_empty_pipe_named_by_its_path_never_empties_a_file(cli, root):
    """Found by the agent-mistakes attack: the empty-input refusal above was for `-` alone, so
    `false | ... write --content-file /dev/stdin` emptied the file and `replace -s 1 -e 2
    --content-file <(false)` (a /dev/fd pipe) deleted the lines, with exit 0. Any empty pipe
    (FIFO or socket) is refused now; an empty file, /dev/null included, is still empty content."""
    import threading

    (root / "f.txt").write_text("one\ntwo\nthree\n")
    for args in (["write", "-f", "f.txt"], ["replace", "-f", "f.txt", "-s", "1", "-e", "2"]):
        code, answer = cli(*args, "--content-file", "/dev/stdin", input=b"")
        assert code == 2 and answer["error"]["code"] == "INVALID_ARGUMENT", answer
        assert "/dev/stdin: the pipe was empty" in answer["error"]["message"], answer
        assert "--content ''" in answer["error"]["hint"], answer
    fifo = root / "gen.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: open(fifo, "wb").close())  # (a producer that wrote nothing)
    writer.start()
    code, answer = cli("replace", "-f", "f.txt", "-s", "2", "--content-file", str(fifo))
    writer.join()
    assert code == 2 and "the pipe was empty" in answer["error"]["message"], answer
    assert (root / "f.txt").read_text() == "one\ntwo\nthree\n"
    code, answer = cli("replace", "-f", "f.txt", "-s", "2", "--content-file", "/dev/stdin", input=b"TWO\n")
    assert code == 0 and (root / "f.txt").read_text() == "one\nTWO\nthree\n", answer
    (root / "empty.txt").write_text("")
    code, answer = cli("replace", "-f", "f.txt", "-s", "2", "--content-file", "empty.txt")
    assert code == 0 and (root / "f.txt").read_text() == "one\nthree\n", answer


def test_content_with_literal_backslash_n_between_lines_of_code_is_written_as_given_with_a_warning(cli, root):
    """Found by the agent-mistakes attack: `-c '\\ndef h():\\n    return 1\\n'` (single quotes in
    bash: backslash and n) was written as one line of broken Python, balance "ok", no word; the
    server warns about the same content. The CLI still writes it as given, and now says how to
    give real newlines; a `\\n` inside a string literal is code and says nothing."""
    (root / "t.py").write_text("x = 1\n")
    code, answer = cli("insert", "-f", "t.py", "--after-line", "-1", "-c", "\\ndef h():\\n    return 1\\n")
    assert code == 0 and "$'...'" in " ".join(answer.get("warnings", [])), answer
    assert (root / "t.py").read_text() == "x = 1\n\\ndef h():\\n    return 1\\n\n"
    code, answer = cli("write", "-f", "w.py", "-c", "import os\\nimport sys\\n\\ndef main():\\n    pass\\n")
    assert code == 0 and "3 \\n sequences" not in str(answer) and "$'...'" in " ".join(answer["warnings"])
    assert (
        root / "w.py"
    ).read_text() == "import os\\nimport sys\\n\\ndef main():\\n    pass\\n"  # (as given)
    code, answer = cli("insert", "-f", "t.py", "--after-line", "-1", "-c", 'parts = text.split("\\n\\n")')
    assert code == 0 and not answer.get("warnings"), answer


def test_numbers_of_nineteen_digits_and_more_are_numbers(cli, root):
    """Found by the CLI attack: `read -e 9223372036854775807` was "argument '--end' must be an
    integer" (a digit string was taken up to 18 digits), while `-e 2147483648` was clamped as the
    docs say. Longer numbers are numbers now: an end past the file is clamped, a start past it
    is OUT_OF_RANGE, as they are when sent as JSON numbers."""
    (root / "f.txt").write_text("a\n")
    code, answer = cli("read", "-f", "f.txt", "-s", "1", "-e", "9223372036854775807")
    assert code == 0 and answer["content"] == "1\ta" and answer["end"] == 1, answer
    code, answer = cli("replace", "-f", "f.txt", "-s", "99999999999999999999999", "-c", "x")
    assert code == 1 and answer["error"]["code"] == "OUT_OF_RANGE", answer


def test_a_line_target_out_of_bounds_names_the_target(cli, root):
    """Found by the CLI attack: `read --target line:0` said "--start must be 1 or more, got 0" (no
    --start was given), and `--target line:abc` that --target "must be an integer". Both name the
    target and what is wrong with its line now."""
    (root / "f.txt").write_text("a\n")
    for value, words in (("0", "lines are numbered from 1"), ("-1", "lines are numbered from 1"),
                         ("-0", "lines are numbered from 1"),  # (echoed as given: it said line:0)
                         ("abc", "the line must be a whole number")):  # fmt: skip
        code, answer = cli("replace", "-f", "f.txt", "--target", f"line:{value}", "-c", "x")
        message = answer["error"]["message"]
        assert code == 2 and f"target line:{value}: {words}" in message and "--start" not in message, answer
    assert (root / "f.txt").read_text() == "a\n"


def test_a_preview_of_an_edit_that_changes_nothing_says_so(cli, root):
    """Found by the CLI attack: the preview of a replace (or write) by the text already there said
    "changed": false without the warning the real edit gives, the one difference between the two
    over 1,288 pairs of previews and edits."""
    (root / "n.txt").write_text("one\ntwo\n")
    (root / "e.json").write_text('[{"file": "n.txt", "start": 1, "content": "one"}]')
    (root / "p.diff").write_text("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+two\n")
    for args in (
        ["replace", "-f", "n.txt", "-s", "1", "-c", "one"],
        ["write", "-f", "n.txt", "-c", "one\ntwo\n"],
        ["edit", "--edits-file", "e.json"],  # (the regression pass: edit and patch did not say it)
        ["patch", "--patch-file", "p.diff"],
    ):
        previewed, real = cli(*args, "--preview")[1], cli(*args)[1]
        assert previewed["changed"] is real["changed"] is False, (previewed, real)
        assert (
            previewed.get("warnings")
            == real.get("warnings")
            == ["the file already holds this text: nothing was written"]
        )


def test_an_edit_that_changes_nothing_says_so_in_its_summary_for_one_file_or_several(cli, root, be_env):
    """Found by the regression pass: a replace by the text already there printed "replaced in
    n.txt: lines 1-1, -1 +1" beside "the files already hold this text", for one file."""
    (root / "n.txt").write_text("one\ntwo\n")
    (root / "m.txt").write_text("one\n")
    (root / "e.json").write_text(
        '[{"file": "n.txt", "start": 1, "content": "one"}, {"file": "m.txt", "start": 1, "content": "one"}]'
    )
    done = run_cli("replace", "-f", "n.txt", "-s", "1", "-c", "one", cwd=root, env=be_env)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0 and out.startswith("no change to n.txt: lines 1-1"), (out, err)
    assert "warning: the file already holds this text: nothing was written" in out.splitlines()
    status, answer = cli("edit", "--edits-file", "e.json")
    assert status == 0 and answer["warnings"] == ["the files already hold this text: nothing was written"]
    assert (root / "n.txt").read_text() == "one\ntwo\n" and (root / "m.txt").read_text() == "one\n"


def test_argument_errors_of_the_cli_name_its_options(cli, root):
    """Found by the CLI attack: many errors named the server's JSON arguments (`after_line must be
    -1 (end), 0 (top) or ...`, `delete needs start (and end) or target`, `old must not be empty`),
    though the command line has no such words. They name the options now; an item of `edit`,
    a JSON object, keeps its keys."""
    (root / "f.txt").write_text("a\nb\n")
    for args, words in (
        (["insert", "-f", "f.txt", "--after-line", "-5", "-c", "x"], "--after-line must be -1"),
        (["insert", "-f", "f.txt", "--after-line", "9", "-c", "x"], "--after-line 9 is beyond"),
        (["insert", "-f", "f.txt", "--after-line", "1", "-c", ""], "--content must not be empty"),
        (["replace", "-f", "f.txt", "--old", "", "-c", "x"], "--old must not be empty"),
        (["delete", "-f", "f.txt"], "delete needs --start (and --end) or --target"),
        (["replace", "-f", "f.txt", "-e", "2", "-c", "x"], "--end was given without --start"),
        (
            ["replace", "-f", "f.txt", "--target", "line:1", "-s", "1", "-c", "x"],
            "--target cannot be combined",
        ),
        (["replace", "-f", "f.txt", "-c", "x"], "replace needs --start (line numbers), --old"),
    ):
        _code, answer = cli(*args)
        assert words in answer["error"]["message"], (args, answer)
    item = b'[{"file": "f.txt", "target": {"kind": "marker", "value": "a", "occurrence": 0}, "content": "x"}]'
    _code, answer = cli("edit", "--edits-file", "-", input=item)
    assert (
        "occurrence must be 1 or more" in answer["error"]["message"]
        and "--occurrence" not in answer["error"]["message"]
    )
    assert (root / "f.txt").read_text() == "a\nb\n"


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="a pseudo-terminal is POSIX's")
def test_a_patch_read_from_a_terminal_says_what_it_waits_for(be_command, be_env, root):
    """Found by the CLI attack: `patch` with no --patch-file, typed at a terminal, waited in
    silence for a diff on standard input. It says so on stderr first (as the server does), and
    then reads the patch to Ctrl-D."""
    import pty

    (root / "a.txt").write_text("one\n")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*be_command, "patch"], cwd=root, env=be_env, stdin=slave, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        os.close(slave)
        import select

        ready = select.select([proc.stderr], [], [], 30)[0]  # (before: silence, and a wait with no end)
        waiting = proc.stderr.readline() if ready else b""
        if not ready:
            proc.kill()
        assert b"reading --patch-file from the terminal" in waiting and b"Ctrl-D" in waiting, waiting
        os.write(master, b"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n\x04")
        proc.communicate(timeout=60)
    finally:
        os.close(master)
    assert proc.returncode == 0 and (root / "a.txt").read_text() == "ONE\n"


def test_a_brief_summary_says_the_balance_was_not_checked(be_env, root):
    """Found by the CLI attack: `replace ... --brief` ended its summary with "balance: -"."""
    (root / "f.txt").write_text("a\nb\n")
    done = run_cli("replace", "-f", "f.txt", "-s", "1", "-c", "x", "--brief", cwd=root, env=be_env)
    assert done.returncode == 0 and b"; balance: not checked (--brief), event " in done.stdout, done.stdout


def test_content_from_a_closed_stdin_is_a_usage_error_not_a_traceback(be_command, be_env, root):
    """`--content-file -` with descriptor 0 closed (`<&-`): sys.stdin is None and the read ended
    in an AttributeError traceback."""
    done = subprocess.run(
        [*be_command, "write", "-f", "x.txt", "--content-file", "-"], cwd=root, env=be_env,
        capture_output=True, timeout=30, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0),
    )  # fmt: skip
    assert done.returncode == 2 and b"Traceback" not in done.stderr, done.stderr[-500:]
    assert b"standard input is closed" in done.stderr and not (root / "x.txt").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_to_a_full_disk_is_said_and_an_applied_edit_exits_0(be_command, be_env, root):
    """stdout on a full disk (`> /dev/full`): a read, an edit's result and a JSON error ended in a
    traceback, and the edit, which was applied, exited 1 ("nothing was changed"), so a script would
    apply it again. A read or an error says so on stderr and exits 1; an applied edit exits 0."""
    (root / "a.txt").write_text("a\n")

    def run(*args):
        with open("/dev/full", "wb") as full:
            return subprocess.run(
                [*be_command, *args], cwd=root, env=be_env, stdout=full, stderr=subprocess.PIPE, timeout=30
            )

    done = run("read", "-f", "a.txt")
    assert done.returncode == 1 and b"could not be written" in done.stderr, done.stderr[-500:]
    done = run("replace", "-f", "a.txt", "-s", "1", "-c", "b")
    assert done.returncode == 0 and b"the edit was made" in done.stderr, done.stderr[-500:]
    assert (root / "a.txt").read_text() == "b\n"
    done = run("read", "-f", "missing.txt", "-o", "json")
    assert done.returncode == 1 and b"NOT_FOUND" in done.stderr and b"Traceback" not in done.stderr
    # (found against the executable: the JSON error sat in a buffer unless PYTHONUNBUFFERED was set)
    be_env = {k: v for k, v in be_env.items() if k != "PYTHONUNBUFFERED"}
    for args in (("read", "-f", "missing.txt", "-o", "json"), ("read", "-f", "a.txt")):
        done = run(*args)
        assert done.returncode == 1 and done.stderr.strip() and b"Traceback" not in done.stderr, (
            args,
            done.stderr,
        )


def test_an_error_with_stderr_closed_never_lands_in_stdout(be_command, be_env, root):
    """With `2>&-` the error and a usage error were written to stdout instead, where a script
    capturing the output would take them for the file's text. The exit status says it all."""
    for args, status in ((["read", "-f", "missing.txt"], 1), (["raed"], 2)):
        done = subprocess.run(
            [*be_command, *args], cwd=root, env=be_env, capture_output=True, timeout=30,
            stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(2),
        )  # fmt: skip
        assert done.returncode == status and done.stdout == b"", (args, done.stdout)


@pytest.mark.parametrize("closed", [0, 1])
def test_a_server_started_without_stdin_or_stdout_says_so(be_command, be_env, root, closed):
    """The server started with `<&-` or `>&-` ended in an AttributeError traceback."""
    done = subprocess.run(
        be_command, cwd=root, env=be_env, capture_output=True, timeout=30, input=b"{}\n",
        preexec_fn=lambda: os.close(closed),
    )  # fmt: skip
    assert done.returncode == 2 and b"Traceback" not in done.stderr, done.stderr[-500:]
    assert b"standard input" in done.stderr and b"closed" in done.stderr


def test_a_removed_working_folder_is_a_usage_error_not_a_traceback(be_command, be_env, tmp_path):
    """A shell still standing in a folder that was removed: os.getcwd() fails. The CLI and the
    server ended in a Python traceback; both now say what happened, exit 2, and touch nothing."""
    gone = tmp_path / "gone"
    gone.mkdir()
    kept = tmp_path / "kept.txt"
    kept.write_text("a\n")

    def leave_and_remove():
        os.chdir(gone)
        os.rmdir(gone)

    for args, stdin in (
        (["read", "-f", str(kept)], b""),
        (["replace", "-f", str(kept), "-s", "1", "-c", "b"], b""),
        ([], b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'),
    ):
        gone.mkdir(exist_ok=True)
        done = subprocess.run(
            [*be_command, *args], input=stdin, env=be_env, capture_output=True, timeout=30,
            preexec_fn=leave_and_remove,
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stderr[-500:])
        assert b"Traceback" not in done.stderr and b"current folder no longer exists" in done.stderr, (
            done.stderr
        )
        assert kept.read_text() == "a\n"


def test_a_link_loop_and_a_file_size_limit_are_named_in_the_hint(root, be_command, be_env):
    """A symbolic link that leads back to itself, and a write past `ulimit -f`, were both `IO`
    with the hint "check free space and the file system": the wrong place to look. The hint now
    names the link loop or the size limit; nothing is changed."""
    import resource

    os.symlink("loop", root / "loop")
    (root / "a.txt").write_text("a\n")
    for args in (("read", "-f", "loop"), ("write", "-f", "loop", "-c", "x")):
        done, out = run_json(*args, cwd=root, env=be_env, command=be_command)
        assert done.returncode == 1 and out["error"]["code"] == "IO", out
        assert "symbolic link on this path leads back to itself" in out["error"]["hint"]
    assert os.readlink(root / "loop") == "loop"
    if FROZEN:
        return  # (the executable unpacks itself past such a limit before it runs: docs/install.md)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    done, out = run_json("write", "-f", "a.txt", "-c", "y" * 100_000, cwd=root, env=be_env, command=be_command,
                         preexec_fn=limit)  # fmt: skip
    assert done.returncode == 1 and out["error"]["code"] == "IO", out
    assert "file-size limit (ulimit -f)" in out["error"]["hint"]
    assert (root / "a.txt").read_text() == "a\n"
    # (found by an attack: a 2-byte result of a hard-linked file, whose old bytes' copy passed the
    # limit, was blamed on "the new file")
    (root / "c.txt").write_text("x" * 60_000 + "\n")
    os.link(root / "c.txt", root / "d.txt")
    done, out = run_json("replace", "-f", "c.txt", "-s", "1", "-c", "y", cwd=root, env=be_env, command=be_command,
                         preexec_fn=limit)  # fmt: skip
    assert done.returncode == 1 and "copy of the old bytes" in out["error"]["hint"], out
    assert (root / "c.txt").read_text() == "x" * 60_000 + "\n"


def test_an_edit_of_several_files_in_one_folder_sweeps_each_ones_dead_temporaries(cli, root):
    """The temporaries (.tmp) that killed writers left beside each file of a multi-file `edit`, and
    their kept names (.old) that are only a second name of the file, go, though the folder is now
    listed once per call, not once per file. A live writer's temporary, a kept name holding other
    bytes and files that only look alike stay."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # (a process number that no longer runs)
    names = ["a.txt", "b.txt", "c.txt"]
    for name in names:
        (root / name).write_text(f"{name}\n")
    swept = [f".{name}.be-{dead.pid}-0123abcd.tmp" for name in names]
    for name in swept:
        (root / name).write_text("left\n")
    for name in names[:2]:
        os.link(root / name, root / f".{name}.be-{dead.pid}-4567cdef.old")
        swept.append(f".{name}.be-{dead.pid}-4567cdef.old")
    kept = [f".c.txt.be-{dead.pid}-89abcdef.old", f".c.txt.be-{os.getpid()}-0123abcd.tmp", ".a.txt.be-x.tmp",
            "notes.old", "x.be-1-00000000.tmp"]  # fmt: skip
    for name in kept:
        (root / name).write_text("other bytes\n")
    items = [{"file": name, "start": 1, "content": name.upper()} for name in names]
    rc, out = cli("edit", "--edits-file", "-", "-o", "json", input=json.dumps(items).encode())
    assert rc == 0, out
    assert sorted(p.name for p in root.iterdir()) == sorted(names + kept)
    assert [(root / name).read_text() for name in names] == ["A.TXT\n", "B.TXT\n", "C.TXT\n"]
    assert all(os.stat(root / name).st_nlink == 1 for name in names)


def test_a_name_longer_than_the_file_system_takes_is_the_callers_mistake(root, be_command, be_env):
    """A path with a name of 300 bytes was an `IO` error with the hint "check free space and the
    file system": the disk was fine, the argument was not. It is INVALID_ARGUMENT (exit 2) saying
    that a name is too long, and a write makes no folder on the way."""
    long_name = "n" * 300
    for args in (("read", "-f", long_name), ("write", "-f", f"d/{long_name}/c.txt", "-c", "x")):
        done, out = run_json(*args, cwd=root, env=be_env, command=be_command)
        assert done.returncode == 2 and out["error"]["code"] == "INVALID_ARGUMENT", out
        assert "is longer than its file system takes" in out["error"]["message"]
    assert list(root.iterdir()) == []


# --- every supported Python -------------------------------------------------------------------------


def _supported_pythons():
    """The oldest Python pyproject.toml's requires-python allows and the newest release, each as
    (version, interpreter) where this machine has it (on PATH as pythonX.Y, or under pyenv)."""
    import re
    import shutil

    oldest = re.search(r'requires-python\s*=\s*">=\s*3\.(\d+)"', (REPO / "pyproject.toml").read_text())
    found = []
    for minor in (int(oldest.group(1)), 13):
        candidates = [shutil.which(f"python3.{minor}")]
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        candidates += sorted(pyenv.glob(f"3.{minor}.*/bin/python3.{minor}"), reverse=True)
        for exe in filter(None, candidates):
            check = [str(exe), "-c", f"import sys; print(sys.version_info[:2] == (3, {minor}))"]
            done = subprocess.run(check, capture_output=True, text=True)  # (a pyenv shim may refuse)
            if done.returncode == 0 and done.stdout.strip() == "True":
                found.append(pytest.param(str(exe), id=f"3.{minor}"))
                break
        else:
            found.append(pytest.param(None, id=f"3.{minor}"))
    return found


@pytest.mark.parametrize("python", _supported_pythons())
def test_the_module_works_on_the_oldest_and_the_newest_python(python, be_env, root, tmp_path):
    """pyproject.toml promises Python 3.9 and later: the module run by the oldest and by the newest
    interpreter edits, checks, patches and serves as under this one (without platformdirs, which
    need not be installed there: the cache folder is named). A copy compiled once by that
    interpreter: a module run as a script is compiled at every start (0.3 s each here)."""
    import shutil

    if python is None:
        pytest.skip("this Python is not installed here")
    copy = tmp_path / "module"
    copy.mkdir()
    shutil.copy(REPO / "better_edit.py", copy)
    subprocess.run([python, "-m", "py_compile", str(copy / "better_edit.py")], check=True)
    env = dict(be_env, PYTHONPATH=str(copy))
    command = [python, "-S", "-m", "better_edit"]

    def cli(*args, input=None):
        done, answer = run_json(*args, cwd=root, env=env, input=input, command=command)
        assert done.returncode == 0, done.stderr.decode()
        return answer

    assert cli("write", "-f", "m.py", "-c", "def f(a):\n    return [a]\n")["status"] == "ok"
    view = cli("read", "-f", "m.py")["viewed_code_id"]
    assert (
        cli("replace", "-f", "m.py", "-s", "2", "-c", "    return (a, a)", "--viewed-code-id", view)[
            "balance"
        ]
        == "ok"
    )
    items = [
        {"file": "m.py", "start": 1, "content": "def g(a):"},
        {"file": "m.py", "after_line": 2, "content": "# end"},
    ]
    assert cli("edit", "--edits-file", "-", input=json.dumps(items).encode())["status"] == "ok"
    patch = "--- a/m.py\n+++ b/m.py\n@@ -3 +3 @@\n-# end\n+# the end\n"
    assert cli("patch", input=patch.encode())["status"] == "ok"
    assert (root / "m.py").read_text() == "def g(a):\n    return (a, a)\n# the end\n"
    assert cli("func-range", "-f", "m.py", "-l", "2")["start"] == 1
    assert cli("balance", "-f", "m.py")["status"] == "balanced"
    server = Server(root, env, command=command)
    try:
        server.initialize()
        assert "be-edit" in [tool["name"] for tool in server.tools()]
        assert server.ok("be-read", {"file": "m.py"})["total"] == 3
    finally:
        server.close()


@pytest.mark.parametrize("flag, target", [("+i", "i.txt"), ("+a", "i.txt"), ("+i", ".")])
def test_an_immutable_file_is_named_as_such_not_as_read_only(run_be, root, flag, target):
    """chattr +i or +a on the file, or +i on its folder: the mode allows writing, the system does
    not. The message said "read-only (no write permission)" (+i), which the mode contradicts, or
    gave the bare "Operation not permitted" with a hint about permissions (+a); it now says that
    the system refuses despite the bits, and the hint names immutable and append-only."""
    import shutil

    path = write(root / "i.txt", "a\n")
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, flag, str(root / target)], capture_output=True).returncode:
        pytest.skip("chattr is not available here (needs Linux, root and a file system that has it)")
    try:
        proc = run_be("replace", "-f", "i.txt", "-s", "1", "-c", "b", "-o", "json")
        error = json.loads(proc.stdout)["error"]
        assert proc.returncode == 1 and error["code"] == "PERMISSION", error
        assert "immutable or append-only" in error["hint"] and "read-only" not in error["message"], error
    finally:
        subprocess.run([chattr, "-" + flag[1:], str(root / target)])
    assert path.read_text() == "a\n"


def test_a_read_whose_negative_end_counts_back_before_its_start_says_so(cli, root):
    """Found by an attack: `read -s 2 -e -5` of a 3-line file said "lines 2--5 are outside f.txt";
    replace and delete said what happened, as the docs do. A read now says it too."""
    path = write(root / "f.txt", "a\nb\nc\n")
    error = fails(cli, path, "read", "-f", "f.txt", "-s", "2", "-e", "-5", code="OUT_OF_RANGE")
    assert (
        error["message"] == "end -5 counts back from the end of f.txt, which has 3 lines, to before start 2"
    )


@pytest.mark.parametrize("occurrence", ["0", "-1"])
def test_an_occurrence_below_one_is_invalid_not_out_of_range(cli, root, occurrence):
    """Found by an attack: `--occurrence 0` was OUT_OF_RANGE (exit 1: "the file changed") while a
    number that can never be right is INVALID_ARGUMENT (exit 2), as `--start 0` is."""
    path = write(root / "f.txt", "a\nb\n")
    error = fails(
        cli,
        path,
        "read",
        "-f",
        "f.txt",
        "--target",
        "marker:b",
        "--occurrence",
        occurrence,
        code="INVALID_ARGUMENT",
        status=2,
    )
    assert error["message"] == f"--occurrence must be 1 or more, got {occurrence}"
    error = fails(
        cli, path, "read", "-f", "f.txt", "--target", "marker:b", "--occurrence", "2", code="OUT_OF_RANGE"
    )
    assert error["message"] == "occurrence 2 is out of range: marker 'b' occurs 1 time"


def test_edit_without_its_edits_file_names_the_option(run_be, root):
    """Found by an attack: `edit` with no --edits-file said "give exactly one of edits or patch",
    the server's words, naming neither the option nor a thing the CLI's edit takes."""
    done = run_be("edit", input=b"")
    assert done.returncode == 2
    assert b"the following arguments are required: --edits-file" in done.stderr, done.stderr


def test_hints_on_the_command_line_name_its_options(cli, root):
    """Found by an attack: the CLI's hints used the server's argument syntax ("pass force: true",
    "add occurrence N to the target", "see 'did_you_mean'", which its text never shows), and
    func-range of a file of no known language said "try another line"."""
    write(root / "f.txt", "x = 1\nx = 1\n")
    error = fails(
        cli, root / "f.txt", "replace", "-f", "f.txt", "--old", "x = 1", "-c", "y", code="AMBIGUOUS"
    )
    assert error["hint"] == "add surrounding lines to --old, or pass --start/--end"
    error = fails(cli, root / "f.txt", "read", "-f", "f.txt", "--target", "marker:x", code="AMBIGUOUS")
    assert error["hint"] == "add --occurrence N to pick one"
    error = fails(
        cli,
        root / "f.txt",
        "insert",
        "-f",
        "f.txt",
        "--after-line",
        "1",
        "-c",
        "  // ... existing code ...",
        code="PLACEHOLDER",
    )
    assert "pass --force if the line is meant literally" in error["hint"]
    error = fails(cli, root / "f.txt", "read", "-f", "F.txt", code="NOT_FOUND")
    assert "did_you_mean" not in error["hint"] and "did you mean" in error["hint"]
    write(root / "notes.xyz", "a\n")
    error = fails(cli, root / "notes.xyz", "func-range", "-f", "notes.xyz", "-l", "1", code="NOT_FOUND")
    assert "another line" not in error["hint"] and "language is told by the file's name" in error["hint"]


def test_command_help_is_written_for_the_command_line(run_be):
    """Found by an attack: command help reused the server's words, wrong on the command line:
    `edit` offered a `patch` argument it does not take, `patch --force` spoke of delete items,
    `--target` showed the JSON form, and -V/--version, which every command takes, was not listed."""
    edit = run_be("edit", "--help").stdout.decode()
    assert "`patch`" not in edit and "--edits-file" in edit.split("options:")[0]
    patch = run_be("patch", "--help").stdout.decode()
    assert "delete item" not in patch and "may stand there already" in patch
    read = " ".join(run_be("read", "--help").stdout.decode().split())
    assert (
        "{kind:" not in read and "as KIND:VALUE" in read and "-V, --version show the version and exit" in read
    )


def test_edit_item_errors_name_the_items_json_keys(cli, root):
    """Found by a regression attack: `edit --edits-file` errors took the CLI's words, telling to
    use --old and --start/--end, which edit does not have: its items are JSON objects."""
    path = write(root / "a.py", "x = 1\ny = 2\nx = 1\n")
    items = json.dumps([{"op": "replace", "file": "a.py", "old": "x = 1", "content": "z"}]).encode()
    error = fails(cli, path, "edit", "--edits-file", "-", input=items, code="AMBIGUOUS")
    assert error["hint"] == "add surrounding lines to old, or pass start/end", error


@pytest.mark.parametrize("codec", ["cp1252", "gbk", "latin-1"])
def test_a_utf8_file_stays_utf8_whatever_encoding_is_named(cli, root, codec):
    """Found by an attack: with --encoding cp1252 (or BETTER_EDIT_ENCODING), a UTF-8 file holding
    `café` was read as cp1252 (`cafÃ©`) and an insert wrote its line in cp1252: two encodings in
    one file, with status ok. The encoding named is that of files that are not UTF-8."""
    path = write(root / "notes.txt", "café\n".encode())
    rc, out = cli("--encoding", codec, "insert", "-f", "notes.txt", "--after-line", "-1", "-c", "thé")
    assert rc == 0, out
    assert path.read_bytes() == "café\nthé\n".encode()


def test_a_gbk_file_whose_bytes_are_also_utf8_stays_gbk(cli, root):
    """Found by an attack: a GBK file whose only Chinese word, 状态, is valid UTF-8 too (U+05F4
    U+032C) was read and edited as UTF-8 under --encoding gbk: the new line went in as UTF-8, two
    encodings in one file."""
    path = write(root / "a.py", "status = 1  # 状态\nname = ''\n".encode("gbk"))
    rc, out = cli("read", "-f", "a.py", "--encoding", "gbk")
    assert rc == 0 and out["content"] == "1\tstatus = 1  # 状态\n2\tname = ''" and out["encoding"] == "gbk", (
        out
    )
    rc, out = cli("replace", "-f", "a.py", "--encoding", "gbk", "-s", "2", "-c", "name = '名称'")
    assert rc == 0 and path.read_bytes() == "status = 1  # 状态\nname = '名称'\n".encode("gbk"), out


def test_text_starting_with_a_bom_never_gives_a_file_a_second_one(cli, root):
    """Found by an attack: a replace by --old at the start of a file with a BOM, of content that
    starts with U+FEFF, and an edit's write item of such content, wrote a second BOM; insert and
    the write command drop it, as the text model says."""
    path = write(root / "bom.txt", b"\xef\xbb\xbfa\nb\n")
    rc, out = cli("replace", "-f", "bom.txt", "--old", "a", "-c", "\ufeffz")
    assert rc == 0 and path.read_bytes() == b"\xef\xbb\xbfz\nb\n", out
    items = json.dumps([{"op": "write", "file": "bom.txt", "content": "\ufeffw\n"}]).encode()
    rc, out = cli("edit", "--edits-file", "-", input=items)
    assert rc == 0 and path.read_bytes() == b"\xef\xbb\xbfw\n", out


@pytest.mark.parametrize("data", [b"plain ascii\n", "caf\u00e9\n".encode(), b""])
def test_utf8_sig_named_reads_utf8_files_without_a_bom(cli, root, data):
    """Found by an attack: `--encoding utf-8-sig` refused every UTF-8 file without a BOM (and
    empty files) as not round-tripping: utf-8-sig names UTF-8, with or without its BOM."""
    path = write(root / "f.txt", data)
    rc, out = cli("--encoding", "utf-8-sig", "write", "-f", "f.txt", "-c", "new\n")
    assert rc == 0 and path.read_bytes() == b"new\n", out


def test_utf16_without_a_bom_is_refused_with_the_encoding_to_name(cli, root):
    """Found by an attack: a UTF-16 file without a BOM was BINARY_FILE with the hint "edit text
    files only", though naming its encoding reads and edits it. The hint says so."""
    path = write(root / "u.txt", "hello\nworld\n".encode("utf-16-le"))
    error = fails(cli, path, "read", "-f", "u.txt", code="BINARY_FILE")
    assert "--encoding utf-16-le" in error["hint"], error
    rc, out = cli("--encoding", "utf-16-le", "read", "-f", "u.txt")
    assert rc == 0 and out["content"] == "1\thello\n2\tworld", out
    code = write(root / "u.py", "def f():\n    pass\n".encode("utf-16-be"))
    error = fails(cli, code, "func-range", "-f", "u.py", "-l", "2", code="BINARY_FILE")
    assert "--encoding utf-16-be" in error["hint"], error


def test_a_file_named_utf16_that_is_not_is_refused_and_left_whole(cli, root, be_env):
    """Found by the encodings attack: UTF-16 named for a file without a BOM was taken for any
    bytes that decode, which most do: a big-endian file named utf-16 (little-endian) read as one
    line, and `replace -s 1` rewrote the whole file in the other byte order; an ASCII file named
    so by mistake became `x\x00 \x00=...`; a be-edit's top-level utf-16 did that to an ASCII file
    beside a real UTF-16 one. Such a file is ENCODING now, naming what gives it away."""
    big = write(root / "be.txt", "abc\ndef\n".encode("utf-16-be"))
    error = fails(
        cli, big, "--encoding", "utf-16", "replace", "-f", "be.txt", "-s", "1", "-c", "Q", code="ENCODING"
    )
    assert "0x0A bytes are no line breaks" in error["message"] and "utf-16-be" in error["hint"], error
    ascii_file = write(root / "a.py", "x = 1\ny = 2\n")
    fails(
        cli,
        ascii_file,
        "--encoding",
        "utf-16",
        "replace",
        "-f",
        "a.py",
        "-s",
        "1",
        "-c",
        "Q",
        code="ENCODING",
    )
    error = fails(cli, ascii_file, "--encoding", "utf-16-le", "read", "-f", "a.py", code="ENCODING")
    assert "0x0A bytes are no line breaks" in error["message"], error
    # (the second regression pass: UTF-8, one-line and short-line text files named so)
    for name, data in (
        ("u.txt", "héllo wörld\nsecond line\n".encode()),
        ("h.txt", b"hello world\n"),
        ("s.txt", b"line1\nline2\nline3x"),
    ):
        fails(
            cli,
            write(root / name, data),
            "--encoding",
            "utf-16-le",
            "replace",
            "-f",
            name,
            "-s",
            "1",
            "-c",
            "X",
            code="ENCODING",
        )
    # (the regression passes: genuine UTF-16 without a BOM whose bytes hold a 0x0A or are all ASCII,
    # but do not end with one; a line of Gurmukhi alone, little-endian, does: the case left refused)
    write(root / "empty.txt", b"")
    for name, text, codec in (
        ("sh.txt", "上海", "utf-16-le"),
        ("sh5.txt", "上海市上海", "utf-16-le"),
        ("pa.txt", "ਪੰਜਾਬੀ", "utf-16-le"),  # (the third pass: lines ending in a 0x0A byte)
        ("up.txt", "往上", "utf-16-be"),
        ("smile.txt", "😊", "utf-16-be"),
        ("jp.txt", "あいう", "utf-16-be"),
    ):
        write(root / name, text.encode(codec))
        rc, out = cli("--encoding", codec, "replace", "-f", name, "-s", "1", "-c", text + "!")
        assert rc == 0 and (root / name).read_bytes() == (text + "!").encode(codec), out
    rc, out = cli("--encoding", "utf-16-le", "write", "-f", "empty.txt", "-c", "上")
    assert rc == 0 and (root / "empty.txt").read_bytes() == "上".encode("utf-16-le"), out
    wide = write(root / "le.txt", "abc\ndef\n".encode("utf-16-le"))
    server = Server(cwd=root, env=be_env)
    try:
        edits = [
            {"file": "le.txt", "start": 1, "content": "ABC"},
            {"file": "a.py", "start": 1, "content": "# x"},
        ]
        error = server.err("be-edit", "ENCODING", {"edits": edits, "encoding": "utf-16"})
        assert "a.py does not read as utf-16" in error["message"], error
    finally:
        server.close()
    assert ascii_file.read_text() == "x = 1\ny = 2\n" and wide.read_bytes() == "abc\ndef\n".encode(
        "utf-16-le"
    )
    rc, out = cli("--encoding", "utf-16-le", "replace", "-f", "le.txt", "-s", "1", "-c", "ABC")
    assert rc == 0 and wide.read_bytes() == "ABC\ndef\n".encode("utf-16-le"), out


def test_a_read_with_a_start_that_can_never_be_right_is_refused_before_the_file_is_read(cli, root):
    """Found by an attack: `read -s 0` read and decoded the whole file before it said start must
    be 1 or more (a 100 MiB file: 0.84 s and 458 MB); a file it cannot decode got that error
    instead. The numbers are checked first."""
    path = write(root / "latin.txt", b"caf\xe9\n")
    error = fails(cli, path, "read", "-f", "latin.txt", "-s", "0", code="INVALID_ARGUMENT", status=2)
    assert error["message"] == "--start must be 1 or more, got 0"


def test_an_old_with_crlf_that_stands_once_byte_for_byte_is_that_one(cli, root):
    """Found by an attack: in a file of mixed line endings, an `old` copied with its CRLF that
    stands once byte for byte was AMBIGUOUS with its LF twin (the search sets line endings aside
    first). The one that matches byte for byte is taken; two such stay AMBIGUOUS."""
    path = write(root / "m.txt", b"x = 1\r\ny = 2\nx = 1\ny = 2\n")
    rc, out = cli("replace", "-f", "m.txt", "--old", "x = 1\r\ny = 2", "-c", "z")
    assert rc == 0 and path.read_bytes() == b"z\nx = 1\ny = 2\n", out
    path = write(root / "m.txt", b"x = 1\r\ny = 2\nx = 1\r\ny = 2\n")
    fails(cli, path, "replace", "-f", "m.txt", "--old", "x = 1\r\ny = 2", "-c", "z", code="AMBIGUOUS")


def test_an_edit_item_hint_says_how_the_command_takes_force(root, be_env):
    """Found by the newcomer review: an `edit` item refused for cutting a word, or for a
    placeholder line, had the hint "pass force: true"; `force` is no item key (the item was then
    refused as an unknown argument). The hint names the command's --force, and that works."""
    (root / "cfg.yml").write_text("port: 8080\n")
    (root / "e.json").write_text(json.dumps([{"file": "cfg.yml", "old": "port: 80", "content": "port: 443"}]))
    done = run_cli("edit", "--edits-file", "e.json", cwd=root, env=be_env)
    assert done.returncode == 1 and b"or pass --force to change part" in done.stderr, done.stderr
    (root / "p.json").write_text(
        json.dumps([{"file": "cfg.yml", "start": 1, "content": "# ... existing code ..."}])
    )
    done = run_cli("edit", "--edits-file", "p.json", cwd=root, env=be_env)
    assert done.returncode == 1 and b"or pass --force if the line is meant" in done.stderr, done.stderr
    assert (root / "cfg.yml").read_text() == "port: 8080\n"
    done = run_cli("edit", "--edits-file", "e.json", "--force", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "cfg.yml").read_text() == "port: 44380\n", done.stderr
    help_text = run_cli("edit", "--help", cwd=root, env=be_env).stdout.decode()
    assert "inside a word" in " ".join(help_text.split())


def test_an_edits_file_whose_json_does_not_parse_says_where(root, be_env):
    """Found by the newcomer review: a trailing comma in --edits-file was refused as "must be an
    array", though it is one, without the place of the mistake."""
    (root / "a.py").write_text("x = 1\ny = 2\n")
    (root / "bad.json").write_text('[{"file": "a.py", "start": 2, "content": "y = 3"},]')
    done = run_cli("edit", "--edits-file", "bad.json", cwd=root, env=be_env)
    assert done.returncode == 2, done.stderr
    assert b"is JSON text that does not parse (Expecting value: line 1 column 51 (char 50))" in done.stderr
    assert b"argument '--edits-file' is JSON" in done.stderr  # (the regression pass: it said 'edits')
    assert (root / "a.py").read_text() == "x = 1\ny = 2\n"
    server = Server(cwd=root, env=be_env)
    try:
        error = server.err("be-edit", "INVALID_ARGUMENT", {"edits": '[{"file": "a.py", "start": 2'})
        assert "does not parse (Expecting" in error["message"], error
        error = server.err("be-edit", "INVALID_ARGUMENT", {"edits": "a.py"})
        assert "must be an array" in error["message"], error
    finally:
        server.close()


HELP_FILES = {
    "app.py": "import os\n\n\ndef old_helper():\n    return 1\n\n\n# old line\n\n\n\nx = 1\ny = 2\n"
    + "def main():\n"
    + "".join(f"    step_{n} = {n}\n" for n in range(15, 46)),
    "draft.txt": "draft\n",
    "app.js": "function f(a) {\n  return [a, {b: (1)}];\n}\n",
    "index.html": "<html>\n<body>\n"
    + "<p>text</p>\n" * 12
    + "<div>\n  <span>17</span>\n</div>\n</body>\n</html>\n",
    "a.py": "a = 1\nb = 2\nc = 3\n",
    "edits.json": json.dumps([{"file": "a.py", "start": 1, "content": "a = 0"}]),
    "fix.diff": "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n",
}


def test_every_example_in_a_commands_help_runs(root, be_env, tmp_path):
    """Found by the newcomer review: replace's example gave a two-line range with a one-line
    `old`, which can never match. Each example line of each command's help runs, as printed, in a
    folder that holds the files it names (`git diff` stands for a diff it gives: fix.diff)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "better-edit-tools"
    wrapper.write_text('#!/bin/sh\nexec "$@"\n'.replace('"$@"', " ".join(be_command_prefix()) + ' "$@"'))
    wrapper.chmod(0o755)
    env = dict(be_env, PATH=f"{bin_dir}{os.pathsep}{be_env.get('PATH', os.environ['PATH'])}")
    examples = []
    for command in COMMANDS:
        text = run_cli(command, "--help", cwd=root, env=be_env).stdout.decode()
        block = text.split("example:")[1].split("\n\n")[0]  # (the exit statuses follow)
        examples += [line.strip() for line in block.splitlines() if line.strip()]
    assert len(examples) >= len(COMMANDS), examples
    for n, example in enumerate(examples):
        folder = tmp_path / f"run{n}"
        for name, data in HELP_FILES.items():
            write(folder / name, data)
        line = example.replace("git diff |", "cat fix.diff |")
        done = subprocess.run(["sh", "-c", line], cwd=folder, env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, (example, done.stdout, done.stderr)


def test_balance_verbose_lists_the_pairs_in_text_too(root, be_env):
    """Found by the newcomer review: `balance -v` printed only "balanced" in text output, though
    its help says it also lists the matched pairs (they were in `-o json` only)."""
    write(root / "ok.js", "function f(a) {\n  return [a];\n}\n")
    text = run_cli("balance", "-f", "ok.js", "-v", cwd=root, env=be_env).stdout.decode().splitlines()
    assert text[1:] == ["1:11-1:13: ( )", "1:15-3:1: { }", "2:10-2:12: [ ]"], text
    assert run_cli("balance", "-f", "ok.js", cwd=root, env=be_env).stdout.decode().count("\n") == 1


def test_a_bad_setting_from_the_environment_is_named_as_such(root, be_env):
    """Found by the newcomer review: BETTER_EDIT_ROOT naming no folder was reported as an invalid
    --root (no --root was given), and BETTER_EDIT_ENCODING as a bare "unknown encoding"."""
    write(root / "a.txt", "x\n")
    done = run_cli("read", "-f", "a.txt", cwd=root, env=dict(be_env, BETTER_EDIT_ROOT=str(root / "none")))
    assert done.returncode == 2 and b"invalid BETTER_EDIT_ROOT=" in done.stderr, done.stderr
    done = run_cli("read", "-f", "a.txt", "--root", str(root / "none"), cwd=root, env=be_env)
    assert done.returncode == 2 and b"invalid --root=" in done.stderr, done.stderr
    done = run_cli("read", "-f", "a.txt", cwd=root, env=dict(be_env, BETTER_EDIT_ENCODING="nope"))
    assert done.returncode == 2 and b"invalid BETTER_EDIT_ENCODING='nope'" in done.stderr, done.stderr


def test_a_bad_setting_says_the_range_and_speaks_the_callers_language(root, be_env):
    """Found by the CLI attack: `--max-chips` of 19 digits, an integer >= 1, was refused as "expected
    an integer >= 1"; and the reasons of bad settings were English inside a Chinese message."""
    write(root / "a.txt", "x\n")
    done = run_cli("read", "-f", "a.txt", "--max-chips", "1" * 19, cwd=root, env=be_env)
    assert done.returncode == 2, done.stderr
    assert b"expected a whole number from 1 to 999999999999999" in done.stderr, done.stderr
    done = run_cli("--lang", "zh", "read", "-f", "a.txt", "--root", str(root / "none"), cwd=root, env=be_env)
    said = done.stderr.decode()
    assert done.returncode == 2 and said.rstrip().endswith("不是文件夹") and "directory" not in said, said
    done = run_cli(
        "read",
        "-f",
        "a.txt",
        cwd=root,
        env=dict(be_env, BETTER_EDIT_SNAPSHOT_PERSIST="maybe", LC_ALL="zh_CN.UTF-8"),
    )
    said = done.stderr.decode()
    assert done.returncode == 2 and "应为 true 或 false" in said, said
    assert (root / "a.txt").read_text() == "x\n"


def test_a_target_of_an_unknown_kind_gets_a_hint_in_the_callers_form(root, be_env):
    """Found by the newcomer review: `--target foo:g` was answered with the JSON shape of a target
    and the generic "correct the argument" hint; the hint now shows the form each caller writes."""
    write(root / "a.py", "def g():\n    pass\n")
    done = run_cli("read", "-f", "a.py", "--target", "foo:g", cwd=root, env=be_env)
    assert done.returncode == 2 and b"hint: write --target KIND:VALUE" in done.stderr, done.stderr
    server = Server(cwd=root, env=be_env)
    try:
        error = server.err("be-read", "INVALID_ARGUMENT", {"file": "a.py", "target": "fn"})
        assert '"function:main"' in error["hint"], error
    finally:
        server.close()


def test_an_old_that_kept_the_cr_of_its_last_crlf_line_matches_its_lines(root, be_env):
    """Found by the encodings attack: `old` "x = 1\\r\\ny = 2\\r" at lines 1-2 of a CRLF file was
    MISMATCH, whose closest block was those very lines "exactly (line endings aside)", with a
    token that failed the same way: an agent looped. The CR is the last line's ending."""
    write(root / "c.py", b"x = 1\r\ny = 2\r\nz = 3\r\n")
    server = Server(cwd=root, env=be_env)
    try:
        server.ok(
            "be-replace", {"file": "c.py", "start": 1, "end": 2, "old": "x = 1\r\ny = 2\r", "content": "Q"}
        )
        assert (root / "c.py").read_bytes() == b"Q\r\nz = 3\r\n"
        server.err("be-replace", "MISMATCH", {"file": "c.py", "start": 1, "old": "Q\r\r", "content": "R"})
    finally:
        server.close()


def test_command_line_text_that_is_not_utf8_is_named_as_such(root, be_env):
    """Found by the encodings attack: `-c $'th\\xe9'` (a Latin-1 byte on the command line) was
    refused as "the content holds U+DCE9, half of a UTF-16 pair ... (a \\u escape of a pair was
    cut)", words for a JSON client. It now says the option's text is not UTF-8."""
    write(root / "lat.txt", b"caf\xe9\n")
    for option in ("-c", "--old"):
        args = ["-c", "x"] if option == "--old" else []
        done = subprocess.run(
            [
                *be_command_prefix(),
                "--encoding",
                "latin-1",
                "replace",
                "-f",
                "lat.txt",
                option.encode(),
                b"th\xe9",
                *args,
            ],
            cwd=root,
            env=be_env,
            capture_output=True,
        )
        assert done.returncode == 2 and b"is not valid UTF-8" in done.stderr, done.stderr
        assert b"UTF-16" not in done.stderr
    assert (root / "lat.txt").read_bytes() == b"caf\xe9\n"


def test_a_non_text_codec_from_the_environment_is_named_as_such(root, be_env):
    """Found by the regression pass: BETTER_EDIT_ENCODING=rot13 was an INVALID_ARGUMENT "correct the
    argument", though no argument named it."""
    write(root / "a.txt", "x\n")
    done = run_cli("read", "-f", "a.txt", cwd=root, env=dict(be_env, BETTER_EDIT_ENCODING="rot13"))
    assert done.returncode == 2 and b"invalid BETTER_EDIT_ENCODING='rot13'" in done.stderr, done.stderr


def test_a_command_option_before_the_command_is_named_so(root, be_env):
    """Found by the newcomer review: `better-edit-tools -o json read -f a.txt` said "unknown command
    'json'". The option's value was taken for the command; the message says where it goes. A
    second newcomer review: `-ojson read` worked and `-o json read` did not. -o, which every
    command has, is read before the command in all its spellings now; other options are named."""
    write(root / "a.txt", "x\n")
    for before in (["-o", "json"], ["-ojson"], ["-o=json"], ["--output", "json"], ["--output=json"]):
        done = run_cli(*before, "read", "-f", "a.txt", cwd=root, env=be_env)
        assert done.returncode == 0 and json.loads(done.stdout)["content"] == "1\tx", (before, done.stdout)
    done = run_cli("-f", "a.txt", "read", cwd=root, env=be_env)
    assert done.returncode == 2 and b"-f a.txt comes before the command read" in done.stderr, done.stderr
    # (the third regression pass: -o without its value, and -o with no command)
    done = run_cli("-o", "read", "-f", "a.txt", cwd=root, env=be_env)
    assert done.returncode == 2 and b"-o/--output: expected one argument" in done.stderr, done.stderr
    done = run_cli("-o", "--lang", "zh", "read", "-f", "a.txt", cwd=root, env=be_env)
    assert done.returncode == 2 and "-o/--output：需要一个值" in done.stderr.decode(), done.stderr
    done = run_cli("-o", "json", cwd=root, env=be_env)
    assert done.returncode == 2 and "-o goes with a command" in json.loads(done.stdout)["error"]["message"]
    done = run_cli("frob", "-f", "a.txt", cwd=root, env=be_env)
    assert done.returncode == 2 and b"unknown command 'frob'" in done.stderr, done.stderr


@pytest.mark.skipif(FROZEN, reason="the executable does not read PYTHONIOENCODING (docs/install.md)")
def test_an_output_encoding_that_cannot_hold_the_text_gets_escapes_not_a_traceback(root, be_env):
    """Found by an attack: with PYTHONIOENCODING=ascii (or LC_ALL=C and PYTHONUTF8=0) an insert of
    `é` was made, then printing its diff raised UnicodeEncodeError: a traceback and exit 1, and a
    script that retried on failure inserted it twice. Text output now writes escapes, JSON output
    `\\uXXXX` (still the same JSON), and the exit status is the edit's."""
    (root / "ins.txt").write_text("a\n")
    ascii_env = dict(be_env, PYTHONIOENCODING="ascii")
    done = run_cli("insert", "-f", "ins.txt", "--after-line", "-1", "-c", "é😀", cwd=root, env=ascii_env)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"+\\xe9\\U0001f600" in done.stdout, done.stdout
    assert b"stdout's encoding (ascii) cannot hold some characters" in done.stderr, (
        done.stderr
    )  # (the regression pass)
    assert (root / "ins.txt").read_text(encoding="utf-8") == "a\né😀\n"
    done, answer = run_json("read", "-f", "ins.txt", cwd=root, env=ascii_env)
    assert done.returncode == 0 and done.stdout.isascii() and answer["content"] == "1\ta\n2\té😀", done
    done, answer = run_json("read", "-f", "nope-é.txt", cwd=root, env=ascii_env)
    assert done.returncode == 1 and answer["error"]["code"] == "NOT_FOUND", done
    # (the same locale hands over UTF-8 arguments as escaped bytes: they are read as UTF-8)
    c_env = dict(be_env, LC_ALL="C", PYTHONUTF8="0")
    done = run_cli("replace", "-f", "ins.txt", "-s", "1", "-c", "ñ", cwd=root, env=c_env)
    assert done.returncode == 0, done.stderr
    assert (root / "ins.txt").read_text(encoding="utf-8") == "ñ\né😀\n"


@POSIX
def test_a_read_only_folder_gets_no_new_folders_and_a_preview_says_the_edit_would_be_refused(root, be_env):
    """Found by an attack: `write -f rodir/a/b/new.txt` (and edit and patch items) made `a/b` inside
    a folder without write bits, as root, where `write -f rodir/new.txt` was refused; and
    `--preview` of an edit of a read-only file said nothing of the PERMISSION the edit then got.
    The folder is checked before folders are made in it; a preview warns."""
    (root / "rodir").mkdir()
    (root / "ro.txt").write_text("a\n")
    try:
        os.chmod(root / "rodir", 0o555)
        os.chmod(root / "ro.txt", 0o444)
        done = run_cli("write", "-f", "rodir/a/b/new.txt", "-c", "x", cwd=root, env=be_env)
        assert done.returncode == 1 and b"PERMISSION" in done.stderr, done.stderr
        items = b'[{"file": "rodir/e/new.txt", "op": "write", "content": "x"}]'
        done = run_cli("edit", "--edits-file", "-", cwd=root, env=be_env, input=items)
        assert done.returncode == 1 and list((root / "rodir").iterdir()) == [], done.stderr
        for args in (
            ("replace", "-f", "ro.txt", "-s", "1", "-c", "b"),
            ("write", "-f", "rodir/x/y.txt", "-c", "z"),
        ):
            done = run_cli(*args, "--preview", cwd=root, env=be_env)
            assert (
                done.returncode == 0 and b"the edit itself would be refused: permission denied" in done.stdout
            )
        assert (root / "ro.txt").read_text() == "a\n" and list((root / "rodir").iterdir()) == []
    finally:
        os.chmod(root / "rodir", 0o755)
        os.chmod(root / "ro.txt", 0o644)


def test_a_full_disk_hint_names_inodes_too(root, be_env):
    """Found by an attack: on a file system out of inodes (a tmpfs with nr_inodes=12, 2 MB free),
    ENOSPC said "check free space", which `df -h` showed plenty of. The hint names both."""
    (root / "sp.txt").write_text("a\n")
    done = run_cli(
        "replace",
        "-f",
        "sp.txt",
        "-s",
        "1",
        "-c",
        "b",
        cwd=root,
        env=dict(be_env, BETTER_EDIT_FAULT="3:ENOSPC"),
    )
    assert done.returncode == 1 and b"No space left on device" in done.stderr, done.stderr
    assert b"`df -i`" in done.stderr and (root / "sp.txt").read_text() == "a\n", done.stderr


@POSIX
def test_a_dead_writers_leftovers_beside_another_file_go_with_the_next_edit_in_their_folder(cli, root):
    """Found by an attack: a folder made read-only while an edit prepared f0.txt left its
    `.f0.txt.be-PID-X.tmp` and `.old` (a second name of f0.txt) beside it: the undo could not remove
    them, and only a later edit of f0.txt itself did. An edit of any file of the folder now removes
    a dead process's temporaries and its kept names that are only another name of their file; a
    kept name holding other bytes stays (a commit's undo may need it)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    (root / "f0.txt").write_text("old\n")
    (root / "f1.txt").write_text("a\n")
    tmp = root / f".f0.txt.be-{dead.pid}-5009b84b.tmp"
    tmp.write_text("new\n")
    second = root / f".f0.txt.be-{dead.pid}-678a0ffe.old"
    os.link(root / "f0.txt", second)
    other = root / f".f0.txt.be-{dead.pid}-12345678.old"
    other.write_text("older\n")
    rc, out = cli("replace", "-f", "f1.txt", "-s", "1", "-c", "b", "-o", "json")
    assert rc == 0, out
    assert not tmp.exists() and not second.exists() and other.read_text() == "older\n"
    assert (root / "f0.txt").read_text() == "old\n" and os.stat(root / "f0.txt").st_nlink == 1


@POSIX
def test_control_characters_are_escaped_on_a_terminal_and_kept_in_a_pipe(root, be_env):
    """A file holding ESC sequences (`ESC]0;title BEL`, `ESC[2J`) was printed raw by `read`: on a
    terminal they ran (cleared the screen, retitled the window). On a terminal they are now shown
    escaped (`\\x1b`); a pipe still gets the file's bytes, which scripts read."""
    import pty

    (root / "esc.txt").write_bytes(b"safe\n\x1b]0;pwned\x07evil\x1b[2J\n")
    primary, secondary = pty.openpty()
    done = subprocess.run(
        [*be_command_prefix(), "read", "-f", "esc.txt"],
        cwd=root,
        env=be_env,
        stdout=secondary,
        stderr=secondary,
        timeout=60,
    )
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # (EIO once the other end is closed)
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert done.returncode == 0 and b"\\x1b]0;pwned\\x07evil\\x1b[2J" in shown and b"\x1b" not in shown, shown
    piped = run_cli("read", "-f", "esc.txt", cwd=root, env=be_env)
    assert b"2\t\x1b]0;pwned\x07evil\x1b[2J\n" in piped.stdout, piped.stdout


def test_argument_errors_name_the_option_that_gave_the_argument(root, be_env):
    """Found by the shell-script attack: `read -s abc` said "argument 'start' must be an integer"
    and `--target weird` spoke of {"kind": K, "value": V}: the server's JSON, not what was typed.
    The CLI names its options; items of an edit keep their JSON keys."""
    (root / "f.txt").write_text("a\n")
    for args, words in (
        (("-s", "abc"), b"argument '--start' must be an integer"),
        (
            ("--target", "line:abc"),
            b"target line:abc: the line must be a whole number",
        ),  # (its VALUE is wrong)
        (("--target", "weird"), b"--target must be KIND:VALUE with KIND one of line"),
    ):
        done = run_cli("read", "-f", "f.txt", *args, cwd=root, env=be_env)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
    items = b'[{"file": "f.txt", "start": "x", "content": "y"}]'
    done = run_cli("edit", "--edits-file", "-", cwd=root, env=be_env, input=items)
    assert done.returncode == 2 and b"argument 'start' must be an integer" in done.stderr, done.stderr


# --- the file as a word (docs/cli.md#the-file-as-a-word) ---------------------------------------------


def test_a_command_takes_its_file_as_the_word_after_it(cli, run_be, root):
    """(0.3) `read a.py`, `patch fix.diff`: a newcomer's first try was a usage error (`the following
    arguments are required: --file/-f`); the word right after the command is now the file, as
    --file would name it."""
    write(root / "a.py", "def f():\n    return 1\n")
    rc, out = cli("read", "a.py", "-s", "2")
    assert rc == 0 and out["content"] == "2\t    return 1", out
    rc, out = cli("replace", "a.py", "-s", "2", "-c", "    return 2")
    assert rc == 0 and (root / "a.py").read_text() == "def f():\n    return 2\n", out
    rc, out = cli("func-range", "a.py", "-l", "2")
    assert rc == 0 and (out["start"], out["end"]) == (1, 2), out
    rc, out = cli("write", "new/b.txt", "-c", "b")
    assert rc == 0 and (root / "new" / "b.txt").read_text() == "b", out
    write(root / "fix.diff", "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-    return 2\n+    return 3\n")
    rc, out = cli("patch", "fix.diff")
    assert rc == 0 and (root / "a.py").read_text() == "def f():\n    return 3\n", out
    items = json.dumps([{"file": "a.py", "start": 1, "content": "def g():"}])
    rc, out = cli("edit", "-", input=items.encode())
    assert rc == 0 and (root / "a.py").read_text() == "def g():\n    return 3\n", out
    rc, out = cli("--root", str(root), "read", "a.py", "--brief")  # (global options before it)
    assert rc == 0 and out["total"] == 2, out


def test_a_word_anywhere_else_or_the_file_named_twice_is_refused(cli, run_be, root):
    """Found by the newcomer pass: taken anywhere, the word made `write -c hello world` (content
    that lost its quotes) create the file `world`. Only the word right after the command names
    the file; any other is refused and named, and so is the file named twice, even alike."""
    before = write(root / "a.txt", "a\n").read_bytes()
    done = run_be("write", "-c", "hello", "world")
    assert done.returncode == 2 and not (root / "world").exists(), done.stderr
    assert b"hint: name it right after the command (better-edit-tools write FILE ...)" in done.stderr
    done = run_be("replace", "-f", "a.txt", "-s", "1", "-c", "new", "line")
    assert done.returncode == 2 and b"unrecognized arguments: line" in done.stderr, done.stderr
    assert b"quote a value that holds spaces (-c 'new line')" in done.stderr
    done = run_be("read", "a.txt", "1", "2")
    assert done.returncode == 2 and b"hint: 1 is no option: line numbers go with their options" in done.stderr
    for args in (
        ("replace", "a.txt", "-f", "a.txt", "-s", "1", "-c", "x"),
        ("patch", "p.diff", "--patch-file", "-"),
    ):
        done = run_be(*args)
        assert done.returncode == 2 and b"the word after the command, and --" in done.stderr, done.stderr
    rc, out = cli("read", "-o", "json", "a.txt")  # (after an option: no word)
    assert rc == 2 and "name it right after the command" in out["error"]["hint"], out
    assert (root / "a.txt").read_bytes() == before


def test_a_long_option_with_one_dash_or_a_dash_for_text_is_refused(run_be, root):
    """Found by the newcomer pass: argparse reads `-content=hello` as -c with the text
    "ontent=hello" and `-file=x.txt` as the file "ile=x.txt", and `-c -` writes the text "-"
    where standard input was meant: each wrote in silence. Each is a usage error now; the
    text "-" stays possible as --content=-."""
    before = write(root / "r.txt", "a\nb\n").read_bytes()
    for args in (("replace", "r.txt", "-s", "2", "-content=bee"), ("write", "-file=x.txt", "-c", "hi")):
        done = run_be(*args)
        assert done.returncode == 2 and b"a long option has two dashes, --" in done.stderr, done.stderr
    done = run_be("write", "r.txt", "-c", "-", input=b"new text\n")
    assert done.returncode == 2 and b"to read standard input, give --content-file -" in done.stderr
    assert (root / "r.txt").read_bytes() == before and not list(root.glob("*ile=*"))
    done = run_be("write", "r.txt", "--content=-")
    assert done.returncode == 0 and (root / "r.txt").read_text() == "-", done.stderr
    done = run_be("replace", "r.txt", "-s", "1", "-c", "-target=arm64 -O2")  # (a value: it holds a space)
    assert done.returncode == 0 and (root / "r.txt").read_text() == "-target=arm64 -O2", done.stderr


def test_usage_errors_say_what_was_meant(run_be, cli, root):
    """Found by the newcomer pass: a missing required option hid the typo beside it
    (`--after_line`), `-s 2-3` and `--after-line end` said only "must be an integer", inline JSON
    as the edits file said only "cannot read", and `cat`, `undo` or the file alone as the
    command named no command to use."""
    write(root / "a.txt", "a\nb\n")
    done = run_be("insert", "a.txt", "--after_line", "0", "-c", "x")
    assert b"hint: --after_line is no option of this command: did you mean --after-line?" in done.stderr
    for args, hint in (
        (("delete", "a.txt", "-s", "2-3"), "a range is two options: --start 2 --end 3"),
        (
            ("insert", "a.txt", "--after-line", "end", "-c", "x"),
            "--after-line 0 inserts at the top of the file",
        ),
        (("edit", '[{"file": "a.txt", "start": 1, "content": "x"}]'), "that is the text itself"),
    ):
        rc, out = cli(*args)
        assert rc == 2 and out["error"]["hint"].startswith(hint), out
    # (the regression pass: an abbreviation argparse took was blamed, not the stray word after it;
    # and insert's after_line got the range hint of --start and --end, which it lacks)
    done = run_be("read", "a.txt", "--tar", "marker:a", "3")
    assert b"hint: 3 is no option: line numbers go with their options" in done.stderr, done.stderr
    rc, out = cli("insert", "a.txt", "--after-line", "2-3", "-c", "x")
    assert rc == 2 and "--start" not in out["error"]["hint"], out
    done = run_be("read", "a.txt", "--target")  # (the second pass: a missing value is no '-' value)
    assert b"hint: --target needs a value after it: --target VALUE" in done.stderr, done.stderr
    for word, near in (
        ("cat", "did you mean read?"),
        ("a.txt", "did you mean read a.txt?"),
        ("undo", "be-trx-rollback"),
    ):
        done = run_be(word)
        assert done.returncode == 2 and near in done.stderr.decode(), done.stderr
    assert (root / "a.txt").read_text() == "a\nb\n"


def test_an_option_guessed_or_mistyped_gets_the_one_it_meant(cli, run_be, root):
    """(0.3) `replace --old a --new b`, agents' most common guess, said only "unrecognized
    arguments"; the hint now names the option meant, in text and in JSON, in both languages."""
    before = write(root / "a.txt", "a\n").read_bytes()
    done = run_be("replace", "a.txt", "--old", "a", "--new", "b")
    assert done.returncode == 2
    assert (
        done.stderr.decode().splitlines()[-1]
        == "hint: --new is no option of this command: did you mean --content?"
    )
    rc, out = cli("read", "a.txt", "--satrt", "1")
    assert (
        rc == 2 and out["error"]["hint"] == "--satrt is no option of this command: did you mean --start?"
    ), out
    done = run_be("--lang", "zh", "patch", "--diff=x.diff")
    assert done.returncode == 2 and "是否指 --patch-file" in done.stderr.decode(), done.stderr
    done = run_be("read", "a.txt", "--bogus")  # (nothing near: argparse's words alone)
    assert done.returncode == 2 and b"hint:" not in done.stderr
    assert (root / "a.txt").read_bytes() == before
