"""The quick check of a balanced file (docs/behaviour.md#balance-speed).

check_balance() without `verbose` first tries the quick check: the regex engine finds strings and
comments, C string operations pair the brackets between them. Its answer must always be the exact
scan's answer; `verbose` (pairs wanted) always runs the exact scan, so it is the oracle here.
"""

import os

import pytest
from harness import scaled
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import better_edit as be

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
EXAMPLES = scaled(100, 3000)

BASES = []
for name in sorted(os.listdir(CORPUS)):
    with open(os.path.join(CORPUS, name), encoding="utf-8", errors="surrogateescape", newline="") as handle:
        text = handle.read()
    language = be.detect_language(name, text[:200])
    if language in be.LANGUAGES:
        BASES.append((name, language, text))

PIECES = ["", "{", "}", "(", ")", "[", "]", "'", '"', "`", "${", "}`", "/*", "*/", "//", "#", "\n", '"""']
PIECES += ["<<EOF\n", "EOF\n", "case x in\n a) ;;\nesac\n", "r = /[)]/g;\n", "<script>", "</script>"]
# template literals: no substitution, plain ones, ones with strings, and ones the quick check
# hands to the exact scan (brackets, a nested template, a division, four substitutions)
PIECES += ["`a ${b} c`", "`${a}${b}${c}`", "`${'}'}`", '`${"x"+y}`', "`${f(x)}`", "`${`${x}`}`", "`${a/b}`"]
PIECES += ["`${a}${b}${c}${d}`", "`x${ {a:1}.a }`", "`${ it's }`", "`\\${x}`", '`${"\n"}`']


def exact(text, language):
    result = be.check_balance(text, language, verbose=True)
    result.pop("pairs", None)
    return result


def edited(draw, bases, span, most):
    """(language, text): a file of `bases` with up to 3 spans of at most `span` characters each
    replaced by up to `most` PIECES."""
    name, language, text = draw(st.sampled_from(bases))
    for _ in range(draw(st.integers(0, 3))):
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + span)))
        text = text[:a] + "".join(draw(st.lists(st.sampled_from(PIECES), max_size=most))) + text[b:]
    return language, text


@st.composite
def texts(draw):
    return edited(draw, BASES, 200, 4)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=texts(), flush=st.sampled_from([2, 4096]))
def test_the_quick_check_answers_as_the_exact_scan(case, flush, monkeypatch):
    language, text = case
    monkeypatch.setattr(be, "_QUICK_FLUSH", flush)  # (2: pieces are joined many times)
    assert be.check_balance(text, language) == exact(text, language)


MARKUP = {lang.id for lang in be.LANGUAGE_TABLE if lang.ranges == "markup"}
CODE_FILES = [  # (markup and Markdown: only their embedded bodies take the quick check)
    b for b in BASES if ".broken." not in b[0] and b[1] not in MARKUP and b[1] != "markdown"
]


@pytest.mark.parametrize("name,language,text", CODE_FILES, ids=[b[0] for b in CODE_FILES])
def test_balanced_corpus_files_take_the_quick_check(name, language, text):
    quick = be._quick_balance(text, language, 0, len(text))
    if be._quick_spec(language) is None or "esac" in text:  # (a shell `case` pushes: exact scan)
        assert quick is None
    else:
        assert quick == ([], exact(text, language)["counts"]), name


def test_languages_whose_tokens_start_with_a_bracket_take_no_quick_check():
    assert be._quick_spec("lua") is None  # `[[long strings]]`
    assert be._quick_spec("haskell") is None  # `{- comments -}`
    assert be._quick_spec("javascript") is not None
    assert be._quick_spec("python") is not None


@pytest.mark.parametrize(
    "text,counts",
    [
        ("const a = `x ${y} z ${'}'} w`;\n", {"{": 2, "}": 2}),  # two plain substitutions: one token
        ('f(`${a["k"]}`);\n', {"(": 1, ")": 1, "{": 1, "}": 1, "[": 1, "]": 1}),  # exact inside
        ("g(`${`${x}`}`);\n", {"(": 1, ")": 1, "{": 2, "}": 2}),  # a nested template: exact inside
    ],
)
def test_template_substitutions_are_counted(text, counts):
    assert be._quick_balance(text, "javascript", 0, len(text)) == ([], counts)
    assert exact(text, "javascript") == {"status": "balanced", "unmatched": [], "counts": counts}


def test_problems_and_deep_nesting_go_to_the_exact_scan():
    assert be._quick_balance("f(a];\n", "javascript", 0, 6) is None
    assert be._quick_balance("s = 'open\n", "javascript", 0, 10) is None
    assert be._quick_balance("case x in\n a) ;;\nesac\n", "shell", 0, 22) is None  # `case` pushes
    deep = "(" * (be._QUICK_PASSES + 1) + ")" * (be._QUICK_PASSES + 1) + "\n"
    assert be._quick_balance(deep, "javascript", 0, len(deep)) is None
    assert be.check_balance(deep, "javascript")["status"] == "balanced"
    shallow = "(" * be._QUICK_PASSES + ")" * be._QUICK_PASSES + "\n"
    assert be._quick_balance(shallow, "javascript", 0, len(shallow)) == ([], {"(": 48, ")": 48})
    broken = "function f() {\n  return `${a(}`;\n}\n"
    assert be.check_balance(broken, "javascript") == exact(broken, "javascript")
    assert be.check_balance(broken, "javascript")["status"] == "unbalanced"


def test_non_ascii_and_lone_surrogates_in_code():
    text = "const é = { 'ü': [1, 2] };\nx = \udcff(1)\n"
    assert be._quick_balance(text, "javascript", 0, len(text)) == ([], exact(text, "javascript")["counts"])


@st.composite
def js_lines(draw):
    name, language, text = draw(
        st.sampled_from([b for b in BASES if b[1] in ("javascript", "typescript", "tsx")])
    )
    for _ in range(draw(st.integers(0, 3))):
        a = draw(st.integers(0, len(text)))
        text = text[:a] + "".join(draw(st.lists(st.sampled_from(PIECES), max_size=4))) + text[a:]
    return language, text, draw(st.integers(1, text.count("\n") + 1))


BRACE_BASES = [b for b in BASES if b[1] in {lang.id for lang in be.LANGUAGE_TABLE if lang.ranges == "brace"}]


@st.composite
def brace_lines(draw):
    language, text = edited(draw, BRACE_BASES, 100, 3)
    return language, text, draw(st.integers(1, text.count("\n") + 1))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=brace_lines(), outer=st.booleans(), every=st.sampled_from([1, 2, 5, 512]))
def test_a_blocks_scan_from_a_restart_point_finds_the_same_function_range(case, outer, every, monkeypatch):
    """func-range scans its blocks from the last join of the quick walk whose depth went down to 0
    before the line (braces open there are placeholders); any question about what lies before
    that point makes it try an earlier one, then the start. The range equals a scan from the start."""
    language, text, line = case
    monkeypatch.setattr(be, "_RESTART_EVERY", every)  # (1: a join per token, many restart points)
    found = be.function_range(text, language, line, outer)
    with monkeypatch.context() as patch:
        patch.setattr(be, "_brace_restarts", lambda *args: [])
        assert be.function_range(text, language, line, outer) == found


@st.composite
def texts_of_definitions(draw):
    """(language, text) of a brace, Python, Ruby or Lua case, for the definitions of every name in it."""
    kind = draw(st.sampled_from(["brace", "python", "keyword"]))
    if kind == "brace":
        return draw(brace_lines())[:2]
    if kind == "python":
        return "python", draw(python_lines())[0]
    return draw(keyword_lines())[:2]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=texts_of_definitions(), every=st.sampled_from([1, 2, 5, 512]))
def test_the_definitions_of_a_name_found_with_one_kept_walk_are_those_found_line_by_line(
    case, every, monkeypatch
):
    """_definition_spans asks function_range about the line of every definition of a name: the
    restart walk of the file is walked whole once and kept for all of them (_restart_walk), not
    walked to each line. The spans equal those a walk to each line gives."""
    language, text = case
    monkeypatch.setattr(be, "_RESTART_EVERY", every)  # (1: a join per token, many restart points)
    names = sorted({name for name, _pos in be._definitions(text, language, 0, len(text))})
    kept = [be._definition_spans(text, language, name, astray=True) for name in names]
    walk = be._quick_walk
    with monkeypatch.context() as patch:
        patch.setattr(
            be,
            "_restart_walk",
            lambda text, quick, start, end, line_start, every=None, joins_at=None: walk(
                text, quick, start, end, line_start, be._RESTART_EVERY if every is None else every, joins_at
            ),
        )
        assert [be._definition_spans(text, language, name, astray=True) for name in names] == kept


def test_func_range_restarts_after_the_functions_before_the_line(monkeypatch):
    monkeypatch.setattr(be, "_RESTART_EVERY", 4)
    text = "".join(
        f"function f{n}(a) {{\n  if (a) {{ g('{{', `${{a}}`); }}\n  return [a];\n}}\n" for n in range(40)
    )
    line = 4 * 30 + 2
    line_start = be.skip_lines(text, 0, line - 1)
    line_end = text.index("\n", line_start)
    restarts = be._brace_restarts(text, "javascript", 0, len(text), line_start)
    assert restarts and restarts[0][0] > len(text) // 2  # far from the start of the file
    want = {"start": 121, "end": 124, "kind": "function", "name": "f30"}
    for restart in restarts:  # each answers from its own point, without reaching back before it
        answer = be._brace_function_range_from(
            text, "javascript", line_start, line_end, False, 0, len(text), restart
        )
        assert be._range_result(text, answer, line_start, line) == want
    assert be.function_range(text, "javascript", line) == want


PYTHON_BASES = [b for b in BASES if b[1] == "python"]
PYTHON_PIECES = ["def f(x):\n", "    def g():\n", "class C:\n", "@deco\n", "    @deco(\n", "x = (\n", ")\n"]
PYTHON_PIECES += [
    '"""\n',
    "'''",
    "# def h():\n",
    "\n\n",
    "    return 1\n",
    "pass\n",
    "  ",
    "(",
    ")",
    "[",
    "]",
]


@st.composite
def python_lines(draw):
    _name, _language, text = draw(st.sampled_from(PYTHON_BASES))
    for _ in range(draw(st.integers(0, 3))):
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + 80)))
        text = text[:a] + "".join(draw(st.lists(st.sampled_from(PYTHON_PIECES), max_size=4))) + text[b:]
    return text, draw(st.integers(1, text.count("\n") + 1))


def _f_string_swallowing_a_docstring():
    """A corpus file where an edit left `return f"{""` before a docstring's closing quotes: the
    f-string handler reads it; Python's spans once skipped the handler and read its inside as code."""
    with open(os.path.join(CORPUS, "latin1_report.py"), encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    a, b = text.index('    return f"{'), text.index('"""Le tableau final')
    return text[:a] + '    return f"{""' + text[b + 3 :], 49


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=python_lines(),
    outer=st.booleans(),
    every=st.sampled_from([1, 3, 512]),
    fine=st.sampled_from([1, 2, 16]),
    ahead=st.sampled_from([1, 40, 65536]),
)
@example(case=_f_string_swallowing_a_docstring(), outer=False, every=1, fine=1, ahead=1)
def test_a_python_range_read_from_a_restart_point_is_the_one_read_from_the_start(
    case, outer, every, fine, ahead, monkeypatch
):
    """Python func-range reads spans and definitions from the last point before the line where the
    quick walk has nothing open, to _LOOKAHEADS past the line; when a definition could start
    before that point, or the one asked for does not end before the part read does, it reads more.
    The range equals a read of the whole text."""
    text, line = case
    monkeypatch.setattr(be, "_RESTART_EVERY", every)  # (1: a join per token, many restart points)
    monkeypatch.setattr(be, "_RESTART_FINE", fine)  # (the second walk's joins, from the latest one)
    monkeypatch.setattr(be, "_LOOKAHEADS", (ahead,))  # (1: every function ends past the part read first)
    found = be.function_range(text, "python", line, outer)
    with monkeypatch.context() as patch:
        patch.setattr(be, "_python_restarts", lambda *args: [])
        patch.setattr(be, "_LOOKAHEADS", (1 << 40,))
        assert be.function_range(text, "python", line, outer) == found


def test_a_python_range_in_the_middle_of_a_file_is_read_from_a_restart_point(monkeypatch):
    monkeypatch.setattr(be, "_RESTART_EVERY", 4)
    one = "@deco\ndef f{n}(a):\n    s = '''\ndef not_{n}():\n'''\n    return (a,\n  1)\n\n"
    text = "".join(one.format(n=n) for n in range(60))
    line = 8 * 40 + 4  # (the `def not_40():` line inside f40's string)
    line_start = be.skip_lines(text, 0, line - 1)
    restarts = be._python_restarts(text, 0, len(text), line_start)
    assert restarts and restarts[0] > len(text) // 2  # far from the start of the file
    want = {"start": 321, "end": 327, "kind": "function", "name": "f40"}
    assert be.function_range(text, "python", line) == want
    assert be.function_range(text, "python", line - 2) == want  # (the def line)
    with monkeypatch.context() as patch:
        patch.setattr(be, "_python_restarts", lambda *args: [])
        assert be.function_range(text, "python", line) == want


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=js_lines(), outer=st.booleans())
def test_plain_template_tokens_change_no_function_range(case, outer, monkeypatch):
    """A blocks-only scan reads a plain template literal as one token (no `${` pair): every
    function range is the one found when each `${` is scanned as before."""
    language, text, line = case
    fast = be.function_range(text, language, line, outer)
    with monkeypatch.context() as patch:
        patch.setattr(be, "_PLAIN_TEMPLATES", {})
        patch.setattr(be, "_SPEC_CACHE", {})
        patch.setattr(be, "_QUICK_CACHE", {})
        assert be.function_range(text, language, line, outer) == fast


@pytest.mark.parametrize(
    "template, counted, braces",
    [
        ("`a ${b} ${'}'}`", True, True),  # strings and plain code: one token for every walk
        ("`${f(a[i])}`", False, True),  # brackets: counted by the quick check, inert for blocks
        ("`${a/b}`", False, False),  # a slash may start a comment or a regex: never plain
        ("`${ {a:1} }`", False, False),  # a brace inside: scanned from `${` on
    ],
)
def test_a_plain_template_may_hold_the_brackets_a_walk_does_not_count(template, counted, braces):
    """The quick check counts every bracket, so a substitution holding ( or [ is scanned exactly;
    where only braces count (where function_range may restart, and its blocks scan) it is one
    token, as common code such as `${f(a[i])}` is."""
    for spec, plain in (
        (be._token_spec("javascript", ""), counted),
        (be._token_spec("javascript", "", "{}"), braces),
        (be._token_spec("javascript", "{}"), braces),
    ):
        m = spec.regex.match(template)
        whole = m is not None and m.end() == len(template)
        assert (whole and spec.roles[m.lastindex] == "template") == plain, spec


def test_a_closer_left_unpaired_ends_the_quick_check_at_once():
    delete = be._quick_spec("javascript").delete
    totals = {symbol: 0 for symbol in "([{)]}"}
    assert be._quick_pair(b"", ["f(a[1]", "{"], delete, totals) == (b"({", 0)  # open so far
    assert be._quick_pair(b"({", ["}]"], delete, totals) is None  # `]` can never pair with `(`
    assert be._quick_pair(b"", ["x = 1)"], delete, totals) is None  # nothing open: unexpected
    assert totals == {"(": 1, "[": 1, "{": 1, ")": 1, "]": 2, "}": 1}


def test_too_many_brackets_open_at_once_go_to_the_exact_scan():
    """Each join rescans the brackets still open: past _QUICK_OPEN of them the quick check gives
    up, so a file that opens and never closes (an attack on its time) costs it linear time."""
    delete = be._quick_spec("javascript").delete
    totals = {symbol: 0 for symbol in "([{)]}"}
    assert be._quick_pair(b"(" * be._QUICK_OPEN, [""], delete, totals) == (
        b"(" * be._QUICK_OPEN,
        be._QUICK_OPEN,
    )
    assert be._quick_pair(b"(" * be._QUICK_OPEN, ["["], delete, totals) is None
    text = '(\n"s"\n' * (be._QUICK_OPEN + 10) + ")\n" * (be._QUICK_OPEN + 10)
    assert be._quick_balance(text, "javascript", 0, len(text)) is None
    assert be.check_balance(text, "javascript") == exact(text, "javascript")


@pytest.mark.parametrize("flush", [1, 3, 4096])
def test_openers_left_open_are_located_by_scanning_only_where_they_were_opened(flush, monkeypatch):
    """Only openers left open (a closer forgotten): the quick check answers with their places, found
    by scanning exactly the join of pieces each was opened in, as the exact scan reports them."""
    monkeypatch.setattr(be, "_QUICK_FLUSH", flush)
    text = (
        "function f(a) {\n  if (a) {\n    g('}', [1, 2]);\n\n"  # `{` of f and of the if left open
        + "".join(f"function h{n}() {{ return [{n}, `${{n}}`]; }}\n" for n in range(30))
        + "const x = [1, (2, 3\n"  # `[` and `(` left open
        + "".join(f"// {n}\ny('{n}');\n" for n in range(30))
    )
    want = exact(text, "javascript")
    assert want["status"] == "unbalanced" and len(want["unmatched"]) == 4
    quick = be._quick_balance(text, "javascript", 0, len(text))
    assert quick is not None, "the quick check should answer"
    assert be.check_balance(text, "javascript") == want
    places = [  # (the quick answer's offsets as check_balance reports places: line, column)
        {
            "symbol": symbol,
            "line": text.count("\n", 0, at) + 1,
            "column": at - text.rfind("\n", 0, at),
            "problem": problem,
        }
        for at, symbol, problem in sorted(quick[0])
    ]
    assert places == want["unmatched"]


KEYWORD_PIECES = {
    "ruby": [
        "module M\n", "class C < B\n", "  def f(a)\n", "    x = 1\n", "  end\n", "end\n", "def g; end\n",
        "\tdef t\n", "\tend\n", "    def h\n", "    end\n", "  private def p\n", "# def c\n", "=begin\ndef d\n=end\n",
        "  s = <<~RUBY\n    def in_string\n    end\nend\n  RUBY\n", "class_eval <<-RUBY\ndef e\nend\n  RUBY\n",
        'puts "end"\n', "\n", "  x = [1,\n  2]\n", 's = "a #{b(\n"end")}\nend"\n', "f(<<A, <<B) # x\nA\nend\nB\n",
        "w = %w[\n  end\n]\n", "x = 2 / 3 # end\n", "r = /\nend/\n", "R = /\n  (['\"]?) # q\n/x\n",
        "h = 7 /\n  2\n",
    ],
    "lua": [
        "function f(a)\n", "local function g()\n", "  function M.h()\n", "  return 1\n", "  end\n", "end\n",
        "M.k = function(x)\n", "--[[ function c()\nend ]]\n", "s = [[\nfunction in_string()\nend\n]]\n",
        "-- end\n", "\n", "  local t = {\n  }\n",
    ],
}  # fmt: skip


@st.composite
def keyword_lines(draw):
    language = draw(st.sampled_from(sorted(KEYWORD_PIECES)))
    text = "".join(draw(st.lists(st.sampled_from(KEYWORD_PIECES[language]), min_size=1, max_size=40)))
    return language, text, draw(st.integers(1, text.count("\n") + 1))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=keyword_lines(),
    outer=st.booleans(),
    window=st.sampled_from([1, 20, 100]),
    every=st.sampled_from([1, 3, 512]),
    ahead=st.sampled_from([1, 40, 65536]),
)
@example(case=("ruby", "module M\ndef g; end\n\nend\n", 3), outer=False, window=1, every=1, ahead=1)
@example(case=("ruby", "\tdef t\nmodule M\n\tend\n", 2), outer=False, window=1, every=1, ahead=1)
@example(  # (a restart at the `/` of a regex read it as a division: its `'` opened a string)
    case=("ruby", "a = \"1\"\nR = /\n  (['\"]?) # q\n/x\ndef b\n  y = '1'\nend\n", 5),
    outer=False,
    window=1,
    every=1,
    ahead=1,
)
@example(  # (a chain not at indentation 0 from a restart: the definitions before the restart are
    # looked at, _keys_before, which no run of the suite reached: found by the coverage audit)
    case=("ruby", "x = 1\nclass C\n'a'\n'b'\n  def f(a)\n    x = 1\n  end\nend\n", 6),
    outer=True,
    window=1,
    every=1,
    ahead=1,
)
def test_a_ruby_or_lua_range_read_from_the_definitions_before_the_line_is_the_one_read_from_all(
    case, outer, window, every, ahead, monkeypatch
):
    """Ruby and Lua func-range read the definitions of a part before the line that grows until the
    outermost one around the line is at indentation 0, and the walk up passes over definitions
    that a later one with the same indentation rules out. Ruby reads its strings and comments
    first from a point of the quick walk before the line where nothing is open, to _LOOKAHEADS
    past the line. The range equals a walk over every definition of the text that looks at each."""
    language, text, line = case
    monkeypatch.setattr(be, "_KEYWORD_WINDOW", window)
    monkeypatch.setattr(be, "_RESTART_EVERY", every)  # (1: a join per token, many restart points)
    monkeypatch.setattr(be, "_LOOKAHEADS", (ahead,))  # (1: every definition ends past the part read first)
    found = be.function_range(text, language, line, outer)
    original = be._indented_chain
    with monkeypatch.context() as patch:
        patch.setattr(be, "_KEYWORD_WINDOW", 1 << 40)
        patch.setattr(be, "_walk_restarts", lambda *args: [])
        patch.setattr(be, "_indented_chain", lambda defs, a, b, extent, *_keys: original(defs, a, b, extent))
        assert be.function_range(text, language, line, outer) == found
