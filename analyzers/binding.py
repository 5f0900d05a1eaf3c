"""What the engine needs to know about an op's arguments, independent of the manifest format.

Expressions (shapes, scalars, constraints) are small trees over numbers, model fields and user dims,
parsed from text with Python's ``ast`` restricted to arithmetic. Model fields are substituted before
the engine sees an instance, so only user dims remain symbolic.
"""
from __future__ import annotations

import re

import ast
import itertools
import math
import operator
from dataclasses import dataclass, field

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
FUNCS = {"min", "max", "ceil_div", "round_up"}


class ExprError(ValueError):
    pass


@dataclass(frozen=True)
class Num:
    value: int | float


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class BinOp:
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Neg:
    operand: "Expr"


@dataclass(frozen=True)
class Func:
    name: str
    args: tuple


@dataclass(frozen=True)
class Compare:
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class BoolOp:
    op: str  # and | or
    values: tuple


@dataclass(frozen=True)
class Elem:
    """An element of a 1-D index tensor in a relation: ``tensor[i + offset]``."""

    tensor: str
    offset: int


Expr = Num | Name | BinOp | Neg | Func | Compare | BoolOp | Elem
INDEX = "i"  # a relation's index variable: it holds for every i at which its elements exist


def parse_expr(text: str | int | float) -> Expr:
    """Parse ``text`` (``batch * seq_len``, ``hidden_size // 8``, ``min(a, b)``) into an Expr."""
    if isinstance(text, bool):
        raise ExprError("expected a number or an expression, got a boolean")
    if isinstance(text, (int, float)):
        return Num(_in_range(text))
    # Constant parts are folded now: '2 ** 64 ** 64' or 'ceil_div(8, 0)' is an error of the manifest
    # at load time, not a wrapped constant in the engine.
    return substitute(_parsed(str(text), lambda tree: _convert(tree.body, str(text))), {})


MAX_EXPR_CHARS = 2000
MAX_EXPR_NODES = 300


def _parsed(text: str, convert):
    """Parse with Python's parser and convert, within limits: a hostile manifest's 1,000-deep nesting
    or 3,000 'not's is an error of the manifest, not a RecursionError of kernelvet."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    if len(text) > MAX_EXPR_CHARS:
        raise ExprError(f"expression {shown!r} is longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
        if sum(1 for _ in ast.walk(tree)) > MAX_EXPR_NODES:
            raise ExprError(f"expression {shown!r} has more than {MAX_EXPR_NODES} terms")
        return convert(tree)
    except SyntaxError as exc:
        hint = ""
        if text.count("(") != text.count(")"):
            hint = " (in a YAML list [a, b], quote an expression that has a comma: \"ceil_div(a, b)\")"
        raise ExprError(f"cannot parse expression {shown!r}: {exc.msg}{hint}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        if isinstance(exc, ExprError):
            raise
        raise ExprError(f"expression {shown!r} is nested too deeply") from None


def parse_relation(text: str) -> Expr:
    """Parse a relation between index tensors' elements (``rowStarts[i] <= rowEnds[i]``): a condition
    whose subscripts are ``i``, ``i + c`` or ``i - c``, with at least one subscript."""
    if not isinstance(text, str):
        raise ExprError(f"a relation is a condition in quotes, got {text!r}")
    e = _parsed(text, lambda tree: _convert(tree.body, text, subscripts=True))
    if not isinstance(e, (Compare, BoolOp)):
        raise ExprError(f"a relation is a comparison ('rowStarts[i] <= rowEnds[i]'), got {text!r}")
    if not elems(e):
        raise ExprError(f"relation {text!r} names no tensor element (write 'tensor[i]')")
    if INDEX in names(e):
        raise ExprError(f"relation {text!r} uses '{INDEX}' outside a subscript")
    return e


def _subscript(node: ast.Subscript, text: str) -> Elem:
    if not isinstance(node.value, ast.Name):
        raise ExprError(f"in relation {text!r}: subscript a tensor argument by name ('rowEnds[i]')")
    idx = node.slice
    offset = None
    if isinstance(idx, ast.Name) and idx.id == INDEX:
        offset = 0
    elif (isinstance(idx, ast.BinOp) and isinstance(idx.op, (ast.Add, ast.Sub)) and isinstance(idx.left, ast.Name)
          and idx.left.id == INDEX and isinstance(idx.right, ast.Constant) and type(idx.right.value) is int):
        offset = idx.right.value if isinstance(idx.op, ast.Add) else -idx.right.value
    if offset is None:
        raise ExprError(f"in relation {text!r}: an index is '{INDEX}', '{INDEX} + c' or '{INDEX} - c' "
                        f"(c a whole number), got {ast.unparse(idx)!r}")
    return Elem(node.value.id, offset)


def _parts(e: Expr) -> tuple:
    """The sub-expressions directly under ``e``."""
    if isinstance(e, (BinOp, Compare)):
        return (e.left, e.right)
    if isinstance(e, Neg):
        return (e.operand,)
    if isinstance(e, Func):
        return e.args
    if isinstance(e, BoolOp):
        return e.values
    return ()


def _with_parts(e: Expr, parts: tuple) -> Expr:
    """``e`` with its sub-expressions replaced (in ``_parts`` order)."""
    if isinstance(e, BinOp):
        return BinOp(e.op, *parts)
    if isinstance(e, Compare):
        return Compare(e.op, *parts)
    if isinstance(e, Neg):
        return Neg(*parts)
    if isinstance(e, Func):
        return Func(e.name, tuple(parts))
    if isinstance(e, BoolOp):
        return BoolOp(e.op, tuple(parts))
    return e


def _walk(e: Expr):
    yield e
    for p in _parts(e):
        yield from _walk(p)


def rename_tensors(e: Expr, names_of: dict) -> Expr:
    """The relation with each element's tensor renamed (manifest argument key -> launcher parameter)."""
    if isinstance(e, Elem):
        return Elem(names_of.get(e.tensor, e.tensor), e.offset)
    return _with_parts(e, tuple(rename_tensors(p, names_of) for p in _parts(e)))


def elems(e: Expr) -> set:
    """The tensor elements a relation names."""
    return {x for x in _walk(e) if isinstance(x, Elem)}


def _convert(node: ast.AST, text: str, subscripts: bool = False) -> Expr:
    def conv(n):
        return _convert(n, text, subscripts)

    if subscripts and isinstance(node, ast.Subscript):
        return _subscript(node, text)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Num(_in_range(node.value))
    if isinstance(node, ast.Name):
        return Name(node.id)
    if isinstance(node, ast.Attribute):  # text_config.hidden_size
        parts = []
        cur = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name):
            parts.append(cur.id)
            return Name(".".join(reversed(parts)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return BinOp(_BINOPS[type(node.op)], conv(node.left), conv(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return Neg(conv(node.operand))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return conv(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCS and not node.keywords:
        want = 2 if node.func.id in ("ceil_div", "round_up") else None
        if (want is not None and len(node.args) != want) or not node.args:
            raise ExprError(f"{node.func.id}() takes {want or 'at least one'} argument{'s' if want != 1 else ''}, "
                            f"got {len(node.args)}, in {text!r}")
        return Func(node.func.id, tuple(conv(a) for a in node.args))
    if isinstance(node, ast.Compare) and len(node.ops) >= 1 and all(type(o) in _CMPOPS for o in node.ops):
        parts = [node.left] + list(node.comparators)
        cmps = tuple(Compare(_CMPOPS[type(o)], conv(a), conv(b))
                     for o, a, b in zip(node.ops, parts, parts[1:]))
        return cmps[0] if len(cmps) == 1 else BoolOp("and", cmps)
    if isinstance(node, ast.BoolOp):
        return BoolOp("and" if isinstance(node.op, ast.And) else "or", tuple(conv(v) for v in node.values))
    raise ExprError(f"unsupported syntax in expression {text!r}: {ast.dump(node)[:60]}")


def names(e: Expr) -> set[str]:
    return {x.name for x in _walk(e) if isinstance(x, Name)}


def substitute(e: Expr, env: dict) -> Expr:
    """Replace names bound in ``env`` (to numbers or expressions) and fold constants."""
    if isinstance(e, Name):
        v = env.get(e.name)
        if v is None:
            return e
        return Num(v) if isinstance(v, (int, float)) else v
    if isinstance(e, Num):
        return e
    if isinstance(e, BinOp):
        left, right = substitute(e.left, env), substitute(e.right, env)
        if isinstance(left, Num) and isinstance(right, Num):
            return Num(_fold(e.op, left.value, right.value))
        return BinOp(e.op, left, right)
    if isinstance(e, Neg):
        inner = substitute(e.operand, env)
        return Num(-inner.value) if isinstance(inner, Num) else Neg(inner)
    if isinstance(e, Func):
        args = tuple(substitute(a, env) for a in e.args)
        if all(isinstance(a, Num) for a in args):
            return Num(_func(e.name, [a.value for a in args]))
        return Func(e.name, args)
    if isinstance(e, Compare):
        return Compare(e.op, substitute(e.left, env), substitute(e.right, env))
    if isinstance(e, BoolOp):
        return BoolOp(e.op, tuple(substitute(v, env) for v in e.values))
    return e


def _fold(op: str, a, b):
    try:
        v = _fold_raw(op, a, b)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ExprError(f"{a} {op} {b}: {exc}") from None
    return _in_range(v)


def _in_range(v):
    """Bindings compute with 64-bit integers: a constant past that range would wrap in the engine."""
    if isinstance(v, float) and (v != v or v in (_INF, -_INF)):
        raise ExprError(f"{v} is not a finite number")
    if abs(v) > INT64_MAX:
        raise ExprError(f"{v if abs(v) < 10**30 else 'a number of ' + str(len(str(int(abs(v))))) + ' digits'} is out of "
                        "the 64-bit range")
    return v


def _fold_raw(op: str, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "//"):
        if b == 0:
            raise ExprError("division by zero")
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        return a / b
    if op == "%":
        if b == 0:
            raise ExprError("modulo by zero")
        return a % b
    if op == "**":
        if not isinstance(b, int) or b < 0 or b > 64:
            raise ExprError(f"exponent {b} out of range")
        if isinstance(a, int) and abs(a) > 1 and b * (abs(a).bit_length() - 1) > 64:
            raise ExprError(f"{a} ** {b} is out of the 64-bit range")
        return a ** b
    raise ExprError(op)


def _func(name: str, args):
    if name == "min":
        return min(args)
    if name == "max":
        return max(args)
    if name in ("ceil_div", "round_up"):
        a, b = args
        if b == 0:
            raise ExprError(f"{name}({a}, 0): division by zero")
        q = -(-a // b)
        return _in_range(q if name == "ceil_div" else q * b)
    raise ExprError(name)


def to_text(e: Expr) -> str:
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Name):
        return e.name
    if isinstance(e, BinOp):
        return f"({to_text(e.left)} {e.op} {to_text(e.right)})"
    if isinstance(e, Neg):
        return f"-{to_text(e.operand)}"
    if isinstance(e, Func):
        return f"{e.name}({', '.join(to_text(a) for a in e.args)})"
    if isinstance(e, Compare):
        return f"{to_text(e.left)} {e.op} {to_text(e.right)}"
    if isinstance(e, BoolOp):
        return f" {e.op} ".join(to_text(v) for v in e.values)
    if isinstance(e, Elem):
        k = e.offset
        return f"{e.tensor}[{INDEX}{f' + {k}' if k > 0 else f' - {-k}' if k < 0 else ''}]"
    return "?"


# ---------------------------------------------------------------- instance description


@dataclass(frozen=True)
class UserDim:
    name: str
    lo: int
    hi: int
    values: tuple | None = None  # the only values it takes (block_size in {16, 32, 64}); lo/hi are their min/max


@dataclass(frozen=True)
class TensorArg:
    shape: tuple  # Expr per dimension
    dtype: str
    strides: tuple | None = None  # Expr per dimension, None: contiguous
    values: tuple | None = None  # (lo, hi) Exprs bounding every element (index tensors)
    optional: bool = False  # an optional tensor that may also be absent: both are verified
    # Zero-config: the op never reads this tensor's shape, so only its caller knows how large it is;
    # accesses are checked for negative offsets only (an assumption the result names).
    unchecked: bool = False
    device: str = "cuda"  # cuda | cpu | any (zero-config: the op's checks decide)
    nondecreasing: bool = False  # a 1-D index tensor whose elements never decrease (cumulative lengths)
    distinct: bool = False  # no two elements hold the same value >= 0 (a slot mapping; -1 padding may repeat)
    # Contents no one observed (a recording on the meta device): a finding that rests on them is
    # needs-values until ``values`` states their range.
    unknown_values: bool = False


# A bare kernel's op: its launcher is one launch of the kernel that kernelvet appends to the
# kernel's file (api.Workspace.kernel_op), named by this prefix and the kernel (with template
# arguments); the launch configuration is that launcher's arguments.
KERNEL_OP = "kernel:"
KERNEL_LAUNCHER = "__kernelvet_launch"  # the host function a bare kernel's op runs
LAUNCH_ARGS = ("__kv_grid_x", "__kv_grid_y", "__kv_grid_z", "__kv_block_x", "__kv_block_y", "__kv_block_z",
               "__kv_shared_bytes")

# A launcher a getter returns (``to_fp16_cuda_t get_to_fp16(type) { ... return launch_q4<half>; }``,
# llama.cpp's convert.cu): its op calls the returned function through a pointer of the getter's
# result type, as the getter's callers do, from a host function kernelvet appends to the file
# (api.Workspace.through_op). Named by this prefix, the getter and the returned expression.
THROUGH_OP = "through:"
THROUGH_LAUNCHER = "__kernelvet_through"


def through_spec(getter: str, expression: str) -> str:
    return f"{THROUGH_OP}{getter}={expression}"


def through_parts(spec: str) -> tuple[str, str]:
    """'through:get_to_fp16=launch_q4 < half >' -> ('get_to_fp16', 'launch_q4 < half >'): the
    expression as its tokens, spaced."""
    getter, _, expression = spec[len(THROUGH_OP):].partition("=")
    return getter, expression


def op_display(launcher: str) -> str:
    """How reports name an op planned under ``launcher``: a returned launcher by itself and its
    getter."""
    if launcher.startswith(THROUGH_OP):
        getter, expression = through_parts(launcher)
        return f"{shown_expression(expression)} (returned by {getter})"
    return launcher


def shown_expression(tokens: str) -> str:
    """An expression kept as its tokens, spaced, as written: 'f < half , 4 >' -> 'f<half, 4>'."""
    return re.sub(r"\s*([<>,()&*:])\s*", r"\1", tokens).replace(",", ", ")


def split_template(spec: str) -> tuple[str, list[str]]:
    """'ns::k<float, Vec<2>, 4>' -> ('ns::k', ['float', 'Vec<2>', '4'])."""
    if "<" not in spec:
        return spec.strip(), []
    name, rest = spec.split("<", 1)
    rest = rest.rstrip()
    if rest.endswith(">"):
        rest = rest[:-1]
    out, depth, cur = [], 0, ""
    for ch in rest:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return name.strip(), out


def kernel_name(spec: str) -> str:
    """A bare kernel's own name, without namespace or template arguments ('ns::k<float>' -> 'k')."""
    return split_template(spec)[0].rsplit("::", 1)[-1]


LAZY_DTYPE = ""  # a TensorArg dtype decided by the op itself (dispatch, data_ptr<T>()): zero-config


@dataclass(frozen=True)
class BufferArg:
    """A raw device pointer. With ``size`` (bytes), the allocation a binding states (a bare kernel's
    ``{elements: n, dtype: float32}``); without, one the op does not see (zero-config): unknown size,
    checked for negative offsets only."""

    size: Expr | None = None
    elem_size: int = 0
    values: tuple | None = None  # (lo, hi) Exprs bounding every integer element


@dataclass(frozen=True)
class ScalarArg:
    value: Expr | None  # None: an unconstrained value of the parameter's type
    is_float: bool = False


@dataclass(frozen=True)
class AbsentArg:
    """An optional argument passed as nullopt / None."""


@dataclass(frozen=True)
class StringArg:
    """A string argument's value as the caller passes it (kv_cache_dtype "fp8")."""

    text: str


@dataclass(frozen=True)
class StructArg:
    """A struct the op takes through a pointer (llama.cpp's ``ggml_tensor * dst``) or by value,
    described member by member: ``members`` are (field name, Arg) pairs, or (index, Arg) pairs of
    an array member's entries (``ne: [hidden, tokens, 1, 1]``, ``src: [{fields: ...}]``). A member
    left out is any value, as in an unbound struct."""

    members: tuple
    array: bool = False


Arg = TensorArg | ScalarArg | AbsentArg | BufferArg | StringArg | StructArg


@dataclass(frozen=True)
class Instance:
    """(op, binding, model, dtype) with model fields substituted: the unit of verification."""

    op: str  # launcher function name (qualified or plain)
    file: str  # path relative to the workspace
    args: tuple  # (param name, Arg) pairs
    dims: tuple  # UserDim
    derived: tuple  # (name, Expr) pairs: named expressions over dims (num_tokens = batch * seq_len)
    constraints: tuple  # Expr (boolean)
    dtype: str
    model_fields: tuple = ()  # (name, value) pairs used by the binding, for witnesses
    zero_config: bool = False
    # Zero-config's instance for the values a dispatch has no case for: the op may refuse them all,
    # which is a safe answer, not a binding that describes no call.
    may_reject: str = ""
    # Zero-config: the integer arguments whose 0 is outside the op's contract (its host code never
    # compares them with 0), for contract findings (engine/contract.py).
    contract_scalars: tuple = ()
    # Conditions over index tensors' elements (Elem) that hold for every i at which they exist.
    relations: tuple = ()

    def arg(self, name: str) -> Arg | None:
        for n, a in self.args:
            if n == name:
                return a
        return None


DTYPE_SIZES = {
    "float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4, "float64": 8, "double": 8,
    "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int": 4, "int64": 8, "long": 8, "bool": 1,
    "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
    "uint16": 2, "uint32": 4, "uint64": 8, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1,
}
DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32", "long": "int64",
                 "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp8": "float8_e4m3fn",
                 "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}


def canonical_dtype(name: str) -> str:
    n = str(name).lower().replace("torch.", "")
    return DTYPE_ALIASES.get(n, n)


# ---------------------------------------------------------------- load-time soundness of a binding

INT64_MAX = 2**63 - 1
_INF = float("inf")


def _interval(e: Expr, ranges: dict) -> tuple:
    """Bounds of ``e`` over the ranges of its names (unknown names: unbounded)."""
    if isinstance(e, Num):
        return e.value, e.value
    if isinstance(e, Name):
        return ranges.get(e.name, (-_INF, _INF))
    if isinstance(e, Neg):
        lo, hi = _interval(e.operand, ranges)
        return -hi, -lo
    if isinstance(e, BinOp):
        a, b = _interval(e.left, ranges), _interval(e.right, ranges)
        if e.op == "+":
            return a[0] + b[0], a[1] + b[1]
        if e.op == "-":
            return a[0] - b[1], a[1] - b[0]
        if e.op == "*":
            ps = [_mul(x, y) for x in a for y in b]
            return min(ps), max(ps)
        if e.op in ("/", "//") and b[0] > 0:
            qs = [x / y if y not in (_INF, -_INF) else 0 for x in a for y in b]
            if a[0] >= 0:
                # A non-negative dividend over a positive divisor: the bounds are the quotients of
                # the extremes (32 // gptq_bits with gptq_bits in [4, 8] is in [4, 8], never 0).
                lo, hi = min(qs), max(qs)
                return (math.floor(lo), math.floor(hi)) if e.op == "//" and hi != _INF else (lo, hi)
            return min(min(qs), 0), max(qs)
        if e.op == "%" and b[0] > 0:
            return (0 if a[0] >= 0 else -b[1]), b[1]
        return -_INF, _INF
    if isinstance(e, Func) and e.name in ("min", "max") and e.args:
        ivs = [_interval(x, ranges) for x in e.args]
        pick = min if e.name == "min" else max
        return pick(i[0] for i in ivs), pick(i[1] for i in ivs)
    if isinstance(e, Func) and e.name in ("ceil_div", "round_up") and len(e.args) == 2:
        a, b = _interval(e.args[0], ranges), _interval(e.args[1], ranges)
        if b[0] > 0 and a[0] >= 0:
            return 0, (a[1] if e.name == "ceil_div" else a[1] + b[1])
    return -_INF, _INF


def _mul(x, y):
    if x == 0 or y == 0:
        return 0
    return x * y


def _divisors(e: Expr):
    for x in _walk(e):
        if isinstance(x, BinOp) and x.op in ("/", "//", "%"):
            yield x, x.right
        elif isinstance(x, Func) and x.name in ("ceil_div", "round_up") and len(x.args) == 2:
            yield x, x.args[1]


def instance_problems(inst: "Instance") -> list[str]:
    """What makes a binding describe no call, or one the engine would get wrong, found before any
    verification: a divisor that may be 0, a size that may be negative, bounds out of the 64-bit
    range, a derived dim that is undefined or defined through itself, [min, max] values out of order.
    An instance with such a problem is never verified."""
    out: list[str] = []
    ranges: dict = {}
    for d in inst.dims:
        if d.lo < 0:
            out.append(f"user dim '{d.name}' has a negative minimum ({d.lo}): sizes are never negative")
        if d.hi > INT64_MAX:
            out.append(f"user dim '{d.name}' has a maximum above 2^63 - 1 ({d.hi})")
        ranges[d.name] = (d.lo, d.hi)
    defs = dict(inst.derived)
    state: dict[str, int] = {}

    def visit(name: str, trail: tuple) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            out.append(f"derived dim '{name}' is defined through itself ({' -> '.join(trail + (name,))})")
            ranges[name] = (-_INF, _INF)
            return
        state[name] = 1
        e = defs[name]
        for n in sorted(names(e)):
            if n in defs:
                visit(n, trail + (name,))
            elif n not in ranges:
                out.append(f"derived dim '{name}' uses '{n}', which is not a user dim or a derived dim")
        ranges[name] = _interval(e, ranges)
        state[name] = 2

    for name in defs:
        visit(name, ())

    def check(e, what: str, size: bool = False) -> None:
        for node, div in _divisors(e):
            lo, hi = _interval(div, ranges)
            if lo <= 0 <= hi:
                out.append(f"{what}: the divisor `{to_text(div)}` can be 0 (it ranges over [{_show(lo)}, {_show(hi)}])")
        if size:
            lo, _ = _interval(e, ranges)
            if lo < 0:
                out.append(f"{what}: `{to_text(e)}` can be negative (down to {_show(lo)})")

    for name, e in inst.derived:
        check(e, f"derived dim '{name}'")
    for i, c in enumerate(inst.constraints):
        check(c, f"constraint {i + 1}")
    for pname, a in inst.args:
        if isinstance(a, TensorArg):
            for i, s in enumerate(a.shape):
                check(s, f"argument '{pname}', shape[{i}]", size=True)
            for i, s in enumerate(a.strides or ()):
                check(s, f"argument '{pname}', strides[{i}]", size=True)
            if a.values is not None:
                for v in a.values:
                    check(v, f"argument '{pname}', values")
                lo, hi = (_interval(v, ranges) for v in a.values)
                if lo[0] > hi[1]:
                    out.append(f"argument '{pname}': values [{to_text(a.values[0])}, {to_text(a.values[1])}] "
                               "admit no value (min above max)")
        elif isinstance(a, BufferArg) and a.size is not None:
            check(a.size, f"argument '{pname}', size in bytes", size=True)
            for v in a.values or ():
                check(v, f"argument '{pname}', values")
        elif isinstance(a, ScalarArg) and a.value is not None:
            check(a.value, f"argument '{pname}'")
    return list(dict.fromkeys(out))


def _show(v) -> str:
    return "-inf" if v == -_INF else "inf" if v == _INF else str(v)


# ---------------------------------------------------------------- the call a witness describes

def _concrete(e: Expr | None, env: dict):
    """The value of ``e`` once the witness's sizes are in, or None when a name stays unknown."""
    if e is None:
        return None
    try:
        v = substitute(e, env)
    except ExprError:
        return None
    return v.value if isinstance(v, Num) else None


def sample_sizes(inst: Instance, near: int = 5, tries: int = 4096) -> dict | None:
    """Sizes meeting the binding's constraints, each user dim as near ``near`` as its range allows
    (a control run of a verified op: a few blocks and tokens, small enough for a sanitizer to run
    in seconds), with the derived sizes; None when none of the first ``tries`` combinations meets
    the constraints."""
    choices = []
    for d in inst.dims:
        if d.values:
            pool = sorted(d.values, key=lambda v: (abs(v - near), v))[:8]
        else:
            # The values nearest ``near``, then powers of two (launchers often want a multiple of
            # a block: 16 x 16 tokens is 256).
            near_ones = sorted(range(d.lo, min(d.hi, d.lo + 2 * near) + 1), key=lambda v: (abs(v - near), v))[:8]
            pool = near_ones + [1 << k for k in range(11) if d.lo <= 1 << k <= d.hi and 1 << k not in near_ones]
        choices.append(pool)
    for n, combo in enumerate(itertools.product(*choices)):
        if n >= tries:
            break
        env = {d.name: v for d, v in zip(inst.dims, combo)}
        try:
            for name, e in inst.derived:
                env[name] = _concrete(e, env)
            if all(_holds(c, env) for c in inst.constraints):
                return env
        except ExprError:
            continue
    return None


_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
            "!=": operator.ne}


def _holds(e: Expr, env: dict) -> bool:
    """Whether a constraint holds at ``env`` (ExprError when a name stays unknown)."""
    if isinstance(e, BoolOp):
        parts = (_holds(v, env) for v in e.values)
        return all(parts) if e.op == "and" else any(parts)
    if isinstance(e, Compare):
        a, b = substitute(e.left, env), substitute(e.right, env)
        if not (isinstance(a, Num) and isinstance(b, Num)):
            raise ExprError(f"{to_text(e)}: a name without a value")
        return _COMPARE[e.op](a.value, b.value)
    v = substitute(e, env)
    if not isinstance(v, Num):
        raise ExprError(f"{to_text(e)}: a name without a value")
    return bool(v.value)


def _number(value):
    """A witness's or a binding's value as a call passes it: a flag as 0 or 1, anything that is not a
    number (unnamed, symbolic) as None."""
    value = int(value) if isinstance(value, bool) else value
    return value if isinstance(value, (int, float)) else None


def _buffer(a: BufferArg, env: dict) -> dict:
    """A raw pointer's memory at the witness's sizes: bytes (None where they stay open), element size,
    the binding's range of its values."""
    entry = {"bytes": _concrete(a.size, env), "elem_size": a.elem_size}
    if a.values is not None:
        entry["values"] = [_concrete(v, env) for v in a.values]
    return entry


def _bound_members(path: str, a: StructArg, env: dict, witness: dict) -> list[dict]:
    """A struct binding's members at the witness's sizes, as a harness sets them (paths as the
    witness names them: ``dst.src.0.ne.1``): ``object`` (a struct member, or the object a pointer
    member points to: made before its members), ``buffer`` (bytes, elem_size, values?), ``null``,
    ``scalar`` (value: the binding's, else the witness's, else None)."""
    out = []
    for key, m in a.members:
        at = f"{path}.{key}"
        if isinstance(m, StructArg):
            if not m.array:
                out.append({"path": at, "kind": "object"})
            out += _bound_members(at, m, env, witness)
        elif isinstance(m, BufferArg):
            out.append({"path": at, "kind": "buffer", **_buffer(m, env)})
        elif isinstance(m, AbsentArg):
            out.append({"path": at, "kind": "null"})
        elif isinstance(m, ScalarArg):
            value = _concrete(m.value, env) if m.value is not None else witness.get(at)
            out.append({"path": at, "kind": "scalar", "value": _number(value), "float": m.is_float})
    return out


def concrete_call(inst: Instance, witness: dict, loads: dict, launcher: str, line: int,
                  params: tuple = (), elements: dict | None = None, layouts: dict | None = None) -> dict:
    """The op's call at the witness's sizes: every argument's shape, strides, dtype and value, as a
    reproducer allocates it. Sizes come from the witness's user and derived dims; an argument
    whose size stays unknown is listed in ``unknown``. ``loads``: memory name -> the values the
    witness loads from it (a reproducer fills the tensor so they occur); ``elements``: memory name
    -> [[element index, value], ...], where each was loaded (the reproducer sets those). ``params``: the launcher's
    parameters in order, (name, "int" | "float" | "struct" | "stream" | "other"): one the binding leaves out
    is passed as the engine took it (an integer or flag: any value, the witness's when it names
    one; an optional: absent), so the call has every argument, in the launcher's order. A struct
    taken by value is listed in ``structs`` and passed as its ``members`` (``layouts``: name ->
    interp.struct_members): each number the witness's (any value where it names none), each
    pointer memory of a size nobody states, as the engine took it."""
    env = {k: v for k, v in witness.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    args, unknown, structs = [], [], []
    bound = dict(inst.args)
    kinds = dict(params)
    ordered = [(name, bound.get(name)) for name, _ in params] if params else list(inst.args)
    ordered += [(name, a) for name, a in inst.args if name not in kinds and params]
    for name, a in ordered:
        if kinds.get(name) == "stream":
            # A CUDA stream is a handle, whatever the binding made of it: the default stream.
            args.append({"name": name, "kind": "stream"})
            continue
        if a is None:
            kind = kinds[name]
            if kind in ("int", "float"):
                args.append({"name": name, "kind": "scalar", "value": _number(witness.get(name)),
                             "float": kind == "float"})
            elif kind == "string":
                # The literal the witness chose (context.string_text), else a string equal to none.
                chosen = witness.get(f"the string `{name}`")
                text = chosen[1:-1] if isinstance(chosen, str) and chosen.startswith('"') else "kernelvet-other"
                args.append({"name": name, "kind": "string", "text": text})
            elif kind == "struct" and layouts and name in layouts:
                structs.append(name)
                members = []
                for m in layouts[name]:
                    m = dict(m)
                    if m["kind"] == "scalar":
                        m["value"] = _number(witness.get(m["path"]))
                    members.append(m)
                args.append({"name": name, "kind": "struct", "members": members})
            else:
                args.append({"name": name, "kind": "absent"})
                if kind == "struct":
                    structs.append(name)
            continue
        if isinstance(a, TensorArg):
            present = witness.get(f"{name}.has_value()")
            if a.optional and present is False:
                args.append({"name": name, "kind": "absent"})
                continue
            shape = [_concrete(s, env) for s in a.shape]
            strides = None if a.strides is None else [_concrete(s, env) for s in a.strides]
            # Zero-config leaves dtype and device to the op: the witness says which ones fail.
            dtype = a.dtype if a.dtype not in (LAZY_DTYPE, "any") else witness.get(f"dtype({name})", inst.dtype)
            device = a.device if a.device != "any" else "cpu" if witness.get(f"{name}.is_cpu()") else "cuda"
            entry = {"name": name, "kind": "tensor", "shape": shape, "strides": strides,
                     "dtype": canonical_dtype(dtype), "device": device}
            if a.values is not None:
                entry["values"] = [_concrete(v, env) for v in a.values]
            if a.nondecreasing:
                entry["nondecreasing"] = True
            if a.distinct:
                entry["distinct"] = True
            if None in shape or (strides is not None and None in strides):
                unknown.append(name)
            args.append(entry)
        elif isinstance(a, BufferArg):
            entry = {"name": name, "kind": "buffer", **_buffer(a, env)}
            if entry["bytes"] is None:
                unknown.append(name)
            args.append(entry)
        elif isinstance(a, ScalarArg):
            value = _number(_concrete(a.value, env) if a.value is not None else witness.get(name))
            # A scalar the witness does not name is one the failing path does not depend on:
            # any value of it fails (the reproducer passes 0, or 1.0).
            args.append({"name": name, "kind": "scalar", "value": value, "float": a.is_float})
        elif isinstance(a, StringArg):
            args.append({"name": name, "kind": "string", "text": a.text})
        elif isinstance(a, StructArg):
            # A struct the binding describes member by member (llama.cpp's `ggml_tensor * dst`): its
            # members as the binding gives them at the witness's sizes, then the pointer members it
            # leaves out (memory of a size nobody states, as the engine took them).
            members = _bound_members(name, a, env, witness)
            for m in (layouts or {}).get(name, ()):
                if m["kind"] in ("pointer", "stream") and not any(
                        m["path"] == b["path"] or m["path"].startswith(b["path"] + ".") for b in members):
                    members.append(dict(m))
            unknown += [m["path"] for m in members if m["kind"] == "buffer" and m["bytes"] is None]
            args.append({"name": name, "kind": "bound-struct", "pointer": kinds.get(name) == "struct-pointer",
                         "members": members})
            structs.append(name)
        else:
            args.append({"name": name, "kind": "absent"})
    names = {x["name"] for x in args} | {m["path"] for x in args for m in x.get("members", ())}
    loads = {k: v for k, v in loads.items() if k in names}
    elements = {k: v for k, v in (elements or {}).items() if k in names}
    return {"op": inst.op, "file": inst.file, "launcher": launcher, "line": line, "dtype": inst.dtype,
            "args": args, "loads": loads, "elements": elements, "unknown": unknown,
            **({"structs": structs} if structs else {})}
