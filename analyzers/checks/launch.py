"""Launch configurations within CUDA's limits: block at most 1024 threads (x, y <= 1024, z <= 64),
grid.x <= 2^31 - 1, grid.y and grid.z <= 65535, no dimension 0, and dynamic shared memory within
what the kernel may use."""
from __future__ import annotations

import z3

from ..engine import ints
from .base import Check, depends_on_summary, make_finding, span_key, value_of

from ..limits import DEFAULT_SMEM


class LaunchCheck(Check):
    id = "launch-config"

    def on_launch(self, ctx, st, ev) -> None:
        key = ("launch-config", span_key(ev.span), ev.kernel)
        if key in ctx.reported:
            return
        (gx, gy, gz), (bx, by, bz) = ev.grid, ev.block
        limit = getattr(ctx, "smem_limit", DEFAULT_SMEM)
        rules = [
            (z3.UGT(bx.bv, 1024), "blockDim.x above 1024"),
            (z3.UGT(by.bv, 1024), "blockDim.y above 1024"),
            (z3.UGT(bz.bv, 64), "blockDim.z above 64"),
            (z3.UGT(z3.ZeroExt(32, bx.bv) * z3.ZeroExt(32, by.bv) * z3.ZeroExt(32, bz.bv), 1024),
             "more than 1024 threads per block"),
            *([(z3.UGT(z3.ZeroExt(32, bx.bv) * z3.ZeroExt(32, by.bv) * z3.ZeroExt(32, bz.bv), ev.max_threads),
                f"more threads per block than the kernel's __launch_bounds__({ev.max_threads}) allows (the launch "
                "fails with 'too many resources requested')")] if ev.max_threads and ev.max_threads < 1024 else []),
            (z3.UGT(gx.bv, (1 << 31) - 1), "gridDim.x above 2^31-1"),
            (z3.UGT(gy.bv, 65535), "gridDim.y above 65535"),
            (z3.UGT(gz.bv, 65535), "gridDim.z above 65535"),
            (z3.Or(gx.bv == 0, gy.bv == 0, gz.bv == 0, bx.bv == 0, by.bv == 0, bz.bv == 0), "a dimension of 0"),
            (z3.UGT(z3.ZeroExt(64 - ev.smem.ty.bits, ev.smem.bv) if ev.smem.ty.bits < 64 else ev.smem.bv, limit),
             f"dynamic shared memory above {limit} bytes"),
        ]
        cond = z3.Or(*[r for r, _ in rules])
        cond_i = None
        dims = list(ev.grid) + list(ev.block)
        # A dimension computed from a wrapped value is reported as that overflow (overflow.py).
        wrap_sites = sorted({s for v in dims + [ev.smem] for s in v.sites}, key=lambda s: s.id)
        if wrap_sites:
            cond = z3.And(cond, *[z3.Not(s.wraps) for s in wrap_sites])
        # In the integers a value's twin is its exact value: where it may have been narrowed (a
        # 64-bit block count converted to grid.x), it is the machine's value where no conversion
        # wraps, which the bit-vector condition requires too. Arithmetic that may wrap stays with
        # the bit-vectors.
        if all(v.math is None or all(s.kind == "conversion" and s.iwraps is not None for s in v.sites)
               for v in dims + [ev.smem]):
            g = [ints.I(v) for v in ev.grid]
            b = [ints.I(v) for v in ev.block]
            threads = min(ev.max_threads or 1024, 1024)
            cond_i = z3.Or(b[0] > 1024, b[1] > 1024, b[2] > 64, g[0] > (1 << 31) - 1, g[1] > 65535, g[2] > 65535,
                           b[0] * b[1] * b[2] > threads,
                           *[x < 1 for x in g + b], ints.I(ev.smem) > limit)
            if wrap_sites:
                cond_i = z3.And(cond_i, *[z3.Not(s.iwraps) for s in wrap_sites])
            if ctx.excluded(st.pc, cond_i):
                return
        model = ctx.find_model(st.pc, cond, ev.span, cond_i)
        if model is None:
            return
        ctx.mark(key)
        summary = depends_on_summary(ctx, cond, model, rank=1)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possibly invalid launch of {ev.kernel} depends on {summary}, which the "
                      "loop summary cannot bound", ev.span)
            return
        model = ctx.minimal(st.pc, cond, cond_i, model)
        broken = [why for r, why in rules if z3.is_true(model.eval(r, model_completion=True))]
        grid = tuple(value_of(model, v.bv, False) for v in ev.grid)
        block = tuple(value_of(model, v.bv, False) for v in ev.block)
        msg = (f"invalid launch of {ev.kernel}: {', '.join(broken)} (grid {grid}, block {block}, "
               f"{value_of(model, ev.smem.bv, False)} bytes of dynamic shared memory); the launch fails")
        ctx.report(make_finding(ctx, st, "launch-config", msg, ev.span, model, cond, expression=ev.span,
                                trace=list(ev.stack)))
