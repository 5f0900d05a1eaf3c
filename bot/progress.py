"""Progress of a scan on standard error: a bar redrawn in place on a terminal; in CI logs (no
terminal) a line every ``interval`` seconds, since a log cannot redraw and a line per instance of a
large repository is noise."""
from __future__ import annotations

import os
import shutil
import sys
import time


def for_stream(stream=None, requested: bool = False, interval: float = 15.0):
    """The reporter that suits ``stream``, or None: a bar on a terminal, periodic lines in CI or when
    ``requested``."""
    stream = stream or sys.stderr
    if stream.isatty():
        return Bar(stream)
    if requested or os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS"):
        return Lines(stream, interval)
    return None


class Bar:
    def __init__(self, stream):
        self.stream = stream
        self.t0 = time.monotonic()

    def __call__(self, done: int, total: int, planned) -> None:
        width = shutil.get_terminal_size((80, 20)).columns
        if planned is None:
            self.stream.write(f"\r{' ' * (width - 1)}\rkernelvet: {total}/{total} instances in "
                              f"{time.monotonic() - self.t0:.1f} s\n")
            self.stream.flush()
            return
        frac = done / total if total else 1.0
        bar_w = 24
        filled = int(frac * bar_w)
        head = f"\r[{'#' * filled}{'.' * (bar_w - filled)}] {done}/{total} "
        label = planned.label
        room = max(width - len(head) - 1, 0)
        self.stream.write(head + (label if len(label) <= room else label[: max(room - 1, 0)] + "…").ljust(room))
        self.stream.flush()


class Lines:
    def __init__(self, stream, interval: float):
        self.stream = stream
        self.interval = interval
        self.t0 = self.last = time.monotonic()
        self.started = False

    def __call__(self, done: int, total: int, planned) -> None:
        now = time.monotonic()
        if not self.started:
            self.started = True
            self.last = now
            self._say(f"verifying {total} instances")
        if planned is None:
            self._say(f"{total}/{total} instances done in {now - self.t0:.1f} s")
        elif now - self.last >= self.interval:
            self.last = now
            self._say(f"{done}/{total} instances ({100 * done // max(total, 1)}%) after {now - self.t0:.0f} s")

    def _say(self, text: str) -> None:
        self.stream.write(f"kernelvet: {text}\n")
        self.stream.flush()
