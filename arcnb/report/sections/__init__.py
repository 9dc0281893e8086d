"""The report as sections: each view of a run is one object you can use in JupyterLab,
in the HTML report and in a paper.

A section is built from a run (or several) in one call and computes once::

    from arcnb.report import sections as S
    run = arcnb.open("submission.json", dataset="arc-agi-1:evaluation")
    S.Colours(run)                 # as the last line of a cell: the section itself
    S.Colours(run).tables          # its DataFrames
    S.Colours(run).plot()          # its main figure on a new Axes (or ax=...)

Every section takes the report-wide :class:`Options` (``n_boot``, ``seed``,
``near_miss``, ``gallery_size``, ``taxonomy``, ``references``, ``train_data``,
``figures_dir``, ``formats``) and says in words when it has nothing to show.

A page is a list of sections: :data:`REPORT` (one run), :data:`COMPARE` (several
runs), :data:`SWEEP` (a checkpoint sweep) and :data:`FIGURES` (a paper's figures).
The shipped notebooks show them one cell each; adding a section is one class and one
line in its page's list.
"""
from __future__ import annotations

from .base import NO_TRUTH, Figure, Options, Section
from .compare import (CompareCategories, CompareFiles, CompareDifferences, CompareOnlyOne, CompareRuns,
                      Leaderboard)
from .candidates import CandidateBudget, CandidateChecks
from .run import (AlmostWorks, CandidatePool, Categories, Colours, Cost, Failures,
                  GridSizeAndShape, Headline, PassAtK, PredictionsOnly, Provenance, References, RunFiles,
                  SecondAttempt, Summary, TrainingOverlap)
from .sweep import (SweepCategories, SweepChanges, SweepCurves, SweepSelection,
                    SweepSolved)
from .repeats import (RepeatsComparisons, RepeatsConfigs, RepeatsFlips, RepeatsUnion,
                      repeats_page)
from .probes import Probes
from .paper import PaperBreakdowns, PaperFiles, PaperGallery, PaperTables, paper_files

#: The report of one run, in order (the report notebook shows one cell per section).
REPORT = [Summary, Headline, TrainingOverlap, AlmostWorks, References, PassAtK, SecondAttempt,
          Failures, Colours, Categories, GridSizeAndShape, Cost, CandidatePool, CandidateBudget,
          CandidateChecks, Probes, Provenance]

#: What the report shows for a run without truth (a hidden test set).
REPORT_NO_TRUTH = [Summary, PredictionsOnly, Provenance]

#: The evaluate page: what a run directory holds once written.
EVALUATE = [Headline, PredictionsOnly, Probes, RunFiles]

#: The comparison page of several runs.
COMPARE = [CompareRuns, Leaderboard, CompareDifferences, CompareOnlyOne, CompareCategories,
           CompareFiles]

#: The page of a checkpoint sweep.
SWEEP = [SweepCurves, SweepSelection, SweepChanges, SweepSolved, SweepCategories]

#: The page of many runs (``arcnb.repeats``).
REPEATS = [RepeatsConfigs, RepeatsFlips, RepeatsComparisons, RepeatsUnion]

#: The figures and tables for a paper (PDF / SVG, booktabs LaTeX).
FIGURES = [PassAtK, Colours, PaperBreakdowns, PaperGallery, PaperTables, CandidatePool,
           CandidateBudget, CandidateChecks]

__all__ = ["Options", "Section", "Figure", "NO_TRUTH", "REPORT", "REPORT_NO_TRUTH", "EVALUATE", "COMPARE",
           "SWEEP", "FIGURES", "REPEATS", "Summary", "PredictionsOnly", "Headline", "TrainingOverlap",
           "AlmostWorks", "References", "PassAtK", "Failures", "SecondAttempt", "Colours",
           "Categories", "GridSizeAndShape", "Cost", "CandidatePool", "CandidateBudget",
           "CandidateChecks", "Provenance", "RunFiles",
           "CompareRuns", "Leaderboard", "CompareDifferences", "CompareOnlyOne",
           "CompareCategories", "CompareFiles", "SweepCurves", "SweepSelection", "SweepChanges", "SweepSolved",
           "SweepCategories", "PaperBreakdowns", "PaperGallery", "PaperTables", "PaperFiles", "paper_files",
           "RepeatsConfigs", "RepeatsFlips", "RepeatsComparisons", "RepeatsUnion",
           "repeats_page", "Probes"]
