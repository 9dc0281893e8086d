"""The "Difficulty" section of the comparison page (:data:`arcnb.report.sections.COMPARE`):
task difficulty across the compared runs (:mod:`arcnb.difficulty`), built from a
:class:`~arcnb.compare.Comparison`."""
from __future__ import annotations

from ...difficulty import BEYOND, SURPRISE
from ...html import note, table
from ...plot import difficulty as PD
from ...text import fmt_number, fmt_significant
from .base import Figure, Section, section_names
from .compare import COMPARISON

#: At most this many systems get a surprises gallery (those with the most surprises).
MAX_GALLERIES = 4


class Difficulty(Section):
    """Each system's ability with its interval, accuracy by difficulty bin beside the
    other systems', people's solve rates against the fitted difficulty (when given) and
    the surprises: outputs a system fails although the model expected it to solve them."""
    built_from = COMPARISON

    title = "Difficulty"
    anchor = "arcnb-section-difficulty"
    intro = ("An item response model over the outputs x systems matrix (solved within 2 "
             "attempts or not): each system gets an ability, each output a difficulty, and "
             "P(solved) = sigmoid(ability - difficulty) (Rasch; the two-parameter model scales "
             "it per output). Difficulties are relative to these systems and centred to mean "
             "0; with few systems their intervals are wide. A surprise is an output a system "
             f"never solves although the model gives it at least {fmt_significant(SURPRISE)}; beyond, one it "
             f"solves at most {fmt_significant(BEYOND)}.")

    def compute(self):
        d = getattr(self.run, "difficulty", None)
        if d is None:
            self.empty = "No difficulty model was fitted (the difficulty option is none)."
            return
        s = d.summary()
        self.numbers = {"model": s["model"], "prior": s["prior"], "interval": s["interval"],
                        "notes": list(s["notes"]), "human": s.get("human")}
        self.tables["abilities"] = d.abilities
        self.tables["tasks"] = d.tasks.sort_values("difficulty", ascending=False,
                                                   kind="mergesort").reset_index(drop=True)
        self.tables["unexpected"] = d.unexpected
        self.tables["curves"] = d.curves
        self.tables["human"] = d.human
        counts = d.abilities.sort_values("n_surprises", ascending=False, kind="mergesort")
        self.numbers["galleries"] = [str(x) for x, n in zip(counts["system"],
                                                            counts["n_surprises"]) if n > 0
                                     ][:MAX_GALLERIES]
        self.numbers["first_run"] = {sys: runs[0] for sys, runs in d.members.items()}

    def _gallery(self, system: str):
        runs = {r.label: r for r in self.run.runs}
        res = runs[self.numbers["first_run"][system]].results
        rows = self.tables["unexpected"]
        rows = rows[(rows["system"] == system) & (rows["kind"] == "surprise")]
        return PD.surprise_gallery(res, rows, max_items=self.options.gallery_size or 24,
                                   title=f"surprises of {system}")

    def figures(self):
        figs = [Figure("difficulty_abilities",
                       lambda ax: PD.ability_intervals(self.tables["abilities"], ax=ax)),
                Figure("difficulty_accuracy",
                       lambda ax: PD.accuracy_by_difficulty(self.tables["curves"], ax=ax))]
        if self.tables.get("human") is not None and len(self.tables["human"]):
            figs.append(Figure("difficulty_human",
                               lambda ax: PD.difficulty_vs_human(self.tables["human"], ax=ax)))
        if self.options.gallery_size:
            figs += [Figure(f"difficulty_surprises_{i}",
                            (lambda s: lambda ax: self._gallery(s))(system),
                            tight=False, axes_level=False)
                     for i, system in enumerate(self.numbers["galleries"])]
        return figs

    def body(self):
        u = self.tables["unexpected"]
        parts = [note(f"model: {self.numbers['model']}; prior: {self.numbers['prior']}; "
                      f"{self.numbers['interval']}."),
                 table(self.tables["abilities"], table_id="arcnb-difficulty-abilities"),
                 self.image("difficulty_abilities"), self.image("difficulty_accuracy")]
        human = self.numbers.get("human")
        if human:
            parts += [note(f"{human['n_tasks']} tasks with people's solve rates; Spearman "
                           f"rank correlation with the difficulty {fmt_number(human['spearman'], least=2, most=2)}."),
                      self.image("difficulty_human")]
        parts.append(table(self.tables["tasks"].head(20), table_id="arcnb-difficulty-tasks",
                           caption="The 20 hardest tasks"))
        parts.append(table(u[u["kind"] == "surprise"], table_id="arcnb-difficulty-surprises",
                           caption="Surprises", max_rows=100)
                     if (u["kind"] == "surprise").any() else note("No surprises."))
        for i, _ in enumerate(self.numbers["galleries"] if self.options.gallery_size else []):
            parts.append(self.image(f"difficulty_surprises_{i}"))
        parts += [note(f"note: {n}") for n in self.numbers["notes"]]
        return parts


__all__ = section_names(globals())
