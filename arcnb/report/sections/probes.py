"""The report section of the memorisation and invariance probes and the proxy score
(:mod:`arcnb.probes`): shown only for a run evaluated with ``probe=`` or ``proxy=``."""
from __future__ import annotations

from math import nan

import pandas as pd

from ... import plot as P
from ...html import note, table
from ...probes import PROBE_NAMES
from ...text import MISSING, fmt_interval
from ..candidates import section_numbers
from .base import Figure, Section, section_names


#: The intervals of the section's tables: the column shown -> its two columns of numbers.
INTERVALS = {"drop 95% interval": ("drop ci95 low", "drop ci95 high"),
             "95% interval": ("ci95 low", "ci95 high"),
             "true 95% interval": ("true ci95 low", "true ci95 high")}


def _ends(v) -> dict:
    """An interval ``[low, high]`` as its two numbers (NaN when there is none)."""
    ok = isinstance(v, (list, tuple)) and len(v) == 2 and all(x is not None for x in v)
    return dict(zip(("low", "high"), (float(v[0]), float(v[1])) if ok else (nan, nan)))


def _named(v, prefix: str) -> dict:
    return {f"{prefix} {k}": x for k, x in _ends(v).items()}


def _interval(low, high) -> str:
    if low is None or high is None or low != low or high != high:
        return MISSING
    return fmt_interval(low, high, least=3, most=6)


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """A table of the section as it is shown: each interval's two columns of numbers
    become one column of text, in the place of the first."""
    out = df.copy()
    for name, (low, high) in INTERVALS.items():
        if low in out.columns:
            text = [_interval(a, b) for a, b in zip(out[low], out[high])]
            at = out.columns.get_loc(low)
            out = out.drop(columns=[low, high])
            out.insert(at, name, text)
    return out


class Probes(Section):
    """Memorisation and invariance probes: per probe the score under its views, the drop
    from the plain run with its 95 % paired interval, the consistency of the answers and
    the share of solved outputs solved under every view; the drops per structural
    category; the outputs solved plainly but lost under a probe; and the
    leave-one-demonstration-out proxy score beside the true one."""

    title = "Memorisation and invariance probes"
    anchor = "arcnb-probes"
    intro = ("The same tasks asked again rotated, reflected, recoloured or with the task "
             "identifier changed, every answer mapped back to the task's own frame. A model "
             "that reasons should barely notice; a large drop says its answers depend on "
             "the exact form it saw, which memorisation would explain but does not prove.")
    needs_truth = False
    optional = True

    def compute(self):
        run = self.run
        probes, proxy = getattr(run, "probes", {}), getattr(run, "proxy", {})
        probes = {p: probes[p] for p in sorted(probes, key=lambda p: (
            PROBE_NAMES.index(p) if p in PROBE_NAMES else len(PROBE_NAMES), p))}
        if not probes and not proxy:
            self.empty = "This run was evaluated without probes (arcnb evaluate --probe)."
            return
        if getattr(run, "results", None) is not None:  # numbered in one run's report
            self.title = f"{section_numbers(run, self.options)['Probes']}. {type(self).title}"
        rows = []
        for p, n in probes.items():
            rows.append({"probe": p, "views": n.get("n_views"),
                         "plain pass@2": n.get("plain_pass@2"), "pass@2": n.get("pass@2"),
                         "drop": n.get("drop"),
                         **_named(n.get("drop_ci95"), "drop ci95"),
                         "consistency": n.get("consistency"),
                         "robustly solved": n.get("robustly_solved"),
                         "forward passes": n.get("n_forward")})
        self.tables["probes"] = pd.DataFrame(rows)
        cats = [{"probe": p, "category": c, "tasks": v.get("n_tasks"),
                 "plain pass@2": v.get("plain_pass@2"), "pass@2": v.get("pass@2"),
                 "drop": v.get("drop"), **_named(v.get("drop_ci95"), "drop ci95")}
                for p, n in probes.items() for c, v in (n.get("categories") or {}).items()]
        self.tables["categories"] = pd.DataFrame(cats)
        if probes and run.probe_table is not None and getattr(run, "scored", True):
            self.tables["lost"] = P.lost_outputs(run)
        if proxy:
            self.tables["proxy"] = pd.DataFrame([{
                "proxy pass@2": proxy.get("pass@2"), **_named(proxy.get("ci95"), "ci95"),
                "tasks": proxy.get("n_tasks"), "true pass@2": proxy.get("true_pass@2"),
                **_named(proxy.get("true_ci95"), "true ci95"),
                "agreement": proxy.get("agreement"), "forward passes": proxy.get("n_forward")}])
        memo = run.metrics.get("memorisation") if isinstance(run.metrics, dict) else None
        self.numbers = {"probes": probes, "proxy": proxy,
                        "memorisation": (memo or {}).get("line")}

    def _has_drops(self) -> bool:
        return any(n.get("drop") is not None and n["drop"] == n["drop"]
                   for n in self.numbers.get("probes", {}).values())

    def figures(self):
        o = self.options
        figs = []
        if self._has_drops():
            figs += [Figure("probe_drops", lambda ax: P.probe_drops(self.run, ax=ax)),
                     Figure("probe_scores", lambda ax: P.probe_scores(
                         self.run, ax=ax, n_boot=o.n_boot, seed=o.seed))]
        if self.numbers.get("probes"):
            figs.append(Figure("probe_consistency", lambda ax: P.probe_consistency(self.run,
                                                                                    ax=ax)))
        if "lost" in self.tables and len(self.tables["lost"]):
            figs.append(Figure("probe_lost", lambda ax: P.probe_gallery(
                self.run, max_items=o.gallery_size, title="solved plainly, lost under a probe"),
                tight=False, axes_level=False))
        if self.numbers.get("proxy", {}).get("true_pass@2") is not None:
            figs.append(Figure("proxy_vs_true", lambda ax: P.proxy_vs_true(self.run, ax=ax)))
        return figs

    def body(self):
        parts = []
        if self.numbers.get("memorisation"):
            parts.append(note("Memorisation: " + self.numbers["memorisation"],
                              note_id="arcnb-probes-memorisation"))
        if len(self.tables["probes"]):
            parts += [table(shown(self.tables["probes"]), table_id="arcnb-probes-table", digits=3),
                      note("drop = plain pass@2 minus pass@2 under the probe (its views' "
                           "mean); consistency = share of test outputs whose attempt 1 is "
                           "the same under every view; robustly solved = share of the "
                           "outputs the plain run solves that every view solves (NaN when "
                           "it solves none). Intervals: 95 % paired bootstrap over tasks.")]
        names = [f.name for f in self.figures()]
        for name in ("probe_drops", "probe_scores", "probe_consistency"):
            if name in names:
                parts.append(self.image(name))
        if len(self.tables["categories"]):
            parts.append(table(shown(self.tables["categories"]), table_id="arcnb-probes-categories",
                               digits=3, caption="drops per structural category"))
        if "probe_lost" in names:
            parts.append(self.image("probe_lost"))
        elif "lost" in self.tables:
            parts.append(note("No output the plain run solves is lost under a probe."))
        if "proxy" in self.tables:
            parts += [table(shown(self.tables["proxy"]), table_id="arcnb-proxy", digits=3,
                            caption="leave-one-demonstration-out proxy score"),
                      note("Each demonstration pair is held out in turn and asked given the "
                           "others; a task counts as solved at a score of 0.5 or more for "
                           "the agreement.")]
            if "proxy_vs_true" in names:
                parts.append(self.image("proxy_vs_true"))
        return parts


__all__ = section_names(globals())
