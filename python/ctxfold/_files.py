"""Writing a JSON document the way every ``ctxfold`` command does: atomically."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

__all__ = ["write_json_atomic"]


def write_json_atomic(dst: str, doc: Any) -> None:
    """Compact JSON into a temporary file beside ``dst``, fsynced, then renamed over it: a
    crash leaves the old file or the new one, never a torn one."""
    folder = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ctxfold-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dst)
    except BaseException:
        os.unlink(tmp)
        raise
