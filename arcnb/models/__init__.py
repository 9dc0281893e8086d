"""Models for evaluation: the interface, safe checkpoint loading, builders, the demo network.

See :mod:`arcnb.models.interface` for the model interface (inputs ``[B, 30, 30]``
padded with 10, optional demonstrations, logits ``[B, 11, H, W]``, crop rule) and
:mod:`arcnb.models.loading` for the checkpoint formats and the safety rule, and
:mod:`arcnb.models.safety` for what is checked in an archive before it is loaded.
"""
from __future__ import annotations

from .interface import (CANVAS, N_CLASSES, ModelAdapter, decode_logits, is_valid_prediction,
                        pad_batch, pad_demonstrations)
from .loading import (BUNDLED_CHECKPOINT, CHECKPOINT_FORMATS,
                      CHECKPOINT_SUFFIXES, CheckpointFormat, ReplaceConfig, UnsafeCheckpointError,
                      detect_format, file_sha256, load_model, recorded_step, save_checkpoint)
from .registry import builder_names, get_builder, register_builder, resolve_builder

__all__ = [
    "CANVAS", "N_CLASSES", "ModelAdapter", "decode_logits", "is_valid_prediction", "pad_batch",
    "pad_demonstrations", "BUNDLED_CHECKPOINT", "ReplaceConfig",
    "UnsafeCheckpointError", "detect_format", "CheckpointFormat", "CHECKPOINT_FORMATS",
    "CHECKPOINT_SUFFIXES", "recorded_step",
    "file_sha256", "load_model", "save_checkpoint", "builder_names", "get_builder",
    "register_builder", "resolve_builder",
]
