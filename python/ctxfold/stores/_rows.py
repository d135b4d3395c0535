"""What the store front (``Store``) and a database backend pass each other: one save's rows,
one load's rows, one listing entry. Plain data; the backends hold the SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

__all__ = ["Backend", "Read", "StoredContext", "StoredTail", "Write"]


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
    state: dict[str, Any]
    events: list[dict[str, Any]]


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


@dataclass(frozen=True)
class Read:
    """One load, read in one snapshot: the head, the state, the content entries as (hash,
    text) in order and the events as (seq, JSON text) in seq order; text as str or bytes."""

    head: int
    state: Any
    content: list[Any]
    events: list[Any]


class Backend(Protocol):
    """A database holding contexts. Every method may be called from any thread; each
    raises ``StoreError`` for a failure of the database."""

    def append(self, w: Write) -> bool:
        """Apply ``w`` in one transaction if the store's head is ``w.expected``; else write
        nothing and return False. The primary key (context, seq) refuses a seq written twice
        whatever the head says (``ConflictError``)."""
        ...

    def head(self, context_id: str) -> int | None: ...

    def peek(self, context_id: str) -> tuple[int, str] | None:
        """(head, state) of a context, in one indexed read; ``None`` when absent."""
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
