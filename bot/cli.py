"""The kernelvet command line: a dispatcher over bot/commands/."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from analyzers import __version__

from .commands import COMMANDS
from .exitcodes import EXIT_INTERNAL, EXIT_USAGE

EPILOG = """exit codes:
  0  every instance verified
  1  findings (bugs) reported
  2  usage or configuration error (bad manifest, missing files)
  3  no findings, but some instances inconclusive
  4  internal error of kernelvet
  5  no findings, but something asked for was not verified (a file no instance
     reaches, a compiler error in a touched file, nothing to verify)
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kernelvet", description="Verify CUDA kernels of inference repositories "
                                "memory-safe for every registered model and input size.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"kernelvet {__version__}")
    sub = p.add_subparsers(dest="command")
    for name in COMMANDS:
        importlib.import_module(f"bot.commands.{name}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from .github.actions import guard_streams
    guard_streams()  # in GitHub Actions, nothing from the repository can start a workflow command
    p = parser()
    args = p.parse_args(argv)
    if getattr(args, "func", None) is None:
        p.print_help(sys.stderr)
        return EXIT_USAGE
    from .commands.common import UsageError
    try:
        return args.func(args)
    except UsageError as exc:  # raised past a command's own handling (an output that cannot be written)
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kernelvet: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:  # never a traceback for users
        print(f"kernelvet: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("KERNELVET_DEBUG"):
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
