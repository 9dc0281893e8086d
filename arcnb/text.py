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
"""
from __future__ import annotations

__all__ = ["printable", "escape_char", "escape_latex", "LATEX_ESCAPES"]


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
