"""The IR hash the cache and the impact analysis key on.

``Program.fingerprint`` hashes the reprs of an op's functions, which carry the numeric ids of
variable declarations; those ids depend on the order in which a translation unit's functions were
lowered (another op of the same file lowered first shifts them). Here the ids are renumbered in
order of appearance, and clang's place-based names of unnamed entities (``(lambda at FILE:L:C)``,
absolute paths included) lose their place, so the hash depends on the op's IR alone: editing
kernel A of a file leaves the hash of an op that only launches kernel B unchanged, and so does a
comment that moves lines."""
from __future__ import annotations

import hashlib
import re

_VAR_ID = re.compile(r"VarDecl\(id=(\d+),")
# clang names unnamed entities by place ("(lambda at /abs/path/f.cu:61:3)"); the structural keys
# ("...::lambda#0") identify them, so the place is dropped: moving a lambda is no IR change.
_PLACE_NAME = re.compile(r"\((lambda|unnamed [a-z]+|anonymous [a-z]+) at [^)]*\)")


def op_hash(op) -> str:
    """Hash of the op's launcher and everything it calls (spans excluded: kir.nodes)."""
    program = op.program
    root = op.fn.key
    seen: set[str] = set()
    stack = [root]
    while stack:
        key = stack.pop()
        if key in seen or key not in program.functions:
            continue
        seen.add(key)
        stack.extend(program.callees(program.functions[key]))
    ids: dict[str, int] = {}

    def renumber(m: re.Match) -> str:
        return f"VarDecl(id={ids.setdefault(m.group(1), len(ids) + 1)},"

    h = hashlib.sha256()
    for key in sorted(seen):
        text = _PLACE_NAME.sub(r"(\1)", repr(program.functions[key]))
        h.update(_VAR_ID.sub(renumber, text).encode())
    return h.hexdigest()
