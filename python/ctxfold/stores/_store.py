"""``ctxfold.Store`` (SPEC §11): contexts kept as their event logs in a database, appended to,
never rewritten. SQLite (the embedded default) or PostgreSQL (``ctxfold[postgres]``)."""

from __future__ import annotations

import os
import re
import threading
from types import SimpleNamespace, TracebackType
from typing import Any

from .. import _core, _runtime
from .._context import Context
from ..errors import ConflictError, DecodeError, StoreError
from ._rows import Backend, StoredContext, Write, count_column

__all__ = ["Store"]

_POSTGRES = ("postgresql://", "postgres://")


def _open(url: str | os.PathLike[str], durable: bool) -> tuple[str, Backend]:
    """(the store's name, its backend) from a URL or a path."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise TypeError(f"a store URL must be a str or a path, got {type(url).__name__}")
    if url.startswith(_POSTGRES):
        from ._postgres import PostgresBackend

        # The name shown and used as the store's identity, without a password.
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url), PostgresBackend(url)
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
        if path.startswith("//"):  # sqlite:///abs/path, as file:///abs/path
            path = path[2:]
    elif "://" in url:
        raise ValueError(f"unknown store URL {url!r}: use sqlite:///path, a plain path, or postgresql://…")
    else:
        path = url
    if path in ("", ":memory:"):
        raise ValueError("a SQLite store needs a file (each thread has its own connection)")
    from ._sqlite import SQLiteBackend

    path = os.path.abspath(path)
    return f"sqlite://{path}", SQLiteBackend(path, durable=durable)


def _fields_of(context_id: str, runtime: dict[str, Any]) -> SimpleNamespace:
    """The runtime fields of a stored state, read and checked as a load reads them."""
    fields = SimpleNamespace()
    try:
        _runtime.load(fields, runtime, False)
    except DecodeError as e:
        raise DecodeError(f"context {context_id}: {e}") from None
    return fields


def _text(column: str | bytes) -> str:
    return column.decode() if isinstance(column, bytes) else column


class Store:
    """Contexts kept as their event logs: ``save`` appends only what the store lacks.

    ``Store("sqlite:///path/sessions.db")`` or ``Store("sessions.db")`` is SQLite (WAL; with
    ``durable=True`` every commit is fsynced); ``Store("postgresql://…")`` is PostgreSQL.
    Threads may share a Store (each thread gets its own connection); processes open their
    own. A context manager."""

    def __init__(self, url: str | os.PathLike[str], *, durable: bool = False) -> None:
        self._name, self._backend = _open(url, durable)
        self._closed = False
        self._close_lock = threading.Lock()

    @property
    def url(self) -> str:
        return self._name

    @property
    def _db(self) -> Backend:
        if self._closed:
            raise StoreError(f"{self._name}: the store is closed")
        return self._backend

    # ---- writing -----------------------------------------------------------------------

    def save(self, ctx: Context) -> None:
        """In one transaction, append the events the store lacks and write the context's
        state, if the store's head for ``ctx.id`` is ``ctx.stored_seq``; else
        ``ConflictError`` and nothing written. Nothing new: nothing written."""
        if not isinstance(ctx, Context):
            raise TypeError(f"expected a Context, got {type(ctx).__name__}")
        # Held across the write, so that one Context saved from two threads is two saves in
        # turn, not a conflict with itself.
        with ctx._lock:
            expected = ctx.stored_seq
            head, count, state, events, content = _core.store_rows(ctx._core, expected, ctx._runtime())
            if expected == head and ctx._stored_state == (self._name, state):
                return
            ok = self._db.append(Write(
                id=ctx.id, expected=expected, head=head, state=state, created_at=ctx.created_at,
                message_count=count, agent_name=ctx.agent_name, origin_context_id=ctx.origin_context_id,
                events=events, content=content,
            ))
            if not ok:
                raise ConflictError(self._conflict(ctx.id, expected))
            ctx.stored_seq = head
            ctx._stored_state = (self._name, state)

    def _conflict(self, context_id: str, expected: int | None) -> str:
        actual = self._db.head(context_id)
        if expected is None:
            return (f"context {context_id} is already in the store (at seq {actual}) and this one did not "
                    "come from it: load it from the store, or give the new context another id")
        if actual is None:
            return (f"context {context_id} is not in the store, but ctx.stored_seq is {expected}: it was "
                    "deleted, or saved to another store (set ctx.stored_seq = None to save it here anew)")
        return (f"context {context_id}: the store is at seq {actual}, this context was saved or loaded at "
                f"seq {expected}: another writer saved first; reload, redo the turn, save again")

    def delete(self, context_id: str) -> None:
        """Remove a context and all its events. Unknown id → ``KeyError``."""
        if not self._db.delete(context_id):
            raise KeyError(context_id)

    # ---- reading -----------------------------------------------------------------------

    def load(self, context_id: str) -> Context:
        """The context as saved, with ``stored_seq`` set. Unknown id → ``KeyError``; a
        corrupt row → ``DecodeError`` naming the context and seq."""
        if not isinstance(context_id, str):
            raise TypeError(f"a context id is a str, got {type(context_id).__name__}")
        r = self._db.read(context_id)
        if r is None:
            raise KeyError(context_id)
        head = count_column(context_id, "next_seq", r.head)
        core, rt, versioned = _core.store_load(context_id, head, r.state, r.content, r.events)
        try:
            ctx = Context._from_loaded(core, rt, not versioned)
        except DecodeError as e:
            raise DecodeError(f"context {context_id}: {e}") from None
        ctx.stored_seq = head
        ctx._stored_state = (self._name, _text(r.state))
        return ctx

    def head(self, context_id: str) -> int | None:
        """The stored ``next_seq`` of a context (how many of its events the store holds), in
        one indexed read; ``None`` when the store does not hold it. Our extension of SPEC §11."""
        if not isinstance(context_id, str):
            raise TypeError(f"a context id is a str, got {type(context_id).__name__}")
        head = self._db.head(context_id)
        return None if head is None else count_column(context_id, "next_seq", head)

    def refresh(self, ctx: Context) -> int:
        """Bring ``ctx``, saved to or loaded from this store, up to what the store holds now:
        apply the events other writers saved since ``ctx.stored_seq`` through the same checks
        as ``load``, and the state saved with them; return how many events were applied. The
        result equals ``load(ctx.id)``, at the cost of what is new (nothing new: one indexed
        read). Our extension of SPEC §11 (``docs/store.md``).

        ``ConflictError`` when the store cannot catch ``ctx`` up: ``ctx`` did not come from
        this store, the stored context was deleted or is another one under the same id, or
        ``ctx`` holds unsaved events while the store moved on. A corrupt row → ``DecodeError``
        naming the context and seq. Whatever is raised, ``ctx`` is left as it was."""
        if not isinstance(ctx, Context):
            raise TypeError(f"expected a Context, got {type(ctx).__name__}")
        with ctx._lock:
            expected, stored = ctx.stored_seq, ctx._stored_state
            if expected is None or stored is None or stored[0] != self._name:
                raise ConflictError(f"context {ctx.id} was not saved to or loaded from {self._name}: load it "
                                    "from the store instead")
            peek = self._db.peek(ctx.id)
            if peek is None:
                raise ConflictError(f"context {ctx.id} is not in the store any more (deleted): nothing to "
                                    "catch up with")
            if count_column(ctx.id, "next_seq", peek[0]) == expected and _text(peek[1]) == stored[1]:
                return 0
            if ctx.next_seq != expected:  # the quick answer; the core decides under its lock
                raise ConflictError(f"context {ctx.id} holds unsaved events from seq {expected} on, and the "
                                    f"store moved on (to seq {peek[0]}): reload and redo them, or rewind them")
            # The last event both should share comes too: it is the test of lineage.
            r = self._db.read_since(ctx.id, max(expected - 1, 0), len(ctx._core.content_map))
            if r is None:
                raise ConflictError(f"context {ctx.id} is not in the store any more (deleted)")
            head = count_column(ctx.id, "next_seq", r.head)
            # One step in the core, under the context's lock: the rows are checked against the
            # context as it is (an append racing this refresh is seen, not misread as a bad
            # row), the runtime fields are read by `fields_of`, and only then is anything applied.
            # `check` runs while the core holds the context: it must not touch `ctx`.
            cid = ctx.id
            done = _core.store_refresh(ctx._core, expected, head, r.state, r.content, r.events,
                                       lambda rt: _fields_of(cid, rt))
            if isinstance(done, str):
                raise ConflictError(f"context {ctx.id}: {done}")
            applied, fields = done
            for f in _runtime.PERSISTED:
                setattr(ctx, f.name, getattr(fields, f.name))
            ctx.stored_seq = head
            ctx._stored_state = (self._name, _text(r.state))
            return applied

    def list(self, limit: int = 100, offset: int = 0) -> list[StoredContext]:
        """The contexts, the most recently saved first."""
        for name, v in (("limit", limit), ("offset", offset)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} must be an int")
            if v < 0:
                raise ValueError(f"{name} must be non-negative, got {v}")
        return self._db.list(limit, offset)

    def __contains__(self, context_id: object) -> bool:
        return isinstance(context_id, str) and self._db.contains(context_id)

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        with self._close_lock:
            if not self._closed:
                self._closed = True
                self._backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self._name!r})"
