"""Taxonomies: user CSV / JSON files, folder layouts, the shared real taxonomies and the
automatic structural categories on hand-made tasks."""
import json
from pathlib import Path

import numpy as np
import pytest

from arcnb.data import Pair, Task, load_dataset
from arcnb.errors import ArcnbError
from arcnb.taxonomy import (STRUCTURAL_CATEGORIES, UNCATEGORIZED, Taxonomy, TaxonomyError,
                            coverage_table, folder_taxonomy, load_taxonomy, read_taxonomy_csv,
                            read_taxonomy_json, structural_categories, structural_taxonomy)

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TAX = SHARED / "taxonomies"


def need_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared folder ../shared holds the public "
                    "taxonomies used as real test inputs)")
    return path


# ------------------------------------------------------------------ user CSV / JSON
def test_csv_with_header_comments_extra_columns_and_suffixes(tmp_path):
    p = tmp_path / "tags.csv"
    p.write_text("# my tags\n"
                 "task_id,category,taxonomy,source,note\n"
                 "007bbfb7.json,tiling,mine,me,x\n"
                 "  # indented comment\n"
                 "\n"
                 "007bbfb7_v2,fractal,mine,me,y\n"
                 "00d62c1b,fill,mine,me,z\n"
                 "dir/00d62c1b.json,fill,mine,me,dup\n")
    tax = read_taxonomy_csv(p)
    assert tax.name == "mine"
    assert tax.labels == {"007bbfb7": ("tiling", "fractal"), "00d62c1b": ("fill",)}
    assert tax.categories == ["tiling", "fractal", "fill"]
    assert tax.categories_of("007bbfb7.json") == ("tiling", "fractal")
    assert tax.categories_of("ffffffff") == (UNCATEGORIZED,)
    assert tax.is_multilabel()


def test_csv_without_header_and_column_order(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("aaaa,x\nbbbb,y\n")
    assert read_taxonomy_csv(p).labels == {"aaaa": ("x",), "bbbb": ("y",)}
    assert read_taxonomy_csv(p).name == "t"
    q = tmp_path / "q.csv"
    q.write_text("category,extra,task_id\nred,1,cccc\n")
    assert read_taxonomy_csv(q).labels == {"cccc": ("red",)}


def test_csv_with_several_taxonomies_needs_a_choice(tmp_path):
    p = tmp_path / "two.csv"
    p.write_text("task_id,category,taxonomy\naaaa,x,one\nbbbb,y,two\n")
    with pytest.raises(TaxonomyError, match="2 taxonomies"):
        read_taxonomy_csv(p)
    assert read_taxonomy_csv(p, taxonomy="two").labels == {"bbbb": ("y",)}
    with pytest.raises(TaxonomyError, match="no taxonomy named"):
        read_taxonomy_csv(p, taxonomy="three")


def test_csv_errors_name_the_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("task_id,category\naaaa,x\nbbbb,\n")
    with pytest.raises(TaxonomyError, match="line 3") as exc:
        read_taxonomy_csv(p)
    assert exc.value.line == 3 and isinstance(exc.value, ArcnbError)
    e = tmp_path / "empty.csv"
    e.write_text("# nothing\n")
    with pytest.raises(TaxonomyError, match="no rows"):
        read_taxonomy_csv(e)
    with pytest.raises(TaxonomyError, match="not found"):
        read_taxonomy_csv(tmp_path / "missing.csv")


def test_json_taxonomy(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"aaaa.json": "x", "bbbb": ["y", "z", "y"]}))
    tax = read_taxonomy_json(p)
    assert tax.labels == {"aaaa": ("x",), "bbbb": ("y", "z")}
    assert load_taxonomy(p).labels == tax.labels
    p.write_text(json.dumps({"aaaa": 3}))
    with pytest.raises(TaxonomyError, match="aaaa"):
        read_taxonomy_json(p)
    p.write_text("{not json")
    with pytest.raises(TaxonomyError, match="not valid JSON"):
        read_taxonomy_json(p)


def test_coverage_reports_uncategorized_tasks():
    tax = Taxonomy("t", {"a": ("x",), "b": ("x", "y"), "z": ("y",)})
    cov = tax.coverage(["a", "b", "c", "d"])
    assert (cov["n_tasks"], cov["n_categorized"], cov["n_uncategorized"]) == (4, 2, 2)
    assert cov["coverage"] == 0.5 and cov["uncategorized"] == ["c", "d"]
    assert cov["n_multilabel"] == 1 and cov["n_unknown"] == 1
    table = tax.coverage_table(["a", "b", "c", "d"])
    assert list(table["category"]) == ["x", "y", UNCATEGORIZED]
    assert list(table["n_tasks"]) == [2, 1, 2]
    mem = tax.membership(["a", "b", "c"])
    assert list(map(tuple, mem.values)) == [("a", "x"), ("b", "x"), ("b", "y"),
                                            ("c", UNCATEGORIZED)]
    assert np.isnan(tax.coverage([])["coverage"])


def test_unknown_taxonomy_spec():
    with pytest.raises(TaxonomyError, match="unknown taxonomy"):
        load_taxonomy("no/such/file.yaml")
    with pytest.raises(TaxonomyError, match="needs a dataset"):
        load_taxonomy("structural")


# ---------------------------------------------------------------------- folders
def _task_json():
    return {"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[1]], "output": [[2]]}]}


def test_folder_layout(tmp_path):
    for rel in ("GroupA/t1.json", "GroupA/t2.json", "GroupB/sub/t3.json", "t4.json"):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(_task_json()))
    tax = folder_taxonomy(tmp_path)
    assert tax.labels == {"t1": ("GroupA",), "t2": ("GroupA",), "t3": ("sub",)}
    assert tax.categories_of("t4") == (UNCATEGORIZED,)
    assert folder_taxonomy(tmp_path, level=0).labels["t3"] == ("GroupB",)
    assert load_taxonomy(tmp_path).coverage(load_dataset(tmp_path))["n_uncategorized"] == 1


def test_conceptarc_folders_match_the_published_groups():
    root = need_shared(SHARED / "datasets" / "conceptarc")
    groups = read_taxonomy_csv(need_shared(TAX / "conceptarc_groups.csv"))
    ds = load_dataset(root)
    folders = folder_taxonomy(ds)
    assert folders.coverage(ds)["coverage"] == 1.0
    assert groups.coverage(ds)["coverage"] == 1.0
    corpus = [t.id for t in ds if t.group.startswith("corpus/")]
    assert len(corpus) == 160
    assert all(folders[t] == groups[t] for t in corpus)
    assert len(groups.categories) == 16


# ------------------------------------------------------------- shared taxonomies
def test_difficulty_levels_cover_all_arc_agi_1_tasks():
    tax = read_taxonomy_csv(need_shared(TAX / "arcgame_arc1_difficulty_levels.csv"))
    assert tax.categories == ["entry", "easy", "intermediate", "medium", "hard", "very-hard",
                              "expert"]
    for split in ("training", "evaluation"):
        ds = load_dataset(f"arc-agi-1:{split}")
        cov = tax.coverage(ds)
        assert cov["n_tasks"] == 400 and cov["coverage"] == 1.0, split
        assert cov["n_multilabel"] == 0
    assert len(tax) == 800


def test_training_tags_cover_all_arc_agi_1_training_tasks():
    tax = read_taxonomy_csv(need_shared(TAX / "bonin2020_arc1_training_tags.csv"))
    ds = load_dataset("arc-agi-1:training")
    cov = tax.coverage(ds)
    assert cov["coverage"] == 1.0 and cov["n_unknown"] == 0
    assert len(tax.categories) == 131
    assert tax.is_multilabel()
    # one row per task-category pair in the file (header excluded)
    n_rows = sum(1 for ln in (TAX / "bonin2020_arc1_training_tags.csv").read_text().splitlines()[1:]
                 if ln.strip())
    assert sum(len(c) for c in tax.labels.values()) == n_rows
    assert load_taxonomy(TAX / "bonin2020_arc1_training_tags.csv").name == "bonin2020"


# ------------------------------------------------------------ structural categories
def T(*pairs):
    return Task("hand", tuple(Pair(np.array(i, dtype=np.int8), np.array(o, dtype=np.int8))
                              for i, o in pairs), ())


def cats(*pairs):
    return set(structural_categories(T(*pairs)))


SHAPE = {"same_shape", "output_smaller", "output_larger", "shape_mixed"}


def test_shape_categories_partition():
    a = [[1, 0], [0, 0]]
    assert cats((a, [[0, 1], [0, 0]]), (a, [[0, 0], [0, 1]])) & SHAPE == {"same_shape"}
    # crop: 2x2 -> 1x1 and 2x2 -> 2x1
    assert cats((a, [[1]]), (a, [[1], [0]])) & SHAPE == {"output_smaller"}
    # tile: 2x2 -> 4x4 and 2x2 -> 2x4
    big = np.tile(a, (2, 2)).tolist()
    assert cats((a, big), (a, np.tile(a, (1, 2)).tolist())) & SHAPE == {"output_larger"}
    # taller but narrower
    assert cats((a, [[1], [0], [0]])) & SHAPE == {"shape_mixed"}
    # larger in one pair, smaller in another
    assert cats((a, big), (a, [[1]])) & SHAPE == {"shape_mixed"}


def test_color_mapping_only():
    # 1 -> 2, 0 stays, in both pairs (one of them unchanged is fine)
    assert "color_mapping_only" in cats(([[1, 0], [0, 1]], [[2, 0], [0, 2]]),
                                        ([[0, 0], [0, 0]], [[0, 0], [0, 0]]))
    # a swap 1 <-> 2 is a mapping too
    assert "color_mapping_only" in cats(([[1, 2]], [[2, 1]]))
    # two cells of colour 1 become different colours: not a mapping
    assert "color_mapping_only" not in cats(([[1, 1]], [[2, 3]]))
    # nothing changes at all: not a mapping task
    assert "color_mapping_only" not in cats(([[1, 2]], [[1, 2]]))


def test_dihedral():
    g = [[1, 2, 3], [4, 5, 6]]
    assert "dihedral" in cats((g, np.rot90(g).tolist()), ([[1, 0]], np.rot90([[1, 0]]).tolist()))
    assert "dihedral" in cats((g, [[3, 2, 1], [6, 5, 4]]))          # horizontal flip
    assert "dihedral" in cats((g, [[1, 4], [2, 5], [3, 6]]))        # transpose
    assert "dihedral" in cats((g, [[6, 3], [5, 2], [4, 1]]))        # anti-transpose
    # a different transform in each pair is not one dihedral rule
    assert "dihedral" not in cats((g, [[3, 2, 1], [6, 5, 4]]), (g, [[4, 5, 6], [1, 2, 3]]))
    # identity is not a dihedral task
    assert "dihedral" not in cats((g, g))


def test_fill_and_delete():
    inp = [[0, 0, 0], [0, 3, 0], [0, 0, 0]]
    fill = [[4, 4, 4], [4, 3, 4], [4, 4, 4]]
    c = cats((inp, fill))
    assert "fill_background" in c and "delete_to_background" not in c
    # delete: the 3 becomes background 0
    c = cats(([[0, 3], [0, 5]], [[0, 0], [0, 5]]))
    assert "delete_to_background" in c and "fill_background" not in c
    # a background cell AND an object cell change: neither
    c = cats(([[0, 3, 0]], [[0, 0, 4]]))
    assert not c & {"fill_background", "delete_to_background"}
    # background is the most frequent input colour (here 7, not 0)
    c = cats(([[7, 7, 7], [7, 0, 7]], [[7, 2, 7], [7, 0, 7]]))
    assert "fill_background" in c


def test_colors_added_removed_and_constant_output_shape():
    c = cats(([[1, 1]], [[1, 2]]), ([[3, 3]], [[3, 3]]))
    assert "colors_added" in c and "colors_removed" not in c
    c = cats(([[1, 2]], [[1, 1]]))
    assert "colors_removed" in c and "colors_added" not in c
    assert "constant_output_shape" in cats(([[1, 2, 3]], [[1]]), ([[4, 5], [6, 7]], [[4]]))
    assert "constant_output_shape" not in cats(([[1, 2, 3]], [[1]]), ([[4, 5]], [[4, 5]]))
    # one demonstration is not enough to call a shape constant
    assert "constant_output_shape" not in cats(([[1, 2, 3]], [[1]]))


def test_every_category_has_a_definition_and_evaluation_tasks_are_covered():
    assert all(isinstance(v, str) and len(v) > 30 for v in STRUCTURAL_CATEGORIES.values())
    ds = load_dataset("arc-agi-1:evaluation")
    tax = structural_taxonomy(ds)
    assert tax.coverage(ds)["coverage"] == 1.0
    # the shape categories partition the tasks: exactly one per task
    assert all(len(set(c) & SHAPE) == 1 for c in tax.labels.values())
    # independent check of same_shape on the real data
    same = {t.id for t in ds if all(p.input.shape == p.output.shape for p in t.train)}
    assert set(tax.members("same_shape")) == same
    table = coverage_table(structural_taxonomy, {"ARC-AGI-1 evaluation": ds})
    assert int(table.set_index("category").loc["same_shape", "ARC-AGI-1 evaluation n_tasks"]) \
        == len(same)


def test_crop_scale_and_tile():
    g = [[1, 2, 0], [3, 4, 0], [0, 0, 5]]
    assert "crop" in cats((g, [[4, 0], [0, 5]]), (g, [[2]]))
    # same size as a sub-rectangle but not found in the input
    c = cats((g, [[4, 1], [0, 5]]))
    assert "output_smaller" in c and "crop" not in c
    a = [[1, 2], [3, 4]]
    up = np.repeat(np.repeat(a, 2, axis=0), 3, axis=1).tolist()
    assert "scale_up" in cats((a, up), ([[5]], [[5, 5]]))
    assert "tile" not in cats((a, up))
    tiled = np.tile(a, (2, 1)).tolist()
    mirrored = np.block([[np.array(a), np.array(a)[:, ::-1]]]).tolist()
    c = cats((a, tiled), (a, mirrored))
    assert "tile" in c and "scale_up" not in c
    # one foreign block breaks the tiling
    broken = np.tile(a, (2, 2))
    broken[2:, :2] = [[9, 9], [9, 9]]
    assert "tile" not in cats((a, broken.tolist()))


def test_structural_categories_of_well_known_training_tasks():
    ds = load_dataset("arc-agi-1:training")
    expected = {
        "a416b8f3": {"output_larger", "tile"},          # input repeated side by side
        "46442a0e": {"output_larger", "tile"},          # rotated copies around a corner
        "c59eb873": {"output_larger", "scale_up"},      # every cell doubled
        "b91ae062": {"output_larger", "scale_up"},      # factor varies by pair
        "6150a2bd": {"same_shape", "dihedral"},         # rotation by 180 degrees
        "d10ecb37": {"output_smaller", "crop"},         # top-left 2x2
        "0d3d703e": {"same_shape", "color_mapping_only"},  # fixed colour substitution
    }
    for tid, want in expected.items():
        got = set(structural_categories(ds[tid]))
        assert want <= got, (tid, got)


def test_the_structural_taxonomy_is_computed_once_per_task_and_never_confused():
    """A report asks for the structural taxonomy in several sections: the second call
    on the same tasks gives the same labels as computing each task afresh, and a new
    task object under the same id (other demonstrations) gets its own categories."""
    ds = load_dataset("arc-agi-1:evaluation")[:40]
    first = structural_taxonomy(ds).labels
    again = structural_taxonomy(ds).labels
    direct = {t.id: structural_categories(t) for t in ds}
    assert first == again == direct
    t = ds[0]
    a = [[1, 0], [0, 0]]
    other = Task(t.id, (Pair(np.array(a), np.array([[1]])),), t.test)
    assert structural_taxonomy([other]).labels[t.id] == structural_categories(other)
    assert "output_smaller" in structural_taxonomy([other]).labels[t.id]
    assert structural_taxonomy([t]).labels[t.id] == direct[t.id]
