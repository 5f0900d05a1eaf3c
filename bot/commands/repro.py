"""kernelvet repro: a reproducer per finding of a JSON report (a PyTorch script that builds the op
from the repository and calls it at the witness's sizes, or a CUDA harness for a bare kernel).
kernelvet confirm: run them on a GPU machine under compute-sanitizer and record the outcome in the
report (and a SARIF log). Neither runs in a pull request's review job: a reproducer builds and runs
the repository's code (docs/confirm.md)."""
from __future__ import annotations

import json
from pathlib import Path

from .common import UsageError, fail

DEFAULT_OUT = "kernelvet-repro"


def register(sub) -> None:
    p = sub.add_parser("repro", help="write a reproducer for findings of a JSON report (run them with kernelvet "
                                     "confirm on a GPU machine)")
    p.add_argument("findings", nargs="*", metavar="FINDING",
                   help="fingerprints (or their first characters) or FILE:LINE of the findings to reproduce")
    p.add_argument("--all", action="store_true", help="every active finding of the report")
    p.add_argument("--report", default="kernelvet.json", help="the JSON report of a scan (default: kernelvet.json)")
    p.add_argument("--root", default=".", help="the repository root (default: the current directory)")
    p.add_argument("--manifest", help="the manifest, for include directories and defines (default: "
                                      "kernelvet.yaml at the root when it exists)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"where to write them (default: {DEFAULT_OUT})")
    p.add_argument("--memory-gib", type=float, default=None,
                   help="GPU memory a reproducer may allocate (default: the manifest's witness_memory_gib, 72, "
                        "which the scan chose witnesses under): a witness needing more is written as not "
                        "runnable, and says so, after the engine has looked for a failing input within the bound "
                        "(the finding's op verified again, for its models and dtype)")
    p.add_argument("--no-refit", action="store_true",
                   help="do not verify an op again for a witness within --memory-gib: write those as not runnable")
    p.set_defaults(func=run_repro)

    c = sub.add_parser("confirm", help="run the reproducers kernelvet repro wrote, under compute-sanitizer, and "
                                       "record confirmed / not-reproduced / not-runnable per finding")
    c.add_argument("--repro", default=DEFAULT_OUT, help=f"the reproducers' directory (default: {DEFAULT_OUT})")
    c.add_argument("--report", help="a JSON report to annotate in place with each finding's confirmation")
    c.add_argument("--sarif", help="a SARIF log to annotate in place (a property and a tag per result)")
    c.add_argument("--sanitizer", default="compute-sanitizer", help="the compute-sanitizer executable")
    c.add_argument("--python", help="the Python that runs the reproducers (default: this one)")
    c.add_argument("--timeout", type=float, default=1800, help="seconds per build and per run (default 1800)")
    c.add_argument("--jobs", type=int, default=1, help="reproducers built and run at once (default 1); those "
                                                       "needing more than 8 GiB of GPU memory run alone")
    c.set_defaults(func=run_confirm)


def _load_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"kernelvet: cannot read the {what} {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"kernelvet: the {what} {path} is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"kernelvet: the {what} {path} is not a JSON object")
    return data


def _selected(findings: list[dict], wanted: list[str], everything: bool) -> list[dict]:
    active = [f for f in findings if isinstance(f, dict) and f.get("status", "new") == "new"]
    if everything:
        return active
    out = []
    for w in wanted:
        hits = [f for f in findings if str(f.get("fingerprint", "")).startswith(w)
                or f"{f['location']['file']}:{f['location']['line']}".endswith(w)]
        if not hits:
            raise UsageError(f"kernelvet: no finding of the report matches {w!r} (a fingerprint or FILE:LINE)")
        out += [f for f in hits if f not in out]
    return out


def run_repro(args) -> int:
    from ..manifest import ManifestError, find_manifest, load
    from ..repro.refit import refit
    from ..repro.scripts import reproduce

    root = Path(args.root).resolve()
    try:
        if not args.findings and not args.all:
            raise UsageError("kernelvet: name the findings to reproduce (fingerprints or FILE:LINE), or --all")
        report = _load_json(Path(args.report), "report")
        findings = report.get("findings")
        if not isinstance(findings, list):
            raise UsageError(f"kernelvet: {args.report} is not a kernelvet JSON report (no findings list)")
        chosen = _selected(findings, args.findings, args.all)
        mpath = Path(args.manifest) if args.manifest else find_manifest(root)
        manifest = load(mpath) if mpath else None
        spec = manifest.spec if manifest is not None else None
    except UsageError as exc:
        return fail(str(exc))
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    out = Path(args.out)
    index = []
    for f in chosen:
        d = (f.get("fingerprint") or "finding")[:16]
        r, entry = reproduce(f, out, d, root, spec, args.memory_gib)
        if r.not_runnable is not None and r.memory_bound and r.device_bytes > r.memory_bound and not args.no_refit:
            # A smaller card than the scan's bound: the engine minimises this finding's witness again
            # under the bound asked for, which may find a failing input that fits.
            again, why = refit(f, root, manifest, r.memory_bound / (1 << 30))
            print(f"{f['location']['file']}:{f['location']['line']}: {why}")
            if again is not None:
                r, entry = reproduce(again, out, d, root, spec, args.memory_gib, notes=(why,))
        index.append(entry)
        state = "ready" if r.not_runnable is None else f"not runnable: {r.not_runnable}"
        print(f"{out / d / 'repro.py'}: {r.check} at {r.where} ({r.kind}, "
              f"{r.device_bytes / (1 << 20):.1f} MiB on the GPU): {state}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.json").write_text(json.dumps({"report": str(args.report), "reproducers": index}, indent=2) + "\n")
    print(f"kernelvet: {len(index)} reproducer(s) in {out}; run them on a GPU machine with "
          f"'kernelvet confirm --repro {out} --report {args.report}'")
    return 0


def run_confirm(args) -> int:
    from ..repro import STATUSES
    from ..repro.confirm import annotate_report, confirm_all
    from ..reporters.sarif import annotate

    out = Path(args.repro)
    try:
        if not (out / "index.json").is_file():
            raise UsageError(f"kernelvet: {out} has no index.json: write the reproducers with kernelvet repro first")
        report = _load_json(Path(args.report), "report") if args.report else None
        sarif = _load_json(Path(args.sarif), "SARIF log") if args.sarif else None
    except UsageError as exc:
        return fail(str(exc))

    def progress(entry, c):
        print(f"{c.status:15} {entry['check']} at {entry['where']} ({c.tool}): {c.detail}", flush=True)

    results = confirm_all(out, args.python, args.sanitizer, args.timeout, progress, args.jobs)
    if report is not None:
        annotate_report(report, results)
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n")
    if sarif is not None:
        annotate(sarif, results)
        Path(args.sarif).write_text(json.dumps(sarif, indent=2) + "\n")
    counts = {s: sum(1 for c in results.values() if c["status"] == s) for s in STATUSES}
    print(f"kernelvet: {counts['confirmed']} confirmed, {counts['not-reproduced']} not reproduced, "
          f"{counts['not-runnable']} not runnable, of {len(results)}")
    return 0
