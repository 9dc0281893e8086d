"""arcnb.html, HTML's one home: escaping, tables, notes, headings, whole pages and the
check that a page loads nothing remote and runs no script."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

from arcnb.errors import ArcnbError
from arcnb.html import CSP, check_self_contained, escape, heading, note, page, table

HOSTILE = "<script>alert(1)</script>\u202egnp.exe\x1b[31m\"'&"


def test_escape_leaves_no_markup_no_control_and_no_direction_override():
    out = escape(HOSTILE)
    assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
    assert "\u202e" not in out and "\x1b" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out
    assert "\\u202e" in out.lower() or "u+202e" in out.lower()  # shown, not obeyed


def test_a_table_escapes_every_cell_and_shows_small_values_with_two_digits():
    df = pd.DataFrame({HOSTILE: ["<b>x</b>", "y"], "pass@2": [0.00004, float("nan")],
                       "n": [3, 4]})
    html = table(df, caption=HOSTILE)
    assert "<script>" not in html and "<b>x</b>" not in html and "\u202e" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert ">0.000040<" in html and ">0.0000<" not in html  # 0.00004 keeps 2 digits
    assert ">NaN<" in html  # an empty denominator is NaN, never 0
    assert ">0.2500<" in table(pd.DataFrame({"v": [0.25]}))  # at least 4 decimals


def test_a_long_table_says_how_many_rows_it_leaves_out():
    html = table(pd.DataFrame({"v": range(250)}), max_rows=200)
    assert html.count("<tr") == 201 and ">199<" in html and ">200<" not in html
    assert "50 more rows not shown." in html


def test_notes_and_headings_are_escaped():
    assert "<script>" not in note(HOSTILE, note_id=HOSTILE)
    h = heading(HOSTILE, "a\"b")
    assert h.startswith("<h2 id=\"a&quot;b\">") and "<script>" not in h


def test_a_page_carries_the_policy_and_refuses_what_could_load_or_run():
    text = page(HOSTILE, "<p>src=//example.com is only text</p>")
    assert f"content=\"{CSP}\"" in text and "script-src 'none'" in CSP
    assert "<script>" not in text.split("</title>")[0]
    for bad in ("<script>1</script>", "<img src='https://example.com/x.png'>",
                "<a href=' javascript:alert(1)'>x</a>", "<img src='//host/x'>",
                "<iframe src='http://x'></iframe>"):
        with pytest.raises(ArcnbError, match="internal error"):
            check_self_contained(bad)
    check_self_contained("<img src='data:image/png;base64,AAAA'><a href='#top'>t</a>")


def test_table_notes_a_cut_only_when_rows_are_left_out_and_prose_reads_from_the_left():
    import re

    df = pd.DataFrame({"rule": ["votes", "order", "first"], "pass@1": [0.5, 0.25, 0.0],
                       "words": ["a tie broken at random", None, "x"],
                       "written": ["0.6667 [0.4000, 0.9000]", "NaN", "12.5%"]})
    whole = table(df)
    assert "more rows not shown" not in whole  # never "0 more rows not shown."
    assert "1 more rows not shown." in table(df, max_rows=2)
    rows = re.findall(r"<tr>(.*?)</tr>", whole.split("<tbody>")[1], flags=re.S)
    assert len(rows) == 3
    for r in rows:  # words from the left, numbers on the right (the page's default)
        cells = re.findall(r"<td( class='arcnb-text')?>", r)
        # a number written as text (with its interval) stays with the numbers
        assert cells == [" class='arcnb-text'", "", " class='arcnb-text'", ""]


def test_ids_written_in_digits_read_from_the_left_and_a_missing_text_is_nan():
    """A task id of digits only (``45737921``) is an id, aligned as the ids beside it,
    not as a number; a missing text (None) is written NaN, the one spelling of a missing
    value (it showed as ``None``)."""
    import re

    df = pd.DataFrame({"task_id": ["45737921"], "model": [None], "p": [0.5]})
    cells = re.findall(r"<td( class='arcnb-text')?>([^<]*)</td>", table(df))
    assert cells == [(" class='arcnb-text'", "45737921"), ("", "NaN"), ("", "0.5000")]


# ---------------------------------------------------------------- one stylesheet
#: A CSS rule: a selector, then ``{property: value; ...}`` (``.x{display:block}``,
#: ``#id .t3 { color: #555 }``).
_CSS_RULE = re.compile(r"[\w\])*>~+.#-]\s*\{\s*-?[a-z][a-z-]*\s*:\s*[^{};:]+"
                       r"(?:;\s*-?[a-z][a-z-]*\s*:\s*[^{};]+)*;?\s*\}")


def stylesheets(source: str) -> list[str]:
    """Where ``source`` (a module's text) holds CSS: a string with a CSS rule (an
    f-string's literal parts, its fields as ``X``; docstrings are prose), ``<style``, or a
    module's constant named for a stylesheet (``_CSS``, ``PAGE_CSS``)."""
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        text = None
        if id(node) in docs:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        if text is not None:
            if _CSS_RULE.search(text):
                found.append(f"line {node.lineno}: a CSS rule {_CSS_RULE.search(text).group()!r}")
            if "<style" in text.lower():
                found.append(f"line {node.lineno}: <style")
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        for t in targets:
            if isinstance(t, ast.Name) and "css" in t.id.lower():
                found.append(f"line {node.lineno}: a stylesheet named {t.id}")
    return found


def test_stylesheets_finds_rules_style_elements_and_css_names():
    src = '''
_CSS = ".a{display:flex;gap:4px}"
x = f"#{uid}s{n}:checked~.view .t{n}{{display:block}}"
y = "<STYLE>"
def f():
    """Prose: {outcome: median}, .x{display:none}."""
    css = page_css()
ok = ("\\\\begin{table}[ht]", "{name}: {value}", '{"a": 1}', "f(x) {y}", "a {b: c")
'''
    found = stylesheets(src)
    assert len(found) == 4 and sum("CSS rule" in f for f in found) == 2


def test_no_module_but_html_holds_css():
    """The page look is :data:`arcnb.html.PAGE_CSS` and the replay player's
    :data:`arcnb.html.REPLAY_CSS` (through :func:`arcnb.html.replay_css`): no other module
    of arcnb holds a stylesheet, a CSS rule or a ``<style>`` element (the replay carried
    a second stylesheet of its own)."""
    root = Path(__file__).resolve().parents[1] / "arcnb"
    offenders = [f"arcnb/{p.relative_to(root).as_posix()}: {f}" for p in sorted(root.rglob("*.py"))
                 if p.relative_to(root).as_posix() != "html.py"
                 for f in stylesheets(p.read_text(encoding="utf-8"))]
    assert offenders == []
    assert stylesheets((root / "html.py").read_text(encoding="utf-8"))  # the test sees CSS
