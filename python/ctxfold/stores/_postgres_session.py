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

import functools
import re
import select
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import PyFormat, Transformer

__all__ = ["BEGIN", "BEGIN_SNAPSHOT", "PREPARE_AT", "Connection", "Rows", "connect", "connect_async", "one_trip",
           "one_trip_async"]

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


class Rows:
    """The rows of a statement ``Connection.run`` ran, read already."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows


class Connection(psycopg.Connection[Any]):
    """A psycopg connection with a shorter way for one statement in autocommit (``run``): the
    saves, the LangGraph saver's rows and every read of one statement.

    ``run`` prepares the statement once per connection and runs it with libpq's blocking
    ``PQexecPrepared``, which lets go of the interpreter once, for the whole round trip.
    psycopg's ``execute`` makes a cursor, then sends and waits in steps, letting go of it
    several times; each time, another thread of the process that runs Python can take it (the
    graph's, for the LangGraph saver, whose calls run on LangGraph's background threads), and
    the statement then waits until it is given back. A LangGraph turn's checkpoint calls,
    replayed, took 1.4 ms of CPU this way against 1.5–1.8 ms through psycopg's cursor
    (``benches/langgraph_checkpoints.py --replay``). The parameters are adapted by psycopg's
    own ``Transformer``, as ``execute`` adapts them, and errors are psycopg's.

    While the round trip lasts, a signal (Ctrl-C) waits for it: ctxfold's statements are short,
    and the longest wait is for another writer's lock on the same row."""

    # (statement text, parameter types) → its name; not psycopg's own prepared statements
    _ctxfold_names: dict[tuple[bytes, tuple[int, ...]], bytes] | None = None

    def run(self, query: str, params: Sequence[Any] = ()) -> Rows:
        """One statement in autocommit, its rows read at once. ``query`` has positional
        placeholders only: ``%s``, or ``%b`` for a parameter sent in binary."""
        text, formats = _numbered(query)
        tx = Transformer(self)
        values = tx.dump_sequence(params, formats) if params else None
        types = tuple(tx.types or ())
        wire_formats = tx.formats if params else None
        for attempt in (0, 1):
            names = self._ctxfold_names
            if names is None:
                names = self._ctxfold_names = {}
            name = names.get((text, types))
            if name is None:
                result = self._prepare_and_run(names, text, types, values, wire_formats)
            else:
                # (None, a NULL, is what psycopg's own cursor passes too; the stub says bytes only)
                result = self.pgconn.exec_prepared(name, values, wire_formats)  # type: ignore[arg-type]
            if result.status in _DONE:
                break
            # (a DEALLOCATE ALL, which psycopg sends on a rollback, drops every prepared
            # statement of the session: prepare again, once)
            if attempt == 0 and result.error_field(_SQLSTATE) == _NO_SUCH_STATEMENT:
                self._ctxfold_names = None
                continue
            raise self._error(result)
        if not result.ntuples:
            return Rows([])
        tx.set_pgresult(result)
        return Rows(tx.load_rows(0, result.ntuples, tuple))

    def _prepare_and_run(self, names: dict[tuple[bytes, tuple[int, ...]], bytes], text: bytes,
                         types: tuple[int, ...], values: Sequence[Buffer | None] | None,
                         formats: Sequence[psycopg.pq.Format] | None) -> psycopg.pq.abc.PGresult:
        """Prepare ``text`` on this connection and run it, in one round trip: libpq's pipeline
        mode sends the preparation, the run and a sync together (prepared, then run, it would
        be two: a statement's first run on a connection, a thread's first turn on a new
        saver, waited twice for the server). The name is kept once the server has prepared
        it; the run's result is returned (an error result as it came)."""
        pg = self.pgconn
        name = f"ctxfold_{len(names)}".encode()
        pg.enter_pipeline_mode()
        try:
            pg.send_prepare(name, text, types)
            pg.send_query_prepared(name, values, formats)
            pg.pipeline_sync()
            results = self._pipeline_results()
        finally:
            try:
                pg.exit_pipeline_mode()
            except psycopg.Error:
                pass  # (results left unread, or no connection: not idle, so the pool closes it)
        if len(results) != 2:  # (a server that answers otherwise: nothing to trust on this connection)
            self.close()
            raise psycopg.OperationalError(f"{len(results)} results for a statement prepared and run")
        prepared, result = results
        if prepared.status != _COMMAND_OK:
            return prepared  # (the run was skipped: the preparation's error is the one to raise)
        names[(text, types)] = name
        return result

    def _pipeline_results(self) -> list[psycopg.pq.abc.PGresult]:
        """The results of the commands sent in pipeline mode up to its sync, in order. The
        connection is non-blocking (psycopg makes it so): the socket is waited on, the
        interpreter let go meanwhile, only when libpq has nothing ready."""
        pg = self.pgconn
        sock = pg.socket
        # What is still unsent goes as the socket takes it; what the server sends meanwhile is
        # read, so that neither side waits on a full buffer of the other's.
        while pg.flush():
            if _wait(sock, write=True):
                pg.consume_input()
        out: list[psycopg.pq.abc.PGresult] = []
        while True:
            while pg.is_busy():
                _wait(sock, write=False)
                pg.consume_input()
            result = pg.get_result()
            if result is not None and result.status == _PIPELINE_SYNC:
                return out
            if result is not None:
                out.append(result)
            elif pg.status == psycopg.pq.ConnStatus.BAD:  # (no sync will come)
                raise psycopg.OperationalError(pg.error_message.decode(errors="replace").strip()
                                               or "the connection is lost")

    def _error(self, result: psycopg.pq.abc.PGresult) -> psycopg.Error:
        """The error psycopg raises for ``result``: a lost connection is an OperationalError
        (and the connection is closed), else the class of the server's SQLSTATE."""
        if self.pgconn.status == psycopg.pq.ConnStatus.BAD:
            message = result.error_message.decode(errors="replace").strip() or "the connection is lost"
            return psycopg.OperationalError(message)
        return psycopg.errors.error_from_result(result, encoding=self.info.encoding)


def _wait(sock: int, write: bool) -> bool:
    """Until ``sock`` can be read (or, with ``write``, read or written): poll, which lets go of
    the interpreter (and, unlike select, takes a descriptor of any number). Whether it can be
    read."""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLOUT if write else select.POLLIN)
    return any(events & (select.POLLIN | select.POLLERR | select.POLLHUP) for _, events in poller.poll())


_COMMAND_OK = psycopg.pq.ExecStatus.COMMAND_OK
_PIPELINE_SYNC = psycopg.pq.ExecStatus.PIPELINE_SYNC
_DONE = (psycopg.pq.ExecStatus.COMMAND_OK, psycopg.pq.ExecStatus.TUPLES_OK)
_SQLSTATE = psycopg.pq.DiagnosticField.SQLSTATE
_NO_SUCH_STATEMENT = b"26000"
_PLACEHOLDER = re.compile(r"%([sb%])")


@functools.lru_cache(maxsize=256)
def _numbered(query: str) -> tuple[bytes, tuple[PyFormat, ...]]:
    """``query`` with its ``%s`` / ``%b`` placeholders numbered for the server (``$1`` …), and
    the format asked of each (``%%`` is a percent sign)."""
    formats: list[PyFormat] = []

    def number(m: re.Match[str]) -> str:
        if m.group(1) == "%":
            return "%"
        formats.append(PyFormat.BINARY if m.group(1) == "b" else PyFormat.AUTO)
        return f"${len(formats)}"

    return _PLACEHOLDER.sub(number, query).encode(), tuple(formats)


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
