"""Copy the data arcnb ships (arcnb/resources/checkpoints, arcnb/resources/examples) to the
clone's data/ folder, byte for byte.

    .venv/bin/python scripts/sync_data.py          # write data/checkpoints, data/examples
    .venv/bin/python scripts/sync_data.py --check  # exit 1 when data/ differs

The package is the one source of truth: add or change a bundled file under
arcnb/resources/, then run this script. Sub-folders are mirrored too (examples/arc3/,
the ARC-AGI-3 example). A file found only in data/ is reported (move it into
arcnb/resources/ first), never deleted. The clone's notebooks/ is a link to the shipped
notebooks, not a copy.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: shipped folder -> the clone's copy
MIRRORS = {
    ROOT / "arcnb" / "resources" / "checkpoints": ROOT / "data" / "checkpoints",
    ROOT / "arcnb" / "resources" / "examples": ROOT / "data" / "examples",
}


def _files(folder: Path) -> dict[str, Path]:
    """Every file under ``folder``, sub-folders included: ``{relative path: path}``
    (hidden files, ``__init__.py`` and ``__pycache__`` left out)."""
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if (p.is_file() and p.name != "__init__.py" and "__pycache__" not in rel.parts
                and not any(part.startswith(".") for part in rel.parts)):
            out[rel.as_posix()] = p
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when data/ differs")
    args = ap.parse_args(argv)
    stale, orphans = [], []
    for src_dir, dst_dir in MIRRORS.items():
        src, dst = _files(src_dir), _files(dst_dir)
        orphans += [str(p.relative_to(ROOT)) for name, p in dst.items() if name not in src]
        for name, path in src.items():
            target = dst_dir / name
            if target.is_file() and target.read_bytes() == path.read_bytes():
                continue
            if args.check:
                stale.append(str(target.relative_to(ROOT)))
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            print(f"wrote {target.relative_to(ROOT)}")
    if orphans:
        print("not shipped in the package (move them into arcnb/resources/, then rerun): "
              + ", ".join(orphans), file=sys.stderr)
    if stale:
        print("stale copies (run scripts/sync_data.py): " + ", ".join(stale), file=sys.stderr)
    return 1 if stale or orphans else 0


if __name__ == "__main__":
    sys.exit(main())
