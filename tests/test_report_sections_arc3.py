"""arcnb.report.sections.arc3: each section of the ARC-AGI-3 report in-process: its tables are the
scorer's, its HTML escapes every user string, it says in words when it has nothing to
show, its figures pass the figure check, and the notebook made of them is thin."""
from __future__ import annotations

import json
import re


import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import _arc3_game as G  # noqa: E402
from arcnb.report.sections import arc3 as S  # noqa: E402
from arcnb.errors import ParameterError  # noqa: E402
from arcnb.html import check_self_contained  # noqa: E402
from arcnb.plot.check import check_figure  # noqa: E402


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sections")
    base = G.scenario(tmp / "a")
    G.second_agent(tmp / "b")
    runs = S.scored_runs([tmp / "a", tmp / "b"], base, labels=["agent <A>", "agent\u202eB"],
                         n_boot=200)
    return tmp, base, runs


def test_scored_runs_and_the_scores_section(two):
    _, _, runs = two
    # agent B: tw01 at twice the baseline (25); tw02 at three times its walks of 5, 4 and
    # 9 against baselines of 6, 4 and 9, weighted by level number
    tw02 = (100 * (6 / 15) ** 2 + 2 * 100 * (4 / 12) ** 2 + 3 * 100 * (9 / 27) ** 2) / 6
    assert runs.cards[0].score == 31.875
    assert runs.cards[1].score == pytest.approx((25 + tw02) / 2)
    sec = S.Scores.from_run(runs)
    assert list(sec.tables["runs"]["run"]) == ["agent <A>", "agent\u202eB"]
    html = sec.to_html()
    assert "agent &lt;A&gt;" in html and "<A>" not in html
    assert "\u202e" not in html and "agent\\u202eB" in html
    assert "rule 0.9.9" in html and "hidden games" in html
    check_self_contained(html)


def test_games_levels_and_faults_are_the_scorers_tables(two):
    _, _, runs = two
    games = S.Games.from_run(runs).tables["games"]
    a = games[games["run"] == "agent <A>"].set_index("game_id")
    assert a.loc["tw02-1b2c3d4e", "score"] == 27.5 and a.loc["tw01-0a1b2c3d", "plays"] == 3
    levels = S.Levels.from_run(runs).tables["levels"]
    assert len(levels) == len(runs.cards[0].levels) + len(runs.cards[1].levels)
    faults = S.Faults.from_run(runs).tables["faults"]
    assert sorted(faults["kind"]) == ["baselines_missing", "baselines_short"]
    assert set(faults["run"]) == {"agent <A>"}


def test_the_comparison_section(two):
    _, _, runs = two
    sec = S.Comparisons.from_run(runs)
    p = sec.tables["pairs"].iloc[0]
    assert (p["a"], p["b"], p["n_games"]) == ("agent <A>", "agent\u202eB", 2)
    # agent A: 100 and 27.5 on the two common games; agent B: 25 and 12.96...
    b2 = runs.cards[1].games.set_index("game_id")["score"]
    assert p["difference"] == pytest.approx(((25 - 100) + (b2["tw02-1b2c3d4e"] - 27.5)) / 2)
    assert "compare_scores" in sec.to_html()


def test_sections_say_when_they_have_nothing_to_show(tmp_path):
    G.write_lines(tmp_path / "r.jsonl", G.level_walk([2], frame="absent"))
    one = S.scored_runs([tmp_path / "r.jsonl"], {"hb01-00000001": [2]})
    assert S.Comparisons.from_run(one).empty.startswith("One run: nothing to compare")
    assert "no frame" in S.KeyFrames.from_run(one).empty
    assert "none of the faults arcnb checks" not in (S.Faults.from_run(one).empty or "")
    clean = S.scored_runs([G.write_lines(tmp_path / "c.jsonl", G.level_walk([2]))],
                          {"hb01-00000001": [2]})
    assert "none of the faults arcnb checks" in S.Faults.from_run(clean).empty
    assert "Nothing written" in S.Files.from_run(clean).empty
    html = S.Comparisons.from_run(one).to_html()
    assert "nothing to compare" in html
    with pytest.raises(ParameterError):
        S.Comparisons.from_run(one).plot()
    with pytest.raises(ParameterError):
        S.scored_runs([], {})
    with pytest.raises(ParameterError):
        S.Scores.from_run("not a run")


@pytest.mark.parametrize("width", ["column", "page"])
def test_every_section_figure_passes_the_figure_check(two, width):
    _, _, runs = two
    for cls in S.ARC3:
        sec = cls.from_run(runs, S.Options(width=width))
        for spec in (sec.figures() if sec.empty is None else []):
            fig = sec.figure(spec.name)
            problems = check_figure(fig)
            assert problems == [], f"{cls.__name__}/{spec.name} at {width}:\n" + "\n".join(problems)
            plt.close(fig)


def test_files_writes_tables_and_replays_with_relative_links(two, tmp_path):
    _, _, runs = two
    sec = S.Files.from_run(runs, S.Options(figures_dir=tmp_path / "out"))
    files = sec.tables["files"]
    assert (tmp_path / "out" / "agent_A" / "summary.json").is_file()
    replays = files[files["what"].str.startswith("replay")]
    assert len(replays) == 5 + 2
    for f in replays["file"]:
        assert (tmp_path / "out" / f).is_file() and not f.startswith("/")
    html = sec.to_html()
    links = re.findall(r"href='([^']+)'", html)
    assert len(links) == 7 and all(link.startswith("replays/") for link in links)
    check_self_contained(html)
    summary = json.loads((tmp_path / "out" / "agent_A" / "summary.json").read_text())
    assert summary["score"] == 31.875


def test_the_shipped_notebook_is_one_thin_cell_per_section():
    """arc3.ipynb (shipped, committed): a parameters cell, a setup cell, then one cell per
    section of ARC3 in the page's order."""
    from arcnb.resources import notebook

    nb = json.loads(notebook("arc3").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[0]["metadata"]["tags"] == ["parameters"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert [c["id"] for c in nb["cells"]] == [f"cell-{k:02d}" for k in range(len(nb["cells"]))]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    called = [re.match(r"S\.(\w+)\.from_run\(scored, options\)", "".join(c["source"])) for c in code[2:]]
    assert [m.group(1) for m in called if m] == [s.__name__ for s in S.ARC3]
    assert len(called) == len(S.ARC3)


def test_report_inputs_default_to_the_bundled_example(tmp_path):
    from arcnb.resources import arc3_example

    ex = arc3_example()
    assert S.report_inputs([], "") == (ex.runs, ex.baselines)
    assert S.report_inputs(None, None) == (ex.runs, ex.baselines)
    assert S.report_inputs(["a/"], "b.csv") == (["a/"], "b.csv")
    with pytest.raises(ParameterError, match="baselines"):
        S.report_inputs(["a/"], "")
    with pytest.raises(ParameterError, match="without runs"):
        S.report_inputs([], "b.csv")


def test_recordings_are_keyed_by_a_name_unique_in_their_run(tmp_path):
    """Two recordings named ``rec.jsonl`` in two folders of one run stay two (their
    steps, plays and replays apart), and names that differ only in punctuation (``a b``,
    ``a_b``, ``a&b``) get three replay files, not one."""
    base = G.scenario(tmp_path / "card")
    for sub, gid in (("x", "tw01-0a1b2c3d"), ("y", "tw02-1b2c3d4e")):
        g = G.Game(gid) if gid.startswith("tw01") else G.Game(gid, G.GAME_B_LEVELS)
        G.play(tmp_path / "same" / sub / "rec.jsonl", G.agent(g), game=g, guid=sub)
    for name, gid in (("a b", "tw01-0a1b2c3d"), ("a_b", "tw02-1b2c3d4e"),
                      ("a&b", "tw01-0a1b2c3d")):
        g = G.Game(gid) if gid.startswith("tw01") else G.Game(gid, G.GAME_B_LEVELS)
        G.play(tmp_path / "punct" / f"{name}.jsonl", G.agent(g), game=g, guid=name)
    runs = S.scored_runs([tmp_path / "same", tmp_path / "punct"], base, n_boot=20)
    same = runs.cards[0]
    assert sorted(r.name for r in same.run.recordings) == ["x/rec.jsonl", "y/rec.jsonl"]
    assert sorted(same.plays["recording"].unique()) == ["x/rec.jsonl", "y/rec.jsonl"]
    sec = S.Files.from_run(runs, S.Options(figures_dir=tmp_path / "out"))
    replays = sec.tables["files"]
    replays = replays[replays["what"].str.startswith("replay")]["file"].tolist()
    assert len(replays) == len(set(replays)) == 5
    assert all((tmp_path / "out" / f).is_file() for f in replays)


def test_a_link_planted_in_the_reports_folder_is_never_written_through(tmp_path):
    """``OUT/<run>`` or ``OUT/replays/<run>`` planted as a symbolic link to a folder
    outside: refused in one line, and nothing is written there (with or without
    overwrite)."""
    from arcnb.errors import ArcnbError

    base = G.scenario(tmp_path / "card")
    runs = S.scored_runs([tmp_path / "card"], base, labels=["agent"], n_boot=20)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for planted in (("agent",), ("replays", "agent")):
        out = tmp_path / f"out{len(planted)}"
        link = out.joinpath(*planted)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(ArcnbError, match="symbolic link"):
            S.Files.from_run(runs, S.Options(figures_dir=out)).write(out, overwrite=True)
        assert list(elsewhere.iterdir()) == []
