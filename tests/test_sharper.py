"""Sharper on real code: a file that is not UTF-8 but declares its encoding (a PEP 263 coding comment,
an XML declaration) is read that way by balance, func-range and tag-range (the CLI, as a subprocess)."""

import json

import pytest


def balance(run_be, root, name, data, *flags):
    (root / name).write_bytes(data)
    proc = run_be(*flags, "balance", "-f", name, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    "head",
    [
        b"# -*- coding: latin-1 -*-\n",
        b"#!/usr/bin/env python3\n# vim: set fileencoding=iso-8859-15 :\n",
        b"\n# coding=cp1252\n",
    ],
)
def test_a_python_coding_comment_on_line_one_or_two_is_honoured(run_be, root, head):
    data = head + b'"""R\xe9sum\xe9."""\n\ndef f(x):\n    return (x + 1\n'
    result = balance(run_be, root, "report.py", data)
    assert result["status"] == "unbalanced" and result["language"] == "python"
    line = head.count(b"\n") + 4
    assert result["unmatched"] == [{"symbol": "(", "line": line, "column": 12, "problem": "unclosed"}]


def test_a_coding_comment_elsewhere_is_no_declaration(run_be, root):
    data = b"x = 1\n# coding: latin-1\ny = '\xe9'\n"
    result = balance(run_be, root, "late.py", data)
    assert result["status"] == "not_checked"
    assert result["reason"] == "late.py is not valid UTF-8 (byte 0xe9 at offset 29)"


def test_an_xml_declaration_is_honoured(run_be, root):
    data = b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<a>\n  <b>caf\xe9</b>\n  <c>\n</a>\n'
    result = balance(run_be, root, "legacy.xml", data)
    assert result["status"] == "unbalanced" and result["language"] == "xml"
    assert [(u["symbol"], u["line"], u["problem"]) for u in result["unmatched"]] == [("<c>", 4, "unclosed")]
    proc = run_be("tag-range", "-f", "legacy.xml", "-l", "3", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tag"] == "b"


@pytest.mark.parametrize("codec", [b"no-such-codec", b"hex", b"utf-16"])
def test_a_declaration_that_cannot_be_used_is_a_clear_not_checked(run_be, root, codec):
    data = b"# coding: " + codec + b"\nx = '\xe9'\n"
    result = balance(run_be, root, "odd.py", data)
    assert result["status"] == "not_checked"
    name = codec.decode()
    assert result["reason"] == (
        f"odd.py declares the encoding '{name}', which is no ASCII-compatible text encoding Python knows"
    )
    proc = run_be("func-range", "-f", "odd.py", "-l", "2")
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"error[ENCODING]: odd.py declares the encoding" in proc.stderr


def test_a_named_encoding_wins_over_the_declaration(run_be, root):
    data = b"# -*- coding: latin-1 -*-\nx = '\xe9'\n"
    assert balance(run_be, root, "a.py", data, "--encoding", "utf-8")["status"] == "not_checked"
    assert balance(run_be, root, "a.py", data, "--encoding", "cp1252")["status"] == "balanced"
    utf8 = "# -*- coding: latin-1 -*-\nx = ('é'\n".encode()  # valid UTF-8: read as UTF-8, as before
    result = balance(run_be, root, "b.py", utf8)
    assert result["unmatched"] == [{"symbol": "(", "line": 2, "column": 5, "problem": "unclosed"}]


def test_func_range_reads_a_declared_file(run_be, root):
    data = b"# -*- coding: latin-1 -*-\n\ndef \xe9cart(a, b):\n    return a - b\n"
    (root / "calc.py").write_bytes(data)
    proc = run_be("func-range", "-f", "calc.py", "-l", "4", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert (found["start"], found["end"], found["name"]) == (3, 4, "\xe9cart")
