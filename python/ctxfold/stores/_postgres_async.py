"""The PostgreSQL backend of ``AsyncStore``: the same statements as the blocking backend
(``_postgres``), through psycopg 3's async connections, so an event loop never waits on the
database. Connections are pooled per store: a call takes an idle one (or opens one), and gives
it back when it is done, so concurrent tasks each have their own. A connection belongs to the
event loop that opened it; one left over from a loop that has ended is closed, not reused."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ..errors import ConflictError, StoreError
from ._postgres import (
    _CREATE,
    _HEAD_STATE,
    _HEADS_OF,
    _SCHEMA_LOCK,
    _utc,
    append_or_abort_statement,
    append_statement,
    save_statement,
    scan_statement,
    seq_taken,
    tail_read,
    tail_statement,
    trial_statements,
)
from ._postgres_session import BEGIN_SNAPSHOT, connect_async, one_trip_async
from ._rows import Read, Statement, StoredContext, Write, first_moved, listed
from ._schema import SCHEMA_VERSION, TABLES, check_existing

try:
    import psycopg
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("PostgreSQL stores need psycopg 3: pip install 'ctxfold[postgres]'") from e

__all__ = ["AsyncPostgresBackend"]

T = TypeVar("T")

_Con = psycopg.AsyncConnection[Any]


class AsyncPostgresBackend:
    def __init__(self, url: str, name: str) -> None:
        self._url = url
        self._name = name
        # (the loop that opened it, the connection): idle ones, and every open one.
        self._idle: list[tuple[asyncio.AbstractEventLoop, _Con]] = []
        self._open: set[_Con] = set()
        self._schema_ready = False

    # ---- connections -------------------------------------------------------------------

    async def _acquire(self) -> tuple[asyncio.AbstractEventLoop, _Con]:
        loop = asyncio.get_running_loop()
        while self._idle:
            owner, con = self._idle.pop()
            if owner is loop and not con.closed:
                return owner, con
            self._discard(con)
        con = await connect_async(self._url)
        self._open.add(con)
        try:
            if not self._schema_ready:
                await self._ensure_schema(con)
                self._schema_ready = True
        except BaseException:
            self._discard(con)
            raise
        return loop, con

    def _discard(self, con: _Con) -> None:
        """Close a connection without waiting (it may belong to a loop that has ended)."""
        self._open.discard(con)
        if not con.closed:
            con.pgconn.finish()

    async def _run(self, op: Callable[[_Con], Awaitable[T]]) -> T:
        """``op`` on a pooled connection; database errors become ``StoreError``. A
        connection that an error or a cancellation left mid-statement is closed, not reused."""
        try:
            owner, con = await self._acquire()
        except psycopg.Error as e:
            raise StoreError(f"{self._name}: {e}") from e
        clean = False
        try:
            result = await op(con)
            clean = True
            return result
        except psycopg.Error as e:
            clean = con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            raise StoreError(f"{self._name}: {e}") from e
        finally:
            if clean and not con.closed:
                self._idle.append((owner, con))
            else:
                self._discard(con)

    async def _ensure_schema(self, con: _Con) -> None:
        async with con.transaction():
            await con.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            cur = await con.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relkind IN ('r', 'p') "
                "AND c.relnamespace = current_schema()::regnamespace", (list(TABLES),))
            have = {r[0] for r in await cur.fetchall()}
            if not have:
                for statement in _CREATE:
                    await con.execute(statement)
                await con.execute("INSERT INTO ctxfold_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
                return
            cur = await con.execute("SELECT max(version) FROM ctxfold_schema")
            row = await cur.fetchone()
            check_existing(self._name, have, lambda: row)

    async def open(self) -> None:
        """Connect once, creating or checking the schema."""
        await self._run(_nothing)

    async def open_idle(self, count: int, statements: Sequence[Statement] = (),
                        saves: Sequence[Sequence[Statement]] = (), undo: Sequence[Statement] = ()) -> None:
        """As the blocking backend's ``open_idle``, for this event loop: ``count``
        connections at once (opened as needed, concurrently), each having run what the
        caller's first calls will (each statement prepared there, as the calls prepare
        theirs), in one transaction that leaves nothing."""
        tried = trial_statements(statements, saves, undo)

        async def run(con: _Con) -> None:
            for sql, params in tried:
                await con.execute(sql, params, prepare=True)

        # every call holds its connection until all have one: `count` connections
        await asyncio.gather(*(self._run(run) for _ in range(count)))

    # ---- the backend -------------------------------------------------------------------

    async def append(self, w: Write) -> bool:
        sql, params = append_statement(w)

        async def op(con: _Con) -> bool:
            row = await (await con.execute(sql, params)).fetchone()
            return row is not None and row[0] == 1

        try:
            return await self._run(op)
        except StoreError as e:
            if seq_taken(e.__cause__):
                raise ConflictError(f"context {w.id}: a seq from {w.expected} on is already stored") from e
            raise

    async def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None:
        """As the blocking backend's: the appends and the statements as one statement (or in
        one transaction), one round trip; the index of the first write whose head had moved,
        and nothing written."""
        one = save_statement(writes, statements)

        async def op(con: _Con) -> int | None:
            if not writes and not statements:
                return None
            try:
                if one is not None:  # one statement in autocommit is its own transaction
                    await con.execute(*one)
                    return None
                async with one_trip_async(con):
                    for w in writes:
                        await con.execute(*append_or_abort_statement(w))
                    for sql, params in statements:
                        await con.execute(sql, params)
            except psycopg.errors.DivisionByZero:
                heads = await (await con.execute(_HEADS_OF, ([w.id for w in writes],))).fetchall()
                moved = first_moved(writes, heads)
                if moved is None:
                    raise
                return moved
            return None

        try:
            return await self._run(op)
        except StoreError as e:
            if seq_taken(e.__cause__):
                raise ConflictError(" / ".join(f"context {w.id}: a seq from {w.expected} on is already stored"
                                               for w in writes)) from e
            raise

    async def head(self, context_id: str) -> int | None:
        row = await self._one("SELECT next_seq FROM ctxfold_contexts WHERE id = %s", context_id)
        return None if row is None else int(row[0])

    async def peek(self, context_id: str) -> tuple[int, str] | None:
        row = await self._one("SELECT next_seq, state FROM ctxfold_contexts WHERE id = %s", context_id)
        return None if row is None else (int(row[0]), row[1])

    async def _one(self, sql: str, *params: Any) -> Any:
        async def op(con: _Con) -> Any:
            return await (await con.execute(sql, params)).fetchone()

        return await self._run(op)

    async def read(self, context_id: str) -> Read | None:
        return await self.read_since(context_id, 0, 0)

    async def read_since(self, context_id: str, seq: int, ord: int) -> Read | None:
        async def op(con: _Con) -> Read | None:
            # One snapshot for the head and every row below it, in one round trip.
            async with one_trip_async(con, BEGIN_SNAPSHOT):
                head = await con.execute("SELECT next_seq, state FROM ctxfold_contexts WHERE id = %s", (context_id,))
                content = await con.execute("SELECT hash, text FROM ctxfold_content WHERE context_id = %s "
                                            "AND ord >= %s ORDER BY ord", (context_id, ord))
                events = await con.execute("SELECT seq, data FROM ctxfold_events WHERE context_id = %s "
                                           "AND seq >= %s ORDER BY seq", (context_id, seq))
            row = await head.fetchone()
            if row is None:
                return None
            return Read(head=int(row[0]), state=row[1], content=await content.fetchall(), events=await events.fetchall())

        return await self._run(op)

    async def tail(self, context_id: str, count: int, before: int | None) -> Read | None:
        sql, params = tail_statement(context_id, count, before)

        async def op(con: _Con) -> Read | None:
            # One snapshot for the head and the events below it, in one round trip.
            async with one_trip_async(con, BEGIN_SNAPSHOT):
                head = await con.execute(_HEAD_STATE, (context_id,))
                events = await con.execute(sql, params)
            return tail_read(await head.fetchone(), await events.fetchall())

        return await self._run(op)

    async def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, Any]]:
        sql, params = scan_statement(prefix, deps_key)

        async def op(con: _Con) -> list[Any]:
            return await (await con.execute(sql, params)).fetchall()

        rows: list[tuple[str, Any]] = await self._run(op)
        return rows

    async def list(self, limit: int, offset: int) -> list[StoredContext]:
        async def op(con: _Con) -> list[Any]:
            return await (await con.execute(
                "SELECT id, created_at, updated_at, next_seq, message_count, agent_name, origin_context_id "
                "FROM ctxfold_contexts ORDER BY updated_at DESC, id LIMIT %s OFFSET %s", (limit, offset))).fetchall()

        rows = await self._run(op)
        return [listed(r, _utc) for r in rows]

    async def contains(self, context_id: str) -> bool:
        return await self.head(context_id) is not None

    async def delete(self, context_id: str) -> bool:
        # Events and content go with the head row (ON DELETE CASCADE), in the same statement.
        async def op(con: _Con) -> bool:
            return (await con.execute("DELETE FROM ctxfold_contexts WHERE id = %s", (context_id,))).rowcount == 1

        return await self._run(op)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        idle, self._idle = self._idle, []
        for owner, con in idle:
            if owner is loop and not con.closed:
                self._open.discard(con)
                await con.close()
        self.close_now()

    def close_now(self) -> None:
        """Close every connection without waiting: for a close outside any event loop."""
        self._idle = []
        for con in list(self._open):
            self._discard(con)


async def _nothing(con: _Con) -> None:
    return None
