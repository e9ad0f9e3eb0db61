"""Check the hand-written corpus against hand-worked expectations (tests/corpus/expected.json)."""

import json
import os

import pytest

import better_edit as be
from better_edit import check_balance, detect_language, function_range, tag_range  # noqa: E402

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
with open(os.path.join(CORPUS, "expected.json"), encoding="utf-8") as handle:
    EXPECTED = json.load(handle)


def load(name):
    encoding = EXPECTED[name].get("encoding", "utf-8")  # (what the file declares, if not UTF-8)
    with open(os.path.join(CORPUS, name), encoding=encoding, newline="") as handle:
        text = handle.read()
    return text, detect_language(name, text[:200])


def test_corpus_covers_enough_languages():
    languages = {load(name)[1] for name in EXPECTED}
    assert None not in languages
    assert len(languages) >= 12
    assert sorted(os.listdir(CORPUS)) == sorted(list(EXPECTED) + ["expected.json"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_balance(name):
    text, language = load(name)
    result = check_balance(text, language)
    assert result["status"] == EXPECTED[name]["balance"]["status"]
    assert result["unmatched"] == EXPECTED[name]["balance"]["unmatched"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_balance_tool_reads_the_file_as_declared(name, tmp_path):
    ctx = be.Context(root=CORPUS, cache_dir=str(tmp_path / "cache"), mcp=True)
    result = be.call_tool(ctx, be.find_tool("balance"), {"file": name})
    assert result["status"] == EXPECTED[name]["balance"]["status"]
    assert result["unmatched"] == EXPECTED[name]["balance"]["unmatched"]


PROBES = [(name, probe) for name in sorted(EXPECTED) for probe in EXPECTED[name].get("func_range", [])]
TAG_PROBES = [(name, probe) for name in sorted(EXPECTED) for probe in EXPECTED[name].get("tag_range", [])]


@pytest.mark.parametrize(
    "name, probe", PROBES, ids=[f"{n}:{p['line']}{'o' if p.get('outer') else ''}" for n, p in PROBES]
)
def test_function_range(name, probe):
    text, language = load(name)
    got = function_range(text, language, probe["line"], outer=probe.get("outer", False))
    if probe["start"] is None:
        assert got is None
    else:
        want = {key: probe[key] for key in ("start", "end", "kind", "name") if key in probe}
        assert got == want


@pytest.mark.parametrize("name, probe", TAG_PROBES, ids=[f"{n}:{p['line']}" for n, p in TAG_PROBES])
def test_tag_range(name, probe):
    text, language = load(name)
    got = tag_range(text, language, probe["line"])
    if probe["start"] is None:
        assert got is None
    else:
        assert got == {key: probe[key] for key in ("start", "end", "tag")}
