"""What a recording (or its recorder) got wrong, named and never repaired.

Each fault is ``{"recording", "kind", "detail", "game_id"}``; the score is always the
score of the steps as recorded, and the fault says where that number is not what the
game saw. The kinds (:data:`FAULT_KINDS`):

* ``all_actions_reset``: every step is recorded as RESET while the frame (or the levels
  completed) changed: the recorder lost the actions (a RESET does not move the game on),
  and the scorecard of such a file counts level resets, not actions;
* ``missing_first_frame``: the recording does not start with the game's opening RESET
  (and its first frame), or that step has no frame while later steps have one;
* ``past_action_cap``: more actions than the run's declared cap (one more: the agents'
  loop runs while its counter is at most the cap);
* ``full_reset_in_competition``: a run that claims competition mode (one play per game,
  no full resets) holds full resets that start further plays;
* ``no_frames``: recorded without frames: nothing to show, unchanged actions unknown,
  and the steps sent after the game ended are recognised by the state before them;
* ``baselines_missing``: a played game without human baselines scores 0;
* ``baselines_short``: fewer baselines than the levels a play went through: the play
  scores 0, as the scorecard scores it;
* ``never_started``: a game whose steps hold no full reset: no play starts, and the
  scorecard leaves the game out;
* ``recorded_scorecard_differs``: the scorecard line the agents' recorder appended
  counts other actions than the recorded steps give;
* ``levels_beyond_win``: a step records more levels completed than the game has;
* ``levels_fall``: the levels completed fall without a RESET while the game runs (a
  game never takes back a level it gave; a step sent after it ended is not counted);
* ``same_session_twice``: two recordings hold steps of the same game session (one
  guid): the same plays, recorded twice, count twice.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import one_line, printable
from .reader import Run

__all__ = ["FAULT_KINDS", "find_faults", "faults_table", "fault_lines", "FAULTS_SHOWN"]

#: Every fault kind, with what it means.
FAULT_KINDS = {
    "all_actions_reset": "every action recorded as RESET while the frames change",
    "missing_first_frame": "the recording lacks the game's opening RESET and first frame",
    "past_action_cap": "more actions than the run's declared cap",
    "full_reset_in_competition": "full resets in a run that claims competition mode",
    "no_frames": "recorded without frames",
    "baselines_missing": "a played game without human baselines (it scores 0)",
    "baselines_short": "fewer baselines than the levels a play went through (it scores 0)",
    "never_started": "no full reset starts a play (the scorecard leaves the game out)",
    "recorded_scorecard_differs": "the recorder's scorecard line counts other actions",
    "levels_beyond_win": "more levels completed than the game has",
    "levels_fall": "the levels completed fall without a RESET",
    "same_session_twice": "two recordings of one game session (its plays count twice)",
}


def _fault(rec, kind: str, detail: str, game_id: str | None = None) -> dict:
    return {"recording": str(rec.path) if rec is not None else "",
            "kind": kind, "detail": one_line(detail, 400), "game_id": game_id}


def _recording_faults(rec, run: Run) -> list[dict]:
    out = []
    s = rec.steps
    if not len(s):
        return out
    acts = s["action"]
    # numpy columns, and the games grouped only when there are several (20,000 one-game
    # recordings made a pandas group each)
    act, frame, gids = acts.to_numpy(), s["frame"].to_numpy(), s["game_id"].to_numpy()
    groups = ({gids[0]: np.arange(len(s))} if (gids == gids[0]).all()
              else s.groupby("game_id", sort=False).indices)
    for gid, idx in groups.items():
        i = idx[0]
        if act[i] != "RESET":
            out.append(_fault(rec, "missing_first_frame",
                              f"game {gid}: the first recorded step (line {s['line'].iat[i]}) "
                              f"is {act[i]}, not the opening RESET: the game's first "
                              "frame and what came before are missing", gid))
        elif frame[i] == "absent" and (frame[idx] == "present").any():
            out.append(_fault(rec, "missing_first_frame",
                              f"game {gid}: the opening RESET (line {s['line'].iat[i]}) has no "
                              "frame while later steps have one", gid))
    if len(s) >= 2 and (act == "RESET").all():
        changed = int((s["frame_changed"] == 1).sum())
        levels = int((s["levels_completed"].diff().fillna(0) != 0).sum())
        if changed or levels:
            what = (f"the frame changed {changed} times" if changed else
                    f"the levels completed changed {levels} times")
            out.append(_fault(rec, "all_actions_reset",
                              f"all {len(s)} steps are recorded as RESET while {what}: the "
                              "recorder lost the actions, and the scorecard of these steps "
                              "counts level resets, not the actions played",
                              rec.game_ids[0] if rec.game_ids else None))
    out += _level_faults(rec, s)
    if (frame == "absent").all():
        out.append(_fault(rec, "no_frames",
                          "recorded without frames: no frame to show, actions that left the "
                          "frame unchanged unknown, and steps sent after the game ended are "
                          "told by the state before them", None))
    cap = rec.declared.get("max_actions", run.max_actions)
    if cap is not None:
        n = int((acts != "NONE").sum())
        if n > cap:
            extra = n - cap
            why = (" (one too many: an agent loop that runs while its counter is at most "
                   "the cap sends cap + 1 actions)" if extra == 1 else "")
            out.append(_fault(rec, "past_action_cap",
                              f"{n} actions recorded, {extra} more than the declared cap of "
                              f"{cap}{why}", rec.game_ids[0] if rec.game_ids else None))
    competition = rec.declared.get("competition_mode", run.competition)
    if competition:
        for gid, g in s.groupby("game_id", sort=False):
            full = g[(g["action"] == "RESET") & g["full_reset"]]
            if len(full) > 1:
                out.append(_fault(rec, "full_reset_in_competition",
                                  f"game {gid}: {len(full) - 1} full resets after the first "
                                  f"(lines {', '.join(map(str, full['line'].iloc[1:6]))}"
                                  f"{', ...' if len(full) > 6 else ''}) in a run that claims "
                                  "competition mode: each starts another play, which "
                                  "competition mode does not allow", gid))
    return out


def _level_faults(rec, s: pd.DataFrame) -> list[dict]:
    """More levels completed than the game has, and levels that fall without a RESET,
    each named once per game with its first line."""
    out = []
    lc, win = s["levels_completed"].to_numpy(), s["win_levels"].to_numpy()
    if not ((win > 0) & (lc > win)).any() and not (np.diff(lc) < 0).any():
        return out  # the common case, without grouping
    for gid, idx in s.groupby("game_id", sort=False).indices.items():
        beyond = idx[(win[idx] > 0) & (lc[idx] > win[idx])]
        if len(beyond):
            i = beyond[0]
            out.append(_fault(rec, "levels_beyond_win",
                              f"game {gid}: line {s['line'].iloc[i]} records {lc[i]} levels "
                              f"completed of {win[i]} ({len(beyond)} steps so)", gid))
        if len(idx) > 1:
            prev, cur = idx[:-1], idx[1:]
            # a step sent after the game ended (GAME_OVER, WIN) answers with nothing: not
            # a fall the game made
            ended = np.isin(s["state"].to_numpy()[prev], ("GAME_OVER", "WIN"))
            fall = cur[(lc[cur] < lc[prev]) & (s["action"].to_numpy()[cur] != "RESET")
                       & ~ended]
            if len(fall):
                i = fall[0]
                out.append(_fault(rec, "levels_fall",
                                  f"game {gid}: line {s['line'].iloc[i]} records "
                                  f"{lc[i]} levels completed after more, without a RESET "
                                  f"({len(fall)} steps so)", gid))
    return out


def _session_faults(run: Run) -> list[dict]:
    """A game session (game id and guid) whose steps are in two or more recordings."""
    where: dict[tuple, list] = {}
    for rec in run.recordings:
        s = rec.steps
        if not len(s):
            continue
        for gid, guid in dict.fromkeys(zip(s["game_id"].to_numpy(), s["guid"].to_numpy())):
            if guid:
                where.setdefault((gid, guid), []).append(rec)
    return [_fault(recs[1], "same_session_twice",
                   f"game {gid}: session {guid} is in {len(recs)} recordings "
                   f"({', '.join(r.name for r in recs[:3])}{', ...' if len(recs) > 3 else ''}): "
                   "its plays count once per recording", gid)
            for (gid, guid), recs in where.items() if len(recs) > 1]


def _spent_by_file(steps: pd.DataFrame) -> dict:
    """``{(recording name, game_id): steps counted as actions}`` (a level reset counts as
    one), over the scorer's ``steps`` table at once."""
    spent = steps[steps["counted"].isin(["action", "level reset"])]
    return spent.groupby(["recording", "game_id"]).size().to_dict() if len(spent) else {}


def _scorecard_faults(rec, spent: dict) -> list[dict]:
    card_line = rec.scorecard
    if not isinstance(card_line, dict):
        return []
    out = []
    for gid, card in card_line.items():
        if not isinstance(card, dict) or not isinstance(card.get("actions"), list):
            continue
        try:
            theirs = sum(int(a) for a in card["actions"])
        except (TypeError, ValueError):
            continue
        ours = int(spent.get((rec.name, gid), 0))
        if theirs != ours:
            out.append(_fault(rec, "recorded_scorecard_differs",
                              f"game {gid}: the recorder's scorecard line counts {theirs} "
                              f"actions, the recorded steps {ours} (the server counts "
                              "steps the recording lacks, or the recording holds steps it "
                              "did not count)", gid))
    return out


def find_faults(run: Run, *, plays: pd.DataFrame, steps: pd.DataFrame, baselines: dict,
                games: pd.DataFrame) -> list[dict]:
    """Every fault of ``run`` given its accounting (the scorer's ``plays``, ``steps``
    and ``games`` tables) and its ``baselines``."""
    out: list[dict] = []
    by_game: dict[str, list] = {}
    # the steps each file's scorecard line is checked against, counted once for all
    spent = _spent_by_file(steps) if any(isinstance(r.scorecard, dict)
                                         for r in run.recordings) else {}
    out += _session_faults(run)
    for rec in run.recordings:
        out += _recording_faults(rec, run)
        out += _scorecard_faults(rec, spent)
        for gid in rec.game_ids:
            by_game.setdefault(gid, []).append(rec)
    for row in games.itertuples(index=False):
        recs = by_game.get(row.game_id, [])
        rec = recs[0] if recs else None
        if row.plays == 0:
            if recs:
                out.append(_fault(rec, "never_started",
                                  f"game {row.game_id}: no full reset starts a play in its "
                                  f"{sum(len(r.steps) for r in recs)} steps; the scorecard "
                                  "leaves the game out", row.game_id))
            continue
        b = baselines.get(row.game_id)
        if not b:
            near = sorted(g for g in baselines if g.split("-", 1)[0] ==
                          row.game_id.split("-", 1)[0])
            hint = (f" (baselines exist for {', '.join(near[:3])}: the scorecard matches "
                    "a game by its full id, version included)" if near else "")
            out.append(_fault(rec, "baselines_missing",
                              f"game {row.game_id} has no human baselines: it scores 0{hint}",
                              row.game_id))
    short = plays[plays["zero_because"] == "fewer baselines than levels played"]
    named: dict[str, object] = {}  # the first recording of each file name
    for r in run.recordings:
        named.setdefault(r.name, r)
    for row in short.itertuples(index=False):
        rec = named.get(row.recording)
        b = baselines.get(row.game_id) or []
        out.append(_fault(rec, "baselines_short",
                          f"game {row.game_id} play {row.play + 1}: {len(b)} baselines but "
                          f"the play changed its levels completed {row.level_changes} times: "
                          "it scores 0", row.game_id))
    return out


#: Faults of one kind listed in the terminal; the rest are counted (all are in the JSON
#: and in faults.csv).
FAULTS_SHOWN = 5


def fault_lines(faults) -> list[str]:
    """The faults as terminal lines: their count, then at most :data:`FAULTS_SHOWN` of
    each kind (20,000 recordings give no 20,000 lines) and how many more, every string
    escaped (:func:`arcnb.text.printable`)."""
    if not faults:
        return ["faults: none found"]
    lines = [f"faults: {len(faults)} (the score counts the steps as recorded)"]
    shown: dict[str, int] = {}
    for f in faults:
        shown[f["kind"]] = shown.get(f["kind"], 0) + 1
        if shown[f["kind"]] <= FAULTS_SHOWN:
            lines.append(f"  {f['kind']}: {printable(f['detail'])} ({printable(f['recording'])})")
    return lines + [f"  ... and {n - FAULTS_SHOWN} more {kind} faults (every fault: --json, or "
                    "faults.csv with --out)" for kind, n in shown.items() if n > FAULTS_SHOWN]


def faults_table(faults) -> pd.DataFrame:
    """The faults as a table (``recording``, ``game_id``, ``kind``, ``detail``)."""
    df = pd.DataFrame(list(faults), columns=["recording", "game_id", "kind", "detail"])
    df["game_id"] = df["game_id"].map(lambda g: "" if g is None or
                                      (isinstance(g, float) and math.isnan(g)) else g)
    return df
