"""A package you call: ``arcnb.candidates(dataset, predictions)`` and
``arcnb.repeats(sources, dataset=...)`` are packages whose module object is also their
main function (:func:`callable_module`), so that ``arcnb.candidates.load_candidates``
and ``import arcnb.repeats.runs`` work beside the call, and the import system never
meets a function where it expects a module. The one home of that trick."""
from __future__ import annotations

import functools
import sys
import types
from typing import Callable

__all__ = ["callable_module"]


def callable_module(name: str, func: Callable) -> types.ModuleType:
    """Make the imported module ``name`` (a package's ``__name__``) callable: calling
    it calls ``func`` with the same arguments. The module stays the module (its
    attributes, submodules and ``import`` unchanged); only its class becomes a
    :class:`types.ModuleType` subclass whose ``__call__`` is ``func`` (its name,
    docstring and signature, for ``help`` and the notebooks' call tips). Returns the
    module."""
    module = sys.modules[name]

    @functools.wraps(func)
    def __call__(self, *args, **kwargs):
        return func(*args, **kwargs)

    cls = type(f"CallableModule[{name}]", (types.ModuleType,), {
        "__call__": __call__, "__module__": __name__,
        "__doc__": f"``{name}`` is this module and, called, ``{func.__name__}``."})
    module.__class__ = cls
    return module
