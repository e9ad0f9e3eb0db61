"""The message table (issue 11): every key the code uses exists in English and Chinese, both with
the same {fields}; a missing key raises under BETTER_EDIT_DEBUG instead of showing the key."""

import re
import string

import pytest
from harness import MODULE

import better_edit as be

SOURCE = MODULE.read_text(encoding="utf-8")


def _fields(template):
    return {name.split("!")[0].split(":")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def _used_keys():
    """Message keys named as literals in the code: tr(..., "k"), ToolError(code, "k", "hint"),
    invalid("k"), warnings ("k", {...}), expected_key="k", "x." + tool names and the like."""
    keys = set()
    patterns = [
        r'\btr\(\s*[\w.]+,\s*"([\w.]+)"',
        r'ToolError\(\s*"[A-Z_]+",\s*"([\w.]+)"(?:,\s*"([\w.]+)")?',
        r'\binvalid\(\s*"([\w.]+)"',
        r'\(\s*"(w\.[\w.]+)",\s*\{',
        r'_key="([\w.]+)"',
        r'hint="([\w.]+)"',
    ]
    for pattern in patterns:
        for match in re.finditer(pattern, SOURCE):
            keys.update(group for group in match.groups() if group and not group.endswith("."))
    for tool in be.TOOLS:
        keys.add("d." + tool.name)
        keys.update(param.help for param in tool.params)
        if tool.cli:
            keys.add("x." + tool.name)
    return keys


def test_every_used_key_exists():
    missing = sorted(key for key in _used_keys() if key not in be.MESSAGES)
    assert missing == []


def test_both_languages_have_the_same_fields():
    different = []
    for key, pair in be.MESSAGES.items():
        assert isinstance(pair, tuple) and len(pair) == 2, key
        english, chinese = pair
        assert english.strip() and chinese.strip(), key
        if _fields(english) != _fields(chinese):
            different.append((key, sorted(_fields(english)), sorted(_fields(chinese))))
    assert different == []


def test_a_missing_key_or_field_raises():
    """A message is never shown as its raw key or template: a mistake there is a bug, found here."""
    with pytest.raises(KeyError):
        be.tr("en", "no.such.key")
    with pytest.raises(KeyError):
        be.tr("en", "target_missing", kind="function", value="f")  # (no file)
    assert be.tr("en", "p.edits").startswith("array of edit items {op, file, ...}")


# Keys the code composes: "b." + problem, "detail." + member, "s." + a shared argument's name
# (Param.schema), and the fragments of describe_difference's words (a count of a whitespace
# character, a character's name, a typographic quote or dash).
COMPOSED = ("b.", "detail.", "s.", "diff.one.", "diff.many.", "diff.char.", "diff.sort.", "diff.typo.")


def test_every_defined_key_is_used():
    """A message nobody shows is dead weight in both languages: each key is used by the code."""
    used = _used_keys()
    # every other "key" literal of the code (key="patch_delete_mismatch"), but not the table's own
    # entries ("key": (english, chinese)); one pass instead of a search of the module per key
    literals = set(re.findall(r'(?<![\w.])"([\w.]+)"(?!: \()', SOURCE))

    def named(key):
        return key in used or key in literals

    unused = [
        key
        for key in be.MESSAGES
        if not (
            named(key)
            or key.startswith(COMPOSED)
            or (key.endswith(".hint") and named(key[:-5]))
            or (key.endswith(".cli") and key[:-4] in be.MESSAGES)  # (the CLI's words of a message: cli_words)
        )
    ]
    assert unused == []


def test_every_message_formats_with_its_own_fields():
    """Each template formats with exactly the fields it names, in both languages (literal braces
    are doubled), so tr() never meets a template it cannot fill."""
    for key, pair in be.MESSAGES.items():
        for template in pair:
            fields = {name: 7 for name in _fields(template)}
            assert template.format(**fields), key


MCP_ONLY_HINTS = {  # (be-trx-*; views the server remembers)
    "conflict_rollback.hint", "rollback_conflict.hint", "rollback_gone.hint", "rollback_gone_made.hint",
    "rollback_not_file.hint",
    "snapshot_changed.hint",
    "stale_view_other_file.hint",
}  # fmt: skip


def test_every_hint_that_tells_the_cli_to_pass_an_argument_names_its_option():
    """Found by an attack: CLI hints said "pass force", "pick another with occurrence", "use
    insert with after_line 0": the server's JSON arguments, not the options a shell user types.
    A hint that tells to pass, use, add or pick an argument has a KEY.cli text (_cli_key) that
    names the option, in both languages."""
    telling = re.compile(
        r"\b(pass|with|use|add|pick)\b[^.;:]*\b(force|occurrence|after_line|start/end|max_lines|viewed_code_id)\b"
        r"|\b(by|make) old\b"
    )
    told = [
        key
        for key, (english, _chinese) in be.MESSAGES.items()
        if key.endswith(".hint") and key not in MCP_ONLY_HINTS and telling.search(english)
    ]
    assert [key for key in told if key + ".cli" not in be.MESSAGES] == []
    assert [key for key in told if not all("--" in text for text in be.MESSAGES[key + ".cli"])] == []


def test_a_count_of_one_names_one_thing_in_english():
    """Found by the newcomer review: "created notes/todo.md: 1 lines" and "which has 1 lines"."""
    from better_edit import tr

    one = tr("en", "out_of_range", start=3, end=3, file="a.txt", total=1)
    assert one.endswith("which has 1 line"), one
    assert tr("en", "out_of_range", start=3, end=3, file="a.txt", total=2).endswith("which has 2 lines")
    summary = tr("en", "cli.items_summary", verb="edited", count_files=1, count_items=3, event="")
    assert summary == "edited 1 file, 3 items", summary
    assert "1 行" in tr("zh", "out_of_range", start=3, end=3, file="a.txt", total=1)
