"""KIR nodes: expressions, statements and functions with source spans.

Every node is a frozen dataclass. The span of a node is excluded from equality and repr, so the
structural fingerprint of a function (see ``fingerprint``) does not change on a comment-only edit.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .types import FuncType, Type, VOID


@dataclass(frozen=True)
class Span:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<unknown>", 0, 0, 0, 0, "")
# The file of a span in kernelvet's own headers (frontend/shims): library code, not the user's.
SHIM_PREFIX = "<kernelvet-shims>/"
# A new-expression of scalars or plain structs (`new int[n]`): a host allocation of that many bytes,
# lowered to a call of this name (frontend/lower.py) that the allocation model answers.
NEW_CALL = "__kernelvet_new"
# A call of a function declared not to return (``[[noreturn]] void fail(...)``): the path ends.
NORETURN_CALL = "__kernelvet_noreturn"


def in_user_code(span: Span, stack: tuple) -> tuple[Span, tuple]:
    """Where a user reads an event: one that happens inside kernelvet's headers (an atomic_ref's
    atomicAdd, a cub collective's barrier) is placed at the user's call that reached it, the calls
    below it dropped; an event in the user's code is left as it is."""
    if not span.file.startswith(SHIM_PREFIX):
        return span, stack
    for i in range(len(stack) - 1, -1, -1):
        if not stack[i].file.startswith(SHIM_PREFIX):
            return stack[i], stack[:i]
    return span, stack


def _span():
    return field(default=NO_SPAN, compare=False, repr=False)


class Node:
    span: Span


# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class VarDecl(Node):
    id: int
    name: str
    ty: Type
    storage: str = "local"  # local | param | shared | extern_shared | static | global | constant
    span: Span = _span()
    const: bool = False  # the object itself is const-qualified
    align: int = 0  # alignment the declaration asks for (alignas), 0: the type's


# ---------------------------------------------------------------- expressions


class Expr(Node):
    ty: Type


@dataclass(frozen=True)
class IntLit(Expr):
    value: int
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class FloatLit(Expr):
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class NullLit(Expr):
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class StrLit(Expr):
    ty: Type
    span: Span = _span()
    text: str = ""  # the literal as written, quotes included


@dataclass(frozen=True)
class Var(Expr):
    decl: VarDecl
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Global(Expr):
    """A namespace-scope variable: CUDA builtins (threadIdx, ...) or __constant__/__device__ data."""

    name: str
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class This(Expr):
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Member(Expr):
    base: Expr
    field: str
    arrow: bool
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Index(Expr):
    base: Expr
    index: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Deref(Expr):
    operand: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class AddrOf(Expr):
    operand: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # '-', '~', '!', '+'
    operand: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class IncDec(Expr):
    op: str  # '++' or '--'
    prefix: bool
    operand: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Assign(Expr):
    op: str  # '=', '+=', '-=', ...
    lhs: Expr
    rhs: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Cond(Expr):
    cond: Expr
    then: Expr
    els: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Cast(Expr):
    kind: str  # implicit | c | static | reinterpret | const | functional
    operand: Expr
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Call(Expr):
    """A call. ``func`` is the program key of a function with a body (None for a body-less or
    modelled function); ``name`` is its qualified name; ``callee`` is set when the call goes through
    a value (a lambda, a function pointer); ``this`` is the object for member calls."""

    name: str
    func: str | None
    args: tuple[Expr, ...]
    ty: Type
    this: Expr | None = None
    callee: Expr | None = None
    template_args: tuple[str, ...] = ()
    param_types: tuple[Type, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Construct(Expr):
    """Object construction: constructor call, functional cast to a class, value-initialisation."""

    name: str
    func: str | None
    args: tuple[Expr, ...]
    ty: Type
    param_types: tuple[Type, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class InitList(Expr):
    elems: tuple[Expr, ...]
    ty: Type
    span: Span = _span()


@dataclass(frozen=True)
class Lambda(Expr):
    key: str  # program key of the call operator
    by_value: tuple[VarDecl, ...]  # captures copied at creation; others are by reference
    ty: Type
    span: Span = _span()


# The fields of cudaLaunchConfig_t an extended launch reads, in Launch's order (grid, block,
# dynamic shared memory, stream): the front end's cudaLaunchKernelEx and the engine's
# cudaLaunchKernelExC model read the same ones.
LAUNCH_CONFIG_FIELDS = ("gridDim", "blockDim", "dynamicSmemBytes", "stream")


@dataclass(frozen=True)
class Launch(Expr):
    kernel: str | None
    name: str
    grid: Expr
    block: Expr
    smem: Expr | None
    stream: Expr | None
    args: tuple[Expr, ...]
    ty: Type = VOID
    span: Span = _span()
    target: Expr | None = None  # a launch through a kernel pointer: the pointer (kernel is None)


@dataclass(frozen=True)
class Asm(Expr):
    """Inline assembly: outputs become unconstrained values (an assumption the report names)."""

    outputs: tuple[Expr, ...]
    inputs: tuple[Expr, ...]
    ty: Type = VOID
    span: Span = _span()


@dataclass(frozen=True)
class Unsupported(Expr):
    what: str
    ty: Type = VOID
    span: Span = _span()


# ---------------------------------------------------------------- statements


class Stmt(Node):
    pass


@dataclass(frozen=True)
class Block(Stmt):
    stmts: tuple[Stmt, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Decl(Stmt):
    var: VarDecl
    init: Expr | None
    span: Span = _span()


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    els: Stmt | None
    init: Stmt | None = None
    span: Span = _span()


@dataclass(frozen=True)
class For(Stmt):
    init: Stmt | None
    cond: Expr | None
    inc: Expr | None
    body: Stmt
    span: Span = _span()


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: Stmt
    span: Span = _span()


@dataclass(frozen=True)
class DoWhile(Stmt):
    body: Stmt
    cond: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Switch(Stmt):
    """``labels`` maps case values (None for default) to positions in the flattened ``stmts``."""

    cond: Expr
    stmts: tuple[Stmt, ...]
    labels: tuple[tuple[int | None, int], ...]
    span: Span = _span()


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None
    span: Span = _span()


@dataclass(frozen=True)
class Break(Stmt):
    span: Span = _span()


@dataclass(frozen=True)
class Continue(Stmt):
    span: Span = _span()


@dataclass(frozen=True)
class UnsupportedStmt(Stmt):
    what: str
    span: Span = _span()


# ---------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function(Node):
    key: str
    name: str  # qualified name, e.g. vllm::rms_norm_kernel
    display: str  # instantiation, e.g. vllm::rms_norm_kernel<c10::BFloat16, 8>
    params: tuple[VarDecl, ...]
    ret: Type
    body: Block | None
    kind: str  # kernel | device | host | hostdevice | lambda
    this_type: Type | None = None
    span: Span = _span()
    max_threads: int | None = None  # a kernel's __launch_bounds__


def uncast(e: Expr) -> Expr:
    """``e`` seen through every cast around it."""
    while isinstance(e, Cast):
        e = e.operand
    return e


def int_literal(e: Expr, strip) -> int | None:
    """The value of an integer literal, negated or not, seen through ``strip`` (which wrappers a
    caller looks through: implicit casts only, or every cast)."""
    e = strip(e)
    if isinstance(e, IntLit):
        return e.value
    if isinstance(e, Unary) and e.op == "-" and isinstance(strip(e.operand), IntLit):
        return -strip(e.operand).value
    return None


def children(node) -> list:
    """The nodes directly under ``node`` (not the declarations it refers to)."""
    out = []
    for name in getattr(node, "__dataclass_fields__", {}):
        if name in ("span", "ty", "decl", "var"):
            continue
        v = getattr(node, name)
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(x for x in v if isinstance(x, Node))
    return out


class LinkedDict(dict):
    """A dict that also answers from linked dicts (another translation unit's globals), and from
    theirs in turn. Two translation units can link each other (ggml-cuda.cu runs mmq.cu's launcher,
    which calls ggml_cuda_info() back in ggml-cuda.cu), so the links are walked once each, not
    recursively."""

    def __init__(self):
        super().__init__()
        self.linked: list[dict] = []

    def _reachable(self):
        """The dicts linked to this one, transitively, each once, nearest first."""
        seen, todo = {id(self)}, list(self.linked)
        while todo:
            other = todo.pop(0)
            if id(other) in seen:
                continue
            seen.add(id(other))
            yield other
            todo.extend(getattr(other, "linked", ()))

    def _own(self, key) -> bool:
        return dict.__contains__(self, key)

    def _own_item(self, key):
        return dict.__getitem__(self, key)

    def _holder(self, key):
        """The nearest linked dict that holds ``key`` itself, or None."""
        for other in self._reachable():
            if other._own(key) if isinstance(other, LinkedDict) else dict.__contains__(other, key):
                return other
        return None

    def __missing__(self, key):
        other = self._holder(key)
        if other is None:
            raise KeyError(key)
        return other._own_item(key) if isinstance(other, LinkedDict) else dict.__getitem__(other, key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key) -> bool:
        return self._own(key) or self._holder(key) is not None


class LazyFunctions(LinkedDict):
    """Functions by program key, lowered when first asked for: an op whose dispatch reaches
    hundreds of kernel instantiations costs only the ones a verification runs. ``pending`` holds
    what is known to exist (key -> whether it is a kernel) but is not lowered yet; ``linked``, other
    translation units' functions (crosstu)."""

    def __init__(self, loader=None):
        super().__init__()
        self.pending: dict[str, bool] = {}
        self.loader = loader

    def __missing__(self, key):
        if key in self.pending and self.loader is not None:
            self.loader(key)
            return dict.__getitem__(self, key)
        fn = super().__missing__(key)
        dict.__setitem__(self, key, fn)
        return fn

    def _own(self, key) -> bool:
        return dict.__contains__(self, key) or key in self.pending

    def _own_item(self, key):
        """This unit's function, lowered now if it is pending, without asking the linked units."""
        if not dict.__contains__(self, key) and key in self.pending and self.loader is not None:
            self.loader(key)
        return dict.__getitem__(self, key)

    def load(self, keep=lambda key, is_kernel: True) -> None:
        """Lower every pending function ``keep`` selects (and what those reach)."""
        while True:
            todo = [k for k, kernel in self.pending.items() if keep(k, kernel) and not dict.__contains__(self, k)]
            if not todo:
                return
            for k in todo:
                self[k]


@dataclass
class Program:
    """Everything lowered for one op: the functions it reaches, keyed by program key."""

    functions: dict[str, Function] = field(default_factory=LazyFunctions)
    globals: dict[str, VarDecl] = field(default_factory=lambda: LinkedDict())
    global_inits: dict[str, Expr] = field(default_factory=lambda: LinkedDict())
    path: str = ""  # the source file of the translation unit
    linked: list = field(default_factory=list)  # other translation units' programs it runs

    def link(self, other: "Program") -> None:
        """Run functions of another translation unit in this program: its functions, globals and
        their initializers are found through this one."""
        if other is self or any(o is other for o in self.linked):
            return
        self.linked.append(other)
        self.functions.linked.append(other.functions)
        self.globals.linked.append(other.globals)
        self.global_inits.linked.append(other.global_inits)

    def sources(self) -> set[str]:
        """The source files of the translation units linked into this one, transitively."""
        out: set[str] = set()
        stack = list(self.linked)
        while stack:
            p = stack.pop()
            if p.path not in out and p is not self:
                out.add(p.path)
                stack.extend(p.linked)
        out.discard(self.path)
        return out

    def callees(self, fn: Function) -> list[str]:
        out: list[str] = []
        _collect_calls(fn.body, out)
        return out

    def fingerprint(self, root: str) -> str:
        """Structural hash of ``root`` and everything it calls (spans excluded). Lowers all of it."""
        seen: set[str] = set()
        order: list[str] = []
        stack = [root]
        while stack:
            key = stack.pop()
            if key in seen or key not in self.functions:
                continue
            seen.add(key)
            order.append(key)
            stack.extend(self.callees(self.functions[key]))
        h = hashlib.sha256()
        for key in sorted(order):
            h.update(repr(self.functions[key]).encode())
        return h.hexdigest()


def _collect_calls(node, out: list[str]) -> None:
    if node is None:
        return
    if isinstance(node, (Call, Construct)) and node.func:
        out.append(node.func)
    elif isinstance(node, Launch) and node.kernel:
        out.append(node.kernel)
    elif isinstance(node, Global) and isinstance(node.ty, FuncType):
        out.append(node.name)  # a function used as a value (a kernel pointer): its body counts too
    elif isinstance(node, Lambda):
        out.append(node.key)
    for child in children(node):
        _collect_calls(child, out)
