"""The report as sections: each view of a run is one object you can use in JupyterLab,
in the HTML report and in a paper.

A section is a display object (in the spirit of scikit-learn's Displays): ``from_run``
computes it from a run (or what its page shows) in one call::

    from arcnb.report import sections as S
    run = arcnb.open("submission.json", dataset="arc-agi-1:evaluation")
    colors = S.Colors.from_run(run)   # as the last line of a cell: the section itself
    colors.tables                     # its DataFrames (numbers, formatted when shown)
    colors.plot()                     # its main figure on a new Axes (or ax=...);
                                      # colors.ax_, colors.figure_ keep them

Every section takes the report-wide :class:`Options` (``n_boot``, ``seed``,
``near_miss``, ``gallery_size``, ``taxonomy``, ``references``, ``train_data``,
``figures_dir``, ``formats``) and says in words when it has nothing to show; with
``figures_dir``, ``from_run`` also writes its files there.

A page is a list of sections: :data:`REPORT` (one run), :data:`COMPARE` (several
runs), :data:`SWEEP` (a checkpoint sweep), :data:`FIGURES` (a paper's figures),
:data:`EVALUATE` and :data:`REPEATS`; the ARC-AGI-3 page is
``arcnb.report.sections.arc3.ARC3``. The shipped notebooks show them one cell
each; adding a section is one class in its module and one line in its page's list
(``__all__`` is made from the pages).
"""
from __future__ import annotations

from typing import Sequence

from ... import front
from ...columns import NEAR_MISS
from .. import sources

from .base import NO_TRUTH, FilesSection, Figure, Options, Section, page_of
# every section of each module (its __all__, made from its classes): a new section needs
# no import here, only its line in its page's list
from .run import *  # noqa: F403
from .candidates import *  # noqa: F403
from .compare import *  # noqa: F403
from .difficulty import *  # noqa: F403
from .sweep import *  # noqa: F403
from .probes import *  # noqa: F403
from .paper import *  # noqa: F403
from .repeats import *  # noqa: F403
from .repeats import REPEATS

#: The report of one run, in order (the report notebook shows one cell per section).
REPORT = [Summary, Headline, TrainingOverlap, AlmostWorks, References, PassAtK, SecondAttempt,
          SeveralOutputs, Failures, Colors, Categories, GridSizeAndShape, Cost, CandidatePool, CandidateBudget,
          CandidateChecks, Probes, Provenance]

#: What the report shows for a run without truth (a hidden test set).
REPORT_NO_TRUTH = [Summary, PredictionsOnly, Provenance]


def open_report(*, run_dir: str = "", predictions: str = "", dataset: str = "",
                tasks: str = "", taxonomy: str = "", references: Sequence[str] = (),
                figures_dir: str = "", gallery_size: int = 24, near_miss: float = NEAR_MISS,
                n_boot: int = 1000, seed: int = 0, train_data: Sequence[str] = ()) -> tuple:
    """The run and the :class:`Options` of a report, from the report notebook's
    parameters (the same names; what its setup cell does, and ``arcnb report
    --no-notebook``): the run directory ``run_dir``, else ``predictions`` (``"default"``
    or empty: the bundled example) scored in memory on ``dataset``; figures go to
    ``figures_dir``, else ``run_dir/figures``."""
    source = sources.resolve_source(predictions=predictions or "default", run_dir=run_dir)
    run = front.open_run(source, dataset=sources.source_dataset(source, dataset or
                                                                sources.DEFAULT_DATASET),
                         tasks=tasks or None, n_boot=n_boot, seed=seed)
    options = Options(n_boot=n_boot, seed=seed, near_miss=near_miss, gallery_size=gallery_size,
                      taxonomy=taxonomy, references=list(references),
                      train_data=list(train_data),
                      figures_dir=sources.figures_dir(figures_dir, run))
    return run, options


def report_page(run, options: Options | None = None, *, title: str | None = None) -> str:
    """One run's report as one self-contained HTML page, built in this process (no
    kernel, no notebook): the sections of :data:`REPORT` in order, or of
    :data:`REPORT_NO_TRUTH` for a run without truth. ``arcnb report`` runs the report
    notebook instead: the same sections, one cell each, that you can re-run and adapt."""
    sections = REPORT if getattr(run, "scored", True) else REPORT_NO_TRUTH
    return page_of(sections, run, options,
                   title=title or f"ARC evaluation report: {getattr(run, 'label', '')}".rstrip(": "))


#: The evaluate page: what a run directory holds once written.
EVALUATE = [Headline, Probes, PredictionsOnly, RunFiles]

#: The comparison page of several runs.
COMPARE = [CompareRuns, Leaderboard, CompareDifferences, CompareOnlyOne, CompareCategories,
           Difficulty, CompareFiles, Provenance]

#: The page of a checkpoint sweep.
SWEEP = [SweepCurves, SweepSelection, SweepChanges, SweepSolved, SweepCategories, Provenance]


#: The figures and tables for a paper (PDF / SVG, booktabs LaTeX).
FIGURES = [PassAtK, Colors, PaperBreakdowns, PaperGallery, PaperTables, CandidatePool,
           CandidateBudget, CandidateChecks, PaperFiles]

#: Every page of this module, by name.
PAGES = {"REPORT": REPORT, "REPORT_NO_TRUTH": REPORT_NO_TRUTH, "EVALUATE": EVALUATE,
         "COMPARE": COMPARE, "SWEEP": SWEEP, "FIGURES": FIGURES, "REPEATS": REPEATS}

#: The public names: the building blocks, the pages and every section of a page, in
#: page order (a section is public by being on a page).
__all__ = (["Options", "Section", "FilesSection", "Figure", "NO_TRUTH", "page_of", "open_report", "report_page",
            "repeats_page", "paper_files", "PAGES", *PAGES]
           + list(dict.fromkeys(c.__name__ for page in PAGES.values() for c in page)))
