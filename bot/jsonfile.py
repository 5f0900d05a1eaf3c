"""Reading a JSON file a user or a workflow hands kernelvet, with errors that name the file (and
the line and column of a syntax error) instead of a traceback."""
from __future__ import annotations

import json
from pathlib import Path


def read_json(path, error: type[Exception], what: str = "") -> object:
    """The parsed content of ``path``; ``error`` (with ``what``, e.g. "the event", in its message)
    when it cannot be read or is not JSON."""
    subject = f"{what} " if what else ""
    try:
        return json.loads(Path(path).read_text())
    except OSError as exc:
        raise error(f"{path}: cannot read {subject}({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}:{exc.lineno}:{exc.colno}: {subject}{'is ' if what else ''}not valid JSON: "
                    f"{exc.msg}") from None
