"""A registry of model builders, by name.

A builder is a callable ``builder(**config) -> torch.nn.Module``. arcnb's own
checkpoints name their builder in ``arch``: a registered name (safe: the code is
arcnb's) or a ``"module:callable"`` path (importing a module runs its code, so a path
named *inside a checkpoint* is only followed with ``trust_checkpoint=True``, or when
the caller names the same builder).
"""
from __future__ import annotations

import importlib
from typing import Callable

from ..errors import ArcnbError

__all__ = ["register_builder", "get_builder", "builder_names", "resolve_builder"]

_BUILDERS: dict[str, Callable] = {}


def register_builder(name: str, builder: Callable | None = None):
    """Register ``builder`` under ``name`` (usable as a decorator)."""
    def deco(fn):
        if not callable(fn):
            raise TypeError(f"builder for {name!r} is not callable")
        _BUILDERS[str(name)] = fn
        return fn

    return deco(builder) if builder is not None else deco


def builder_names() -> list[str]:
    return sorted(_BUILDERS)


def get_builder(name: str) -> Callable:
    try:
        return _BUILDERS[name]
    except KeyError:
        raise ArcnbError(f"unknown model architecture {name!r}; registered: "
                         f"{', '.join(builder_names())}, or give a 'module:callable' path") from None


def resolve_builder(spec: str | Callable) -> Callable:
    """A builder from a registered name, a ``"module:callable"`` path or a callable."""
    if callable(spec):
        return spec
    spec = str(spec)
    if spec in _BUILDERS:
        return _BUILDERS[spec]
    if ":" in spec:
        mod, _, attr = spec.partition(":")
        try:
            obj = importlib.import_module(mod)
        except ImportError as exc:
            raise ArcnbError(f"cannot import module {mod!r} for builder {spec!r}: {exc}") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise ArcnbError(f"module {mod!r} has no attribute {attr!r} (builder {spec!r})") from None
        if not callable(obj):
            raise ArcnbError(f"builder {spec!r} is not callable")
        return obj
    return get_builder(spec)


def _build_copy_input(**config):
    from .baseline import CopyInput

    return CopyInput()


def _build_demo_conv(**config):
    from .baseline import DemoConvNet

    keep = {k: config[k] for k in ("hidden", "blocks", "prior") if k in config}
    return DemoConvNet(**keep)


def _build_program_search(**config):
    from ..baselines import program_search_model

    return program_search_model(**config)


register_builder("copy-input", _build_copy_input)
register_builder("program-search", _build_program_search)
register_builder("demo-conv", _build_demo_conv)
