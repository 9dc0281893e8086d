"""Figures of the memorisation and invariance probes (:mod:`arcnb.probes`): the score
under each view with its interval, the drops, consistency and robustness per probe,
the proxy score against the true one, and the outputs a probe loses. Each takes runs
opened by :func:`arcnb.open` (or returned by :func:`arcnb.evaluate.evaluate`) and
``ax=None``, and returns the Axes (the gallery returns its Figure)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ParameterError
from ..probes import PROBE_NAMES
from ..stats import bootstrap_ci
from .galleries import pairs_image
from .palette import axes_or_new
from .pixelfont import plain_label

__all__ = ["probe_scores", "probe_drops", "probe_consistency", "proxy_vs_true",
           "probe_gallery", "lost_outputs"]

#: How each probe is drawn (colour) and what its views are called on an axis.
_COLORS = dict(zip(PROBE_NAMES, ("C0", "C1", "C2", "C4", "C5"), strict=True))


def _runs(runs) -> list:
    return list(runs) if isinstance(runs, (list, tuple)) else [runs]


def _labels(runs, labels) -> list[str]:
    if labels is None:
        return [str(getattr(r, "label", "") or f"run {i + 1}") for i, r in enumerate(runs)]
    labels = [str(x) for x in labels]
    if len(labels) != len(runs):
        raise ParameterError(f"{len(labels)} labels for {len(runs)} runs")
    return labels


def _short(probe: str, view: str, k: int) -> str:
    """A view's name on an axis: the transform for dihedral, ``perm k`` for colours."""
    if probe.startswith("task-id"):
        return probe.rsplit("-", 1)[1] + " id"
    if probe == "colors":
        return f"perm {k + 1}"
    base = view.split("+", 1)[0]
    return base.replace("_", " ") + (" + perm" if probe == "dihedral+colors" else "")


def _table(run):
    table = getattr(run, "probe_table", None)
    if table is None or not len(table):
        raise ParameterError(f"{getattr(run, 'label', 'the run')} has no probes (evaluate it "
                             "with probe=...)")
    return table


def probe_scores(run, *, ax=None, n_boot: int = 1000, seed: int = 0):
    """pass@2 under each view of each probe (a point with its 95 % bootstrap interval
    over tasks), beside the plain run's (a line and a band). Returns the Axes."""
    table = _table(run)
    views = [(p, v) for p, rows in table.groupby("probe", sort=False)
             for v in rows["view"].drop_duplicates()]
    ax = axes_or_new(ax, figsize=(max(3.4, 0.22 * len(views) + 1.6), 2.8))
    per_task = table.groupby(["probe", "view", "task_id"], sort=False)[
        ["plain_pass@2", "pass@2"]].mean()
    plain = per_task.xs(views[0], level=("probe", "view"))["plain_pass@2"].to_numpy(float)
    lo, hi = bootstrap_ci(plain, n_boot=n_boot, seed=seed)
    ax.axhspan(lo, hi, color="0.85", lw=0, label="plain run, 95% interval")
    ax.axhline(float(np.mean(plain)), color="0.3", lw=1)
    ticks, seen = [], set()
    counters: dict[str, int] = {}
    for x, (p, v) in enumerate(views):
        y = per_task.xs((p, v), level=("probe", "view"))["pass@2"].to_numpy(float)
        lo, hi = bootstrap_ci(y, n_boot=n_boot, seed=seed)
        m = float(np.mean(y))
        ax.errorbar(x, m, yerr=[[m - lo], [hi - m]], fmt="o", ms=3, capsize=2,
                    color=_COLORS.get(p, "C7"), label=None if p in seen else p)
        seen.add(p)
        k = counters.get(p, 0)
        counters[p] = k + 1
        ticks.append(_short(p, v, k))
    ax.set_xticks(range(len(views)), [plain_label(t) for t in ticks], rotation=90, fontsize=6)
    ax.set_xlim(-0.7, len(views) - 0.3)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("pass@2 under the view")
    ax.legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def probe_drops(runs, *, labels: Sequence[str] | None = None, ax=None):
    """The drop (plain pass@2 minus pass@2 under the probe) of each probe with its 95 %
    paired interval, one bar per run and probe. Returns the Axes."""
    runs = _runs(runs)
    labels = _labels(runs, labels)
    probes = [p for p in _COLORS if any(p in r.probes for r in runs)]
    if not probes:
        raise ParameterError("no run has probes (evaluate it with probe=...)")
    ax = axes_or_new(ax, figsize=(3.6, max(1.6, 0.32 * len(probes) * len(runs) + 0.9)))
    h = 0.8 / len(runs)
    for j, (run, label) in enumerate(zip(runs, labels)):
        ys, ds, errs = [], [], []
        for i, p in enumerate(probes):
            n = run.probes.get(p)
            if not n or n.get("drop") is None or n["drop"] != n["drop"]:
                continue
            lo, hi = n["drop_ci95"]
            ys.append(i + (j - (len(runs) - 1) / 2) * h)
            ds.append(n["drop"])
            errs.append([n["drop"] - lo, hi - n["drop"]])
        if ys:
            ax.barh(ys, ds, height=h * 0.9, xerr=np.array(errs).T, capsize=2,
                    color=f"C{j}", alpha=0.85, label=plain_label(label),
                    error_kw={"lw": 0.8})
            ax.scatter(ds, ys, marker="|", s=40, color=f"C{j}", zorder=3)  # a 0 shows too
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_yticks(range(len(probes)), probes, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("drop in pass@2 (plain minus probed)")
    if len(runs) > 1:
        ax.legend(fontsize=6, frameon=False, loc="best")
    return ax


def probe_consistency(run, *, ax=None):
    """Per probe: the consistency (answers the same under every view) and the share of
    solved outputs robustly solved (solved under every view). Returns the Axes."""
    probes = [p for p in _COLORS if p in run.probes]
    if not probes:
        raise ParameterError(f"{getattr(run, 'label', 'the run')} has no probes")
    ax = axes_or_new(ax, figsize=(3.4, 2.4))
    x = np.arange(len(probes))
    cons = [run.probes[p].get("consistency") for p in probes]
    rob = [run.probes[p].get("robustly_solved") for p in probes]
    nan = float("nan")
    ax.bar(x - 0.2, [nan if c is None else c for c in cons], width=0.38, color="C0",
           label="consistent answers")
    ax.bar(x + 0.2, [nan if r is None else r for r in rob], width=0.38, color="C2",
           label="solved outputs solved under every view")
    for xi, r in zip(x, rob):
        if r is None or r != r:
            ax.text(xi + 0.2, 0.02, "none solved", rotation=90, fontsize=6, ha="center",
                    va="bottom", color="0.35")
    ax.set_xticks(x, probes, fontsize=7, rotation=20)
    ax.set_ylim(0, 1.25)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("share of test outputs")
    ax.legend(fontsize=6, frameon=False, loc="upper left", ncols=1)
    return ax


def proxy_vs_true(runs, *, labels: Sequence[str] | None = None, ax=None):
    """Per run: the leave-one-demonstration-out proxy pass@2 (x) against the true pass@2
    on the same tasks (y), each with its 95 % interval; on the diagonal the proxy is
    calibrated. Returns the Axes."""
    runs = _runs(runs)
    labels = _labels(runs, labels)
    pts = [(r.proxy, lab) for r, lab in zip(runs, labels) if r.proxy.get("true_pass@2")
           is not None]
    if not pts:
        raise ParameterError("no run has a proxy score beside a true one (evaluate it with "
                             "proxy=True on a dataset with truth)")
    ax = axes_or_new(ax, figsize=(3.0, 3.0))
    top = 0.0
    for j, (p, lab) in enumerate(pts):
        x, y = p["pass@2"], p["true_pass@2"]
        (xl, xh), (yl, yh) = p["ci95"], p["true_ci95"]
        ax.errorbar(x, y, xerr=[[x - xl], [xh - x]], yerr=[[y - yl], [yh - y]], fmt="o",
                    ms=4, capsize=2, color=f"C{j}", label=plain_label(lab))
        top = max(top, xh, yh)
    top = min(1.0, max(0.1, top * 1.15))
    ax.plot([0, top], [0, top], color="0.5", lw=0.8, ls="--", label="proxy = true")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("proxy pass@2 (demonstrations held out)")
    ax.set_ylabel("true pass@2")
    ax.legend(fontsize=6, frameon=False, loc="upper left")
    return ax


def lost_outputs(run, probe: str | None = None):
    """The test outputs the plain run solves and a probe's view does not: one row per
    output (its first such view), with ``probe``, ``view``, ``task_id``,
    ``test_index``."""
    table = _table(run)
    if probe is not None:
        table = table[table["probe"] == probe]
    lost = table[(table["plain_pass@2"] > 0) & (table["pass@2"] < table["plain_pass@2"])]
    return lost.drop_duplicates(["task_id", "test_index"]).reset_index(drop=True)


def probe_gallery(run, probe: str | None = None, *, max_items: int = 24,
                  ncols: int | None = None, title: str | None = None):
    """The outputs solved plainly but lost under a probe (:func:`lost_outputs`): the
    truth, the answer under the view (mapped back) and their difference. Returns the
    Figure."""
    lost = lost_outputs(run, probe).head(max_items)
    from .figures import new_subplots  # matplotlib only at the first drawing

    fig, ax = new_subplots(figsize=(6.0, 1.2 + 1.2 * max(1, -(-len(lost) // 4))))
    ax.set_axis_off()
    if not len(lost):
        ax.text(0.5, 0.5, "no output the plain run solves is lost under a probe",
                ha="center", va="center", fontsize=8)
        return fig
    preds: dict = {}
    pairs, labels = [], []
    for row in lost.itertuples(index=False):
        p = row.probe
        if p not in preds:
            preds[p] = run.probe_predictions(p)
        answer = preds[p][row.view].get(row.task_id, int(row.test_index))
        truth = run.dataset[row.task_id].test[int(row.test_index)].output
        pairs.append((truth, answer[0] if answer else None))
        labels.append(f"{row.task_id}#{int(row.test_index)} {p}")
    image = pairs_image(pairs, labels, ncols=ncols or min(4, len(pairs)), title=title)
    ax.imshow(image, interpolation="nearest")
    return fig
