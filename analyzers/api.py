"""The analyzers' entry points for the bot: a workspace parses each file once, lowers ops on demand,
and verifies instances."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from . import binding as B
from .binding import KERNEL_LAUNCHER, KERNEL_OP, LAUNCH_ARGS, THROUGH_LAUNCHER, THROUGH_OP, split_template
from . import zeroconfig
from .checks import default_checks
from .engine.context import Options
from .engine.interp import analyze
from .findings import Inconclusive, InstanceResult, verdict_of
from .frontend import discover
from .frontend.crosstu import CrossTU
from .frontend.includes import IncludeGraph, IncludeResolver
from .frontend.lower import Lowerer
from .frontend.parse import ParseConfig, ParsedFile, ParseError, parse_file, shown_path
from .frontend.typemap import qualified_name
from .kir import nodes as N


class OpNotFound(Exception):
    pass


def _respan(node, last: int, at: N.Span, seen=None) -> None:
    """Every span of ``node`` past line ``last`` of its file becomes ``at`` (the nodes are frozen:
    this runs once, right after lowering, before anything reads them)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    span = getattr(node, "span", None)
    if isinstance(span, N.Span) and span.line > last:
        object.__setattr__(node, "span", at)
    for name in getattr(node, "__dataclass_fields__", {}):
        if name in ("ty",):
            continue
        v = getattr(node, name)
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, N.Node) or (hasattr(x, "__dataclass_fields__") and hasattr(x, "span")):
                _respan(x, last, at, seen)


@dataclass
class Unit:
    parsed: ParsedFile
    lowerer: Lowerer
    definitions: list | None = None  # the file's function definitions, found once


@dataclass
class LoweredOp:
    name: str
    file: str
    program: N.Program
    fn: N.Function
    unit_errors: list = field(default_factory=list)
    _fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        """The structural hash of the op and everything it reaches: lowers all of it (once)."""
        if self._fingerprint is None:
            self._fingerprint = self.program.fingerprint(self.fn.key)
        return self._fingerprint


class Workspace:
    def __init__(self, root: Path, include_dirs=(), defines: dict | None = None, arch: str = "sm_80",
                 std: str = "c++17"):
        self.root = Path(root).resolve()
        self.cfg = ParseConfig(self.root, [Path(d) for d in include_dirs], dict(defines or {}), arch, std)
        self.resolver = IncludeResolver(self.root, self.cfg.search_dirs())
        self._units: dict[Path, Unit] = {}
        self._variants: dict[tuple, Unit | None] = {}  # a file parsed with lines appended (crosstu)
        self._ops: dict[tuple, LoweredOp] = {}
        self.crosstu = CrossTU(self)

    def path(self, file: str | Path) -> Path:
        p = Path(file)
        return (p if p.is_absolute() else self.root / p).resolve()

    def outside(self, file: str | Path) -> bool:
        """Whether ``file`` resolves (symlinks followed) outside the repository: never read."""
        return not self.path(file).is_relative_to(self.root)

    def unit(self, file: str | Path) -> Unit:
        path = self.path(file)
        if path not in self._units:
            if self.outside(file):
                raise ParseError(f"{shown_path(file, self.root)}: resolves outside the repository (a symlink, or a path "
                                 "that leaves it): not read")
            if not path.is_file():
                raise OpNotFound(f"{file}: no such file in the workspace")
            parsed = parse_file(path, self.cfg, self.resolver)
            self._units[path] = Unit(parsed, self._lowerer(parsed))
        return self._units[path]

    def unit_with(self, file: str | Path, text: str) -> Unit | None:
        """``file`` parsed with ``text`` as its content (its own lines and appended ones), or None
        when libclang cannot parse it."""
        key = (self.path(file), text)
        if key not in self._variants:
            try:
                parsed = parse_file(self.path(file), self.cfg, self.resolver, text)
            except ParseError:
                parsed = None
            self._variants[key] = Unit(parsed, self._lowerer(parsed)) if parsed is not None else None
        return self._variants[key]

    def _lowerer(self, parsed: ParsedFile) -> Lowerer:
        # Each translation unit numbers its variables apart: a function lowered in another unit
        # runs in the same op (crosstu), and the engine keys frames and statics by variable id.
        base = (len(self._units) + len(self._variants) + 1) * 10_000_000
        return Lowerer(parsed, self.root, var_base=base,
                       external=lambda decl: self.crosstu.resolve(parsed, decl))

    def include_graph(self, file: str | Path) -> IncludeGraph:
        return self.resolver.graph(self.path(file))

    def included_files(self, file: str | Path) -> set[Path]:
        """Every file the translation unit of ``file`` includes. The textual graph when it can
        follow every include; otherwise the parser's own inclusion list (a computed include of a
        header is seen only there), which costs a parse."""
        graph = self.include_graph(file)
        if not graph.opaque:
            return graph.files()
        unit = self.unit(file)
        out = {graph.root_file}
        for inc in unit.parsed.tu.get_includes():
            name = inc.include.name
            if not name.startswith("/__kernelvet_"):
                out.add(Path(name).resolve())
        return out

    def op(self, file: str, launcher: str) -> LoweredOp:
        key = (str(self.path(file)), launcher)
        if key in self._ops:
            return self._ops[key]
        if launcher.startswith(KERNEL_OP):
            self._ops[key] = self.kernel_op(file, launcher[len(KERNEL_OP):])
            return self._ops[key]
        if launcher.startswith(THROUGH_OP):
            self._ops[key] = self.through_op(file, launcher)
            return self._ops[key]
        unit = self.unit(file)
        if unit.definitions is None:
            unit.definitions = list(discover.function_definitions(unit.parsed.tu, unit.parsed.path))
        found = discover.find_function(unit.parsed.tu, unit.parsed.path, launcher, unit.definitions)
        if not found:
            raise OpNotFound(f"{file}: no function named '{launcher}' (the op's launcher) is defined there")
        fkey = unit.lowerer.function(found[0])
        if fkey is None:
            raise OpNotFound(f"{file}: '{launcher}' has no body")
        program = unit.lowerer.program
        fn = program.functions[fkey]
        lowered = LoweredOp(launcher, file, program, fn, unit.parsed.errors)
        self._ops[key] = lowered
        return lowered

    def kernel_op(self, file: str, spec: str) -> LoweredOp:
        """A bare kernel's op: one launch of it, appended to its file as a host function whose
        arguments are the kernel's and the launch configuration's (binding.LAUNCH_ARGS). A
        launch reads as the kernel's own definition line (findings about the launch, witnesses of
        its arguments): the appended lines exist in no file."""
        unit = self.unit(file)
        name, targs = split_template(spec)
        kernels = discover.find_function(unit.parsed.tu, unit.parsed.path, name, [
            c for c in discover.function_definitions(unit.parsed.tu, unit.parsed.path, templates=True)
            if discover.is_kernel(c)])
        if not kernels:
            raise OpNotFound(f"{file}: no __global__ function named '{name}' is defined there")
        kernel = kernels[0]
        is_template = kernel.kind == ci.CursorKind.FUNCTION_TEMPLATE
        if is_template and not targs:
            raise OpNotFound(f"{file}: kernel '{name}' is a template: name its arguments ('{name}<float, 4>')")
        params = []
        for i, p in enumerate(c for c in kernel.get_children() if c.kind == ci.CursorKind.PARM_DECL):
            ty = p.type.get_canonical().spelling
            # A template's parameter types read type-parameter-0-i: the binding's arguments stand in.
            ty = re.sub(r"type-parameter-0-(\d+)", lambda m: targs[int(m.group(1))] if int(m.group(1)) < len(targs)
                        else m.group(0), ty)
            params.append((p.spelling or f"__kv_arg{i}", ty))
        callee = qualified_name(kernel) + (f"<{', '.join(targs)}>" if targs else "")
        g, b, smem = LAUNCH_ARGS[:3], LAUNCH_ARGS[3:6], LAUNCH_ARGS[6]
        decls = [f"{ty} {n}" if "(*)" not in ty else ty.replace("(*)", f"(*{n})") for n, ty in params]
        decls += [f"unsigned int {n}" for n in g + b] + [f"unsigned long {smem}"]
        wrapper = ("\n"
                   f"void {KERNEL_LAUNCHER}({', '.join(decls)}) {{ {callee}<<<dim3({', '.join(g)}), "
                   f"dim3({', '.join(b)}), {smem}>>>({', '.join(n for n, _ in params)}); }}\n")
        variant, fn, last = self._appended(file, wrapper, KERNEL_LAUNCHER, f"the launch of kernel '{spec}'",
                                           f"{file}:{kernel.extent.start.line}: the launch of kernel '{spec}' "
                                           "the manifest binds")
        at = N.Span(fn.span.file, kernel.location.line, kernel.location.column, kernel.location.line,
                    kernel.location.column + len(kernel.spelling), f"the manifest's launch of {spec}")
        _respan(fn, last, at)
        object.__setattr__(fn, "display", spec)  # reports name the op by its kernel
        return LoweredOp(spec, file, variant.lowerer.program, fn, variant.parsed.errors)

    def _appended(self, file: str, lines: str, function: str, what: str, where: str) -> tuple:
        """``file`` parsed with ``lines`` appended, and the host function ``function`` they define,
        lowered: (the variant, the function, the file's own last line). OpNotFound, saying ``what``
        failed (``where``: its place, for an error in the appended lines), when it does not parse,
        compile or lower."""
        text = self.path(file).read_text(errors="replace")
        variant = self.unit_with(file, text + lines)
        if variant is None:
            raise OpNotFound(f"{file}: {what} could not be parsed")
        last = text.count("\n") + 1
        # The appended lines' own errors (a shim's would have another file and any line).
        errors = [e for e in variant.parsed.errors if e.line > last and Path(e.file).resolve() == variant.parsed.path]
        if errors:
            raise OpNotFound(f"{where} does not compile ({errors[0].message})")
        found = discover.find_function(variant.parsed.tu, variant.parsed.path, function)
        fkey = variant.lowerer.function(found[0]) if found else None
        if fkey is None:
            raise OpNotFound(f"{file}: {what} could not be lowered")
        return variant, variant.lowerer.program.functions[fkey], last

    def through_op(self, file: str, spec: str) -> LoweredOp:
        """A launcher a getter returns (binding.THROUGH_OP): a host function appended to the file
        that calls it through a pointer of the getter's result type, as the getter's callers do
        (the pointer's type deduces a template's arguments: ``to_fp16_cuda_t f = launch_q4;``),
        its parameters the pointer type's, named as the launcher names them. Its lines read as
        the getter's return statement."""
        getter_name, expression = B.through_parts(spec)
        unit = self.unit(file)
        if unit.definitions is None:
            unit.definitions = list(discover.function_definitions(unit.parsed.tu, unit.parsed.path))
        getters = discover.find_function(unit.parsed.tu, unit.parsed.path, getter_name, unit.definitions)
        external = lambda decl: self.crosstu.definition(unit.parsed.path, decl)  # noqa: E731
        returned = {text: (ref, stmt) for getter in getters[:1]
                    for text, ref, stmt in discover.returned_launchers(getter, discover.LaunchReach(external))}
        if expression not in returned:
            raise OpNotFound(f"{file}: '{getter_name}' returns no launcher '{expression}'")
        getter, (ref, stmt) = getters[0], returned[expression]
        pointee = getter.result_type.get_canonical().get_pointee()
        types = [t.get_canonical().spelling for t in pointee.argument_types()]
        names = [c.spelling for c in ref.get_children() if c.kind == ci.CursorKind.PARM_DECL]
        if len(names) != len(types) or not all(names) or len(set(names)) != len(names):
            names = [f"arg{i}" for i in range(len(types))]
        # Each type through an alias: a canonical spelling of a pointer to function or to an array
        # is not a declarator a name can follow.
        aliases = "".join(f"using {THROUGH_LAUNCHER}_t{i} = {t};\n" for i, t in enumerate(types))
        params = ", ".join(f"{THROUGH_LAUNCHER}_t{i} {n}" for i, n in enumerate(names))
        body = (f"{aliases}void {THROUGH_LAUNCHER}({params}) {{\n"
                f"  using {THROUGH_LAUNCHER}_fn = {getter.result_type.spelling};\n"
                f"  {THROUGH_LAUNCHER}_fn {THROUGH_LAUNCHER}_f = {expression};\n"
                f"  {THROUGH_LAUNCHER}_f({', '.join(names)});\n}}\n")
        scopes = []
        parent = getter.semantic_parent
        while parent is not None and parent.kind == ci.CursorKind.NAMESPACE:
            scopes.insert(0, parent.spelling)
            parent = parent.semantic_parent
        for scope in reversed(scopes):  # the getter's namespaces: its names resolve as in its body
            body = f"namespace {scope} {{\n{body}}}\n"
        variant, fn, last = self._appended(file, "\n" + body, THROUGH_LAUNCHER,
                                           f"the call of '{expression}' that '{getter_name}' returns",
                                           f"{file}:{stmt.location.line}: a call of '{expression}', which "
                                           f"'{getter_name}' returns,")
        at = N.Span(fn.span.file, stmt.location.line, stmt.location.column, stmt.extent.end.line,
                    stmt.extent.end.column, f"{getter_name} returns {B.shown_expression(expression)}")
        _respan(fn, last, at)
        object.__setattr__(fn, "display", B.op_display(spec))
        return LoweredOp(spec, file, variant.lowerer.program, fn, variant.parsed.errors)

    def entry_points(self, file: str) -> list[str]:
        """The ops of a file when no manifest names them (see discover.entry_points)."""
        unit = self.unit(file)
        external = lambda decl: self.crosstu.definition(unit.parsed.path, decl)  # noqa: E731
        reach = discover.LaunchReach(external)
        out = []
        for c in discover.entry_points(unit.parsed.tu, unit.parsed.path, external):
            returned = discover.returned_launchers(c, reach)
            # A getter of launchers: each function it returns is an op, called as its callers call
            # it; the getter itself is one only where it also launches something.
            out += [B.through_spec(qualified_name(c), text) for text, _, _ in returned]
            if not returned or discover.launches_itself(c, reach):
                out.append(qualified_name(c))
        return out

    def zero_config(self, op: LoweredOp, limits: zeroconfig.Limits | None = None) -> list[tuple[str, B.Instance]]:
        """Instances of an op without a binding: symbolic shapes, dtypes and scalars."""
        return zeroconfig.instances(op.program, op.fn, op.file, limits)

    def verify_zero_config(self, op: LoweredOp, options: Options | None = None, name: str = "",
                           limits: zeroconfig.Limits | None = None) -> InstanceResult:
        """Verify an op without a binding: every zero-config variant (optional tensors present, and
        absent; dispatch cases; flag values; ranks), folded into one result whose verdict is the worst
        of them. A variant the op refuses entirely, where it may (one layout's rank), adds only its
        note; an op that refuses every variant is binding-infeasible."""
        results = [self.verify(op, inst, options, name + (f" ({label})" if label else ""))
                   for label, inst in self.zero_config(op, limits)]
        valid = [r for r in results if not r.refused]
        merged = valid[0] if valid else results[0]
        for r in results:
            if r is merged:
                continue
            merged.assumptions += [a for a in r.assumptions if a not in merged.assumptions]
            merged.seconds += r.seconds
            merged.work += r.work
            merged.queries += r.queries
            if r.refused:
                continue
            merged.findings += [f for f in r.findings if f.key() not in {g.key() for g in merged.findings}]
            merged.inconclusive += r.inconclusive
            merged.kernels += [k for k in r.kernels if k not in merged.kernels]
            merged.verdict = verdict_of(merged.findings, merged.inconclusive)
        if not valid:
            # Every variant was one the op may refuse, and it refused them all: nothing was verified.
            merged.refused = False
            merged.verdict = "inconclusive"
            merged.inconclusive.append(Inconclusive(
                "binding-infeasible", "the op refuses every zero-config input (each path ends at a failing "
                "check): " + "; ".join(r.instance for r in results), op.fn.span))
        return merged

    def launchers(self, file: str) -> list[str]:
        unit = self.unit(file)
        return [c.spelling for c in discover.launchers(unit.parsed.tu, unit.parsed.path)]

    def verify(self, op: LoweredOp, inst: B.Instance, options: Options | None = None, name: str = "",
               models: list[str] | None = None) -> InstanceResult:
        result = analyze(op.program, op.fn, inst, default_checks(), options, name, models)
        result.fingerprint = op._fingerprint or ""  # computed only where asked for (the cache)
        return result
