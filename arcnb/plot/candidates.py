"""Figures of a candidate pool (:func:`arcnb.candidates.candidates`), for papers: where
the right candidate ranks (:func:`rank_histogram`), coverage beside pass@2 per category
(:func:`coverage_vs_pass`), the reliability of the top candidate's vote share
(:func:`reliability_diagram`), pass@K against K per ranking rule
(:func:`pass_at_k_by_rule`), the candidates of one output in rank order
(:func:`candidate_strip`), and for pools with a budget axis or demonstration checks: the
anytime curve per ranking rule (:func:`anytime_curve`), the verifier's confusion table
(:func:`verifier_confusion`) and the first refinement step that is right
(:func:`first_right_step_histogram`).

Each takes the analysis and ``ax=None`` (a new single-column figure in the paper style)
and returns the Axes.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .palette import grid_image, pyplot
from .paper import figsize, paper_style
from .pixelfont import plain_label
from ..text import fmt_count, fmt_interval, fmt_number, fmt_significant

__all__ = ["rank_histogram", "coverage_vs_pass", "reliability_diagram", "pass_at_k_by_rule",
           "candidate_strip", "anytime_curve", "verifier_confusion",
           "first_right_step_histogram"]


@contextmanager
def _axes(ax, aspect=0.62):
    """The given Axes, or a new single-column figure drawn in the paper style."""
    if ax is not None:
        yield ax
        return
    with paper_style():
        _, new = pyplot().subplots(figsize=figsize(1, aspect))
        yield new


def rank_histogram(analysis, *, rule: str | None = None, max_rank: int = 10, ax=None):
    """Test outputs by the rank of their right candidate under ``rule`` (default: the
    analysis's first rule): ranks 1 ... ``max_rank``, then ``>max_rank``, then
    ``absent`` (the right answer is not among the candidates). Under random ties a right
    candidate tied with others counts equally at each of their ranks (expected counts,
    as ``rank_of_correct``)."""
    rule = rule or analysis.summary["rank_by"]
    o = analysis.outputs
    ranks = o[f"rank_{rule}"].astype("float").to_numpy()
    tied = (o[f"tied_{rule}"].astype("float").to_numpy() if f"tied_{rule}" in o
            else np.ones(ranks.size))
    ok = np.isfinite(ranks)
    first, t = ranks[ok].astype(int), tied[ok].astype(int)
    deepest = int((first + t - 1).max()) if first.size else 1
    top = min(max_rank, deepest)
    per_rank = np.zeros(deepest + 2)
    np.add.at(per_rank, first, 1.0 / t)
    np.add.at(per_rank, first + t, -1.0 / t)
    per_rank = np.cumsum(per_rank)
    counts = [float(per_rank[r]) for r in range(1, top + 1)]
    labels = [str(r) for r in range(1, top + 1)]
    if deepest > top:
        counts.append(float(per_rank[top + 1:deepest + 1].sum()))
        labels.append(f">{top}")
    counts.append(float((~ok).sum()))
    labels.append("absent")
    with _axes(ax) as ax:
        colours = ["C0"] * (len(counts) - 1) + ["0.6"]
        bars = ax.bar(range(len(counts)), counts, color=colours)
        for b, c in zip(bars, counts):
            ax.annotate(fmt_number(c, least=1) if c != int(c) else fmt_count(c),
                        (b.get_x() + b.get_width() / 2, c), ha="center", va="bottom",
                        fontsize="small", xytext=(0, 1), textcoords="offset points")
        ax.set_xticks(range(len(counts)), labels)
        ax.set_xlabel(f"rank of the right candidate ({plain_label(rule)})")
        ax.set_ylabel("test outputs")
        ax.set_ylim(0, max(counts) * 1.15 + 1)
    return ax


def coverage_vs_pass(analysis, *, ax=None):
    """Per category: coverage (is the right answer among the candidates?) beside pass@2
    under the first rule, with 95 % bootstrap intervals; the distance between the two is
    what a better ranking rule could gain."""
    t = analysis.by_category
    with _axes(ax, aspect=min(1.6, max(0.5, 0.07 * len(t) + 0.25))) as ax:
        if t.empty:
            ax.text(0.5, 0.5, "no categories", ha="center", va="center",
                    transform=ax.transAxes)
            return ax
        y = np.arange(len(t))
        h = 0.38
        for off, col, name in ((-h / 2, "coverage", "coverage"),
                               (h / 2, "pass@2", f"pass@2 ({analysis.summary['rank_by']})")):
            v = t[col].to_numpy(float)
            lo = t[f"{col}_ci_low"].to_numpy(float)
            hi = t[f"{col}_ci_high"].to_numpy(float)
            ax.barh(y + off, v, height=h, label=plain_label(name),
                    xerr=[np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)],
                    error_kw={"elinewidth": 0.7, "capsize": 1.5})
        ax.set_yticks(y, [f"{plain_label(c)} ({n})" for c, n in zip(t["category"], t["n_tasks"])])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("fraction (mean over tasks)")
        ax.legend(loc="lower right", fontsize="small")
    return ax


def reliability_diagram(analysis, *, ax=None):
    """Fraction right against the top candidate's vote share, per vote-share bin
    (Wilson 95 % intervals, point size by the bin's outputs), the diagonal of perfect
    calibration, and the ECE with its bootstrap interval."""
    rel = analysis.reliability
    rel = rel[rel["n"] > 0]
    with _axes(ax, aspect=0.9) as ax:
        ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=0.8)
        if len(rel):
            x, y = rel["confidence"].to_numpy(float), rel["accuracy"].to_numpy(float)
            ax.errorbar(x, y, yerr=[np.clip(y - rel["ci_low"], 0, None),
                                    np.clip(rel["ci_high"] - y, 0, None)],
                        fmt="none", ecolor="C0", elinewidth=0.8, capsize=2)
            sizes = 12 + 60 * rel["n"].to_numpy(float) / rel["n"].max()
            ax.scatter(x, y, s=sizes, color="C0", zorder=3)
        s = analysis.summary
        lo, hi = s["ece_ci95"]
        ax.text(0.03, 0.95, f"ECE {fmt_number(s['ece'])} {fmt_interval(lo, hi, least=3)}",
                transform=ax.transAxes, va="top", fontsize="small")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("top candidate's vote share")
        ax.set_ylabel("fraction right")
    return ax


def pass_at_k_by_rule(analysis, *, ax=None):
    """pass@K against K for every ranking rule, with the coverage (the ceiling of every
    rule) as a dashed line; K on a log scale when it goes past 20."""
    pak = analysis.pass_at_k
    with _axes(ax) as ax:
        for rule, g in pak.groupby("rule", sort=False):
            g = g.sort_values("K")
            ax.plot(g["K"], g["pass@K"], marker="o", markersize=2.5, label=plain_label(rule))
        cov = analysis.summary["coverage"]
        ax.axhline(cov, color="0.4", linestyle="--", linewidth=0.8)
        ax.annotate(f"coverage {fmt_number(cov)}", (1, cov), xycoords=("axes fraction", "data"),
                    ha="right", va="bottom", fontsize="small", color="0.3")
        if len(pak) and pak["K"].max() > 20:
            ax.set_xscale("log")
        ax.set_xlabel("K (top-ranked candidates)")
        ax.set_ylabel("pass@K")
        ax.set_ylim(0, min(1.0, max(cov, float(pak["pass@K"].max()) if len(pak) else 0) * 1.15
                       + 0.02))
        ax.legend(fontsize="small")
    return ax


def candidate_strip(analysis, task_id: str, test_index: int = 0, *, rule: str | None = None,
                    max_items: int = 8, ax=None):
    """The candidates of one test output in rank order under ``rule`` (default: the
    analysis's first rule), at most four to a row, each titled with its rank and votes;
    the right one is framed in green and titled "right". At most ``max_items`` are drawn
    (the title says how many there are). Ranks are the listing order (ties by first
    appearance)."""
    rule = rule or analysis.summary["rank_by"]
    items = analysis.grids(task_id, test_index, rule=rule)
    shown = items[:max_items]
    per_row = max(1, min(len(shown), _STRIP_ROW))
    n_rows = -(-max(1, len(shown)) // per_row)
    with _axes(ax, aspect=0.12 + 0.3 * n_rows) as ax:
        ax.set_axis_off()
        ax.set_title(f"{plain_label(task_id)} output {test_index}: {len(items)} candidates "
                     f"by {plain_label(rule)}", fontsize="small")
        if not shown:
            ax.text(0.5, 0.5, "no candidates", ha="center", va="center",
                    transform=ax.transAxes)
            return ax
        fig = ax.figure
        box = ax.get_position()
        w, h = box.width / per_row, box.height / n_rows
        for j, (grid, votes, right) in enumerate(shown):
            r, c = divmod(j, per_row)
            sub = fig.add_axes([box.x0 + c * w + w * 0.1, box.y0 + (n_rows - 1 - r) * h,
                                w * 0.8, h * 0.6])
            sub.imshow(grid_image(grid), interpolation="nearest")
            sub.set_xticks([])
            sub.set_yticks([])
            for spine in sub.spines.values():
                spine.set_visible(True)
                spine.set_color("#2ca02c" if right else "0.6")
                spine.set_linewidth(2.5 if right else 0.6)
            sub.set_title(f"{j + 1}: {votes} vote{'s' if votes != 1 else ''}"
                          + (", right" if right else ""), fontsize="small")
    return ax


#: Candidates per row of :func:`candidate_strip` (their titles fit a single column).
_STRIP_ROW = 4


def _nothing(ax, words: str):
    ax.text(0.5, 0.5, words, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return ax


def anytime_curve(analysis, *, metric: str = "pass@1", ax=None):
    """``metric`` (``pass@1`` or ``pass@2``) against the number of draws ``n`` for every
    ranking rule (the exact expectation over subsets of ``n`` draws, see
    :mod:`arcnb.candidates`), the 95 % bootstrap band of ``votes``, and the coverage of
    ``n`` draws (the ceiling of every rule) as a dashed line; ``n`` on a log scale when it
    goes past 20."""
    t = analysis.anytime
    with _axes(ax) as ax:
        if t is None or t.empty:
            return _nothing(ax, "no budget axis in this pool")
        votes = t[t["rule"] == "votes"]
        for i, (rule, g) in enumerate(t.groupby("rule", sort=False)):
            ax.plot(g["n"], g[metric], label=plain_label(rule), color=f"C{i}",
                    linewidth=1.6 if rule == "votes" else 1.0)
            if rule == "votes" and f"{metric}_ci_low" in g:
                ax.fill_between(g["n"], g[f"{metric}_ci_low"], g[f"{metric}_ci_high"],
                                color=f"C{i}", alpha=0.2, linewidth=0)
        ax.plot(votes["n"], votes["coverage"], color="0.3", linestyle="--", linewidth=0.9,
                label="coverage (ceiling)")
        if t["n"].max() > 20:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(pyplot().FuncFormatter(lambda v, _: fmt_significant(v)))
        else:
            ax.xaxis.set_major_locator(pyplot().MaxNLocator(integer=True))
        axis = analysis.summary["anytime"]["axis"]
        ax.set_xlabel(f"draws n ({plain_label(axis)})")
        ax.set_ylabel(metric)
        tops = [votes[c] for c in ("coverage", f"{metric}_ci_high") if c in votes]
        top = float(np.nanmax(np.concatenate(tops))) if len(votes) else 1.0
        ax.set_ylim(0, min(1.0, top * 1.2 + 0.002))
        ax.legend(fontsize="small", loc="upper left")
    return ax


def verifier_confusion(analysis, *, ax=None):
    """Distinct candidates by whether they pass the demonstrations (rows) and whether
    they are right on the test (columns), with the verifier's precision, recall and
    overfit rate."""
    v = analysis.summary.get("verifier")
    with _axes(ax, aspect=0.8) as ax:
        if v is None:
            return _nothing(ax, "no demonstration checks in this pool")
        counts = np.array([[v["n_pass_right"], v["n_pass_wrong"]],
                           [v["n_fail_right"], v["n_fail_wrong"]]], float)
        ax.imshow(counts / max(counts.max(), 1), cmap="Blues", vmin=0, vmax=1.4)
        for (i, j), c in np.ndenumerate(counts):
            ax.text(j, i, f"{int(c)}", ha="center", va="center", fontsize="medium")
        ax.set_xticks([0, 1], ["right", "wrong"])
        ax.set_yticks([0, 1], ["passes", "fails"])
        ax.set_xlabel("on the test output")
        ax.set_ylabel("on the demonstrations")

        ax.set_title(f"precision {fmt_number(v['precision'], least=2)}, recall "
                     f"{fmt_number(v['recall'], least=2)}, overfit "
                     f"{fmt_number(v['overfit_rate'], least=2)}", fontsize="small")
    return ax


def first_right_step_histogram(analysis, *, ax=None):
    """Test outputs by the first refinement step whose answer is right, split into those
    that stay right to the last step (stable) and those that do not; ``never`` last."""
    s = analysis.summary
    with _axes(ax) as ax:
        if "first_right_step" not in s:
            return _nothing(ax, "no refinement steps in this pool")
        o = analysis.outputs
        steps = [str(x) for x in s["first_right_step"] if x != "never"]
        first = o["first_right_step"].map(lambda x: None if x is None or x != x else str(x))
        stable = [int(((first == k) & o["stable"]).sum()) for k in steps]
        other = [int(((first == k) & ~o["stable"]).sum()) for k in steps]
        x = np.arange(len(steps) + 1)
        ax.bar(x[:-1], stable, color="C2", label="stays right")
        ax.bar(x[:-1], other, bottom=stable, color="C3", label="changes later")
        never = s["first_right_step"]["never"]
        ax.bar(x[-1], never, color="0.6")
        ax.set_xticks(x, [*steps, "never"])
        ax.set_xlabel(f"first right {plain_label(s['step_axis'])}")
        ax.set_ylabel("test outputs")
        ax.set_ylim(0, max([never, *(a + b for a, b in zip(stable, other))]) * 1.15 + 1)
        ax.legend(fontsize="small")
    return ax
