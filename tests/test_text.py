"""The text model (docs/behaviour.md#text-model, docs/behaviour.md#diffs): pure functions, examples and hypothesis properties."""

import pytest
from harness import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

import better_edit as be

# --- strategies -------------------------------------------------------------------------------------

line_text = st.text(
    alphabet=st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), max_size=12
)
terminator = st.sampled_from(["\n", "\r\n"])


@st.composite
def files(draw):
    """(lines as (text, eol) pairs, final newline?) -> a file body as str."""
    texts = draw(st.lists(line_text, max_size=12))
    eols = [draw(terminator) for _ in texts]
    if texts and not draw(st.booleans()):
        eols[-1] = ""
    return "".join(t + e for t, e in zip(texts, eols))


encodings = st.sampled_from(["utf-8", "utf-8-bom", "utf-16le", "utf-16be"])
BOMS = {"utf-8": b"", "utf-8-bom": b"\xef\xbb\xbf", "utf-16le": b"\xff\xfe", "utf-16be": b"\xfe\xff"}
CODECS = {"utf-8": "utf-8", "utf-8-bom": "utf-8", "utf-16le": "utf-16-le", "utf-16be": "utf-16-be"}


def raw_of(string, encoding):
    return BOMS[encoding] + string.encode(CODECS[encoding])


def replace_lines(text, start, end, content):
    """The pure core of replace-by-lines, as the handler does it."""
    body = text.body
    a, b = be.line_span(body, start, end)
    eol = be.dominant_eol(body)
    return be.join_splice(
        body, be.splice_plan(body, a, b, be.encode_block(text, be.content_lines(content), eol), eol)
    )


def insert_after(text, after, content):
    body = text.body
    a = be.skip_lines(body, 0, after)
    eol = be.dominant_eol(body)
    return be.join_splice(
        body, be.splice_plan(body, a, a, be.encode_block(text, be.content_lines(content), eol), eol)
    )


def lines_with_ends(body):
    return [t + e for t, e in be.split_decoded(body.decode("utf-8"))]


# --- examples ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, count", [(b"", 0), (b"\n", 1), (b"a\nb", 2), (b"a\nb\n", 2), (b"a\r\nb\r\n", 2), (b"a\rb\n", 1)]
)
def test_line_count(body, count):
    assert be.line_count(body) == count


@pytest.mark.parametrize(
    "content, lines",
    [("", []), ("x", ["x"]), ("x\n", ["x"]), ("x\n\n", ["x", ""]), ("\n", [""]), ("a\r\nb", ["a", "b"]),
     ("\ta  \n\n b", ["\ta  ", "", " b"]), ("a\rb", ["a\rb"])],
)  # fmt: skip
def test_content_to_lines(content, lines):
    assert be.content_lines(content) == lines


def test_eol_detection():
    assert be.eol_name(*be.eol_counts(b"a\nb\n")) == "lf"
    assert be.eol_name(*be.eol_counts(b"a\r\nb\r\n")) == "crlf"
    assert be.eol_name(*be.eol_counts(b"a\r\nb\n")) == "mixed"
    assert be.dominant_eol(b"a\r\nb\r\nc\n") == b"\r\n"
    assert be.dominant_eol(b"a\r\nb\n") == b"\n"  # a tie -> LF
    assert be.dominant_eol(b"abc") == b"\n"


def test_final_newline_rules():
    text = be.Text(b"a\nb")
    assert replace_lines(text, 2, 2, "B") == b"a\nB"
    assert (
        be.join_splice(b"a\nb", be.splice_plan(b"a\nb", 2, 3, b"", b"\n")) == b"a"
    )  # deleting the last line of a\nb
    assert insert_after(text, 2, "c") == b"a\nb\nc"
    assert insert_after(be.Text(b""), 0, "first") == b"first\n"
    assert insert_after(be.Text(b"a\n"), 1, "b") == b"a\nb\n"
    assert replace_lines(be.Text(b"a\r\nb\r\n"), 1, 1, "x\ny\n") == b"x\r\ny\r\nb\r\n"


def test_decode_detects_encodings():
    assert be.decode_file(b"abc", "f").encoding == "utf-8"
    text = be.decode_file(b"\xef\xbb\xbfabc\n", "f")
    assert (text.encoding, text.bom, text.body) == ("utf-8-bom", b"\xef\xbb\xbf", b"abc\n")
    text = be.decode_file(b"\xff\xfe" + "héllo\n".encode("utf-16-le"), "f")
    assert text.encoding == "utf-16le" and text.body == "héllo\n".encode()
    assert text.to_bytes() == b"\xff\xfe" + "héllo\n".encode("utf-16-le")
    text = be.decode_file(b"\xfe\xff" + "x\n".encode("utf-16-be"), "f")
    assert text.encoding == "utf-16be"


def test_binary_and_bad_utf8_are_refused():
    with pytest.raises(be.ToolError) as err:
        be.decode_file(b"abc\0def", "f")
    assert err.value.code == "BINARY_FILE"
    with pytest.raises(be.ToolError) as err:
        be.decode_file("中文".encode("gbk"), "f")
    assert err.value.code == "ENCODING" and "offset 0" in err.value.to_dict("en")["message"]


def test_utf8_cut_at_sniff_end_is_not_binary():
    raw = b"a" * (be.BINARY_SNIFF_BYTES - 1) + "é".encode() + b"\n"
    assert be.decode_file(raw, "f").encoding == "utf-8"


def test_declared_legacy_encoding_round_trips():
    raw = "第一行\n第二行\n".encode("gbk")
    text = be.decode_file(raw, "f", "gbk")
    assert text.codec == "gbk" and text.to_bytes() == raw
    new = replace_lines(text, 2, 2, "新的")
    assert new.decode("gbk") == "第一行\n新的\n"


def test_encoding_that_does_not_round_trip_is_refused():
    with pytest.raises(be.ToolError) as err:
        be.decode_file(b"\x81\n", "f", "gbk")  # a lone lead byte
    assert err.value.code == "ENCODING"
    with pytest.raises(be.ToolError) as err:
        be.decode_file(b"abc", "f", "no-such-codec")
    assert err.value.code == "ENCODING"


def test_content_the_codec_cannot_encode():
    text = be.decode_file(b"abc\n", "f", "latin-1")
    with pytest.raises(be.ToolError) as err:
        replace_lines(text, 1, 1, "中")
    assert err.value.code == "ENCODING"


def test_locate_old_tiers():
    norm = "def f():\n    return 1   \n\nx = f()\n"
    assert be.locate_old(norm, "return 1") == ("exact", [(2, 4, 2, 12)])
    tier, spans = be.locate_old(norm, "    return 1\n\nx = f()")
    assert tier == "loose" and spans == [(2, 0, 4, None)]  # to the end of line 4's text
    assert be.locate_old("a\na\n", "a")[1] == [(1, 0, 1, 1), (2, 0, 2, 1)]
    assert be.locate_old(norm, "  return 1\n") == ("loose", [(2, 2, 2, -1)])
    tier, spans = be.locate_old(norm, "return 2")
    assert spans == []


def test_indentation_is_never_forgiven():
    assert be.locate_old("    x = 1\n", "x = 1\n")[1] == [(1, 4, 1, -1)]  # partial-line match, exact
    assert be.locate_old("    x = 1\n", "  y = 1")[1] == []


def test_unified_hunk_format():
    old = [("a", "\n"), ("b", "\n"), ("c", "\n")]
    new = [("a", "\n"), ("B", "\n"), ("c", "\n")]
    assert be.unified_hunk("f", old, new, 10) == "--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n a\n-b\n+B\n c"
    assert be.unified_hunk("f", [("a", "\n")], [("a", "\n"), ("b", "\n")], 1).endswith(
        "@@ -1 +1,2 @@\n a\n+b"
    )
    diff = be.unified_hunk("f", [("a", "")], [("a", "\n"), ("b", "")], 1)
    assert "-a\n\\ No newline at end of file\n+a\n+b\n\\ No newline at end of file" in diff


def test_view_id_round_trip():
    token = be.make_view_id("/x", 3, 5, b"abc", 9)
    assert be.parse_view_id(token)[:2] == (3, 5)
    for bad in ("", "v2:1-2:0123456789abcdef", "v1:0-2:0123456789abcdef", "v1:1-2:xyz"):
        with pytest.raises(be.ToolError):
            be.parse_view_id(bad)


def test_double_escape_rescue_rules():
    assert be.looks_double_escaped("a\\nb\\nc")
    assert not be.looks_double_escaped("a\\nb")  # only one
    assert not be.looks_double_escaped("a\nb\\nc\\n")  # has a real newline
    # found by an attack: the escapes of minified JSON or code are inside its strings, not line breaks
    assert not be.looks_double_escaped('{"greeting":"hello\\nworld","sig":"a\\tb\\nc"}')
    assert not be.looks_double_escaped("var s='a\\nb';var t=\"c\\nd\";")
    assert be.looks_double_escaped('def f():\\n    return "x\\n"\\n')  # (one inside, two outside)
    assert be.looks_double_escaped('a\\nb \\"q\\n\\"')  # (an escaped quote opens no string)
    assert be.unescape_content('x\\n\\t"q\\"\\\\\\d') == 'x\n\t"q"\\\\d'


# --- properties -------------------------------------------------------------------------------------


@settings(max_examples=scaled(100, 300), deadline=None)
@given(files(), encodings, st.data())
def test_untouched_lines_keep_their_bytes(string, encoding, data):
    text = be.decode_file(raw_of(string, encoding), "f")
    before = lines_with_ends(text.body)
    total = len(before)
    if total == 0:
        return
    start = data.draw(st.integers(1, total))
    end = data.draw(st.integers(start, total))
    content = data.draw(st.text(alphabet="ab \t\n\r", max_size=10))
    new_body = replace_lines(text, start, end, content)
    after = lines_with_ends(new_body)
    added = len(be.content_lines(content))
    if end == total and not added and start > 1 and not before[-1].endswith("\n"):
        # deleting the last lines of a file without final newline: the new last line loses its terminator
        assert after[: start - 2] == before[: start - 2]
        kept = before[start - 2].rstrip("\r\n")
        # an empty line keeps its terminator: without it, it would not exist (docs/behaviour.md#text-model)
        assert after[start - 2 :] == ([kept] if kept else [before[start - 2]])
    else:
        assert after[: start - 1] == before[: start - 1]
    tail = before[end:]
    if tail:
        assert after[len(after) - len(tail) :] == tail


@settings(max_examples=scaled(100, 300), deadline=None)
@given(files(), encodings, st.data())
def test_encoding_bom_eol_and_final_newline_survive(string, encoding, data):
    raw = raw_of(string, encoding)
    text = be.decode_file(raw, "f")
    total = be.line_count(text.body)
    after = data.draw(st.integers(0, total))
    content = data.draw(st.text(alphabet="xy\n", min_size=1, max_size=8))
    new_raw = text.to_bytes(insert_after(text, after, content))
    again = be.decode_file(new_raw, "f")
    assert again.encoding == text.encoding and again.bom == text.bom
    ends_open = bool(text.body) and not text.body.endswith(b"\n")
    if after == total and be.content_lines(content)[-1] == "":
        ends_open = False  # an empty new last line keeps its terminator (it would vanish otherwise)
    assert (bool(again.body) and not again.body.endswith(b"\n")) == ends_open
    if be.eol_name(*be.eol_counts(text.body)) != "mixed" and b"\n" in text.body:
        assert be.eol_name(*be.eol_counts(again.body)) == be.eol_name(*be.eol_counts(text.body))


@settings(max_examples=scaled(100, 200), deadline=None)
@given(files(), encodings, st.data())
def test_edit_then_restore_gives_the_original_bytes(string, encoding, data):
    raw = raw_of(string, encoding)
    text = be.decode_file(raw, "f")
    total = be.line_count(text.body)
    if total == 0:
        return
    start = data.draw(st.integers(1, total))
    new_raw = text.to_bytes(replace_lines(text, start, start, "changed"))
    snapshot = raw  # what the store keeps: the raw bytes before
    assert be.decode_file(new_raw, "f").encoding == text.encoding
    assert snapshot == raw_of(string, encoding)


@settings(max_examples=scaled(100, 200), deadline=None)
@given(st.binary(max_size=64), st.sampled_from([None, "utf-8", "latin-1", "gbk", "cp1252", "shift_jis"]))
def test_decode_never_raises_anything_but_tool_errors(raw, encoding):
    try:
        text = be.decode_file(raw, "f", encoding)
    except be.ToolError as exc:
        assert exc.code in ("BINARY_FILE", "ENCODING")
    else:
        assert text.to_bytes() == raw  # whatever is accepted round-trips exactly


@settings(max_examples=scaled(100, 200), deadline=None)
@given(st.text(max_size=40), st.text(min_size=1, max_size=6))
def test_locate_old_spans_point_at_the_match(haystack, needle):
    norm = be.normalize_newlines(haystack)
    tier, spans = be.locate_old(norm, needle)
    if tier == "exact":
        for line_s, col_s, _line_e, _col_e in spans:
            offset = sum(len(line) + 1 for line in norm.split("\n")[: line_s - 1]) + col_s
            assert norm[offset:].startswith(be.normalize_newlines(needle))


@settings(max_examples=scaled(100, 200), deadline=None)
@given(
    lines=st.lists(st.integers(0, 300), min_size=0, max_size=400),
    pos_fraction=st.floats(0, 1),
    count=st.integers(0, 500),
    chunk_lines=st.booleans(),
)
def test_skip_lines_finds_the_nth_newline(lines, pos_fraction, count, chunk_lines):
    """skip_lines narrows windows with counts before it walks newline by newline: it must land
    just past the count-th newline at or after pos, whatever the line lengths."""
    body = b"".join(b"x" * n + b"\n" for n in lines) + (b"tail" if chunk_lines else b"")
    pos = int(len(body) * pos_fraction)
    newlines = [i + 1 for i, byte in enumerate(body) if byte == 10 and i >= pos]
    want = newlines[count - 1] if 0 < count <= len(newlines) else (pos if count == 0 else len(body))
    assert be.skip_lines(body, pos, count) == want


@settings(max_examples=scaled(15, 100), deadline=None)  # (each example builds a 1 MiB body)
@given(
    lines=st.lists(st.integers(0, 4000), min_size=300, max_size=700),
    wanted=st.lists(st.integers(1, 800), min_size=1, max_size=20),
)
def test_line_start_of_a_large_body_equals_counting_from_the_start(lines, wanted):
    """line_start indexes bodies of 1 MiB or more by windows of newline counts: every line start
    must be the one counting newlines from the first byte gives, the first lookup and later ones."""
    body = b"".join(b"y" * n + b"\n" for n in lines)
    body += b"z" * max(0, (1 << 20) - len(body) + 1)  # (a new object: its index is built afresh)
    for line in wanted:
        assert be.line_start(body, line) == be.skip_lines(body, 0, line - 1)


def test_large_bodies_count_lines_and_find_them_from_one_index():
    """A body of 1 MiB or more counts its newlines once, window by window, for both its line count
    and line look-ups (either may come first); both equal a plain count."""
    import random

    rng = random.Random(7)
    body = b"".join(b"x" * rng.randrange(0, 300) + b"\n" for _ in range(12000)) + b"tail"
    assert len(body) > 1 << 20
    naive = [0] + [i + 1 for i, byte in enumerate(body) if byte == 10]
    for first in ("count", "look-up"):
        fresh = bytes(bytearray(body))  # (an equal body no index is kept for yet)
        text = be.Text(fresh)
        if first == "look-up":
            assert be.line_start(fresh, 6000) == naive[5999]
        assert text.newlines() == body.count(b"\n") and text.total() == 12001
        for line in (1, 2, 5000, 11999, 12000, 12001):
            assert be.line_start(fresh, line) == naive[line - 1]


@pytest.mark.parametrize("codec", ["utf-8", "latin-1", "utf-16", "raw_unicode_escape", "cp1252", "gb18030"])
def test_a_part_of_a_body_decodes_as_its_bytes_do(codec):
    sample = "héllo wörld, 中文 \\u0041 x" if codec not in ("latin-1", "cp1252") else "héllo wörld x"
    text = be.Text(sample.encode(codec), codec=codec, encoding=codec)
    assert text.codec == codec
    body = text.body
    for start, stop in ((0, None), (1, None), (0, 5), (2, 9), (len(body) - 3, None)):
        try:
            want = body[start:stop].decode(text.codec)
        except UnicodeDecodeError:
            with pytest.raises(UnicodeDecodeError):
                text.decode(start, stop)
            continue
        assert text.decode(start, stop) == want, (codec, start, stop)


# --- full_diff: difflib's hunks; anchored on unique lines for large texts ------------------------------


def _difflib_diff(old, new):
    """full_diff as it was made before 0.3's anchoring: difflib.unified_diff, `\\` lines added."""
    import difflib

    out = []
    show = [[t + ("" if e else "\x00") for t, e in side] for side in (old, new)]
    for line in difflib.unified_diff(*show, "a/f.txt", "b/f.txt", n=3, lineterm=""):
        out += [line[:-1], "\\ No newline at end of file"] if line.endswith("\x00") else [line]
    return "\n".join(out)


def _applied(old, diff):
    """The lines `diff` (full_diff's text) makes of `old`: its hunks' counts checked, each applied
    where its header says, the lines between hunks kept; each hunk changes a line (one of context
    alone is a corrupt patch to git apply and GNU patch) and starts past the one before."""
    import re

    lines, out, at = diff.split("\n")[2:], [], 0
    k = 0
    while k < len(lines):
        m = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[k])
        a, b = int(m.group(1)), int(m.group(2) or 1)
        start = a - 1 if b else a
        assert start >= at, (lines[k], at)
        out += old[at:start]
        at, k, seen, changed = start, k + 1, [0, 0], False
        while k < len(lines) and not lines[k].startswith("@@"):
            sign, text = lines[k][0], lines[k][1:]
            changed = changed or sign in "+-"
            ended = k + 1 < len(lines) and lines[k + 1] == "\\ No newline at end of file"
            if sign in " -":
                assert old[at] == (text, "" if ended else "\n"), (lines[k], old[at])
                at, seen[0] = at + 1, seen[0] + 1
            if sign in " +":
                out.append((text, "" if ended else "\n"))
                seen[1] += 1
            k += 2 if ended else 1
        assert seen == [b, int(m.group(4) or 1)], lines
        assert changed, lines
    return out + old[at:]


small_lines = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "}", "", "def f():"]), st.sampled_from(["\n", ""])), max_size=14
).map(lambda ls: [(t, "\n") for t, _ in ls[:-1]] + ls[-1:])


@given(small_lines, small_lines)
def test_full_diff_is_difflibs_unified_diff(old, new):
    assert be.full_diff("f.txt", old, new) == _difflib_diff(old, new)


@settings(max_examples=scaled(25, 200), deadline=None)
@given(st.integers(0, 2**32))
def test_full_diff_of_large_texts_gives_the_new_text(seed):
    """Above _ANCHORED_FROM lines, unique lines are matched first (difflib alone was quadratic
    where changes are many and spread): the hunks still make exactly the new text of the old."""
    import random

    rng = random.Random(seed)
    old = [(rng.choice(["}", "", "    pass", f"x = {rng.randrange(10**6)}"]), "\n") for _ in range(1500)]
    new = list(old)
    for _ in range(rng.randrange(1, 300)):
        at = rng.randrange(len(new) + 1)
        kind = rng.randrange(4)
        if kind == 0 and at < len(new):
            del new[at]
        elif kind == 3 and at < len(new):  # (a line moved: unique lines whose order crosses)
            new.insert(rng.randrange(len(new)), new.pop(at))
        elif kind == 1 and at < len(new):
            new[at] = (rng.choice(["}", f"y = {rng.randrange(10**6)}"]), "\n")
        else:
            new.insert(at, (rng.choice(["", "{", f"z = {rng.randrange(10**6)}"]), "\n"))
    if rng.randrange(2):
        new[-1] = (new[-1][0], "")
    assert len(old) + len(new) >= be._ANCHORED_FROM
    assert _applied(old, be.full_diff("f.txt", old, new)) == new


def test_one_change_in_a_large_text_of_unique_lines_is_one_small_hunk():
    """The regression pass: each unique line matched alone made every run of context a hunk (120
    hunks, the first of context alone: `git apply` refused the patch) and a file of unique lines
    one hunk of all its lines."""
    old = [line for k in range(300) for line in ((f"item {k}", "\n"), *[("    pass", "\n")] * 8)]
    new = [("item 100 changed", "\n") if line == ("item 100", "\n") else line for line in old]
    assert be.full_diff("f.txt", old, new) == _difflib_diff(old, new)
    unique = [(f"value = {n}", "\n") for n in range(1200)]
    changed = unique[:600] + [("value = six hundred", "\n")] + unique[601:]
    assert be.full_diff("f.txt", unique, changed) == _difflib_diff(unique, changed)


def test_a_few_unique_lines_that_moved_far_leave_the_diff_to_difflib():
    """The second regression pass: a CSV of repeated rows whose header went to its end had that one
    unique line as the only anchor, and every other line was removed and added (6,005 lines
    instead of difflib's 13)."""
    body = [(f"row {n % 1500}", "\n") for n in range(3000)]
    old, new = [("id,name", "\n"), *body], [*body, ("id,name", "\n")]
    assert be.full_diff("f.txt", old, new) == _difflib_diff(old, new)
    assert len(be.full_diff("f.csv", old, new).split("\n")) < 20


def test_a_rename_on_every_seventh_line_is_diffed_as_difflib_does():
    """The case that took 11 s in `patch --preview` (20,000 lines; 3,000 here): the same hunk as
    difflib's, now in linear time."""
    old = [(f"    value_{i} = compute({i})", "\n") for i in range(3000)]
    new = [(t.replace("compute", "calc") if i % 7 == 0 else t, e) for i, (t, e) in enumerate(old)]
    assert be.full_diff("f.txt", old, new) == _difflib_diff(old, new)
