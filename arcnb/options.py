"""The options of an evaluation, defined once: :class:`EvalOptions`.

How a checkpoint is evaluated (device, batch size, attempts, augmentation, colour
permutations, seed, builder and its config, trust, estimator, bootstrap resamples,
probes) is one frozen dataclass. Each field carries its default, its choices (the
package's constants: :data:`arcnb.augment.AUGMENT_MODES`,
:data:`arcnb.scoring.ESTIMATORS`), its bounds and its help text; the checks run when
an instance is made, so a bad value is refused in one line
(:class:`~arcnb.errors.ParameterError`) before a model is loaded or a folder written.
:func:`arcnb.evaluate.evaluate` and :func:`arcnb.sweep.sweep` take it as ``options=``,
the ``arcnb`` command builds its evaluation flags from its fields, and the evaluate
notebook builds one from its parameters (:meth:`EvalOptions.from_mapping`).

Run-level choices (where the run goes, resuming, overwriting, which tasks, a progress
bar) are not evaluation options: they stay keyword arguments of ``evaluate``.

>>> EvalOptions(attempts=3).attempts
3
>>> EvalOptions.from_mapping({"config": '{"width": 4}', "replace_config": True}).model_config
{'width': 4}
"""
from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

from .augment import AUGMENT_MODES
from .errors import ParameterError
from .io import parse_json, plain_json, to_jsonable
from .models.loading import ReplaceConfig, builder_name, checkpoint_path, file_sha256
from .probes import PROBES, check_probes
from .runs import user_paths
from .scoring import ESTIMATORS
from .stats import check_n_boot, check_seed, whole_number

__all__ = ["EvalOptions", "combine", "run_options", "MAX_ATTEMPTS", "MAX_BATCH_SIZE", "MAX_COLOR_PERMS"]

#: Most attempts per test input (1,000): the vote fills every attempt, so the bound is
#: the bound on the predictions' size.
MAX_ATTEMPTS = 1000
#: Most colour permutations with ``dihedral+colors`` (1,000: 8,008 views of every test
#: input); the views are built before the first batch.
MAX_COLOR_PERMS = 1000
#: Most model inputs per batch (2**20).
MAX_BATCH_SIZE = 1 << 20


def _option(default, help: str, **meta):
    """A field of :class:`EvalOptions`: its default and, in its metadata, the help text
    and what the command line needs (``choices``, ``bounds``, ``metavar``, ``flag``)."""
    return field(default=default, metadata={"help": help, **meta})


@dataclass(frozen=True)
class EvalOptions(Mapping):
    """How a checkpoint is evaluated: every option that changes the result of
    :func:`arcnb.evaluate.evaluate`, checked when made (one
    :class:`~arcnb.errors.ParameterError` line for a bad value).

    ``config`` is the builder's arguments (merged over the checkpoint's saved config,
    or replacing it with ``replace_config=True``; a :class:`arcnb.models.ReplaceConfig`
    given as ``config`` sets that flag). ``probe`` is None, a probe name, a
    comma-separated text of them or a list (:func:`arcnb.probes.check_probes`).

    As a mapping, an instance holds, as plain JSON, the options set away from their
    defaults (what ``CheckpointSource.options`` and a notebook's parameters carry):
    ``dict(EvalOptions(attempts=1)) == {"attempts": 1}``, and
    :meth:`from_mapping` reads it back.
    """

    device: str = _option("auto", "auto (default), cpu or cuda")
    batch_size: int = _option(64, "model inputs per batch (64)", bounds=(1, MAX_BATCH_SIZE))
    augment: str = _option("none", "test-time augmentation with voting (default none)",
                           choices=AUGMENT_MODES)
    color_perms: int = _option(1, "random colour permutations per dihedral view for "
                                  "dihedral+colors (1)", bounds=(1, MAX_COLOR_PERMS))
    estimator: str = _option(
        "ranked", "ranked (default, ARC Prize rule): any of the first K attempts in file "
                  "order; unbiased: 1 - C(n-c,K)/C(n,K) per output from n attempts with c "
                  "right, for sampled attempts", choices=ESTIMATORS)
    arch: object = _option(None, "model builder (registered name or module:callable) for "
                                 "Lightning / state-dict / safetensors checkpoints; the "
                                 "module is looked up in the current directory first, as "
                                 "`python -m` does")
    config: object = _option(None, "JSON object of builder arguments (merged over the "
                                   "checkpoint's saved config)")
    replace_config: bool = _option(False, "use --config (or the builder's defaults) instead "
                                          "of the checkpoint's saved config, not merged over "
                                          "it")
    trust_checkpoint: bool = _option(False, "allow a checkpoint that needs arbitrary pickled "
                                            "code (runs code from the file: only for files "
                                            "you trust)")
    attempts: int = _option(2, "attempts per test input (2)", bounds=(1, MAX_ATTEMPTS))
    seed: int = _option(0, "torch and colour-permutation seed (0)")
    n_boot: int = _option(1000, "bootstrap resamples (default 1000)")
    probe: object = _option(None, "also evaluate every task under a probe and map the answers "
                                  "back: " + ", ".join(PROBES[:-1]) + f" or {PROBES[-1]} "
                                  "(repeatable); see the guide's memorisation and invariance "
                                  "probes", metavar="PROBE")
    proxy: bool = _option(False, "also score each task with each demonstration pair held out "
                                 "(leave-one-demonstration-out proxy score)")

    def __post_init__(self):
        config = self.config
        if isinstance(config, ReplaceConfig):
            object.__setattr__(self, "replace_config", True)
            config = dict(config)
        if config is not None and not isinstance(config, Mapping):
            raise ParameterError(f"config must be a JSON object (a dict), got "
                                 f"{type(config).__name__}")
        object.__setattr__(self, "config", None if config is None else dict(config))
        if isinstance(self.probe, list):
            object.__setattr__(self, "probe", tuple(self.probe))
        self.validate()

    def validate(self) -> None:
        """Refuse a bad value in one line (:class:`~arcnb.errors.ParameterError`); the
        whole numbers are stored as ``int``. Runs when an instance is made."""
        if self.augment not in AUGMENT_MODES:
            raise ParameterError(f"augment must be one of {', '.join(AUGMENT_MODES)}, got "
                                 f"{self.augment!r}")
        if self.estimator not in ESTIMATORS:
            raise ParameterError(f"unknown estimator {self.estimator!r}: expected one of "
                                 f"{', '.join(ESTIMATORS)}")
        for f in fields(self):
            if "bounds" in f.metadata:
                value = whole_number(getattr(self, f.name), *f.metadata["bounds"], f.name)
                object.__setattr__(self, f.name, value)
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "n_boot", check_n_boot(self.n_boot))
        for name in ("replace_config", "trust_checkpoint", "proxy"):
            if not isinstance(getattr(self, name), bool):
                raise ParameterError(f"{name} must be True or False, got "
                                     f"{getattr(self, name)!r}")
        check_probes(self.probe)

    # ------------------------------------------------------------ building one
    @classmethod
    def from_mapping(cls, options=None) -> "EvalOptions":
        """An instance from plain-JSON options (a notebook's parameters,
        ``CheckpointSource.options``, the command line's values); an
        :class:`EvalOptions` is returned as is. ``config`` may be a JSON text, an
        empty ``arch``, ``config`` or ``probe`` means none, and a ``module:callable``
        ``arch`` is also looked up in the directory the ``arcnb`` command was started
        from (a notebook kernel runs elsewhere). A name that is not an option is
        refused."""
        if isinstance(options, EvalOptions):
            return options
        opts = dict(options or {})
        unknown = sorted(set(opts) - set(cls.names()))
        if unknown:
            raise ParameterError(f"{unknown[0]!r} is not an evaluation option (expected "
                                 f"one of {', '.join(cls.names())})")
        for name in ("arch", "config", "probe"):
            if opts.get(name) == "" or opts.get(name) == []:
                opts[name] = None
        if isinstance(opts.get("config"), str):
            opts["config"] = _config_json(opts["config"])
        _import_from_caller_dir(opts.get("arch"))
        return cls(**opts)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The options' names, in order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def defaults(cls) -> dict:
        """Every option's default."""
        return {f.name: f.default for f in fields(cls)}

    def replace(self, **changes) -> "EvalOptions":
        """A copy with ``changes`` (checked again)."""
        return replace(self, **changes)

    # ------------------------------------------------------------ using one
    @property
    def model_config(self):
        """The builder config :func:`arcnb.models.load_model` takes: ``config``, or a
        :class:`arcnb.models.ReplaceConfig` of it (empty: the builder's defaults) with
        ``replace_config``."""
        if self.replace_config:
            return ReplaceConfig(self.config or {})
        return self.config or None

    def to_kwargs(self) -> dict:
        """:func:`arcnb.evaluate.evaluate`'s keyword arguments (``config`` as
        :attr:`model_config`, no ``replace_config``)."""
        kw = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "replace_config"}
        kw["config"] = self.model_config
        return kw

    def to_json(self) -> dict:
        """Every option as plain JSON (``probe`` a comma-separated text, a callable
        ``arch`` by its ``module:name``)."""
        return {name: _plain(name, getattr(self, name)) for name in self.names()}

    # the mapping: the options set away from their defaults, as plain JSON
    def _given(self) -> dict:
        defaults = self.defaults()
        return {k: v for k, v in self.to_json().items() if v != _plain(k, defaults[k])}

    def __getitem__(self, key):
        return self._given()[key]

    def __iter__(self):
        return iter(self._given())

    def __len__(self) -> int:
        return len(self._given())

    __hash__ = None  # a dict field (config): not hashable


def _plain(name: str, value):
    if name == "probe":
        return ",".join(check_probes(value)) or None
    if name == "arch" and value is not None and not isinstance(value, str):
        return f"{getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', repr(value))}"
    return value


def _config_json(text: str):
    if not text.strip():
        return None
    config = parse_json(text, what="--config", invalid="is invalid JSON", error=ParameterError)
    if config is not None and not isinstance(config, dict):
        raise ParameterError("--config must be a JSON object")
    return config


def _import_from_caller_dir(arch) -> None:
    """Let ``arch="mymodels:build"`` find ``mymodels.py`` in the directory the
    ``arcnb`` command was started from (else the current one), as ``python -m`` and
    uvicorn's ``--app-dir`` do. Only for a builder the user names; a builder named
    inside a checkpoint still needs ``trust_checkpoint`` to be imported."""
    if not (isinstance(arch, str) and ":" in arch):
        return
    cwd = (user_paths() or {}).get("cwd")
    if not isinstance(cwd, str):
        cwd = os.getcwd()
        if "" in sys.path:
            return
    if cwd not in sys.path:
        sys.path.insert(0, cwd)


def _is_default(value, default) -> bool:
    return value is default or (type(value) is type(default) and value == default)


def combine(options: "EvalOptions | None", **keywords) -> EvalOptions:
    """The options of a call that takes both ``options=`` and the options as keywords
    (:func:`arcnb.evaluate.evaluate`, :func:`arcnb.sweep.sweep`): without ``options``,
    an :class:`EvalOptions` of the keywords; with it, ``options`` where each keyword
    given a value other than its default overrides that field (the keyword wins)."""
    if options is None:
        return EvalOptions(**keywords)
    if not isinstance(options, EvalOptions):
        options = EvalOptions.from_mapping(options)
    defaults = EvalOptions.defaults()
    changed = {k: v for k, v in keywords.items() if not _is_default(v, defaults[k])}
    return options.replace(**changed) if changed else options


def run_options(checkpoint, ds, device_type: str, *, batch_size: int = 64, attempts: int = 2,
                augment: str = "none", color_perms: int = 1, arch=None, config=None,
                seed: int = 0, estimator: str = "ranked", n_boot: int = 1000,
                checkpoint_sha256: str | None = None) -> dict:
    """Every parameter that changes an evaluation's result, as plain JSON: the
    checkpoint's bytes (its SHA-256, or the model's name when it reads no file; never
    its path), the builder and its config (merged or replacing), the dataset's version
    and task ids, the device type, the batch size (every input is computed in the same
    batch), attempts, augmentation, colour permutations, seed, estimator and bootstrap
    resamples. Their hash (:func:`arcnb.runs.options_sha256`) is the one "same run"
    check: evaluate records both in ``metrics.json``; a sweep reuses a finished run, and
    collects the runs of its shards, only when it matches (``checkpoint_sha256``
    spares hashing a file the caller has hashed)."""
    if isinstance(checkpoint, (str, os.PathLike)):
        p = checkpoint_path(checkpoint)
        ck = checkpoint_sha256 or (file_sha256(p) if p.is_file() else str(checkpoint))
    else:
        ck = type(getattr(checkpoint, "model", checkpoint)).__name__
    ids = hashlib.sha256("\n".join(ds.task_ids).encode("utf-8", "surrogateescape")).hexdigest()
    opts = {"checkpoint": ck, "arch": None if arch is None else builder_name(arch),
            "config": to_jsonable(config) if config else None,
            "replace_config": isinstance(config, ReplaceConfig),
            "dataset_version": ds.version, "task_ids_sha256": ids, "device": device_type,
            "batch_size": int(batch_size), "attempts": int(attempts), "augment": augment,
            "color_perms": int(color_perms) if augment == "dihedral+colors" else None,
            "seed": int(seed), "estimator": estimator, "n_boot": int(n_boot)}
    return plain_json(opts, default=str)
