"""Edits that fix themselves (issue 12), through the CLI and the server: mismatch diagnostics with a
view id to retry with, moved blocks followed, fresh view ids and no-ops, replace by target, `old`
with read prefixes, error text that teaches, a lean tool list.

The last test replays a small corpus of realistic agent mistakes and counts how many end applied
directly, after one mechanical retry (using only what the error said), or refused.
"""

import json
import re

import pytest
from harness import Server, be_command_prefix, run_cli, run_json

PY = "def total(items):\n\tresult = 0\n\tfor item in items:\n\t\tresult += item.price\n\treturn result\n"
JS = 'function greet(name) {\n  return "hello " + name;\n}\n\nfunction bye() {\n  return "bye";\n}\n'


@pytest.fixture
def server(root, be_env):
    srv = Server(root, be_env)
    yield srv
    srv.close()


# ---- diagnostics ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old, lines, kind",
    [
        ("    result = 0\n    for item in items:", (), "indentation"),  # spaces where the file has tabs
        ("\tresult = 0  \n\tfor item in items:", ("-s", "2", "-e", "3"), "trailing_whitespace"),
        ("\tRESULT = 0\n\tfor item in items:", (), "case"),
        ("3\t\tresult = 0\n4\t\tfor item in items:", (), "line_numbers"),  # prefixes naming wrong lines
        (
            " \tresult = 0\n-\tfor item in items:\n+\tfor item in cart:",
            (),
            "diff_prefixes",
        ),  # copied from a diff
        ("\tresult = 0\n\tfor item in items:\n\t\tresult += item.cost", (), "text"),
        ("\tresult = 0\n\tfor item in items:\n\t\tresult += item.price\n\t\tcount += 1", (), "missing_line"),
    ],
)
def test_every_mismatch_carries_closest_with_its_first_difference(root, be_env, old, lines, kind):
    (root / "cart.py").write_text(PY)
    done, answer = run_json("replace", "-f", "cart.py", *lines, "--old", old, "-c", "x", cwd=root, env=be_env)
    assert done.returncode == 1
    error = answer["error"]
    assert error["code"] == "MISMATCH"
    closest = error["closest"]
    assert closest["first_difference"]["kind"] == kind, closest
    assert closest["start"] == 2 and 0.5 <= closest["similarity"] <= 1
    assert closest["viewed_code_id"].startswith(f"v1:{closest['start']}-{closest['end']}:")
    assert (root / "cart.py").read_text() == PY
    # (the contract audit: the message itself names the difference in words, not only the details)
    where = f"line {closest['first_difference']['line']}"
    assert f"; closest block: {where}" in error["message"], error["message"]


def test_a_minified_line_is_shown_cut_around_its_difference(root, be_env):
    line = "var a=[" + ",".join(f'"item{k}"' for k in range(2000)) + "];"
    body = f"// bundle\n{line}\nexport default a;\n"
    (root / "min.js").write_text(body)
    old = "// bundle\n" + line.replace('"item1500"', '"itme1500"')
    done, answer = run_json("replace", "-f", "min.js", "--old", old, "-c", "x", cwd=root, env=be_env)
    assert done.returncode == 1 and (root / "min.js").read_text() == body
    d = answer["error"]["closest"]["first_difference"]
    column = line.index('"item1500"') + 4  # (1-based, at the swapped "m")
    assert (d["kind"], d["line"], d["column"]) == ("text", 2, column)
    assert len(d["expected"]) == len(d["actual"]) == 200 and "itme1500" in d["expected"]
    assert d["actual"] == line[d["shown_from"] - 1 :][:200]
    done = run_cli("replace", "-f", "min.js", "--old", old, "-c", "x", cwd=root, env=be_env)
    assert f"line 2, column {column}: old has 'itme1500" in (done.stdout + done.stderr).decode()


def test_a_mismatch_without_start_has_one_shape(root, be_env):
    """One engine answers: a similar block gives `actual`, `start`, `end` and `closest` for the same
    lines; nothing at least half similar gives `closest: null` and no guess."""
    (root / "f.txt").write_text("a = 1\nb = 2\na = 1\n")
    done, answer = run_json("replace", "-f", "f.txt", "--old", "b = 3", "-c", "z", cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 1 and error["code"] == "MISMATCH"
    assert (error["start"], error["end"], error["actual"]) == (2, 2, "b = 2")
    assert (error["closest"]["start"], error["closest"]["end"]) == (2, 2)
    done, answer = run_json(
        "replace", "-f", "f.txt", "--old", "SELECT * FROM users;", "-c", "z", cwd=root, env=be_env
    )
    error = answer["error"]
    assert error["code"] == "MISMATCH" and error["closest"] is None and error["found_at"] == []
    assert not {"actual", "start", "end"} & set(error)


def test_the_first_difference_is_worded_in_chinese_too(root, be_env):
    """The words of a first difference come from the message table in both languages: the same
    details (how the lines indent, which quote) in Chinese, with no English left in them."""
    (root / "cart.py").write_text(PY)
    done = run_cli("--lang", "zh", "replace", "-f", "cart.py", "--old", "    result = 0\n    for item in items:",
                   "-c", "x", cwd=root, env=be_env)  # fmt: skip
    text = (done.stdout + done.stderr).decode()
    assert "第 2 行第 1 列：old 用 4 个空格 缩进，文件用 1 个制表符" in text, text
    (root / "greet.js").write_text(JS)
    done = run_cli("--lang", "zh", "replace", "-f", "greet.js", "--old", "  return “hello ” + name;", "-c", "x",
                   cwd=root, env=be_env)  # fmt: skip
    text = (done.stdout + done.stderr).decode()
    assert 'old 中是 印刷体引号 “，文件中是 "' in text, text
    assert "typographic" not in text and "indents" not in text


def test_quotes_and_escaping_are_named(server, root):
    (root / "greet.js").write_text(JS)
    error = server.err(
        "be-replace", "MISMATCH", file="greet.js", old="  return “hello ” + name;", content="x"
    )
    assert error["closest"]["first_difference"]["kind"] == "quotes"
    result = server.tool_result(
        "be-replace", {"file": "greet.js", "old": 'function bye() {\\n  return \\"bye\\";', "content": "x"}
    )
    error = result["structuredContent"]["error"]
    assert error["closest"]["first_difference"]["kind"] == "escaping"
    text = result["content"][0]["text"]
    assert "closest: lines 5-6" in text and "double-escaped" in text  # the text teaches too


def test_a_corrected_retry_needs_no_read(root, be_env):
    """The closest block's viewed_code_id proves the retry is based on what the error showed."""
    (root / "cart.py").write_text(PY)
    _done, answer = run_json(
        "replace", "-f", "cart.py", "--old", "    return result", "-c", "x", cwd=root, env=be_env
    )
    closest = answer["error"]["closest"]
    done, result = run_json(
        "replace",
        "-f",
        "cart.py",
        "-s",
        str(closest["start"]),
        "-e",
        str(closest["end"]),
        "-c",
        "\treturn round(result, 2)",
        "--viewed-code-id",
        closest["viewed_code_id"],
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0, result
    assert (root / "cart.py").read_text().endswith("\treturn round(result, 2)\n")


# ---- moved, not changed ----------------------------------------------------------------------------


def test_a_block_moved_by_another_edit_is_followed(server, root):
    (root / "cart.py").write_text(PY)
    view = server.ok("be-read", {"file": "cart.py", "start": 4, "end": 5})
    server.ok("be-insert", {"file": "cart.py", "after_line": 0, "content": "import math\n\n"})
    result = server.ok(
        "be-replace",
        {
            "file": "cart.py",
            "start": 5,
            "content": "\t\tresult += item.price * item.count",
            "viewed_code_id": view["viewed_code_id"],
        },
    )
    assert result["relocated"] == 2 and result["start"] == 7
    assert any("lines moved by +2" in w and "edited 7-7 instead of 5-5" in w for w in result["warnings"])
    assert "\t\tresult += item.price * item.count\n" in (root / "cart.py").read_text()


def test_a_moved_and_changed_block_is_stale(root, be_env):
    (root / "cart.py").write_text(PY)
    _done, view = run_json("read", "-f", "cart.py", "-s", "4", "-e", "5", cwd=root, env=be_env)
    (root / "cart.py").write_text("# moved\n" + PY.replace("item.price", "item.cost"))
    done, answer = run_json(
        "delete", "-f", "cart.py", "-s", "4", "--viewed-code-id", view["viewed_code_id"], cwd=root, env=be_env
    )
    assert done.returncode == 1 and answer["error"]["code"] == "STALE_VIEW"


# ---- fresh ids and no-ops --------------------------------------------------------------------------


def test_every_edit_returns_the_id_of_what_it_wrote(root, be_env):
    (root / "cart.py").write_text(PY)
    _done, result = run_json(
        "insert", "-f", "cart.py", "--after-line", "1", "-c", '\t"""Sum the prices."""', cwd=root, env=be_env
    )
    _done, read = run_json("read", "-f", "cart.py", "-s", "2", "-e", "2", cwd=root, env=be_env)
    assert result["viewed_code_id"] == read["viewed_code_id"]
    done, again = run_json(
        "replace",
        "-f",
        "cart.py",
        "-s",
        "2",
        "-c",
        "\t'''Sum.'''",
        "--viewed-code-id",
        result["viewed_code_id"],
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0 and again["changed"] is True


def test_an_edit_that_changes_nothing_writes_nothing(server, root, cache_dir):
    (root / "cart.py").write_text(PY)
    result = server.ok("be-replace", {"file": "cart.py", "start": 2, "content": "\tresult = 0"})
    assert result["changed"] is False and "event_id" not in result and result["diff"] == ""
    assert any("already" in w for w in result["warnings"])
    assert server.ok("be-trx-status", {})["snapshots"] == []
    assert server.ok("be-write", {"file": "cart.py", "content": PY})["changed"] is False


# ---- replace by target, read prefixes, JSON-string targets ---------------------------------------


def test_replace_by_target_mcp_and_cli(server, root, be_env):
    (root / "greet.js").write_text(JS)
    target = json.dumps({"kind": "function", "value": "bye"})  # a target sent as a JSON string
    result = server.ok(
        "be-replace", {"file": "greet.js", "target": target, "content": "function bye() { return 'ciao'; }"}
    )
    assert (result["start"], result["end"]) == (5, 7)
    done, result = run_json(
        "replace",
        "-f",
        "greet.js",
        "--target",
        "marker:hello",
        "-c",
        '  return "hi " + name;',
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0 and result["start"] == 2
    assert (root / "greet.js").read_text().startswith('function greet(name) {\n  return "hi " + name;\n}')


def test_old_with_read_prefixes_applies_where_they_point(root, be_env):
    (root / "cart.py").write_text(PY)
    _done, read = run_json("read", "-f", "cart.py", "-s", "4", "-e", "5", cwd=root, env=be_env)
    done, result = run_json(
        "replace",
        "-f",
        "cart.py",
        "--old",
        read["content"],
        "-c",
        "\t\tresult += 1\n\treturn result",
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0, result
    assert any("prefixes" in w for w in result["warnings"])
    assert (result["start"], result["end"]) == (4, 5)


def test_old_with_stale_read_prefixes_never_picks_one_of_two_identical_places(root, be_env, server):
    """Found by the agent-mistakes attack: `8<TAB>    return None` copied from a read of g(),
    then four imports added on top: line 8 was f()'s own `return None` now, the prefixes named it,
    and the edit changed f() (exit 0, a warning that they "named lines 8-8, which hold that
    text"). Where the text stands more than once, the prefixes alone no longer pick the place:
    AMBIGUOUS listing both, as the same `old` without them is; a viewed_code_id, or start, does."""
    source = 'def f(x):\n    if x:\n        return "hi"\n    return None\n\n\ndef g(y):\n    return None\n'
    (root / "t.py").write_text(source)
    _done, read = run_json("read", "-f", "t.py", "-s", "8", "-e", "8", cwd=root, env=be_env)
    now = "import os\nimport sys\nimport re\nimport json\n" + source
    (root / "t.py").write_text(now)
    done, result = run_json(
        "replace", "-f", "t.py", "--old", read["content"], "-c", "    return y", cwd=root, env=be_env
    )
    assert done.returncode == 1 and result["error"]["code"] == "AMBIGUOUS", result
    assert "naming lines 8-8" in result["error"]["message"], result
    assert result["error"]["candidates"] == [{"start": 8, "end": 8}, {"start": 12, "end": 12}], result
    assert "--viewed-code-id" in result["error"]["hint"], result
    error = server.err(
        "be-replace", "AMBIGUOUS", file=str(root / "t.py"), old=read["content"], content="    return y"
    )
    assert "viewed_code_id" in error["hint"] and "--" not in error["hint"], error
    assert (root / "t.py").read_text() == now
    done, result = run_json(
        "replace", "-f", "t.py", "--old", read["content"], "-c", "    return y", "--viewed-code-id",
        read["viewed_code_id"], cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result  # (it was g()'s)
    (root / "t.py").write_text(source)
    args = ("replace", "-f", "t.py", "--old", read["content"], "-c", "    return y", "-s", "8")
    done, result = run_json(*args, cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "t.py").read_text() == source[: -len("None\n")] + "y\n", result


def test_an_old_searched_for_from_the_first_letter_of_a_line_is_not_blamed_for_indentation(
    root, be_env, server
):
    """Found by the agent-mistakes attack: `--old 'return subtotal * (1 + self.taxrate)'` (the line
    from its first letter, legal for a search, with a typo) got the closest "line 4, column 1: old
    has no indentation, the file indents with 8 spaces": the agent indented it and failed again.
    So did typographic quotes and a literal backslash-n. A search's first line may start after
    the indentation; the difference named is the real one. With start, old must be whole lines,
    and the indentation is still named."""
    source = 'class Shop:\n    def total(self, items):\n        return subtotal * (1 + self.tax_rate)\n\n    name = "shop"\n'
    (root / "s.py").write_text(source)
    cases = [
        ("return subtotal * (1 + self.taxrate)", "text", "taxrate"),
        ("name = \u201cshop\u201d", "quotes", "\u201c"),
        ("def total(self, items):\\n        return subtotal", "escaping", "\\n"),
    ]
    for old, kind, said in cases:
        error = server.err("be-replace", "MISMATCH", file=str(root / "s.py"), old=old, content="x")
        difference = error["closest"]["first_difference"]
        assert difference["kind"] == kind and said in error["message"] + str(difference), (old, error)
    done, result = run_json("replace", "-f", "s.py", "--old", cases[0][0], "-c", "x", cwd=root, env=be_env)
    assert (
        done.returncode == 1 and "indentation" not in result["error"]["closest"]["first_difference"]["kind"]
    )
    error = server.err(
        "be-replace", "MISMATCH", file=str(root / "s.py"), start=3, old=cases[0][0], content="x"
    )
    assert error["closest"]["first_difference"]["kind"] == "indentation", error
    # (the second regression pass: an old starting after the first word of a line, or with part of
    # its indentation, is accepted there by a search; the difference named is the real one)
    for old in ("subtotal * (1 + self.tax_rat)", "  return subtotal * (1 + self.tax_rat)"):
        error = server.err("be-replace", "MISMATCH", file=str(root / "s.py"), old=old, content="x")
        assert error["closest"]["first_difference"]["column"] > 30, (old, error)
    # (the third pass: an old indented more than the file is not matched against the spaces that
    # align a comment inside the line: the indentation is named)
    (root / "al.py").write_text("def f():\n    x = 1        # first\n    y = 2        # second\n")
    old = "        x = 1        # first\n        y = 3        # second"
    error = server.err("be-replace", "MISMATCH", file=str(root / "al.py"), old=old, content="x")
    assert error["closest"]["first_difference"]["kind"] == "indentation", error
    assert error["closest"]["first_difference"]["expected"] == "        x = 1        # first", error
    # (the regression pass: a hunk's lines are whole lines; one that lost its indentation says so)
    patch = "--- a/s.py\n+++ b/s.py\n@@ -2,2 +2,2 @@\n def total(self, items):\n-        return subtotal * (1 + self.tax_rate)\n+        return 0\n"
    error = server.err("be-edit", "MISMATCH", {"patch": patch})
    assert error["closest"]["first_difference"]["kind"] == "indentation", error
    assert error["closest"]["first_difference"]["line"] == 2, error
    assert (root / "s.py").read_text() == source


def test_a_read_prefix_still_applies_where_the_text_stands_elsewhere_only_inside_a_longer_line(root, be_env):
    """The regression pass on the fix above: `4<TAB>    return None` in a file whose line 3 is
    `        return None` was AMBIGUOUS "(lines 3, 4)": text inside a deeper line was counted as
    a place. A read prefix shows whole lines; only whole lines count."""
    (root / "s.py").write_text("def f(x):\n    if x:\n        return None\n    return None\n")
    done, result = run_json(
        "replace", "-f", "s.py", "--old", "4\t    return None", "-c", "    return 0", cwd=root, env=be_env
    )
    assert done.returncode == 0 and (result["start"], result["end"]) == (4, 4), result
    assert (root / "s.py").read_text() == "def f(x):\n    if x:\n        return None\n    return 0\n"


def test_a_chip_id_given_without_its_scheme_is_named_with_it(root, server):
    """Found by the newcomer review: `from: "90ddca"` (the id a delete printed) got "from must be
    chip://ID or file:///path" and the hint "correct the argument and call again"."""
    (root / "a.txt").write_text("one\n")
    error = server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": "90ddca", "to": "a.txt:0"})
    assert error["hint"] == "a chip is named with its scheme: from chip://90ddca", error
    error = server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": "notes.txt", "to": "a.txt:0"})
    assert "chip://" not in error["hint"], error
    for written in ("chip:90ddca", "chip:/90ddca"):  # one colon, one slash: the hint named no chip
        error = server.err("be-insert-chip", "INVALID_ARGUMENT", {"from": written, "to": "a.txt:0"})
        assert error["hint"] == "a chip is named with its scheme: from chip://90ddca", error


@pytest.mark.parametrize(
    "given, near",
    [
        ("func:main", "function:main"),
        ("method:main", "function:main"),
        ("functon:main", "function:main"),
        ("element:div", "tag:div"),
        ("main", "function:main"),
        ("42", "line:42"),
        ("L3", "line:3"),
        ("#3", "line:3"),
        ("Cart::total", "function:Cart::total"),
        ("fn::main", "function:main"),  # (the regression pass: was function:fn::main)
        ("save!", "function:save!"),  # (Ruby names; they got no hint)
        ("valid?", "function:valid?"),
        ("ändern", "function:ändern"),  # (a name that starts with a non-ASCII letter)
    ],
)
def test_a_target_of_another_kind_word_names_the_target_it_likely_meant(root, be_env, server, given, near):
    """`--target func:main` (or `method:`, a typo, a bare name) got the generic hint naming
    function:main for any value; it names the kind and the value given now."""
    (root / "m.py").write_text("def main():\n    pass\n")
    done, result = run_json("read", "-f", "m.py", "--target", given, cwd=root, env=be_env)
    assert done.returncode == 2 and result["error"]["hint"].startswith(f"did you mean --target {near}?"), (
        result
    )
    error = server.err("be-read", "INVALID_ARGUMENT", {"file": "m.py", "target": given})
    assert error["hint"].startswith(f'did you mean "{near}"?'), error
    # (the second regression pass: a class named like a kind word, `Function::getName`, lost its class)
    error = server.err("be-read", "INVALID_ARGUMENT", {"file": "m.py", "target": "Function::getName"})
    assert error["hint"].startswith('did you mean "function:Function::getName"?'), error
    for wrong in ("zzz:main", "3-4", "-5"):  # (the regression pass: "3-4" was "function:3-4")
        error = server.err("be-read", "INVALID_ARGUMENT", {"file": "m.py", "target": wrong})
        assert "did you mean" not in error["hint"], error


def test_a_target_value_that_is_no_text_is_refused_not_searched_as_its_python_text(root, server):
    """Found by the server attack: `{"kind": "marker", "value": ["alpha"]}` was searched as the
    text `['alpha']` and a replace changed the line `names = ['alpha']`; `true` was line `True`."""
    (root / "n.py").write_text("names = ['alpha']\n")
    for value in (["alpha"], {"a": 1}, True):
        target = {"kind": "marker", "value": value}
        server.err("be-replace", "INVALID_ARGUMENT", {"file": "n.py", "target": target, "content": "x = 1"})
    server.err("be-read", "INVALID_ARGUMENT", {"file": "n.py", "target": {"kind": "line", "value": True}})
    assert (root / "n.py").read_text() == "names = ['alpha']\n"
    assert server.ok("be-read", {"file": "n.py", "target": {"kind": "line", "value": 1}})["start"] == 1


def test_an_occurrence_beside_a_target_is_pointed_into_it(root, server):
    """Found by the server attack: `occurrence` next to `target` (as the CLI writes them) got
    "unknown argument" with no pointer, where `line` gets "did you mean start"."""
    (root / "t.txt").write_text("TODO a\nTODO b\n")
    for name in ("occurrence", "occurence"):  # (the regression pass: the misspelling got nothing)
        error = server.err("be-read", "INVALID_ARGUMENT", {"file": "t.txt", "target": "marker:TODO", name: 2})
        assert f"did you mean '{name}' → 'target.occurrence'?" in error["message"], error
    error = server.err(
        "be-read", "INVALID_ARGUMENT", {"file": "t.txt", "target": "marker:TODO", "recurrence": 2}
    )
    assert "target.occurrence" not in error["message"], error  # (the regression pass: it was)


def _by_target(root, env, command, file, target, *more):
    """(process, answer) of `command -f file --target target ...` in `root`, as JSON."""
    return run_json(command, "-f", file, "--target", target, *more, cwd=root, env=env)


def test_a_ruby_endless_method_is_its_one_line(root, be_env):
    """Found by the targets attack: `def to_s = "pt"` (Ruby 3's endless method, no `end`) ran on to
    the next `end` at its indentation: a replace by `function:to_s` took the class's `end` and most
    of the next class with it ("balance: ok"). It is its own line; a setter, `def x=(v)`, still
    runs to its `end`."""
    source = 'class Point\n  def norm\n    1\n  end\n\n  def to_s = "pt"\n  def add(o) = o + 1\nend\n\nclass Other\n  def x\n    2\n  end\nend\n'
    (root / "e.rb").write_text(source)
    done, result = _by_target(root, be_env, "replace", "e.rb", "function:to_s", "-c", '  def to_s = "point"')
    assert done.returncode == 0 and (result["start"], result["end"]) == (6, 6), result
    assert (root / "e.rb").read_text() == source.replace('"pt"', '"point"')
    done, result = _by_target(root, be_env, "delete", "e.rb", "function:add")
    assert done.returncode == 0 and (result["start"], result["end"]) == (7, 7), result
    (root / "s.rb").write_text("class A\n  def value=(v)\n    @v = v\n  end\nend\n")
    done, result = _by_target(root, be_env, "read", "s.rb", "function:value=")
    assert done.returncode == 0 and result["content"].count("\n") == 2, result  # (lines 2-4)


def test_a_ruby_endless_method_whose_body_starts_below_its_line_takes_that_body(root, be_env):
    """`def total =` with its body on the lines below was taken as its first line alone: a delete
    by `function:total` left `items` and `.sum` behind, now the body of the class."""
    source = "class P\n  def total =\n    items\n      .sum\n\n  def name = 'p'\nend\n"
    (root / "e.rb").write_text(source)
    done, result = _by_target(root, be_env, "delete", "e.rb", "function:total")
    assert done.returncode == 0 and (result["start"], result["end"]) == (2, 4), result
    assert (root / "e.rb").read_text() == "class P\n\n  def name = 'p'\nend\n"
    done, result = _by_target(root, be_env, "read", "e.rb", "function:name")
    assert (result["start"], result["end"]) == (3, 3), result


def test_a_ruby_method_on_a_named_receiver_is_named_by_its_method(root, be_env):
    """`def Cart.other` (a class method written with the class's name) was named `Cart`: function:other
    was NOT_FOUND, and function:Cart took the class. It is `other`, as `def self.make` is `make`."""
    (root / "c.rb").write_text(
        "class Cart\n  def self.make\n    1\n  end\n\n  def Cart.other\n    2\n  end\nend\n"
    )
    for target in ("function:other", "function:Cart.other"):
        done, result = _by_target(root, be_env, "read", "c.rb", target)
        assert done.returncode == 0 and (result["start"], result["end"]) == (6, 8), result
    done, result = _by_target(root, be_env, "read", "c.rb", "function:Cart")
    assert done.returncode == 0 and (result["start"], result["end"]) == (1, 9), result
    # (the regression pass: a receiver in lowercase, `def obj.greet`, was still named `obj`)
    (root / "o.rb").write_text("obj = Object.new\ndef obj.greet\n  1\nend\n\ndef other\n  2\nend\n")
    done, result = _by_target(root, be_env, "delete", "o.rb", "function:greet")
    assert done.returncode == 0 and (result["start"], result["end"]) == (2, 4), result
    assert (root / "o.rb").read_text() == "obj = Object.new\n\ndef other\n  2\nend\n"


@pytest.mark.parametrize(
    "name, source, target, kept",
    [
        (  # (the LOG macros of DEBUG and not: the #ifdef block went with the function)
            "k.c",
            "#include <stdio.h>\n\n#ifdef DEBUG\n#define LOG(x) puts(x)\n#else\n#define LOG(x)\n#endif\n"
            'int work(void)\n{\n    LOG("work");\n    return 0;\n}\n',
            "function:work",
            "#include <stdio.h>\n\n#ifdef DEBUG\n#define LOG(x) puts(x)\n#else\n#define LOG(x)\n#endif\n",
        ),
        (  # (an include guard: its #define went, the header broke)
            "g.h",
            "#ifndef G_H\n#define G_H\nstatic inline int add(int a)\n{\n  return a;\n}\n#endif\n",
            "function:add",
            "#ifndef G_H\n#define G_H\n#endif\n",
        ),
        (  # (#region's #endregion was left alone: CS1028)
            "A.cs",
            "class A\n{\n    #region Math\n    public int Add(int a)\n    {\n        return a;\n    }\n    #endregion\n}\n",
            "function:Add",
            "class A\n{\n    #region Math\n    #endregion\n}\n",
        ),
        (  # (the module's own docs)
            "geo.rs",
            "//! Geometry helpers.\n//! All units are pixels.\npub fn area(w: u32) -> u32 {\n    w\n}\n",
            "function:area",
            "//! Geometry helpers.\n//! All units are pixels.\n",
        ),
        (
            "e.js",
            "/* eslint-disable no-console */\n// Adds two numbers.\nfunction add(a, b) {\n  return a + b;\n}\n",
            "function:add",
            "/* eslint-disable no-console */\n",
        ),
        (  # (the module's docs as a block)
            "m.rs",
            "/*!\nModule doc.\n*/\nfn main() {}\n",
            "function:main",
            "/*!\nModule doc.\n*/\n",
        ),
        (  # (a licence and an #include: the file's)
            "lic.c",
            "/* Copyright 2020 Foo */\n#include <x.h>\nint main(void)\n{\n  return 0;\n}\n",
            "function:main",
            "/* Copyright 2020 Foo */\n#include <x.h>\n",
        ),
        # (the regression pass: these are the function's, and went on being so)
        (  # (a doc comment above a #define the function uses: both its)
            "png.c",
            "int x;\n/*\n * check_if_png docs\n */\n#define PNG_BYTES 4\nint check_if_png(void)\n{\n  return 1;\n}\n",
            "function:check_if_png",
            "int x;\n",
        ),
        (  # (prose: ESLint's `global` is a block comment)
            "gl.js",
            "x = 1;\n// global error handler:\n// logs and goes on.\nfunction h() {\n  return 1;\n}\n",
            "function:h",
            "x = 1;\n",
        ),
        (  # (a C comment that starts with "global")
            "gl.c",
            "int x;\n/* global lock protecting the cache */\nint lock(void)\n{\n  return 1;\n}\n",
            "function:lock",
            "int x;\n",
        ),
        (
            "s.cs",
            "class A\n{\n    /// <summary>x</summary>\n    #pragma warning disable CS0618\n    public void M()\n    {\n    }\n}\n",
            "function:M",
            "class A\n{\n}\n",
        ),
        # (the second pass: a header guard under the file's comment; `#pragma once`)
        (
            "g4.h",
            "/*\n * util.h - helpers\n */\n#ifndef UTIL_H\n#define UTIL_H\n#include <stddef.h>\n"
            "static inline int clamp(int v) { return v < 0 ? 0 : v; }\n#endif\n",
            "function:clamp",
            "/*\n * util.h - helpers\n */\n#ifndef UTIL_H\n#define UTIL_H\n#include <stddef.h>\n#endif\n",
        ),
        (
            "g3.h",
            "// util.h - helpers\n#pragma once\n#define UTIL_API static inline\nUTIL_API int clamp(int v) { return v; }\n",
            "function:clamp",
            "// util.h - helpers\n#pragma once\n#define UTIL_API static inline\n",
        ),
    ],
)
def test_a_target_leaves_the_file_s_own_lines_above_its_function(root, be_env, name, source, target, kept):
    """Found by the wrong-place attack: the doc comment taken with a function by target was every
    comment-like line right above it, so a delete or replace by target removed `#include`,
    `#define`, `#region` lines, Rust's module docs and file-wide lint directives, exit 0."""
    (root / name).write_text(source)
    done, result = _by_target(root, be_env, "delete", name, target)
    assert done.returncode == 0 and (root / name).read_text() == kept, (result, (root / name).read_text())


@pytest.mark.parametrize(
    "name, source, target, span",
    [
        ("c.rb", "class Cart\n  def save!\n    1\n  end\nend\n\nclass Box\n  def save!\n    2\n  end\nend\n", "function:Box#save!", (8, 10)),
        ("p.js", "class A {\n  #save() {\n    return 1;\n  }\n  load() {}\n}\n", "function:#save", (2, 4)),
        ("p.js", "class A {\n  #save() {\n    return 1;\n  }\n  load() {}\n}\n", "function:A.#save", (2, 4)),
        # (the regression pass: `#save` named the public save() too, and `Cart#save` the class method)
        ("c.js", "class C {\n  save() {\n    return this.#save(1);\n  }\n\n  #save(f) {\n    return f;\n  }\n}\n", "function:#save", (6, 8)),
        ("e.rb", "class Cart\n  def self.save\n    new.save\n  end\n\n  def save\n    true\n  end\nend\n", "function:Cart#save", (6, 8)),
        # (the second pass: a comment naming `save()` decided which was which; a one-line public
        # save() calling this.#save( counted; a `class << self` method was an instance method; a
        # private arrow-function field is named `#save` itself)
        ("d.ts", "class S {\n  // save() is public; this one is private\n  #save(d: string): void {\n    log(d);\n  }\n  save(d: string): void { this.#save(d); }\n}\n", "function:#save", (2, 5)),
        ("s.rb", "class Cart\n  class << self\n    def save\n      1\n    end\n  end\n\n  def save\n    2\n  end\nend\n", "function:Cart#save", (8, 10)),
        ("f.js", "class S {\n  #save = (d) => {\n    return d;\n  };\n  save(d) {\n    return this.#save(d);\n  }\n}\n", "function:#save", (2, 4)),
        ("n.js", "class S {\n  /** Calls #save() of the backend. */\n  save(d) {\n    return d;\n  }\n}\n", "function:#save", None),
    ],
)  # fmt: skip
def test_a_method_named_as_its_language_writes_it_is_that_one(root, be_env, name, source, target, span):
    """Ruby's `Cart#save!` (how its docs name an instance method) and JavaScript's `#save` (a
    private method, as the class writes it) were NOT_FOUND, with a hint naming the method found;
    each now names that method alone (no "defined 2 times" warning), or none."""
    (root / name).write_text(source)
    done, result = _by_target(root, be_env, "read", name, target)
    if span is None:
        assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", result
        return
    assert done.returncode == 0 and (result["start"], result["end"]) == span and not result.get("warnings"), (
        result
    )
    done, result = _by_target(root, be_env, "delete", name, target)
    lines = source.split("\n")
    assert done.returncode == 0 and (root / name).read_text() == "\n".join(
        lines[: span[0] - 1] + lines[span[1] :]
    )


@pytest.mark.parametrize(
    "name, source, span",
    [
        (
            "gen.rb",
            "class G\n  T = <<~RUBY\n    def helper\n      1\n    end\n  RUBY\n\n  def helper\n    2\n  end\nend\n",
            (8, 10),
        ),
        (
            "t.lua",
            "local tpl = [[\nfunction helper()\n  return 1\nend\n]]\nfunction helper()\n  return 2\nend\n",
            (6, 8),
        ),
    ],
)
def test_a_ruby_or_lua_definition_in_a_string_gives_way_to_the_real_one(root, be_env, name, source, span):
    """Found by the wrong-place attack: a template's `def helper` in a heredoc (or a Lua long
    string) beside the class's own `helper` made a delete by `function:helper` AMBIGUOUS, and a
    read showed the template's first, whose view then led edits into the string."""
    (root / name).write_text(source)
    done, result = _by_target(root, be_env, "delete", name, "function:helper")
    assert done.returncode == 0 and (result["start"], result["end"]) == span, result
    assert "return 1" in (root / name).read_text() or "      1" in (root / name).read_text()


CPP_IN_NAMESPACES = """namespace shop {
class Cart {
public:
    int total() const;
};

int Cart::total() const {
    return 1;
}
}

template <typename T>
T Box<T>::get() const {
    return v;
}
namespace a { namespace b {
int f() {
    return 2;
}
} }
struct Z { int g() { return 3; } };
"""


@pytest.mark.parametrize(
    "target, span",
    [("shop::Cart::total", (7, 9)), ("shop::Cart", (2, 5)), ("Box::get", (12, 15)), ("a::b::f", (17, 19))],
)
def test_a_cpp_name_qualified_by_its_namespace_or_template_class_is_found(root, be_env, target, span):
    """`shop::Cart::total` (the way C++ names it, with its namespace) and `Box::get` for
    `T Box<T>::get()` were NOT_FOUND: namespaces were no scope of a qualified target, and the
    template arguments hid the class's name."""
    (root / "s.cpp").write_text(CPP_IN_NAMESPACES)
    done, result = _by_target(root, be_env, "read", "s.cpp", f"function:{target}")
    assert done.returncode == 0 and (result["start"], result["end"]) == span, result


def test_a_namespace_qualified_name_is_no_method_of_a_class_inside_it(root, be_env):
    """The regression pass on the fix above: `util::parse` took `Parser::parse` inside `namespace
    util` (a wrong place), and `ns::f` was AMBIGUOUS between `S::f` and the `void ns::f()`
    written below, which it edited before."""
    (root / "w.cpp").write_text(
        "namespace util {\nclass Parser {\n  int parse() {\n    return 1;\n  }\n};\n}\n"
    )
    done, result = _by_target(root, be_env, "replace", "w.cpp", "function:util::parse", "-c", "x")
    assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", result
    source = "namespace ns {\nstruct S {\n  void f() {\n    a();\n  }\n};\nvoid f();\n}\n\nvoid ns::f() {\n  b();\n}\n"
    (root / "a.cpp").write_text(source)
    done, result = _by_target(root, be_env, "read", "a.cpp", "function:ns::f")
    assert done.returncode == 0 and (result["start"], result["end"]) == (10, 12), result


def test_a_namespace_named_in_a_comment_opens_no_namespace(root, be_env):
    """The second regression pass: `namespace legacy  // moved here from namespace shop` then `{`
    made a namespace `shop` of legacy's block (a wrong place), and legacy was missed."""
    (root / "w.cpp").write_text(
        "namespace legacy  // moved here from namespace shop\n{\nint total() {\n    return 2;\n}\n}\n"
    )
    done, result = _by_target(root, be_env, "read", "w.cpp", "function:shop::total")
    assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", result
    done, result = _by_target(root, be_env, "read", "w.cpp", "function:legacy::total")
    assert done.returncode == 0 and (result["start"], result["end"]) == (3, 5), result


def test_a_qualified_target_of_a_method_sharing_its_line_is_not_found_not_an_internal_error(root, be_env):
    """`Z::g` with `struct Z { int g() { return 3; } };` was INTERNAL (ValueError): a definition
    sharing its line with another slipped into the list of spans."""
    (root / "s.cpp").write_text(CPP_IN_NAMESPACES)
    done, result = _by_target(root, be_env, "read", "s.cpp", "function:Z::g")
    assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", result


def test_a_tag_target_counts_self_closed_and_void_elements(root, be_env):
    """Found by the targets attack: `<item id="1"/>` was not counted, so `delete --target tag:item
    --occurrence 2` deleted the third <item>, and `tag:img` was "not found" in `<div><img></div>`.
    A self-closed or void element is an element: its tag is its lines."""
    source = '<items>\n  <item id="1"/>\n  <item id="2">\n    <name>two</name>\n  </item>\n  <item id="3">\n    <name>three</name>\n  </item>\n</items>\n'
    (root / "b.xml").write_text(source)
    done, result = _by_target(root, be_env, "delete", "b.xml", "tag:item", "--occurrence", "2")
    assert done.returncode == 0 and (result["start"], result["end"]) == (3, 5), result
    assert (root / "b.xml").read_text() == source.replace(
        '  <item id="2">\n    <name>two</name>\n  </item>\n', ""
    )
    (root / "v.html").write_text('<div>\n  <img src="a.png">\n</div>\n')
    done, result = _by_target(root, be_env, "read", "v.html", "tag:img")
    assert done.returncode == 0 and result["content"] == '2\t  <img src="a.png">', result


def test_a_qualified_function_target_counts_definitions_inside_and_outside_its_type(root, be_env):
    """Found by the targets attack: `Cart::Cart` took the constructor defined inside the class and
    never the one written below it (`Cart::Cart() : items(0) {}`), `--occurrence 2` said it occurs
    once; and Go's `server.Start` took the method of `(server *Server)`, whose variable, not type,
    is `server`. Both definitions count now (AMBIGUOUS without occurrence), and a Go receiver is
    matched by its type."""
    source = "class Cart {\npublic:\n    Cart();\n    explicit Cart(int n) : items(n) {}\nprivate:\n    int items = 0;\n};\n\nCart::Cart() : items(0) {\n}\n"
    (root / "c.cpp").write_text(source)
    done, result = _by_target(root, be_env, "delete", "c.cpp", "function:Cart::Cart")
    assert done.returncode == 1 and result["error"]["code"] == "AMBIGUOUS", result
    assert "lines 4, 9-10" in result["error"]["message"] and (root / "c.cpp").read_text() == source, result
    done, result = _by_target(root, be_env, "read", "c.cpp", "function:Cart::Cart", "--occurrence", "2")
    assert done.returncode == 0 and result["content"].startswith("9\tCart::Cart() : items(0) {"), result
    go = "package server\n\ntype Server struct{}\n\nfunc Start() error {\n\treturn nil\n}\n\nfunc (server *Server) Start() error {\n\treturn nil\n}\n"
    (root / "g.go").write_text(go)
    done, result = _by_target(root, be_env, "delete", "g.go", "function:server.Start")
    assert (
        done.returncode == 1 and result["error"]["code"] == "NOT_FOUND" and (root / "g.go").read_text() == go
    ), result
    done, result = _by_target(root, be_env, "read", "g.go", "function:Server.Start")
    assert done.returncode == 0 and result["content"].startswith("9\tfunc (server *Server) Start()"), result


def test_a_ternary_call_right_above_a_typescript_function_is_no_overload(root, be_env):
    """Found by the targets attack: `main(process.argv) ? ok() : fail();` right above `function
    main(...)` was taken for an overload signature, and a delete by `function:main` took the call
    too. Real overloads, with a callback type in their parameters, still belong to it."""
    source = 'import { ok, fail } from "./exit";\nmain(process.argv) ? ok() : fail();\nfunction main(argv: string[]): boolean {\n  return argv.length > 2;\n}\n'
    (root / "t.ts").write_text(source)
    done, result = _by_target(root, be_env, "delete", "t.ts", "function:main")
    assert done.returncode == 0 and (result["start"], result["end"]) == (3, 5), result
    (root / "o.ts").write_text(
        "class A {\n  run(cb: (x: number) => void): void;\n  run(n: number): void;\n  run(a: any): void {\n  }\n}\n"
    )
    done, result = _by_target(root, be_env, "read", "o.ts", "function:run")
    assert done.returncode == 0 and result["content"].startswith("2\t  run(cb"), result


def test_a_rust_tuple_struct_is_a_definition_beside_its_impl(root, be_env):
    """Found by the targets attack: `pub struct Meters(pub f64);` has no block, so it was not
    counted, and a replace by `function:Meters` replaced the whole `impl Meters` (with braces the
    struct and its impl were AMBIGUOUS). It counts now, its line."""
    source = "pub struct Meters(pub f64);\n\nimpl Meters {\n    pub fn new(v: f64) -> Self {\n        Meters(v)\n    }\n}\n"
    (root / "m.rs").write_text(source)
    done, result = _by_target(
        root, be_env, "replace", "m.rs", "function:Meters", "-c", "pub struct Meters(pub f32);"
    )
    assert (
        done.returncode == 1
        and result["error"]["code"] == "AMBIGUOUS"
        and (root / "m.rs").read_text() == source
    ), result
    done, result = _by_target(root, be_env, "replace", "m.rs", "function:Meters", "--occurrence", "1", "-c", "pub struct Meters(pub f32);")  # fmt: skip
    assert done.returncode == 0 and (root / "m.rs").read_text() == source.replace("f64);", "f32);", 1), result


def test_the_regression_pass_on_the_target_fixes(root, be_env):
    """The regression pass on the five fixes above: `tag:br` of `<p>a<br/>b</p>` took the
    paragraph's line, and `tag:input` 2 the first input with it (a target names whole lines: one
    whose lines hold other text is NOT_FOUND saying so); a TypeScript overload whose callback
    type nests two deep was cut from its body; a Rust `struct Marker;` inside a raw string was
    deleted, and a tuple struct lost its `#[derive]` and doc comment to the next struct; a Ruby
    endless method whose body opens a `do` block ends at that block's `end`."""
    (root / "p.html").write_text(
        '<body>\n  <p>Line one<br/>line two</p>\n  <input type="text"><input type="password">\n  <hr/> <!-- rule -->\n</body>\n'
    )
    for target, more in (("tag:br", ()), ("tag:input", ("--occurrence", "2"))):
        done, result = _by_target(root, be_env, "delete", "p.html", target, *more)
        assert done.returncode == 1 and "shares its lines with other text" in result["error"]["message"], (
            result
        )
    done, result = _by_target(root, be_env, "read", "p.html", "tag:hr")
    assert done.returncode == 0 and result["start"] == 4, result  # (a comment beside it is no text)
    cases = [  # (file, text, target, the lines it names, or None: NOT_FOUND)
        ("o.ts", "class Bus {\n  use(mw: (req: Req, next: () => void) => void): this;\n  use(mw: any): this { return this; }\n}\n", "function:use", (2, 3)),
        ("t.rs", '#[test]\nfn ui() {\n    let src = r#"\nstruct Marker;\nfn main() {}\n"#;\n    check(src);\n}\n', "function:Marker", None),
        ("s.rs", "/// Seconds.\n#[derive(Debug, Clone, Copy)]\npub struct Secs(pub u64);\npub struct Other(u8);\n", "function:Secs", (1, 3)),
        ("r.rb", 'class Report\n  def rows = @data.map do |r|\n    r.to_s\n  end\n  def title = "Report"\nend\n', "function:rows", (2, 4)),
        ("m.rb", "class Cart\n  memoize def total = items.sum\n  def keep\n    1\n  end\nend\n", "function:total", (2, 2)),
    ]  # fmt: skip
    for name, text, target, lines in cases:
        (root / name).write_text(text)
        done, result = _by_target(root, be_env, "read", name, target)
        if lines is None:
            assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", (name, result)
        else:
            assert done.returncode == 0 and (result["start"], result["end"]) == lines, (name, result)


def test_a_preview_answers_what_the_call_would_but_its_event(root, be_env, server):
    """The contract audit: a preview left out the viewed_code_id the call would give (0.3 had
    dropped it, since an edit sent with it before the change is made is STALE_VIEW). A preview
    answers exactly what the call would, `event_id` aside; an edit sent with a preview's id while
    the file is unchanged is refused and writes nothing."""
    source = "a = 1\nb = 2\nc = 3\n"
    calls = [
        ("be-replace", {"start": 3, "content": "c = 4"}),
        ("be-insert", {"after_line": 1, "content": "x = 0"}),
        ("be-edit", {"edits": [{"file": "a.py", "start": 3, "content": "c = 4"}]}),
    ]
    for name, args in calls:
        (root / "a.py").write_text(source)
        args = args if name == "be-edit" else dict(args, file="a.py")
        preview = server.ok(name, dict(args, preview=True))
        assert (root / "a.py").read_text() == source and preview.pop("preview") is True, preview
        done = server.ok(name, args)
        assert done.pop("event_id") and preview == done, (name, preview, done)
    (root / "a.py").write_text(source)
    view = server.ok("be-replace", file="a.py", start=3, content="c = 4", preview=True)["viewed_code_id"]
    server.err("be-replace", "STALE_VIEW", file="a.py", start=3, content="c = 5", viewed_code_id=view)
    assert (root / "a.py").read_text() == source
    patch = "--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-c = 3\n+c = 4\n"
    _done, preview = run_json("patch", "--preview", cwd=root, env=be_env, input=patch.encode())
    _done, result = run_json("patch", cwd=root, env=be_env, input=patch.encode())
    assert preview["files"] == result["files"] and result["files"][0]["viewed_code_id"], (preview, result)


def test_content_copied_from_the_same_read_loses_its_prefixes_too(root, be_env):
    """Found by an attack: `old` and `content` both copied from a read (`3<TAB>        y()`); the
    prefixes of `old` were recognised and taken off, and those of `content` were written into the
    file (`3<TAB>        z()`). A content whose every line carries them, numbered on from the
    same line, loses them too, and the warning says so; other content stays as sent."""
    source = "def f(x):\n    if x:\n        y()\n    return x\n"
    old = "3\t        y()\n4\t    return x"
    for content, want in [
        ("3\t        z()\n4\t    return x", "        z()\n    return x"),
        ("3\t        z()\n4\t        w()\n5\t    return x\n", "        z()\n        w()\n    return x"),
    ]:
        (root / "a.py").write_text(source)
        done, result = run_json("replace", "-f", "a.py", "--old", old, "-c", content, cwd=root, env=be_env)
        assert done.returncode == 0, result
        assert (root / "a.py").read_text() == "def f(x):\n    if x:\n" + want + "\n", content
        assert "content's prefixes taken off" in " ".join(result["warnings"]), result
    # (not this read's lines: in a file of code, refused since 0.3, the content is wrapped)
    content = "7\t        z()\n8\t    return x"
    (root / "a.py").write_text(source)
    done, result = run_json("replace", "-f", "a.py", "--old", old, "-c", content, cwd=root, env=be_env)
    assert done.returncode == 2 and result["error"]["code"] == "INVALID_ARGUMENT", result
    # (the regression pass: rows of a file whose first column counts like its line numbers are data)
    (root / "fruit.tsv").write_text("1\tapple\n2\tbanana\n3\tcherry\n")
    done, result = run_json(
        "replace", "-f", "fruit.tsv", "--old", "2\t2\tbanana", "-c", "2\tblueberry", cwd=root, env=be_env
    )
    assert done.returncode == 0, result
    assert (root / "fruit.tsv").read_text() == "1\tapple\n2\tblueberry\n3\tcherry\n"


def test_a_row_of_a_tab_separated_table_keeps_its_first_column(root, be_env):
    """Found by the agent-mistakes attack: `replace -f d.tsv -s 2 -c "2<TAB>bob"` over a line that
    held no id wrote `bob`: the id equal to the line number was taken for a read's prefix (with a
    warning). In a .tsv or .tab file a row is data; in other files the prefixes still go."""
    for name, want in (
        ("d.tsv", "id\tname\n2\tbob\n"),
        ("d.TAB", "id\tname\n2\tbob\n"),
        ("d.txt", "id\tname\nbob\n"),
    ):
        (root / name).write_text("id\tname\nTODO\n")
        done, result = run_json("replace", "-f", name, "-s", "2", "-c", "2\tbob", cwd=root, env=be_env)
        assert done.returncode == 0 and (root / name).read_text() == want, (name, result)


def test_content_copied_from_a_read_over_the_lines_it_replaces_loses_its_prefixes(server, root, be_env):
    """Found by the agent-mistakes attack: `replace -s 2 -e 3` with content `2<TAB>    x = ...` and
    `3<TAB>    y = ...` (the read's prefixes, numbered as the lines replaced) wrote the prefixes into
    the file. They go, with a warning; numbers that are not those lines', and a file whose lines
    are numbered so themselves, keep the content as sent."""
    source = "def a():\n    x = load()\n    y = parse(x)\n    return y\n"
    for content, want in [
        (
            "2\t    x = load(strict=True)\n3\t    y = parse(x)",
            "    x = load(strict=True)\n    y = parse(x)\n",
        ),
        ("2\t    x = 1\n3\t    y = 2\n4\t    z = 3\n", "    x = 1\n    y = 2\n    z = 3\n"),
    ]:
        (root / "a.py").write_text(source)
        result = server.ok("be-replace", {"file": "a.py", "start": 2, "end": 3, "content": content})
        assert (root / "a.py").read_text() == "def a():\n" + want + "    return y\n", content
        assert "prefixes of a read" in " ".join(result.get("warnings", [])), result
    # (not these lines' numbers: in a file of code, refused since 0.3, the content is wrapped)
    args = {"file": "a.py", "start": 2, "end": 3, "content": "5\t    x = 1\n6\t    y = 2"}
    (root / "a.py").write_text(source)
    assert "(5<TAB> to 6<TAB>)" in server.err("be-replace", "INVALID_ARGUMENT", args)["message"]
    assert (root / "a.py").read_text() == source
    (root / "n.txt").write_text("a\nb\nc\n")  # (text of no language: as sent)
    server.ok("be-replace", {"file": "n.txt", "start": 2, "end": 3, "content": "5\tx\n6\ty"})
    assert (root / "n.txt").read_text() == "a\n5\tx\n6\ty\n"
    (root / "ids.tsv").write_text("1\tone\n2\ttwo\n")
    done = run_cli("replace", "-f", "ids.tsv", "-s", "2", "-c", "2\tTWO", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "ids.tsv").read_text() == "1\tone\n2\tTWO\n"
    (root / "d.tsv").write_text("id\tname\n1\talice\n2\tbob\n")  # (the regression pass: a header line)
    done = run_cli("replace", "-f", "d.tsv", "-s", "3", "-c", "3\tbob", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "d.tsv").read_text() == "id\tname\n1\talice\n3\tbob\n"


def test_old_without_its_indentation_and_content_with_it_indent_once(root, be_env):
    """Found by an attack: `--old 'return x' -c '    return x + 1'` (old copied without the line's
    indentation, content as a whole line) gave `        return x + 1`, moving the return into the
    `if` block above, with no warning. The indentation is now written once, and said; content
    without it, or old that starts inside the indentation, is applied as before."""
    source = "def f(x):\n    if x:\n        y()\n    return x\n"
    cases = [
        ("return x", "    return x + 1", "    return x + 1\n", True),
        ("if x:\n        y()", "    if x:\n        z()", "    if x:\n        z()\n", True),
        ("return x", "return x + 1", "    return x + 1\n", False),
        ("  return x", "  return x + 1", "    return x + 1\n", False),  # (old began in the indentation)
        ("  return x", "    return x + 1", "    return x + 1\n", True),  # (... content a whole line)
        ("return x", "    return x", "        return x\n", False),  # (only indented: that is the change)
    ]
    for old, content, want, said in cases:
        (root / "a.py").write_text(source)
        done, result = run_json("replace", "-f", "a.py", "--old", old, "-c", content, cwd=root, env=be_env)
        assert done.returncode == 0, result
        text = (root / "a.py").read_text()
        assert (
            want in text
            and ("        if" not in text)
            and (content == "    return x") == ("        return" in text)
        ), (old, text)
        assert any("written once, not" in w for w in result.get("warnings", [])) == said, result


def test_old_inside_the_indentation_and_content_as_whole_lines_is_written_once(server, root):
    """Found by an attack: `old` copied with two spaces too few (`      x = 1` in a line indented by
    8) and content as the whole line (`        x = 2`) kept the two spaces before `old` and added
    the content's eight: a line indented by 10, an IndentationError, and `ok` with no warning. Go's
    tabs and a be-edit item went the same way."""
    source = "def f():\n    if True:\n        x = 1\n        y = 2\n    return x\n"
    (root / "a.py").write_text(source)
    result = server.ok("be-replace", {"file": "a.py", "old": "      x = 1", "content": "        x = 2"})
    assert (root / "a.py").read_text() == source.replace("x = 1", "x = 2")
    assert "inside the indentation of line 3" in " ".join(result["warnings"]), result
    (root / "m.go").write_text("func f() {\n\tif ok {\n\t\tx := 1\n\t}\n}\n")
    items = [{"op": "replace", "file": "m.go", "old": "\tx := 1", "content": "\t\tx := 2"}]
    server.ok("be-edit", {"edits": items})
    assert (root / "m.go").read_text() == "func f() {\n\tif ok {\n\t\tx := 2\n\t}\n}\n"


def test_content_relative_to_old_in_an_indented_language_is_refused(root, be_env, server):
    """Found by an attack: `old: "x = 1"` (a line indented by 8) with content `"if x:\n    x = 2"`
    gave `        if x:` and `    x = 2`: the body left the block, an IndentationError, and `ok`.
    Whether content's later lines are relative to `old` or meant as they stand cannot be told, so
    in Python, YAML and Haskell such a replace is refused, naming the line, and `force` writes it
    as given. Later lines with the line's indentation, and brace languages, are written as before."""
    source = "def f():\n    if True:\n        x = 1\n    return x\n"
    (root / "b.py").write_text(source)
    done = run_cli("replace", "-f", "b.py", "--old", "x = 1", "-c", "if x:\n    x = 2", cwd=root, env=be_env)
    assert done.returncode == 2 and (root / "b.py").read_text() == source, done.stderr
    assert b"its line 2 is indented less than that line" in done.stderr and b"--force" in done.stderr
    error = server.err(
        "be-replace", "INVALID_ARGUMENT", {"file": "b.py", "old": "x = 1", "content": "if x:\n    x = 2"}
    )
    assert "force: true" in error["hint"], error
    items = [{"op": "replace", "file": "b.py", "old": "x = 1", "content": "if x:\n    x = 2"}]
    server.err("be-edit", "INVALID_ARGUMENT", {"edits": items})
    assert (root / "b.py").read_text() == source
    server.ok("be-replace", {"file": "b.py", "old": "x = 1", "content": "if x:\n            x = 2"})
    assert (root / "b.py").read_text() == source.replace("x = 1", "if x:\n            x = 2")
    (root / "c.yaml").write_text("spec:\n  image: nginx\n")
    yaml_item = {"file": "c.yaml", "old": "image: nginx", "content": "image: x\nports: [80]"}
    server.err("be-replace", "INVALID_ARGUMENT", yaml_item)
    server.ok(
        "be-replace",
        {"file": "c.yaml", "old": "image: nginx", "content": "image: x\nports: [80]", "force": True},
    )
    assert (root / "c.yaml").read_text() == "spec:\n  image: x\nports: [80]\n"
    (root / "d.js").write_text("function f() {\n  a();\n}\n")
    server.ok("be-replace", {"file": "d.js", "old": "a();", "content": "a();\nb();"})
    assert (root / "d.js").read_text() == "function f() {\n  a();\nb();\n}\n"


def test_a_range_one_line_off_whose_edge_line_now_stands_twice_is_said(root, be_env):
    """Found by an attack: `replace -s 2 -e 3` with content ending in line 4's text (the agent took
    the range to end at 4) left `return x` twice, with no word. A content whose last line is the
    line right after the range, or whose first is the one right before, now gets a warning naming
    it; short lines (`}`, `end`), a range checked by `old`, and lines the file held twice already
    get none."""
    source = "def f(x):\n    if x:\n        y()\n    return x\n"
    cases = [
        (["-s", "2", "-e", "3", "-c", "    if x:\n        z()\n    return x"], "also line 4, right after"),
        (["-s", "2", "-e", "3", "-c", "def f(x):\n    if x:\n        z()"], "also line 1, right before"),
        (["-s", "2", "-e", "3", "-c", "    if x:\n        z()"], None),
        (
            [
                "-s",
                "2",
                "-e",
                "3",
                "--old",
                "    if x:\n        y()",
                "-c",
                "    if x:\n        z()\n    return x",
            ],
            None,
        ),
    ]
    for args, said in cases:
        (root / "f.py").write_text(source)
        done, result = run_json("replace", "-f", "f.py", *args, cwd=root, env=be_env)
        assert done.returncode == 0, result
        found = [w for w in result.get("warnings", []) if "now stands twice" in w]
        assert (found and said in found[0]) if said else not found, (args, result)
    for name, source, content in [  # (the regression pass: a closer twice is nesting, not a slip)
        ("p.html", "<div>\n  <p>a</p>\n</div>\n", "  <p>a</p>\n  <div>\n    <a>b</a>\n  </div>"),
        ("h.c", "#ifdef A\n#include <a.h>\n#endif\n", "#include <a.h>\n#ifdef B\n#include <b.h>\n#endif"),
        (
            "t.tex",
            "\\begin{itemize}\n  \\item a\n\\end{itemize}\n",
            "  \\item a\n  \\begin{itemize}\n  \\end{itemize}",
        ),
    ]:
        (root / name).write_text(source)
        done, result = run_json(
            "replace", "-f", name, "-s", "2", "-e", "2", "-c", content, cwd=root, env=be_env
        )
        assert done.returncode == 0 and "now stands twice" not in " ".join(result.get("warnings", [])), result
    (root / "d.py").write_text("a\n    return x\n    return x\n")  # (twice already)
    done, result = run_json("replace", "-f", "d.py", "-s", "2", "-c", "    return x", cwd=root, env=be_env)
    assert done.returncode == 0 and "now stands twice" not in " ".join(result.get("warnings", [])), result


# ---- a lean, truthful tool list --------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags, name",
    [((), "be-edit"), (("--no-prefix",), "edit"), (("--no-prefix", "--underscore-names"), "trx_rollback")],
)
def test_instructions_use_the_names_as_listed(root, be_env, flags, name):
    srv = Server(root, be_env, flags=flags)
    try:
        init = srv.request("initialize", {"protocolVersion": "2025-11-25"})["result"]
        listed = [t["name"] for t in srv.tools()]
        assert name in listed and name in init["instructions"]
        if "--no-prefix" in flags:
            assert "be-" not in init["instructions"] and "be_" not in init["instructions"]
        if "--underscore-names" in flags:
            assert "trx-rollback" not in init["instructions"] and "insert-chip" not in init["instructions"]
        size = len(
            json.dumps(
                {"tools": srv.request("tools/list")["result"]["tools"]},
                separators=(",", ":"),
                ensure_ascii=False,
            )
        )
        assert size < 13_400
        for tool in srv.tools():
            assert "auto" not in json.dumps(tool["inputSchema"])  # no value the schema would reject
    finally:
        srv.close()


NAMINGS = [(), ("--no-prefix",), ("--underscore-names",), ("--no-prefix", "--underscore-names")]


def _names_in(text, names):
    """The tool names of any naming mode that `text` holds, other than those in `names` (names that
    are plain words, such as `read` under --no-prefix, cannot be told from prose and are left out)."""
    import better_edit

    every = {n for flags in NAMINGS for n in better_edit.tool_names(*_mode(flags)).values()}
    strangers = sorted((n for n in every - set(names.values()) if not n.isalpha()), key=len, reverse=True)
    return [n for n in strangers if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]


def _mode(flags):
    return "--no-prefix" not in flags, "--underscore-names" in flags


@pytest.mark.parametrize("flags", NAMINGS, ids=lambda f: " ".join(f) or "default")
def test_every_message_names_tools_as_listed(flags):
    """Every message, in both languages, filled in with the names of one naming mode, names no tool
    the way another mode would (a hint saying be-trx-status to a server listing trx_status)."""
    import string

    import better_edit

    names = better_edit.tool_names(*_mode(flags))

    class Fields(dict):
        def __missing__(self, key):
            return 7  # (a number takes every format spec the messages use: {n:02x}, {count:,})

    for key, pair in better_edit.MESSAGES.items():
        for template in pair:
            if key == "mcp.tty_notice" or key.startswith("x."):  # (the program, CLI examples)
                continue
            try:
                text = string.Formatter().vformat(template, (), Fields(names))
            except (ValueError, IndexError):  # literal braces ("{op, file, ...}"): shown as written
                text = template
            assert not _names_in(text, names), (key, flags, text)


@pytest.mark.parametrize("flags", NAMINGS, ids=lambda f: " ".join(f) or "default")
def test_hints_of_a_missing_chip_and_snapshot_use_the_listed_names(root, be_env, flags):
    import better_edit

    names = better_edit.tool_names(*_mode(flags))
    srv = Server(root, be_env, flags=flags)
    try:
        listed = {t["name"] for t in srv.tools()}
        assert listed == set(names.values())
        chip = srv.err(names["insert_chip"], "NOT_FOUND", **{"from": "chip://0000000000", "to": "x.txt:0"})
        snapshot = srv.err(names["trx_rollback"], "NOT_FOUND", event_id="000000")
        assert names["insert_chip"] in chip["hint"] and names["trx_status"] in snapshot["hint"]
        for error in (chip, snapshot):
            assert not _names_in(error["message"] + error["hint"], names), error
    finally:
        srv.close()


def test_a_target_not_found_lists_the_names_that_exist_nearest_first(root, be_env):
    body = "".join(f"def handler_{k}():\n    return {k}\n\n" for k in range(12)) + "def load():\n    pass\n"
    (root / "m.py").write_text(body)
    done, answer = run_json("read", "-f", "m.py", "--target", "function:handler_7x", cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 1 and error["code"] == "NOT_FOUND"
    assert error["nearest"][0] == "handler_7" and len(error["nearest"]) == 10
    assert "load" not in error["nearest"]  # (the least like it is left out)
    assert error["hint"].startswith("the functions in the file, nearest first: handler_7, ")
    done, answer = run_json("read", "-f", "m.py", "--target", "function:nosuch", cwd=root, env=be_env)
    assert len(answer["error"]["nearest"]) == 10 and "-" not in answer["error"]["hint"]
    (root / "empty.py").write_text("x = 1\n")
    done, answer = run_json("read", "-f", "empty.py", "--target", "function:f", cwd=root, env=be_env)
    assert answer["error"]["hint"] == "the file holds no named function" and answer["error"]["nearest"] == []


def test_too_many_edit_items_says_how_many(root, be_env):
    (root / "a.txt").write_text("x\n")
    items = json.dumps([{"file": "a.txt", "start": 1, "content": "y"}] * 501)
    done, answer = run_json("edit", "--edits-file", "-", input=items.encode(), cwd=root, env=be_env)
    error = answer["error"]
    assert done.returncode == 2 and error["code"] == "INVALID_ARGUMENT"  # (a usage error)
    assert error["message"] == "edits holds 501 items, at most 500 go in one call", error
    assert (root / "a.txt").read_text() == "x\n"


# ---- realistic mistakes: applied directly, after one mechanical retry, or refused -----------------

MISTAKES = [
    # (name, file text, arguments of be-replace)
    ("spaces for tabs", PY, {"old": "    result = 0", "content": "\tresult = 1"}),
    ("curly quotes", JS, {"old": "  return “bye”;", "content": '  return "ciao";'}),
    (
        "doubled escapes",
        JS,
        {"old": 'function bye() {\\n  return \\"bye\\";\\n}', "content": "function bye() {}"},
    ),
    ("read prefixes", PY, {"old": "5\t\treturn result", "content": "\treturn result or 0"}),
    ("wrong read prefixes", PY, {"old": "4\t\treturn result", "content": "\treturn result or 0"}),
    ("stale line numbers", PY, {"start": 4, "old": "\treturn result", "content": "\treturn 0"}),
    ("case", JS, {"old": "Function bye() {", "content": "function ciao() {"}),
    ("trailing space", PY, {"old": "\treturn result  ", "content": "\treturn result or 0"}),
    ("one line too many", PY, {"old": "\treturn result\n\tprint(result)", "content": "\treturn 0"}),
]


def _mechanical_retry(args, error):
    """What a model can do with the error alone: edit the closest block's lines, with its id."""
    closest = error.get("closest")
    if error["code"] == "MISMATCH" and closest:
        return {
            "start": closest["start"],
            "end": closest["end"],
            "content": args["content"],
            "viewed_code_id": closest["viewed_code_id"],
        }
    if error["code"] == "MISMATCH" and error.get("found_at"):
        where = error["found_at"][0]
        return {"start": where["start"], "end": where["end"], "content": args["content"]}
    return None


def test_realistic_mistakes_mostly_end_applied(server, root):
    outcomes = {}
    for name, text, args in MISTAKES:
        path = root / "m.txt"
        path.write_text(text)
        result, error = server.call("be-replace", dict(args, file="m.txt"))
        if error is None:
            outcomes[name] = "applied"
            continue
        retry = _mechanical_retry(args, error)
        if retry is None:
            outcomes[name] = "refused"
            assert path.read_text() == text
            continue
        _result, error = server.call("be-replace", dict(retry, file="m.txt"))
        outcomes[name] = "applied after one retry" if error is None else "refused"
    print("\n[mistakes] " + json.dumps(outcomes, indent=1))
    counts = {k: list(outcomes.values()).count(k) for k in set(outcomes.values())}
    print(f"[mistakes] {counts} of {len(MISTAKES)}")
    assert outcomes["read prefixes"] == "applied"
    assert outcomes["spaces for tabs"] == "applied after one retry"
    assert counts.get("refused", 0) <= 1, outcomes


def test_cli_prefix_is_the_module():
    assert be_command_prefix()  # (the harness is importable here)


# ---- regressions found while documenting ----------------------------------------------------------


def _edit_after_a_line_is_added_above(root, env, viewed, prefix, *edit):
    """Read lines `viewed` of t.py, put `prefix` above them (they move by one), then run `edit`
    with the view's id."""
    _done, read = run_json(
        "read", "-f", "t.py", "-s", str(viewed[0]), "-e", str(viewed[1]), cwd=root, env=env
    )
    (root / "t.py").write_text(prefix + (root / "t.py").read_text())
    return run_json(*edit, "--viewed-code-id", read["viewed_code_id"], cwd=root, env=env)


def test_a_target_with_a_moved_view_edits_the_target_not_further(root, be_env):
    """The target is found in the file as it is now: the view's move must not shift it again."""
    (root / "t.py").write_text("x = 0\ndef b():\n    return 2\ny = 1\nz = 2\nw = 3\n")
    delete = ("delete", "-f", "t.py", "--target", "marker:y = 1")
    done, result = _edit_after_a_line_is_added_above(root, be_env, (2, 5), "# one\n", *delete)
    assert done.returncode == 0 and (result["start"], result["relocated"]) == (5, 1)
    assert (root / "t.py").read_text() == "# one\nx = 0\ndef b():\n    return 2\nz = 2\nw = 3\n"
    replace = ("replace", "-f", "t.py", "--target", "marker:def b", "-c", "def b(x):")
    done, result = _edit_after_a_line_is_added_above(root, be_env, (3, 5), "# two\n", *replace)
    assert done.returncode == 0 and result["start"] == 4
    assert "def b(x):\n    return 2\n" in (root / "t.py").read_text()


NUMBERED = "".join(f"v{n} = {n}\n" for n in range(1, 31))


def test_read_prefixes_of_content_come_off_when_the_view_moved(root, be_env):
    """Found by the wrong-place attack: `-s 12 -c $'12\tv12 = 120'` with a view whose lines had
    moved one down kept the prefixes (they were compared with the moved line 13): written into a
    Markdown file, refused in Python with "those numbers would be written". They number the lines
    as read, from the line sent."""
    (root / "t.py").write_text(NUMBERED)
    edit = ("replace", "-f", "t.py", "-s", "12", "-e", "13", "-c", "12\tv12 = 120\n13\tv13 = 130")
    done, result = _edit_after_a_line_is_added_above(root, be_env, (10, 20), "import os\n", *edit)
    assert done.returncode == 0 and (result["start"], result["end"]) == (13, 14), result
    assert (
        "import os\n" + NUMBERED.replace("v12 = 12\nv13 = 13\n", "v12 = 120\nv13 = 130\n")
        == (root / "t.py").read_text()
    )
    assert any("prefixes of a read" in w for w in result["warnings"]), result


def test_an_old_with_read_prefixes_follows_its_moved_view(root, be_env):
    """The same with `old` carrying the prefixes: MISMATCH, though the view said where line 12 went."""
    (root / "t.py").write_text(NUMBERED)
    edit = ("replace", "-f", "t.py", "--old", "12\tv12 = 12", "-c", "12\tv12 = 120")
    done, result = _edit_after_a_line_is_added_above(root, be_env, (10, 20), "import os\n", *edit)
    assert done.returncode == 0 and (result["start"], result["end"]) == (13, 13), result
    assert (root / "t.py").read_text() == "import os\n" + NUMBERED.replace("v12 = 12\n", "v12 = 120\n")


def test_a_chip_with_a_placeholder_looking_line_can_be_put_back(server, root):
    (root / "c.js").write_text("a();\n// ... existing code ...\nb();\n")
    deleted = server.ok("be-delete", {"file": "c.js", "start": 2})
    server.ok("be-insert-chip", {"from": f"chip://{deleted['chip']}", "to": "c.js:1"})
    assert (root / "c.js").read_text() == "a();\n// ... existing code ...\nb();\n"


def test_every_mismatch_has_a_closest_member(server, root):
    (root / "t.py").write_text("def total(items):\n    return sum(i.price for i in items)\n")
    error = server.err("be-replace", "MISMATCH", file="t.py", old="return foo", content="q")
    assert "closest" in error


# ---- never the wrong place: only a block that was unique may move (issue 21) -----------------------

REPLACE_LINE_3 = ("replace", "-f", "t.py", "-s", "3")
TWINS = "def load(x):\n    x = x + 1\n    return x\n\n\ndef save(x):\n    x = x + 1\n    return x\n"


def test_a_view_of_lines_with_a_twin_never_moves_to_the_twin(root, be_env):
    """Line 3 also stands at line 7: after another program changes line 3 in place, the edit
    must not land in the other function."""
    (root / "t.py").write_text(TWINS)
    _done, read = run_json("read", "-f", "t.py", "-s", "3", "-e", "3", cwd=root, env=be_env)
    assert ":u" not in read["viewed_code_id"]
    (root / "t.py").write_text(TWINS.replace("    return x\n", "    return x * 2\n", 1))
    before = (root / "t.py").read_bytes()
    done, result = run_json(
        *REPLACE_LINE_3,
        "--old",
        "    return x",
        "-c",
        "    return -x",
        "--viewed-code-id",
        read["viewed_code_id"],
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result
    assert (root / "t.py").read_bytes() == before


def test_a_two_line_block_with_a_twin_never_moves_through_be_edit(server, root):
    code = (
        "def load(p):\n    try:\n        return open(p).read()\n    except OSError:\n        return None\n\n"
        "def save(p, d):\n    try:\n        open(p, 'w').write(d)\n    except OSError:\n        return None\n"
    )
    (root / "io.py").write_text(code)
    view = server.ok("be-read", {"file": "io.py", "start": 4, "end": 5})
    changed = code.replace(
        "    except OSError:\n        return None\n", "    except IOError:\n        return None\n", 1
    )
    (root / "io.py").write_text("# header\n" + changed)  # changed in place, and moved by one line
    error = server.err(
        "be-edit",
        "STALE_VIEW",
        {
            "edits": [
                {
                    "file": "io.py",
                    "start": 4,
                    "end": 5,
                    "content": "    except OSError as e:\n        raise",
                    "viewed_code_id": view["viewed_code_id"],
                }
            ]
        },
    )
    assert error["index"] == 0
    assert (root / "io.py").read_text() == "# header\n" + changed


def test_a_unique_block_still_follows_a_move_in_a_new_process(root, be_env):
    (root / "t.py").write_text(TWINS)
    _done, read = run_json("read", "-f", "t.py", "-s", "1", "-e", "3", cwd=root, env=be_env)
    size = len("def load(x):\n    x = x + 1\n    return x\n")
    assert f":u{size}." in read["viewed_code_id"]
    (root / "t.py").write_text("import os\n" + TWINS)
    done, result = run_json(
        *REPLACE_LINE_3,
        "-c",
        "    return x + 1",
        "--viewed-code-id",
        read["viewed_code_id"],
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 0 and result["relocated"] == 1 and result["start"] == 4, result
    assert (root / "t.py").read_text().splitlines()[3] == "    return x + 1"


ORIGINAL = "header = 1\n\ndef f():\n    x = load()\n    return x\n\nfooter = 2\n"


@pytest.mark.parametrize(
    "changed",
    [
        "    x = load(fast=True)\n",  # a middle line: the first and the last stand where they were
        "def f(cache):\n    x = load()\n    return x\n",  # only the last line still stands
        "def f():\n    x = load()\n    return x or 0\n",  # only the first line still stands
    ],
    ids=["middle", "first", "last"],
)
def test_a_block_changed_in_place_never_moves_to_a_copy_made_since_the_read(root, be_env, changed):
    """Lines 3-5 were unique when read. Since then the function was copied below and the original
    changed in place: the copy is the only window with the viewed bytes, but the view's edge lines
    still stand at 3 or 5, so the lines were changed there, not moved: STALE_VIEW, nothing written
    (before, the edit was made in the copy with a "lines moved by +6" warning)."""
    (root / "t.py").write_text(ORIGINAL)
    _done, read = run_json("read", "-f", "t.py", "-s", "3", "-e", "5", cwd=root, env=be_env)
    assert ":u" in read["viewed_code_id"]
    block = "def f():\n    x = load()\n    return x\n"
    if changed.count("\n") == 1:
        now = ORIGINAL.replace("    x = load()\n", changed)
    else:
        now = ORIGINAL.replace(block, changed)
    now += "\n" + block  # the copy, made from the old text
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 4, "    x = load(slow=True)")


def _replace_line_with_view(root, env, view, line, content):
    """(process, answer) of a replace of line `line` of t.py by `content` with the view `view`."""
    return run_json(
        "replace", "-f", "t.py", "-s", str(line), "-c", content, "--viewed-code-id", view, cwd=root, env=env
    )


def _view_refused_after_change(root, env, view, now, line, content):
    """t.py now holds `now`: a replace of `line` with the view `view` is STALE_VIEW, nothing written."""
    (root / "t.py").write_text(now)
    done, result = _replace_line_with_view(root, env, view, line, content)
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result
    assert (root / "t.py").read_text() == now


def test_a_view_of_lines_standing_twice_is_taken_in_place_only_beside_its_neighbours(root, be_env):
    """Found by an attack (about 50 of 1,500 random cases): `    return None` (line 3 of a(), a
    line b() has too) read, then c() added on top: its own `    return None` stood at line 3,
    the view's hash held there, and the edit changed c(). A view of lines that stand elsewhere
    too carries its neighbours and the line count: where the count changed, it is taken in place
    only when a neighbour with a letter or a digit still stands beside it (lines added below do)."""
    text = "def a():\n    x = 1\n    return None\n\ndef b():\n    y = 2\n    return None\n"
    (root / "t.py").write_text(text)
    _done, read = run_json("read", "-f", "t.py", "-s", "3", "-e", "3", cwd=root, env=be_env)
    assert ":u" not in read["viewed_code_id"] and ":n7." in read["viewed_code_id"], read
    now = "def c():\n    z = 3\n    return None\n\n" + text
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 3, "    return x")
    (root / "t.py").write_text(text + "\n# end\n")
    done, result = run_json(
        "replace", "-f", "t.py", "-s", "3", "-c", "    return x", "--viewed-code-id", read["viewed_code_id"],
        cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 0, result
    assert (root / "t.py").read_text() == text.replace("None", "x", 1) + "\n# end\n"


def test_a_view_of_lines_standing_twice_is_stale_when_blocks_swapped_around_it(root, be_env):
    """Found by an attack: save()'s `db.open()`/`db.check()` read (load() has them too), then load()
    and save() swapped: the same line count, load()'s copy at the lines read, and the edit deleted
    load()'s `db.check()` with exit 0. Where the line count is the same, a view of lines standing
    twice whose every neighbour changed is STALE_VIEW; one neighbour that stays is an edit beside it."""
    load = "def load(db):\n    db.open()\n    db.check()\n    return db.read()\n"
    save = "def save(db, x):\n    db.open()\n    db.check()\n    return db.write(x)\n"
    (root / "t.py").write_text(load + "\n" + save)
    _done, read = run_json("read", "-f", "t.py", "-s", "7", "-e", "8", cwd=root, env=be_env)
    assert ":n9." in read["viewed_code_id"], read
    swapped = save + "\n" + load
    _view_refused_after_change(root, be_env, read["viewed_code_id"], swapped, 8, "    db.check(strict=True)")
    done, result = run_json(
        "delete", "-f", "t.py", "-s", "8", "--viewed-code-id", read["viewed_code_id"], cwd=root, env=be_env
    )
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result
    assert "blocks moved or swapped" in result["error"]["message"], result
    assert (root / "t.py").read_text() == swapped
    renamed = load + "\n" + save.replace("def save(db, x):", "def store(db, x):")  # (one neighbour stays)
    (root / "t.py").write_text(renamed)
    done, result = run_json(
        "delete", "-f", "t.py", "-s", "8", "--viewed-code-id", read["viewed_code_id"], cwd=root, env=be_env
    )
    assert done.returncode == 0, result
    assert (root / "t.py").read_text() == renamed.replace(
        "    db.check()\n    return db.write", "    return db.write"
    )


@pytest.mark.parametrize(
    ("read", "edits"),
    [((7, 8), [(6, "    def get_b(self, strict=False):"), (7, "        self.check(strict)")]),
     ((7, 7), [(6, "    def get_b(self, strict=False):"), (8, "        return self.value  # b"), (7, "        self.check(1)")])],
)  # fmt: skip
def test_a_view_of_lines_standing_twice_takes_edits_of_its_own_neighbours(root, be_env, read, edits):
    """Found by the regression pass: with the rule above alone, an agent that read get_b()'s body
    (get_a() has it too), changed get_b()'s signature and then its body with the same token got
    STALE_VIEW, its only neighbour with a letter having changed (by its own edit). Blocks swapped
    are told by the copy read standing elsewhere beside its old neighbours; here none does."""
    text = (
        "class Store:\n    def get_a(self):\n        self.check()\n        return self.value\n\n"
        "    def get_b(self):\n        self.check()\n        return self.value\n\n    def close(self):\n        pass\n"
    )
    (root / "t.py").write_text(text)
    _done, view = run_json("read", "-f", "t.py", "-s", str(read[0]), "-e", str(read[1]), cwd=root, env=be_env)
    assert ":n11." in view["viewed_code_id"], view
    lines = text.split("\n")
    for line, content in edits:
        done, result = run_json(
            "replace", "-f", "t.py", "-s", str(line), "-c", content, "--viewed-code-id", view["viewed_code_id"],
            cwd=root, env=be_env,
        )  # fmt: skip
        assert done.returncode == 0, result
        lines[line - 1] = content
    assert (root / "t.py").read_text() == "\n".join(lines)


def test_a_view_of_lines_standing_twice_does_not_follow_a_clone_pasted_above(root, be_env):
    """Found by an attack (19 of 300 pastes of a region holding the view right above it): line 4
    of where() (`return self`, which order() has too) read, then where() copied above it as
    where_not(): the copy's `return self` stood at line 4 with its neighbour above, and the edit
    changed where_not(). Such a view carries the CRC-32 of the bytes above and below it: where the
    line count changed and only the bytes above did, it is not taken in place."""
    text = (
        "class Q:\n    def where(self, c):\n        self.c.append(c)\n        return self\n\n"
        "    def order(self, o):\n        self.o = o\n        return self\n"
    )
    (root / "t.py").write_text(text)
    _done, read = run_json("read", "-f", "t.py", "-s", "4", "-e", "4", cwd=root, env=be_env)
    assert ":n8." in read["viewed_code_id"], read
    clone = "    def where_not(self, c):\n        self.c.append(c)\n        return self\n\n"
    now = text.replace("    def where(", clone + "    def where(", 1)
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 4, "        return self  # chained")
    for now in (
        text + "\n# end\n",  # (lines added below: in place, as before)
        text.replace("class Q:", "class Query:") + "\n# end\n",  # (and a line changed above: found
        # by the regression pass, refused when the token held the bytes above alone)
        text.replace("class Q:", "class Query:").replace("return self\n", "return self\n\n# gap\n", 1),
        # (a line changed above and lines added right below, a blank one first: found by the
        # second regression pass, refused while only the bytes below were compared)
    ):
        (root / "t.py").write_text(now)
        done, result = run_json(
            "replace", "-f", "t.py", "-s", "4", "-c", "        return None", "--viewed-code-id",
            read["viewed_code_id"], cwd=root, env=be_env,
        )  # fmt: skip
        assert done.returncode == 0, result
        assert (root / "t.py").read_text() == now.replace("return self", "return None", 1)


def test_an_edit_past_a_moved_view_says_the_view_moved(root, be_env):
    """Found by an attack: lines 2-3 read, a line added on top, then an edit of line 4 with that
    view was refused as "changed since lines 2-3 were read": they had only moved, and the edit
    reached past them. The refusal stays (only an edit inside moved lines follows them) and now
    says so."""
    (root / "t.py").write_text("a\nb\nc\nd\ne\n")
    _done, read = run_json("read", "-f", "t.py", "-s", "2", "-e", "3", cwd=root, env=be_env)
    (root / "t.py").write_text("top\na\nb\nc\nd\ne\n")
    done, result = run_json(
        "replace", "-f", "t.py", "-s", "4", "-c", "D", "--viewed-code-id", read["viewed_code_id"],
        cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result
    assert "moved since they were read" in result["error"]["message"], result
    assert (root / "t.py").read_text() == "top\na\nb\nc\nd\ne\n"


def test_a_view_that_still_holds_in_place_beside_a_new_copy_is_stale(root, be_env):
    """Found by an attack: process()'s body (lines 4-5) read while unique, then a helper() with the
    same body added above it so that the copy stands at lines 4-5: the hash held there and the
    edit changed helper(), with no warning. The file has 5 lines more and the lines read now stand
    twice: which copy was read cannot be told, so STALE_VIEW (`view_copied`)."""
    (root / "t.py").write_text("import os\n\ndef process(x):\n    y = x + 1\n    return y\n")
    _done, read = run_json("read", "-f", "t.py", "-s", "4", "-e", "5", cwd=root, env=be_env)
    now = "import os\n\ndef helper(x):\n    y = x + 1\n    return y\n\n\ndef process(x):\n    y = x + 1\n    return y\n"
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 4, "    y = x + 2")
    done, result = run_json(
        "replace", "-f", "t.py", "-s", "4", "-c", "    y = x + 2", "--viewed-code-id", read["viewed_code_id"],
        cwd=root, env=be_env,
    )  # fmt: skip
    assert "still stand there, but so they do elsewhere now" in result["error"]["message"], result


def test_a_view_holding_in_place_in_a_copy_whose_original_changed_is_stale(root, be_env):
    """Found by the wrong-place attack: as above, but process() was then edited, so the lines read
    stand once, in helper(), at the lines read: the edit changed helper(), exit 0. Both nearest
    lines with a letter or a digit around them (`def process`, `def main`) are others now:
    STALE_VIEW (`view_replaced`). So it is at the same line count when the lines read still stand
    below (a function removed further down); lines added below the view, or its neighbours kept,
    still edit in place."""
    before = "import os\n\n\ndef process(items):\n    total = 0\n    for item in items:\n        total += item.price\n    return total\n\n\ndef main():\n    print(process([]))\n"
    (root / "t.py").write_text(before)
    _done, read = run_json("read", "-f", "t.py", "-s", "5", "-e", "8", cwd=root, env=be_env)
    token = read["viewed_code_id"]
    body = "    total = 0\n    for item in items:\n        total += item.price\n    return total\n"
    now = f"import os\n\n\ndef helper(items):\n{body}\n\ndef process(items):\n{body.replace('price', 'price * item.qty')}\n\ndef main():\n    print(process([]))\n"
    _view_refused_after_change(root, be_env, token, now, 7, "        total += item.tax")
    done, result = _replace_line_with_view(root, be_env, token, 7, "        total += item.tax")
    assert (
        "the lines around them are others now, and the line above them then stands +7"
        in result["error"]["message"]
    )
    extra = "\n\ndef extra():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
    (root / "t.py").write_text(before + extra)
    _done, read = run_json("read", "-f", "t.py", "-s", "5", "-e", "8", cwd=root, env=be_env)
    helper = f"import os\n\n\ndef helper(items):\n{body}\n\n"
    same_count = helper + before[len("import os\n\n\n") :]  # (helper() above, extra() gone below)
    assert same_count.count("\n") == (before + extra).count("\n")
    _view_refused_after_change(
        root, be_env, read["viewed_code_id"], same_count, 7, "        total += item.tax"
    )
    # (the regression pass: its signature edited and a line added right below the view are no copy)
    beta = (
        "def beta(items):\n    total = 0\n    for item in items:\n        total += item\n    return total\n"
    )
    (root / "b.py").write_text(beta)
    _done, read = run_json("read", "-f", "b.py", "-s", "2", "-e", "4", cwd=root, env=be_env)
    (root / "b.py").write_text(
        beta.replace("(items)", "(items, start=0)").replace("    return", "    assert total\n    return")
    )
    done, result = run_json(
        "replace", "-f", "b.py", "-s", "2", "-c", "    total = start", "--viewed-code-id", read["viewed_code_id"],
        cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 0 and (root / "b.py").read_text().split("\n")[1] == "    total = start", result
    (root / "t.py").write_text(before + "\n\ndef more():\n    pass\n")  # (added below: in place)
    done, result = _replace_line_with_view(root, be_env, token, 7, "        total += item.tax")
    assert done.returncode == 0 and "item.tax" in (root / "t.py").read_text().split("\n")[6], result


def test_a_view_rewritten_in_place_never_moves_to_its_old_text_kept_below(root, be_env):
    """Found by an attack: process()'s body read while unique, then rewritten in place and its old
    body kept as legacy() right below: the file grew by exactly the distance to the copy, so the
    view moved there ("lines moved by +5") and legacy() was edited. The line above the view
    (`def process(x):`) still stands by the old place and not by the copy: STALE_VIEW. A real
    move of the same distance (imports added above) carries that line along and still moves."""
    before = "def process(x):\n    y = x + 1\n    return y\n\n\ndef main():\n    pass\n"
    (root / "t.py").write_text(before)
    _done, read = run_json("read", "-f", "t.py", "-s", "2", "-e", "3", cwd=root, env=be_env)
    token = read["viewed_code_id"]
    legacy = "\n\ndef legacy(x):\n    y = x + 1\n    return y\n"
    now = "def process(x):\n    z = x * 2\n    return z * 3\n" + legacy + "\n\ndef main():\n    pass\n"
    _view_refused_after_change(root, be_env, token, now, 2, "    y = x + 100")
    (root / "t.py").write_text("import a\nimport b\nimport c\n\n\n" + before)
    done, result = _replace_line_with_view(root, be_env, token, 2, "    y = x + 100")
    assert done.returncode == 0 and result["relocated"] == 5, result
    assert (root / "t.py").read_text() == "import a\nimport b\nimport c\n\n\n" + before.replace(
        "+ 1", "+ 100"
    )


def test_a_target_never_names_a_function_made_of_two_bare_blocks(root, be_env):
    """Found by an attack over vuejs/core: a bare block holding `ref(100)` and a callback, then a
    second bare block, read as one function `ref` (lines 2-10): `--target function:ref` would
    have deleted both blocks, with "balance: ok". There is no such function: NOT_FOUND, nothing
    written, and the hint names the functions there are."""
    text = "function k() {\n  {\n    const v = ref(100)\n    const c = g(() => {\n      return 1\n    })\n  }\n  {\n    x()\n  }\n}\n"
    (root / "r.js").write_text(text)
    done, result = run_json(
        "replace", "-f", "r.js", "--target", "function:ref", "-c", "", cwd=root, env=be_env
    )
    assert done.returncode == 1 and result["error"]["code"] == "NOT_FOUND", result
    assert "k, c" in result["error"]["hint"]
    assert (root / "r.js").read_text() == text


def test_a_string_right_after_a_keyword_is_no_broken_bracket_after_an_edit(root, be_env):
    """Found by an attack: `return')' + a;` (valid JavaScript, minified style) was reported by the
    post-edit check as "edit left 1 mismatched ")", 1 unclosed "'"": a quote right after a letter
    was taken for JSX text's `Don't`. After a keyword it starts a string; the check says ok."""
    (root / "c.js").write_text("function close(a) {\n  return a;\n}\n")
    done, result = run_json(
        "replace", "-f", "c.js", "-s", "2", "-c", "  return')' + a;", cwd=root, env=be_env
    )
    assert done.returncode == 0 and result["balance"] == "ok", result


def test_a_view_rewritten_in_place_never_moves_to_its_old_text_past_blank_lines(root, be_env):
    """Found by an attack: beta() read with blank lines around it, rewritten in place one line
    shorter, its old text added after gamma() with five lines below it, so that the file grew by
    exactly the distance to the copy: the edit went to the copy ("lines moved by +9"). The nearest
    lines with a letter or a digit around the lines read (`return a` above, `def gamma():` below)
    still stand around their old place and not around the copy: STALE_VIEW. A function inserted
    between alpha() and beta() moves beta(), and the edit still follows it."""
    alpha, gamma = (
        "import os\n\n\ndef alpha():\n    a = 1\n    return a\n\n\n",
        "def gamma():\n    g = 3\n    return g\n",
    )
    beta = "def beta():\n    b = 2\n    return b\n"
    (root / "t.py").write_text(alpha + beta + "\n\n" + gamma)
    _done, read = run_json("read", "-f", "t.py", "-s", "9", "-e", "11", cwd=root, env=be_env)
    token = read["viewed_code_id"]
    pads = "".join(f"# pad {n}\n" for n in range(5))
    now = alpha + "def beta(x):\n    return compute_b(x)\n\n\n" + gamma + "\n\n" + beta + pads
    _view_refused_after_change(root, be_env, token, now, 10, "    b = 99")
    inserted = "def helper():\n    return 0\n\n\n"
    (root / "t.py").write_text(alpha + inserted + beta + "\n\n" + gamma)
    done, result = _replace_line_with_view(root, be_env, token, 10, "    b = 99")
    assert done.returncode == 0 and result["relocated"] == 4, result
    assert (root / "t.py").read_text() == alpha + inserted + beta.replace("b = 2", "b = 99") + "\n\n" + gamma


def test_a_view_rewritten_in_place_never_moves_to_a_copy_made_above_it(root, be_env):
    """Found by an attack and left open last time (3 of 300 of its cases; 905 of 910 of a simulation
    on this machine's Python sources): beta() read, a copy of it added above alpha(), beta()
    rewritten where it stood, and lines deleted at the end so that the file shrank by exactly
    the distance to the copy: the edit went to the copy. The lines around the old place had moved
    too, so nothing said they stayed behind; but none of the lines around the lines read stands
    around the copy, as some do around a block that moved: STALE_VIEW. Lines deleted above still
    move beta(), and the edit follows it."""
    alpha = "import os\n\n\ndef alpha():\n    a = 1\n    return a\n\n\n"
    beta, gamma = "def beta():\n    b = 2\n    return b\n", "\n\ndef gamma():\n    g = 3\n    return g\n"
    pads = [f"PAD_{n} = {n}\n" for n in range(12)]
    (root / "t.py").write_text(alpha + beta + gamma + "".join(pads))
    _done, read = run_json("read", "-f", "t.py", "-s", "9", "-e", "11", cwd=root, env=be_env)
    token = read["viewed_code_id"]
    rewritten = "def beta():\n    b = 2  # v2\n    return b  # v2\n"
    copied = (
        "import os\n"
        + beta
        + alpha[len("import os\n") :]
        + rewritten
        + gamma
        + "".join(pads[:2])  # (3 lines more above, 10 fewer below: the copy is 7 lines up, as the file)
    )
    _view_refused_after_change(root, be_env, token, copied, 10, "    b = 99")
    (root / "t.py").write_text(alpha[len("import os\n") :] + beta + gamma + "".join(pads))
    done, result = _replace_line_with_view(root, be_env, token, 10, "    b = 99")
    assert done.returncode == 0 and result["relocated"] == -1, result


def test_a_view_none_of_whose_lines_around_went_along_never_moves_to_a_copy_below(root, be_env):
    """Found by the second regression pass: limited to windows above the lines read (after the
    first pass found moves refused whose lines around had all been edited), the rule let the
    mirror attack through: the lines read rewritten in place, their old text copied below, a line
    added above and lines at the end so that the file grew by exactly the distance to the copy;
    the edit went to the copy (296 of 300 random cases). It holds both ways again: a block whose
    lines around were all edited since is STALE_VIEW too, which only asks for a read
    (docs/decisions.md)."""
    alpha, beta = "def alpha():\n    return 1\n\n\n", "def beta(x):\n    y = x + 1\n    return y * 2\n"
    gamma = "\n\ndef gamma():\n    return 3\n"
    (root / "t.py").write_text("import os\n\n\n" + alpha + beta + gamma)
    _done, read = run_json("read", "-f", "t.py", "-s", "8", "-e", "10", cwd=root, env=be_env)
    beta2 = "def beta(x):  # v2\n    y = x + 10  # v2\n    return y * 3  # v2\n"
    copied = "import os\nimport sys\n\n\n" + alpha + beta2 + gamma + "\n" + beta + "# 1\n# 2\n# 3\n# 4\n"
    _view_refused_after_change(root, be_env, read["viewed_code_id"], copied, 9, "    y = x + 100")
    before = "import os\n\n\ndef total(items):\n    result = 0\n    for item in items:\n        result += item.price\n    return result\n"
    (root / "t.py").write_text(before)
    _done, read = run_json("read", "-f", "t.py", "-s", "6", "-e", "6", cwd=root, env=be_env)
    now = before.replace("import os\n", "import os\nimport sys\n").replace("result", "acc")
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 6, "    for item in sorted(items):")


def test_a_view_follows_its_line_under_a_look_alike_line_inserted_right_above_it(root, be_env):
    """The regression pass on a rule tried this session (docs/decisions.md: refuse a view moved by
    its own length or more when lines like it fill its old place): a one-line view with a similar
    line inserted right above it by this tool's own insert was refused, 196 of 196 such moves
    simulated. The rule is out; the view follows its line (the line below went along)."""
    (root / "t.json").write_text('{\n    "retries": 3,\n    "timeout": 30\n}\n')
    _done, read = run_json("read", "-f", "t.json", "-s", "2", "-e", "2", cwd=root, env=be_env)
    done, _result = run_json(
        "insert", "-f", "t.json", "--after-line", "1", "-c", '    "retry_delay": 2,', cwd=root, env=be_env
    )
    assert done.returncode == 0
    done, result = run_json(
        "replace", "-f", "t.json", "-s", "2", "-c", '    "retries": 5,', "--viewed-code-id", read["viewed_code_id"],
        cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 0 and result["relocated"] == 1, result
    assert (
        root / "t.json"
    ).read_text() == '{\n    "retry_delay": 2,\n    "retries": 5,\n    "timeout": 30\n}\n'


def test_a_view_of_the_last_function_moves_when_a_function_is_added_above_it(root, be_env):
    """Found by the regression pass: the nearest-neighbour rule, with one side deciding, refused
    180 of 3,000 real moves (every one a view of a file's last function, nothing below it): a
    function added right above it left `return 1` standing above the old place. Both sides must
    tell now; this move goes on. So it does when blank lines end the file (found by reading this
    session's change: the rule that a line around must go along with a moved block took the
    blank line below for one that stayed)."""
    for end in ("", "\n", "\n\n"):
        (root / "t.py").write_text(
            "import os\n\n\ndef a():\n    return 1\n\n\ndef g(x):\n    y = x + 1\n    return y\n" + end
        )
        _done, read = run_json("read", "-f", "t.py", "-s", "8", "-e", "10", cwd=root, env=be_env)
        added = "import os\n\n\ndef a():\n    return 1\n\n\ndef h():\n    return 2\n\n\n"
        (root / "t.py").write_text(added + "def g(x):\n    y = x + 1\n    return y\n" + end)
        done, result = _replace_line_with_view(root, be_env, read["viewed_code_id"], 9, "    y = x + 2")
        assert done.returncode == 0 and result["relocated"] == 4, (end, result)
        assert (root / "t.py").read_text() == added + "def g(x):\n    y = x + 2\n    return y\n" + end


def test_a_block_changed_in_place_at_both_edges_never_moves_to_a_copy(root, be_env):
    """As above, but the change rewrote the view's first and last lines (the function renamed, its
    return changed) and left its middle: most of the viewed lines still stand where they were read,
    so the lines were changed there (before, the edit went to the copy, "lines moved by +8")."""
    block = "def f():\n    x = load()\n    y = x * 2\n    z = y + 1\n    return z\n"
    (root / "t.py").write_text("header = 1\n\n" + block + "\nfooter = 2\n")
    _done, read = run_json("read", "-f", "t.py", "-s", "3", "-e", "7", cwd=root, env=be_env)
    changed = block.replace("def f()", "def g()").replace("return z", "return z or 0")
    now = "header = 1\n\n" + changed + "\nfooter = 2\n\n" + block
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, 5, "    y = x * 3")


def test_a_moved_block_whose_old_place_now_holds_a_blank_line_still_moves(root, be_env):
    """The edge-line rule ignores lines without a letter or digit: a blank line (or a lone `}`)
    now at the viewed first line says nothing about where the block went."""
    (root / "t.py").write_text("a = 1\n\nb = 2\nc = 3\n")
    _done, read = run_json("read", "-f", "t.py", "-s", "2", "-e", "3", cwd=root, env=be_env)
    (root / "t.py").write_text("a = 1\n\n\nb = 2\nc = 3\n")  # a blank line inserted above
    done, result = run_json(
        "replace", "-f", "t.py", "-s", "3", "-c", "b = 20",
        "--viewed-code-id", read["viewed_code_id"], cwd=root, env=be_env,
    )  # fmt: skip
    assert done.returncode == 0 and result["relocated"] == 1, result
    assert (root / "t.py").read_text() == "a = 1\n\n\nb = 20\nc = 3\n"


def test_an_old_whose_lines_were_changed_in_place_points_at_no_copy(server, root):
    """`old` copied from lines 9-11, which were changed there since; the same old text stands at
    lines 2-4. The MISMATCH names the line that still stands and offers neither `found_at` nor
    `closest` there (a retry by them would edit the copy); `actual` holds lines 9-11 now."""
    f = "def f():\n    x = load()\n    return x\n"
    text = (
        "import os\n" + f + "x0 = 0\nx1 = 1\nx2 = 2\n\n" + f.replace("load()", "load(cache=1)") + "end = 1\n"
    )
    (root / "t.py").write_text(text)
    args = {
        "file": "t.py",
        "start": 9,
        "end": 11,
        "old": f,
        "content": f.replace("load()", "load(fast=True)"),
    }
    error = server.err("be-replace", "MISMATCH", args)
    assert 'its line "def f():" still stands at line 9' in error["message"], error
    assert error["found_at"] == [] and error["closest"] is None
    assert error["actual"] == "def f():\n    x = load(cache=1)\n    return x"
    assert _mechanical_retry(args, error) is None
    assert (root / "t.py").read_text() == text


def test_stale_line_numbers_on_a_common_first_line_still_point_at_old(server, root):
    """Line 2 holds `try:` like old's first line, but nothing else of old: a coincidence, not lines
    changed in place, so `found_at` and `closest` still lead the retry to where old is."""
    text = "def a():\n    try:\n        return 1\n    except E:\n        pass\n\ndef b():\n    try:\n        x = f()\n        return x\n    except E:\n        pass\n"
    (root / "t.py").write_text(text)
    old = "    try:\n        x = f()\n        return x"
    args = {"file": "t.py", "start": 2, "end": 4, "old": old, "content": "    try:\n        return f()"}
    error = server.err("be-replace", "MISMATCH", args)
    assert error["found_at"] == [{"start": 8, "end": 10}] and error["closest"]["start"] == 8, error
    server.ok("be-replace", dict(_mechanical_retry(args, error), file="t.py"))
    assert (root / "t.py").read_text() == text.replace(old, "    try:\n        return f()")


def test_old_differing_only_in_trailing_space_at_its_line_keeps_its_closest(server, root):
    """The named line holds old but for trailing spaces: that line is the place, so `closest` and
    `found_at` still name it (the changed-in-place rule drops only candidates elsewhere)."""
    (root / "t.txt").write_text("a\nfoo  \nb\n")
    args = {"file": "t.txt", "start": 2, "old": "foo", "content": "bar"}
    error = server.err("be-replace", "MISMATCH", args)
    assert error["closest"]["start"] == 2 and "still stands" not in error["message"], error
    server.ok("be-replace", dict(_mechanical_retry(args, error), file="t.txt"))
    assert (root / "t.txt").read_text() == "a\nbar\nb\n"


def test_a_token_made_before_the_line_count_mark_never_moves(root, be_env):
    """Tokens of 0.3 before the file's line count joined the mark (`:uLEN.FIRST.LAST`, or
    `:uLEN.FIRST` earlier) cannot show that the file grew by the lines the block moved: STALE_VIEW."""
    (root / "t.py").write_text(TWINS)
    _done, read = run_json("read", "-f", "t.py", "-s", "1", "-e", "3", cwd=root, env=be_env)
    token = read["viewed_code_id"]
    base = ".".join(
        token.split(".")[:6]
    )  # v1:1-3:HASH:uLEN.FIRST.LAST.LINES.ABOVE.BELOW (.NEAR_ABOVE.NEAR_BELOW)
    assert token.count(".") in (5, 7) and base.count(".") == 5, token
    for old_style in (base.rsplit(".", 3)[0], base.rsplit(".", 4)[0]):
        _view_refused_after_change(root, be_env, old_style, "import os\n" + TWINS, 3, "    return x + 1")
    done, result = run_json(
        *REPLACE_LINE_3, "-c", "    return x + 1", "--viewed-code-id", token, cwd=root, env=be_env
    )
    assert done.returncode == 0 and result["relocated"] == 1, result


@pytest.mark.parametrize(
    "now, line",
    [
        ("a = 1\nb = 20\nc = 3\nb = 2\n", 2),  # the viewed line changed in place, its old text added below
        ("a = 1\nb = 20\nc = 3\n\n\nb = 2\n", 2),
        ("b = 2\na = 1\nb = 20\nc = 3\n", 2),  # the old text added above: no line moved down by one
        ("x = 0\na = 1\nb = 2\nc = 3\nd = 4\n", 2),  # moved down by one, and a line added below
    ],
    ids=["copy-below", "copy-further-below", "copy-above", "moved-and-grown-below"],
)
def test_a_view_whose_lines_were_all_rewritten_never_moves_to_a_copy(root, be_env, now, line):
    """Found by an attack: line 2 read while unique, then rewritten in place and its old text added
    elsewhere. No edge line and no line of the view stands where it was, and one window holds the
    viewed bytes, so before, the edit (or a delete) went to that copy with a "moved by +2" warning.
    A block moved by d lines only when the file has d lines more (or fewer) than when it was read."""
    (root / "t.py").write_text("a = 1\nb = 2\nc = 3\n")
    _done, read = run_json("read", "-f", "t.py", "-s", "2", "-e", "2", cwd=root, env=be_env)
    assert ":u" in read["viewed_code_id"]
    _view_refused_after_change(root, be_env, read["viewed_code_id"], now, line, "b = 99")
    (root / "t.py").write_text(now)
    done, result = run_json(
        "delete",
        "-f",
        "t.py",
        "-s",
        str(line),
        "--viewed-code-id",
        read["viewed_code_id"],
        cwd=root,
        env=be_env,
    )
    assert done.returncode == 1 and result["error"]["code"] == "STALE_VIEW", result
    assert (root / "t.py").read_text() == now


def _view(root, be_env, file, start, end):
    _done, read = run_json("read", "-f", file, "-s", str(start), "-e", str(end), cwd=root, env=be_env)
    return read["viewed_code_id"]


@pytest.mark.parametrize(
    "args, want",
    [
        (["replace", "-s", "2", "-c", "B"], "B\nc\n"),  # crashed (INTERNAL, IndexError)
        (["replace", "--old", "c", "-c", "C"], "b\nC\n"),  # crashed
        (["insert", "--after-line", "2", "-c", "D"], "b\nD\nc\n"),  # crashed
        (["replace", "-s", "3", "-c", "C"], "b\nC\n"),  # OUT_OF_RANGE: line 3 of the view is now 2
        (["delete", "-s", "2", "-e", "3"], ""),  # OUT_OF_RANGE
    ],
)
def test_a_view_reaching_the_end_follows_lines_deleted_above_it(root, be_env, args, want):
    """Found by an attack: lines 2-3 of a 3-line file read, line 1 then deleted by another
    program. An edit through that view crashed (INTERNAL: the check of lines still standing read
    past the end) or was OUT_OF_RANGE (its numbers were checked against the shorter file before
    the view was); the block only moved by -1, so the edit follows it."""
    (root / "f.txt").write_text("a\nb\nc\n")
    view = _view(root, be_env, "f.txt", 2, 3)
    (root / "f.txt").write_text("b\nc\n")
    done, result = run_json(args[0], "-f", "f.txt", *args[1:], "--viewed-code-id", view, cwd=root, env=be_env)
    assert done.returncode == 0 and result["relocated"] == -1, result
    assert (root / "f.txt").read_text() == want


@pytest.mark.parametrize(
    "read, gone, args, want",
    [
        ((3, 4), 2, ["insert", "--after-line", "-1", "-c", "END"], None),  # (past the view: stale)
        ((3, 6), 2, ["insert", "--after-line", "-1", "-c", "END"], "l3\nl4\nl5\nl6\nEND\n"),
        ((2, 4), 1, ["replace", "-s", "3", "-e", "-3", "-c", "X"], "l2\nX\nl5\nl6\n"),
        ((2, 4), 1, ["delete", "-s", "2", "-e", "-3"], "l5\nl6\n"),
    ],
)
def test_numbers_counted_from_the_end_are_not_moved_twice_with_a_view(root, be_env, read, gone, args, want):
    """Found by an attack: with a view that moved (two lines deleted above it), `--after-line -1`
    inserted in the middle of the file and `-e -3` stopped a line short, both reporting success:
    a number counted from the end is already one of the file as it is, and it was moved by the
    view's offset again."""
    lines = [f"l{n}\n" for n in range(1, 7)]
    (root / "f.txt").write_text("".join(lines))
    view = _view(root, be_env, "f.txt", *read)
    (root / "f.txt").write_text("".join(lines[gone:]))
    done, result = run_json(args[0], "-f", "f.txt", *args[1:], "--viewed-code-id", view, cwd=root, env=be_env)
    if want is None:  # (an edit outside a view that moved is refused, as in the file it was read from)
        assert result["error"]["code"] == "STALE_VIEW", result
        want = "".join(lines[gone:])
    else:
        assert done.returncode == 0 and result["relocated"] == -gone, result
    assert (root / "f.txt").read_text() == want


def test_old_that_stands_in_the_file_with_its_tab_is_not_taken_for_a_read_prefix(root, be_env):
    """Found by an attack: `--old $'2\\tapple'` in a file whose line 3 is exactly that was read as
    a copied read prefix, so line 2 (`apple`) was replaced instead, with success. Text that stands
    in the file as given is replaced there."""
    (root / "f.txt").write_text("x\napple\n2\tapple\n")
    done, result = run_json("replace", "-f", "f.txt", "--old", "2\tapple", "-c", "PEAR", cwd=root, env=be_env)
    assert done.returncode == 0 and result["start"] == 3 and "warnings" not in result, result
    assert (root / "f.txt").read_text() == "x\napple\nPEAR\n"
    (root / "g.txt").write_text("x\napple\n")  # (not in the file as given: a read's prefix)
    done, result = run_json("replace", "-f", "g.txt", "--old", "2\tapple", "-c", "PEAR", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "g.txt").read_text() == "x\nPEAR\n", result


@pytest.mark.parametrize(
    "body, old, content, ours, word",
    [
        ("server:\n  port: 8080\n", "port: 80", "port: 443", "80", "8080"),  # old ends inside a number
        ("RETRIES = 5\ntimeout = 30\n", "timeout = 3", "timeout = 5", "3", "30"),
        ("xvalue = 10\n", "value = 10", "value = 3", "value", "xvalue"),  # starts inside a word of letters
        ("def username(x):\n    pass\n", "def user", "def login", "user", "username"),
        # (the third regression pass: `_` and camelCase steps are inside a name: another key was edited)
        ("DB_HOST=localhost\n", "HOST=localhost", "HOST=db", "HOST", "DB_HOST"),
        ("c.ConnectTimeout = 30\n", "Timeout = 30", "Timeout = 5", "Timeout", "ConnectTimeout"),
    ],
)
def test_old_that_starts_or_ends_inside_a_word_is_refused(
    server, root, be_env, body, old, content, ours, word
):
    """`port: 80` stands once in `port: 8080`, but replacing it gave `port: 44380`: an `old` whose one
    place starts or ends inside a word (letters, digits, `_`) is MISMATCH naming the word, through
    the CLI, the server and a be-edit item; force changes part of a word."""
    (root / "f.txt").write_text(body)
    done, answer = run_json("replace", "-f", "f.txt", "--old", old, "-c", content, cwd=root, env=be_env)
    assert done.returncode == 1 and answer["error"]["code"] == "MISMATCH", answer
    assert f"it has {ours!r} where the file has {word!r}" in answer["error"]["message"]
    assert "--force" in answer["error"]["hint"]
    error = server.err("be-replace", "MISMATCH", {"file": "f.txt", "old": old, "content": content})
    assert "force: true" in error["hint"] and repr(word) in error["message"]
    item = {"file": "f.txt", "old": old, "content": content}
    assert server.err("be-edit", "MISMATCH", {"edits": [item]})["index"] == 0
    assert (root / "f.txt").read_text() == body
    done, answer = run_json(
        "replace", "-f", "f.txt", "--old", old, "-c", content, "--force", cwd=root, env=be_env
    )
    assert done.returncode == 0 and (root / "f.txt").read_text() == body.replace(old, content, 1)


def test_old_standing_whole_once_and_inside_words_elsewhere_is_the_whole_one(server, root, be_env):
    """`line 1` in a file with `line 1`, `line 10` and `line 11` was AMBIGUOUS (3 places), while one
    place alone inside a word is MISMATCH: places inside words are guesses, so the one whole place
    is the match, through the CLI, the server and a be-edit item; several whole places are still
    AMBIGUOUS, listing those; force counts every place."""
    (root / "f.txt").write_text("line 1\nline 10\nline 11\n")
    done, answer = run_json("replace", "-f", "f.txt", "--old", "line 1", "-c", "LINE 1", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "f.txt").read_text() == "LINE 1\nline 10\nline 11\n", answer
    server.ok("be-edit", {"edits": [{"file": "f.txt", "old": "line 10", "content": "LINE 10"}]})
    (root / "p.yml").write_text("port: 80\nport: 8080\nport: 80\n")
    error = server.err("be-replace", "AMBIGUOUS", {"file": "p.yml", "old": "port: 80", "content": "port: 81"})
    assert error["candidates"] == [{"start": 1, "end": 1}, {"start": 3, "end": 3}], error
    error = server.err(
        "be-replace", "AMBIGUOUS", {"file": "p.yml", "old": "port: 80", "content": "x", "force": True}
    )
    assert len(error["candidates"]) == 3, error
    assert (root / "p.yml").read_text() == "port: 80\nport: 8080\nport: 80\n"


@pytest.mark.parametrize(
    "body, old",
    [
        ("a = foo(1)\n", "foo(1"),  # ends at a bracket
        ("x = 10\n", "x = 10"),  # the whole line
        ("名前状态码\n", "状态"),  # CJK has no spaces between words
        ("port: 8080\n", "port: 8080\n"),
        ("a-b c\n", "b c"),
        # (the regression pass: an escape's letter, a version after a letter, a number before one)
        ('print("Line one\\nLine two")\n', '"Line one\\n'),
        ('x = "%dms"\n', '"%d'),
        ("tag: v1.2.3\n", "1.2.3"),
        ("FROM python3.11\n", "3.11"),
        ('v = "1.2.3rc1"\n', "1.2.3"),
    ],
)
def test_old_at_the_edges_of_words_is_applied(root, be_env, body, old):
    (root / "f.txt").write_text(body)
    done = run_cli("replace", "-f", "f.txt", "--old", old, "-c", "Z", cwd=root, env=be_env)
    assert done.returncode == 0, done.stderr


def test_stale_lines_whose_old_stands_at_several_places_offer_no_retry_token(server, root):
    """Found by the agent-mistakes attack: three tests end with the same two asserts; lines named
    after 5 imports were added on top missed them all. The MISMATCH listed the three places and
    also gave `closest`, the first of them with similarity 1.0 and a viewed_code_id: retrying with
    it edited the first test, not the one meant. Several places give no closest: found_at lists
    them, and start/end must pick one."""
    tests = "".join(
        f"def test_login_{n}():\n    resp = post({n!r})\n    assert resp.status == 200\n    assert resp.ok\n\n"
        for n in ("ok", "bad_pw", "locked")
    )
    (root / "t.py").write_text("import a\nimport b\n\n" + tests)
    old = "    assert resp.status == 200\n    assert resp.ok"
    error = server.err(
        "be-replace", "MISMATCH", {"file": "t.py", "start": 12, "end": 13, "old": old, "content": "x"}
    )
    assert [(f["start"], f["end"]) for f in error["found_at"]] == [(6, 7), (11, 12), (16, 17)], error
    assert error["closest"] is None, error
    alone = "import a\nimport b\n\n" + tests.replace("    assert resp.ok\n", "", 2)  # (one place left)
    (root / "t.py").write_text(alone)
    old = "    assert resp.status == 200\n    assert resp.ok"
    error = server.err(
        "be-replace", "MISMATCH", {"file": "t.py", "start": 2, "end": 3, "old": old, "content": "x"}
    )
    assert error["closest"]["start"] == 14 and error["closest"]["viewed_code_id"], error


def test_a_file_created_beside_the_one_likely_meant_says_so(server, root, be_env):
    """Found by the agent-mistakes attack: `write` to `src/component/Button.tsx` while
    `src/components/Button.tsx` exists made a new folder and file without a word (a read of the
    same name suggests the near one). The file is still created (a new name is a new file), with
    a warning naming the one that exists; a new name with nothing like it beside it says nothing."""
    (root / "src/components").mkdir(parents=True)
    (root / "src/components/Button.tsx").write_text("old\n")
    (root / "lib").mkdir()
    (root / "lib/utils.ts").write_text("old\n")
    done, answer = run_json("write", "-f", "src/component/Button.tsx", "-c", "new", cwd=root, env=be_env)
    assert done.returncode == 0 and (root / "src/component/Button.tsx").read_text() == "new"
    assert any('yet "src/components/Button.tsx" is there' in w for w in answer["warnings"]), answer
    result = server.ok("be-write", {"file": "lib/utils.js", "content": "new"})
    assert any('yet "lib/utils.ts" is there' in w for w in result["warnings"]), result
    for name in (".env.example", "main.c", "index.html", "api_v1/handler.py"):  # (the regression pass)
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("x\n")
    for fresh in (
        "lib/other.js",
        "src/components/New.tsx",
        "docs/new/guide.md",
        ".env",
        "main.h",
        "index.css",
        "api_v2/handler.py",
    ):
        result = server.ok("be-write", {"file": fresh, "content": "new"})
        assert "warnings" not in result, result
    assert (root / "src/components/Button.tsx").read_text() == "old\n" == (root / "lib/utils.ts").read_text()


def test_a_be_edit_write_item_or_a_preview_beside_the_file_likely_meant_says_so(server, root):
    """Left from the near-name warning: a be-edit `write` item to `lib/utils.js` beside
    `lib/utils.ts` created the file without a word, and a preview said the file "was created"."""
    (root / "lib").mkdir()
    (root / "lib/utils.ts").write_text("old\n")
    result = server.ok("be-write", {"file": "lib/utils.js", "content": "new", "preview": True})
    assert any('lib/utils.js would be created, yet "lib/utils.ts"' in w for w in result["warnings"]), result
    assert not (root / "lib/utils.js").exists()
    edits = [
        {"op": "write", "file": "lib/utils.js", "content": "new"},
        {"op": "write", "file": "x.md", "content": "y"},
    ]
    result = server.ok("be-edit", {"edits": edits})
    near = [w for w in result["warnings"] if 'yet "lib/utils.ts" is there' in w]
    assert len(near) == 1 and "lib/utils.js was created" in near[0], result
    assert (root / "lib/utils.js").read_text() == "new" and (root / "lib/utils.ts").read_text() == "old\n"


def test_one_line_content_that_looks_escaped_twice_is_written_as_sent_with_a_warning(server, root, be_env):
    """Found by the agent-mistakes attack: a replace, an insert and a be-edit line item whose
    content arrived escaped twice (`import sys\\nimport json\\nimport re`) wrote one literal line
    without a word. One line of these tools is still written as sent (real code holds `\\n`:
    `split(/\\n\\n+/)`), with a warning that says how to fix it; the CLI's content is verbatim."""
    escaped = "import sys\\nimport json\\nimport re"
    (root / "a.py").write_text("x = 1\n")
    for name, args in [
        ("be-insert", {"file": "a.py", "after_line": 1, "content": escaped}),
        ("be-replace", {"file": "a.py", "start": 2, "content": escaped}),
        ("be-edit", {"edits": [{"file": "a.py", "start": 2, "content": escaped}]}),
    ]:
        result = server.ok(name, args)
        assert any("escaped twice" in w for w in result["warnings"]), (name, result)
        assert (root / "a.py").read_text() == "x = 1\n" + escaped + "\n"
    for code in ['print("a\\nb", "c\\nd")', "text.split(/\\n\\n+/)", "s = `line1\\nline2\\n`;"]:
        result = server.ok("be-replace", {"file": "a.py", "start": 2, "content": code})
        assert not any("escaped twice" in w for w in result.get("warnings", [])), result  # (strings, a regex)
    done, answer = run_json("replace", "-f", "a.py", "-s", "2", "-c", escaped, cwd=root, env=be_env)
    assert done.returncode == 0 and not any("escaped twice" in w for w in answer.get("warnings", []))


def test_a_line_indented_unlike_the_lines_around_it_is_named(server, root, be_env):
    """Found by the agent-mistakes attack: spaces inserted into a Makefile's recipe (make rejects
    it), tabs into a Python function indented with spaces (TabError), spaces into a Go file: all
    written without a word, `balance` ok. The edit stands, and a warning names the line."""
    (root / "Makefile").write_text("app: main.o\n\tcc -o app main.o\n\nclean:\n\trm -f *.o\n\trm -f app\n")
    done, answer = run_json(
        "insert", "-f", "Makefile", "--after-line", "6", "-c", "    rm -rf build/", cwd=root, env=be_env
    )
    assert done.returncode == 0 and (root / "Makefile").read_text().endswith(
        "\trm -f app\n    rm -rf build/\n"
    )
    assert any(
        "line 7 now indents with spaces where the lines around it indent with tabs" in w
        for w in answer["warnings"]
    )
    body = "def f(rows):\n    out = []\n    n = 0\n    for r in rows:\n        out.append(r)\n    n += 1\n    return out\n"
    (root / "f.py").write_text(body)
    result = server.ok(
        "be-replace", {"file": "f.py", "start": 4, "end": 5, "content": "\tfor r in rows:\n\t\tout.append(r)"}
    )
    assert any("line 4 now indents with tabs" in w for w in result["warnings"]), result
    (root / "f.py").write_text(body)
    result = server.ok(
        "be-replace", {"file": "f.py", "start": 4, "end": 5, "content": "    for r in rows:\n        pass"}
    )
    assert not any("indents with" in w for w in result.get("warnings", [])), result


def test_a_closest_block_standing_at_several_places_offers_no_retry_token(server, root, be_env):
    """The regression pass: `return 3` found nowhere in a file with two `return 1` lines gave the
    first of them as `closest`, with a viewed_code_id whose retry edits that one, maybe not the one
    meant. Its first difference is still shown, without a token, and the hint asks for start/end."""
    body = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    (root / "tw.py").write_text(body)
    error = server.err("be-replace", "MISMATCH", {"file": "tw.py", "old": "    return 3", "content": "x"})
    assert error["closest"]["first_difference"]["kind"] == "text", error
    assert "viewed_code_id" not in error["closest"] and "several places" in error["hint"], error
    done = run_cli("replace", "-f", "tw.py", "--old", "    return 3", "-c", "x", cwd=root, env=be_env)
    assert b"that block stands at several places" in done.stderr + done.stdout
    (root / "tw.py").write_text("def a():\n    return 1\n\ndef b():\n    return 2\n")  # (one place: a token)
    error = server.err("be-replace", "MISMATCH", {"file": "tw.py", "old": "    return 3", "content": "x"})
    assert error["closest"]["viewed_code_id"], error
    assert (root / "tw.py").read_text().endswith("return 2\n")


def test_lines_indented_as_the_lines_they_replace_or_follow_are_not_named(server, root):
    """The second regression pass on the warning above: C's alignment of a continued signature and
    a Makefile variable's continued list (spaces among tabs, as they stood) were named; a line
    indented as the line it replaces, or as the nearest indented line above, is not."""
    (root / "d.c").write_text(
        "int open_device(const char *path,\n                int flags)\n{\n\tint a;\n\tint b;\n\treturn a;\n}\n"
    )
    old = "int open_device(const char *path,\n                int flags)"
    result = server.ok(
        "be-replace", {"file": "d.c", "old": old, "content": old.replace("flags)", "flags, int m)")}
    )
    assert not any("indents with" in w for w in result.get("warnings", [])), result
    (root / "Makefile").write_text("SRCS = a.c \\\n       b.c\n\nall:\n\tcc a\n\tcc b\n\tcc c\n")
    result = server.ok(
        "be-replace", {"file": "Makefile", "start": 1, "end": 2, "content": "SRCS = a.c \\\n       c.c"}
    )
    assert not any("indents with" in w for w in result.get("warnings", [])), result
    result = server.ok("be-insert", {"file": "Makefile", "after_line": 7, "content": "    rm -f app"})
    assert any("line 8 now indents with spaces" in w for w in result["warnings"]), result
    (root / "R.md").write_text("# T\n\n- a\n  - b\n  - c\n  - d\n")  # (prose: a code block of another file)
    result = server.ok(
        "be-insert", {"file": "R.md", "after_line": 6, "content": "```go\nfunc f() {\n\treturn\n}\n```"}
    )
    assert not any("indents with" in w for w in result.get("warnings", [])), result


def test_a_list_indented_one_space_off_is_no_diff(root, be_env):
    """The second regression pass: `- apples` above `   - red` (a Markdown list one space off)
    was named "the ' ', '+' and '-' of a diff"; its `-` line stands in the file as it is."""
    (root / "n.md").write_text("# Notes\n\n- apples\n  - red\n  - green\n- pears\n")
    done, answer = run_json(
        "replace", "-f", "n.md", "--old", "- apples\n   - red\n   - green", "-c", "x", cwd=root, env=be_env
    )
    assert done.returncode == 1 and answer["error"]["closest"]["first_difference"]["kind"] == "indentation", (
        answer
    )


def test_third_pass_a_continued_list_excuses_no_recipe_and_closest_prefers_the_lines_asked(server, root):
    """The third regression pass: a Makefile recipe indented with spaces after a variable's list
    continued with `\\` (spaces) was not named; with start/end naming one of two identical blocks,
    `closest` named the other one."""
    (root / "Makefile").write_text(
        "all: app\n\tcc -o app main.c\n\tstrip app\n\tls -l app\n\nOBJS = a.o \\\n       b.o \\\n       c.o\n\ninstall: app\n"
    )
    result = server.ok(
        "be-insert", {"file": "Makefile", "after_line": 10, "content": "    mkdir -p /usr/bin"}
    )
    assert any("line 11 now indents with spaces" in w for w in result["warnings"]), result
    (root / "dup.py").write_text(
        "def a():\n    x = compute(1)\n    return x\n\ndef b():\n    x = compute(1)\n    return x\n"
    )
    old = "    x = compute(2)\n    return x"
    error = server.err(
        "be-replace", "MISMATCH", {"file": "dup.py", "start": 6, "end": 7, "old": old, "content": "x"}
    )
    closest = error["closest"]
    assert (closest["start"], closest["end"], closest["first_difference"]["line"]) == (6, 7, 6), error
    assert closest["viewed_code_id"].startswith("v1:6-7:"), error


def test_content_still_wrapped_as_the_agent_saw_it_is_refused(root, server):
    """Found by an attack: a `be-write` of a read's output (each line `N<TAB>...`), a `be-insert` of
    lines copied from a read, a `be-replace` whose content was a diff, and content in a Markdown
    fence were all written into .py files as they came, `ok` with no warning. Content for a file of
    code that carries a fence, a read's prefixes on every line or a diff's signs is now refused,
    and nothing is written; `force` writes it as given, and files that hold such lines, Markdown and
    tables are left to their text."""
    source = "def add(a, b):\n    return a + b\n"
    (root / "calc.py").write_text(source)
    read = "1\tdef add(a, b):\n2\t    return a - b\n"
    fenced = "```python\ndef add(a, b):\n    return a - b\n```\n"
    diff = " def add(a, b):\n-    return a + b\n+    return a - b\n"
    refused = [
        ("be-write", {"content": read}, "line-number prefix of a read (1<TAB> to 2<TAB>)"),
        ("be-write", {"content": fenced}, "wrapped in a Markdown code fence"),
        ("be-insert", {"after_line": 2, "content": "4\tdef sub(a, b):\n5\t    return a - b\n"}, "(4<TAB> to"),
        ("be-replace", {"start": 1, "end": 2, "content": diff}, "content is a diff"),
        ("be-replace", {"old": "return a + b", "content": "```\nreturn a - b\n```"}, "code fence"),
    ]
    for tool, args, words in refused:
        error = server.err(tool, "INVALID_ARGUMENT", dict(args, file="calc.py"))
        assert words in error["message"] and "force: true" in error["hint"], error
        assert (root / "calc.py").read_text() == source
    items = [{"op": "write", "file": "new.py", "content": fenced}]
    server.err("be-edit", "INVALID_ARGUMENT", {"edits": items})
    assert not (root / "new.py").exists()
    server.ok("be-write", {"file": "calc.py", "content": fenced, "force": True})
    assert (root / "calc.py").read_text() == fenced
    # a file that holds fences (a docstring's example), Markdown, a table of ids, a YAML list: as given
    doc = 'def f():\n    """Use it:\n\n    ```\n    f()\n    ```\n    """\n'
    (root / "doc.py").write_text(doc)
    server.ok("be-replace", {"file": "doc.py", "start": 4, "end": 6, "content": "    ```\n    g()\n    ```"})
    assert "    g()\n" in (root / "doc.py").read_text()
    server.ok("be-write", {"file": "notes.md", "content": fenced})
    assert (root / "notes.md").read_text() == fenced
    server.ok("be-write", {"file": "ids.tsv", "content": "1\talice\n2\tbob\n"})
    server.ok("be-write", {"file": "c.yaml", "content": "- a\n- b\n"})
    (root / "m.py").write_text("x = 1\ny = 2\n")
    server.ok("be-replace", {"file": "m.py", "start": 2, "end": 2, "content": "y = (\n    -1\n    + 2\n)"})


def test_a_target_never_takes_lines_that_hold_more_than_its_function(root, server):
    """Found by an attack: `delete --target function:callback` where `callback = () => {}` is a
    parameter default deleted the whole method whose signature held it, and `function:f` in
    `class A { f() {..} g() {..} }` deleted the class. A definition whose line belongs to another
    function's range, or that shares its one line with other definitions, is NOT_FOUND saying so."""
    method = "class Walker {\n  injectRules (rules, callback = () => {}) {\n    this.read(rules, callback)\n  }\n}\n"
    (root / "cb.js").write_text(method)
    error = server.err("be-delete", "NOT_FOUND", {"file": "cb.js", "target": "function:callback"})
    assert "is defined at line 2 of cb.js, but that line holds more" in error["message"], error
    assert "injectRules (lines 2-4)" in error["message"], error
    one_line = "class A { f() { return 1 } }\nfunction c() {\n  return 3\n}\n"
    (root / "two.js").write_text(one_line)
    error = server.err("be-delete", "NOT_FOUND", {"file": "two.js", "target": "function:f"})
    assert "which also defines A" in error["message"], error
    assert (root / "cb.js").read_text() == method and (root / "two.js").read_text() == one_line
    server.ok("be-delete", {"file": "two.js", "target": "function:c"})
    assert (root / "two.js").read_text() == "class A { f() { return 1 } }\n"
    server.ok("be-delete", {"file": "cb.js", "target": "function:injectRules"})
    assert (root / "cb.js").read_text() == "class Walker {\n}\n"


def test_a_viewed_code_id_of_another_file_says_so(root, server):
    """Found by an attack: a viewed_code_id read from two.txt, passed with an edit of one.txt (the
    same text), got "one.txt changed since lines 1-2 were read ... where a read does not show it";
    one.txt never changed. The server remembers which file a view was read from and says that; so
    also when the name now leads to another file (a symlink put in its place)."""
    (root / "one.txt").write_text("a\nb\n")
    (root / "two.txt").write_text("a\nb\n")
    token = server.ok("be-read", {"file": "two.txt"})["viewed_code_id"]
    args = {"file": "one.txt", "start": 1, "end": 2, "content": "x", "viewed_code_id": token}
    error = server.err("be-replace", "STALE_VIEW", args)
    assert "one.txt is not the file lines 1-2 were read from" in error["message"], error
    assert str(root / "two.txt") in error["message"] and "changed since" not in error["message"], error
    token = server.ok("be-read", {"file": "one.txt"})["viewed_code_id"]
    (root / "g.txt").write_text("a\nb\n")
    (root / "one.txt").unlink()
    (root / "one.txt").symlink_to("g.txt")
    error = server.err("be-replace", "STALE_VIEW", dict(args, viewed_code_id=token))
    assert "that read was of " + str(root / "one.txt") in error["message"], error
    assert (root / "g.txt").read_text() == "a\nb\n" and (root / "two.txt").read_text() == "a\nb\n"


def test_one_line_functions_with_closures_stay_targets_and_every_definition_counts(root, server):
    """Found by the regression pass on the rule above: one-line functions holding a closure or a
    `= {}` default (`func Run() { go func() { work() }() }`, `function opts(o = {}) {..}`) were
    NOT_FOUND (62 of 292 such Go functions), and a name defined twice, once on such a line, was no
    longer AMBIGUOUS: the other definition was edited without a word. Every definition counts for
    AMBIGUOUS and --occurrence; only one whose line holds more than it is refused."""
    go = "package p\n\nfunc (v *V) Logf(m string, a ...interface{}) { v.B.Logf(m, a...) }\n\nfunc Run() { go func() { work() }() }\n"
    (root / "v.go").write_text(go)
    for name, line in (("Logf", 3), ("Run", 5)):
        read = server.ok("be-read", {"file": "v.go", "target": f"function:{name}"})
        assert (read["start"], read["end"]) == (line, line), read
    js = "function opts(o = {}) { return o; }\nfunction cb(a) { a.forEach((i) => { f(i); }); }\n"
    (root / "d.js").write_text(js)
    assert server.ok("be-read", {"file": "d.js", "target": "function:cb"})["start"] == 2
    two = "class A {\n  render(items) { return items.map((i) => { return i * 2; }); }\n}\nclass B {\n  render(items) {\n    return items;\n  }\n}\n"
    (root / "two.js").write_text(two)
    error = server.err(
        "be-replace", "AMBIGUOUS", {"file": "two.js", "target": "function:render", "content": "  render() {}"}
    )
    assert "(lines 2, 5-7)" in error["message"], error
    server.ok(
        "be-replace",
        {
            "file": "two.js",
            "target": {"kind": "function", "value": "render", "occurrence": 1},
            "content": "  render() {}",
        },
    )
    assert (root / "two.js").read_text() == two.replace(
        "  render(items) { return items.map((i) => { return i * 2; }); }", "  render() {}"
    )


def test_content_at_its_whole_indentation_or_after_a_multi_line_old_is_not_taken_for_relative(root, server):
    """Found by the regression pass on the relative-indentation refusal: it refused correct edits,
    80 of 3,136 replays of this repository's history: an `old` running out of its block
    (`said = 1` / `else:` / `said = 2`), content sent at its whole indentation as the hint asks,
    and a string or brackets whose lines stand at column 0."""
    source = "def f(x):\n    if x:\n        said = 1\n    else:\n        said = 2\n    return said\n"
    (root / "e.py").write_text(source)
    old, content = "said = 1\n    else:\n        said = 2", "said = 10\n    else:\n        said = 20"
    server.ok("be-replace", {"file": "e.py", "old": old, "content": content})
    assert (root / "e.py").read_text() == source.replace(old, content)
    server.ok(
        "be-replace",
        {"file": "e.py", "old": "return said", "content": "    return said\n\n\ndef g():\n    return 2"},
    )
    assert (root / "e.py").read_text().endswith("    return said\n\n\ndef g():\n    return 2\n")
    (root / "s.py").write_text('def f():\n    sql = "SELECT 1"\n    return sql\n')
    server.ok(
        "be-replace", {"file": "s.py", "old": 'sql = "SELECT 1"', "content": 'sql = """\nSELECT 1\n"""'}
    )
    server.ok("be-replace", {"file": "s.py", "old": "return sql", "content": "return run(\nsql)"})
    assert (root / "s.py").read_text() == 'def f():\n    sql = """\nSELECT 1\n"""\n    return run(\nsql)\n'


def test_diff_fixtures_docstring_fences_heredocs_and_copy_rows_are_not_taken_for_wrapping(root, server):
    """Found by the regression pass on the wrapped-content refusal: a diff edited inside a test's
    diff fixture (by replace and by patch), a fenced example indented in a docstring, a Markdown
    fence in a shell here-document and a pg_dump COPY block of numbered rows were refused."""
    fixture = 'PATCH = """\\\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\n"""\n'
    (root / "test_fix.py").write_text(fixture)
    server.ok(
        "be-replace", {"file": "test_fix.py", "start": 5, "end": 7, "content": "-x = 1\n+x = 11\n y = 2"}
    )
    patch = "--- a/test_fix.py\n+++ b/test_fix.py\n@@ -5,3 +5,3 @@\n -x = 1\n-+x = 11\n++x = 12\n  y = 2\n"
    server.ok("be-edit", {"patch": patch})
    assert "+x = 12\n" in (root / "test_fix.py").read_text()
    (root / "d.py").write_text('def add(a, b):\n    """Add.\n\n    Example:\n    """\n    return a + b\n')
    server.ok(
        "be-insert",
        {"file": "d.py", "after_line": 4, "content": "    ```python\n    >>> add(1, 2)\n    3\n    ```"},
    )
    (root / "gen.sh").write_text("#!/bin/sh\ncat > README.md <<EOF\n# Tool\nEOF\n")
    server.ok("be-insert", {"file": "gen.sh", "after_line": 3, "content": "```sh\ntool --help\n```"})
    (root / "dump.sql").write_text("COPY public.users (id, name) FROM stdin;\n\\.\n")
    server.ok("be-insert", {"file": "dump.sql", "after_line": 1, "content": "1\talice\n2\tbob\n3\tcarol"})
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    server.err("be-write", "INVALID_ARGUMENT", {"file": "calc.py", "content": "```python\nx = 1\n```\n"})


def test_the_second_regression_pass_on_wrapped_content_and_licences(root, server):
    """Found by the second regression pass: a lone `--- doc` line (Lua, YAML, SQL comments) let a
    diff through as a file's own diff header; a closing fence with a trailing space or indentation
    let a fenced content through; a doc comment that mentions copyright was cut as a licence; and a
    name whose every definition has no lines of its own was AMBIGUOUS, though no occurrence works."""
    context = (
        'FIX = """\n*** a.py\n--- b.py\n***************\n"""\nx = 1\n'  # (the third pass: a context diff)
    )
    (root / "c2.py").write_text(context)
    server.ok("be-replace", {"file": "c2.py", "start": 6, "content": "-x = 1\n+x = 3"})
    (root / "m.lua").write_text("--- Module doc\nlocal M = {}\nfunction M.f()\n  return 1\nend\n")
    server.err(
        "be-replace",
        "INVALID_ARGUMENT",
        {"file": "m.lua", "old": "  return 1", "content": "-  return 1\n+  return 2"},
    )
    (root / "a.py").write_text("def f():\n    return 1\n")
    for closing in ("``` ", "  ```"):
        args = {"file": "a.py", "old": "    return 1", "content": f"```python\n    return 2\n{closing}"}
        server.err("be-replace", "INVALID_ARGUMENT", args)
    js = 'const x = 1;\n\n// Formats the copyright line of the footer.\n// Returns a string.\nfunction fmt(year) {\n  return "(c) " + year;\n}\n'
    (root / "c.js").write_text(js)
    assert server.ok("be-func-range", {"file": "c.js", "line": 6})["start"] == 3
    two = "class A {\n  a (x, cb = () => {}) {\n    return x\n  }\n  b (y, cb = () => {}) {\n    return y\n  }\n}\n"
    (root / "two.js").write_text(two)
    error = server.err("be-delete", "NOT_FOUND", {"file": "two.js", "target": "function:cb"})
    assert "that line holds more" in error["message"], error
    assert (root / "two.js").read_text() == two


def test_a_replace_by_old_giving_an_unterminated_file_a_final_newline_is_the_same_in_an_edit(root, be_env):
    """Found by the second regression pass: `old` the unterminated last line's text, content
    ending in line breaks: alone, the file ends `N\\n`; as a be-edit item it ended `N` (the new
    line break was taken for the final-newline rule's)."""
    for name in ("f.txt", "g.txt"):
        (root / name).write_text("x0\nx3")
    (root / "e.json").write_text(json.dumps([{"file": "f.txt", "old": "x3", "content": "N\n\n"}]))
    assert run_cli("edit", "--edits-file", "e.json", cwd=root, env=be_env).returncode == 0
    assert (
        run_cli("replace", "-f", "g.txt", "--old", "x3", "-c", "N\n\n", cwd=root, env=be_env).returncode == 0
    )
    assert (root / "f.txt").read_bytes() == (root / "g.txt").read_bytes() == b"x0\nN\n"


def test_python_content_whose_relative_reading_is_no_program_is_written_as_given(root, server):
    """Measured by the second regression pass: of the one-line-to-several edits of this repository's
    history (and flask's) that the relative-indentation rule refused, most had a relative reading
    that Python cannot parse (a method added after a `return`): content as given was plainly
    meant. Such content is now written; one whose both readings parse is still refused."""
    (root / "r.py").write_text("class A:\n    def f(self):\n        return 1\n")
    server.ok(
        "be-replace",
        {"file": "r.py", "old": "return 1", "content": "return 1\n\n    def g(self):\n        return 2"},
    )
    assert (
        root / "r.py"
    ).read_text() == "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    (root / "b.py").write_text("def f():\n    if True:\n        x = 1\n    return x\n")
    server.err(
        "be-replace", "INVALID_ARGUMENT", {"file": "b.py", "old": "x = 1", "content": "if x:\n    x = 2"}
    )


def test_a_path_that_kept_a_diffs_prefix_names_the_file_without_it(server, root, be_env):
    """Found by the agent-mistakes probe: `a/src/app.py` (a diff's prefix kept) was NOT_FOUND with
    no `did_you_mean`; it names the file without the prefix now. (`~/notes.md` and `src\\util.js`
    under a root stay names of files there: the contract resolves relative paths against the root,
    and tests/test_workspace_safety.py keeps them legitimate names.)"""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")  # (a diff's `a/` prefix kept: the file without it)
    error = server.err("be-read", "NOT_FOUND", {"file": "a/src/app.py"})
    assert error["did_you_mean"] == ["src/app.py"], error
    # (the regression pass: `a//etc/hostname` named a file outside the root, telling it is there)
    error = server.err("be-read", "NOT_FOUND", {"file": "a//etc/hostname"})
    assert "did_you_mean" not in error and "/etc" not in error["hint"], error


def test_another_tools_edit_format_or_half_a_fence_is_not_written_into_code(server, root):
    """Found by the agent-mistakes probe: an aider SEARCH/REPLACE block (or a merge conflict) sent
    as content was written with its markers, and content ending in a fence's closing line alone
    with that line, status ok. Each is INVALID_ARGUMENT now, in a file holding no such lines;
    force writes them."""
    (root / "m.py").write_text("def f():\n    return 1\n")
    block = "<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE"
    error = server.err("be-replace", "INVALID_ARGUMENT", {"file": "m.py", "start": 2, "content": block})
    assert "markers of a SEARCH/REPLACE block" in error["message"] and "as old" in error["hint"], error
    args = {"file": "m.py", "start": 2, "content": "    return 2\n```"}
    error = server.err("be-replace", "INVALID_ARGUMENT", args)
    assert "the closing line of a Markdown fence whose opening line is not there" in error["message"], error
    assert (root / "m.py").read_text() == "def f():\n    return 1\n"
    server.ok("be-replace", dict(args, force=True))
    assert (root / "m.py").read_text() == "def f():\n    return 2\n```\n"
    server.ok("be-replace", {"file": "m.py", "start": 3, "content": "    x = '======='"})  # (no block)
    fixture = "cat >expect <<EOF\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\nEOF\n"
    server.ok("be-write", {"file": "t.sh", "content": fixture})  # (a shell test writes a conflict)


@pytest.mark.parametrize(
    "name, source, target, body",
    [
        ("t.py", "class C:\n    def add(self, a, b):\n        return a + b\n\n    def sub(self, a, b):\n        return a - b\n", "function:add", "        return a + b + 0"),
        ("g.js", "function greet(name) {\n  return name;\n}\n", "function:greet", '  return "hi " + name;'),
        ("c.go", "package p\n\nfunc (c *Cart) Total() int {\n\treturn len(c.items)\n}\n", "function:Cart.Total", "\treturn 0"),
    ],
)  # fmt: skip
def test_a_body_sent_for_a_whole_function_target_is_refused(server, root, name, source, target, body):
    """Found by the agent-mistakes probe: replace by `function:add` with the body alone deleted
    the definition line (`def add`, `function greet(name) {` and its `}`), status ok, balance ok.
    Content indented deeper than the function's first line is INVALID_ARGUMENT; force writes it."""
    (root / name).write_text(source)
    args = {"file": name, "target": target, "content": body}
    error = server.err("be-replace", "INVALID_ARGUMENT", args)
    assert "it would replace the whole function with a body" in error["message"], error
    assert (root / name).read_text() == source
    server.ok("be-replace", dict(args, force=True))
    assert body in (root / name).read_text()
    # (the regression pass: a comment at column 0 above a method starts its range; the whole
    # method sent is measured against its definition line, not against that comment)
    (root / "b.js").write_text("class A {\n  x = 1;\n\n// TODO: remove\n  foo() {\n    return 1;\n  }\n}\n")
    server.ok(
        "be-replace",
        {"file": "b.js", "target": "function:A.foo", "content": "  foo() {\n    return 10;\n  }"},
    )
    assert (root / "b.js").read_text() == "class A {\n  x = 1;\n\n  foo() {\n    return 10;\n  }\n}\n"


def test_lines_replaced_by_one_line_holding_an_escaped_newline_are_warned_of(server, root):
    """Found by the agent-mistakes probe: two lines replaced by one line holding one `\\n` outside
    strings (`def add(...):\\n    return ...` escaped twice) were written with no warning: the
    warning wanted two pieces with a letter after `\\n`. Several lines made one say why now."""
    (root / "t.py").write_text("class C:\n    def add(self, a, b):\n        return a + b\n")
    content = "    def add(self, a, b):\\n        return a + b + 0"
    result = server.ok("be-replace", {"file": "t.py", "start": 2, "end": 3, "content": content})
    assert any("escaped twice" in warning for warning in result["warnings"]), result["warnings"]
    result = server.ok("be-replace", {"file": "t.py", "start": 2, "content": '    x = "a\\nb"'})
    assert not any("escaped twice" in warning for warning in result.get("warnings", ())), result
