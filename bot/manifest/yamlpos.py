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

    def duplicate_keys(self) -> list[str]:
        """'file:line:col: key' of every key that repeats one of its mapping (YAML keeps the last,
        silently: a second 'ops:' would replace the first)."""
        out, todo = [], [self.root] if self.root is not None else []
        while todo:  # iteratively: a hostile document may nest a thousand levels deep
            node = todo.pop()
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for k, v in node.value:
                    key = getattr(k, "value", None)
                    if isinstance(key, str) and key in seen:
                        out.append(f"{self.path}:{k.start_mark.line + 1}:{k.start_mark.column + 1}: "
                                   f"'{key}' is given twice in the same mapping (YAML would keep only the last)")
                    seen.add(key)
                    todo.append(v)
            elif isinstance(node, yaml.SequenceNode):
                todo.extend(node.value)
        return sorted(out)

    @classmethod
    def read(cls, path: Path) -> "YamlDoc":
        return cls(path, cls.read_text(path))

    @staticmethod
    def read_text(path: Path) -> str:
        """The file as UTF-8 text. Raises ``UnicodeError`` with the line and column of the first
        byte that is not UTF-8 (in its message), and ``IsADirectoryError`` for a directory."""
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            raise UnicodeError(f"{path}:{line}:{col}: not UTF-8 (byte 0x{raw[exc.start]:02x}): a manifest is UTF-8 "
                               "text") from None
        return text

    def lines(self, loc: tuple) -> tuple[int, int] | None:
        """The first and last line (1-based) of the value at ``loc``; None when the document has none."""
        node = self.root
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == str(key)), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
            else:
                node = None
            if node is None:
                return None
        end = node.end_mark.line + (1 if node.end_mark.column > 0 else 0)
        return node.start_mark.line + 1, max(end, node.start_mark.line + 1)

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
