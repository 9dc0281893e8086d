"""Score recordings with the real toolkit (``arc-agi`` 0.9.9, Python >= 3.12): run by the
cross-check test in a throwaway virtual environment, never imported by the tests.

``python _arc3_toolkit.py BASELINES.json RECORDING.jsonl...`` feeds every recorded line to
``Scorecard.update_scorecard`` exactly as ``EnvironmentWrapper._set_last_response`` does
(only lines with a guid and a non-empty frame), then prints the
``EnvironmentScorecard.from_scorecard`` result as JSON.
"""
import json
import sys

import numpy as np
from arc_agi.models import EnvironmentInfo
from arc_agi.scorecard import EnvironmentScorecard, Scorecard
from arcengine import ActionInput, FrameDataRaw, GameAction, GameState


def main(argv):
    baselines = json.load(open(argv[0], encoding="utf-8"))
    card = Scorecard(card_id="cross-check")
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            for line in f:
                data = json.loads(line)["data"]
                ai = data["action_input"]
                ident = ai["id"]
                action = GameAction.from_id(ident) if isinstance(ident, int) \
                    else GameAction.from_name(ident)
                resp = FrameDataRaw(game_id=data["game_id"], state=GameState(data["state"]),
                                    levels_completed=data["levels_completed"],
                                    win_levels=data["win_levels"],
                                    action_input=ActionInput(id=action, data=ai["data"] or {},
                                                             reasoning=ai.get("reasoning")),
                                    guid=data["guid"], full_reset=data["full_reset"],
                                    available_actions=data["available_actions"])
                resp.frame = [np.array(layer) for layer in data["frame"]]
                if resp.guid and len(resp.frame) > 0:
                    card.update_scorecard(resp.guid, resp, resp.full_reset)
    infos = [EnvironmentInfo(game_id=g, baseline_actions=b) for g, b in baselines.items()]
    env = EnvironmentScorecard.from_scorecard(card, infos)
    out = {"score": env.score, "games": {}}
    for e in env.environments:
        best = max(e.runs, key=lambda r: r.score)
        out["games"][e.id] = {"score": e.score, "actions": e.actions, "resets": e.resets,
                              "levels_completed": e.levels_completed, "plays": len(e.runs),
                              "level_scores": best.level_scores,
                              "level_actions": best.level_actions,
                              "play_scores": [r.score for r in e.runs]}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
