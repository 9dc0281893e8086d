"""The one text escaper: how a string that came from the user (a task id, a file or
checkpoint name, a category, a run label, a model name) is shown.

A user's string may hold characters that act instead of showing: control characters
(ESC moves the cursor and recolours a terminal; a newline forges a row of a printed
table; U+001B stops pdflatex), bidirectional controls (U+202E, the right-to-left
override, shows ``rtl\\u202egnp.exe`` as ``rtlexe.png``), line and paragraph separators,
unpaired surrogates (a file name that is not UTF-8) and unassigned code points. Every
such character is shown as its escape (``\\x1b``, ``\\n``, ``\\u202e``; the byte of a
non-UTF-8 name as ``\\xff``), whatever the output:

* :func:`printable`: the terminal, one-line messages and figure labels;
* :func:`arcnb.html.escape` (HTML's home): the same, then HTML-escaped (``<``, ``&``,
  quotes);
* :func:`escape_latex`: the same, then LaTeX-escaped (``\\``, ``&``, ``%``, ``_``, ...).

The characters escaped are exactly those :meth:`str.isprintable` refuses (Unicode's
"Other" categories Cc, Cf, Cs, Co, Cn and the separators other than the space).

Numbers have one home here too: :func:`decimals` is the one rule "keep two significant
digits for small values" (a small nonzero score, 0.0025 or 0.00004, is never printed as
0.003 or 0.0000); :func:`fmt_number`, :func:`fmt_percent`, :func:`fmt_fraction` and
:func:`fmt_interval` write a value, a percent, a fraction with its percent and an
interval with it. Each output keeps its own fewest decimals (the terminal 4, tables 3,
figure labels 2), the rule is the same. :func:`fmt_count` writes a count (an integer,
``12,345`` with ``thousands``), :func:`fmt_significant` a value to a number of
significant digits (a parameter, an axis tick, a cost), :func:`fmt_compact` a large count
in a narrow label (``35k``), :func:`fmt_seconds` a duration (``12.3 s``). A missing
value is :data:`MISSING` (``NaN``) in every one of them. No other module of arcnb formats
a number for a person to read (``tests/test_text.py`` checks it); files for machines
(CSV, JSON) keep full precision.
"""
from __future__ import annotations

import math

__all__ = ["printable", "escape_char", "escape_latex", "LATEX_ESCAPES", "decimals", "MISSING",
           "fmt_number", "fmt_percent", "fmt_fraction", "fmt_interval", "fmt_count",
           "fmt_significant", "fmt_compact", "fmt_seconds"]


def escape_char(ch: str) -> str:
    """The escape of one character that does not show as itself: ``\\x1b``, ``\\n``,
    ``\\u202e``; a lone surrogate U+DC80-U+DCFF (a byte of a non-UTF-8 file name, as
    Python decodes it) as that byte, ``\\xff``."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return repr(ch)[1:-1]


def printable(text, *, keep: str = "") -> str:
    """``text`` (any object) with every character that would not show as itself
    escaped (:func:`escape_char`): a newline shows as ``\\n``, ESC as ``\\x1b``, the
    right-to-left override as ``\\u202e``, so that a string taken from the user can't
    break a one-line message, move the cursor or reorder what is shown. ``keep`` names
    characters left as they are (HTML keeps ``"\\n\\t"``: the page lays them out, a
    ``<pre>`` block keeps its lines)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else escape_char(c) for c in text)


#: LaTeX's special characters and what stands for each in text.
LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                 "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                 "^": r"\textasciicircum{}"}


def escape_latex(text) -> str:
    """:func:`printable` ``(text)``, LaTeX-escaped: safe in a table cell or a caption
    (pdflatex never meets a control character, and ``\\x1b`` prints as such)."""
    return "".join(LATEX_ESCAPES.get(ch, ch) for ch in printable(text))


# ====================================================================== numbers
def decimals(v, *, least: int = 3, most: int = 6) -> int:
    """How many decimals show ``v``: at least ``least``, and as many more (up to
    ``most``) as keep two significant digits of a small value (0.0025 -> 4, 0.00004
    -> 6); ``least`` for zero, NaN and infinities."""
    a = abs(float(v))
    if a == 0 or not math.isfinite(a):
        return int(least)
    return int(min(most, max(least, math.ceil(-math.log10(a)) + 1)))


#: How arcnb writes a missing number (NaN, an empty denominator) wherever a person reads
#: it: the terminal, the tables of a page, the explorer.
MISSING = "NaN"


def fmt_number(v, *, least: int = 3, most: int = 6) -> str:
    """``v`` with :func:`decimals` decimals: ``fmt_number(0.25) == "0.250"``,
    ``fmt_number(0.0025) == "0.0025"``, ``fmt_number(0.00004, least=4) == "0.000040"``;
    a missing value (NaN) as ``MISSING`` (``NaN``: the one spelling arcnb writes in
    every table, line and page; None too), infinities as Python writes them (``inf``)."""
    if v is None:
        return MISSING
    v = float(v)
    if math.isnan(v):
        return MISSING
    return f"{v:.{decimals(v, least=least, most=most)}f}"


def fmt_percent(v, *, least: int = 2, most: int = 6, sep: str = "") -> str:
    """The fraction ``v`` as a percent: ``fmt_percent(0.25) == "25.00%"``,
    ``fmt_percent(0.00004) == "0.0040%"``; ``sep`` between the number and ``%`` (a
    sentence writes ``"25.00 %"``); a missing value (None, NaN) as ``MISSING``."""
    if v is None or math.isnan(float(v)):
        return MISSING
    return f"{fmt_number(100 * float(v), least=least, most=most)}{sep}%"


def fmt_fraction(v, *, missing: str = MISSING) -> str:
    """A fraction with its percent: ``0.2500 (25.00%)``, a small one with two
    significant digits in both (``0.000040 (0.0040%)``); ``missing`` for None or NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return missing
    return f"{fmt_number(v, least=4, most=8)} ({fmt_percent(v)})"


def fmt_interval(lo, hi, *, least: int = 4, most: int = 8) -> str:
    """An interval as ``[lo, hi]``, each end as :func:`fmt_number` writes it."""
    return f"[{fmt_number(lo, least=least, most=most)}, {fmt_number(hi, least=least, most=most)}]"


def fmt_count(v, *, thousands: bool = False) -> str:
    """A count as an integer (a float rounded): ``fmt_count(12.0) == "12"``,
    ``fmt_count(12345, thousands=True) == "12,345"``; ``MISSING`` for None or NaN."""
    if v is None or math.isnan(float(v)):
        return MISSING
    if not math.isfinite(float(v)):
        return str(float(v))
    n = int(round(float(v)))
    return f"{n:,d}" if thousands else str(n)


def fmt_significant(v, digits: int = 6) -> str:
    """``v`` to ``digits`` significant digits, trailing zeros dropped (Python's general
    format): ``fmt_significant(0.95) == "0.95"``, ``fmt_significant(1234.5, 3) ==
    "1.23e+03"``, ``fmt_significant(1e-05) == "1e-05"``; for a parameter, an axis tick, a
    cost whose scale is not known; ``MISSING`` for None or NaN."""
    if v is None or math.isnan(float(v)):
        return MISSING
    return f"{float(v):.{int(digits)}g}"


def fmt_compact(n) -> str:
    """A large count in a narrow label: ``999``, ``1.2k``, ``35k``, ``1.5M``;
    ``MISSING`` for None or NaN."""
    if n is None or math.isnan(float(n)):
        return MISSING
    n = int(n)
    if n >= 10**6:
        return f"{fmt_number(n / 1e6, least=1, most=1)}M"
    if n >= 10**4:
        return f"{fmt_count(n / 1e3)}k"
    return f"{fmt_number(n / 1e3, least=1, most=1)}k" if n >= 10**3 else str(n)


def fmt_seconds(v) -> str:
    """A duration in seconds, to a tenth: ``fmt_seconds(12.34) == "12.3 s"``."""
    return f"{fmt_number(v, least=1, most=1)} s"


# ====================================================================== lines
def dataset_line(dataset) -> str:
    """The one line that names a dataset in the terminal: ``dataset: NAME (VERSION)``
    and ``, filter: ...`` when a task filter was applied. ``dataset`` is the recorded
    dict (``{"name", "version", "filter"}``, as ``metrics.json`` holds it) or a
    :class:`~arcnb.data.Dataset`. Printable: a name with control characters is shown
    escaped."""
    get = dataset.get if isinstance(dataset, dict) else (lambda k: getattr(dataset, k, None))
    line = f"dataset: {get('name')} ({get('version')})"
    if get("filter"):
        line += f", filter: {get('filter')}"
    return printable(line)
