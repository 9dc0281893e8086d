"""The explorer's ipywidgets browser (ipywidgets is imported only when a widget is
built)."""
from __future__ import annotations

from contextlib import contextmanager


from ..html import escape
from ..errors import ExploreError

from .state import ANY_CATEGORY, SELECTION_LABELS


# ====================================================================== widget
def _option_labels(ex) -> list:
    cat = ex.category_mask(ex.category)
    opts = []
    for key, lab in SELECTION_LABELS.items():
        try:
            n = int((ex.selection_mask(key) & cat).sum())
        except ExploreError:
            continue
        opts.append((f"{lab} ({n})", key))
    return opts


def _category_options(ex) -> list:
    sel = ex.selection_mask()
    opts = [(f"{ANY_CATEGORY} ({int(sel.sum())})", ANY_CATEGORY)]
    for c in ex.categories:
        opts.append((f"{c} ({int(sel[ex._categories[c]].sum())})", c))
    return opts


def build_widget(ex):
    """The ipywidgets browser of the explorer ``ex``: its controls, wired to it."""
    import ipywidgets as W

    auto = W.Layout(width="auto")
    w = {
        "prev": W.Button(description="◀ previous", layout=auto, tooltip="previous output"),
        "next": W.Button(description="next ▶", layout=auto, tooltip="next output"),
        "index": W.IntSlider(description="output", min=1, max=max(1, len(ex)), value=1,
                             continuous_update=False, layout=W.Layout(width="340px")),
        "search": W.Text(placeholder="task id, then Enter", description="go to",
                         continuous_update=False, layout=W.Layout(width="260px")),
        "select": W.Dropdown(description="show", options=[("all", "all")], value="all",
                             layout=W.Layout(width="260px")),
        "near": W.FloatSlider(description="near miss ≥", min=0.0, max=1.0, step=0.01,
                              value=ex.near_miss, continuous_update=False,
                              readout_format=".2f", layout=W.Layout(width="300px"),
                              style={"description_width": "initial"}),
        "category": W.Dropdown(description="category", options=[(ANY_CATEGORY, ANY_CATEGORY)],
                               value=ANY_CATEGORY, layout=W.Layout(width="320px")),
        "attempt": W.Dropdown(description="attempt",
                              options=[("best", "best")] + [(f"attempt {j}", j) for j in
                                                            range(1, ex._max_attempts + 1)],
                              value="best", layout=W.Layout(width="200px")),
        "values": W.Checkbox(description="show values", value=ex.values, indent=False,
                             layout=auto),
        "info": W.HTML(),
        "image": W.Image(format="png", layout=W.Layout(max_width="100%", height="auto",
                                                         align_self="flex-start")),
        "status": W.HTML(),
    }
    if not ex.runs:
        for name in ("select", "near", "attempt"):
            w[name].disabled = True
    if not ex._order:
        w["category"].disabled = True
    ex._w = w

    def guarded(fn):
        def handler(change):
            if ex._syncing:
                return
            try:
                fn(change)
            except ExploreError as exc:
                ex.message = str(exc)
                ex._refresh()
        return handler

    w["prev"].on_click(lambda _b: guarded(lambda c: ex.prev())(None))
    w["next"].on_click(lambda _b: guarded(lambda c: ex.next())(None))
    w["index"].observe(guarded(lambda c: ex.go(int(c["new"]) - 1)), names="value")
    w["search"].observe(guarded(lambda c: ex.go(c["new"]) if c["new"].strip() else None),
                        names="value")
    w["select"].observe(guarded(lambda c: ex.configure(select=c["new"])), names="value")
    w["near"].observe(guarded(lambda c: ex.configure(near_miss=c["new"])), names="value")
    w["category"].observe(guarded(lambda c: ex.configure(
        category=None if c["new"] == ANY_CATEGORY else c["new"])), names="value")
    w["attempt"].observe(guarded(lambda c: ex.configure(attempt=c["new"])), names="value")
    w["values"].observe(guarded(lambda c: ex.configure(values=c["new"])), names="value")
    rows = [W.HBox([w["prev"], w["next"], w["index"], w["search"]]),
            W.HBox([w["select"], w["near"], w["category"]]),
            W.HBox([w["attempt"], w["values"]]), w["info"], w["status"], w["image"]]
    box = W.VBox(rows)
    box.add_class("arcnb-explore")
    return box


@contextmanager
def _quiet(ex):
    ex._syncing = True
    try:
        yield
    finally:
        ex._syncing = False


def sync_widget(ex, w: dict, *, filters: bool) -> None:
    """Push the explorer's state into the widgets, then redraw the image and numbers."""
    with _quiet(ex):
        n = len(ex)
        if filters:
            w["select"].options = _option_labels(ex)
            w["select"].value = ex.select
            w["category"].options = _category_options(ex)
            cat = ex.category if isinstance(ex.category, str) else None
            w["category"].value = cat if cat in ex._categories else ANY_CATEGORY
            w["near"].value = ex.near_miss
            w["attempt"].value = ex.attempt if ex.attempt == "best" or \
                ex.attempt <= ex._max_attempts else "best"
            w["values"].value = ex.values
        if w["index"].max != max(1, n):
            w["index"].max = max(1, n)
        w["index"].value = (ex.position or 0) + 1
        w["index"].disabled = n <= 1
        w["prev"].disabled = w["next"].disabled = n <= 1
    w["image"].value = ex.png()
    w["info"].value = ex.info_html()
    w["status"].value = (f"<div class='arcnb-explore-status'>{escape(ex.message)}</div>"
                         if ex.message else "")
