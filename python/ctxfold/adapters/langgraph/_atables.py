"""The checkpoint tables for the saver's async methods: PostgreSQL on the AsyncStore's own pool
of async connections, SQLite on the AsyncStore's own worker thread (the blocking tables' calls,
in turn with the store's). The SQL is the blocking tables' (``_tables``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...stores import AsyncStore
from ._tables import (
    CheckpointRow,
    Tables,
    _row,
    _write_row,
    q_blobs,
    q_checkpoint,
    q_checkpoints,
    q_writes,
    writes_statements,
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

    # ---- running -------------------------------------------------------------------------

    async def _blocking(self, fn: Callable[[], T]) -> T:
        return await self._store._blocking(fn)

    async def _pg_read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        async def op(con: Any) -> list[Any]:
            cur = await con.execute(sql.replace("?", "%s"), tuple(params), prepare=True)
            rows: list[Any] = await cur.fetchall()
            return rows

        return await self._store._run_pg(op)

    # ---- the calls ---------------------------------------------------------------------------

    async def checkpoint(self, thread_id: str, ns: str, checkpoint_id: str | None) -> CheckpointRow | None:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.checkpoint(thread_id, ns, checkpoint_id))
        rows = await self._pg_read(*q_checkpoint(thread_id, ns, checkpoint_id))
        return _row(rows[0]) if rows else None

    async def checkpoints(self, thread_id: str | None, ns: str | None, checkpoint_id: str | None,
                          before: str | None, limit: int | None = None) -> list[CheckpointRow]:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.checkpoints(thread_id, ns, checkpoint_id, before, limit))
        return [_row(r) for r in await self._pg_read(*q_checkpoints(thread_id, ns, checkpoint_id, before, limit))]

    async def blobs(self, thread_id: str, ns: str, versions: dict[str, Any]) -> list[tuple[str, str, bytes]]:
        if self._pg is None:
            return await self._blocking(lambda: self._tables.blobs(thread_id, ns, versions))
        if not versions:
            return []
        return [(r[0], r[1], bytes(r[2])) for r in await self._pg_read(*q_blobs(thread_id, ns, versions, True))]

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
        statements = writes_statements(True, thread_id, ns, checkpoint_id, task_id, task_path, rows, replace)

        async def op(con: Any) -> None:
            from ...stores._postgres_session import one_trip_async  # (psycopg only with PostgreSQL)

            if len(statements) == 1:  # in autocommit: its own transaction, one round trip
                await con.execute(*statements[0], prepare=True)
                return
            async with one_trip_async(con):
                for sql, params in statements:
                    await con.execute(sql, params, prepare=True)

        await self._store._run_pg(op)
