"""``ctxfold.Store`` (SPEC §11): contexts kept as their event logs in a database, appended to,
never rewritten. SQLite (the embedded default) or PostgreSQL (``ctxfold[postgres]``)."""

from __future__ import annotations

import os
import re
import threading
from types import TracebackType

from .. import _core
from .._context import Context
from ..errors import ConflictError, DecodeError, StoreError
from ._rows import Backend, StoredContext, Write

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
        core, rt, versioned = _core.store_load(context_id, r.head, r.state, r.content, r.events)
        try:
            ctx = Context._from_loaded(core, rt, not versioned)
        except DecodeError as e:
            raise DecodeError(f"context {context_id}: {e}") from None
        ctx.stored_seq = r.head
        ctx._stored_state = (self._name, r.state.decode() if isinstance(r.state, bytes) else r.state)
        return ctx

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
