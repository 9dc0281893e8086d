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


# ====================================================================== numbers
@pytest.mark.parametrize("v, least, most, want", [
    (0.25, 3, 6, "0.250"), (0.0025, 3, 6, "0.0025"), (0.013, 3, 6, "0.013"),
    (0.0, 3, 6, "0.000"), (1.0, 3, 6, "1.000"), (12.5, 3, 6, "12.500"),
    (0.00004, 4, 8, "0.000040"), (0.000012345, 3, 6, "0.000012"),  # capped at 6 decimals
    (1e-9, 3, 6, "0.000000"), (1e-9, 2, 8, "0.00000000"), (-0.0025, 3, 6, "-0.0025"),
    (0.5, 2, 8, "0.50"), (0.05, 2, 8, "0.050"), (float("nan"), 4, 8, "NaN"),
    (float("inf"), 3, 6, "inf"),
])
def test_fmt_number_keeps_two_significant_digits_of_a_small_value(v, least, most, want):
    from arcnb.text import fmt_number

    assert fmt_number(v, least=least, most=most) == want


def test_fractions_percents_and_intervals():
    from arcnb.text import fmt_fraction, fmt_interval, fmt_percent

    assert fmt_fraction(0.25) == "0.2500 (25.00%)"
    assert fmt_fraction(1.0) == "1.0000 (100.00%)"
    assert fmt_fraction(0.00004) == "0.000040 (0.0040%)"
    assert fmt_fraction(None) == "NaN" and fmt_fraction(float("nan")) == "NaN"
    assert fmt_percent(0.125) == "12.50%"
    assert fmt_interval(0.075, 0.225) == "[0.0750, 0.2250]"
    assert fmt_interval(0.0, 0.00004) == "[0.0000, 0.000040]"


def test_every_number_writer_follows_the_one_rule():
    """The terminal, the LaTeX export and the figures' labels each keep a small nonzero
    value visible with two significant digits, through :func:`arcnb.text.decimals`
    (``arcnb score`` printed 0.00004 as 0.0000)."""
    from arcnb.breakdown import latex_table
    from arcnb.commands.common import format_summary
    from arcnb.plot import value_label

    summary = {"dataset": {"name": "d", "version": "1"}, "estimator": "ranked",
               "pass@1": 0.00004, "pass@1_per_output": 0.1375,
               "pass@1_all_or_nothing": float("nan"), "pass@2": 0.0, "pass@2_per_output": 1.0,
               "pass@2_all_or_nothing": 0.5, "pass@2_ci95": [0.00004, 0.0025], "n_tasks": 1,
               "n_outputs": 1, "n_missing_outputs": 0, "n_invalid_attempts": 0,
               "n_extra_tasks": 0}
    text = format_summary(summary)
    assert "\n  1  0.000040             0.1375                    NaN\n" in text
    assert "\n  2    0.0000             1.0000                 0.5000\n" in text
    assert "[0.000040, 0.0025]" in text
    assert value_label(0.00004) == "0.000040" and value_label(0.5) == "0.50"
    tex = latex_table(pd.DataFrame({"group": ["a"], "score": [0.00004]}), columns="all")
    assert "0.000040" in tex


def test_the_dataset_line_names_the_dataset_its_version_and_its_filter():
    from arcnb.data import load_dataset
    from arcnb.text import dataset_line

    assert dataset_line({"name": "arc-agi-1:evaluation", "version": "aa922be"}) == \
        "dataset: arc-agi-1:evaluation (aa922be)"
    assert dataset_line({"name": "x", "version": "1", "filter": "3 task ids"}) == \
        "dataset: x (1), filter: 3 task ids"
    assert "\n" not in dataset_line({"name": "a\nb\u202e", "version": "v"})
    ds = load_dataset("arc-agi-1:evaluation")
    assert dataset_line(ds) == f"dataset: arc-agi-1:evaluation ({ds.version})"


def test_a_missing_number_is_spelt_one_way_everywhere():
    """NaN is written ``NaN`` by the number formatter every line and table uses, and by
    the explorer (it was ``nan`` in the terminal and a dash in the explorer)."""
    from arcnb.explorer.state import format_value
    from arcnb.text import MISSING, fmt_number, fmt_fraction

    assert MISSING == "NaN"
    assert fmt_number(float("nan")) == fmt_fraction(None) == format_value(None) == MISSING
    assert format_value(float("nan")) == MISSING and format_value(0.25) == "0.250"
