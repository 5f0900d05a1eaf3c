"""TVM-FFI's tensors: the DLPack codes the dtype model gives are the ones the shim's enum names
(FlashInfer dispatches on them), and every torch dtype the engine knows has a DLPack type."""
from __future__ import annotations

import re
from pathlib import Path

from analyzers.engine.models.torch import SCALAR_TYPES
from analyzers.engine.models.tvm_ffi import DL_CODES, DL_TYPES

SHIM = Path(__file__).resolve().parent.parent / "analyzers" / "frontend" / "shims" / "dlpack" / "dlpack.h"


def test_the_model_codes_are_the_shims():
    enum = {name: int(value) for name, value in re.findall(r"\bkDL(\w+) = (\d+)U", SHIM.read_text())}
    spelled = {"int": "Int", "uint": "UInt", "float": "Float", "bfloat": "Bfloat", "bool": "Bool"}
    for kind, code in DL_CODES.items():
        assert enum[spelled.get(kind, kind.replace("float", "Float", 1))] == code, kind


def test_every_torch_dtype_has_a_dlpack_type():
    assert set(SCALAR_TYPES) <= set(DL_TYPES)
    assert DL_TYPES["float16"] == ("float", 16, 1) and DL_TYPES["bfloat16"] == ("bfloat", 16, 1)
    assert DL_TYPES["float4_e2m1fn_x2"] == ("float4_e2m1fn", 4, 2)  # two fp4 values per byte
