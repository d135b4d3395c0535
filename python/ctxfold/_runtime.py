"""The runtime fields of a Context: one table says, for each, its default, how a
fork copies it, and — for the ones a document carries — how it is written and read back.

The core names the document's top-level keys (``_core.RUNTIME_KEYS``); this table says how each
converts, and an import-time check keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from operator import attrgetter
from typing import Any

from . import _core
from ._redact import json_clean, redact_deps
from ._values import Usage
from .errors import DecodeError

__all__ = ["FIELDS", "PERSISTED", "copy", "dump", "load"]


def _same(v: Any) -> Any:
    return v


def _iso(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _typed(*types: type) -> Callable[[Any, str], Any]:
    """A reader that takes a value of `types` (a bool is not an int) as it is."""

    def read(v: Any, where: str) -> Any:
        if isinstance(v, bool) and bool not in types:
            raise _core.located(DecodeError(f"expected {types[0].__name__}, got bool"), where)
        if not isinstance(v, types):
            raise _core.located(DecodeError(f"wrong type {type(v).__name__}"), where)
        return v

    return read


def _read_usage(v: Any, where: str) -> Usage:
    try:
        return Usage.from_mapping(_typed(dict)(v, where))
    except TypeError as e:
        raise _core.located(DecodeError(str(e)), where) from None


def _read_time(v: Any, where: str) -> datetime:
    text = _typed(str)(v, where)
    try:
        return _core.parse_time(text)
    except DecodeError as e:
        raise _core.located(e, where) from None


@dataclass(frozen=True)
class Field:
    name: str
    default: Callable[[], Any]
    #: how a fork copies the parent's value
    copy: Callable[[Any], Any] = _same
    #: to the document (JSON); `None` for fields that are never saved (callables, flags)
    write: Callable[[Any], Any] | None = None
    #: from the document, checking its type; `None` in the document means the default
    read: Callable[[Any, str], Any] | None = None


FIELDS: tuple[Field, ...] = (
    Field("system_prompt", lambda: None, write=_same, read=_typed(str)),
    Field("deps", dict, dict, write=lambda v: redact_deps(v or {}), read=lambda v, w: dict(_typed(dict)(v, w))),
    Field("usage", Usage, write=lambda u: u.to_dict(), read=_read_usage),
    Field("tool_calls", list, list, write=lambda v: json_clean(list(v)), read=lambda v, w: list(_typed(list)(v, w))),
    Field("needs_response", lambda: True, write=bool, read=_typed(bool)),
    Field("iteration", lambda: 0, write=_same, read=_typed(int)),
    Field("max_iterations", lambda: 10, write=_same, read=_typed(int)),
    Field("started_at", lambda: datetime.now(timezone.utc), write=lambda t: None if t is None else _iso(t),
          read=_read_time),
    Field("agent_name", lambda: None, write=_same, read=_typed(str)),
    Field("stream", lambda: False),
    Field("callbacks", dict, dict),
    Field("notify", lambda: None),
    Field("cancellation_check", lambda: None),
    Field("approval_handler", lambda: None),
)

PERSISTED: tuple[Field, ...] = tuple(f for f in FIELDS if f.write is not None)

_NAMES = tuple(f.name for f in FIELDS)
_READ_ALL = attrgetter(*_NAMES)
# Runtime fields whose value lives in the core (a property of Context), not in its __dict__.
_CORE_HELD = ("system_prompt",)
_COPIES = tuple(None if f.copy is _same else f.copy for f in FIELDS)


def copy(src: Any, dst: Any) -> None:
    """Every runtime field of `src` onto `dst`, as a fork copies it (a window is made every
    turn, so this is one read of all the fields and one update, not a loop of getattr/setattr)."""
    values = {name: v if c is None else c(v) for name, c, v in zip(_NAMES, _COPIES, _READ_ALL(src))}
    # A field the core holds (``system_prompt``: it is shown in ``messages``) goes through its
    # property; the rest are plain attributes.
    for name in _CORE_HELD:
        setattr(dst, name, values.pop(name))
    dst.__dict__.update(values)
assert tuple(f.name for f in PERSISTED) == tuple(_core.RUNTIME_KEYS), "runtime fields out of step with the core"


def dump(obj: Any) -> dict[str, Any]:
    """The persisted fields of `obj` as the document holds them."""
    return {f.name: f.write(getattr(obj, f.name)) for f in PERSISTED if f.write is not None}


def load(obj: Any, rt: dict[str, Any], needs_response_default: bool) -> None:
    """Set `obj`'s persisted fields from a document's: a missing one takes its default (a
    document without a version defaults ``needs_response`` differently); a wrong type is a
    ``DecodeError``."""
    for f in PERSISTED:
        v = rt.get(f.name)
        if v is None:
            value = needs_response_default if f.name == "needs_response" else f.default()
            if f.name == "started_at":
                value = None  # a document without one started at no known time
        else:
            assert f.read is not None
            value = f.read(v, f.name)
        setattr(obj, f.name, value)
