"""Disjoint sets of hashable keys (union-find with path halving): the classes of terms a path
sets equal (lia.py) and the groups of constraints that share no variable (solver.py)."""
from __future__ import annotations


class Partition:
    def __init__(self):
        self._parent: dict = {}

    def add(self, key) -> None:
        self._parent.setdefault(key, key)

    def find(self, key):
        """The representative of ``key``'s class (``key`` must have been added or joined)."""
        parent = self._parent
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def join(self, a, b) -> None:
        self.add(a)
        self.add(b)
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[ra] = rb

    def __contains__(self, key) -> bool:
        return key in self._parent

    def __iter__(self):
        return iter(self._parent)

    def __bool__(self) -> bool:
        return bool(self._parent)
