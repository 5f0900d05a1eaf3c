"""GPUVerify's kernel headers as a kernelvet binding.

A GPUVerify test or benchmark is a file of bare kernels whose first comment lines give the expected
result and the launch: ``//pass`` then ``//--blockDim=[64,8] --gridDim=16``. That launch is what a
bare-kernel binding states (docs/manifest.md, "Bare kernels"), so each file becomes one op per
kernel: its grid and block, its scalars unbound (any value of their type, as GPUVerify assumes)
and its pointers as memory of unknown size (GPUVerify checks races, not bounds). Flags with no
binding counterpart (``-D``, ``--warp-sync``, ``--only-intra-group``) are listed in the output, not
dropped silently."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_FLAG = re.compile(r"--(blockDim|gridDim)=(\[[^\]]*\]|\S+)")
_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+([A-Za-z_]\w*)\s*\(([^)]*)\)", re.S)


class HeaderError(ValueError):
    pass


@dataclass
class Header:
    expect: str  # pass | xfail | ...
    grid: list[int]
    block: list[int]
    ignored: list[str] = field(default_factory=list)


def _dims(text: str, what: str, where: str) -> list[int]:
    parts = [p.strip() for p in text.strip("[]").split(",") if p.strip()]
    try:
        out = [int(p, 0) for p in parts]
    except ValueError:
        raise HeaderError(f"{where}: --{what}={text} is not one to three integers") from None
    if not 1 <= len(out) <= 3 or any(v < 1 for v in out):
        raise HeaderError(f"{where}: --{what}={text} is not one to three positive integers")
    return out


def read_header(path: Path, shown: str) -> Header:
    lines = path.read_text(errors="replace").splitlines()
    comments = []
    for line in lines:
        if not line.startswith("//"):
            break
        comments.append(line[2:].strip())
    if not comments:
        raise HeaderError(f"{shown}:1: no GPUVerify header (a first line such as //pass)")
    expect = comments[0].split(":", 1)[0].strip() or "pass"
    flags = " ".join(comments[1:])
    found = dict((m.group(1), m.group(2)) for m in _FLAG.finditer(flags))
    for what in ("blockDim", "gridDim"):
        if what not in found:
            raise HeaderError(f"{shown}:2: the header gives no --{what}")
    ignored = [t for t in _FLAG.sub("", flags).split() if t.startswith("-")]
    return Header(expect, _dims(found["gridDim"], "gridDim", f"{shown}:2"),
                  _dims(found["blockDim"], "blockDim", f"{shown}:2"), ignored)


def _param_names(params: str) -> list[tuple[str, bool]]:
    """(name, is pointer) of each parameter of a kernel's declaration."""
    out = []
    for i, p in enumerate(x.strip() for x in params.split(",")):
        if not p or p == "void":
            continue
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", p)
        name = m.group(1) if m else f"__kv_arg{i}"
        out.append((name, "*" in p or "[" in p))
    return out


def ops_of(path: Path, shown: str) -> tuple[list[dict], Header]:
    """The manifest ops of one GPUVerify file: one per kernel."""
    header = read_header(path, shown)
    text = path.read_text(errors="replace")
    ops = []
    for m in _KERNEL.finditer(text):
        args = {name: "any" for name, _ in _param_names(m.group(2))}
        ops.append({"kernel": m.group(1), "file": shown, "name": f"{Path(shown).stem}:{m.group(1)}",
                    "launch": {"grid": header.grid, "block": header.block}, "args": args})
    if not ops:
        raise HeaderError(f"{shown}:1: no __global__ function (a non-template kernel returning void) in the file")
    return ops, header


def manifest_for(files: list[Path], root: Path) -> tuple[dict, list[str]]:
    """A version 1 manifest for GPUVerify files (paths relative to ``root``), and what the
    conversion could not carry over (one line per file)."""
    ops, notes = [], []
    for f in files:
        shown = str(f.resolve().relative_to(root.resolve()))
        file_ops, header = ops_of(f, shown)
        ops += file_ops
        if header.ignored:
            notes.append(f"{shown}: flags with no binding counterpart: {' '.join(header.ignored)}")
    return {"version": 1, "models": [], "dtypes": ["float32"], "ops": ops}, notes
