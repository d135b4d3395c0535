"""The steps of a store call that do not touch the database, shared by ``Store`` (blocking)
and ``AsyncStore`` (coroutines): what a save writes, what a refused save tells the user, how a
load's rows become a Context, and the checks of a refresh. Each store runs the database reads
and writes between these steps in its own way."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

from .. import _core, _runtime
from .._context import Context
from .._gc_pause import collector_paused
from ..errors import ConflictError, DecodeError
from ._rows import Read, StoredTail, Write, count_column

__all__ = [
    "check_context",
    "check_id",
    "check_page",
    "check_prefix",
    "check_scan_deps",
    "check_tail",
    "conflict_message",
    "loaded",
    "refresh_apply",
    "refresh_from",
    "refresh_needed",
    "save_plan",
    "saved",
    "scanned",
    "scanned_deps",
    "stored_tail",
]


def text(column: str | bytes) -> str:
    return column.decode() if isinstance(column, bytes) else column


def check_context(ctx: object) -> Context:
    if not isinstance(ctx, Context):
        raise TypeError(f"expected a Context, got {type(ctx).__name__}")
    return ctx


def check_id(context_id: object) -> str:
    if not isinstance(context_id, str):
        raise TypeError(f"a context id is a str, got {type(context_id).__name__}")
    return context_id


def check_page(limit: object, offset: object) -> None:
    for name, v in (("limit", limit), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int")
        if v < 0:
            raise ValueError(f"{name} must be non-negative, got {v}")


def save_plan(store: str, ctx: Context) -> Write | None:
    """The write a save of ``ctx`` makes, or ``None`` when the store already holds all of it
    (the caller then checks that the store's head is still ``ctx.stored_seq``: a context
    deleted, or moved on by another writer, since is a conflict even with nothing new)."""
    expected = ctx.stored_seq
    head, count, state, events, content = _core.store_rows(ctx._core, expected, ctx._runtime())
    if expected == head and ctx._stored_state == (store, state):
        return None
    return Write(
        id=ctx.id, expected=expected, head=head, state=state, created_at=ctx.created_at,
        message_count=count, agent_name=ctx.agent_name, origin_context_id=ctx.origin_context_id,
        events=events, content=content,
    )


def saved(store: str, ctx: Context, w: Write) -> None:
    ctx.stored_seq = w.head
    ctx._stored_state = (store, w.state)


def conflict_message(context_id: str, expected: int | None, actual: int | None) -> str:
    """Why a save whose context was at ``expected`` was refused by a store at ``actual``."""
    if expected is None:
        return (f"context {context_id} is already in the store (at seq {actual}) and this one did not "
                "come from it: load it from the store, or give the new context another id")
    if actual is None:
        return (f"context {context_id} is not in the store, but ctx.stored_seq is {expected}: it was "
                "deleted, or saved to another store (set ctx.stored_seq = None to save it here anew)")
    return (f"context {context_id}: the store is at seq {actual}, this context was saved or loaded at "
            f"seq {expected}: another writer saved first; reload, redo the turn, save again")


def stored_head(context_id: str, raw: object) -> int | None:
    """A head column as read (``None``: no such context), checked as a count: a corrupt one is
    a ``DecodeError`` naming the context."""
    return None if raw is None else count_column(context_id, "next_seq", raw)


def loaded(store: str, context_id: str, r: Read | None) -> Context:
    """The Context a load's rows hold; ``KeyError`` when there were none."""
    if r is None:
        raise KeyError(context_id)
    head = count_column(context_id, "next_seq", r.head)
    # A long log becomes many objects at once: built with the cycle collector paused.
    with collector_paused(len(r.events)):
        core, rt, _ = _core.store_load(context_id, head, r.state, r.content, r.events)
        try:
            ctx = Context._from_loaded(core, rt)
        except DecodeError as e:
            raise _core.located(e, within=f"context {context_id}") from None
    ctx.stored_seq = head
    ctx._stored_state = (store, text(r.state))
    return ctx


def refresh_needed(store: str, ctx: Context, peek: tuple[object, str] | None) -> bool:
    """Whether a refresh of ``ctx`` has events to read, given the store's (head, state) for
    it; ``ConflictError`` when the store cannot catch ``ctx`` up."""
    expected, stored = ctx.stored_seq, ctx._stored_state
    if expected is None or stored is None or stored[0] != store:
        raise ConflictError(f"context {ctx.id} was not saved to or loaded from {store}: load it "
                            "from the store instead")
    if peek is None:
        raise ConflictError(f"context {ctx.id} is not in the store any more (deleted): nothing to "
                            "catch up with")
    if count_column(ctx.id, "next_seq", peek[0]) == expected and text(peek[1]) == stored[1]:
        return False
    if ctx.next_seq != expected:
        raise ConflictError(f"context {ctx.id} holds unsaved events from seq {expected} on, and the "
                            f"store moved on (to seq {peek[0]}): load it again with store.load and redo them")
    return True


def refresh_from(ctx: Context) -> tuple[int, int]:
    """(seq, content place) a refresh reads from: the last event both should share comes too,
    as the test of lineage."""
    return max((ctx.stored_seq or 0) - 1, 0), len(ctx._core.content_map)


def refresh_apply(store: str, ctx: Context, r: Read | None) -> int:
    """Apply what a refresh read (``refresh_from`` on); how many events were applied.

    One step in the core, under the context's lock: the rows are checked against the context
    as it is (an append racing this refresh is seen, not misread as a bad row), the runtime
    fields are read by ``_fields_of``, and only then is anything applied. Rows of another
    history, or unsaved events the store moved past, are the core's ``ConflictError``."""
    expected = ctx.stored_seq or 0
    if r is None:
        raise ConflictError(f"context {ctx.id} is not in the store any more (deleted)")
    head = count_column(ctx.id, "next_seq", r.head)
    cid = ctx.id
    # `check` runs while the core holds the context: it must not touch `ctx`.
    applied, fields = _core.store_refresh(ctx._core, expected, head, r.state, r.content, r.events,
                                          lambda rt: _fields_of(cid, rt))
    for f in _runtime.PERSISTED:
        setattr(ctx, f.name, getattr(fields, f.name))
    ctx.stored_seq = head
    ctx._stored_state = (store, text(r.state))
    return int(applied)


def _fields_of(context_id: str, runtime: dict[str, Any]) -> SimpleNamespace:
    """The runtime fields of a stored state, read and checked as a load reads them."""
    fields = SimpleNamespace()
    try:
        _runtime.load(fields, runtime)
    except DecodeError as e:
        raise _core.located(e, within=f"context {context_id}") from None
    return fields


# ---- tail and scan: the arguments checked, the rows decoded ----------------------------------


def check_tail(context_id: object, count: object, before: object) -> str:
    """The arguments of ``tail`` checked; the id."""
    if not isinstance(context_id, str):
        raise TypeError(f"a context id is a str, got {type(context_id).__name__}")
    for name, v in (("count", count), ("before", 0 if before is None else before)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int")
        if v < 0:
            raise ValueError(f"{name} must be non-negative, got {v}")
    return context_id


def stored_tail(context_id: str, r: Read | None) -> StoredTail:
    """What ``tail`` returns from its rows; ``KeyError`` when there were none."""
    if r is None:
        raise KeyError(context_id)
    try:
        return StoredTail(head=r.head, state=json.loads(r.state), events=[json.loads(data) for _, data in r.events])
    except ValueError as e:
        raise DecodeError(f"context {context_id}: a stored row is not JSON: {e}") from None


def check_prefix(prefix: object) -> str:
    if not isinstance(prefix, str):
        raise TypeError(f"a prefix is a str, got {type(prefix).__name__}")
    return prefix


def scanned(rows: list[tuple[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``scan``'s (id, persisted fields) from the (id, state text) rows."""
    out = []
    for context_id, state in rows:
        try:
            out.append((context_id, json.loads(state)))
        except ValueError as e:
            raise DecodeError(f"context {context_id}: its stored state is not JSON: {e}") from None
    return out


def check_scan_deps(prefix: object, key: object) -> None:
    if not isinstance(prefix, str) or not isinstance(key, str):
        raise TypeError("prefix and key are str")
    if not re.fullmatch(r"\w+", key, re.ASCII):
        raise ValueError(f"a deps key to scan is letters, digits and _, got {key!r}")


def scanned_deps(rows: list[tuple[str, Any]]) -> list[tuple[str, str | None]]:
    """``scan_deps``'s (id, value) from the rows: a value that is not a str is ``None``."""
    return [(cid, value if isinstance(value, str) else None) for cid, value in rows]
