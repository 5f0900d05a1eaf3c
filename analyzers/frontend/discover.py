"""Finding ops in a translation unit: launcher functions by name, and the kernels they launch.

A launch is a ``kernel<<<...>>>(...)``, a call of ``cudaLaunchKernelEx(&config, kernel, ...)`` (the
extended launch, with the configuration in a cudaLaunchConfig_t), or one of the runtime's launches
through an argument array (``cudaLaunchKernel``, ``cudaLaunchKernelExC``)."""
from __future__ import annotations

from pathlib import Path

import clang.cindex as ci

from . import clangx
from .typemap import qualified_name

CK = ci.CursorKind
LAUNCH_EX = "cudaLaunchKernelEx"
# The runtime's launches of a kernel named through a `void*`, its arguments in an array (their
# engine models read both).
LAUNCH_ARRAY = ("cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernelExC")


def function_definitions(tu: ci.TranslationUnit, main_file: Path, templates: bool = False):
    """Function definitions written in ``main_file`` (namespaces followed; function templates only
    with ``templates``)."""
    main = str(main_file.resolve())
    kinds = (CK.FUNCTION_DECL, CK.CXX_METHOD) + ((CK.FUNCTION_TEMPLATE,) if templates else ())

    def walk(cursor):
        for c in cursor.get_children():
            loc = c.location.file
            if loc is None or clangx.real_path(loc.name) != main:
                if c.kind == CK.NAMESPACE:
                    yield from walk(c)
                continue
            if c.kind == CK.NAMESPACE or c.kind == CK.LINKAGE_SPEC:
                yield from walk(c)
            elif c.kind in kinds and c.is_definition():
                yield c
    yield from walk(tu.cursor)


def find_function(tu: ci.TranslationUnit, main_file: Path, name: str, definitions=None) -> list[ci.Cursor]:
    """Definitions named ``name`` (plain or qualified: ``vllm::rms_norm``) in ``main_file``
    (``definitions``: the file's function definitions, when the caller already has them)."""
    out = []
    for c in definitions if definitions is not None else function_definitions(tu, main_file):
        if c.spelling == name or qualified_name(c) == name or qualified_name(c).endswith("::" + name):
            out.append(c)
    # An op is host code: a kernel of the same name (vllm::f beside the op f) is never the op, and
    # an exact qualified name wins over a namespace's namesake.
    out = [c for c in out if not is_kernel(c)] or out
    return sorted(out, key=lambda c: qualified_name(c) != name)


def launchers(tu: ci.TranslationUnit, main_file: Path) -> list[ci.Cursor]:
    """Host functions of ``main_file`` that contain a kernel launch (``<<<...>>>``,
    ``cudaLaunchKernelEx``, or a launch through an argument array)."""
    out = []
    for c in function_definitions(tu, main_file):
        if any(k.kind == CK.CUDAGLOBAL_ATTR for k in c.get_children()):
            continue
        for node in c.walk_preorder():
            if node.kind == CK.CALL_EXPR:
                kids = list(node.get_children())
                if len(kids) >= 2 and kids[1].kind == CK.CALL_EXPR and kids[1].spelling in (
                        "cudaConfigureCall", "__cudaPushCallConfiguration"):
                    out.append(c)
                    break
                if is_launch_ex(node) or (node.referenced is not None and node.referenced.spelling in LAUNCH_ARRAY):
                    out.append(c)
                    break
    return out


def is_launch_ex(call: ci.Cursor) -> bool:
    """A call of cudaLaunchKernelEx (the templated C++ form: configuration, kernel, arguments)."""
    ref = call.referenced
    return (call.kind == CK.CALL_EXPR and ref is not None and ref.spelling == LAUNCH_EX
            and len(list(call.get_arguments())) >= 2)


def launched_kernel(expr: ci.Cursor) -> ci.Cursor | None:
    """The kernel an expression names: ``kernel<T>``, ``&kernel<T>``, or a local variable initialised
    with one of those and never assigned or had its address taken afterwards. None when the kernel
    is chosen at run time (the variable is reassigned, or comes from elsewhere)."""
    c = _strip(expr)
    if c.kind != CK.DECL_REF_EXPR or c.referenced is None:
        return None
    ref = c.referenced
    if ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE):
        return ref if any(k.kind == CK.CUDAGLOBAL_ATTR for k in ref.get_children()) else None
    if ref.kind == CK.VAR_DECL and not clangx.has_global_storage(ref):
        init = clangx.var_initializer(ref)
        scope = ref.semantic_parent
        if init is None or scope is None or _written_after_init(ref, scope):
            return None
        return launched_kernel(init)
    return None


def _strip(c: ci.Cursor) -> ci.Cursor:
    """Through implicit conversions, parentheses and ``&``."""
    while True:
        kids = list(c.get_children())
        if c.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR,
                      CK.CXX_REINTERPRET_CAST_EXPR) and kids:
            c = kids[-1]
        elif c.kind == CK.UNARY_OPERATOR and clangx.unop(c) == "&" and len(kids) == 1:
            c = kids[0]
        else:
            return c


def _written_after_init(var: ci.Cursor, scope: ci.Cursor) -> bool:
    for node in scope.walk_preorder():
        if node.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and clangx.binop(node) in _ASSIGN_OPS:
            lhs = next(iter(node.get_children()), None)
            if lhs is not None and _names(lhs, var):
                return True
        elif node.kind == CK.UNARY_OPERATOR and clangx.unop(node) == "&":
            operand = next(iter(node.get_children()), None)
            if operand is not None and _names(operand, var):
                return True
    return False


_ASSIGN_OPS = ("=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=")


def _names(expr: ci.Cursor, var: ci.Cursor) -> bool:
    c = expr
    while c.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
        kids = list(c.get_children())
        if len(kids) != 1:
            break
        c = kids[0]
    return c.kind == CK.DECL_REF_EXPR and c.referenced is not None and c.referenced == var


LAUNCH_FUNCTIONS = {"cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchCooperativeKernel", "cudaLaunchKernelExC"}
_CONFIG_CALLS = ("cudaConfigureCall", "__cudaPushCallConfiguration")


def is_kernel(c: ci.Cursor) -> bool:
    return any(k.kind == CK.CUDAGLOBAL_ATTR for k in c.get_children())


def _is_device_only(c: ci.Cursor) -> bool:
    kinds = {k.kind for k in c.get_children()}
    return CK.CUDADEVICE_ATTR in kinds and CK.CUDAHOST_ATTR not in kinds


# ATen's elementwise launchers over a TensorIterator: a launch kernelvet sees but does not model
# (engine/models/torch.py), so the function is an op, inconclusive there, not a function with none.
ATEN_LAUNCHERS = {"at::native::gpu_kernel", "at::native::gpu_kernel_with_scalars", "at::native::gpu_kernel_nocast"}


def is_launch(node: ci.Cursor) -> bool:
    if node.kind != CK.CALL_EXPR:
        return False
    if node.spelling in LAUNCH_FUNCTIONS:
        return True
    if node.spelling.startswith("gpu_kernel") and node.referenced is not None \
            and qualified_name(node.referenced) in ATEN_LAUNCHERS:
        return True
    kids = list(node.get_children())
    if not node.spelling and kids and kids[0].kind in (CK.DECL_REF_EXPR, CK.OVERLOADED_DECL_REF):
        # In a template's own body a dependent call names no function: its first token does.
        first = next(iter(kids[0].get_tokens()), None)
        if first is not None and first.spelling in LAUNCH_FUNCTIONS:
            return True
    return len(kids) >= 2 and kids[1].kind == CK.CALL_EXPR and kids[1].spelling in _CONFIG_CALLS


class LaunchReach:
    """Which host functions reach a kernel launch, directly or through the functions (templates,
    lambdas) they call. Memoised per definition."""

    def __init__(self, external=None):
        self._memo: dict[str, bool] = {}
        self.external = external  # declaration -> its definition in another file (crosstu), or None

    def reaches(self, c: ci.Cursor) -> bool:
        defn = c.get_definition() or c
        key = defn.get_usr() or f"{defn.location.file}:{defn.location.line}:{defn.spelling}"
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = False  # recursion: not (yet) a launcher
        found = False
        for node in defn.walk_preorder():
            if is_launch(node):
                found = True
                break
            # A function named without a call (``return launch_q4<T>;``) is reached through the
            # function pointer that carries it.
            if node.kind in (CK.CALL_EXPR, CK.DECL_REF_EXPR):
                ref = node.referenced
                if ref is not None and ref.kind in (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE) \
                        and not is_kernel(ref):
                    if self._has_body(ref):
                        if self.reaches(ref):
                            found = True
                            break
                    elif self.external is not None and ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE):
                        other = self.external(ref)
                        if other is not None and self.reaches(other):
                            found = True
                            break
        self._memo[key] = found
        return found

    @staticmethod
    def _has_body(c: ci.Cursor) -> bool:
        defn = c.get_definition()
        return defn is not None and any(ch.kind == CK.COMPOUND_STMT for ch in defn.get_children())


_FUNCTION_TYPES = (ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO)


def returned_launchers(c: ci.Cursor, reach: LaunchReach) -> list[tuple[str, ci.Cursor, ci.Cursor]]:
    """A getter's launchers: of a free function whose result is a pointer to a function, the
    functions its return statements name without calling them (``return launch_q4<half>;``) that
    reach a kernel launch, as (the expression's text, the function, the return statement), each
    text once, in source order. Its callers call them; the getter itself launches nothing."""
    if c.kind != CK.FUNCTION_DECL:
        return []
    result = c.result_type.get_canonical()
    if result.kind != ci.TypeKind.POINTER or result.get_pointee().kind not in _FUNCTION_TYPES:
        return []
    out, seen = [], set()

    def named(e):
        """Functions an expression names as its value: ``f``, ``&f<T>``, either side of ``?:``
        (not what a call inside it returns)."""
        if e.kind == CK.CALL_EXPR:
            return
        if e.kind == CK.DECL_REF_EXPR:
            yield e
            return
        for kid in e.get_children():
            yield from named(kid)

    for node in c.walk_preorder():
        if node.kind != CK.RETURN_STMT:
            continue
        for value in node.get_children():
            for e in named(value):
                ref = e.referenced
                if ref is None or ref.kind not in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE) or is_kernel(ref) \
                        or not reach.reaches(ref):
                    continue
                text = " ".join(t.spelling for t in e.get_tokens())
                if text and "=" not in text and text not in seen:
                    seen.add(text)
                    out.append((text, ref, node))
    return out


def launches_itself(c: ci.Cursor, reach: LaunchReach) -> bool:
    """Whether ``c`` launches a kernel, or calls a function that does (not only names one)."""
    for node in c.walk_preorder():
        if is_launch(node):
            return True
        if node.kind == CK.CALL_EXPR and node.referenced is not None and not is_kernel(node.referenced) \
                and node.referenced.kind in (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE) \
                and node.referenced != c and reach.reaches(node.referenced):
            return True
    return False


def entry_points(tu: ci.TranslationUnit, main_file: Path, external=None) -> list[ci.Cursor]:
    """The ops of ``main_file`` when no manifest names them: host functions defined there that reach
    a kernel launch and that no other such function of the file calls (the torch op, a plain CUDA
    ``main``). Templates are reached through their callers, never entry points themselves.
    ``external``: finds a definition in another file for a function this one only declares."""
    reach = LaunchReach(external)
    # The shims' registration bodies (TORCH_LIBRARY's) name the ops without calling them: not ops.
    candidates = [c for c in function_definitions(tu, main_file)
                  if not is_kernel(c) and not _is_device_only(c) and not c.spelling.startswith("__kernelvet_")
                  and reach.reaches(c)]
    called: set[str] = set()
    for c in candidates:
        for node in c.walk_preorder():
            if node.kind in (CK.CALL_EXPR, CK.DECL_REF_EXPR) and node.referenced is not None:
                ref = node.referenced.get_definition() or node.referenced
                if ref != c:
                    called.add(ref.get_usr())
    return [c for c in candidates if c.get_usr() not in called]
