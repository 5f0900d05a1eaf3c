"""kernelvet's commands. Each module defines ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed arguments, returning the exit code). A new command is a new module
listed in COMMANDS."""
from __future__ import annotations

COMMANDS = ["scan", "manifest", "record", "diff", "merge", "pr", "post", "action", "precommit", "repro"]
