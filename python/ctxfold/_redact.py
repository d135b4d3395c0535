"""What of the runtime fields may be written to disk: JSON values only, no credentials.

The rule of what is JSON and of which keys name credentials lives in the core
(``_core.json_clean``, ``rust/core/src/redact.rs``); this module only names its two uses."""

from __future__ import annotations

from typing import Any

from ._core import json_clean

__all__ = ["json_clean", "redact_deps"]


def redact_deps(deps: dict[str, Any]) -> dict[str, Any]:
    cleaned = json_clean(deps, redact=True)
    return cleaned if isinstance(cleaned, dict) else {}
