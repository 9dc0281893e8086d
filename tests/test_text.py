"""The one text escaper (arcnb.text): every control and bidirectional character of a
user's string is shown as its escape, in the terminal, in HTML and in LaTeX."""
from __future__ import annotations

import os
import unicodedata

import pandas as pd
import pytest

from arcnb.html import escape as escape_html
from arcnb.text import escape_char, escape_latex, printable

HOSTILE = "rtl\u202egnp.exe\x1b[31m\n\u2066x\u2069\u200f\u2028\x00"


def _unsafe(text: str) -> list[str]:
    """Characters that act instead of showing: Unicode's Other categories and the line
    and paragraph separators."""
    return [c for c in text if unicodedata.category(c)[0] == "C"
            or unicodedata.category(c) in ("Zl", "Zp")]


def test_every_control_and_bidirectional_character_is_escaped():
    out = printable(HOSTILE)
    assert _unsafe(out) == []
    assert out == ("rtl\\u202egnp.exe\\x1b[31m\\n\\u2066x\\u2069\\u200f\\u2028\\x00")
    assert printable("plain text, ünïcödé 中文") == "plain text, ünïcödé 中文"


def test_a_non_utf8_byte_of_a_file_name_shows_as_that_byte():
    name = os.fsdecode(b"ck\xff.pt")
    assert printable(name) == "ck\\xff.pt" and escape_char("\udcff") == "\\xff"
    printable(name).encode("utf-8")  # writable anywhere


def test_html_and_latex_use_the_same_escapes():
    # HTML lays out newlines and tabs itself (a <pre> block keeps its lines)
    assert escape_html(HOSTILE) == printable(HOSTILE, keep="\n\t")
    assert escape_html("a\nb\tc\x1b") == "a\nb\tc\\x1b"
    assert escape_html("<a href='x'>&") == "&lt;a href=&#x27;x&#x27;&gt;&amp;"
    tex = escape_latex("a_b\x1b\u202e%")
    assert tex == r"a\_b\textbackslash{}x1b\textbackslash{}u202e\%"
    assert _unsafe(tex) == []


def test_the_report_pages_and_the_latex_tables_show_nothing_raw():
    """ESC and U+202E in task ids and run labels reached the HTML raw
    (rtl\\u202egnp.exe showed as rtlexe.png) and the LaTeX tables (pdflatex stops on
    U+001B); the guide promises control characters are escaped."""
    from arcnb.breakdown import latex_table
    from arcnb.errors import one_line
    from arcnb.html import escape as _esc

    assert _unsafe(_esc(HOSTILE).replace("\n", "")) == [] and "\\u202e" in _esc(HOSTILE)
    df = pd.DataFrame({"group": [HOSTILE], "n_tasks": [1], "pass@2": [0.5],
                       "pass@2_ci_low": [0.1], "pass@2_ci_high": [0.9]})
    tex = latex_table(df, caption=HOSTILE)
    assert _unsafe(tex.replace("\n", "")) == []
    assert "\\textbackslash{}x1b" in tex and "\\textbackslash{}u202e" in tex
    assert _unsafe(one_line(HOSTILE)) == []


@pytest.mark.parametrize("ch", ["\x1b", "\u202e", "\u2066", "\x7f", "\x85", "\u2029",
                                "\ufeff", "\udc80"])
def test_each_kind_is_escaped(ch):
    assert printable(f"a{ch}b") == f"a{escape_char(ch)}b" != f"a{ch}b"
