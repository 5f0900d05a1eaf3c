"""Stand-in ops: a repository's registered ops defined in torch from their schemas, so that a
framework's Python model code runs with no compiled extension and no GPU (on the meta device).

An op is defined the first time Python looks it up (``torch.ops.<ns>.<name>``, ``hasattr`` included)
in a namespace the repository registers ops in, under its name there; the build may put an op in
another of those namespaces than the one discovery read (``TORCH_EXTENSION_NAME``), so a name known
in one is defined in whichever asks. Namespaces the framework defines in Python are left alone.

- An op that returns nothing does nothing.
- An op that returns a number or a flag (a capability query) gives the answer the framework's
  adapter states for the GPU it records for, or fails.
- An op that returns tensors runs the framework's own fake implementation
  (``torch.library.register_fake``), which the framework registers for the ops it traces; without
  one the call fails, and the recording says which op stopped the run rather than inventing a
  shape.
"""
from __future__ import annotations

import torch

_LIBRARIES: list = []  # torch.library.Library objects must outlive their definitions
_INSTALLED: dict = {}


class StandInOps:
    """The schemas by op name, and the ops defined so far (``namespace::name``)."""

    def __init__(self, schemas: dict[str, str], answers: dict | None = None):
        self.schemas = {key.rpartition("::")[2]: text for key, text in schemas.items()}
        self.namespaces = {key.rpartition("::")[0] for key in schemas} - {""}
        self.answers = dict(answers or {})
        self.defined: list[str] = []
        self.refused: dict[str, str] = {}  # op -> why torch refused its schema
        self._defining: set = set()  # torch's define() looks the op up itself: not again

    def define(self, namespace: str, name: str) -> bool:
        key = f"{namespace}::{name}"
        if key in self._defining or key in self.refused:
            return False
        self._defining.add(key)
        try:
            return self._define(namespace, name)
        finally:
            self._defining.discard(key)

    def _define(self, namespace: str, name: str) -> bool:
        schema = self.schemas.get(name)
        if schema is None or namespace not in self.namespaces:
            return False
        lib = torch.library.Library(namespace, "FRAGMENT")
        try:
            lib.define(_unqualified(schema))
        except RuntimeError as exc:  # a schema torch's parser rejects (a C++-only type)
            self.refused[f"{namespace}::{name}"] = str(exc).splitlines()[0]
            return False
        parsed = getattr(getattr(torch.ops, namespace), name).default._schema
        if not parsed.returns:
            for key in ("Meta", "CPU"):
                lib.impl(name, _nothing, key)
        elif name in self.answers:
            answer = self.answers[name]
            lib.impl(name, lambda *args, **kwargs: answer, "CompositeExplicitAutograd")
        _LIBRARIES.append(lib)
        self.defined.append(f"{namespace}::{name}")
        return True


def install(schemas: dict[str, str], answers: dict | None = None) -> StandInOps:
    """Define the stand-ins on first lookup. ``schemas``: ``namespace::name`` -> schema text as
    registered (``rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()``); ``answers``:
    op name -> the value an op without tensor results returns."""
    ops = StandInOps(schemas, answers)
    namespace_type = torch._ops._OpNamespace
    original = _INSTALLED.setdefault("getattr", namespace_type.__getattr__)

    def lookup(self, op_name: str):
        try:
            return original(self, op_name)
        except AttributeError:
            if op_name.startswith("__") or not ops.define(self.name, op_name):
                raise
            return original(self, op_name)

    namespace_type.__getattr__ = lookup
    return ops


def _nothing(*args, **kwargs) -> None:
    return None


def _unqualified(schema: str) -> str:
    """The schema with its op name only: a registered ``_C::rms_norm(...)`` or ``rms_norm(...)``."""
    head, paren, rest = schema.partition("(")
    return head.strip().rpartition("::")[2] + paren + rest
