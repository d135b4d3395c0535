"""``ctxfold.Store``: contexts kept as their event logs in a database, appended to,
never rewritten. SQLite (the embedded default) or PostgreSQL (``ctxfold[postgres]``)."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from types import TracebackType
from typing import Any

from .._context import Context
from ..errors import ConflictError, StoreError
from ._front import (
    check_context,
    check_id,
    check_page,
    check_prefix,
    check_scan_deps,
    check_tail,
    conflict_message,
    loaded,
    refresh_apply,
    refresh_from,
    refresh_needed,
    save_plan,
    saved,
    scanned,
    scanned_deps,
    stored_head,
    stored_tail,
)
from ._rows import Backend, Statement, StoredContext, StoredTail

__all__ = ["Store"]

_POSTGRES = ("postgresql://", "postgres://")


def where(url: str | os.PathLike[str]) -> tuple[str, str, str]:
    """(the store's name, ``"postgres"`` or ``"sqlite"``, the connection URL or the file's
    absolute path) from a store URL or a path."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise TypeError(f"a store URL must be a str or a path, got {type(url).__name__}")
    if url.startswith(_POSTGRES):
        # The name shown and used as the store's identity, without a password.
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url), "postgres", url
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
        if path.startswith("//"):  # sqlite:///abs/path, as file:///abs/path
            path = path[2:]
            # ... but sqlite:///./x.db and sqlite:///../x.db are SQLAlchemy's relative paths (the
            # form ADK's and LangChain's docs use): read as written there, not as /x.db.
            if path.startswith(("/./", "/../")):
                path = path[1:]
    elif "://" in url:
        raise ValueError(f"unknown store URL {url!r}: use sqlite:///path, a plain path, or postgresql://…")
    else:
        path = url
    if path in ("", ":memory:"):
        raise ValueError("a SQLite store needs a file (the store opens several connections)")
    path = os.path.abspath(path)
    return f"sqlite://{path}", "sqlite", path


def reopening_url(url: str | os.PathLike[str]) -> str:
    """The URL that opens ``url``'s database again from any working directory: a SQLite path
    made absolute (``sqlite:///abs/path``), a PostgreSQL URL as given (its password kept)."""
    name, kind, target = where(url)
    return target if kind == "postgres" else name


def _open(url: str | os.PathLike[str], durable: bool) -> tuple[str, Backend]:
    """(the store's name, its backend) from a URL or a path."""
    name, kind, target = where(url)
    if kind == "postgres":
        from ._postgres import PostgresBackend

        return name, PostgresBackend(target)
    from ._sqlite import SQLiteBackend

    return name, SQLiteBackend(target, durable=durable)


class Store:
    """Contexts kept as their event logs: ``save`` appends only what the store lacks.

    ``Store("sqlite:///path/sessions.db")`` or ``Store("sessions.db")`` is SQLite (WAL; with
    ``durable=True`` every commit is fsynced); ``Store("postgresql://…")`` is PostgreSQL.
    Threads may share a Store (its connections are pooled: one per call running at once);
    processes open their own. A context manager."""

    def __init__(self, url: str | os.PathLike[str], *, durable: bool = False) -> None:
        self._name, self._backend = _open(url, durable)
        # What it was opened with (the password included), for code that opens an AsyncStore on
        # the same database beside it, as durable as this one (``_opening.beside``).
        self._opened_as = (reopening_url(url), durable)
        self._closed = False
        self._close_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The store's name: ``sqlite:///abs/path`` or the PostgreSQL URL without its password."""
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
        ``ConflictError`` and nothing written (a context deleted from the store since is a
        conflict too). Nothing new: nothing written."""
        check_context(ctx)
        # Held across the write, so that one Context saved from two threads is two saves in
        # turn, not a conflict with itself.
        with ctx._lock:
            w = save_plan(self._name, ctx)
            if w is None:
                actual = stored_head(ctx.id, self._db.head(ctx.id))
                if actual != ctx.stored_seq:
                    raise ConflictError(conflict_message(ctx.id, ctx.stored_seq, actual))
                return
            if not self._db.append(w):
                raise ConflictError(conflict_message(ctx.id, w.expected, stored_head(ctx.id, self._db.head(ctx.id))))
            saved(self._name, ctx, w)

    def _save_with(self, contexts: Sequence[Context], statements: Sequence[Statement]) -> None:
        """The hook for code that keeps tables of its own beside the store's (the LangGraph
        saver's checkpoint rows): save each of ``contexts`` as ``save`` does and run
        ``statements`` — (SQL, parameters) in the backend's placeholder style, SQLite ``?``,
        PostgreSQL ``%s`` — in the same transaction, on the store's own connection: all of it
        or none. A context with nothing new is skipped (its head is not checked). A context
        whose head moved on refuses the whole transaction: ``ConflictError``, nothing written,
        every context left as it was."""
        plans = []
        with ExitStack() as locks:
            for ctx in contexts:
                check_context(ctx)
                locks.enter_context(ctx._lock)
                w = save_plan(self._name, ctx)
                if w is not None:
                    plans.append((ctx, w))
            refused = self._db.append_with([w for _, w in plans], statements)
            if refused is not None:
                ctx, w = plans[refused]
                raise ConflictError(conflict_message(ctx.id, w.expected, stored_head(ctx.id, self._db.head(ctx.id))))
            for ctx, w in plans:
                saved(self._name, ctx, w)

    def delete(self, context_id: str) -> None:
        """Remove a context and all its events. Unknown id → ``KeyError``."""
        if not self._db.delete(context_id):
            raise KeyError(context_id)

    # ---- reading -----------------------------------------------------------------------

    def load(self, context_id: str) -> Context:
        """The context as saved, with ``stored_seq`` set. Unknown id → ``KeyError``; a
        corrupt row → ``DecodeError`` naming the context and seq."""
        check_id(context_id)
        return loaded(self._name, context_id, self._db.read(context_id))

    def head(self, context_id: str) -> int | None:
        """The stored ``next_seq`` of a context (how many of its events the store holds), in
        one indexed read; ``None`` when the store does not hold it."""
        return stored_head(context_id, self._db.head(check_id(context_id)))

    def refresh(self, ctx: Context) -> int:
        """Bring ``ctx``, saved to or loaded from this store, up to what the store holds now:
        apply the events other writers saved since ``ctx.stored_seq`` through the same checks
        as ``load``, and the state saved with them; return how many events were applied. The
        result equals ``load(ctx.id)``, at the cost of what is new (nothing new: one indexed
        read). See ``docs/store.md``.

        ``ConflictError`` when the store cannot catch ``ctx`` up: ``ctx`` did not come from
        this store, the stored context was deleted or is another one under the same id, or
        ``ctx`` holds unsaved events while the store moved on. A corrupt row → ``DecodeError``
        naming the context and seq. Whatever is raised, ``ctx`` is left as it was."""
        check_context(ctx)
        with ctx._lock:
            if not refresh_needed(self._name, ctx, self._db.peek(ctx.id)):
                return 0
            seq, ord = refresh_from(ctx)
            return refresh_apply(self._name, ctx, self._db.read_since(ctx.id, seq, ord))

    def tail(self, context_id: str, count: int, *, before: int | None = None) -> StoredTail:
        """The last ``count`` stored events of a context below seq ``before`` (below its head
        when ``None``), read together with its head and persisted fields in one snapshot,
        without loading the context: O(count) rows, whatever the context's length. Events are
        their JSON objects as saved (the event layout of ``docs/format.md``), oldest first;
        ``state`` is the context's persisted fields (``deps``, ``agent_name``, …) as saved.
        Unknown id → ``KeyError``. For readers of a recent window (``docs/store.md``)."""
        check_tail(context_id, count, before)
        return stored_tail(context_id, self._db.tail(context_id, count, before))

    def scan(self, prefix: str) -> list[tuple[str, dict[str, Any]]]:
        """(id, persisted fields) of every context whose id starts with ``prefix``, in no
        particular order, without reading any event: for services that keep a family of
        contexts under one id prefix and list them by their own fields. See
        ``docs/store.md``."""
        return scanned(self._db.scan(check_prefix(prefix), None))

    def scan_deps(self, prefix: str, key: str) -> list[tuple[str, str | None]]:
        """(id, ``deps[key]``) of every context whose id starts with ``prefix``, where that
        value is a str (else ``None``; ``key``: letters, digits and ``_``), extracted by the database: the rest of each context's
        fields is never decoded, so listing thousands costs little more than reading the
        strings. See ``docs/store.md``."""
        check_scan_deps(prefix, key)
        return scanned_deps(self._db.scan(prefix, key))

    def list(self, limit: int = 100, offset: int = 0) -> list[StoredContext]:
        """The contexts, the most recently saved first."""
        check_page(limit, offset)
        return self._db.list(limit, offset)

    def __contains__(self, context_id: object) -> bool:
        return isinstance(context_id, str) and self._db.contains(context_id)

    # ---- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the store's connections; later calls raise ``StoreError``. Closing twice is fine."""
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
