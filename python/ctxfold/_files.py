"""Writing a JSON document the way every ``ctxfold`` command does.

``-`` is standard output. Any other path goes through the core's one rule of writing a file,
the rule ``Context.save`` follows: a regular file (or a new one) is replaced atomically, keeping
the old file's mode (a new file gets the mode the umask gives); a symlink, a FIFO or a device
is written through, never replaced; a missing folder is an error that names it."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from . import _core

__all__ = ["STDOUT", "report", "write_json"]

#: The name that means standard output, as for most command-line tools.
STDOUT = "-"


def write_json(dst: str, doc: Any, *, pretty: bool = False) -> str:
    """Write ``doc`` as JSON (compact, or indented by 2 with ``pretty``) to ``dst``; return what
    was written to, for the command's report (``"stdout"`` for ``-``)."""
    text = json.dumps(doc, ensure_ascii=False, indent=2 if pretty else None,
                      separators=None if pretty else (",", ":"))
    if dst == STDOUT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return "stdout"
    _core.write_file(dst, text.encode("utf-8"))
    return dst


def report(dst: str, line: str) -> None:
    """A command's line about what it wrote: on stdout, or on stderr when the document itself
    went to stdout (``-``, or a path to it such as ``/dev/stdout``), so that
    ``ctxfold convert IN - | jq`` reads JSON only."""
    print(line, file=sys.stderr if _is_stdout(dst) else sys.stdout)


def _is_stdout(dst: str) -> bool:
    if dst == STDOUT:
        return True
    try:
        a, b = os.stat(dst), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no such path, or stdout is not a real file
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
