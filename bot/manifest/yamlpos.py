"""YAML with positions: every value of a document can be traced back to its line and column."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Pos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class YamlDoc:
    def __init__(self, path: Path, text: str):
        self.path = path
        self.text = text
        self.root = yaml.compose(text, Loader=yaml.SafeLoader)
        self.data = yaml.safe_load(text)

    @classmethod
    def read(cls, path: Path) -> "YamlDoc":
        return cls(path, path.read_text())

    def pos(self, loc: tuple = ()) -> Pos:
        """The position of the value at ``loc`` (keys and indices); the closest enclosing one when
        ``loc`` goes past what the document has."""
        node = self.root
        best = node
        for n, key in enumerate(loc):
            if isinstance(node, yaml.MappingNode):
                nxt = None
                for k, v in node.value:
                    if k.value == str(key):
                        nxt = v
                        best = k
                        break
                if nxt is None:
                    break
                node = nxt
                if n < len(loc) - 1:
                    best = node  # the last step stays on the key: where the user's eye goes
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
                best = node
            else:
                break
        if best is None:
            return Pos(str(self.path), 1, 1)
        return Pos(str(self.path), best.start_mark.line + 1, best.start_mark.column + 1)
