"""What the store front (``Store``) and a database backend pass each other: one save's rows,
one load's rows, one listing entry. Plain data; the backends hold the SQL."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..errors import DecodeError

__all__ = ["Backend", "Read", "Statement", "StoredContext", "StoredTail", "Write", "count_column", "first_moved",
           "listed", "trial_name"]

# One SQL statement of a caller's own tables, in the backend's placeholder style (SQLite ``?``,
# PostgreSQL ``%s`` / ``%(name)s``), and its parameters: run by ``append_with`` inside a save's
# transaction.
Statement = tuple[str, Any]


def trial_name() -> str:
    """A name no application row has, for the rows of a trial transaction (which leaves none):
    random from ``secrets``, not ``uuid.uuid4``, which applications' tests patch to make their
    own ids predictable (LangGraph's do), and a saver made there must not take those."""
    return f"ctxfold-trial-{secrets.token_hex(16)}"


@dataclass(frozen=True)
class StoredContext:
    """One context as a store lists it (``Store.list``), without loading its events."""

    id: str
    """The context's id."""
    created_at: datetime
    """When the context was made (aware UTC)."""
    updated_at: datetime
    """When it was last saved (aware UTC)."""
    next_seq: int
    """How many of its events the store holds."""
    message_count: int
    """How many messages its transcript shows."""
    agent_name: str | None
    """The context's ``agent_name``."""
    origin_context_id: str | None
    """The context it was forked or windowed from, if any."""


@dataclass(frozen=True)
class StoredTail:
    """The end of a context's log as ``Store.tail`` reads it: the stored head (its
    ``next_seq``), the persisted fields as saved, and the events read (JSON objects, oldest
    first)."""

    head: int
    """The stored ``next_seq``: how many events the store holds for the context."""
    state: dict[str, Any]
    """The persisted fields (runtime fields, anchors, lineage) as last saved."""
    events: list[dict[str, Any]]
    """The events read, as JSON objects in the file format's event layout, oldest first."""


@dataclass(frozen=True)
class Write:
    """One save: the guarded append of ``events`` and the state that goes with them.

    ``expected`` is the head the store must be at (``None``: the id must be free); after the
    save it is at ``head``. ``events`` are (seq, JSON text) from ``expected`` on, ``content``
    the content-map entries (ord, hash, text) the store may lack."""

    id: str
    expected: int | None
    head: int
    state: str
    created_at: datetime
    message_count: int
    agent_name: str | None
    origin_context_id: str | None
    events: list[tuple[int, str]]
    content: list[tuple[int, str, str]]


def first_moved(writes: Sequence[Write], heads: Iterable[tuple[str, Any]]) -> int | None:
    """Which of ``writes`` a refused save failed on: the index of the first whose head, among
    the store's ``(id, next_seq)`` rows read after the refusal (none for a context not
    stored), is not the one it expected; ``None`` when every head is where expected (moved,
    or deleted, and saved anew since)."""
    now = dict(heads)
    return next((i for i, w in enumerate(writes) if now.get(w.id) != w.expected), None)


@dataclass(frozen=True)
class Read:
    """One load, read in one snapshot: the head (the ``next_seq`` column as read: the front
    checks it), the state, the content entries as (hash, text) in order and the events as
    (seq, JSON text) in seq order; text as str or bytes."""

    head: Any
    state: Any
    content: list[Any]
    events: list[Any]


# ---- what a row must hold -----------------------------------------------------------------
# The backends hand the front the columns as the driver read them. A database may hold
# anything there (SQLite keeps any type in any column; a hand-edited row can say anything), so
# what the front relies on is checked here, once for both backends: a corrupt row is a
# DecodeError naming the context and the column, never a bare TypeError or a wrong value.


def _name(context_id: object) -> str:
    return context_id if isinstance(context_id, str) else repr(context_id)


def count_column(context_id: object, column: str, value: object) -> int:
    """A count column (``next_seq``, ``message_count``): a non-negative int, not a bool."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DecodeError(f"context {_name(context_id)}: {column}: {value!r} is not a non-negative integer")
    return value


def _text_column(context_id: object, column: str, value: object, *, optional: bool) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise DecodeError(f"context {_name(context_id)}: {column}: {value!r} is not text")
    return value


def listed(row: Sequence[Any], time: Callable[[Any], datetime]) -> StoredContext:
    """A listing entry from its columns (id, created_at, updated_at, next_seq, message_count,
    agent_name, origin_context_id); ``time`` reads a time column as the backend stores it, and
    raises ``ValueError`` or ``TypeError`` for one it cannot read."""
    cid, created, updated, next_seq, count, agent, origin = row
    if not isinstance(cid, str):
        raise DecodeError(f"context {cid!r}: id: not text")
    times = []
    for column, value in (("created_at", created), ("updated_at", updated)):
        try:
            times.append(time(value))
        except (TypeError, ValueError, OverflowError) as e:
            raise DecodeError(f"context {cid}: {column}: {value!r} is not a time ({e})") from None
    return StoredContext(
        id=cid, created_at=times[0], updated_at=times[1],
        next_seq=count_column(cid, "next_seq", next_seq), message_count=count_column(cid, "message_count", count),
        agent_name=_text_column(cid, "agent_name", agent, optional=True),
        origin_context_id=_text_column(cid, "origin_context_id", origin, optional=True),
    )


class Backend(Protocol):
    """A database holding contexts. Every method may be called from any thread; each
    raises ``StoreError`` for a failure of the database."""

    def append(self, w: Write) -> bool:
        """Apply ``w`` in one transaction if the store's head is ``w.expected``; else write
        nothing and return False. The primary key (context, seq) refuses a seq written twice
        whatever the head says (``ConflictError``)."""
        ...

    def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None:
        """In one transaction: every ``w`` of ``writes`` as ``append`` applies it, then
        ``statements`` in order. ``None`` when all of it was written; else the index of the
        first write whose head did not match, and nothing was written."""
        ...

    def head(self, context_id: str) -> object | None:
        """The ``next_seq`` column as read (the front checks it); ``None`` when absent."""
        ...

    def peek(self, context_id: str) -> tuple[object, str] | None:
        """(head, state) of a context, in one indexed read, the head as read; ``None`` when
        absent."""
        ...

    def read(self, context_id: str) -> Read | None: ...

    def read_since(self, context_id: str, seq: int, ord: int) -> Read | None:
        """As ``read``, in one snapshot, with only the events from ``seq`` on and the content
        entries from place ``ord`` on."""
        ...

    def tail(self, context_id: str, count: int, before: int | None) -> Read | None:
        """In one snapshot: the head, the state, and the last ``count`` events below seq
        ``before`` (below the head when ``None``), in seq order; no content entries."""
        ...

    def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, Any]]:
        """(id, state text) of every context whose id starts with ``prefix``; with
        ``deps_key``, (id, the value under that key of the state's deps, as the database's JSON
        functions extract it: a string value as its text, a missing one as None)."""
        ...

    def list(self, limit: int, offset: int) -> list[StoredContext]: ...

    def contains(self, context_id: str) -> bool: ...

    def delete(self, context_id: str) -> bool: ...

    def close(self) -> None: ...
