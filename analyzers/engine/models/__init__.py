"""Models of external APIs: one small function per API, registered by qualified name.

A model receives the interpreter, the state, the call node, a pointer to the object for member
functions, and the evaluated arguments (references as RefV). Template arguments of the owner class
are dropped from the name: ``std::optional<at::Tensor>::has_value`` is ``std::optional::has_value``.
"""
from __future__ import annotations

_REGISTRY: dict = {}


def model(*names: str, overrides_body: bool = False):
    def register(fn):
        fn.overrides_body = overrides_body
        for n in names:
            _REGISTRY[n] = fn
        return fn
    return register


def normalize(name: str) -> str:
    """Template arguments dropped from the owner: the function's own name (``operator->``) stays."""
    owner, sep, fn = name.rpartition("::")
    if not sep:
        return name
    out = []
    depth = 0
    for ch in owner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out) + "::" + fn


def lookup(name: str):
    fn = _REGISTRY.get(name)
    if fn is None:
        fn = _REGISTRY.get(normalize(name))
    return fn


from . import cuda, gpuverify, torch, tvm_ffi, std, libc  # noqa: E402,F401  (registration)
