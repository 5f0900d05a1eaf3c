"""The recorder: run a PyTorch program at several input sizes, record its custom-op calls, and write
manifest bindings in which every number is either fixed by the model (named after its config) or a
fitted function of the varied user dims.

    rec = Recorder(namespaces=["mylib"])
    rec.run(run_model, sizes={"batch": [1, 2, 3], "seq_len": [5, 8]}, model="mistral-7b",
            config="models/mistral.json")
    text = rec.manifest("recorded.yaml")

``run_model(**point)`` is called once per point of the grid of sizes, under a TorchDispatchMode.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import fit as F
from . import naming
from .intercept import AbsentRec, Call, OpRecorder, ScalarRec, TensorRec

__all__ = ["Recorder", "RecordError", "sizes", "config_path"]
DEFAULT_RANGES = {"batch": (1, 1000), "seq_len": (1, 2_000_000)}
UNOBSERVED = "unobserved"  # an integer tensor's contents no run could see (meta tensors)
DISTINCT = "distinct"  # after an observed range: no two elements >= 0 were equal (a slot mapping)
# A 1-D index tensor is taken as distinct when no run saw two equal elements and some run saw this
# many: a slot mapping's tokens each get their own slot; a handful of expert ids could look so by chance.
DISTINCT_MIN_ENTRIES = 8
CHOSEN_VALUES = 8  # at most this many distinct values make a number chosen by size, not a wrong fit
ENV_POINT = "KERNELVET_RECORD_POINT"
ENV_CONFIG = "KERNELVET_RECORD_CONFIG"


class RecordError(Exception):
    pass


def sizes(**defaults) -> dict:
    """The sizes of this run: those ``kernelvet record`` chose, else ``defaults``. A program run
    under ``kernelvet record`` reads its batch and sequence length here."""
    import json
    point = os.environ.get(ENV_POINT)
    return {**defaults, **json.loads(point)} if point else dict(defaults)


def config_path(default: str | None = None) -> str | None:
    """The model config ``kernelvet record --config`` chose for this run, else ``default``."""
    return os.environ.get(ENV_CONFIG) or default


@dataclass
class Recording:
    model: str
    config: str | None
    fields: dict
    dtype: str | None
    explicit_dtype: str | None = None
    runs: list = field(default_factory=list)  # (point, [Call])


@dataclass
class Binding:
    """One op's arguments for one or more models: per argument, candidate expressions."""

    op: str
    args: list  # (name, kind, data)
    models: list
    notes: list = field(default_factory=list)


class Recorder:
    def __init__(self, namespaces=None, execute: bool = True):
        self.namespaces = namespaces
        self.execute = execute
        self.recordings: list[Recording] = []
        self.warnings: list[str] = []
        self.chosen: dict[str, set] = {}  # user dims the program chose by size -> values seen

    def _warn(self, text: str) -> None:
        if text not in self.warnings:  # one op called in every layer says it once
            self.warnings.append(text)

    # ------------------------------------------------------------ recording

    def run(self, fn, sizes: dict, model: str, config: str | Path | None = None, fields: dict | None = None,
            dtype: str | None = None) -> Recording:
        """Call ``fn(**point)`` for every point of the grid ``sizes`` (name -> values; two or more
        values for each dim that varies), recording the custom ops it calls."""
        rec = self.start(model, config, fields, dtype)
        names = list(sizes)
        for values in itertools.product(*(sizes[n] for n in names)):
            point = dict(zip(names, values))
            mode = OpRecorder(self.namespaces, self.execute)
            with mode:
                fn(**point)
            self.add_run(rec, point, mode.calls)
        return rec

    def add_run(self, rec: Recording, point: dict, calls: list[Call]) -> None:
        rec.runs.append((point, calls))
        if rec.dtype is None or rec.explicit_dtype is None:
            # The activations' dtype: the most common floating dtype the program's ops saw.
            counts: dict[str, int] = {}
            for c in calls:
                for _, a in c.args:
                    if isinstance(a, TensorRec) and a.dtype.startswith(("float", "bfloat")):
                        counts[a.dtype] = counts.get(a.dtype, 0) + 1
            if counts:
                rec.dtype = max(sorted(counts), key=counts.get)

    def start(self, model: str, config=None, fields=None, dtype=None) -> Recording:
        from bot.manifest.configs import model_fields, read_config_json
        cfg_fields, cfg_dtype = ({}, None)
        if config is not None:
            cfg_fields, cfg_dtype = model_fields(read_config_json(Path(config)))
        cfg_fields.update(fields or {})
        rec = Recording(model, str(config) if config is not None else None, cfg_fields, dtype or cfg_dtype, dtype)
        self.recordings.append(rec)
        return rec

    # ------------------------------------------------------------ classification

    def bindings(self, values: dict | None = None) -> list[Binding]:
        """Bindings per op, merged across models where the same names fit every model."""
        values = values or {}
        per_model: list[Binding] = []
        for rec in self.recordings:
            per_model += self._model_bindings(rec, values)
        merged: list[Binding] = []
        for b in per_model:
            for m in merged:
                if m.op == b.op:
                    args = _unify(m.args, b.args)
                    if args is not None:
                        m.args = args
                        m.models += b.models
                        m.notes = list(dict.fromkeys(m.notes + b.notes))
                        break
            else:
                merged.append(b)
        return merged

    def _model_bindings(self, rec: Recording, values: dict) -> list[Binding]:
        if len(rec.runs) < 2:
            raise RecordError(f"model '{rec.model}': one run only; give two or more sizes for the dims users control")
        dims = [d for d in rec.runs[0][0] if len({p[d] for p, _ in rec.runs}) > 1]
        by_op: dict[str, list[list[Call]]] = {}
        for _, calls in rec.runs:
            per: dict[str, list[Call]] = {}
            for c in calls:
                per.setdefault(c.op, []).append(c)
            done = len(next(iter(by_op.values()))) if by_op else 0  # runs before this one
            for op in set(per) | set(by_op):
                by_op.setdefault(op, [[] for _ in range(done)])  # first called here: not in earlier runs
            for op in by_op:
                by_op[op].append(per.get(op, []))
        out: list[Binding] = []
        for op, runs in sorted(by_op.items()):
            counts = {len(r) for r in runs}
            if len(counts) != 1:
                self._warn(f"{op} (model '{rec.model}'): called {sorted(counts)} times in different runs; "
                           f"its calls cannot be matched across sizes and it is left out")
                continue
            found: list[Binding] = []
            for k in range(counts.pop()):
                calls = [r[k] for r in runs]
                b = self._fit_call(rec, op, calls, dims, values)
                if b is None:
                    continue
                if not any(x.args == b.args for x in found):
                    found.append(b)
            out += _merge_optional(found)
        return out

    def _fit_call(self, rec: Recording, op: str, calls: list[Call], dims: list[str], values: dict) -> Binding | None:
        points = [dict(p) for p, _ in rec.runs]
        plain = op.split("::")[-1]
        args, notes = [], []
        fitted: list = []  # (values per run, candidates) of this call's numbers fitted so far
        # Each judged against the input dims alone (a list: the loop adds dims and point values).
        for dim, seen in list(self._chosen_scalars(calls, points, dims)):
            # A number the program chose by size (a kernel's tile for this many tokens) is a user dim
            # of its own, with the values seen; the other numbers may be functions of it.
            for p, v in zip(points, seen):
                p[dim] = v
            dims = dims + [dim]
            self.chosen.setdefault(dim, set()).update(seen)
            notes.append(f"{dim}: chosen by the program per input size; values seen at the recorded sizes "
                         f"{sorted(set(seen))} (other sizes may choose others)")
        for i, (name, first) in enumerate(calls[0].args):
            seen = [c.args[i][1] for c in calls]
            where = f"{plain}.{name} (model '{rec.model}')"
            if first is None:
                continue
            if any(type(s) is not type(first) for s in seen):
                if all(isinstance(s, (TensorRec, AbsentRec)) for s in seen):
                    self._warn(f"{where}: present in some runs and absent in others; left out")
                continue
            if isinstance(first, AbsentRec):
                args.append((name, "absent", None))
            elif isinstance(first, ScalarRec):
                cands = self._number(rec, fitted, [s.value for s in seen], points, dims, where)
                if cands is None:
                    return None
                # 8 is num_key_value_heads and num_local_experts for Mixtral: an argument named
                # num_experts means the one of its name.
                cands = sorted(cands, key=lambda c: not _same_name(c, name))
                args.append((name, "scalar", cands))
            else:
                if len({len(s.shape) for s in seen}) != 1 or len({s.dtype for s in seen}) != 1:
                    self._warn(f"{where}: rank or dtype changes with the input size; {plain} left out")
                    return None
                shape = []
                for d in range(len(first.shape)):
                    c = self._number(rec, fitted, [s.shape[d] for s in seen], points, dims, f"{where} dimension {d}")
                    if c is None:
                        return None
                    shape.append(c)
                strides = None
                if not all(s.contiguous for s in seen):
                    strides = []
                    for d in range(len(first.shape)):
                        c = self._number(rec, fitted, [s.strides[d] for s in seen], points, dims, f"{where} stride {d}")
                        if c is None:
                            return None
                        strides.append(c)
                vals = None
                declared = values.get(f"{plain}.{name}", values.get(name))
                if declared is not None:
                    vals = [[str(declared[0])], [str(declared[1])]] + ([DISTINCT] if DISTINCT in declared[2:] else [])
                elif first.lo is not None and all(s.lo is not None for s in seen):
                    lo = self._number(rec, fitted, [s.lo for s in seen], points, dims, f"{where} smallest element")
                    hi = self._number(rec, fitted, [s.hi for s in seen], points, dims, f"{where} largest element")
                    if lo is not None and hi is not None:
                        vals = [lo, hi]
                        notes.append(f"{name}: value range observed ([{lo[0]}, {hi[0]}]); an index tensor's "
                                     f"range is what it indexes: confirm it")
                elif first.dtype in ("int32", "int64"):
                    # A finding resting on these values waits for their range (unknown_values).
                    vals = UNOBSERVED
                    notes.append(f"{name}: integer tensor without observed values (meta tensors): if it indexes "
                                 f"memory, declare its range")
                if isinstance(vals, list) and DISTINCT not in vals and _seen_distinct(seen):
                    vals.append(DISTINCT)
                    notes.append(f"{name}: no two elements at or above 0 were equal in any run: stated distinct "
                                 f"(a scatter through it cannot race); confirm it")
                dtype = None if first.dtype == rec.dtype else first.dtype
                args.append((name, "tensor", (shape, dtype, strides, vals)))
        return Binding(op, args, [rec.model], notes)

    @staticmethod
    def _chosen_scalars(calls: list[Call], points: list, dims: list):
        """(argument name, values per run) of the integer scalars that no function of the dims fits
        and that take few values."""
        for i, (name, first) in enumerate(calls[0].args):
            if not isinstance(first, ScalarRec) or type(first.value) is not int:
                continue
            seen = [c.args[i][1] for c in calls]
            if not all(isinstance(s, ScalarRec) and type(s.value) is int for s in seen):
                continue
            seen = [s.value for s in seen]
            if name not in dims and len(set(seen)) <= CHOSEN_VALUES and F.fit(points, seen, dims) is None:
                yield name, seen

    def _number(self, rec: Recording, fitted: list, seen: list, points: list, dims: list, where: str):
        if all(isinstance(v, bool) for v in seen):
            return [str(int(seen[0]))] if len(set(seen)) == 1 else ["any"]
        if any(isinstance(v, float) for v in seen):
            return naming.float_candidates(seen[0], rec.fields) if len(set(seen)) == 1 else ["any"]
        terms = F.fit(points, [int(v) for v in seen], dims)
        if terms is None:
            blocks = _blocks_of(fitted, seen, points, dims)
            if blocks:
                return blocks
            self._warn(f"{where}: values {sorted(set(seen))} fit no sum of user dims and their "
                       f"products with integer coefficients; the op is left out")
            return None
        cands = naming.expression_candidates(terms, rec.fields)
        fitted.append((list(seen), cands))
        return cands

    # ------------------------------------------------------------ writing

    def manifest(self, path: str | Path | None = None, values: dict | None = None, ranges: dict | None = None,
                 registered: bool = True, header: list[str] = ()) -> str:
        """A version 1 manifest (text) of every recorded op; written to ``path`` when given (config
        paths are made relative to it). ``values``: ranges of index tensors, by argument name or
        ``op.arg`` ([lo, hi] expressions); ``ranges``: {dim: (min, max)} of user dims other than
        batch and seq_len."""
        ranges = {**DEFAULT_RANGES, **(ranges or {})}
        bindings = self.bindings(values)
        base = Path(path).resolve().parent if path else Path.cwd()
        lines = ["# Recorded by kernelvet record: shapes fitted over the runs' sizes, numbers named after",
                 "# each model's config. Review notes marked 'check:' before relying on them."]
        lines += [f"# {h}" for h in header]
        lines += ["version: 1", "models:"]
        all_models = [r.model for r in self.recordings]
        for r in self.recordings:
            entry = [f"name: {r.model}"]
            if r.config:
                entry.insert(0, f"config: {os.path.relpath(Path(r.config).resolve(), base)}")
            else:
                entry.append("fields: {" + ", ".join(f"{k}: {v}" for k, v in sorted(r.fields.items())) + "}")
            if r.dtype:
                entry.append(f"dtype: {r.dtype}")
            lines.append("  - {" + ", ".join(entry) + "}")
        dims = sorted({d for r in self.recordings for d in r.runs[0][0]})
        extra = [d for d in dims if d not in DEFAULT_RANGES]
        missing = [d for d in extra if d not in ranges]
        if missing:
            raise RecordError(f"give the range users can reach for {', '.join(missing)} (ranges={{'{missing[0]}': (1, N)}} "
                              f"or --range {missing[0]}=1:N)")
        if extra or self.chosen:
            lines.append("user_dims:")
            lines += [f"  {d}: {{min: {ranges[d][0]}, max: {ranges[d][1]}}}" for d in extra]
            for d, seen in sorted(self.chosen.items()):
                lines.append(f"  # check: {d} is chosen per input size; these are the values the recorded sizes chose")
                lines.append(f"  {d}: {{values: [{', '.join(str(v) for v in sorted(seen))}]}}")
        lines.append("ops:")
        for b in bindings:
            ns, _, plain = b.op.partition("::")
            lines.append(f"  - op: {plain if registered else b.op}")
            if sorted(b.models) != sorted(all_models):
                lines.append(f"    models: [{', '.join(b.models)}]")
            for n in b.notes:
                lines.append(f"    # check: {n}")
            lines.append("    args:")
            for name, kind, data in b.args:
                lines.append(f"      {name}: {_arg_text(kind, data)}")
        text = "\n".join(lines) + "\n"
        if path:
            Path(path).write_text(text)
        return text


def _same_name(candidate: str, arg: str) -> bool:
    words = set(arg.lower().split("_")) - {"num", "n"}
    return bool(words) and words <= set(candidate.lower().split("_"))


def _blocks_of(fitted: list, seen: list, points: list, dims: list) -> list[str]:
    """``ceil_div(n, d)`` where ``n`` is a number of the same call fitted before and ``d`` a dim or
    another such number: how many blocks of a size a padded length makes (MoE block alignment)."""
    divisors = [([p[d] for p in points], d) for d in dims] + [(values, cands[0]) for values, cands in fitted]
    for values, cands in fitted:
        if len(set(values)) < 2:
            continue
        for sizes, size_name in divisors:
            if all(b > 1 for b in sizes) and all(v == -(-n // b) for v, n, b in zip(seen, values, sizes)):
                return [f"ceil_div({c}, {size_name})" for c in cands]
    return []


def _arg_text(kind, data) -> str:
    if kind == "absent":
        return "absent"
    if kind == "scalar":
        return _q(data[0])
    shape, dtype, strides, vals = data
    shape_text = "[" + ", ".join(_q(c[0]) for c in shape) + "]"
    if dtype is None and strides is None and vals is None and kind == "tensor":
        return shape_text
    parts = [f"shape: {shape_text}"]
    if kind == "optional":
        parts.append("optional: true")
    if dtype:
        parts.append(f"dtype: {dtype}")
    if strides is not None:
        parts.append("strides: [" + ", ".join(_q(c[0]) for c in strides) + "]")
    if vals == UNOBSERVED:
        parts.append("unknown_values: true")
    elif vals is not None:
        parts.append(f"values: [{_q(vals[0][0])}, {_q(vals[1][0])}]")
        if DISTINCT in vals[2:]:
            parts.append("distinct: true")
    return "{" + ", ".join(parts) + "}"


def _seen_distinct(seen: list) -> bool:
    """Whether every run's 1-D integer tensor held no two equal elements >= 0, and some run held
    enough of them for that to mean something (DISTINCT_MIN_ENTRIES)."""
    return (all(s.entries == s.different for s in seen)
            and max(s.entries for s in seen) >= DISTINCT_MIN_ENTRIES)


def _q(text: str) -> str:
    return f'"{text}"' if any(c in text for c in ",:{}[]#") else text


def _unify(a: list, b: list) -> list | None:
    """The bindings of two models as one, if every argument has a candidate name that fits both."""
    if [(n, k) for n, k, _ in a] != [(n, k) for n, k, _ in b]:
        return None
    out = []
    for (n, k, da), (_, _, db) in zip(a, b):
        if k == "absent":
            out.append((n, k, da))
        elif k == "scalar":
            c = _common(da, db)
            if c is None:
                return None
            out.append((n, k, c))
        else:
            (sa, ta, sta, va), (sb, tb, stb, vb) = da, db
            if ta != tb or len(sa) != len(sb) or (sta is None) != (stb is None) or (va is None) != (vb is None):
                return None
            if (va == UNOBSERVED) != (vb == UNOBSERVED):
                return None
            shape = [_common(x, y) for x, y in zip(sa, sb)]
            strides = None if sta is None else [_common(x, y) for x, y in zip(sta, stb)]
            vals = va if va is None or va == UNOBSERVED else [_common(va[0], vb[0]), _common(va[1], vb[1])] + (
                [DISTINCT] if DISTINCT in va[2:] and DISTINCT in vb[2:] else [])
            if any(c is None for c in shape + (strides or []) + (vals if isinstance(vals, list) else [])):
                return None
            out.append((n, k, (shape, ta, strides, vals)))
    return out


def _common(x: list, y: list) -> list | None:
    common = [c for c in x if c in y]
    return common or None


def _merge_optional(found: list[Binding]) -> list[Binding]:
    """Two calls of one op that differ only in a tensor passed in one and None in the other: one
    binding with that argument optional (verified present and absent)."""
    out: list[Binding] = []
    for b in found:
        for o in out:
            diff = [i for i, (x, y) in enumerate(zip(o.args, b.args)) if x != y]
            if len(o.args) == len(b.args) and len(diff) == 1:
                i = diff[0]
                x, y = o.args[i], b.args[i]
                tensor = x if x[1] in ("tensor", "optional") else y if y[1] == "tensor" else None
                other = y if tensor is x else x
                if tensor is not None and other[1] == "absent":
                    o.args[i] = (tensor[0], "optional", tensor[2])
                    break
        else:
            out.append(b)
    return out
