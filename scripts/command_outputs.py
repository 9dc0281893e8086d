"""Run arcnb's commands on fixed inputs and keep what they print and write, so that two
versions of the package can be compared output by output (a refactoring must change
nothing but what it meant to change).

    python scripts/command_outputs.py run OUT        # every command, into OUT/
    python scripts/command_outputs.py diff OLD NEW   # what differs, normalised

``run`` uses the Python it is started with (``python -m arcnb``), so the version
compared is the one that Python imports (``PYTHONPATH=<checkout>`` picks a checkout).
Both runs must use the same OUT path (move the first one aside before the second): the
outputs name their own folders. ``diff`` ignores what changes from one run to the
next by nature (times, durations, dates, the arcnb version and commit, host names)
and compares the HTML pages' text and their figures' checksums.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

DATASET = "arc-agi-1:evaluation"
TASKS = ["00576224", "009d5c81", "00dbd492", "03560426", "05a7bcf2", "0607ce86", "0692e18c",
         "070dd51e", "08573cc6", "0934a4d8", "09c534e7", "0a1d4ef5", "0a2355a6", "0b17323b"]


def _commands(examples: Path) -> list[tuple[str, list[str]]]:
    heur = str(examples / "arc-agi-1-evaluation_heuristic.json")
    search = str(examples / "arc-agi-1-evaluation_program_search.json")
    arc3 = examples / "arc3"
    ev = ["evaluate", "--checkpoint", "baseline", "--dataset", DATASET, "--tasks", "tasks.json",
          "--no-progress"]
    return [
        ("score", ["score", "--dataset", DATASET, "--predictions", heur]),
        ("score-json", ["score", "--dataset", DATASET, "--predictions", search, "--json"]),
        ("evaluate", ev + ["--out", "runs/plain"]),
        ("evaluate-dihedral", ev + ["--augment", "dihedral", "--out", "runs/dihedral"]),
        ("probes", ev + ["--probe", "dihedral", "--probe", "colors", "--out", "runs/probes"]),
        ("candidates-run", ev + ["--attempts", "6", "--augment", "dihedral", "--out", "runs/six"]),
        ("compare", ["compare", "runs/plain", "runs/dihedral", "runs/probes", "--out", "compare",
                     "--n-boot", "200"]),
        ("candidates", ["candidates", "--dataset", DATASET, "--predictions",
                        "runs/six/predictions.json", "--tasks", "tasks.json", "--out", "candidates",
                        "--n-boot", "200"]),
        ("candidates-json", ["candidates", "--dataset", DATASET, "--predictions",
                             "runs/six/predictions.json", "--tasks", "tasks.json", "--json",
                             "--n-boot", "200"]),
        ("repeats", ["repeats", heur, search, "runs/plain", "runs/dihedral", "--dataset", DATASET,
                     "--out", "repeats", "--n-boot", "200"]),
        ("repeats-json", ["repeats", heur, search, "--dataset", DATASET, "--json", "--n-boot", "200"]),
        ("report-default", ["report", "--default", "--out", "report", "--no-progress"]),
        ("arc3-score", ["arc3", "score", str(arc3 / "agent-a"), str(arc3 / "agent-b"), "--baselines",
                        str(arc3 / "baselines.csv"), "--out", "arc3-score", "--n-boot", "200"]),
        ("arc3-score-json", ["arc3", "score", str(arc3 / "agent-a"), "--baselines",
                             str(arc3 / "baselines.csv"), "--json", "--n-boot", "200"]),
        ("arc3-report", ["arc3", "report", "--out", "arc3-report", "--n-boot", "200"]),
    ]


def run(out: Path) -> None:
    from arcnb import resources

    out.mkdir(parents=True, exist_ok=False)
    (out / "tasks.json").write_text(json.dumps(TASKS))
    examples = resources.examples_dir()
    env = dict(os.environ, COLUMNS="100", PYTHONHASHSEED="0")
    for name, args in _commands(examples):
        proc = subprocess.run([sys.executable, "-m", "arcnb", *args], cwd=out, env=env,
                              capture_output=True, text=True)
        (out / f"{name}.stdout").write_text(proc.stdout)
        (out / f"{name}.stderr").write_text(proc.stderr)
        (out / f"{name}.status").write_text(f"{proc.returncode}\n")
        print(f"{name}: exit {proc.returncode}", flush=True)


_VOLATILE = re.compile(r"(time|seconds|duration|elapsed|date|created|started|finished|host|"
                       r"arcnb_version|version|commit|git|python|platform|torch|wall)", re.I)
_NUMBER_TIME = re.compile(r"\b\d+(\.\d+)? ?(s|ms|min)\b|\d{4}-\d\d-\d\d[T ][\d:.+Z-]*")


def _scrub(obj):
    if isinstance(obj, dict):
        return {k: ("<volatile>" if _VOLATILE.search(k) or k == "id" else _scrub(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    if isinstance(obj, str):
        return _paths(_NUMBER_TIME.sub("<time>", obj))
    return obj


def _normal(path: Path) -> list[str]:
    data = path.read_bytes()
    suffix = path.suffix
    if suffix in (".png", ".pdf", ".svg", ".parquet", ".npz", ".pt"):
        return [f"<{suffix} {len(data)} bytes>"] if suffix != ".png" else \
            [hashlib.sha256(data).hexdigest()]
    text = data.decode("utf-8", "replace")
    if suffix in (".json", ".ipynb"):
        try:
            return json.dumps(_scrub(json.loads(text)), indent=1, sort_keys=True).splitlines()
        except ValueError:
            pass
    if suffix in (".html", ".ipynb"):
        text = re.sub(r'id="cell-id=[0-9a-f-]+"', 'id="cell-id"', text)
        text = re.sub(r"data:image/png;base64,([A-Za-z0-9+/=]+)",
                      lambda m: "png:" + hashlib.sha256(m.group(1).encode()).hexdigest()[:12], text)
    return [_paths(_NUMBER_TIME.sub("<time>", line)) for line in text.splitlines()]


def _paths(text: str) -> str:
    """The package's own folder and papermill's temporary names, which differ by checkout."""
    text = re.sub(r"""[^\s"'<>]*/arcnb/resources/""", "<arcnb>/resources/", text)
    text = re.sub(r"""(data-key=\\?["']wall_time_s\\?["']>)[^<]*""", r"\1<time>", text)
    return re.sub(r"\.(\w+)\.\w{8}\.ipynb", r".\1.<tmp>.ipynb", text)


def diff(old: Path, new: Path) -> int:
    names = sorted({p.relative_to(old).as_posix() for p in old.rglob("*") if p.is_file()}
                   | {p.relative_to(new).as_posix() for p in new.rglob("*") if p.is_file()})
    changed = 0
    for name in names:
        a, b = old / name, new / name
        if not a.exists() or not b.exists():
            print(f"only in {'new' if b.exists() else 'old'}: {name}")
            changed += 1
            continue
        la, lb = _normal(a), _normal(b)
        if la != lb:
            changed += 1
            print(f"--- differs: {name}")
            for line in list(difflib.unified_diff(la, lb, lineterm="", n=0))[2:40]:
                print("   " + line[:200])
    print(f"{len(names)} files, {changed} differ")
    return 1 if changed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(Path(sys.argv[2]).resolve())
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        sys.exit(diff(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
