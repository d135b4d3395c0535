"""``ctxfold.AsyncStore``: the ``Store``'s methods as coroutines, for an agent that runs in an
event loop. PostgreSQL goes through psycopg's async connections; SQLite, whose driver blocks,
runs on a worker thread of the store's own. Either way the loop never waits on the database.
The steps around the database calls are the ones ``Store`` takes (``_front``), so both stores
write the same rows and refuse the same conflicts, and one database may be used by both."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Protocol, TypeVar

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
from ._rows import Read, Statement, StoredContext, StoredTail, Write
from ._store import reopening_url, where

__all__ = ["AsyncStore"]

T = TypeVar("T")


class _AsyncBackend(Protocol):
    async def open(self) -> None: ...
    async def append(self, w: Write) -> bool: ...
    async def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None: ...
    async def head(self, context_id: str) -> int | None: ...
    async def peek(self, context_id: str) -> tuple[int, str] | None: ...
    async def read(self, context_id: str) -> Read | None: ...
    async def read_since(self, context_id: str, seq: int, ord: int) -> Read | None: ...
    async def tail(self, context_id: str, count: int, before: int | None) -> Read | None: ...
    async def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, Any]]: ...
    async def list(self, limit: int, offset: int) -> list[StoredContext]: ...
    async def contains(self, context_id: str) -> bool: ...
    async def delete(self, context_id: str) -> bool: ...
    async def close(self) -> None: ...
    def close_now(self) -> None: ...


class _ThreadedSQLite:
    """The blocking SQLite backend on one worker thread of this store's: the file is opened
    there (on first use) and every statement runs there, one call at a time (SQLite has one
    writer per file anyway)."""

    def __init__(self, path: str, durable: bool) -> None:
        self._path, self._durable = path, durable
        self._backend: Any = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxfold-sqlite")

    def _db(self) -> Any:
        if self._backend is None:
            from ._sqlite import SQLiteBackend

            self._backend = SQLiteBackend(self._path, durable=self._durable)
        return self._backend

    async def _call(self, name: str, *args: Any) -> Any:
        def op() -> Any:
            return getattr(self._db(), name)(*args)

        return await asyncio.get_running_loop().run_in_executor(self._worker, op)

    async def open(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._worker, self._db)

    async def append(self, w: Write) -> bool:
        ok: bool = await self._call("append", w)
        return ok

    async def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None:
        refused: int | None = await self._call("append_with", writes, statements)
        return refused

    async def blocking(self, fn: Callable[[], T]) -> T:
        """``fn`` on this store's worker thread, in turn with the store's own calls."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn)

    async def head(self, context_id: str) -> int | None:
        h: int | None = await self._call("head", context_id)
        return h

    async def peek(self, context_id: str) -> tuple[int, str] | None:
        p: tuple[int, str] | None = await self._call("peek", context_id)
        return p

    async def read(self, context_id: str) -> Read | None:
        r: Read | None = await self._call("read", context_id)
        return r

    async def read_since(self, context_id: str, seq: int, ord: int) -> Read | None:
        r: Read | None = await self._call("read_since", context_id, seq, ord)
        return r

    async def tail(self, context_id: str, count: int, before: int | None) -> Read | None:
        r: Read | None = await self._call("tail", context_id, count, before)
        return r

    async def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = await self._call("scan", prefix, deps_key)
        return rows

    async def list(self, limit: int, offset: int) -> list[StoredContext]:
        rows: list[StoredContext] = await self._call("list", limit, offset)
        return rows

    async def contains(self, context_id: str) -> bool:
        return await self.head(context_id) is not None

    async def delete(self, context_id: str) -> bool:
        ok: bool = await self._call("delete", context_id)
        return ok

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close_now)

    def close_now(self) -> None:
        # After the calls already queued: the worker runs them in order.
        self._worker.shutdown(wait=True)
        if self._backend is not None:
            self._backend.close()


class AsyncStore:
    """``Store`` with coroutines: ``await store.save(ctx)``, ``await store.load(id)``, … —
    the same methods, arguments, results and errors. An async context manager::

        async with ctxfold.AsyncStore("postgresql://…") as store:
            await store.save(ctx)

    ``AsyncStore("sqlite:///path/sessions.db")`` (or a plain path) runs SQLite on a worker
    thread of the store's own; ``AsyncStore("postgresql://…")`` uses psycopg's async
    connections (``ctxfold[postgres]``), one per task at a time, pooled. Nothing is opened
    until the first call (or ``async with``). A ``Store`` and an ``AsyncStore`` on the same
    database are one store: a context saved through one may be loaded, refreshed and saved
    again through the other.

    Saving one Context from two tasks at once saves in turn, as ``Store`` does for threads. A
    save whose caller is cancelled runs to its end (the context then knows what was stored)."""

    def __init__(self, url: str | os.PathLike[str], *, durable: bool = False) -> None:
        self._name, kind, target = where(url)
        # What it was opened with (the password included), for code that opens a blocking
        # Store on the same database beside it, as durable as this one (``_opening.beside``).
        self._opened_as = (reopening_url(url), durable)
        self._backend: _AsyncBackend
        if kind == "postgres":
            from ._postgres_async import AsyncPostgresBackend

            self._backend = AsyncPostgresBackend(target, self._name)
        else:
            self._backend = _ThreadedSQLite(target, durable)
        self._closed = False
        # Per Context: its save lock, and the event loop that lock belongs to.
        self._saving: weakref.WeakKeyDictionary[Context, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = \
            weakref.WeakKeyDictionary()

    @property
    def url(self) -> str:
        """The store's URL, without a password (the same as ``Store(url).url``)."""
        return self._name

    @property
    def _db(self) -> _AsyncBackend:
        if self._closed:
            raise StoreError(f"{self._name}: the store is closed")
        return self._backend

    # ---- writing -----------------------------------------------------------------------

    async def save(self, ctx: Context) -> None:
        """As ``Store.save``: append the events the store lacks and write the context's state
        in one transaction, if the store's head for ``ctx.id`` is ``ctx.stored_seq``; else
        ``ConflictError`` and nothing written."""
        check_context(ctx)
        db = self._db
        loop = asyncio.get_running_loop()
        entry = self._saving.get(ctx)
        if entry is None or entry[0] is not loop:  # an asyncio.Lock belongs to one loop
            entry = self._saving[ctx] = (loop, asyncio.Lock())
        async with entry[1]:
            with ctx._lock:
                w = save_plan(self._name, ctx)
            if w is None:
                actual = stored_head(ctx.id, await db.head(ctx.id))
                if actual != ctx.stored_seq:
                    raise ConflictError(conflict_message(ctx.id, ctx.stored_seq, actual))
                return

            async def write(w: Write) -> bool:
                ok = await db.append(w)
                if ok:
                    saved(self._name, ctx, w)
                return ok

            # Shielded: once the write is sent, the context learns its outcome even if the
            # caller is cancelled, so it never believes less (or more) is stored than is.
            if not await asyncio.shield(write(w)):
                raise ConflictError(conflict_message(ctx.id, w.expected, stored_head(ctx.id, await db.head(ctx.id))))

    async def _save_with(self, contexts: Sequence[Context], statements: Sequence[Statement]) -> None:
        """As ``Store._save_with``: save ``contexts`` and run ``statements`` (the caller's own
        tables, in the backend's placeholder style) in one transaction, all of it or none;
        ``ConflictError`` when a context's head moved on. The caller saves one context from
        one task at a time (no per-context task lock here, unlike ``save``)."""
        db = self._db
        plans = []
        for ctx in contexts:
            check_context(ctx)
            with ctx._lock:
                w = save_plan(self._name, ctx)
            if w is not None:
                plans.append((ctx, w))

        async def write() -> int | None:
            refused = await db.append_with([w for _, w in plans], statements)
            if refused is None:
                for ctx, w in plans:
                    saved(self._name, ctx, w)
            return refused

        # Shielded, as save: once sent, the contexts learn the outcome even if the caller is cancelled.
        refused = await asyncio.shield(write())
        if refused is not None:
            ctx, w = plans[refused]
            raise ConflictError(conflict_message(ctx.id, w.expected, stored_head(ctx.id, await db.head(ctx.id))))

    async def _blocking(self, fn: Callable[[], T]) -> T:
        """A SQLite store's hook for code keeping tables beside it: ``fn`` (blocking, on its own
        connections) on the store's worker thread, in turn with the store's calls."""
        if not isinstance(self._backend, _ThreadedSQLite):
            raise TypeError("_blocking is for a SQLite AsyncStore")
        return await self._db_threaded().blocking(fn)

    async def _run_pg(self, op: Callable[[Any], Awaitable[T]]) -> T:
        """A PostgreSQL store's hook for code keeping tables beside it: ``op(connection)`` on
        one of the store's pooled async connections (autocommit; database errors become
        ``StoreError``, a connection an error left mid-statement is closed)."""
        db = self._db
        if isinstance(db, _ThreadedSQLite):
            raise TypeError("_run_pg is for a PostgreSQL AsyncStore")
        from ._postgres_async import AsyncPostgresBackend

        assert isinstance(db, AsyncPostgresBackend)
        return await db._run(op)

    async def _open_idle(self, count: int, statements: Sequence[Statement], saves: Sequence[Sequence[Statement]],
                         undo: Sequence[Statement]) -> None:
        """The hook for code that knows what its first calls will run (the LangGraph saver):
        on PostgreSQL, ``count`` of this event loop's connections opened, each having run
        ``statements``, ``saves`` and ``undo`` (see ``PostgresBackend.open_idle``); on SQLite,
        the store opened."""
        db = self._db
        if isinstance(db, _ThreadedSQLite):
            await db.open()
            return
        from ._postgres_async import AsyncPostgresBackend

        assert isinstance(db, AsyncPostgresBackend)
        await db.open_idle(count, statements, saves, undo)

    def _db_threaded(self) -> _ThreadedSQLite:
        db = self._db
        assert isinstance(db, _ThreadedSQLite)
        return db

    async def delete(self, context_id: str) -> None:
        """Remove a context and all its events. Unknown id → ``KeyError``."""
        if not await self._db.delete(check_id(context_id)):
            raise KeyError(context_id)

    # ---- reading -----------------------------------------------------------------------

    async def load(self, context_id: str) -> Context:
        """As ``Store.load``: the context as saved, with ``stored_seq`` set. Unknown id →
        ``KeyError``; a corrupt row → ``DecodeError`` naming the context and seq."""
        return loaded(self._name, context_id, await self._db.read(check_id(context_id)))

    async def head(self, context_id: str) -> int | None:
        """As ``Store.head``: the stored ``next_seq`` of a context, ``None`` when absent."""
        return stored_head(context_id, await self._db.head(check_id(context_id)))

    async def refresh(self, ctx: Context) -> int:
        """As ``Store.refresh``: apply the events other writers saved since
        ``ctx.stored_seq``; return how many. ``ConflictError`` when the store cannot catch
        ``ctx`` up; whatever is raised, ``ctx`` is left as it was."""
        check_context(ctx)
        db = self._db
        if not refresh_needed(self._name, ctx, await db.peek(ctx.id)):
            return 0
        seq, ord = refresh_from(ctx)
        expected = ctx.stored_seq
        r = await db.read_since(ctx.id, seq, ord)
        with ctx._lock:
            if ctx.stored_seq != expected or ctx.next_seq != expected:
                raise ConflictError(f"context {ctx.id} changed while it was being refreshed: refresh again")
            return refresh_apply(self._name, ctx, r)

    async def tail(self, context_id: str, count: int, *, before: int | None = None) -> StoredTail:
        """As ``Store.tail``: the last ``count`` stored events of a context below seq
        ``before`` (below its head when ``None``), with its head and persisted fields, in one
        snapshot, without loading the context. Unknown id → ``KeyError``."""
        check_tail(context_id, count, before)
        return stored_tail(context_id, await self._db.tail(context_id, count, before))

    async def scan(self, prefix: str) -> list[tuple[str, dict[str, Any]]]:
        """As ``Store.scan``: (id, persisted fields) of every context whose id starts with
        ``prefix``, without reading any event."""
        return scanned(await self._db.scan(check_prefix(prefix), None))

    async def scan_deps(self, prefix: str, key: str) -> list[tuple[str, str | None]]:
        """As ``Store.scan_deps``: (id, ``deps[key]`` when it is a str, else ``None``) of every
        context whose id starts with ``prefix``, extracted by the database."""
        check_scan_deps(prefix, key)
        return scanned_deps(await self._db.scan(prefix, key))

    async def list(self, limit: int = 100, offset: int = 0) -> list[StoredContext]:
        """The contexts, the most recently saved first."""
        check_page(limit, offset)
        return await self._db.list(limit, offset)

    async def contains(self, context_id: str) -> bool:
        """``context_id in store``, as a coroutine."""
        return isinstance(context_id, str) and await self._db.contains(context_id)

    # ---- lifetime ----------------------------------------------------------------------

    async def open(self) -> AsyncStore:
        """Connect now (creating or checking the schema) rather than on the first call."""
        await self._db.open()
        return self

    async def close(self) -> None:
        """Close the store's connections (or its worker thread). Closing twice is harmless."""
        if not self._closed:
            self._closed = True
            await self._backend.close()

    def _close_now(self) -> None:
        """``close`` for a caller outside any event loop (a blocking ``close()``)."""
        if not self._closed:
            self._closed = True
            self._backend.close_now()

    async def __aenter__(self) -> AsyncStore:
        return await self.open()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncStore({self._name!r})"
