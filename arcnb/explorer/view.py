"""The :class:`Explorer` object and :func:`explore`, its entry point."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..grids import same_grid
from ..html import escape
from ..columns import NEAR_MISS, is_near_miss
from ..errors import ExploreError
from ..data import normalize_task_id
from ..plot import diff_mask, gallery
from ..breakdown import group_membership
from ..io import atomic_write_text

from ..plot.tiles import diff_tile, grid_tile, hatch_tile
from ..text import MISSING, fmt_number
from .render import RIGHT_RGB, TEXT_RGB, WRONG_RGB, Panel, compose
from .state import (SELECTION_LABELS, SELECTIONS, RunView, TasksOnly, attempt_words,
                    candidate_pool, choose_attempt, format_value, open_runs, shape_text,
                    tasks_table)
from .widget import build_widget, sync_widget


class Explorer:
    """A browser over the test outputs of a run (or the tasks of a dataset).

    Build it with :func:`explore`. State: the selection (:attr:`select`,
    :attr:`category`, :attr:`near_miss`), the attempt shown (:attr:`attempt`) and
    :attr:`values`; :attr:`items` is the selected rows in order and :attr:`current`
    the output shown. Every change redraws the widget when one is displayed.
    """

    def __init__(self, dataset, runs: Sequence, *, select="all", category=None,
                 taxonomy=None, near_miss: float = NEAR_MISS, k: int = 2, attempt="best",
                 values: bool = False, show_all: bool = False, cell: int | None = None,
                 max_width: int = 1200):
        # runs: the runs as the explorer sees them (explorer.state.RunView, made by explore)
        self.dataset = dataset
        self.runs = list(runs)
        self.k = int(k)
        self.taxonomy = "structural" if taxonomy is None else taxonomy
        self.show_all = bool(show_all)
        self.cell, self.max_width = cell, int(max_width)
        #: The last note to the user (e.g. a search that widened the selection).
        self.message = ""
        self._widget = None
        self._w: dict = {}
        self._syncing = False
        #: Every output: the Results table, plus the compared runs' ``solved@K (label)``
        #: and ``solved_by`` columns.
        self.table = self._build_table()
        self._max_attempts = max([1] + [int(r.table["n_attempts"].max()) for r in self.runs
                                        if len(r.table)])
        self._categories, self._order = self._build_categories()
        self._select, self._category, self._near_miss = "all", None, float(near_miss)
        self._attempt, self._values = "best", bool(values)
        self._pos = 0
        self._sel = np.arange(len(self.table))
        self.configure(select=select, category=category, near_miss=near_miss, attempt=attempt)

    # ------------------------------------------------------------ construction
    @property
    def results(self):
        """The explored run's Results (None when browsing a dataset alone)."""
        return self.runs[0].results if self.runs else None

    @property
    def labels(self) -> list[str]:
        """The runs' labels (this one first, then the compared ones)."""
        return [r.label for r in self.runs]

    def _solved_col(self, table: pd.DataFrame) -> np.ndarray:
        col = f"solved@{self.k}"
        if col in table.columns:
            return table[col].to_numpy(bool)
        first = table["first_correct"].astype("Float64").fillna(np.inf).to_numpy(float)
        return first <= self.k

    def _build_table(self) -> pd.DataFrame:
        if not self.runs:
            return tasks_table(self.dataset)
        table = self.runs[0].table.copy()
        if len(self.runs) > 1:
            for r in self.runs:
                table[f"solved@{self.k} ({r.label})"] = self._solved_col(r.table)
            solved = np.column_stack([self._solved_col(r.table) for r in self.runs])
            table["solved_by"] = [", ".join(np.asarray(self.labels)[s]) for s in solved]
        return table

    def _build_categories(self):
        """``{category: sorted row positions}`` from :func:`arcnb.breakdown.group_membership`
        on the explored run (or the dataset), and the categories' order."""
        if self.taxonomy is False:
            return {}, []
        src = self.results if self.runs else TasksOnly(self.dataset, self.table)
        mem, info = group_membership(src, self.taxonomy)
        keys = self.table[["task_id", "test_index"]].assign(_pos=np.arange(len(self.table)))
        mem = mem.merge(keys, on=["task_id", "test_index"], how="inner")
        groups = {str(g): np.unique(d["_pos"].to_numpy()) for g, d in mem.groupby("group")}
        order = [str(g) for g in info.get("order", []) if str(g) in groups]
        order += sorted(g for g in groups if g not in order)
        self.taxonomy_name = info.get("grouping", str(self.taxonomy))
        return groups, order

    # ------------------------------------------------------------ selection
    @property
    def categories(self) -> list[str]:
        """The categories of the taxonomy that hold at least one output, in order."""
        return list(self._order)

    def selection_mask(self, select: str | None = None, *, near_miss: float | None = None
                       ) -> np.ndarray:
        """Boolean mask over :attr:`table` for a selection (see :data:`SELECTIONS`),
        before the category filter."""
        select = self._select if select is None else select
        thr = self._near_miss if near_miss is None else float(near_miss)
        t = self.table
        if select not in SELECTIONS:
            raise ExploreError(f"unknown selection {select!r}: use one of {', '.join(SELECTIONS)}")
        if select == "all":
            return np.ones(len(t), bool)
        if not self.runs:
            raise ExploreError(f"selection {select!r} needs predictions; a dataset alone "
                               "browses its tasks (select='all')")
        solved = self._solved_col(t)
        if select == "solved":
            return solved
        if select == "failed":
            return ~solved
        if select == "near_miss":
            return is_near_miss(solved, t["cell_accuracy"], thr)
        if select == "wrong_shape":
            valid = t["n_attempts"].to_numpy() > t["n_invalid_attempts"].to_numpy()
            return valid & ~t["shape_correct"].to_numpy(bool)
        if select == "invalid_or_missing":
            return t["missing"].to_numpy(bool) | (t["n_invalid_attempts"].to_numpy() > 0)
        if len(self.runs) < 2:
            raise ExploreError("selection 'disagree' needs compare= (a second run)")
        s = np.column_stack([self._solved_col(r.table) for r in self.runs])
        return s.any(axis=1) & ~s.all(axis=1)

    def category_mask(self, category=None) -> np.ndarray:
        """Boolean mask over :attr:`table`: outputs of tasks in ``category`` (or any of
        several); all True for None."""
        mask = np.zeros(len(self.table), bool)
        if category is None:
            mask[:] = True
            return mask
        wanted = [category] if isinstance(category, str) else list(category)
        for c in wanted:
            if c not in self._categories:
                shown = ", ".join(self._order[:12]) + (" ..." if len(self._order) > 12 else "")
                raise ExploreError(f"no output is in category {c!r} of taxonomy "
                                   f"{getattr(self, 'taxonomy_name', self.taxonomy)!r}; "
                                   f"categories: {shown or 'none'}")
            mask[self._categories[c]] = True
        return mask

    def configure(self, *, select=None, category=..., near_miss=None, attempt=None,
                  values=None) -> "Explorer":
        """Change the selection, category (None: any), near-miss threshold, attempt shown
        (``"best"`` or 1-based) or the show-values toggle; the current output is kept
        when it stays in the selection, else the first selected output is shown."""
        cur = self.current
        if attempt is not None:
            if attempt != "best" and not (isinstance(attempt, (int, np.integer)) and attempt >= 1):
                raise ExploreError(f"attempt must be 'best' or a number from 1, got {attempt!r}")
            self._attempt = attempt if attempt == "best" else int(attempt)
        if values is not None:
            self._values = bool(values)
        new_sel = self._select if select is None else select
        new_cat = self._category if category is ... else category
        new_thr = self._near_miss if near_miss is None else float(near_miss)
        if not 0.0 <= new_thr <= 1.0:
            raise ExploreError(f"near_miss must be in [0, 1], got {new_thr}")
        mask = self.selection_mask(new_sel, near_miss=new_thr) & self.category_mask(new_cat)
        self._select, self._category, self._near_miss = new_sel, new_cat, new_thr
        self._sel = np.flatnonzero(mask)
        self._pos = 0
        if cur is not None:
            at = self._position_of(cur)
            if at is not None:
                self._pos = at
        self._refresh(filters=True)
        return self

    select = property(lambda self: self._select,
                      lambda self, v: self.configure(select=v), doc="the selection filter")
    category = property(lambda self: self._category,
                        lambda self, v: self.configure(category=v), doc="the category filter")
    near_miss = property(lambda self: self._near_miss,
                         lambda self, v: self.configure(near_miss=v),
                         doc="the near-miss threshold on cell_accuracy")
    attempt = property(lambda self: self._attempt,
                       lambda self, v: self.configure(attempt=v), doc="'best' or 1-based")
    values = property(lambda self: self._values,
                      lambda self, v: self.configure(values=v), doc="write the cell values")

    @property
    def items(self) -> pd.DataFrame:
        """The current selection: rows of :attr:`table` (the Results table, plus the
        compared runs' ``solved@K (label)`` and ``solved_by``) in browsing order."""
        return self.table.iloc[self._sel].reset_index(drop=True)

    def __len__(self) -> int:
        return len(self._sel)

    @property
    def position(self) -> int | None:
        """0-based position of the current output in :attr:`items` (None when empty)."""
        return self._pos if len(self._sel) else None

    @property
    def current(self) -> tuple[str, int] | None:
        """``(task_id, test_index)`` of the output shown; None for an empty selection."""
        if not len(self._sel):
            return None
        row = self.table.iloc[self._sel[self._pos]]
        return str(row["task_id"]), int(row["test_index"])

    def _position_of(self, key: tuple[str, int]) -> int | None:
        t = self.table
        hit = np.flatnonzero((t["task_id"].to_numpy()[self._sel] == key[0])
                             & (t["test_index"].to_numpy()[self._sel] == key[1]))
        return int(hit[0]) if len(hit) else None

    # ------------------------------------------------------------ navigation
    def go(self, where) -> "Explorer":
        """Show an output: an index into :attr:`items` (negative counts from the end), a
        task id (its first test output; a unique prefix is enough; ``.json`` and
        ``_vN`` suffixes are ignored) or ``(task_id, test_index)``. A task outside the
        current selection widens it to ``all`` (any category) and says so in
        :attr:`message`."""
        self.message = ""
        if isinstance(where, (int, np.integer)) and not isinstance(where, bool):
            n = len(self._sel)
            i = int(where) + (n if where < 0 else 0)
            if not 0 <= i < n:
                raise ExploreError(f"index {where} is outside the selection of {n} outputs")
            self._pos = i
            self._refresh()
            return self
        key = self._resolve(where)
        at = self._position_of(key)
        if at is None:
            self.configure(select="all", category=None)
            at = self._position_of(key)
            self.message = (f"task {key[0]} is not in the selection; showing all outputs")
        self._pos = at
        self._refresh()
        return self

    def _resolve(self, where) -> tuple[str, int]:
        if isinstance(where, tuple) and len(where) == 2:
            tid, ti = str(where[0]).strip(), int(where[1])
        elif isinstance(where, str):
            tid, ti = where.strip(), None
        else:
            raise ExploreError(f"go() takes an index, a task id or (task_id, test_index), "
                               f"got {where!r}")
        ids = self.table["task_id"].to_numpy()
        if tid not in set(ids):
            norm = normalize_task_id(tid) if tid else tid
            starts = sorted({t for t in ids if t.startswith(norm)}) if norm else []
            if norm in set(ids):
                tid = norm
            elif len(starts) == 1:
                tid = starts[0]
            elif len(starts) > 1:
                raise ExploreError(f"{len(starts)} task ids start with {tid!r}: "
                                   f"{', '.join(starts[:6])}{' ...' if len(starts) > 6 else ''}")
            else:
                raise ExploreError(f"no task {tid!r} here")
        rows = self.table[self.table["task_id"].to_numpy() == tid]
        if ti is None:
            in_sel = [int(i) for i in rows["test_index"]
                      if self._position_of((tid, int(i))) is not None]
            ti = in_sel[0] if in_sel else int(rows["test_index"].iloc[0])
        elif ti not in set(rows["test_index"].astype(int)):
            raise ExploreError(f"task {tid} has no test output {ti} "
                               f"(it has {len(rows)})")
        return tid, ti

    def next(self) -> "Explorer":
        """The next output of the selection (wraps around)."""
        if len(self._sel):
            self._pos = (self._pos + 1) % len(self._sel)
        self.message = ""
        self._refresh()
        return self

    def prev(self) -> "Explorer":
        """The previous output of the selection (wraps around)."""
        if len(self._sel):
            self._pos = (self._pos - 1) % len(self._sel)
        self.message = ""
        self._refresh()
        return self

    # ------------------------------------------------------------ the view
    def _row(self, run: RunView | None = None):
        if not len(self._sel):
            return None
        t = self.table if run is None else run.table
        return t.iloc[self._sel[self._pos]]

    def _cell_size(self, grids: Iterable[np.ndarray]) -> int:
        if self.cell:
            return int(self.cell)
        biggest = max(max(g.shape) for g in grids if g is not None)
        c = max(2, min(24, 150 // biggest))
        return max(c, 13) if self._values else c

    def panels(self) -> tuple[str, list]:
        """The current view as ``(header, sections)``; a section is ``(title, columns)``
        and a column a list of ``Panel`` (drawn top to bottom)."""
        key = self.current
        if key is None:
            return "no output in this selection", []
        tid, ti = key
        task = self.dataset[tid]
        test = task.test[ti]
        truth = test.output
        chosen = []
        for r in self.runs:
            attempts = list(r.results.attempts(tid, ti))
            j, g = choose_attempt(attempts, truth, self._row(r), self._attempt, max(r.results.ks))
            chosen.append((r, attempts, j, g))
        grids = [p.input for p in task.train] + [p.output for p in task.train]
        grids += [test.input, truth] + [g for *_, g in chosen]
        c = self._cell_size(grids)
        v = self._values
        demos = [[Panel([(f"demo {n + 1} input {shape_text(p.input)}", TEXT_RGB)],
                        grid_tile(p.input, c, values=v), "demo_input", p.input),
                  Panel([(f"demo {n + 1} output {shape_text(p.output)}", TEXT_RGB)],
                        grid_tile(p.output, c, values=v) if p.output is not None
                        else hatch_tile(p.input.shape, c, missing=True),
                        "demo_output", p.output)] for n, p in enumerate(task.train)]
        test_col = [Panel([(f"test input {shape_text(test.input)}", TEXT_RGB)],
                          grid_tile(test.input, c, values=v), "test_input", test.input)]
        if truth is not None:
            test_col.append(Panel([(f"truth {shape_text(truth)}", TEXT_RGB)],
                                  grid_tile(truth, c, values=v), "truth", truth))
        cols = [test_col] + [self._run_column(r, attempts, j, g, truth, c)
                             for r, attempts, j, g in chosen]
        n_test = len(task.test)
        sections = [(f"demonstrations ({len(task.train)} pairs)", demos),
                    (f"test {ti + 1} of {n_test}", cols)]
        sections += self._candidate_sections(tid, ti, c)
        where = f"{self._pos + 1} of {len(self._sel)} ({self._selection_text()})"
        return f"task {tid}  ·  test {ti + 1} of {n_test}  ·  {where}", sections

    #: at most this many candidates are drawn per run (the title says how many there are)
    max_candidates = 8

    def _candidate_sections(self, tid: str, ti: int, c: int) -> list:
        """For each run with a candidate pool: the current output's candidates in rank
        order (:meth:`arcnb.candidates.CandidateAnalysis.grids`, the pool's first
        ranking rule), each titled with its rank and votes, the right one marked, and
        whether it passes the demonstrations when the pool says."""
        sections = []
        for r in self.runs:
            pool = candidate_pool(r, self.dataset)
            if pool is None:
                continue
            rule = pool.summary["rank_by"]
            items = pool.grids(tid, ti, rule=rule, with_checks=True)
            cols = []
            for rank, (g, votes, right, passes) in enumerate(items[: self.max_candidates], 1):
                lines = [(f"{rank}: {votes} vote{'s' if votes != 1 else ''}", TEXT_RGB)]
                if right:
                    lines.append(("✓ right", RIGHT_RGB))
                if passes is not None:  # the demonstration check, when the pool has it
                    lines.append(("passes demos" if passes else "fails demos", TEXT_RGB))
                img = grid_tile(g, c, values=self._values) if g is not None \
                    else hatch_tile((3, 3), c)
                cols.append([Panel(lines, img, "candidate", g, r.label)])
            if not cols:
                continue
            who = f"{r.label}: " if len(self.runs) > 1 else ""
            shown = "" if len(items) <= self.max_candidates else \
                f", the first {self.max_candidates} shown"
            sections.append((f"{who}{len(items)} candidates by {rule}{shown}", cols))
        return sections

    def _run_column(self, r: RunView, attempts, j, g, truth, c) -> list:
        label = r.label if len(self.runs) > 1 else ""
        title, _ = attempt_words(label, j, g, truth, len(attempts))
        solved = bool(self._solved_col(r.table)[self._sel[self._pos]])
        right = same_grid(g, truth)
        status = ("✓ right" if right else "✗ wrong") + (f"  (solved@{self.k})" if solved else
                                                        f"  (not solved@{self.k})")
        color = RIGHT_RGB if right else WRONG_RGB
        shape = truth.shape if truth is not None else (g.shape if g is not None else (3, 3))
        img = grid_tile(g, c, values=self._values) if g is not None else hatch_tile(shape, c)
        col = [Panel([(title, TEXT_RGB), (status, color)], img, "attempt", g, r.label)]
        if truth is None:
            return col
        mask = diff_mask(truth, g)
        if mask is None:
            words = ("no attempt" if g is None
                     else f"shape mismatch: {shape_text(truth)} vs {shape_text(g)}")
            col.append(Panel([("difference", TEXT_RGB), (words, WRONG_RGB)],
                             hatch_tile(truth.shape, c), "difference", None, r.label))
        else:
            n = int(mask.sum())
            words = "all cells right" if n == 0 else f"{n} of {mask.size} cells wrong"
            col.append(Panel([("difference", TEXT_RGB),
                              (words, RIGHT_RGB if n == 0 else WRONG_RGB)],
                             diff_tile(mask, c), "difference", mask, r.label))
        return col

    def _selection_text(self) -> str:
        s = SELECTION_LABELS[self._select]
        if self._select == "near_miss":
            s += f" ≥ {fmt_number(self._near_miss, least=2)}"
        if self._category is not None:
            cats = [self._category] if isinstance(self._category, str) else self._category
            s += f", category {' or '.join(cats)}"
        return s

    def render(self) -> np.ndarray:
        """The current view as an ``H x W x 3`` uint8 array (what the widget shows)."""
        return np.asarray(self._render()[0])

    def layout(self) -> list[dict]:
        """Where each panel of the current view sits in :meth:`render`'s image: dicts
        with ``kind`` (demo_input, demo_output, test_input, truth, attempt,
        difference, candidate), ``run``, ``title``, ``x``, ``y``, ``w``, ``h`` and ``grid``."""
        return self._render()[1]

    def _render(self):
        header, sections = self.panels()
        return compose(sections, max_width=self.max_width, header=header)

    def png(self) -> bytes:
        """The current view as PNG bytes."""
        im, _ = self._render()
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    # ------------------------------------------------------------ numbers in words
    def info_html(self) -> str:
        """The current output's numbers as HTML (every user string escaped): solved@K,
        first right attempt, cell accuracy, partial credit, shapes, votes, confidences
        and costs when the run has them, one row per run, and what is off in words."""
        key = self.current
        if key is None:
            return (f"<div class='arcnb-explore-info'><b>no output</b> in the selection "
                    f"({escape(self._selection_text())})</div>")
        tid, ti = key
        head = (f"<b class='arcnb-explore-task'>{escape(tid)}</b> "
                f"<span class='arcnb-explore-test'>test {ti + 1} of "
                f"{len(self.dataset[tid].test)}</span> · output {self._pos + 1} of "
                f"{len(self._sel)} in <i>{escape(self._selection_text())}</i>")
        if not self.runs:
            return f"<div class='arcnb-explore-info'>{head}</div>"
        rows, notes = self._info_rows(tid, ti)
        cols = list(rows[0])
        table = ("<table class='arcnb-explore-numbers'><tr>"
                 + "".join(f"<th>{escape(c)}</th>" for c in cols) + "</tr>"
                 + "".join("<tr>" + "".join(f"<td>{escape(str(r[c]))}</td>" for c in cols)
                           + "</tr>" for r in rows) + "</table>")
        body = "".join(f"<div class='arcnb-explore-note'>{escape(n)}</div>" for n in notes)
        if len(self.runs) > 1:
            who = self.table.iloc[self._sel[self._pos]]["solved_by"]
            body = (f"<div class='arcnb-explore-solved-by'>solved@{self.k} by: "
                    f"{escape(who or 'no run')}</div>") + body
        return f"<div class='arcnb-explore-info'>{head}{table}{body}</div>"

    def _info_rows(self, tid: str, ti: int):
        truth = self.dataset[tid].test[ti].output
        rows, notes = [], []
        extra_cols = sorted({c for r in self.runs for c in r.table.columns
                             if c.startswith(("votes_", "confidence_", "cost", "n_views",
                                              "n_valid_views", "n_distinct"))})
        for r in self.runs:
            row = self._row(r)
            attempts = list(r.results.attempts(tid, ti))
            j, g = choose_attempt(attempts, truth, row, self._attempt, max(r.results.ks))
            d = {"run": r.label}
            for k in r.results.ks:
                d[f"solved@{k}"] = format_value(bool(row[f"solved@{k}"]))
            d["first right attempt"] = format_value(row["first_correct"])
            d["cell accuracy"] = format_value(row["cell_accuracy"])
            d["partial credit"] = format_value(row["partial_credit"])
            d["truth"] = shape_text(truth)
            d["attempts"] = " / ".join(shape_text(a) if a is not None else "invalid"
                                       for a in attempts) or "missing"
            d["shown"] = "none" if j is None else f"attempt {j + 1}"
            for c in extra_cols:
                d[c] = (format_value(row[c]) if c in row.index and not pd.isna(row[c])
                        else MISSING)
            rows.append(d)
            _, words = attempt_words(r.label if len(self.runs) > 1 else "", j, g, truth,
                                     len(attempts))
            if words:
                notes.append(words)
        keys = list(dict.fromkeys(k for d in rows for k in d))
        return [{k: d.get(k, MISSING) for k in keys} for d in rows], notes

    # ------------------------------------------------------------ static gallery
    def gallery(self, **kwargs):
        """The current selection as a static :func:`arcnb.plot.gallery` figure (truth |
        prediction | difference per output, in browsing order), for saving with
        :func:`arcnb.plot.save`. Keyword arguments go to ``gallery`` (``max_items``,
        ``ncols``, ``attempt``, ``title``, ...)."""
        if not self.runs:
            raise ExploreError("a gallery needs predictions; this explorer browses a dataset")
        kwargs.setdefault("title", f"{self.runs[0].label}: {self._selection_text()}")
        kwargs.setdefault("k", self.k)
        items = self.items
        cols = [c for c in self.results.outputs.columns if c in items.columns]
        return gallery(self.results, "all", rows=items[cols], **kwargs)

    def save_selection(self, path, *, overwrite: bool = False) -> Path:
        """Write the selected task ids (one per line, browsing order, no repeats) to
        ``path``: a task filter that ``--tasks`` / ``tasks=`` read back."""
        ids = list(dict.fromkeys(self.items["task_id"]))
        head = f"# {len(ids)} tasks: {self._selection_text()}\n"
        return atomic_write_text(Path(path), head + "".join(f"{t}\n" for t in ids),
                                 overwrite=overwrite)

    # ------------------------------------------------------------ widget
    @property
    def widget(self):
        """The ipywidgets browser (built on first use)."""
        if self._widget is None:
            self._widget = build_widget(self)
            self._refresh(filters=True)
        return self._widget

    def _refresh(self, filters: bool = False) -> None:
        if self._widget is None:
            return
        sync_widget(self, self._w, filters=filters)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.show_all:
            import matplotlib.pyplot as plt

            fig = self.gallery()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=fig.dpi)
            plt.close(fig)
            return {"image/png": buf.getvalue(), "text/plain": repr(self)}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):  # a frontend without widgets shows this text instead
            bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        what = ", ".join(self.labels) if self.runs else f"dataset {self.dataset.name}"
        cur = self.current
        at = "empty" if cur is None else f"at {cur[0]} test {cur[1]}"
        return (f"Explorer({what}: {len(self._sel)} of {len(self.table)} outputs in "
                f"{self._selection_text()}, {at})")


# ====================================================================== entry point
def explore(source=None, *, dataset=None, select: str = "all", category=None, compare=None,
            taxonomy=None, near_miss: float = NEAR_MISS, k: int = 2, attempt="best",
            values: bool = False, labels: Sequence[str] | None = None, show_all: bool = False,
            cell: int | None = None, max_width: int = 1200) -> Explorer:
    """Browse a run's outputs (or a dataset's tasks) in JupyterLab.

    ``source``: a run directory (``arcnb evaluate`` / ``arcnb report`` output), a
    :class:`~arcnb.scoring.Results`, an :class:`arcnb.runs.Run`, a predictions file
    (with ``dataset=``), ``"default"`` (the bundled example predictions on ARC-AGI-1
    evaluation), or a :class:`~arcnb.data.Dataset` / dataset name (tasks only).
    ``compare``: a run (directory, Results, Run or predictions file) or a list of runs
    on the same tasks, shown side by side. ``select``: one of :data:`SELECTIONS`;
    ``category``: a category (or list) of ``taxonomy`` (anything
    :func:`arcnb.breakdown.breakdown` takes: ``"structural"`` (the default), ``"folder"``,
    a taxonomy ``.csv`` / ``.json``, a Taxonomy or a dict; ``False`` for none).
    ``near_miss``: the threshold of the near-miss selection; ``k``: solved@k defines
    solved. ``attempt``: ``"best"`` or an attempt number; ``values``: write the cell
    values. ``show_all=True`` displays the selection as a static gallery instead of the
    browser (also :meth:`Explorer.gallery`). ``cell`` fixes the pixels per cell;
    ``max_width`` is where the view wraps.
    """
    ds, runs = open_runs(source, dataset=dataset, compare=compare, labels=labels)
    return Explorer(ds, runs, select=select, category=category, taxonomy=taxonomy,
                    near_miss=near_miss, k=k, attempt=attempt, values=values,
                    show_all=show_all, cell=cell, max_width=max_width)
