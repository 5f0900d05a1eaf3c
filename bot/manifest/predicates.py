"""Which models use an op: a condition on config fields, such as ``has num_experts``,
``num_experts > 0 and hidden_act == 'silu'`` or ``quantization_config.quant_method in ['fp8']``.

The text is parsed with Python's ``ast`` and only names, numbers, strings, lists, comparisons,
``and``/``or``/``not`` and ``has`` are accepted; nothing is executed.
"""
from __future__ import annotations

import ast
import re
from typing import Callable

_HAS = re.compile(r"\bhas\s+([A-Za-z_][\w.]*)")
_MISSING = object()


class PredicateError(ValueError):
    pass


def compile_predicate(text: str) -> Callable[[Callable[[str], object]], bool]:
    """A function of ``lookup(name) -> value`` (or a missing marker) that decides the condition.
    Comparing a field a model lacks is false, never an error: ``num_experts > 0`` holds for MoE
    models only."""
    source = _HAS.sub(lambda m: f"has({m.group(1)!r})", text.strip())
    if len(source) > 2000:
        raise PredicateError(f"model condition {text[:57]!r}... is longer than 2000 characters")
    try:
        tree = ast.parse(source, mode="eval")
        if sum(1 for _ in ast.walk(tree)) > 300:
            raise PredicateError(f"model condition {text[:57]!r}... has more than 300 terms")
    except SyntaxError as exc:
        raise PredicateError(f"cannot parse model condition {text!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise PredicateError(f"model condition {text[:57]!r}... is nested too deeply") from None
    node = tree.body
    _check(node, text)
    return lambda lookup: bool(_eval(node, lookup))


def missing() -> object:
    return _MISSING


def _check(node: ast.AST, text: str) -> None:
    ok = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare, ast.Name,
          ast.Attribute, ast.Constant, ast.List, ast.Tuple, ast.Load, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt,
          ast.GtE, ast.In, ast.NotIn, ast.Call)
    for n in ast.walk(node):
        if not isinstance(n, ok):
            raise PredicateError(f"unsupported syntax in model condition {text!r}: {type(n).__name__}")
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id == "has" and len(n.args) == 1
                                            and isinstance(n.args[0], ast.Constant) and not n.keywords):
            raise PredicateError(f"in model condition {text!r}: the only function is 'has FIELD'")


def _name(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _eval(node: ast.AST, lookup):
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, lookup) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, lookup)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval(node.operand, lookup)
        return -v if isinstance(v, (int, float)) else _MISSING
    if isinstance(node, ast.Call):
        v = lookup(node.args[0].value)
        return v is not _MISSING and v is not None
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, lookup) for e in node.elts]
    name = _name(node)
    if name is not None:
        return lookup(name)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, lookup)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, lookup)
            if left is _MISSING or right is _MISSING or not _compare(op, left, right):
                return False
            left = right
        return True
    raise PredicateError(f"unsupported model condition element {type(node).__name__}")


def _compare(op, a, b) -> bool:
    try:
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        if isinstance(op, ast.In):
            return a in b
        if isinstance(op, ast.NotIn):
            return a not in b
        if isinstance(op, ast.Lt):
            return a < b
        if isinstance(op, ast.LtE):
            return a <= b
        if isinstance(op, ast.Gt):
            return a > b
        if isinstance(op, ast.GtE):
            return a >= b
    except TypeError:  # a string against a number: not this model
        return False
    return False
