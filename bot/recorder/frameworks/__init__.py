"""Recording a real inference framework's models: one adapter per framework runs the framework's own
model classes on the meta device, with the repository's compiled ops replaced by stand-ins
(``bot.recorder.standins``), and returns the custom-op calls of each forward pass.

Adapters import their framework, which lives only in a recording environment (docs/recording.md),
never in kernelvet's own install: this package imports nothing of it at module level.
"""
from __future__ import annotations

import importlib


def quantized_presets(framework: str) -> list[str]:
    """The quantized-checkpoint presets a framework's adapter knows (its QUANTIZED table)."""
    return list(getattr(importlib.import_module(f"{__name__}.{framework}"), "QUANTIZED", {}))


def quantized_config(framework: str, config: dict, preset: str) -> dict:
    """``config`` as a checkpoint of ``preset`` would have it (the adapter's quantized_config)."""
    return importlib.import_module(f"{__name__}.{framework}").quantized_config(config, preset)
