"""The SIMD video intrinsics' model, on words whose results CUDA's definitions give by hand (the
whole family is compared with a GPU by bench/check_simd_video.py)."""
from __future__ import annotations

import pytest
import z3

from analyzers.engine.models.cuda import _SIMD_NAMES, simd_max, simd_result, simd_unary

CASES = [
    ("__vcmpne4", 0x00FF0012, 0x00FF0000, 0x000000FF),  # only the low byte differs
    ("__vsetne4", 0x01000203, 0x00000000, 0x01000101),
    ("__vcmpges2", 0xFFFF0001, 0x00000001, 0x0000FFFF),  # -1 >= 0 is false; 1 >= 1
    ("__vcmpgeu2", 0xFFFF0001, 0x00000001, 0xFFFFFFFF),  # unsigned: 0xffff >= 0
    ("__vsubss2", 0x80000001, 0x00010002, 0x8000FFFF),  # -32768 - 1 saturates; 1 - 2 = -1
    ("__vsub4", 0x00000001, 0x00000002, 0x000000FF),  # wraps within the byte, no borrow across
    ("__vaddus4", 0xF0F0F010, 0x20202020, 0xFFFFFF30),
    ("__vsubus4", 0x10203040, 0x20202020, 0x00001020),
    ("__vabsdiffs4", 0x7F80FF00, 0x807F01FF, 0xFFFF0201),  # |127 - -128| = 255
    ("__vsadu4", 0x01020304, 0x04030201, 8),
    ("__vsads2", 0x8000FFFF, 0x7FFF0001, 0xFFFF + 2),
    ("__vmaxs4", 0x80FF7F00, 0x00000000, 0x00007F00),
    ("__vminu2", 0x0001FFFF, 0x00020000, 0x00010000),
    ("__vabsss4", 0x80FF7F00, None, 0x7F017F00),  # |-128| saturates to 127
    ("__vabs4", 0x80FF7F00, None, 0x80017F00),  # without saturation -128 stays
    ("__vnegss2", 0x80000001, None, 0x7FFFFFFF),
]


@pytest.mark.parametrize("name,a,b,want", CASES, ids=[c[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_simd_intrinsic_results(name, a, b, want):
    words = [z3.BitVecVal(a, 32)] + ([] if b is None else [z3.BitVecVal(b, 32)])
    assert (b is None) == simd_unary(name)
    assert simd_result(name, words).as_long() == want


def test_every_declared_intrinsic_is_modelled():
    """Every SIMD intrinsic the device shim declares has the exact model, and nothing else does."""
    import re
    from pathlib import Path

    shim = (Path(__file__).resolve().parent.parent / "analyzers" / "frontend" / "shims" / "kernelvet" / "device.h").read_text()
    declared = set(re.findall(r"__KV_SIMD[12]\((__v\w+)\)", shim))
    rounded = {f"__v{op}{n}" for op in ("avgs", "avgu", "haddu") for n in (2, 4)}  # declared, any value
    assert declared - rounded == set(_SIMD_NAMES)


def test_a_sum_of_absolute_differences_is_bounded_by_its_lanes():
    """The model's static range of __vsad*: two halfword lanes add up to 2 * 65535, four byte lanes
    to 4 * 255 (a range too small would let a check prove what is false)."""
    for name, a, b in (("__vsadu2", 0xFFFF0000, 0x0000FFFF), ("__vsadu4", 0xFF00FF00, 0x00FF00FF),
                       ("__vsads2", 0x7FFF8000, 0x80007FFF)):
        got = simd_result(name, [z3.BitVecVal(a, 32), z3.BitVecVal(b, 32)]).as_long()
        assert got == simd_max(name), name  # reached, so the range is not too small
