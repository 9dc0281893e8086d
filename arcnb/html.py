"""HTML in one home: escaping, tables, notes, the page look (CSS), the
Content-Security-Policy, whole self-contained pages and the check that a page loads
nothing.

Every piece of HTML arcnb writes goes through here: the report sections' views, the
``_repr_html_`` of runs and results, the explorer's frame text, the report template
(its CSS and policy come from :data:`PAGE_CSS` and :data:`CSP`), ``index.html``,
``compare.html`` and ``sweep.html``. Every string from the user (task ids, paths,
category names, run labels) is escaped with :func:`escape`, so a task id such as
``<script>`` shows as text, never as markup.
"""
from __future__ import annotations

import html as _html
import math
import re

import pandas as pd

from .errors import ArcnbError, printable
from .text import MISSING, fmt_number

__all__ = ["escape", "data_value", "table", "note", "heading", "HTML",
           "PAGE_CSS", "CSP", "page", "check_self_contained", "style", "insert_contents"]


def escape(value) -> str:
    """``value`` as HTML text: markup characters escaped, quotes included (safe in an
    attribute)."""
    return _html.escape(printable(value, keep="\n\t"), quote=True)  # controls, bidi too


def data_value(v) -> str:
    """The exact float of a number cell's ``data-value`` attribute (``nan`` when missing)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    return repr(float(v))


def table(df, *, table_id: str | None = None, caption: str | None = None,
          index: bool = False, max_rows: int | None = 200, digits: int = 4,
          classes: str = "arcnb-table") -> str:
    """A DataFrame as an HTML table with every cell, header and index escaped
    (``DataFrame.to_html(escape=True)``). Floats show at least ``digits`` decimals, and
    a small value as many more as keep two significant digits (:func:`arcnb.text.fmt_number`:
    0.00004 is ``0.000040``, never ``0.0000``), NaN as ``NaN``; at most ``max_rows`` rows
    (a note says how many were left out)."""
    cut = max_rows is not None and len(df) > max_rows
    shown = _printable_frame(df.head(max_rows) if cut else df)
    fmt = (lambda x: MISSING if pd.isna(x) else fmt_number(x, least=digits, most=max(digits, 8)))
    text = shown.to_html(escape=True, index=index, na_rep=MISSING, float_format=fmt,
                         classes=classes, border=0,
                         table_id=table_id if table_id else None)
    text = _left_align_text(text, shown, index=index)
    out = []
    if caption:
        out.append(f"<p class='arcnb-note'>{escape(caption)}</p>")
    out.append(text)
    if cut:
        out.append(f"<p class='arcnb-note'>{len(df) - len(shown)} more rows not shown.</p>")
    return "\n".join(out)



#: A cell that is a number written as text (``0.6667 [0.4, 0.9]``, ``12.5%``, ``NaN``,
#: ``-3e-05``): aligned as numbers are, on the right. Digits alone written as text
#: (``45737921``) are an id, read from the left as the ids beside it are.
_NUMBER_TEXT = re.compile(r"^\s*(NaN|[-+]?\d[\d,]*(\.\d+|(\.\d+)?e[-+]?\d+|%|\.\d+%)"
                          r"(\s*\[[^\]]*\])?)\s*$")


def _left_align_text(text: str, df, *, index: bool) -> str:
    """``text`` (``df.to_html``) with the cells of ``df``'s text columns (words, ids,
    rules: any column holding a string that is not a number written out) marked ``arcnb-text``, so
    prose reads from the left while numbers stay aligned on the right."""
    cols = [i for i in range(df.shape[1])
            if any(isinstance(v, str) and not _NUMBER_TEXT.match(v)
                   for v in df.iloc[:, i].head(50))]
    if not cols or df.empty or df.columns.nlevels > 1:
        return text
    wanted = set(cols)

    def row(m):
        cells = iter(range(10 ** 9))
        return re.sub(r"<td>", lambda c: "<td class='arcnb-text'>" if next(cells) in wanted
                      else c.group(0), m.group(0))

    head, sep, body = text.partition("<tbody>")
    return head + sep + re.sub(r"<tr>.*?</tr>", row, body, flags=re.S) if sep else text


def _printable_frame(df):
    """``df`` with every text cell, column name and index label passed through
    :func:`arcnb.text.printable` (``to_html`` escapes markup only: a direction override or
    an escape sequence in a task id or a label would reach the page as it is)."""
    def clean(v):  # a missing text (None) is spelt as every missing value: NaN
        return printable(v, keep="\n\t") if isinstance(v, str) else (MISSING if v is None else v)

    out = df.rename(columns=clean, index=clean)
    # a missing value of a nullable column (pd.NA: a seed, a count) is spelt as every
    # other missing value, NaN, never <NA>
    nullable = [i for i, d in enumerate(out.dtypes) if isinstance(d, pd.api.extensions.ExtensionDtype)
                and not isinstance(d, (pd.StringDtype, pd.CategoricalDtype))]
    if nullable:
        out = out.copy()
        for i in nullable:
            col = out.iloc[:, i]
            out.isetitem(i, pd.Series([v if pd.notna(v) else MISSING for v in col],
                                      index=col.index, dtype=object))
    text = [i for i, d in enumerate(out.dtypes)
            if pd.api.types.is_object_dtype(d) or isinstance(d, pd.StringDtype)]
    if text:
        out = out.copy()
        for i in text:  # by position: column names may repeat
            out.isetitem(i, out.iloc[:, i].map(clean))
    return out

def note(text: str, *, note_id: str | None = None) -> str:
    """One escaped sentence (``class='arcnb-note'``)."""
    nid = f" id='{escape(note_id)}'" if note_id else ""
    return f"<p class='arcnb-note'{nid}>{escape(text)}</p>"


def heading(text: str, anchor: str, level: int = 2) -> str:
    """A section heading with an ``id`` (what the report's contents list links to)."""
    return f"<h{level} id=\"{escape(anchor)}\">{escape(text)}</h{level}>"


class HTML:
    """A minimal rich-display object (``text/html``) built from already-escaped HTML."""

    def __init__(self, text: str):
        self.text = text

    def _repr_html_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<HTML {len(self.text)} chars>"


#: The Content-Security-Policy of every page arcnb writes: no script, nothing remote;
#: images and fonts only as ``data:`` URIs, styles only inline.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
       "script-src 'none'; connect-src 'none'; object-src 'none'; frame-src 'none'; "
       "base-uri 'none'; form-action 'none'")

#: The look of arcnb's pages and of its tables and notes in JupyterLab and the reports.
PAGE_CSS = """\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;\
max-width:1200px;margin:0 auto;padding:0 1em;color:#111;line-height:1.45}
body.jp-Notebook{padding:0}
h1{font-size:1.6em}
.arcnb-scroll{overflow-x:auto;max-width:100%}
table.arcnb-table,.arcnb-page table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1em 0}
.arcnb-table td,.arcnb-table th,.arcnb-page td,.arcnb-page th{border:1px solid #ccc;\
padding:3px 8px;text-align:right}
.arcnb-table th,.arcnb-page th{background:#f3f3f3}
.arcnb-table .arcnb-text,.arcnb-page .arcnb-text,td.arcnb-text,th.arcnb-text,\
table.arcnb-table td.arcnb-text,table.arcnb-table th.arcnb-text{text-align:left}
.arcnb-note{color:#555;font-size:12px}
.arcnb-graded td,.arcnb-graded th{white-space:nowrap;font-size:12px;padding:3px 6px}
.arcnb-graded thead th{white-space:normal}
.arcnb-ci{color:#666;font-size:11px}
.arcnb-section img{max-width:100%;height:auto}
.jp-OutputArea-output{overflow-x:auto;min-width:0;max-width:100%}
.jp-OutputArea-child,.jp-OutputArea,.jp-Cell,.jp-Cell-outputWrapper{min-width:0;max-width:100%}
.jp-RenderedHTMLCommon{overflow-x:auto}
.jp-RenderedImage img{max-width:100%;height:auto}
.arcnb-contents{border:1px solid #ddd;background:#fafafa;padding:0.4em 1.2em;\
margin:0.5em 0 1em 0;display:inline-block}
.arcnb-contents ul{margin:0.2em 0;padding-left:0.2em;list-style:none}
.arcnb-contents p{margin:0.2em 0}
.arcnb-summary{font-size:15px;line-height:1.5;max-width:60em}
.arcnb-error{border:2px solid #c00;padding:0.5em 1em;background:#fff0f0}
"""

#: The look of the script-free replay player of a game recording (``arcnb.arc3.replay``):
#: a bar of radio buttons, one per step, coloured by what the step did, and the frame
#: and text of the checked one; :func:`replay_css` scopes it to one player.
REPLAY_CSS = (
    ".arcnb-replay{display:flex;flex-wrap:wrap;align-items:flex-start;max-width:1100px}"
    ".arcnb-replay>input{appearance:none;-webkit-appearance:none;flex:1 1 0;min-width:0;"
    "height:22px;margin:0;border:0;border-right:1px solid #fff;background:#d9d9d9;"
    "cursor:pointer}"
    ".arcnb-replay>input.k-uncounted{background:#eeeeee}"
    ".arcnb-replay>input.k-reset{background:#f6c28b}"
    ".arcnb-replay>input.k-lost{background:#f28b82}"
    ".arcnb-replay>input.k-level{background:#7bc96f}"
    ".arcnb-replay>input:checked{background:#0072B2}"
    ".arcnb-replay>input:focus-visible{outline:2px solid #000;outline-offset:1px}"
    ".arcnb-replay .ticks{flex-basis:100%;display:flex;justify-content:space-between;"
    "font-size:11px;color:#555;margin:2px 0 8px 0}"
    ".arcnb-replay .ticks label{cursor:pointer;text-decoration:underline dotted}"
    ".arcnb-replay .view{flex-basis:100%;display:flex;gap:16px;flex-wrap:wrap}"
    ".arcnb-replay .fr{display:none;width:384px;height:384px;image-rendering:pixelated;"
    "border:1px solid #999}"
    ".arcnb-replay .st{display:none;max-width:640px;font-size:13px}"
    ".arcnb-replay .st .why{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;"
    "border:1px solid #ddd;padding:6px;max-height:300px;overflow:auto;font-family:"
    "ui-monospace,monospace;font-size:12px}"
    ".arcnb-replay .st p{margin:0 0 6px 0}"
    ".arcnb-replay .noframe{display:none;width:384px;height:384px;border:1px dashed #999;"
    "align-items:center;justify-content:center;color:#555}")


def replay_css(uid: str, frames) -> str:
    """The stylesheet of one replay player, the element of id ``uid`` (a player of a
    page shows beside others in a notebook): :data:`REPLAY_CSS` scoped to it, and for
    each step ``n`` (its radio button ``#{uid}s{n}``) the rules that show its frame
    (``frames[n]``, a class selector such as ``.i3``; ``.nf``: no frame) and its text
    ``.t{n}`` while it is checked."""
    rules = "".join(f"#{uid}s{n}:checked~.view {show},#{uid}s{n}:checked~.view .t{n}"
                    "{display:block}" for n, show in enumerate(frames))
    return REPLAY_CSS.replace(".arcnb-replay", f"#{uid}") + rules


# a section heading: as nbconvert writes a markdown "##" heading, as heading() writes one
_H2 = re.compile(r"<h2\b[^>]*\bid=\"([^\"]+)\"[^>]*>(.*?)</h2>", re.S | re.I)


def insert_contents(body: str) -> str:
    """``body`` with a contents list (``<nav id="arcnb-contents">``) after its first
    heading, one link per section heading (``<h2>`` with an ``id``, as nbconvert
    writes markdown ``##`` headings). A page without sections is returned as it is."""
    items = []
    for m in _H2.finditer(body):
        text = re.sub(r"<a\b[^>]*class=\"anchor-link\"[^>]*>.*?</a>", "", m.group(2), flags=re.S)
        text = re.sub(r"<[^>]+>", "", text).strip()
        items.append(f"<li><a href=\"#{m.group(1)}\">{text}</a></li>")
    if not items:
        return body
    nav = ("<nav class=\"arcnb-contents\" id=\"arcnb-contents\"><p><b>Contents</b></p><ul>"
           + "".join(items) + "</ul></nav>")
    end = re.search(r"</h1>", body, re.I)
    if end is None:
        i = body.find("<main>")
        at = i + len("<main>") if i >= 0 else 0
    else:
        at = end.end()
    return body[:at] + nav + body[at:]


def page(title: str, body: str, *, css: str = "") -> str:
    """A whole self-contained page: the policy, the look, ``title`` (escaped) and
    ``body`` (already-escaped HTML); ``css``: rules a page adds to the look (a
    script-free player's, say). Checked with :func:`check_self_contained`."""
    text = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            f"<title>{escape(title)}</title><style>{PAGE_CSS}{_css(css)}</style></head>"
            f"<body class='arcnb-page'>{body}</body></html>\n")
    check_self_contained(text)
    return text


def _css(css: str) -> str:
    # CSS from arcnb's own modules, never from the user: still, it can't close the element
    if "<" in css:
        raise ArcnbError("internal error: a stylesheet holds '<'")
    return css


def style(css: str) -> str:
    """A ``<style>`` element of ``css`` for a fragment shown inside JupyterLab (a page
    takes its extra rules through :func:`page`'s ``css``)."""
    return f"<style>{_css(css)}</style>"


_URL_ATTRS = frozenset({"src", "href", "srcset", "action", "formaction", "poster", "data",
                        "background", "xlink:href", "cite", "longdesc", "ping", "manifest"})


def check_self_contained(body: str) -> None:
    """Refuse to write a page that could load a script or a remote resource.

    The page is parsed (``html.parser``): a ``<script>`` element, or an attribute that
    holds a URL (``src``, ``href``, ...) naming a host (``//host``) or a scheme other
    than ``data:`` (``https:``, ``javascript:``), is refused. Text is never looked at, so
    a category or a label containing ``src=//`` is harmless (it is escaped text)."""
    from html.parser import HTMLParser

    problems: list[str] = []

    class _Scan(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "script":
                problems.append("contains a <script> element")
            for name, value in attrs:
                if name in _URL_ATTRS and value and _remote_or_active(value):
                    problems.append(f"references {printable(value)[:80]!r} in <{tag} {name}>")

        handle_startendtag = handle_starttag

    scan = _Scan(convert_charrefs=True)
    scan.feed(body)
    scan.close()
    if problems:
        raise ArcnbError(f"internal error: the exported HTML {problems[0]}")


def _remote_or_active(url: str) -> bool:
    """Whether a URL attribute's value names a host or a scheme other than ``data:``
    (after the whitespace and control characters a browser strips)."""
    u = re.sub(r"[\x00-\x20\x7f]", "", url).replace("\\", "/").lower()
    if u.startswith("//"):
        return True
    m = re.match(r"([a-z][a-z0-9+.-]*):", u)
    return bool(m) and m.group(1) != "data"
