"""The sections of the figures page (:data:`arcnb.report.sections.FIGURES`) that exist
only for a paper: breakdown figures led by one metric, the near-miss gallery in paper
size, and booktabs LaTeX tables. With ``Options(width="column", formats=("pdf",
"svg"), figures_dir=...)`` every section of the page writes paper-ready files."""
from __future__ import annotations

from pathlib import Path



from ... import breakdown as B
from ... import plot as P
from ...errors import refuse_overwrite
from ...html import escape, table
from ...io import atomic_write_text
from ..html import file_table, lead_html
from .base import Figure, Section, section_names

#: The breakdowns of the figures page (a user taxonomy adds ``user``).
PAPER_BY = ("structural", "grid_size", "shape_change")


def _bys(options) -> list[str]:
    return list(PAPER_BY) + (["user"] if options.taxonomy else [])


def paper_files(options) -> list[Path]:
    """Every file the figures page may write in ``options.figures_dir`` (checked
    before the first is written)."""
    folder = Path(options.figures_dir)
    names = ["pass_at_k", "color_accuracy", "color_confusion", "gallery_near_misses"]
    names += [f"breakdown_{by}" for by in _bys(options)]
    names += ["candidates_rank", "candidates_by_category", "candidates_reliability",
              "candidates_pass_at_k"]  # drawn for a candidate pool
    return ([folder / f"{n}.{f}" for n in names for f in options.formats]
            + [folder / "headline.tex"] + [folder / f"breakdown_{by}.tex"
                                           for by in _bys(options)])


class PaperBreakdowns(Section):
    """One figure per breakdown, led by pass@2 when enough groups have something
    solved, else by partial credit."""

    title = "Breakdowns"
    anchor = "arcnb-section-paper-breakdowns"
    intro = ("One figure per breakdown, led by pass@2 when enough groups have something "
             "solved, else by partial credit (the note above each figure says which).")

    def compute(self):
        o, res = self.options, self.run.results
        for by in _bys(o):
            self.tables[by] = B.breakdown(res, o.taxonomy if by == "user" else by,
                                          n_boot=o.n_boot, seed=o.seed)
        self.numbers = {by: B.lead_metric(t) for by, t in self.tables.items()}

    def figures(self):
        def draw(t):
            def go(ax):
                n_groups = int((t["group"] != "(all)").sum()) if "group" in t.columns else len(t)
                if ax is None:
                    import matplotlib.pyplot as plt

                    w = P.figsize(self.options.width or "column")
                    _, ax = plt.subplots(figsize=(w[0], max(w[1], 0.2 * n_groups + 0.8)))
                return P.breakdown_bars(t, value=B.lead_metric(t), horizontal=True, ax=ax)
            return go
        return [Figure(f"breakdown_{by}", draw(t), axes_level=False)
                for by, t in self.tables.items()]

    def body(self):
        parts = []
        for by, t in self.tables.items():
            parts += [lead_html(t, self.numbers[by], what=f"figure of {by}", panels=False),
                      self.image(f"breakdown_{by}")]
        return parts


class PaperGallery(Section):
    """The near misses in a paper-size gallery (text drawn as text)."""

    title = "Near misses"
    anchor = "arcnb-section-paper-gallery"

    def compute(self):
        o = self.options
        self.tables["near_misses"] = P.gallery_items(self.run.results, "near_miss",
                                                     near_miss=o.near_miss, sort="cell_accuracy",
                                                     max_items=o.gallery_size)

    def figures(self):
        o = self.options
        return [Figure("gallery_near_misses", lambda ax: P.gallery(
            self.run.results, "near_miss", near_miss=o.near_miss, sort="cell_accuracy",
            max_items=o.gallery_size, ncols=3, text="artists", title="near misses"),
            tight=False, axes_level=False)]

    def body(self):
        return [self.image("gallery_near_misses")]


class PaperTables(Section):
    """booktabs LaTeX tables: the headline (pass@K in three conventions) and each
    breakdown (group, tasks, pass@2 and its interval), written with the figures."""

    title = "LaTeX tables (booktabs)"
    anchor = "arcnb-section-paper-tables"

    def compute(self):
        o, res = self.options, self.run.results
        self.tables["headline"] = res.summary_table().reset_index()
        for by in _bys(o):
            self.tables[f"breakdown_{by}"] = B.breakdown(res, o.taxonomy if by == "user" else by,
                                                         n_boot=o.n_boot, seed=o.seed)
        self.latex = {"headline": B.latex_table(self.tables["headline"],
                                                caption="pass@K in three conventions",
                                                label="tab:arc-headline")}
        for by in _bys(o):
            self.latex[f"breakdown_{by}"] = B.latex_table(
                self.tables[f"breakdown_{by}"], caption=f"pass@2 with its 95% interval by {by}",
                label=f"tab:arc-{by}")

    def files(self):
        return [f"{name}.tex" for name in self.latex]

    def write(self, folder, *, overwrite=True):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / f"{name}.tex" for name in self.latex]
        if not overwrite:
            for p in paths:
                if p.exists():
                    raise refuse_overwrite(p, "set overwrite = True")
        return [atomic_write_text(p, self.latex[p.stem], overwrite=True) for p in paths]

    def body(self):
        return [f"<pre id='arcnb-latex-headline'>{escape(self.latex['headline'])}</pre>"]


class PaperFiles(Section):
    """The files the figures page wrote (``figures_dir``), and the compact line to quote
    beside the numbers."""

    title = "Files written"
    anchor = "arcnb-section-paper-files"
    needs_truth = False

    def compute(self):
        folder = self.options.figures_dir
        if not folder:
            self.empty = "Nothing written (no figures folder)."
            return
        names = {p.name for p in paper_files(self.options)}
        self.tables["files"] = file_table(sorted(p for p in Path(folder).iterdir()
                                                 if p.name in names))
        self.numbers = {"compact_line": self.run.compact_line()}

    def write(self, folder, *, overwrite=True):
        return []

    def body(self):
        return [table(self.tables["files"], table_id="arcnb-figures-written"),
                f"<pre id='arcnb-compact-line'>{escape(self.numbers['compact_line'])}</pre>"]


__all__ = ["paper_files"] + section_names(globals())
