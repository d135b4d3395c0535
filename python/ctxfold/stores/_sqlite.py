"""The SQLite backend: one file in WAL mode, through the standard library's ``sqlite3``.

Each save is one ``BEGIN IMMEDIATE`` transaction (the write lock taken up front, so waiting
writers queue on ``busy_timeout`` instead of failing): the guarded head update, then the new
events and content entries. SQLite has one writer per file, so the guard never races; it is
still the same statement as PostgreSQL's, and the primary key (context, seq) backs it up.
A save that carries rows of its caller's tables (``append_with``: the LangGraph saver's checkpoint
rows) is instead one ``INSERT`` into the write view ``ctxfold_write``, in autocommit: see
``WRITE``. The schema is in ``docs/store.md``. The write-ahead log is checkpointed on a thread
of the backend's, off the writers' path (``_sqlite_wal``)."""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..errors import ConflictError, StoreError
from ._rows import Read, Statement, StoredContext, Write, first_moved, listed
from ._schema import SCHEMA_VERSION, TABLES, check_existing
from ._sqlite_wal import BOUND, WalCheckpointer
from ._sqlite_wal import stop as stop_checkpoints

__all__ = ["SQLiteBackend", "SCHEMA_VERSION", "WRITE", "connect", "write_statements"]

T = TypeVar("T")

_CREATE = """
CREATE TABLE ctxfold_schema (version INTEGER NOT NULL);
CREATE TABLE ctxfold_contexts (
    id                TEXT PRIMARY KEY,
    next_seq          INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    message_count     INTEGER NOT NULL,
    agent_name        TEXT,
    origin_context_id TEXT,
    state             TEXT NOT NULL
);
CREATE INDEX ctxfold_contexts_by_update ON ctxfold_contexts (updated_at DESC, id);
CREATE TABLE ctxfold_events (
    context_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (context_id, seq)
);
CREATE TABLE ctxfold_content (
    context_id TEXT NOT NULL,
    ord        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    text       TEXT NOT NULL,
    PRIMARY KEY (context_id, hash)
);
"""

# The write view. One INSERT of rows into it is one statement: in autocommit its own
# transaction, with no BEGIN or COMMIT to run, and one release of the interpreter for the
# database's work where a transaction of statements releases it at each (inside a LangGraph
# graph, each release lets the graph's own thread take the interpreter, and the saver waits
# to get it back). Each row goes to the INSTEAD OF trigger of its ``kind``: the store's, below,
# write a save's head, events and content entries; code that keeps tables beside the store's
# adds triggers of kinds of its own (the LangGraph saver: its checkpoint rows). A head whose
# guard matches nothing raises ``_REFUSED``, which aborts the statement: nothing is written.
_REFUSED = "ctxfold: the head moved"
_WRITE_VIEW = (
    """CREATE VIEW IF NOT EXISTS ctxfold_write (kind, a, b, c, d, e, f, g, h, i) AS
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0""",
    f"""CREATE TRIGGER IF NOT EXISTS ctxfold_write_head
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'head' BEGIN
    INSERT OR IGNORE INTO ctxfold_contexts
        (id, next_seq, created_at, updated_at, message_count, agent_name, origin_context_id, state)
        VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h);
    SELECT RAISE(ABORT, '{_REFUSED}') WHERE changes() = 0;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS ctxfold_write_move
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'move' BEGIN
    UPDATE ctxfold_contexts
        SET next_seq = NEW.b, updated_at = NEW.d, message_count = NEW.e, agent_name = NEW.f,
            origin_context_id = NEW.g, state = NEW.h
        WHERE id = NEW.a AND next_seq = NEW.i;
    SELECT RAISE(ABORT, '{_REFUSED}') WHERE changes() = 0;
END""",
    """CREATE TRIGGER IF NOT EXISTS ctxfold_write_event
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'event' BEGIN
    INSERT INTO ctxfold_events (context_id, seq, data) VALUES (NEW.a, NEW.b, NEW.c);
END""",
    """CREATE TRIGGER IF NOT EXISTS ctxfold_write_content
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'content' BEGIN
    INSERT OR IGNORE INTO ctxfold_content (context_id, ord, hash, text) VALUES (NEW.a, NEW.b, NEW.c, NEW.d);
END""",
)
# A statement of rows for the write view starts with this: (kind, then nine values, ``None``
# where a kind has fewer) per row.
WRITE = "INSERT INTO ctxfold_write (kind, a, b, c, d, e, f, g, h, i) VALUES "
_WIDTH = 10
# Rows in one statement, within SQLite's bound on a statement's parameters (32,766 since
# 3.32): a save past it (thousands of events at once) is a transaction of statements instead.
_MAX_ROWS = 32_766 // _WIDTH


# A row of no kind is nothing: it pads a statement of more than 8 rows to its *bucket* (16,
# 32, … up to ``_MAX_ROWS``), so that a connection compiles a handful of statement texts rather
# than one for every count of rows it meets. Compiling one (its triggers with it) took 0.10-0.15
# ms, and a padding row costs about 2 µs (each trigger's WHEN is tested on it). Up to 8 rows
# (a LangGraph chat turn's saves are 2 to 6) the count is exact.
_PAD = ("pad",) + (None,) * (_WIDTH - 1)
_EXACT = 8
# The statements a connection compiles at once when the view has a user (``warm_writes``).
_WARM = (*range(1, _EXACT + 1), 16)


def _bucket(rows: int) -> int:
    if rows <= _EXACT:
        return rows
    b = _EXACT
    while b < rows:
        b *= 2
    return min(b, _MAX_ROWS)


@functools.lru_cache(maxsize=64)
def _write_sql(rows: int) -> str:
    return WRITE + ", ".join(["(" + ", ".join(["?"] * _WIDTH) + ")"] * rows)


def write_rows(params: list[Any]) -> Statement:
    """One statement of the write view inserting the rows ``params`` holds (a kind and nine
    values each, at most ``_MAX_ROWS``), padded to its bucket; ``params`` is extended."""
    rows = len(params) // _WIDTH
    bucket = _bucket(rows)
    params += _PAD * (bucket - rows)
    return _write_sql(bucket), params


def warm_writes(con: sqlite3.Connection) -> None:
    """Have ``con`` compile the write view's usual statements now (about 1.3 ms), so that a
    LangGraph thread's first saves do not: that showed as a first turn 1 ms above the next.
    Rows of padding only: nothing is written. It never waits for another connection's write
    lock: where one is held, a statement fails to run but stays compiled."""
    con.execute("PRAGMA busy_timeout = 0")
    try:
        for rows in _WARM:
            try:
                con.execute(_write_sql(rows), _PAD * rows)
            except sqlite3.OperationalError:  # the database is locked: compiled all the same
                pass
    finally:
        con.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT * 1000)}")


def write_statements(rows: Sequence[Sequence[Any]]) -> list[Statement]:
    """``rows`` (each a kind and nine values) as statements of the write view, as few as
    SQLite's bound on parameters allows, each padded to its bucket (``write_rows``): for a
    caller's own kinds (``append_with`` makes one statement of them and the save)."""
    return [write_rows([x for row in rows[start:start + _MAX_ROWS] for x in row])
            for start in range(0, len(rows), _MAX_ROWS)]


def _save_rows(writes: Sequence[Write], now: str) -> list[Any]:
    """The parameters of the write view's rows of ``writes``: each head, then its events and
    content entries."""
    out: list[Any] = []
    for w in writes:
        if w.expected is None:
            out += ("head", w.id, w.head, _iso(w.created_at), now, w.message_count, w.agent_name,
                    w.origin_context_id, w.state, None)
        else:
            out += ("move", w.id, w.head, None, now, w.message_count, w.agent_name, w.origin_context_id, w.state,
                    w.expected)
        for seq, data in w.events:
            out += ("event", w.id, seq, data, None, None, None, None, None, None)
        for o, h, t in w.content:
            out += ("content", w.id, o, h, t, None, None, None, None, None)
    return out


# How long a statement waits for another connection's write lock before "database is locked".
_BUSY_TIMEOUT = 60.0

_INSERT_HEAD = """INSERT OR IGNORE INTO ctxfold_contexts
    (id, next_seq, created_at, updated_at, message_count, agent_name, origin_context_id, state)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
_MOVE_HEAD = """UPDATE ctxfold_contexts
    SET next_seq = ?, updated_at = ?, message_count = ?, agent_name = ?, origin_context_id = ?, state = ?
    WHERE id = ? AND next_seq = ?"""
_INSERT_EVENT = "INSERT INTO ctxfold_events (context_id, seq, data) VALUES (?, ?, ?)"
_INSERT_CONTENT = "INSERT OR IGNORE INTO ctxfold_content (context_id, ord, hash, text) VALUES (?, ?, ?, ?)"


def _iso(t: datetime) -> str:
    """Fixed-width UTC text, so that text order is time order (``2026-01-02T03:04:05.000006Z``;
    isoformat, unlike strftime, pads a year below 1000 to four digits)."""
    return t.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _json_path(deps_key: str) -> str:
    """The JSON path of a deps key (the store accepts only keys of letters, digits and ``_``)."""
    return f'$.deps."{deps_key}"'


def _time(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


class SQLiteBackend:
    def __init__(self, path: str, *, durable: bool) -> None:
        self._path = path
        self._durable = durable
        self._all: list[sqlite3.Connection] = []
        self._idle: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        # each connection's count of changed rows when it was last given back: a use that
        # changed it was a write, counted for the log's checkpoints
        self._changes: dict[sqlite3.Connection, int] = {}
        self._wal = WalCheckpointer(functools.partial(connect, path, durable=durable))
        # A backend nobody closed stops its checkpoints and closes its connections when it is
        # collected, rather than leaving each connection to the garbage collector (which
        # CPython 3.13 reports as a ResourceWarning).
        weakref.finalize(self, _collected, self._all, self._wal.state)
        folder = os.path.dirname(path)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise StoreError(f"sqlite://{path}: cannot create the folder: {e}") from e
        self._warm = False  # whether connections compile the write view's statements (``warm_view``)
        try:
            self._run(self._ensure_schema)
        except BaseException:
            self.close()
            raise

    # ---- connections -------------------------------------------------------------------

    def _acquire(self) -> sqlite3.Connection:
        """An idle connection of this backend's, or a new one. Connections are pooled, not
        kept per thread: callers that run on short-lived threads (a framework's executor
        made anew for each run) reuse the ones already open instead of opening more."""
        with self._all_lock:
            if self._idle:
                return self._idle.pop()
        con = connect(self._path, durable=self._durable)
        if self._warm:
            try:
                warm_writes(con)
            except BaseException:
                con.close()
                raise
        with self._all_lock:
            self._all.append(con)
        return con

    def warm_view(self, con: sqlite3.Connection) -> None:
        """From now on, each connection compiles the write view's statements as it opens, and
        ``con`` (one of the pool's, held by the caller) does now: for a caller that saves
        through the view (the LangGraph saver, once its triggers are made: a change of schema
        makes a connection compile anew). A store used without one pays nothing for it."""
        self._warm = True
        warm_writes(con)

    def _release(self, con: sqlite3.Connection) -> None:
        """A connection back to the pool (the store's own calls and the LangGraph saver's
        tables, which borrow them); one a caller left in a transaction (it cannot be, short of
        a bug) is closed, not reused. A use that changed rows counts as a write."""
        with self._all_lock:
            if con not in self._all:  # the store was closed meanwhile (and the connection with it)
                return
            changes = con.total_changes
            wrote = changes != self._changes.get(con, 0)
            if con.in_transaction:
                self._all.remove(con)
                self._changes.pop(con, None)
                con.close()
            else:
                self._changes[con] = changes
                self._idle.append(con)
        if wrote:
            self._wal.wrote()

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """``op`` on a connection of the pool; database errors become ``StoreError``."""
        try:
            con = self._acquire()
        except sqlite3.Error as e:
            raise StoreError(f"sqlite://{self._path}: {e}") from e
        try:
            return op(con)
        except sqlite3.Error as e:
            raise StoreError(f"sqlite://{self._path}: {e}") from e
        finally:
            self._release(con)

    @contextmanager
    def _transaction(self, con: sqlite3.Connection, begin: str) -> Iterator[None]:
        con.execute(begin)
        try:
            yield
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        if con.in_transaction:  # a refused append has rolled back already
            # The driver's commit (the same COMMIT), so that a connection class that wraps it
            # sees every commit (the Agents SDK's own session tests, run against
            # ContextSession, hand the store such a connection).
            con.commit()

    def _ensure_schema(self, con: sqlite3.Connection) -> None:
        with self._transaction(con, "BEGIN IMMEDIATE"):
            have = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ctxfold\\_%' ESCAPE '\\'")}
            if not have & set(TABLES):
                for statement in _CREATE.split(";"):
                    if statement.strip():
                        con.execute(statement)
                con.execute("INSERT INTO ctxfold_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            else:
                check_existing(f"sqlite://{self._path}", have,
                               lambda: con.execute("SELECT max(version) FROM ctxfold_schema").fetchone())
            # (a store made before the view gets it here: views and triggers are no tables of the
            # schema version, and a ctxfold without them never reads them)
            for statement in _WRITE_VIEW:
                con.execute(statement)

    # ---- the backend -------------------------------------------------------------------

    def append(self, w: Write) -> bool:
        return self.append_with([w], ()) is None

    def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None:
        """When every statement is rows of the write view (``write_statements``), the saves and
        they are one statement, up to ``_MAX_ROWS`` rows; else one transaction."""
        def op(con: sqlite3.Connection) -> int | None:
            now = _iso(datetime.now(timezone.utc)) if writes else ""
            if statements and all(sql.startswith(WRITE) for sql, _ in statements):
                params = _save_rows(writes, now)
                for _, p in statements:
                    params += p
                if len(params) <= _MAX_ROWS * _WIDTH:
                    try:
                        con.execute(*write_rows(params))
                    except sqlite3.IntegrityError as e:
                        if str(e) != _REFUSED:
                            raise
                        return _refused(con, writes)
                    return None
            with self._transaction(con, "BEGIN IMMEDIATE"):
                for i, w in enumerate(writes):
                    if w.expected is None:
                        cur = con.execute(_INSERT_HEAD, (w.id, w.head, _iso(w.created_at), now, w.message_count,
                                                         w.agent_name, w.origin_context_id, w.state))
                    else:
                        cur = con.execute(_MOVE_HEAD, (w.head, now, w.message_count, w.agent_name,
                                                       w.origin_context_id, w.state, w.id, w.expected))
                    if cur.rowcount != 1:
                        con.execute("ROLLBACK")
                        return i
                    con.executemany(_INSERT_EVENT, [(w.id, seq, data) for seq, data in w.events])
                    if w.content:
                        con.executemany(_INSERT_CONTENT, [(w.id, o, h, t) for o, h, t in w.content])
                for sql, params in statements:
                    con.execute(sql, params)
            return None

        try:
            return self._run(op)
        except StoreError as e:
            # an event's (context, seq) stored twice: another writer saved first (a unique key
            # of the caller's own statements is not that)
            if isinstance(e.__cause__, sqlite3.IntegrityError) and "ctxfold_events." in str(e.__cause__):
                raise ConflictError(" / ".join(f"context {w.id}: a seq from {w.expected} on is already stored"
                                               for w in writes)) from e
            raise

    def head(self, context_id: str) -> object | None:
        row = self._run(lambda con: con.execute(
            "SELECT next_seq FROM ctxfold_contexts WHERE id = ?", (context_id,)).fetchone())
        return None if row is None else row[0]

    def peek(self, context_id: str) -> tuple[object, str] | None:
        row = self._run(lambda con: con.execute(
            "SELECT next_seq, state FROM ctxfold_contexts WHERE id = ?", (context_id,)).fetchone())
        return None if row is None else (row[0], row[1])

    def read(self, context_id: str) -> Read | None:
        return self.read_since(context_id, 0, 0)

    def read_since(self, context_id: str, seq: int, ord: int) -> Read | None:
        def op(con: sqlite3.Connection) -> Read | None:
            # One read transaction: one snapshot of the head and the rows below it. Text comes
            # as the bytes SQLite holds (no str per row), for the core to read.
            with self._transaction(con, "BEGIN"):
                row = con.execute("SELECT next_seq, CAST(state AS BLOB) FROM ctxfold_contexts WHERE id = ?",
                                  (context_id,)).fetchone()
                if row is None:
                    return None
                content = con.execute("SELECT CAST(hash AS BLOB), CAST(text AS BLOB) FROM ctxfold_content "
                                      "WHERE context_id = ? AND ord >= ? ORDER BY ord", (context_id, ord)).fetchall()
                events = con.execute("SELECT seq, CAST(data AS BLOB) FROM ctxfold_events WHERE context_id = ? "
                                     "AND seq >= ? ORDER BY seq", (context_id, seq)).fetchall()
            return Read(head=row[0], state=row[1], content=content, events=events)

        return self._run(op)

    def tail(self, context_id: str, count: int, before: int | None) -> Read | None:
        def op(con: sqlite3.Connection) -> Read | None:
            with self._transaction(con, "BEGIN"):
                row = con.execute("SELECT next_seq, state FROM ctxfold_contexts WHERE id = ?",
                                  (context_id,)).fetchone()
                if row is None:
                    return None
                below = int(row[0]) if before is None else before
                # Walks the primary key (context, seq) backwards from `below`: O(count).
                events = con.execute("SELECT seq, data FROM ctxfold_events WHERE context_id = ? AND seq < ? "
                                     "ORDER BY seq DESC LIMIT ?", (context_id, below, count)).fetchall()
            events.reverse()
            return Read(head=int(row[0]), state=row[1], content=[], events=events)

        return self._run(op)

    def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, str]]:
        # A range on the primary key (BINARY collation: byte order), so only the matching rows
        # are read. The upper bound is the prefix with its last character raised by one.
        column = "state" if deps_key is None else "json_extract(state, ?)"
        params: list[str] = [] if deps_key is None else [_json_path(deps_key)]
        where = ""
        if prefix:
            where = " WHERE id >= ? AND id < ?"
            params += [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        return self._run(lambda con: con.execute(f"SELECT id, {column} FROM ctxfold_contexts{where}", params).fetchall())

    def list(self, limit: int, offset: int) -> list[StoredContext]:
        rows = self._run(lambda con: con.execute(
            "SELECT id, created_at, updated_at, next_seq, message_count, agent_name, origin_context_id "
            "FROM ctxfold_contexts ORDER BY updated_at DESC, id LIMIT ? OFFSET ?", (limit, offset)).fetchall())
        return [listed(r, _time) for r in rows]

    def contains(self, context_id: str) -> bool:
        return self._run(lambda con: con.execute(
            "SELECT 1 FROM ctxfold_contexts WHERE id = ?", (context_id,)).fetchone()) is not None

    def delete(self, context_id: str) -> bool:
        def op(con: sqlite3.Connection) -> bool:
            with self._transaction(con, "BEGIN IMMEDIATE"):
                con.execute("DELETE FROM ctxfold_events WHERE context_id = ?", (context_id,))
                con.execute("DELETE FROM ctxfold_content WHERE context_id = ?", (context_id,))
                return con.execute("DELETE FROM ctxfold_contexts WHERE id = ?", (context_id,)).rowcount == 1

        return self._run(op)

    def close(self) -> None:
        self._wal.close()
        with self._all_lock:
            cons = list(self._all)
            self._all.clear()
            self._idle.clear()
            self._changes.clear()
        for con in cons:
            con.close()


def _refused(con: sqlite3.Connection, writes: Sequence[Write]) -> int:
    """The index of the first of ``writes`` whose head is not where it expected (a guard of
    the write view refused the statement, and nothing was written)."""
    heads = con.execute(f"SELECT id, next_seq FROM ctxfold_contexts WHERE id IN ({', '.join('?' * len(writes))})",
                        [w.id for w in writes])
    # (none: every head is back where it was expected, moved and then deleted and saved anew
    # meanwhile; the guard did refuse, so the save is refused on its first context)
    return first_moved(writes, heads) or 0


def connect(path: str, *, durable: bool) -> sqlite3.Connection:
    """A connection to the file for ctxfold's statements (the store's and the LangGraph
    saver's): autocommit, a transaction begun explicitly or one statement alone; handed between
    threads, one caller at a time (``check_same_thread=False``); WAL; a commit survives a crash of the
    process, and with ``durable`` a power loss too; the log checkpointed by the backend's
    thread, a commit checkpointing it only past ``BOUND`` pages."""
    con = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    try:
        _retry_locked(lambda: con.execute("PRAGMA journal_mode=WAL"))
        con.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        con.execute(f"PRAGMA wal_autocheckpoint={BOUND}")
    except BaseException:
        con.close()
        raise
    return con


def _retry_locked(op: Callable[[], object], timeout: float = _BUSY_TIMEOUT) -> None:
    """``op`` again while SQLite says the database is locked, up to the busy timeout. Setting
    the journal mode can be refused at once, without the busy handler's wait, while another
    process opens the file or recovers its WAL (seen with four processes opening one file)."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            op()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _collected(connections: list[Any], checkpoints: Any) -> None:
    stop_checkpoints(checkpoints)
    close_all(connections)


def close_all(connections: list[Any]) -> None:
    """Close every connection of a backend that was collected unclosed."""
    for con in list(connections):
        con.close()
    connections.clear()
