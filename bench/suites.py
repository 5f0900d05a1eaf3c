"""kernelvet on verification suites with ground truth: recall on the bug-tagged cases, false alarms
on the clean ones, and how many it did not reach or could not decide.

    python bench/suites.py gpuverify PATH [--json OUT] [--limit N] [--every N] [--budget S]
    python bench/suites.py esbmc PATH     # ESBMC-GPU's regression/cuda (a test.desc per case)
    python bench/suites.py indigo PATH    # an Indigo3 checkout after its generate_all_codes.py

- ``gpuverify``: every ``.cu`` under PATH whose first line is ``//pass`` or ``//xfail:...`` and
  whose header gives a launch; each is bound through ``kernelvet manifest from-gpuverify`` (its
  own ``--blockDim``/``--gridDim``) and scanned. ``//xfail`` cases expect a finding (GPUVerify's
  races and barrier divergence, kernelvet's checks of the same; out-of-bounds accesses are not
  GPUVerify's subject, so a bound finding on a ``//pass`` case is counted apart). Files with ``-D``
  flags or several kernels run with what the header gives.
- ``esbmc``: every case folder with a ``test.desc``; ``VERIFICATION FAILED`` cases expect a
  finding, ``VERIFICATION SUCCESSFUL`` ones none; the program's ``main`` runs zero-config. A
  failing case's ``test.desc`` may name the property that fails (``#array bounds violated$``,
  ``#W/W data race$``, ``#assertion$``): such a case is scored as an Indigo3 tag is
  (``ESBMC_PROPERTY_CHECKS``: a finding of a check that finds that property; ``assertion`` and
  ``constant memory`` are properties no check looks for, counted apart). A case that names none
  counts any finding, and the totals say how many of each there are.
- ``indigo``: every ``.cu`` under PATH, an Indigo3 checkout whose ``generate_all_codes.py cuda``
  wrote them (``configure.txt``'s ``bug`` option picks clean or buggy versions); each runs
  zero-config as in ``esbmc``, in a folder with a copy of the checkout's ``lib/`` (its ``main``,
  the graph reader and the helpers are headers there, included by name). The bug tags of a
  file's name say what it expects (``BoundsBug``; ``NoBoundsBug`` names the fix; a file may carry
  several): a finding, not a contract one, of a check that finds that kind of bug
  (``INDIGO_TAG_CHECKS``: bounds tags ``oob``/``shared-oob``/``local-oob``, ``OverflowBug``
  ``overflow``, ``RaceBug`` ``race``, ``SyncBug`` ``race``/``barrier-divergence``); another
  check's finding is ``other finding``. A file whose tags are all of kinds no check looks for
  (``FieldBug``, ``LivelockBug``, ``UninitializedBug``, ``PrecedenceBug``) is counted apart
  (``unchecked``); a file with no tag is clean. The totals add each tag's matches.

Each case runs in its own process (one bad case never stops the run) under a CPU budget. Prints
one line per case and the totals: reached (an instance ran), found on bug cases, false alarms on
clean cases, inconclusive and not reached (each by reason), crashed. ``--every N`` keeps every Nth
case in path order (a deterministic sample of a large suite), before ``--limit``. Suites are
fetched by the user; nothing of them is kept here.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOUNDS = frozenset({"oob", "shared-oob", "local-oob"})
# Indigo3's bug tags and the checks that find such a bug. Tags not here (FieldBug, LivelockBug,
# UninitializedBug, PrecedenceBug) are wrong results or hangs, which no check looks for.
INDIGO_TAG_CHECKS = {
    "BoundsBug": BOUNDS, "NbrBoundsBug": BOUNDS, "NborBoundsBug": BOUNDS, "ExcessThreadsBug": BOUNDS,
    "OverflowBug": frozenset({"overflow"}),
    "RaceBug": frozenset({"race"}), "AtomicBug": frozenset({"race"}),
    "SyncBug": frozenset({"race", "barrier-divergence"}),
}


# ESBMC-GPU's property names (the ``#...$`` line of a failing case's test.desc) and the checks that
# find a bug of that property. Functional assertions and writes to __constant__ memory (which nvcc
# rejects in device code) are no check's subject.
ESBMC_PROPERTY_CHECKS = {
    "array bounds violated": BOUNDS, "Access to object out of bounds": BOUNDS,
    "dereference failure": BOUNDS | {"null-deref"}, "NULL pointer": frozenset({"null-deref"}),
    "data race": frozenset({"race"}), "W/W data race": frozenset({"race"}), "R/W data race": frozenset({"race"}),
    "assertion": frozenset(), "constant memory": frozenset(),
}


def esbmc_property(main: Path) -> str | None:
    """The property a failing ESBMC-GPU case names in its test.desc, if any."""
    desc = main.parent / "test.desc"
    if not desc.is_file():
        return None
    found = [x.strip() for x in re.findall(r"^#(.+?)\$?\s*$", desc.read_text(errors="replace"), re.M)
             if not x.strip().startswith("VERIFICATION")]  # a verdict written as a comment, not a property
    return found[0] if found else None


def _gpuverify_cases(path: Path) -> list[tuple[Path, bool]]:
    out = []
    for f in sorted(path.rglob("*.cu")):
        try:
            first = f.read_text(errors="replace").splitlines()[:1]
        except OSError:
            continue
        head = first[0].lower() if first else ""
        if head.startswith("//pass") or head.startswith("//xfail"):
            out.append((f, head.startswith("//xfail")))
    return out


def _esbmc_cases(path: Path) -> list[tuple[Path, bool]]:
    out = []
    for desc in sorted(path.rglob("test.desc")):
        lines = desc.read_text(errors="replace").splitlines()
        # The source file is the first line (ESBMC-GPU) or follows a tag line (CORE, KNOWNBUG).
        names = [ln.strip() for ln in lines[:2] if ln.strip() and (desc.parent / ln.strip()).is_file()]
        if not names:
            continue
        main = desc.parent / names[0]
        text = "\n".join(lines)
        if not main.is_file() or "VERIFICATION" not in text:
            continue
        out.append((main, "VERIFICATION FAILED" in text))
    return out


def indigo_tags(file: Path) -> list[str]:
    """The bug tags of an Indigo3 file name (``NoRaceBug`` and the like name the fix, not a bug)."""
    return [t for t in file.stem.split("_") if t.endswith("Bug") and not re.match(r"No[A-Z]", t)]


def _indigo_cases(path: Path) -> list[tuple[Path, bool]]:
    return [(f, bool(indigo_tags(f))) for f in sorted(path.rglob("*.cu"))]


def indigo_checks(file: Path) -> frozenset:
    """The checks that find some bug of the file's tags (empty: none of them is checked)."""
    return frozenset().union(*(INDIGO_TAG_CHECKS.get(t, ()) for t in indigo_tags(file)))


def _run_case(kind: str, file: str, budget: float, queue) -> None:
    """In a child process: the case's verdicts and findings, or its error."""
    import yaml

    from bot.manifest import load
    from bot.scan import scan
    from analyzers.engine.context import Options
    try:
        path = Path(file)
        with tempfile.TemporaryDirectory() as tmp:
            if kind == "gpuverify":
                from bot.manifest.gpuverify import HeaderError, manifest_for
                root = path.parent
                try:
                    doc, _ = manifest_for([path], root)
                except HeaderError as exc:  # no kernel, no launch: nothing to bind
                    queue.put({"verdicts": [], "checks": [], "reasons": [], "unverified": [str(exc)]})
                    return
                doc["options"] = {"time_budget_s": budget}
                mpath = Path(tmp) / "kernelvet.yaml"
                mpath.write_text(yaml.safe_dump(doc, sort_keys=False))
                report = scan(root, load(mpath), jobs=1)
            else:
                root = path.parent
                if kind == "indigo":
                    # The program includes lib/'s headers by name, as its build's -I lib does: a
                    # folder of the case and those alone (a generated folder holds thousands).
                    lib = next(d / "lib" for d in path.parents if (d / "lib").is_dir())
                    root = Path(tmp)
                    for h in [path, *lib.glob("*.h")]:
                        shutil.copy(h, root)
                report = scan(root, None, jobs=1, zero_config_files=[path.name],
                              options=Options(time_budget_s=budget))
        verdicts = [r.result.verdict for r in report.instances]
        reasons = [i.reason for r in report.instances for i in r.result.inconclusive]
        details = sorted({f"{i.reason}: {i.detail[:120]}" for r in report.instances for i in r.result.inconclusive})
        checks = sorted({f.check for f in report.findings})
        bug_checks = sorted({f.check for f in report.findings if not f.finding.contract})
        unverified = [u.why for u in report.unverified]
        # Where each finding is (and in which op), to tell a planted bug's from another.
        sites = [[f.check, f"{f.location.file}:{f.location.line}", f.finding.kernel or "", ",".join(f.ops)]
                 for f in report.findings]
        queue.put({"verdicts": verdicts, "checks": checks, "bug_checks": bug_checks, "reasons": reasons,
                   "details": details, "unverified": unverified, "sites": sites})
    except Exception as exc:  # noqa: BLE001 - one bad case never stops the run
        queue.put({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})


def run_case(kind: str, file: Path, budget: float) -> dict:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=_run_case, args=(kind, str(file), budget, queue))
    t0 = time.perf_counter()
    p.start()
    p.join(budget * 4 + 60)
    if p.is_alive():
        p.kill()
        return {"error": "timed out", "seconds": time.perf_counter() - t0}
    out = queue.get() if not queue.empty() else {"error": f"died (exit {p.exitcode})"}
    out["seconds"] = time.perf_counter() - t0
    return out


def outcome(bug_expected: bool, r: dict, expected_checks: frozenset | None = None) -> str:
    """``expected_checks``: where the suite says which kind of bug a case has, the checks that find
    it; a bug case with none of them is ``unchecked``, one with only other findings ``other finding``."""
    if "error" in r:
        return "crashed"
    if not r["verdicts"]:
        return "not reached"
    if bug_expected and expected_checks is not None and not expected_checks:
        return "unchecked"
    if "bug" in r["verdicts"]:
        if bug_expected and expected_checks is not None and not expected_checks & set(r["bug_checks"]):
            return "other finding"
        return "found" if bug_expected else "false alarm"
    # A contract verdict (zero-config findings a caller's guarantee rules out) hides what was not decided.
    if "inconclusive" in r["verdicts"] or r["reasons"]:
        return "inconclusive"
    return "missed" if bug_expected else "verified"


CASES = {"gpuverify": _gpuverify_cases, "esbmc": _esbmc_cases, "indigo": _indigo_cases}


def reason_of(why: str) -> str:
    """A not-reached case's reason without its file's details (for the totals)."""
    return re.sub(r"\s+", " ", why.split(": ")[0])[:70]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=tuple(CASES))
    ap.add_argument("path")
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--every", type=int, default=1, help="keep every Nth case in path order (default 1: all)")
    ap.add_argument("--budget", type=float, default=30.0, help="CPU seconds per instance (default 30)")
    args = ap.parse_args()
    path = Path(args.path).resolve()
    cases = CASES[args.kind](path)[::args.every][:args.limit]
    if not cases:
        print(f"no {args.kind} cases under {path}", file=sys.stderr)
        return 2
    rows, counts, tags, reasons = [], collections.Counter(), collections.Counter(), collections.Counter()
    props = collections.Counter()  # (ESBMC-GPU property, outcome) of the failing cases
    unchecked_with_finding = 0
    for f, bug in cases:
        r = run_case(args.kind, f, args.budget)
        prop = esbmc_property(f) if args.kind == "esbmc" and bug else None
        expected = indigo_checks(f) if args.kind == "indigo" else ESBMC_PROPERTY_CHECKS.get(prop) if prop else None
        o = outcome(bug, r, expected)
        if args.kind == "esbmc" and bug:
            props[(prop or "no property named", o)] += 1
        # Bug cases whose bugs no check looks for are neither found nor missed: counted apart.
        group = "unchecked" if bug and expected is not None and not expected else bug
        counts[(group, o)] += 1
        unchecked_with_finding += o == "unchecked" and "bug" in r["verdicts"]
        if o == "inconclusive":
            reasons.update(("inconclusive", x) for x in set(r["reasons"]))
        elif o == "not reached":
            reasons[("not reached", reason_of((r["unverified"] or ["no instance, nothing unverified"])[0]))] += 1
        elif o == "crashed":
            reasons[("crashed", r["error"][:70])] += 1
        case_tags = indigo_tags(f) if args.kind == "indigo" else []
        for t in case_tags:
            alone = " alone" if len(case_tags) == 1 else ""
            tags[(t, "cases" + alone)] += 1
            if r.get("verdicts"):
                tags[(t, "reached" + alone)] += 1
            if INDIGO_TAG_CHECKS.get(t, frozenset()) & set(r.get("bug_checks", ())):
                tags[(t, "matched" + alone)] += 1
        why = r.get("error") or ", ".join(r.get("checks") or []) or ", ".join(sorted(set(r.get("reasons") or []))) \
            or "; ".join(u[:80] for u in r.get("unverified") or [])
        rows.append({"case": str(f.relative_to(path)), "bug": bug, "outcome": o, "why": why,
                     **({"property": prop} if prop else {}),
                     "seconds": round(r["seconds"], 1), **({"tags": case_tags} if case_tags else {}),
                     **({k: r[k] for k in ("verdicts", "details", "unverified", "sites") if r.get(k)})})
        print(f"{'bug  ' if bug else 'clean'} {o:13s} {r['seconds']:6.1f}s  {f.relative_to(path)}  {why[:100]}",
              flush=True)
    bugs = sum(v for (b, _), v in counts.items() if b is True)
    clean = sum(v for (b, _), v in counts.items() if b is False)
    unchecked = sum(v for (b, _), v in counts.items() if b == "unchecked")
    reached = sum(v for (_, o), v in counts.items() if o not in ("not reached", "crashed"))
    print(f"\n{len(cases)} cases ({bugs} bug, {clean} clean"
          f"{f', {unchecked} of unchecked bug kinds only' if unchecked else ''}): "
          f"reached {reached} ({100 * reached / len(cases):.0f}%)")
    if bugs:
        print(f"  bug cases:   found {counts[(True, 'found')]} ({100 * counts[(True, 'found')] / bugs:.0f}% recall), "
              + (f"other finding {counts[(True, 'other finding')]}, " if args.kind != "gpuverify" else "")
              + f"missed {counts[(True, 'missed')]}, inconclusive {counts[(True, 'inconclusive')]}, "
              f"not reached {counts[(True, 'not reached')]}, crashed {counts[(True, 'crashed')]}")
    if clean:
        print(f"  clean cases: verified {counts[(False, 'verified')]}, false alarms {counts[(False, 'false alarm')]} "
              f"({100 * counts[(False, 'false alarm')] / clean:.1f}%), inconclusive {counts[(False, 'inconclusive')]}, "
              f"not reached {counts[(False, 'not reached')]}, crashed {counts[(False, 'crashed')]}")
    if unchecked:
        print(f"  unchecked:   reached {counts[('unchecked', 'unchecked')]}, a bug finding on "
              f"{unchecked_with_finding} (not scored), not reached "
              f"{counts[('unchecked', 'not reached')]}, crashed {counts[('unchecked', 'crashed')]}")
    for t in sorted({t for t, _ in tags}):
        scored = f"a matching finding on {tags[(t, 'matched')]}" if t in INDIGO_TAG_CHECKS else "unchecked"
        print(f"  {t}: {tags[(t, 'cases')]} cases, reached {tags[(t, 'reached')]}, {scored}; "
              f"the only tag in {tags[(t, 'cases alone')]}, reached {tags[(t, 'reached alone')]}"
              + (f", matched {tags[(t, 'matched alone')]}" if t in INDIGO_TAG_CHECKS else ""))
    for prop in sorted({p for p, _ in props}):
        per = {o: n for (p, o), n in props.items() if p == prop}
        checked = ESBMC_PROPERTY_CHECKS.get(prop, None) != frozenset()
        print(f"  {prop}: {sum(per.values())} failing cases, " + (", ".join(
            f"{o} {n}" for o, n in sorted(per.items(), key=lambda kv: -kv[1])) if checked
            else f"no check's subject (reached {sum(n for o, n in per.items() if o not in ('not reached', 'crashed'))})"))
    scored = collections.Counter()
    for (p, o), n in props.items():
        if ESBMC_PROPERTY_CHECKS.get(p):
            scored[o] += n
    if scored:
        total = sum(scored.values())
        print(f"  memory-safety and race properties named in test.desc: found {scored.get('found', 0)} of {total} "
              f"({100 * scored.get('found', 0) / total:.0f}% recall)")
    for (what, why), n in sorted(reasons.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  {what}: {n} {why}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
