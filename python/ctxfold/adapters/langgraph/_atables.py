"""The checkpoint tables for the saver's async methods: PostgreSQL through psycopg's async
connections (pooled per event loop, as the AsyncStore's), SQLite on the AsyncStore's own worker
thread (the blocking tables' calls, in turn with the store's). The SQL is the blocking tables'
(``_tables``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ...errors import StoreError
from ...stores import AsyncStore
from ._tables import (
    PREPARE_AT,
    CheckpointRow,
    Tables,
    _row,
    _write_row,
    pg_writes,
    q_blobs,
    q_checkpoint,
    q_checkpoints,
    q_writes,
)

__all__ = ["AsyncTables"]

T = TypeVar("T")


class AsyncTables:
    """The reads and the pending writes of the async hot path (``aget_tuple``, ``alist``,
    ``aput``'s parent, ``aput_writes``). ``tables``: the blocking tables on the same database;
    ``store``: the AsyncStore the saver's logs are in."""

    def __init__(self, tables: Tables, store: AsyncStore) -> None:
        self._tables = tables
        self._store = store
        self._pg = tables._pg
        self._idle: list[tuple[asyncio.AbstractEventLoop, Any]] = []
        self._all: set[Any] = set()

    # ---- running -------------------------------------------------------------------------

    async def _blocking(self, fn: Callable[[], T]) -> T:
        return await self._store._blocking(fn)

    async def _pg_run(self, op: Callable[[Any], Awaitable[T]]) -> T:
        import psycopg

        loop = asyncio.get_running_loop()
        con = None
        while self._idle:
            owner, c = self._idle.pop()
            if owner is loop and not c.closed:
                con = c
                break
            self._discard(c)
        try:
            if con is None:
                assert self._pg is not None
                con = await psycopg.AsyncConnection.connect(self._pg, autocommit=True, prepare_threshold=PREPARE_AT)
                self._all.add(con)
        except psycopg.Error as e:
            raise StoreError(f"langgraph checkpoints: {e}") from e
        clean = False
        try:
            result = await op(con)
            clean = True
            return result
        except psycopg.Error as e:
            clean = con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            raise StoreError(f"langgraph checkpoints: {e}") from e
        finally:
            if clean and not con.closed:
                self._idle.append((loop, con))
            else:
                self._discard(con)

    def _discard(self, con: Any) -> None:
        """Close a connection without waiting (its event loop may have ended)."""
        self._all.discard(con)
        if not con.closed:
            con.pgconn.finish()

    async def _pg_read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        async def op(con: Any) -> list[Any]:
            cur = await con.execute(sql.replace("?", "%s"), tuple(params))
            rows: list[Any] = await cur.fetchall()
            return rows

        return await self._pg_run(op)

    def close_now(self) -> None:
        self._idle = []
        for con in list(self._all):
            self._discard(con)

    # ---- the calls ---------------------------------------------------------------------------

    async def checkpoint(self, thread_id: str, ns: str, checkpoint_id: str | None) -> CheckpointRow | None:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.checkpoint(thread_id, ns, checkpoint_id))
        rows = await self._pg_read(*q_checkpoint(thread_id, ns, checkpoint_id))
        return _row(rows[0]) if rows else None

    async def checkpoints(self, thread_id: str | None, ns: str | None, checkpoint_id: str | None,
                          before: str | None) -> list[CheckpointRow]:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.checkpoints(thread_id, ns, checkpoint_id, before))
        return [_row(r) for r in await self._pg_read(*q_checkpoints(thread_id, ns, checkpoint_id, before))]

    async def blobs(self, thread_id: str, ns: str, versions: dict[str, Any]) -> list[tuple[str, str, bytes]]:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.blobs(thread_id, ns, versions))
        if not versions:
            return []
        return [(r[0], r[1], bytes(r[2])) for r in await self._pg_read(*q_blobs(thread_id, ns, versions))]

    async def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[tuple[str, str, str, bytes, str, int]]:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.writes(thread_id, ns, checkpoint_id))
        return [_write_row(r) for r in await self._pg_read(*q_writes(thread_id, ns, checkpoint_id))]

    async def put_writes(self, thread_id: str, ns: str, checkpoint_id: str, task_id: str, task_path: str,
                         rows: Sequence[tuple[int, str, str, bytes]], replace: bool) -> None:
        if self._pg is None:
            await self._blocking(lambda: self._tables.put_writes(thread_id, ns, checkpoint_id, task_id, task_path,
                                                                 rows, replace))
            return
        sql, params = pg_writes(thread_id, ns, checkpoint_id, task_id, task_path, rows, replace)

        async def op(con: Any) -> None:
            await con.execute(sql, params)

        await self._pg_run(op)
