"""The runtime fields of a Context, by the core's table (``_core.RUNTIME_FIELDS``): which
there are, which a document carries, what a document without one reads as, how a fork copies
each. The core checks and fills in a document's fields; what is here is only what is Python's:
converting a carried value to and from the document (a ``datetime``, a ``Usage``, values made
JSON), keyed by the field's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from operator import attrgetter
from typing import Any

from . import _core
from ._redact import json_clean, redact_deps
from ._values import Usage
from .errors import DecodeError

__all__ = ["FIELDS", "PERSISTED", "copy", "dump", "load"]


def _iso(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _read_usage(v: Any, where: str) -> Usage:
    try:
        return Usage.from_mapping(v)
    except TypeError as e:
        raise _core.located(DecodeError(str(e)), where) from None


def _read_time(v: Any, where: str) -> datetime | None:
    # The core has checked that the time parses; this makes it a datetime.
    return None if v is None else _core.parse_time(v)


#: To the document (JSON), by field name; a carried field not named here is written as it is.
_TO_DOCUMENT: dict[str, Callable[[Any], Any]] = {
    "deps": lambda v: redact_deps(v or {}),
    "usage": lambda u: u.to_dict(),
    "tool_calls": lambda v: json_clean(list(v)),
    "needs_response": bool,
    "started_at": lambda t: None if t is None else _iso(t),
}
#: From the document's value (checked and filled in by the core), by field name.
_FROM_DOCUMENT: dict[str, Callable[[Any, str], Any]] = {
    "usage": _read_usage,
    "started_at": _read_time,
}

FIELDS: tuple[_core.RuntimeField, ...] = _core.RUNTIME_FIELDS
#: The fields a document carries, in its order.
PERSISTED: tuple[_core.RuntimeField, ...] = tuple(f for f in FIELDS if f.carried)
_unknown = (_TO_DOCUMENT.keys() | _FROM_DOCUMENT.keys()) - {f.name for f in PERSISTED}
if _unknown:
    raise ImportError(f"conversions for runtime fields the core's table does not carry: {sorted(_unknown)}")

_NAMES = tuple(f.name for f in FIELDS)
_READ_ALL = attrgetter(*_NAMES)
# Runtime fields whose value lives in the core (a property of Context), not in its __dict__.
_CORE_HELD = ("system_prompt",)
_FORK_COPIES = tuple(f.fork_copies for f in FIELDS)
_WRITE = tuple((f.name, _TO_DOCUMENT.get(f.name)) for f in PERSISTED)
_READ = tuple((f.name, _FROM_DOCUMENT.get(f.name)) for f in PERSISTED)


def _own_copy(v: Any) -> Any:
    """A fork's own shallow copy of a dict or list field: a new dict or list of the same values."""
    return dict(v) if isinstance(v, Mapping) else list(v)


def copy(src: Any, dst: Any) -> None:
    """Every runtime field of `src` onto `dst`, as a fork copies it (a window is made every
    turn, so this is one read of all the fields and one update, not a loop of getattr/setattr)."""
    values = {name: _own_copy(v) if own else v for name, own, v in zip(_NAMES, _FORK_COPIES, _READ_ALL(src))}
    # A field the core holds (``system_prompt``: it is shown in ``messages``) goes through its
    # property; the rest are plain attributes.
    for name in _CORE_HELD:
        setattr(dst, name, values.pop(name))
    dst.__dict__.update(values)


def dump(obj: Any) -> dict[str, Any]:
    """The carried fields of `obj` as the document holds them."""
    return {name: getattr(obj, name) if write is None else write(getattr(obj, name)) for name, write in _WRITE}


def load(obj: Any, rt: dict[str, Any]) -> None:
    """Set `obj`'s carried fields from a document's, as the core checked them and filled in
    the absent ones (``rt`` holds every carried field)."""
    for name, read in _READ:
        v = rt[name]
        setattr(obj, name, v if read is None else read(v, name))
