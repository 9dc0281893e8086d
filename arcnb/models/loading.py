"""Safe checkpoint loading.

:func:`load_model` turns a checkpoint into a :class:`~arcnb.models.ModelAdapter`.
Formats (detected from the file, nothing is executed to detect them):

1. **arcnb's own**: ``torch.save({"arch": NAME_OR_PATH, "config": {...},
   "state_dict": ...})``. ``arch`` is a registered builder name (see
   :mod:`arcnb.models.registry`) or a ``"module:callable"`` path; the builder is
   called as ``builder(**config)`` and the state dict loaded strictly.
2. **PyTorch Lightning** ``.ckpt`` (``state_dict`` + ``hyper_parameters``): the user
   names the builder (``arch=``, ``--arch``), called with the saved hyper-parameters
   it accepts (``config=`` overrides). A LightningModule class whose state dict keys
   match is loaded as is; otherwise the common key prefix (``model.``, ``net.`` ...)
   is stripped to fit the built module.
3. A plain state dict, with ``arch=`` (and ``config=``) from the user.
4. **TorchScript** (``torch.jit.save``) and **torch.export** (``torch.export.save``)
   archives: programs, checked before loading (:mod:`arcnb.models.safety`).
5. **safetensors** (``safetensors.torch.save_file``): a state dict, with ``arch=``
   from the user. Its ``__metadata__`` may hold ``"config"`` (a JSON object of builder
   arguments, used as a Lightning checkpoint's ``hyper_parameters`` are), ``"step"``
   and ``"epoch"`` (whole numbers as text, for ``arcnb sweep``). Its header is checked
   before any tensor is read (:func:`arcnb.models.safety.check_safetensors_header`).

:data:`CHECKPOINT_FORMATS` lists the formats and the file suffixes that name them
(:data:`CHECKPOINT_SUFFIXES`): what ``arcnb.open`` takes for a checkpoint and which
files of a folder ``arcnb sweep`` evaluates. The format itself is always read from
the file (:func:`detect_format`), never from its name.

Configs: a config saved in the checkpoint (arcnb ``config``, Lightning
``hyper_parameters``) is filtered to the parameters the builder's signature names
(all of it when the builder takes ``**kwargs``); the keys left out are recorded in
the adapter's ``source["ignored_config"]`` (training-only values such as ``lr``).
The caller's ``config`` is merged over it and passed unfiltered (a misspelt key is an
error), or replaces it with ``replace_config=True`` / a :class:`ReplaceConfig`.

Words: the *bundled checkpoint* (:data:`BUNDLED_CHECKPOINT`, ``"baseline"`` on the
command line) is a trained copy of the *demo network* (the ``demo-conv`` builder,
:class:`arcnb.models.baseline.DemoConvNet`); neither is one of the *reference
baselines* of :mod:`arcnb.baselines`.

Safety: pickled checkpoints are read with ``torch.load(weights_only=True)``, which
only rebuilds tensors and plain containers. A file that needs any other Python object
(whose unpickling could run arbitrary code) is refused with an
:class:`~arcnb.errors.ArcnbError` naming ``--trust-checkpoint``; only with
``trust_checkpoint=True`` is it unpickled in full. TorchScript and torch.export
archives are inspected first (see :mod:`arcnb.models.safety` for exactly what).
A ``"module:callable"`` builder written *inside* a checkpoint is also only imported
with ``trust_checkpoint=True`` (or when the caller passes the same ``arch``), since
importing it runs code.
"""
from __future__ import annotations

import inspect
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArcnbError, ParameterError
from ..io import atomic_write_bytes, file_sha256, parse_json
from ..resources import checkpoint
from .interface import ModelAdapter
from .registry import builder_names, resolve_builder
from .safety import (TRUST_HINT, UnsafeCheckpointError, check_archive_sizes,
                     check_safetensors_header, load_checked, one_line, pickle_globals,
                     quiet_torch, refused_names)

__all__ = ["load_model", "file_sha256", "save_checkpoint", "BUNDLED_CHECKPOINT",
           "checkpoint_path", "UnsafeCheckpointError", "detect_format",
           "ReplaceConfig", "CheckpointFormat", "CHECKPOINT_FORMATS", "CHECKPOINT_SUFFIXES",
           "recorded_step"]

#: The bundled checkpoint: the demo network (``demo-conv``) trained by
#: scripts/train_baseline.py, shipped as package data (:func:`arcnb.resources.checkpoint`);
#: ``"baseline"`` names it on the command line.
BUNDLED_CHECKPOINT = checkpoint("baseline")


@dataclass(frozen=True)
class CheckpointFormat:
    """One checkpoint format: its name (what :func:`detect_format` returns), what it is
    in words, and the file suffixes that name it."""

    name: str
    words: str
    suffixes: tuple


#: Every checkpoint format arcnb loads, by the name :func:`detect_format` gives it.
CHECKPOINT_FORMATS = {f.name: f for f in (
    CheckpointFormat("pickle", "a torch.save file: an arcnb checkpoint, a Lightning "
                     "checkpoint or a state dict", (".pt", ".pth", ".ckpt", ".bin")),
    CheckpointFormat("torchscript", "a TorchScript archive (torch.jit.save)",
                     (".pt", ".pth", ".ts")),
    CheckpointFormat("export", "a torch.export archive (torch.export.save)", (".pt2",)),
    CheckpointFormat("safetensors", "a safetensors state dict (safetensors.torch.save_file)",
                     (".safetensors",)),
)}
#: The file suffixes of checkpoints (lower case): what ``arcnb.open`` takes for a
#: checkpoint and which files of a folder ``arcnb sweep`` evaluates.
CHECKPOINT_SUFFIXES = tuple(dict.fromkeys(x for f in CHECKPOINT_FORMATS.values()
                                          for x in f.suffixes))


def checkpoint_path(spec: str | os.PathLike) -> Path:
    """The file a checkpoint given by name or path reads: ``"baseline"``, when no file of
    that name is here, is the bundled checkpoint (:data:`BUNDLED_CHECKPOINT`); anything
    else is its own path (which may not exist: a model name such as ``copy-input``)."""
    path = Path(spec)
    if str(spec) == "baseline" and not path.exists():
        return BUNDLED_CHECKPOINT
    return path


def save_checkpoint(path: str | os.PathLike, model, *, arch: str, config: dict | None = None,
                    extra: dict | None = None, overwrite: bool = False,
                    step: int | None = None, epoch: int | None = None) -> Path:
    """Write an arcnb checkpoint ``{"arch", "config", "state_dict", ...}`` atomically.

    ``extra`` entries (plain data: numbers, strings, lists, dicts) are stored too.
    ``step`` and ``epoch`` (the training step and epoch it was saved at) are recorded
    as ``"step"`` / ``"epoch"``: ``arcnb sweep`` orders checkpoints by them.
    The state dict is saved as contiguous CPU tensors, so the file loads with
    ``weights_only=True``.
    """
    import io as _io

    import torch

    sd = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    obj = {"format": "arcnb-checkpoint", "format_version": 1, "arch": str(arch),
           "config": dict(config or {}), "state_dict": sd}
    obj.update(extra or {})
    for key, value in (("step", step), ("epoch", epoch)):
        if value is not None:
            if isinstance(value, bool) or int(value) != value or int(value) < 0:
                raise ParameterError(f"{key} must be a whole number >= 0, got {value!r}")
            obj[key] = int(value)
    buf = _io.BytesIO()
    torch.save(obj, buf)
    return atomic_write_bytes(path, buf.getvalue(), overwrite=overwrite)


def detect_format(path: str | os.PathLike) -> str:
    """``"torchscript"``, ``"export"``, ``"safetensors"`` or ``"pickle"`` (a key of
    :data:`CHECKPOINT_FORMATS`), from the file's first bytes and zip member names only.

    A file named ``*.safetensors``, or one that starts like a safetensors file (an
    8-byte header length that fits the file, then ``{``), is safetensors. A zip with
    an ``archive_format`` member is a torch.export archive; one with a
    ``constants.pkl`` member is TorchScript (PyTorch's own rule: ``torch.load`` hands
    such a zip to ``torch.jit.load``); anything else goes to ``torch.load``."""
    path = Path(path)
    if path.suffix.lower() in CHECKPOINT_FORMATS["safetensors"].suffixes \
            or _looks_like_safetensors(path):
        return "safetensors"
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return "pickle"
        if any(n.endswith("/archive_format") or n.endswith("models/model.json") for n in names):
            return "export"
        if any(n.endswith("/constants.pkl") or n == "constants.pkl" for n in names):
            return "torchscript"
    return "pickle"


def _looks_like_safetensors(path: Path) -> bool:
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as fh:
            head = fh.read(9)
    except OSError:
        return False
    return len(head) == 9 and head[8:9] == b"{" and 8 + int.from_bytes(head[:8], "little") <= size


def recorded_step(path: str | os.PathLike) -> tuple[int | None, int | None]:
    """``(step, epoch)`` a checkpoint file records, read the way :func:`load_model` reads
    it and after the same checks, without loading the weights or running any code:
    Lightning's ``global_step`` and ``epoch``, an arcnb checkpoint's ``step`` /
    ``epoch`` (:func:`save_checkpoint` with ``step=``), a safetensors file's
    ``__metadata__`` ``"step"`` / ``"epoch"`` (read from its header alone). ``(None,
    None)`` for anything else (a program archive, a model name, a file that needs
    pickled code or does not load). A file those checks refuse (a compression bomb, a
    malformed safetensors header) raises their one-line
    :class:`~arcnb.errors.ArcnbError`: nothing is inflated to read a step."""
    p = Path(path)
    if not p.is_file():
        return None, None
    fmt = detect_format(p)
    if fmt == "safetensors":
        _, meta = check_safetensors_header(p)
        return _whole(meta.get("step")), _whole(meta.get("epoch"))
    if fmt != "pickle":
        return None, None
    check_archive_sizes(p)  # before anything is inflated
    obj = None
    for mmap in (True, False):  # memory-mapped: the weights are not read
        try:
            obj = _plain_load(p, mmap=mmap)
            break
        except Exception:  # noqa: BLE001 - not readable safely: no recorded step
            continue
    if not isinstance(obj, dict):
        return None, None
    step = _whole(obj.get("global_step"))
    if step is None:
        step = _whole(obj.get("step"))
    return step, _whole(obj.get("epoch"))


def _whole(v) -> int | None:
    """A recorded step or epoch as a whole number >= 0 (an integer, a one-element
    tensor, or, from safetensors metadata, decimal digits), else None."""
    if isinstance(v, str):
        v = v.strip()
        return int(v) if v.isascii() and v.isdigit() and len(v) <= 18 else None
    if hasattr(v, "item") and getattr(v, "numel", lambda: 0)() == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        return None
    return int(v) if int(v) >= 0 else None


def _plain_load(path: Path, *, mmap: bool = False):
    """``torch.load(weights_only=True)``: tensors and plain data only; never runs code."""
    import torch

    with quiet_torch():  # e.g. "Detected pickle protocol 4": noise here
        return torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)


def _pickle_globals(path: Path) -> list[str] | None:
    """Names of the Python objects the pickle in ``path`` imports (nothing executed)."""
    try:
        return pickle_globals(Path(path).read_bytes())
    except OSError:
        return None


def _unsafe_message(path, exc) -> str:
    names = refused_names(str(exc), Path(path).read_bytes() if Path(path).is_file() else None)
    what = f" (it references {', '.join(names[:3])})" if names else ""
    return (f"refusing to load checkpoint {path}: it needs arbitrary pickled Python code to "
            f"load{what}, and unpickling it could run any code on this machine (read, change "
            "or delete files, start programs). Only tensors and plain data load safely. "
            + TRUST_HINT)


def _torch_load(path: Path, trust: bool):
    import torch

    check_archive_sizes(path)  # before anything is inflated
    try:
        return _plain_load(path)
    except Exception as exc:  # noqa: BLE001 - classified below, never re-raised raw
        msg = str(exc)
        refused = "weights only" in msg.lower() or "weights_only" in msg.lower()
        if not refused or _pickle_globals(path) is None:
            first = one_line(msg, 200, first_line=True) or type(exc).__name__
            why = "the data is not a pickle" if refused else f"{type(exc).__name__}: {first}"
            raise ArcnbError(f"cannot read checkpoint {path}: not a PyTorch checkpoint or "
                             f"damaged ({one_line(why, 200)})") from None
        if not trust:
            raise UnsafeCheckpointError(_unsafe_message(path, exc), file=str(path)) from None
    try:
        with quiet_torch():
            return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any failure of a trusted pickle
        raise ArcnbError(f"cannot load trusted checkpoint {path}: {type(exc).__name__}: "
                         f"{one_line(exc, 200)}") from None


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
    except (TypeError, ValueError, AttributeError):  # no forward (e.g. overloaded): it fails later
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
                          one_line(exc, first_line=True))
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


class ReplaceConfig(dict):
    """A config that replaces the checkpoint's saved config instead of being merged over
    it (``--replace-config``); pass it as ``config=`` to :func:`load_model` or
    :func:`arcnb.evaluate.evaluate`."""


def _accepted_params(builder) -> set[str] | None:
    """Keyword names ``builder`` accepts; None when it takes ``**kwargs`` (or its
    signature cannot be read): then it is given everything."""
    try:
        sig = inspect.signature(builder)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _build(arch, saved: dict, user: dict | None, path, *, trust: bool, user_arch,
           replace: bool = False) -> tuple[Any, dict]:
    """Build the model: ``(module, source facts)``. ``saved`` is the checkpoint's own
    config (filtered to what the builder accepts), ``user`` the caller's."""
    if isinstance(arch, str) and arch not in builder_names() and ":" in arch and not trust \
            and arch != user_arch:
        raise UnsafeCheckpointError(
            f"refusing to load checkpoint {path}: it names the builder {arch!r}, and importing "
            "that module runs its code. Pass it yourself (--arch / arch=) or, if you trust "
            "the file, pass --trust-checkpoint (trust_checkpoint=True).", file=str(path))
    builder = resolve_builder(arch)
    accepted = _accepted_params(builder)
    base = {} if replace else dict(saved or {})
    ignored = [] if accepted is None else sorted(str(k) for k in base if k not in accepted)
    config = {k: v for k, v in base.items() if accepted is None or k in accepted}
    config.update(user or {})
    facts = {"ignored_config": ignored} if ignored else {}
    if replace:
        facts["config_mode"] = "replace"
    where = f"checkpoint {path}" if path is not None else f"model {arch!r}"
    unknown = [] if accepted is None else sorted(str(k) for k in (user or {}) if k not in accepted)
    if unknown:  # a key the user gave that the builder does not take: name the ones it does
        raise ParameterError(f"{where}: builder {builder_name(arch)!r} has no option "
                             f"{', '.join(map(repr, unknown))}; its options are "
                             f"{', '.join(sorted(accepted)) or 'none'}")
    try:
        return builder(**config), facts
    except ArcnbError as exc:
        raise ArcnbError(f"{where}: builder {builder_name(arch)!r} rejected the config: "
                         f"{one_line(exc, 300)}") from None
    except Exception as exc:  # noqa: BLE001 - a builder's failure is one line, not a traceback
        shown = ", ".join(f"{k}={one_line(repr(v), 40)}" for k, v in config.items())
        raise ArcnbError(f"{where}: builder {builder_name(arch)!r} failed on the config "
                         f"({shown}): {type(exc).__name__}: {one_line(exc, 200)}") from None


def builder_name(arch) -> str:
    """A model builder's name: the registered name or ``module:callable`` as given, else
    a callable's ``module:qualname`` (what a run records and its messages name)."""
    if isinstance(arch, str):
        return arch
    return f"{getattr(arch, '__module__', '?')}:{getattr(arch, '__qualname__', repr(arch))}"


def load_model(spec, *, arch=None, config: dict | None = None, trust_checkpoint: bool = False,
               device=None, replace_config: bool = False) -> ModelAdapter:
    """Load a model for evaluation.

    ``spec``: a checkpoint path, ``"baseline"`` (the bundled checkpoint), a registered
    builder name such as ``"copy-input"`` (built with ``config``), an ``nn.Module`` or a
    :class:`ModelAdapter`. ``arch``: the builder for Lightning / plain state-dict
    checkpoints (or to override an arcnb checkpoint's). ``config`` is merged over the
    checkpoint's saved config, or replaces it with ``replace_config=True`` (or when it
    is a :class:`ReplaceConfig`). Returns the adapter in eval mode, on ``device`` when
    given.
    """
    import torch

    replace = bool(replace_config) or isinstance(config, ReplaceConfig)
    if isinstance(spec, ModelAdapter):
        adapter = spec
    elif isinstance(spec, torch.nn.Module):
        adapter = ModelAdapter(spec, reads_demonstrations=_reads_demos(spec),
                               source={"format": "module", "class": type(spec).__name__})
    else:
        text = str(spec)
        path = checkpoint_path(text)
        if not path.exists() and text in builder_names():
            model, _ = _build(text, {}, config, None, trust=True, user_arch=text)
            adapter = ModelAdapter(model, reads_demonstrations=_reads_demos(model),
                                   source={"format": "builder", "arch": text})
        else:
            adapter = _load_file(path, arch=arch, config=config, trust=trust_checkpoint,
                                 replace=replace)
    if device is not None:
        adapter.to(device)
    return adapter.eval()


def _load_program(path: Path, fmt: str, trust: bool) -> ModelAdapter:
    """A TorchScript or torch.export archive (checked first unless trusted)."""
    program = load_checked(path, fmt, trust)
    if fmt == "torchscript":
        return ModelAdapter(program, reads_demonstrations=_reads_demos(program),
                            source={"format": "torchscript"})
    try:
        with quiet_torch():
            module = program.module()
    except Exception as exc:  # noqa: BLE001 - PyTorch's own failure: one line
        raise ArcnbError(f"cannot read torch.export archive {path}: damaged or not a "
                         f"torch.export archive ({type(exc).__name__}: {one_line(exc, 200)})") from None
    n_inputs = len(program.graph_signature.user_inputs)
    batch, demos = _fixed_dims(program)
    return ModelAdapter(module, reads_demonstrations=n_inputs >= 4, fixed_batch=batch,
                        fixed_demos=demos if n_inputs >= 4 else None,
                        source={"format": "torch.export"})


def _fixed_dims(program) -> tuple[int | None, int | None]:
    """The batch size and demonstration count an exported program was fixed to (None
    when the dimension is dynamic)."""
    names = list(program.graph_signature.user_inputs)
    shapes = {n.name: getattr(n.meta.get("val"), "shape", None)
              for n in program.graph.nodes if n.op == "placeholder"}

    def static(name, dim):
        shape = shapes.get(name) if name is not None else None
        if shape is None or len(shape) <= dim:
            return None
        return int(shape[dim]) if type(shape[dim]) is int else None

    return (static(names[0] if names else None, 0),
            static(names[1] if len(names) >= 4 else None, 1))


def _load_file(path: Path, *, arch, config, trust: bool, replace: bool = False) -> ModelAdapter:
    import torch

    if not path.exists():
        raise ArcnbError(f"checkpoint not found: {path} (give a file, 'baseline' or one of the "
                         f"model names {', '.join(builder_names())})")
    if path.is_dir():
        raise ArcnbError(f"checkpoint path is a directory: {path}")
    if not path.is_file():  # a FIFO would block the read forever, a device never end
        raise ArcnbError(f"checkpoint {path} is not a regular file (a FIFO, socket or device)")
    fmt = detect_format(path)
    if fmt in ("torchscript", "export"):
        return _load_program(path, fmt, trust)
    if fmt == "safetensors":
        return _load_safetensors(path, arch=arch, config=config, trust=trust, replace=replace)
    obj = _torch_load(path, trust)
    if isinstance(obj, torch.nn.Module):  # only reachable with trust
        return ModelAdapter(obj, reads_demonstrations=_reads_demos(obj),
                            source={"format": "pickled-module", "class": type(obj).__name__})
    if not isinstance(obj, dict):
        raise ArcnbError(f"checkpoint {path} holds a {type(obj).__name__}, not a model, an "
                         "arcnb checkpoint dict, a Lightning checkpoint or a state dict")
    if "arch" in obj and "state_dict" in obj:
        if arch is None and not isinstance(obj["arch"], str):
            # weights_only lets some objects through (torch.device, torch.dtype...): a
            # builder is only ever named by a string, so anything else is refused
            raise UnsafeCheckpointError(
                f"refusing to load checkpoint {path}: its builder ('arch') is a "
                f"{type(obj['arch']).__name__}, not a registered name or a "
                "'module:callable' string; pass the builder yourself (--arch / arch=)",
                file=str(path))
        use_arch = arch or obj["arch"]
        model, facts = _build(use_arch, _saved_config(obj.get("config"), path), config, path,
                              trust=trust, user_arch=arch, replace=replace)
        _load_state(model, obj["state_dict"], path)
        src = {"format": "arcnb", "arch": str(use_arch), **facts}
    elif "state_dict" in obj and ("hyper_parameters" in obj or "pytorch-lightning_version" in obj
                                  or "epoch" in obj):
        if arch is None:
            raise ArcnbError(f"checkpoint {path} is a Lightning checkpoint: name the model "
                             "builder with --arch NAME|module:callable (arch=)")
        model, facts = _build(arch, _saved_config(obj.get("hyper_parameters"), path), config,
                              path, trust=True, user_arch=arch, replace=replace)
        _load_state(model, obj["state_dict"], path)
        src = {"format": "lightning", "arch": str(arch), **facts}
    elif obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
        if arch is None:
            raise ArcnbError(f"checkpoint {path} is a bare state dict: name the model builder "
                             "with --arch NAME|module:callable (arch=)")
        model, facts = _build(arch, {}, config, path, trust=True, user_arch=arch)
        _load_state(model, obj, path)
        src = {"format": "state_dict", "arch": str(arch), **facts}
    else:
        raise ArcnbError(f"checkpoint {path}: unrecognised contents (keys: "
                         f"{', '.join(one_line(k, 40) for k in list(obj)[:6])})")
    return ModelAdapter(model, reads_demonstrations=_reads_demos(model), source=src)


def _load_safetensors(path: Path, *, arch, config, trust: bool,
                      replace: bool = False) -> ModelAdapter:
    """A safetensors state dict: header checked first, then the tensors read (no code
    runs), the model built by ``arch`` with the metadata's config under the caller's."""
    _, meta = check_safetensors_header(path)
    if arch is None:
        raise ArcnbError(f"checkpoint {path} is a safetensors state dict: name the model "
                         "builder with --arch NAME|module:callable (arch=)")
    saved = _metadata_config(meta.get("config"), path)
    try:
        from safetensors.torch import load_file

        with quiet_torch():
            state_dict = load_file(str(path), device="cpu")
    except Exception as exc:  # noqa: BLE001 - the library's own refusal: one line
        raise ArcnbError(f"cannot read safetensors file {path}: damaged or not a safetensors "
                         f"file ({type(exc).__name__}: {one_line(exc, 200)})") from None
    model, facts = _build(arch, saved, config, path, trust=True, user_arch=arch,
                          replace=replace)
    _load_state(model, state_dict, path)
    return ModelAdapter(model, reads_demonstrations=_reads_demos(model),
                        source={"format": "safetensors", "arch": str(arch), **facts})


def _metadata_config(text, path) -> dict:
    """The builder arguments a safetensors file's metadata ``"config"`` holds (JSON
    object text); {} without one."""
    if text is None:
        return {}
    cfg = parse_json(text, what=f"checkpoint {path}: its metadata's config", invalid="is not JSON",
                     error=ArcnbError)
    return _saved_config(cfg, path)


def _saved_config(cfg, path) -> dict:
    if cfg is None:
        return {}
    if not isinstance(cfg, dict):
        raise ArcnbError(f"checkpoint {path}: its saved config is a {type(cfg).__name__}, "
                         "not a dict of builder arguments")
    return {str(k): v for k, v in cfg.items()}
