"""The one text escaper (arcnb.text): every control and bidirectional character of a
user's string is shown as its escape, in the terminal, in HTML and in LaTeX."""
from __future__ import annotations

import ast
import os
import re
import unicodedata
from pathlib import Path

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


def test_the_new_formatters():
    from arcnb.text import MISSING, fmt_compact, fmt_count, fmt_percent, fmt_significant

    assert fmt_count(12.0) == "12" and fmt_count(12345, thousands=True) == "12,345"
    assert fmt_count(None) == fmt_count(float("nan")) == MISSING
    assert fmt_significant(0.95) == "0.95" and fmt_significant(1e-05) == "1e-05"
    assert fmt_significant(1234.5, 3) == "1.23e+03" and fmt_significant(0.5, 2) == "0.5"
    assert fmt_significant(float("nan")) == MISSING
    assert [fmt_compact(n) for n in (999, 1234, 35_000, 1_500_000)] == ["999", "1.2k", "35k", "1.5M"]
    assert fmt_percent(0.25, sep=" ") == "25.00 %" and fmt_percent(None) == MISSING
    assert fmt_percent(0.5, least=0, most=0) == "50%"
    from arcnb.text import fmt_seconds

    assert fmt_seconds(12.34) == "12.3 s" and fmt_seconds(0) == "0.0 s"


# ============================================================ numbers have one home
ARCNB = Path(__file__).resolve().parents[1] / "arcnb"
#: A float presentation type at the end of a format spec (``.3f``, ``.1%``, ``.2g``,
#: ``,.0f``, ``.{digits}f``) or a thousands separator (``,``, ``_``) of a count.
_FLOAT_SPEC = re.compile(r"(?:[eEfFgG%]|[,_]d?)$")
#: A replacement field of a format string with such a spec (``"{:.2g}"``, ``"{x:,}"``).
_FORMAT_FIELD = re.compile(r"(?<!\{)\{[\w.\[\]]*(?:![rsa])?:(?:.?[<>=^])?[-+ ]?z?#?0?\d*"
                           r"(?:[,_]?(?:\.\d+)?[eEfFgG%]|[,_]d?)\}")
#: A printf conversion of a float (``"%.3f" % x``).
_PRINTF = re.compile(r"%[-+ 0#]*\d*(?:\.\d+)?[eEfFgG]")
#: The ways a missing value was spelt before it was :data:`arcnb.text.MISSING`.
_MISSING_SPELLINGS = {"n/a", "N/A", "nan", "NaN", "–", "—"}
#: ``nan`` or ``n/a`` as a word of a longer text (``"nan (nan%)"``).
_MISSING_WORD = re.compile(r"(?<![\w.])(?:nan|n/a|N/A)(?![\w(])")
#: The functions whose argument is a float's name, not a text (``float("nan")``).
_PARSES = {"float", "Decimal", "float64", "float32"}

#: ``(module, function)``: the places that write a number or a missing value for a
#: program, not for a person, each with its reason.
MACHINE_FORMATS = {
    ("html.py", "data_value"): "the exact float of a table cell's data-value attribute, read "
                               "by scripts and tests: repr(), missing as 'nan' (parseFloat's)",
    ("plot/charts.py", "_nice_ceil"): "float(f'{v:.12g}'): an axis limit rounded to 12 significant "
                                      "digits (a number, never shown as text)",
    ("metrics/grid.py", "tolerance_name"): "a tolerance in a metric's key (grid_tol_0p95), a "
                                      "name to look up, the same in every file",
}


def _docstrings(tree) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def number_formatting(source: str) -> list[tuple[int, str, str]]:
    """``(line, function, what)`` for each place ``source`` writes a number or a missing
    value for display by itself: an f-string with a float spec (``{x:.3f}``, ``{x:.1%}``,
    ``{n:,}``), ``format(x, ".3f")``, a format string with such a field (``"{:.2g}"``),
    ``"%.3f" % x``, ``round`` written into a string (``str(round(x, 2))``,
    ``f"{round(x, 2)}"``) and a missing value spelt as a string (``"n/a"``, ``"–"``,
    ``"nan"``, ``"NaN"``: :data:`arcnb.text.MISSING` is the one spelling)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    parent = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    found = []

    def func(node):
        while node in parent:
            node = parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node.name
        return ""

    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.FormattedValue):
            spec = node.format_spec
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in spec.values) \
                if spec is not None else ""
            if _FLOAT_SPEC.search(text):
                what = f"f-string spec {text!r}"
            elif isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "round":
                what = "round() into an f-string"
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name == "format" and isinstance(node.func, ast.Name) and len(node.args) == 2:
                what = "format(x, spec)"
            elif name == "str" and node.args and isinstance(node.args[0], ast.Call) \
                    and getattr(node.args[0].func, "id", "") == "round":
                what = "str(round(...))"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and _PRINTF.search(node.left.value):
            what = "printf-style float"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            up = parent.get(node)
            if (node.value in _MISSING_SPELLINGS or _MISSING_WORD.search(node.value)) and not (
                    isinstance(up, ast.Call)
                    and getattr(up.func, "id", getattr(up.func, "attr", "")) in _PARSES):
                what = f"missing value spelt {node.value!r}"
            elif not isinstance(up, ast.JoinedStr) and _FORMAT_FIELD.search(node.value):
                what = f"format string {node.value!r}"
        if what:
            found.append((node.lineno, func(node), what))
    return found


def test_number_formatting_finds_each_way_of_formatting_a_float():
    src = '''
def f(x, n, d):
    a = f"{x:.3f} {x:.1%} {x:.2g} {n:,} {x:.{d}f} {x:>6} {n} {x!r}"
    b = format(x, ".3f") + "%.2f" % x + "{:.2g}".format(x) + str(round(x, 2)) + f"{round(x, 1)}"
    c = "n/a" if x != x else "–"
    e = "nan (nan%)"
    return float("nan"), "NaN", "plain {text}", "a - b", "--"
'''
    kinds = [what.split(" ")[0] for _, _, what in number_formatting(src)]
    assert kinds.count("f-string") == 5 and kinds.count("missing") == 4
    assert {"format(x,", "printf-style", "format", "str(round(...))", "round()"} <= set(kinds)
    assert len(kinds) == 14


def test_no_module_formats_a_number_for_display_by_itself():
    """Numbers have one home, arcnb.text (``fmt_number``, ``fmt_percent``,
    ``fmt_fraction``, ``fmt_interval``, ``fmt_count``, ``fmt_significant``,
    ``fmt_compact``, ``MISSING``): a design review found seven other number formatters
    and a missing value written ``NaN``, ``nan``, ``n/a`` and ``–``. No other module
    writes a float for a person to read by itself; a machine format (a data attribute, a
    metric's key) is named in :data:`MACHINE_FORMATS` with its reason."""
    problems = []
    for path in sorted(ARCNB.rglob("*.py")):
        rel = path.relative_to(ARCNB).as_posix()
        if rel == "text.py":
            continue
        for line, fn, what in number_formatting(path.read_text(encoding="utf-8")):
            if (rel, fn) not in MACHINE_FORMATS:
                problems.append(f"arcnb/{rel}:{line} ({fn or 'module'}): {what}")
    assert problems == []


def test_the_exemptions_are_still_needed():
    for rel, fn in MACHINE_FORMATS:
        assert any(f == fn for _, f, _ in number_formatting((ARCNB / rel).read_text())), (rel, fn)
