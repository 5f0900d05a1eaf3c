"""kernelvet scan: verify every op of the manifest (or the ops of the given files)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..exitcodes import EXIT_USAGE


def register(sub) -> None:
    p = sub.add_parser("scan", help="verify every op of the manifest (or those in the given files)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="a repository directory (default: .), or files of it to restrict the scan to")
    p.add_argument("--root", help="the repository root when PATHS are files (default: the current directory)")
    p.add_argument("--manifest", help="the manifest (default: kernelvet.yaml at the repository root)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", help="write the report to this file instead of standard output")
    p.add_argument("--time-budget", type=float, help="seconds per instance before it is inconclusive (default 60)")
    p.add_argument("--progress", action="store_true", help="progress lines on standard error")
    p.add_argument("--zero-config", action="store_true",
                   help="also verify, without a binding, the ops of the scanned files that the manifest does not "
                        "bind (the default when there is no manifest)")
    p.set_defaults(func=run)


def run(args) -> int:
    from analyzers.engine.context import Options
    from ..manifest import ManifestError, find_manifest, load
    from ..reporters import jsonfmt, text
    from ..scan import scan

    paths = [Path(p) for p in args.paths] or [Path(".")]
    if len(paths) == 1 and paths[0].is_dir():
        root, only = paths[0], None
    else:
        root = Path(args.root) if args.root else Path(".")
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            print(f"kernelvet: no such file: {', '.join(missing)}", file=sys.stderr)
            return EXIT_USAGE
        only = {_relative(p, root) for p in paths}
    root = root.resolve()
    manifest_path = Path(args.manifest) if args.manifest else find_manifest(root)
    if args.manifest and not manifest_path.is_file():
        print(f"kernelvet: no such manifest: {args.manifest}", file=sys.stderr)
        return EXIT_USAGE
    zero_config = args.zero_config or manifest_path is None
    if manifest_path is None:
        print(f"kernelvet: {root} has no kernelvet.yaml: verifying every op in zero-config mode (symbolic shapes "
              "within default ranges; see docs/manifest.md to bind ops to models)", file=sys.stderr)
    try:
        manifest = load(manifest_path) if manifest_path is not None else None
        options = None
        if args.time_budget is not None:
            o = manifest.spec.options if manifest is not None else None
            options = Options(time_budget_s=args.time_budget)
            if o is not None:
                options = Options(time_budget_s=args.time_budget, query_timeout_ms=o.query_timeout_ms,
                                  unroll_max=o.unroll_max, minimal_witness=o.minimal_witness)
        files = None
        if zero_config:
            files = sorted(only) if only is not None else _cuda_files(root)
            if manifest is None and not files:
                print(f"kernelvet: nothing to verify: {root} has no kernelvet.yaml and no .cu/.cuh files",
                      file=sys.stderr)
                return EXIT_USAGE
        report = scan(root, manifest, only, _progress if (args.progress or sys.stderr.isatty()) else None, options,
                      zero_config_files=files)
    except ManifestError as exc:
        for e in exc.errors:
            print(e, file=sys.stderr)
        return EXIT_USAGE
    rendered = jsonfmt.render(report) if args.format == "json" else text.render(report)
    if args.output:
        Path(args.output).write_text(rendered)
    else:
        sys.stdout.write(rendered)
    return report.exit_code


def _cuda_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for ext in ("*.cu", "*.cuh") for p in root.rglob(ext)
                  if ".git" not in p.parts and not any(part.startswith(".") for part in p.relative_to(root).parts))


def _relative(p: Path, root: Path) -> str:
    try:
        return str(p.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(p)


def _progress(done: int, total: int, planned) -> None:
    if planned is None:
        print(f"kernelvet: {total}/{total} instances done", file=sys.stderr)
    else:
        print(f"kernelvet: [{done + 1}/{total}] {planned.label}", file=sys.stderr)
