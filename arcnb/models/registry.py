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

from ..baselines import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, program_search_model
from ..errors import ArcnbError
from ..text import fmt_count, fmt_significant

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
    """The registered model names, sorted."""
    return sorted(_BUILDERS)


def get_builder(name: str) -> Callable:
    """The builder registered as ``name`` (:func:`register_builder`)."""
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


def _build_copy_input():
    from .baseline import CopyInput

    return CopyInput()


#: bounds on the demo-conv config, checked before anything is built: the bundled
#: checkpoint is hidden=32, blocks=3 (about 60k parameters)
DEMO_CONV_BOUNDS = {"hidden": (1, 1024), "blocks": (0, 64)}
DEMO_CONV_MAX_PARAMS = 50_000_000


def _int_in(name: str, value, lo: int, hi: int) -> int:
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArcnbError(f"{name}={value!r} is not an integer")
    if not lo <= int(value) <= hi:
        raise ArcnbError(f"{name}={int(value)} is outside {lo}..{hi}")
    return int(value)


def demo_conv_parameters(hidden: int, blocks: int, prior: bool = False) -> int:
    """The number of parameters of ``DemoConvNet(hidden, blocks, prior)``."""
    stem = 32 * hidden * 9 + hidden
    block = 2 * (hidden * hidden * 9 + hidden)
    head = hidden * 11 + 11
    return stem + blocks * block + head + int(bool(prior))


def _build_demo_conv(hidden: int = 32, blocks: int = 3, prior: bool = False):
    from .baseline import DemoConvNet

    hidden = _int_in("hidden", hidden, *DEMO_CONV_BOUNDS["hidden"])
    blocks = _int_in("blocks", blocks, *DEMO_CONV_BOUNDS["blocks"])
    if not isinstance(prior, bool):
        raise ArcnbError(f"prior={prior!r} is not true or false")
    n = demo_conv_parameters(hidden, blocks, prior)
    if n > DEMO_CONV_MAX_PARAMS:
        raise ArcnbError(f"hidden={hidden}, blocks={blocks} make {fmt_count(n, thousands=True)} parameters, more than "
                         f"the {fmt_count(DEMO_CONV_MAX_PARAMS, thousands=True)} demo-conv allows")
    return DemoConvNet(hidden=hidden, blocks=blocks, prior=prior)


#: bounds on the program-search config, checked before anything is built (the defaults
#: are max_depth=2, budget=100,000 primitive applications, time_limit=60 s per task):
#: whatever a checkpoint says, one task's search stays bounded in work and time.
PROGRAM_SEARCH_BOUNDS = {"max_depth": (0, 4), "budget": (1, 10_000_000)}
PROGRAM_SEARCH_MAX_TIME_LIMIT = 600.0


def _build_program_search(max_depth: int = 2, budget: int | None = None,
                          time_limit: float | None = None):
    """The program search as a model (``program-search``; ``--config`` on the command
    line, ``config=`` in Python). Its options, and nothing else (another key is refused
    in one line that names these):

    ``max_depth``
        how many grid programs one candidate composes, 0 to 4 (default 2);
    ``budget``
        program applications per task, 1 to 10,000,000 (default 100,000; counted in
        applications, not seconds, so the result is the same on every machine);
    ``time_limit``
        a safety stop in seconds per task, up to 600 (default 60; null: the default).
    """
    import numbers

    max_depth = _int_in("max_depth", max_depth, *PROGRAM_SEARCH_BOUNDS["max_depth"])
    budget = _int_in("budget", DEFAULT_BUDGET if budget is None else budget,
                     *PROGRAM_SEARCH_BOUNDS["budget"])
    if time_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or \
            not 0 < float(time_limit) <= PROGRAM_SEARCH_MAX_TIME_LIMIT:
        raise ArcnbError(f"time_limit={time_limit!r} is not a number of seconds in "
                         f"(0, {fmt_significant(PROGRAM_SEARCH_MAX_TIME_LIMIT)}]")
    return program_search_model(max_depth=max_depth, budget=budget,
                                time_limit=float(time_limit))


register_builder("copy-input", _build_copy_input)
register_builder("program-search", _build_program_search)
register_builder("demo-conv", _build_demo_conv)
