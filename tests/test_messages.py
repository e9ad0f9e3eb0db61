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


def test_a_missing_key_raises_under_debug(monkeypatch):
    assert be.tr("en", "no.such.key") == "no.such.key"
    monkeypatch.setenv("BETTER_EDIT_DEBUG", "1")
    with pytest.raises(KeyError):
        be.tr("en", "no.such.key")
