"""The ARC-AGI-3 report as sections: each view of one or more scored runs is a display
object (:class:`arcnb.report.sections.Section`) for JupyterLab, the HTML report and a
paper::

    from arcnb.report.sections import arc3 as S
    runs = S.scored_runs(["agent-a/", "agent-b/"], "environment_files/")
    S.Scores.from_run(runs)                 # as the last line of a cell: the section itself
    S.Games.from_run(runs).tables["games"]  # its DataFrames
    S.Levels.from_run(runs).plot()          # its main figure (or ax=...)

Every section takes the report-wide :class:`arcnb.report.sections.Options` (``n_boot``,
``seed``, ``figures_dir``, ``formats``, ``width``, ``overwrite``) and says in words when it
has nothing to show. :data:`ARC3` is the report's page, in order: the shipped notebook
``arc3.ipynb`` (``arcnb notebooks DEST`` copies it; ``arcnb arc3 report`` runs it) shows
one cell per section. Given no run, it shows the bundled example
(:func:`report_inputs`, :func:`arcnb.resources.arc3_example`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from ...plot import arc3 as F
from ...arc3.compare import Comparison, compare
from ...arc3.faults import faults_table
from ...arc3.reader import read_run
from ...arc3.replay import replay
from ...arc3.scorer import Scorecard, score
from ...arc3.tables import game_table, level_table, run_table
from ...errors import ParameterError, printable
from ...html import escape, note
from ...html import table as _table
from ...text import fmt_number, fmt_significant
from ...resources import arc3_example
from ...runs import OutputFolder, unique_labels
from .base import Figure, FilesSection, Options, Section, section_names
from .run import Provenance


@dataclass
class ScoredRuns:
    """One or more scored runs (:class:`~arcnb.arc3.scorer.Scorecard`) and, with two or
    more, their :class:`~arcnb.arc3.compare.Comparison`: what every section of
    :data:`ARC3` is built from."""

    cards: list[Scorecard]
    comparison: Comparison | None = None
    labels: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.cards:
            raise ParameterError("no run to show")
        if not self.labels:
            self.labels = (self.comparison.labels if self.comparison is not None
                           else [c.label for c in self.cards])

    @property
    def label(self) -> str:
        """The runs' labels, joined."""
        return " vs ".join(self.labels)


def _as_runs(obj) -> ScoredRuns:
    if isinstance(obj, ScoredRuns):
        return obj
    if isinstance(obj, Scorecard):
        return ScoredRuns([obj])
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(c, Scorecard) for c in obj):
        return ScoredRuns(list(obj), compare(obj) if len(obj) > 1 else None)
    raise ParameterError("an arc3 section is built from a Scorecard, a list of them or "
                         "scored_runs(...)")


def report_inputs(runs: Sequence = (), baselines=None) -> tuple[list, object]:
    """The runs and baselines a report shows: ``(runs, baselines)`` as given, or, when
    both are empty, the bundled example's two agents and their baselines
    (:func:`arcnb.resources.arc3_example`). One given without the other is refused (the
    example's baselines are those of its synthetic game)."""
    runs = list(runs or [])
    if not runs and not baselines:
        ex = arc3_example()
        return list(ex.runs), ex.baselines
    if not runs:
        raise ParameterError("baselines without runs: give the runs (a recording, a harness "
                             "run folder or a folder of them), or neither for the bundled "
                             "example")
    if not baselines:
        raise ParameterError("give the runs' human baselines (a folder of game metadata.json "
                             "files or a CSV game_id,level,baseline_actions), or neither "
                             "runs nor baselines for the bundled example")
    return runs, baselines


def scored_runs(runs: Sequence, baselines, *, labels: Sequence[str] | None = None,
                n_boot: int = 1000, seed: int = 0, competition: bool | None = None,
                max_actions: int | None = None, **score_kw) -> ScoredRuns:
    """Read and score each run (a path, or a list of paths, per run; or a
    :class:`~arcnb.arc3.scorer.Scorecard`) against ``baselines`` with ``score_kw``
    (``rule``, ``cap``, ``all_games``), and compare them when there are two or more."""
    runs = list(runs)
    if not runs:
        raise ParameterError("give at least one run (a recording, a folder of recordings or "
                             "a harness run folder)")
    labels = list(labels) if labels else [None] * len(runs)
    if len(labels) != len(runs):
        raise ParameterError(f"{len(labels)} labels for {len(runs)} runs")
    cards = []
    for r, lab in zip(runs, labels):
        if isinstance(r, Scorecard):
            cards.append(r)
            continue
        run = read_run(r, label=lab, competition=competition, max_actions=max_actions)
        cards.append(score(run, baselines, n_boot=n_boot, seed=seed, **score_kw))
    cmp = compare(cards, labels=[c.label for c in cards], n_boot=n_boot, seed=seed) \
        if len(cards) > 1 else None
    return ScoredRuns(cards, cmp)


def _text(value) -> str:
    """A user string (a label, a game id) as escaped HTML text, control and
    bidirectional characters shown as escapes."""
    return escape(printable(value))


def table(df: pd.DataFrame, **kw) -> str:
    """:func:`arcnb.html.table` of ``df`` with its text cells' control and bidirectional
    characters shown as escapes."""
    df = df.copy()
    for col in df.columns:
        if pd.api.types.is_object_dtype(df[col]) or pd.api.types.is_string_dtype(df[col]):
            df[col] = df[col].map(lambda v: printable(v) if isinstance(v, str) else v)
    return _table(df, **kw)


class _Arc3Section(Section):
    needs_truth = False
    built_from = "ARC-AGI-3 scored runs (scored_runs(...), a Scorecard or a list of them)"

    @classmethod
    def _data(cls, data):
        return _as_runs(data)

    def _with_run(self, frames: dict) -> pd.DataFrame:
        parts = [df.assign(run=lab)[["run", *df.columns]] for lab, df in frames.items()]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


class Scores(_Arc3Section):
    """Each run's score (mean over games, 0-100) with its 95% bootstrap interval over
    games, what its first play alone scores, and the rule it was computed with."""

    title = "Scores"
    anchor = "arcnb-arc3-scores"

    def compute(self):
        self.tables["runs"] = run_table(self.run.cards)
        self.numbers = {c.label: {"score": c.score, "ci95": c.ci95,
                                  "first_play_score": c.first_play_score,
                                  "n_games": c.n_games} for c in self.run.cards}

    def body(self):
        out = []
        for c in self.run.cards:
            lo, hi = c.ci95
            out.append(f"<p>{_text(c.label)}: <b>{_two(c.score)}</b> [{_two(lo)}, {_two(hi)}] over "
                       f"{c.n_games} games (95% bootstrap interval over games); its first "
                       f"play of each game alone scores {_two(c.first_play_score)}.</p>")
        out.append(table(self.tables["runs"], table_id="arcnb-arc3-runs", digits=2))
        rules = {c.rule.name: c.rule for c in self.run.cards}
        out += [note(r.words) for r in rules.values()]
        caps = {c.cap for c in self.run.cards if c.cap is not None}
        out += [note(f"Every play is scored as if stopped past {fmt_significant(m)} x the human baseline on "
                     "a level (an option of arcnb, not of the scorecard).") for m in caps]
        out.append(note("Re-scored from the recordings as the toolkit's scorecard scores "
                        "them; scores on hidden games can't be reproduced locally (their "
                        "baselines are not public)."))
        return out


class Games(_Arc3Section):
    """One row per game of each run (RHAE, levels completed, the completion cap, plays,
    actions against the baseline, the first play alone), and the mix of action types."""

    title = "Games"
    anchor = "arcnb-arc3-games"

    def compute(self):
        self.tables["games"] = self._with_run({c.label: game_table(c) for c in self.run.cards})
        if not len(self.tables["games"]):
            self.empty = "No game was played."

    def figures(self):
        return [Figure(f"action_mix_{k}", (lambda c: lambda ax: F.action_mix(c, ax=ax))(c),
                       axes_level=False)
                for k, c in enumerate(self.run.cards[:4])]

    def body(self):
        out = [table(self.tables["games"], table_id="arcnb-arc3-games", digits=2)]
        for f, c in zip(self.figures(), self.run.cards):
            out += [note(f"The action types of {printable(c.label)}, per game."),
                    self.image(f.name, f"action types of {printable(c.label)}")]
        return out


class Levels(_Arc3Section):
    """One row per level of each play (actions, baseline, ratio, score, resets,
    GAME_OVERs, unchanged actions, time, tokens and cost per action), and each run's
    actions against levels completed on its best game, with the human baseline."""

    title = "Levels"
    anchor = "arcnb-arc3-levels"

    def compute(self):
        self.tables["levels"] = self._with_run({c.label: level_table(c)
                                                for c in self.run.cards})
        if not len(self.tables["levels"]):
            self.empty = "No level was played."

    def figures(self):
        out = []
        for k, c in enumerate(self.run.cards[:4]):
            played = c.games[c.games["plays"] > 0]
            if len(played):
                gid = str(played.sort_values("score", ascending=False)["game_id"].iloc[0])
                out.append(Figure(f"cumulative_{k}", (lambda c, g: lambda ax:
                                  F.cumulative_actions(c, g, ax=ax))(c, gid),
                                  axes_level=False))
        return out

    def body(self):
        return ([table(self.tables["levels"], table_id="arcnb-arc3-levels", digits=2)]
                + self.images())


class Faults(_Arc3Section):
    """What the recordings got wrong, named and never repaired (the scores count the
    steps as recorded)."""

    title = "Recorder faults"
    anchor = "arcnb-arc3-faults"

    def compute(self):
        self.tables["faults"] = self._with_run({c.label: faults_table(c.faults)
                                                for c in self.run.cards})
        if not len(self.tables["faults"]):
            self.empty = ("The recordings show none of the faults arcnb checks (actions "
                          "recorded as RESET, a missing first frame, steps past a declared "
                          "cap, full resets in competition mode, missing frames or "
                          "baselines).")

    def body(self):
        return [table(self.tables["faults"], table_id="arcnb-arc3-faults", max_rows=500)]


class KeyFrames(_Arc3Section):
    """The first run's key frames (level starts and ends, GAME_OVERs, the win) of its
    first recording with frames, and where its clicks went."""

    title = "Frames and clicks"
    anchor = "arcnb-arc3-frames"

    def compute(self):
        card = self.run.cards[0]
        recs = [r for r in (card.run.recordings if card.run else []) if r.has_frames]
        if not recs:
            self.empty = "The first run's recordings hold no frame (recorded without frames)."
            return
        self._rec = recs[0]
        self.numbers = {"recording": self._rec.name}

    def figures(self):
        card = self.run.cards[0]
        return [Figure("film_strip", lambda ax: F.film_strip(self._rec, ax=ax),
                       axes_level=False),
                Figure("clicks", lambda ax: F.click_heatmap(card, ax=ax), axes_level=False)]

    def body(self):
        return [note(f"Key frames of {printable(self.numbers['recording'])}."),
                self.image("film_strip"),
                self.image("clicks")]


class Comparisons(_Arc3Section):
    """Two or more runs on the same games: the mean per-game difference with its paired
    bootstrap interval, the games only one of two runs won, the spread over the runs,
    and the first two runs' scores per game."""

    title = "Comparison"
    anchor = "arcnb-arc3-comparison"

    def compute(self):
        cmp = self.run.comparison
        if cmp is None:
            self.empty = "One run: nothing to compare (give two runs or more)."
            return
        for name in ("pairs", "won_alone", "spread"):
            self.tables[name] = cmp.tables[name]
        self.numbers = dict(cmp.numbers)

    def figures(self):
        a, b = self.run.comparison.cards[:2]
        la, lb = self.run.comparison.labels[:2]
        return [Figure("compare_scores", lambda ax: F.compare_scores(a, b, ax=ax,
                                                                     labels=(la, lb)),
                       axes_level=False)]

    def body(self):
        n = self.numbers
        return [note(f"Over {n['n_games']} games ({n['games']}: the games every run counts); "
                     "difference = second - first, 95% paired bootstrap interval over games."),
                table(self.tables["pairs"], table_id="arcnb-arc3-pairs", digits=2),
                table(self.tables["won_alone"], table_id="arcnb-arc3-won-alone"),
                table(self.tables["spread"], table_id="arcnb-arc3-spread", digits=2),
                self.image("compare_scores")]


#: The longest file or folder name the report makes of a label or a game id (a file
#: system allows 255 bytes; the rest is left for ``_2`` and ``.html``).
MAX_NAME = 120


def folder_names(labels: Sequence[str]) -> list[str]:
    """Labels as file and folder names: safe characters only, at most
    :data:`MAX_NAME` long, and unique (:func:`arcnb.runs.unique_labels`, ``_2``)."""
    return unique_labels([re.sub(r"[^A-Za-z0-9._-]+", "_", lab).strip("._")[:MAX_NAME] or "run"
                          for lab in labels], sep="_")


class Files(_Arc3Section, FilesSection):
    """With ``figures_dir`` (the report's folder): each run's tables (``summary.json``,
    games, plays, levels, faults) in a folder of its own and a replay page per
    recording under ``replays/``, listed with links."""

    title = "Files and replays"
    anchor = "arcnb-arc3-files"
    nothing = "Nothing written (no folder given for the report's files)."

    def write(self, folder, *, overwrite=True):
        # every file through the one guarded output folder: a link planted at OUT/<run>/
        # or OUT/replays/<run>/ is refused, never written through
        out = OutputFolder(folder)
        folder = out.path
        paths, rows = [], []
        for name, card in zip(folder_names(self.run.labels), self.run.cards):
            written = card.write(out.folder(name).path, overwrite=overwrite)
            paths += written
            rows += [{"run": card.label, "file": str(p.relative_to(folder)), "what": "table"}
                     for p in written]
            plays = [(rec, gid) for rec in (card.run.recordings if card.run else [])
                     for gid in rec.game_ids]
            # the names of one run's replays made together: "a b", "a_b" and "a&b" are
            # three files, never one
            stems = folder_names([f"{rec.name}-{gid}" if len(rec.game_ids) > 1 else rec.name
                                   for rec, gid in plays])
            replays = out.folder("replays").folder(name) if plays else None
            for (rec, gid), stem in zip(plays, stems):
                target = replays.target(f"{stem}.html")
                if target.exists() and not overwrite:
                    raise ParameterError(f"{target} exists (set overwrite)")
                target.parent.mkdir(parents=True, exist_ok=True)
                p = replay(card, rec, game_id=gid).write(target, overwrite=True)
                paths.append(p)
                rows.append({"run": card.label, "file": str(p.relative_to(folder)),
                             "what": f"replay of {gid}"})
        self.tables["files"] = pd.DataFrame(rows, columns=["run", "file", "what"])
        return paths

    def body(self):
        rows = "".join(
            f"<tr><td class='arcnb-text'>{_text(r.run)}</td><td class='arcnb-text'>"
            + (f"<a href='{escape(r.file)}'>{_text(r.file)}</a>" if r.what != "table"
               else _text(r.file))
            + f"</td><td class='arcnb-text'>{_text(r.what)}</td></tr>"
            for r in self.tables["files"].itertuples(index=False))
        return [note("Paths are relative to the report's folder; a replay is a page of its "
                     "own (a slider and the arrow keys step through the recording)."),
                "<table class='arcnb-table' id='arcnb-arc3-files'><thead><tr><th "
                "class='arcnb-text'>run</th><th class='arcnb-text'>file</th><th "
                f"class='arcnb-text'>what</th></tr></thead><tbody>{rows}</tbody></table>"]


#: The ARC-AGI-3 report, in order (one notebook cell per section).
ARC3 = [Scores, Games, Levels, Faults, KeyFrames, Comparisons, Files, Provenance]


__all__ = ["Options", "ScoredRuns", "report_inputs", "scored_runs", *section_names(globals()),
           "Provenance", "ARC3"]


def _two(v) -> str:
    """A score as the scorecard shows it: two decimals."""
    return fmt_number(v, least=2, most=2)
