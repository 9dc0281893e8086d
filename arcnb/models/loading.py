"""Safe checkpoint loading.

:func:`load_model` turns a checkpoint into a :class:`~arcnb.models.ModelAdapter`.
Formats (detected from the file, nothing is executed to detect them):

1. **arcnb's own**: ``torch.save({"arch": NAME_OR_PATH, "config": {...},
   "state_dict": ...})``. ``arch`` is a registered builder name (see
   :mod:`arcnb.models.registry`) or a ``"module:callable"`` path; the builder is
   called as ``builder(**config)`` and the state dict loaded strictly.
2. **PyTorch Lightning** ``.ckpt`` (``state_dict`` + ``hyper_parameters``): the user
   names the builder (``arch=``, ``--arch``), called as ``builder(**hyper_parameters)``
   (``config=`` overrides). A LightningModule class whose state dict keys match is
   loaded as is; otherwise the common key prefix (``model.``, ``net.`` ...) is
   stripped to fit the built module.
3. A plain state dict, with ``arch=`` (and ``config=``) from the user.
4. **TorchScript** (``torch.jit.save``) and **torch.export** (``torch.export.save``)
   archives, which need no Python code from the file.

Safety: pickled checkpoints are read with ``torch.load(weights_only=True)``, which
only rebuilds tensors and plain containers. A file that needs any other Python object
(whose unpickling could run arbitrary code) is refused with an
:class:`~arcnb.errors.ArcnbError` naming ``--trust-checkpoint``; only with
``trust_checkpoint=True`` is it unpickled in full. A ``"module:callable"`` builder
written *inside* a checkpoint is also only imported with ``trust_checkpoint=True``
(or when the caller passes the same ``arch``), since importing it runs code.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import re
import zipfile
from pathlib import Path
from typing import Any

from ..errors import ArcnbError
from .interface import ModelAdapter
from .registry import _BUILDERS, resolve_builder

__all__ = ["load_model", "file_sha256", "save_checkpoint", "BUNDLED_BASELINE",
           "UnsafeCheckpointError", "detect_format"]

#: The bundled baseline checkpoint (trained by scripts/train_baseline.py).
BUNDLED_BASELINE = Path(__file__).resolve().parents[2] / "data" / "checkpoints" / "baseline.pt"


class UnsafeCheckpointError(ArcnbError):
    """The checkpoint needs arbitrary pickled code and trust was not given."""

    def __init__(self, message: str, *, file: str | None = None):
        self.file = file
        super().__init__(message)


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_checkpoint(path: str | os.PathLike, model, *, arch: str, config: dict | None = None,
                    extra: dict | None = None, overwrite: bool = False) -> Path:
    """Write an arcnb checkpoint ``{"arch", "config", "state_dict", ...}`` atomically.

    ``extra`` entries (plain data: numbers, strings, lists, dicts) are stored too.
    The state dict is saved as contiguous CPU tensors, so the file loads with
    ``weights_only=True``.
    """
    import io as _io

    import torch

    from ..io import atomic_write_bytes

    sd = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    obj = {"format": "arcnb-checkpoint", "format_version": 1, "arch": str(arch),
           "config": dict(config or {}), "state_dict": sd}
    obj.update(extra or {})
    buf = _io.BytesIO()
    torch.save(obj, buf)
    return atomic_write_bytes(path, buf.getvalue(), overwrite=overwrite)


def detect_format(path: str | os.PathLike) -> str:
    """``"torchscript"``, ``"export"`` or ``"pickle"`` (from zip member names only)."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
        if any(n.endswith("/archive_format") or n.endswith("models/model.json") for n in names):
            return "export"
        if any("/code/" in n for n in names) and any(n.endswith("constants.pkl") for n in names):
            return "torchscript"
    return "pickle"


def _pickle_globals(path: Path) -> list[str] | None:
    """Names of the Python objects a pickle imports, read with :mod:`pickletools`
    (which only parses opcodes and executes nothing); None when the data does not
    parse as a pickle at all."""
    import pickletools

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                name = next((n for n in zf.namelist() if n.endswith("data.pkl")), None)
                data = zf.read(name) if name else b""
        else:
            data = Path(path).read_bytes()
        names, strings = [], []
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST") and isinstance(arg, str):
                names.append(arg.replace(" ", "."))
            elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
                strings.append(arg)
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                names.append(f"{strings[-2]}.{strings[-1]}")
        return names
    except Exception:  # noqa: BLE001 - not a pickle
        return None


_SAFE_PREFIXES = ("torch.", "collections.OrderedDict", "builtins.set", "builtins.frozenset",
                  "_codecs.encode", "numpy.")


def _unsafe_message(path, exc) -> str:
    text = str(exc)
    m = re.search(r"GLOBAL ([\w.]+)", text)
    names = [m.group(1)] if m else [n for n in (_pickle_globals(path) or [])
                                    if not n.startswith(_SAFE_PREFIXES)]
    what = f" (it references {', '.join(dict.fromkeys(names[:3]))})" if names else ""
    return (f"refusing to load checkpoint {path}: it needs arbitrary pickled Python code to "
            f"load{what}, and unpickling it could run any code on this machine (read, change "
            "or delete files, start programs). Only tensors and plain data load safely. If you "
            "trust where this file came from, pass --trust-checkpoint "
            "(trust_checkpoint=True) to load it in full.")


def _torch_load(path: Path, trust: bool):
    import warnings

    import torch

    try:
        with warnings.catch_warnings():  # e.g. "Detected pickle protocol 4": noise here
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - classified below, never re-raised raw
        msg = str(exc)
        refused = "weights only" in msg.lower() or "weights_only" in msg.lower()
        if not refused or _pickle_globals(path) is None:
            first = msg.strip().splitlines()[0] if msg.strip() else type(exc).__name__
            why = "the data is not a pickle" if refused else f"{type(exc).__name__}: {first[:200]}"
            raise ArcnbError(f"cannot read checkpoint {path}: not a PyTorch checkpoint or "
                             f"damaged ({why})") from None
        if not trust:
            raise UnsafeCheckpointError(_unsafe_message(path, exc), file=str(path)) from None
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any failure of a trusted pickle
        raise ArcnbError(f"cannot load trusted checkpoint {path}: {type(exc).__name__}: {exc}") from None


def _reads_demos(model) -> bool:
    flag = getattr(model, "reads_demonstrations", None)
    if flag is not None:
        return bool(flag)
    try:
        schema = model.forward.schema  # TorchScript
        return len(schema.arguments) - 1 >= 4
    except AttributeError:
        pass
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
        return len(params) >= 4
    except (TypeError, ValueError):
        return False


def _load_state(model, state_dict: dict, path) -> None:
    import torch

    sd = {k: v for k, v in state_dict.items() if isinstance(v, torch.Tensor)}
    target = model.state_dict()

    def load(d):
        try:
            model.load_state_dict(d, strict=True)
        except RuntimeError as exc:
            detail = next((ln.strip() for ln in str(exc).splitlines() if "size mismatch" in ln),
                          str(exc).strip().splitlines()[0])
            raise ArcnbError(f"checkpoint {path}: its state dict does not fit the built model "
                             f"({detail}); check --arch / config") from None

    if set(sd) == set(target):
        return load(sd)
    # strip the prefix that maps the checkpoint's keys onto the model's (model., net. ...)
    prefixes = sorted({k[: i + 1] for k in sd for i, ch in enumerate(k) if ch == "."}, key=len)
    for p in prefixes:
        sub = {k[len(p):]: v for k, v in sd.items() if k.startswith(p)}
        if set(sub) == set(target):
            return load(sub)
    missing = sorted(set(target) - set(sd))[:3]
    raise ArcnbError(f"checkpoint {path}: its state dict does not fit the built model "
                     f"(e.g. missing {', '.join(missing) or '?'}); check --arch / config")


def _build(arch, config: dict, path, *, trust: bool, user_arch) -> Any:
    if isinstance(arch, str) and arch not in _BUILDERS and ":" in arch and not trust \
            and arch != user_arch:
        raise UnsafeCheckpointError(
            f"refusing to load checkpoint {path}: it names the builder {arch!r}, and importing "
            "that module runs its code. Pass it yourself (--arch / arch=) or, if you trust "
            "the file, pass --trust-checkpoint (trust_checkpoint=True).", file=str(path))
    builder = resolve_builder(arch)
    try:
        return builder(**config)
    except TypeError as exc:
        raise ArcnbError(f"checkpoint {path}: builder {arch!r} rejected the config: {exc}") from None


def load_model(spec, *, arch=None, config: dict | None = None, trust_checkpoint: bool = False,
               device=None) -> ModelAdapter:
    """Load a model for evaluation.

    ``spec``: a checkpoint path, ``"baseline"`` (the bundled checkpoint), a registered
    builder name such as ``"copy-input"`` (built with ``config``), an ``nn.Module`` or a
    :class:`ModelAdapter`. ``arch``: the builder for Lightning / plain state-dict
    checkpoints (or to override an arcnb checkpoint's). Returns the adapter in eval
    mode, on ``device`` when given.
    """
    import torch

    if isinstance(spec, ModelAdapter):
        adapter = spec
    elif isinstance(spec, torch.nn.Module):
        adapter = ModelAdapter(spec, reads_demonstrations=_reads_demos(spec),
                               source={"format": "module", "class": type(spec).__name__})
    else:
        text = str(spec)
        path = Path(text)
        if text == "baseline" and not path.exists():
            path = BUNDLED_BASELINE
        if not path.exists() and text in _BUILDERS:
            model = resolve_builder(text)(**(config or {}))
            adapter = ModelAdapter(model, reads_demonstrations=_reads_demos(model),
                                   source={"format": "builder", "arch": text})
        else:
            adapter = _load_file(path, arch=arch, config=config, trust=trust_checkpoint)
    if device is not None:
        adapter.to(device)
    return adapter.eval()


def _load_file(path: Path, *, arch, config, trust: bool) -> ModelAdapter:
    import torch

    if not path.exists():
        raise ArcnbError(f"checkpoint not found: {path} (give a file, 'baseline' or one of the "
                         f"model names {', '.join(sorted(_BUILDERS))})")
    if path.is_dir():
        raise ArcnbError(f"checkpoint path is a directory: {path}")
    fmt = detect_format(path)
    if fmt == "torchscript":
        model = torch.jit.load(str(path), map_location="cpu")
        return ModelAdapter(model, reads_demonstrations=_reads_demos(model),
                            source={"format": "torchscript"})
    if fmt == "export":
        ep = torch.export.load(str(path))
        n_inputs = len(ep.graph_signature.user_inputs)
        return ModelAdapter(ep.module(), reads_demonstrations=n_inputs >= 4,
                            source={"format": "torch.export"})
    obj = _torch_load(path, trust)
    if isinstance(obj, torch.nn.Module):  # only reachable with trust
        return ModelAdapter(obj, reads_demonstrations=_reads_demos(obj),
                            source={"format": "pickled-module", "class": type(obj).__name__})
    if not isinstance(obj, dict):
        raise ArcnbError(f"checkpoint {path} holds a {type(obj).__name__}, not a model, an "
                         "arcnb checkpoint dict, a Lightning checkpoint or a state dict")
    if "arch" in obj and "state_dict" in obj:
        use_arch = arch or obj["arch"]
        cfg = dict(obj.get("config") or {})
        cfg.update(config or {})
        model = _build(use_arch, cfg, path, trust=trust, user_arch=arch)
        _load_state(model, obj["state_dict"], path)
        src = {"format": "arcnb", "arch": str(use_arch)}
    elif "state_dict" in obj and ("hyper_parameters" in obj or "pytorch-lightning_version" in obj
                                  or "epoch" in obj):
        if arch is None:
            raise ArcnbError(f"checkpoint {path} is a Lightning checkpoint: name the model "
                             "builder with --arch NAME|module:callable (arch=)")
        cfg = dict(obj.get("hyper_parameters") or {})
        cfg.update(config or {})
        model = _build(arch, cfg, path, trust=True, user_arch=arch)
        _load_state(model, obj["state_dict"], path)
        src = {"format": "lightning", "arch": str(arch)}
    elif obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
        if arch is None:
            raise ArcnbError(f"checkpoint {path} is a bare state dict: name the model builder "
                             "with --arch NAME|module:callable (arch=)")
        model = _build(arch, dict(config or {}), path, trust=True, user_arch=arch)
        _load_state(model, obj, path)
        src = {"format": "state_dict", "arch": str(arch)}
    else:
        raise ArcnbError(f"checkpoint {path}: unrecognised contents (keys: "
                         f"{', '.join(map(str, list(obj)[:6]))})")
    return ModelAdapter(model, reads_demonstrations=_reads_demos(model), source=src)
