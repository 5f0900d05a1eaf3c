"""Annotated kernel fixtures: each file under tests/fixtures/ carries its binding in a header and
the findings it must produce on its own lines.

    /* kernelvet-test
    op: rms_norm                 # the launcher (or 'ops:' with several entries)
    models: [{config: models/MistralForCausalLM.json}]    # default: one inline model 'm'
    fields: {hidden_size: 4096}  # fields of the default model
    version: 1                   # the manifest version the binding is written in (default 0)
    dtypes: [float32]            # default [float32]
    args: {out: {shape: [num_tokens, hidden_size]}, ...}
    verdict: bug                 # what every instance must end with: bug | contract | verified | inconclusive
    zero_config: true            # no binding: every op of the file runs in zero-config mode
    options: {time_budget_s: 1}  # manifest options
    inconclusive: [timeout]      # inconclusive reasons that have no line
    kernels: none                # the op launches no kernel (else a verified op must reach one)
    messages: ["(4294967296 becomes 0)"]   # text some finding's message must hold (a witness's values)
    */
    ...
    out[idx] = x;  // expect: oob
    y[i] = x;      // expect-contract: oob   (zero-config: a contract finding, engine/contract.py)
    use(y);        // expect-inconclusive: unsupported

A missing expected finding fails the test, and so does an extra one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

FIXTURES = Path(__file__).parent / "fixtures"
_HEADER = re.compile(r"/\*\s*kernelvet-test\s*\n(.*?)\*/", re.S)
_EXPECT = re.compile(r"//\s*expect:\s*([\w\-, ]+)")
_EXPECT_INC = re.compile(r"//\s*expect-inconclusive:\s*([\w\-]+)")
# A contract finding (zero-config: real only for calls that break a guarantee the op does not check):
# expected as "contract:CHECK", so a bug where a contract finding is expected fails, and the reverse.
_EXPECT_CONTRACT = re.compile(r"//\s*expect-contract:\s*([\w\-, ]+)")


@dataclass
class Fixture:
    path: Path
    header: dict
    expected: set = field(default_factory=set)  # (line, check)
    expected_inconclusive: set = field(default_factory=set)  # (line, reason)

    @property
    def name(self) -> str:
        return str(self.path.relative_to(FIXTURES))


def load_fixture(path: Path) -> Fixture:
    text = path.read_text()
    m = _HEADER.search(text)
    if m is None:
        raise ValueError(f"{path}: no /* kernelvet-test ... */ header")
    fx = Fixture(path, yaml.safe_load(m.group(1)))
    for reason in fx.header.get("inconclusive", []):  # reasons with no place in the source (timeout)
        fx.expected_inconclusive.add((0, reason))
    for i, line in enumerate(text.splitlines(), start=1):
        for e in _EXPECT.findall(line):
            for check in e.split(","):
                if check.strip():
                    fx.expected.add((i, check.strip()))
        for e in _EXPECT_CONTRACT.findall(line):
            fx.expected.update((i, f"contract:{c.strip()}") for c in e.split(",") if c.strip())
        for r in _EXPECT_INC.findall(line):
            fx.expected_inconclusive.add((i, r))
    return fx


def all_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.cu") if p.is_file())


def _kernel_manifest(fx: Fixture) -> dict:
    """A fixture of bare kernels ('kernel:' and 'launch:' instead of 'op:'): a version 1 manifest,
    the kernel library's models (none by default) and dtypes as its header gives them."""
    h = fx.header
    ops = h.get("ops") or [{k: h[k] for k in ("kernel", "launch", "args", "name") if k in h}]
    out = {"version": 1, "models": h.get("models", []), "dtypes": h.get("dtypes", ["float32"]), "ops": []}
    for key in ("user_dims", "derived", "constraints", "options", "returns"):
        if key in h:
            out[key] = h[key]
    for o in ops:
        out["ops"].append({k: v for k, v in o.items() if k != "verdict"} | {"file": fx.name})
    return out


def manifest_for(fx: Fixture) -> dict:
    h = fx.header
    if "kernel" in h or any("kernel" in o for o in h.get("ops") or []):
        return _kernel_manifest(fx)
    rel = fx.name
    models = h.get("models") or [{"name": "m", "fields": h.get("fields", {})}]
    models = [dict(m, config=str(FIXTURES / m["config"])) if "config" in m else m for m in models]
    ops = h.get("ops") or [{"op": h["op"], "args": h.get("args", {}), "verdict": h.get("verdict"),
                            "relations": h.get("relations", [])}]
    # Version 0 unless the header asks for 1 (what only version 1 binds: a struct's `fields`).
    out = {"version": h.get("version", 0), "models": models, "dtypes": h.get("dtypes", ["float32"]), "ops": []}
    for key in ("user_dims", "derived", "constraints", "options", "returns"):
        if key in h:
            out[key] = h[key]
    for o in ops:
        spec = {"name": o.get("name", o["op"]), "file": rel, "launcher": o["op"], "args": o.get("args", {})}
        for key in ("models", "dtypes", "relations"):
            if key in o:
                spec[key] = o[key]
        spec.setdefault("dtypes", h.get("dtypes", ["float32"]))  # fixtures pin their dtypes
        out["ops"].append(spec)
    return out


def verdicts(fx: Fixture) -> dict:
    h = fx.header
    ops = h.get("ops") or [{k: h[k] for k in ("op", "kernel", "name") if k in h} | {"verdict": h.get("verdict")}]
    return {o.get("name", o.get("op") or o.get("kernel")): o.get("verdict") for o in ops}


def run_fixture(fx: Fixture, tmp: Path, **options):
    """Scan the fixture as the suite does; ``options``: engine options changed from the manifest's
    (Options fields, such as control_call)."""
    from dataclasses import replace

    from bot.manifest import load
    from bot.scan import options_for, scan

    def opts(manifest):
        return replace(options_for(manifest), **options) if options else None

    if fx.header.get("zero_config"):
        # No binding: the ops of the file run in zero-config mode (with the manifest's statements
        # about function results and its options, when the fixture gives some).
        manifest = None
        extra = {key: fx.header[key] for key in ("returns", "options") if key in fx.header}
        if extra:
            mpath = tmp / "kernelvet.yaml"
            mpath.write_text(yaml.safe_dump({"version": 0, "models": [], "ops": [], **extra}))
            manifest = load(mpath)
        return scan(FIXTURES, manifest, jobs=1, zero_config_files=[fx.name], options=opts(manifest))
    mpath = tmp / "kernelvet.yaml"
    mpath.write_text(yaml.safe_dump(manifest_for(fx), sort_keys=False))
    manifest = load(mpath)
    return scan(FIXTURES, manifest, jobs=1, options=opts(manifest))


def compare(fx: Fixture, report) -> list[str]:
    """Every difference between what the fixture expects and what kernelvet reported."""
    problems: list[str] = []
    got: set = set()
    for m in report.findings:
        loc = m.finding.location
        if loc.file != fx.name:
            problems.append(f"finding outside the fixture: {loc}: {m.check}: {m.finding.message}")
            continue
        got.add((loc.line, f"contract:{m.check}" if m.finding.contract else m.check))
    for line, check in sorted(fx.expected - got):
        problems.append(f"missing: line {line}: {check}")
    for text in fx.header.get("messages", []):
        if not any(text in m.finding.message for m in report.findings):
            problems.append(f"no finding's message holds {text!r}: "
                            + "; ".join(m.finding.message for m in report.findings))
    for line, check in sorted(got - fx.expected):
        msg = next(m.finding.message for m in report.findings if m.location.line == line
                   and check.endswith(m.check))
        problems.append(f"extra: line {line}: {check}: {msg}")
    got_inc = set()
    for ir in report.instances:
        for inc in ir.result.inconclusive:
            if inc.span is not None and inc.span.file == fx.name:
                got_inc.add((inc.span.line, inc.reason))
            elif fx.expected_inconclusive:
                got_inc.add((0, inc.reason))
    for item in sorted(fx.expected_inconclusive - got_inc):
        problems.append(f"missing inconclusive: line {item[0]}: {item[1]}")
    want = verdicts(fx)
    if not report.instances:
        problems.append("no instance ran: the fixture's op was not found")
    for ir in report.instances:
        expected = want.get(ir.planned.op_name)
        # A verified op that launched nothing proves nothing about its kernels (a parse error that
        # ended the path early looked verified): only a host-only op says so in its header.
        if ir.result.verdict == "verified" and not ir.result.kernels and fx.header.get("kernels") != "none":
            problems.append(f"{ir.planned.label}: verified without reaching a kernel (a host-only op says "
                            "'kernels: none' in its header)")
        if expected is not None and ir.result.verdict != expected:
            reasons = "; ".join(f"{i.reason}: {i.detail} at {i.span}" for i in ir.result.inconclusive)
            problems.append(f"{ir.planned.label}: verdict {ir.result.verdict}, expected {expected}"
                            + (f" ({reasons})" if reasons else ""))
    return problems
