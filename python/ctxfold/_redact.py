"""What of the runtime fields may be written to disk: JSON values only, no credentials."""

from __future__ import annotations

import math
import re
from typing import Any

_SECRET_WORDS = {
    "secret", "secrets", "password", "passwords", "passwd", "token", "apikey", "privatekey",
    "accesskey", "credential", "credentials", "bearer", "authorization", "auth",
}
_SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key")}
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def key_words(key: str) -> list[str]:
    """``apiKey`` → ``[api, key]``; ``AUTH_TOKEN`` → ``[auth, token]``; ``max_tokens`` → ``[max, tokens]``."""
    return [w.lower() for w in _SPLIT.split(_CAMEL.sub(r"\1 \2", key)) if w]


def is_secret_key(key: str) -> bool:
    words = key_words(key)
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


_DROP = object()


def json_clean(v: Any, *, redact: bool = False) -> Any:
    """A JSON-compatible copy of ``v``; values that are not JSON are left out (``_DROP`` at the top)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**64 else _DROP
    if isinstance(v, float):
        return v if math.isfinite(v) else _DROP
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str) or (redact and is_secret_key(k)):
                continue
            c = json_clean(x, redact=redact)
            if c is not _DROP:
                out[k] = c
        return out
    if isinstance(v, (list, tuple)):
        return [c for c in (json_clean(x, redact=redact) for x in v) if c is not _DROP]
    return _DROP


def redact_deps(deps: dict[str, Any]) -> dict[str, Any]:
    cleaned = json_clean(deps, redact=True)
    return cleaned if isinstance(cleaned, dict) else {}
