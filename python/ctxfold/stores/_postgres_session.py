"""ctxfold's PostgreSQL sessions: how a connection is opened (statements prepared at once and
planned generically), and a transaction in one round trip, for the blocking and the async
connections.

``BEGIN``, the statements and ``COMMIT`` go out pipelined and are synced once. psycopg's own
``transaction()`` inside a pipeline syncs when it opens and when it closes, so the same
transaction costs three round trips: two inserts took 518 µs that way and 199 µs this way on a
local server (one insert in autocommit: 129 µs).

A statement that fails makes the server skip the rest up to the sync, ``COMMIT`` included, and
leaves the transaction aborted; so does an exception raised by the caller's code before the
``COMMIT`` was queued (the statements already queued still reach the server at the sync).
Either way the transaction is rolled back here before the exception goes on, and the connection
is idle again. A statement's error can come back while later statements are still being queued;
it is held until the pipeline has ended and raised then, so psycopg never ends a pipeline over
a raised error (which it reports as a warning of its own). An interruption
(``KeyboardInterrupt``, a task cancelled) is not waited on: the connection is left as it is,
not idle, and the store closes it instead of reusing it. Results are read after the block:
reading one inside it would force a sync early.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg

__all__ = ["BEGIN", "BEGIN_SNAPSHOT", "PREPARE_AT", "Connection", "connect", "connect_async", "one_trip", "one_trip_async"]

BEGIN = "BEGIN"
# A read of several statements that see one snapshot of the database.
BEGIN_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"

_IDLE = psycopg.pq.TransactionStatus.IDLE

# Every statement ctxfold runs (the store's, the LangGraph saver's) is a lookup by a key or a
# range of one, whose best plan does not depend on the values. So a statement is prepared at
# its first run (psycopg's default: the sixth) and planned once, generically (PostgreSQL's
# default re-plans a prepared statement for each of its first five runs). Planning the guarded
# append alone took 246 µs of its 466 µs a run before, and the first ten turns of a LangGraph
# thread went from 11–12 to 7–9 ms of checkpoint work (pg_stat_statements, local server).
PREPARE_AT = 0
_GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
_PLAN_CACHE_MODE_SINCE = 120000  # PostgreSQL 12


class Connection(psycopg.Connection[Any]):
    """A psycopg connection that keeps one cursor for the statements whose rows are read at
    once (``run``): ``Connection.execute`` makes a cursor per statement, which cost about 30 µs
    of CPU a statement, as much as sending it (a local server)."""

    _kept: psycopg.Cursor[Any] | None = None

    def run(self, query: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor[Any]:
        """``execute`` on the kept cursor: its rows must be read before the next ``run``.
        Not for statements queued in a pipeline (each keeps its own cursor until the sync)."""
        cur = self._kept
        if cur is None or cur.closed:
            cur = self._kept = self.cursor()
        return cur.execute(query, params)


def connect(url: str) -> Connection:
    """A connection for ctxfold's statements: autocommit (every transaction is begun
    explicitly), prepared at once, planned generically."""
    con = Connection.connect(url, autocommit=True, prepare_threshold=PREPARE_AT)
    try:
        if con.info.server_version >= _PLAN_CACHE_MODE_SINCE:
            con.execute(_GENERIC_PLANS)
    except BaseException:
        con.close()
        raise
    return con


async def connect_async(url: str) -> psycopg.AsyncConnection[Any]:
    """``connect`` for the async connections."""
    con = await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=PREPARE_AT)
    try:
        if con.info.server_version >= _PLAN_CACHE_MODE_SINCE:
            await con.execute(_GENERIC_PLANS)
    except BaseException:
        await con.close()
        raise
    return con


@contextmanager
def one_trip(con: psycopg.Connection[Any], begin: str = BEGIN) -> Iterator[None]:
    """The statements run in the block as one transaction, sent in one round trip."""
    failed: psycopg.Error | None = None
    try:
        with con.pipeline():
            try:
                con.execute(begin)
                yield
                con.execute("COMMIT")
            except psycopg.Error as e:
                # A statement's error can come back while later ones are still being queued.
                # Held until the pipeline has ended: ended over a raised error, psycopg would
                # log its own failure to sync ("error ignored terminating …") as a warning.
                failed = e
    except psycopg.Error as e:  # found at the pipeline's sync (or: aborted, after `failed`)
        failed = failed or e
    except Exception:
        _rollback(con)
        raise
    if failed is not None:
        _rollback(con)
        raise failed


def _rollback(con: psycopg.Connection[Any]) -> None:
    # The driver's rollback, not a ROLLBACK statement: it also forgets the statements psycopg
    # prepared on the connection (one whose preparation the aborted pipeline skipped would be
    # "does not exist" at its next use) and deallocates them on the server.
    if not con.closed and con.info.transaction_status != _IDLE:
        try:
            con.rollback()
        except psycopg.Error:  # the connection broke: it is not reused (not idle)
            pass


@asynccontextmanager
async def one_trip_async(con: psycopg.AsyncConnection[Any], begin: str = BEGIN) -> AsyncIterator[None]:
    """``one_trip`` on an async connection."""
    failed: psycopg.Error | None = None
    try:
        async with con.pipeline():
            try:
                await con.execute(begin)
                yield
                await con.execute("COMMIT")
            except psycopg.Error as e:
                failed = e
    except psycopg.Error as e:
        failed = failed or e
    except Exception:
        await _rollback_async(con)
        raise
    if failed is not None:
        await _rollback_async(con)
        raise failed


async def _rollback_async(con: psycopg.AsyncConnection[Any]) -> None:
    if not con.closed and con.info.transaction_status != _IDLE:
        try:
            await con.rollback()  # as _rollback
        except psycopg.Error:
            pass
