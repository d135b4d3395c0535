"""The checkpoint rows beside the message logs: checkpoints, channel blobs and pending writes,
in the store's own database (SQLite or PostgreSQL), or in a private in-memory SQLite database
for a saver without a store.

Three tables, as LangGraph's stock savers keep them: ``ctxfold_lg_checkpoints`` (the checkpoint
without its channel values, its metadata, its parent), ``ctxfold_lg_blobs`` (a channel's value
per version: ``serde`` bytes, or for a message channel the seq of its log the list stands at)
and ``ctxfold_lg_writes`` (pending writes). Every statement commits on its own, except a
checkpoint with its blobs, which is one transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from ...errors import StoreError
from ...stores._rows import Statement, trial_name
from ...stores._sqlite import write_statements

__all__ = ["Tables", "CheckpointRow", "put_statements", "view_statements", "q_blobs", "q_checkpoint", "q_checkpoints", "q_writes",
           "writes_statements"]

T = TypeVar("T")

# (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata)
CheckpointRow = tuple[str, str, str, "str | None", str, bytes, str, bytes]

_TABLES = (
    """CREATE TABLE IF NOT EXISTS ctxfold_lg_checkpoints (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT, type TEXT NOT NULL, checkpoint {blob} NOT NULL,
        metadata_type TEXT NOT NULL, metadata {blob} NOT NULL, run_id TEXT,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
    # ``delete_for_runs``'s index. Partial: a checkpoint with no run id (a graph run outside
    # LangGraph's server) has no entry in it, so writing one touches one page fewer (an input
    # checkpoint's statement on SQLite: about 3 µs of 31-38 less than with every row indexed).
    # The index of every row, which stores made before kept, goes (rebuilt once, on opening).
    "CREATE INDEX IF NOT EXISTS ctxfold_lg_checkpoints_by_run_id ON ctxfold_lg_checkpoints (run_id) "
    "WHERE run_id IS NOT NULL",
    "{drop_old_run_index}",
    """CREATE TABLE IF NOT EXISTS ctxfold_lg_blobs (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, channel TEXT NOT NULL, version TEXT NOT NULL,
        type TEXT NOT NULL, blob {blob} NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version))""",
    """CREATE TABLE IF NOT EXISTS ctxfold_lg_writes (
        thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT NOT NULL,
        blob {blob} NOT NULL, task_path TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
)
_WRITE_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path"
# On a SQLite store, a checkpoint's rows go through the store's write view (``ctxfold_write``),
# in the one statement of its save: a blob and a checkpoint row are kinds of their own there.
_SQLITE_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS ctxfold_lg_write_blob
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'lg_blob' BEGIN
    INSERT OR REPLACE INTO ctxfold_lg_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
        VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f);
END""",
    """CREATE TRIGGER IF NOT EXISTS ctxfold_lg_write_checkpoint
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'lg_checkpoint' BEGIN
    INSERT OR REPLACE INTO ctxfold_lg_checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata, run_id)
        VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h, NEW.i);
END""",
    # (pending writes too: a statement text the connection has compiled already)
    f"""CREATE TRIGGER IF NOT EXISTS ctxfold_lg_write_pending
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'lg_pending' BEGIN
    INSERT OR IGNORE INTO ctxfold_lg_writes ({_WRITE_COLUMNS})
        VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h, NEW.i);
END""",
    f"""CREATE TRIGGER IF NOT EXISTS ctxfold_lg_write_pending_replace
    INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'lg_pending_replace' BEGIN
    INSERT OR REPLACE INTO ctxfold_lg_writes ({_WRITE_COLUMNS})
        VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h, NEW.i);
END""",
)
_DROP_OLD_RUN_INDEX = "DROP INDEX IF EXISTS ctxfold_lg_checkpoints_by_run"
# On PostgreSQL in a DO block, whose command status is not a DROP's: after a DROP, psycopg
# forgets the statements it prepared on the connection and deallocates them, and within the
# pipeline of the tables' creation it then named one that no longer existed at the
# connection's next use ("prepared statement \"_pg3_11\" does not exist").
_PG_DROP_OLD_RUN_INDEX = ("DO $$ BEGIN IF to_regclass('ctxfold_lg_checkpoints_by_run') IS NOT NULL THEN "
                          "DROP INDEX ctxfold_lg_checkpoints_by_run; END IF; END $$")
_SCHEMA_LOCK = 0x6374786C67  # serializes creating the tables between PostgreSQL processes

_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata"


# The writes: on SQLite, plain multi-row VALUES with its upsert. On PostgreSQL, the rows as
# arrays passed to unnest(): one statement text whatever the count of rows, so that a
# connection parses and plans each kind of write once, and the saver can have every one of
# them run on its connections when it is made instead of inside a graph's first turns (a
# statement's first run on a connection took 0.7-1.3 ms, against 0.1-0.3 after; a turn met
# five new ones, with VALUES of as many rows as it had). The arrays cost some: a one- or two-row
# pending write took 151-177 µs that way and 117-137 µs as VALUES, on a local server.
_BLOB_COLUMNS = "thread_id, checkpoint_ns, channel, version, type, blob"
_PG_UPSERT_BLOBS = ("ON CONFLICT (thread_id, checkpoint_ns, channel, version) "
                    "DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob")
_PG_UPSERT_CHECKPOINT = ("ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET "
                         "parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, "
                         "checkpoint = EXCLUDED.checkpoint, metadata_type = EXCLUDED.metadata_type, "
                         "metadata = EXCLUDED.metadata, run_id = EXCLUDED.run_id")
_PG_UPSERT_WRITES = "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) "
_PG_WRITES_REPLACE = "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
# SQLite: rows per statement, within its bound on a statement's parameters (32,766 since
# 3.32) at 9 parameters a row.
_ROWS_PER_STATEMENT = 500
_PG_BLOBS = (f"INSERT INTO ctxfold_lg_blobs ({_BLOB_COLUMNS}) SELECT %s, %s, b.channel, b.version, b.type, b.blob "
             "FROM unnest(%b::text[], %b::text[], %b::text[], %b::bytea[]) AS b (channel, version, type, blob) "
             + _PG_UPSERT_BLOBS)
_PG_WRITES = (f"INSERT INTO ctxfold_lg_writes ({_WRITE_COLUMNS}) "
              "SELECT %s, %s, %s, %s, w.idx, w.channel, w.type, w.blob, %s "
              "FROM unnest(%b::integer[], %b::text[], %b::text[], %b::bytea[]) AS w (idx, channel, type, blob) "
              + _PG_UPSERT_WRITES)


class Tables:
    """The three tables on one database: the store's (``store``: its PostgreSQL or SQLite
    backend, whose pooled connections the tables borrow), or with ``store`` ``None`` a private
    in-memory SQLite database."""

    def __init__(self, store: Any = None) -> None:
        # One pool for a saver's statements and the store's: on PostgreSQL each connection
        # prepares a statement once, on SQLite each keeps its page cache and counts its writes
        # for the log's checkpoints; the saver holds no more connections than it uses at once.
        self._pool = store
        self._pg = store if store is not None and hasattr(store, "_url") else None
        self._lock = threading.Lock()
        self._memory: sqlite3.Connection | None = None
        if store is None:
            self._memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            # Tables nobody closed close their database when collected (the garbage collector
            # closing it is a ResourceWarning on CPython 3.13).
            weakref.finalize(self, self._memory.close)
        self._ph = "%s" if self._pg is not None else "?"
        # A SQLite store's: a checkpoint's rows go to the store's write view (see
        # ``put_statements``), through the triggers made below.
        self._view = store is not None and self._pg is None
        try:
            pg = self._pg is not None
            with self._tx() as cur:
                if pg:
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _TABLES:
                    cur.execute(statement.format(blob="bytea" if pg else "BLOB",
                                                 drop_old_run_index=_PG_DROP_OLD_RUN_INDEX if pg else _DROP_OLD_RUN_INDEX))
                if self._view:
                    for statement in _SQLITE_TRIGGERS:
                        cur.execute(statement)
                    self._pool.warm_view(cur)
        except BaseException:  # tables that cannot be made leave no connection open
            self.close()
            raise

    # ---- connections -----------------------------------------------------------------------

    def _acquire(self, kind: str) -> Any:
        """The in-memory database, or an idle connection of the store's pool; on PostgreSQL
        one of ``kind``'s ("writes": pending writes and the tables' other writes; "reads"),
        which run beside the checkpoints (the store's own calls) and prepare their own
        statements."""
        if self._memory is not None:
            return self._memory
        return self._pool._acquire(kind) if self._pg is not None else self._pool._acquire()

    def _release(self, con: Any) -> None:
        if con is not self._memory:
            self._pool._release(con)

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """A cursor in one transaction (the in-memory database: under a lock)."""
        try:
            with self._lock if self._memory is not None else _nolock():
                con = self._acquire("writes")
                try:
                    if self._pg is not None:
                        from ...stores._postgres_session import one_trip

                        # One round trip for the statements of a write (a read waits for its rows).
                        with one_trip(con):
                            yield con.cursor()
                        return
                    con.execute("BEGIN IMMEDIATE")
                    try:
                        yield con
                    except BaseException:
                        con.execute("ROLLBACK")
                        raise
                    con.execute("COMMIT")
                finally:
                    self._release(con)
        except (sqlite3.Error, _pg_error()) as e:
            raise StoreError(f"langgraph checkpoints: {e}") from e

    def _write1(self, sql: str, params: Any) -> None:
        """One statement in autocommit: its own transaction, one round trip."""
        try:
            with self._lock if self._memory is not None else _nolock():
                con = self._acquire("writes")
                try:
                    self._execute(con, sql, params)
                finally:
                    self._release(con)
        except (sqlite3.Error, _pg_error()) as e:
            raise StoreError(f"langgraph checkpoints: {e}") from e

    def _execute(self, con: Any, sql: str, params: Any) -> Any:
        """One statement whose rows are read at once: on PostgreSQL through ``Connection.run``
        (prepared once a connection, one release of the interpreter for the round trip)."""
        return con.run(sql, params) if self._pg is not None else con.execute(sql, params)

    def _q(self, sql: str) -> str:
        return sql.replace("?", self._ph)

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """One statement in autocommit: a snapshot of its own, one round trip (no BEGIN …
        COMMIT around it; on SQLite no write lock taken to read)."""
        try:
            with self._lock if self._memory is not None else _nolock():
                con = self._acquire("reads")
                try:
                    return list(self._execute(con, self._q(sql), tuple(params)).fetchall())
                finally:
                    self._release(con)
        except (sqlite3.Error, _pg_error()) as e:
            raise StoreError(f"langgraph checkpoints: {e}") from e

    def _read_planned(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """``_read``, but on PostgreSQL planned for these values, not prepared: for the reads
        whose best plan depends on them (a walk up the parent chain, arrays of keys), where a
        generic plan (what a prepared statement of ours gets) joins the whole thread at each
        step: 11 ms, against 1.3 planned, for a chain of 128 checkpoints."""
        if self._pg is None:
            return self._read(sql, params)
        try:
            con = self._acquire("reads")
            try:
                return list(con.execute(self._q(sql), tuple(params), prepare=False).fetchall())
            finally:
                self._release(con)
        except _pg_error() as e:
            raise StoreError(f"langgraph checkpoints: {e}") from e

    def _run(self, op: Callable[[Callable[[str, Sequence[Any]], Any]], T]) -> T:
        with self._tx() as cur:
            def execute(sql: str, params: Sequence[Any] = ()) -> Any:
                return cur.execute(self._q(sql), tuple(params))

            return op(execute)

    def close(self) -> None:
        """Close the in-memory database (the store's connections are the store's to close)."""
        if self._memory is not None:
            self._memory.close()

    # ---- checkpoints -----------------------------------------------------------------------

    def put_statements(self, row: CheckpointRow, run_id: str | None,
                       blobs: Sequence[tuple[str, str, str, bytes]]) -> list[Statement]:
        """The statements that store a checkpoint with its channel blobs: the blobs in one
        multi-row upsert, then the checkpoint's (more only for thousands of channels). The
        store runs them with the log appends as one statement: on PostgreSQL as parts of it,
        on SQLite as rows of its write view."""
        if self._view:
            return view_statements(row, run_id, blobs)
        return put_statements(self._pg is not None, row, run_id, blobs)

    def turn_statements(self) -> tuple[list[Statement], list[Statement], list[Statement]]:
        """What a graph's turn runs on PostgreSQL, with values of the types a turn's have, on a
        thread no checkpoint is of: (the reads it begins with and its pending writes, a
        checkpoint's statements, the deletes of what those wrote). Run on each of the store's
        connections when the saver is made, in a transaction that leaves nothing, so that the
        server's first run of each is not part of a first turn."""
        thread = trial_name()
        row: CheckpointRow = (thread, "", "", None, "msgpack", b"", "msgpack", b"")
        statements = [(sql.replace("?", "%s"), params) for sql, params in (
            q_checkpoint(thread, "", None), q_checkpoint(thread, "", ""), q_writes(thread, "", ""),
            q_blobs(thread, "", {"": ""}, True))]
        for replace in (False, True):
            statements += writes_statements(True, thread, "", "", "", "", [(0, "", "", b"")], replace)
        undo = [(f"DELETE FROM {table} WHERE thread_id = %s", (thread,))
                for table in ("ctxfold_lg_checkpoints", "ctxfold_lg_blobs", "ctxfold_lg_writes")]
        return statements, put_statements(True, row, "", [("", "", "", b"")]), undo

    def run(self, statements: Sequence[Statement]) -> None:
        """``statements`` in one transaction on this object's own connections (a single
        statement runs in autocommit: one round trip)."""
        if len(statements) <= 1:
            if statements:
                self._write1(*statements[0])
            return

        def op(ex: Callable[..., Any]) -> None:
            for sql, params in statements:
                ex(sql, params)

        self._run(op)

    def checkpoint(self, thread_id: str, ns: str, checkpoint_id: str | None) -> CheckpointRow | None:
        rows = self._read(*q_checkpoint(thread_id, ns, checkpoint_id))
        return _row(rows[0]) if rows else None

    def checkpoints(self, thread_id: str | None, ns: str | None, checkpoint_id: str | None,
                    before: str | None, limit: int | None = None) -> list[CheckpointRow]:
        """Newest first; at most ``limit``."""
        return [_row(r) for r in self._read(*q_checkpoints(thread_id, ns, checkpoint_id, before, limit))]

    def blobs(self, thread_id: str, ns: str, versions: dict[str, Any]) -> list[tuple[str, str, bytes]]:
        """(channel, type, data) of each channel at its version."""
        if not versions:
            return []
        return [(r[0], r[1], bytes(r[2])) for r in self._read(*q_blobs(thread_id, ns, versions, self._pg is not None))]

    def blobs_of_kind(self, thread_id: str, kind: str) -> list[tuple[str, str, str, bytes]]:
        """(namespace, channel, version, data) of every blob of type ``kind`` in the thread."""
        return [(r[0], r[1], r[2], bytes(r[3])) for r in self._read(
            "SELECT checkpoint_ns, channel, version, blob FROM ctxfold_lg_blobs WHERE thread_id = ? AND type = ?",
            (thread_id, kind))]

    def chain(self, thread_id: str, ns: str, checkpoint_id: str, limit: int) -> list[CheckpointRow]:
        """The checkpoint and its ancestors, each the parent of the one before: at most
        ``limit``, ending early at a checkpoint whose parent is gone (or that has none)."""
        return [_row(r) for r in self._read_planned(*q_chain(thread_id, ns, checkpoint_id, limit))]

    def valued(self, thread_id: str, ns: str, pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of the (channel, version) ``pairs`` hold a value: have a blob, and not one of
        the "empty" rows older stores wrote for a version with none."""
        if not pairs:
            return set()
        channels, versions = sorted({p[0] for p in pairs}), sorted({p[1] for p in pairs})
        if self._pg is not None:
            sql, params = (_VALUED.format(channels="= ANY(?)", versions="= ANY(?)"),
                           [thread_id, ns, channels, versions])
        else:
            sql, params = (_VALUED.format(channels=_marks(len(channels)), versions=_marks(len(versions))),
                           [thread_id, ns, *channels, *versions])
        return {(r[0], r[1]) for r in self._read_planned(sql, params)} & pairs

    def writes_of(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str],
                  channels: Sequence[str]) -> list[tuple[str, str, str, str, bytes, str, int]]:
        """(checkpoint_id, task_id, channel, type, data, task_path, idx) of the pending writes
        to ``channels`` of the checkpoints, in no particular order."""
        if not checkpoint_ids or not channels:
            return []
        if self._pg is not None:
            sql, params = (_WRITES_OF.format(ids="= ANY(?)", channels="= ANY(?)"),
                           [thread_id, ns, list(checkpoint_ids), list(channels)])
        else:
            sql, params = (_WRITES_OF.format(ids=_marks(len(checkpoint_ids)), channels=_marks(len(channels))),
                           [thread_id, ns, *checkpoint_ids, *channels])
        return [(r[0], *_write_row(r[1:])) for r in self._read_planned(sql, params)]

    def blob_keys(self, thread_id: str) -> list[tuple[str, str, str, str]]:
        """(namespace, channel, version, type) of every blob of the thread."""
        return [(r[0], r[1], r[2], r[3]) for r in self._read(
            "SELECT checkpoint_ns, channel, version, type FROM ctxfold_lg_blobs WHERE thread_id = ?", (thread_id,))]

    def delete_blobs(self, thread_id: str, keys: Sequence[tuple[str, str, str]]) -> None:
        """The thread's blobs (namespace, channel, version)."""
        def op(ex: Callable[..., Any]) -> None:
            for ns, channel, version in keys:
                ex("DELETE FROM ctxfold_lg_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
                   "AND version = ?", (thread_id, ns, channel, version))

        if keys:
            self._run(op)

    # ---- pending writes --------------------------------------------------------------------

    def put_writes(self, thread_id: str, ns: str, checkpoint_id: str, task_id: str, task_path: str,
                   rows: Sequence[tuple[int, str, str, bytes]], replace: bool) -> None:
        """``rows``: (idx, channel, type, data). ``replace``: overwrite rows already there
        (LangGraph's special channels); else keep them."""
        if self._view:
            kind = "lg_pending_replace" if replace else "lg_pending"
            self.run(write_statements([(kind, thread_id, ns, checkpoint_id, task_id, idx, channel, type_, data, task_path)
                                       for idx, channel, type_, data in rows]))
            return
        self.run(writes_statements(self._pg is not None, thread_id, ns, checkpoint_id, task_id, task_path, rows,
                                   replace))

    def writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[tuple[str, str, str, bytes, str, int]]:
        """(task_id, channel, type, data, task_path, idx), in no particular order."""
        return [_write_row(r) for r in self._read(*q_writes(thread_id, ns, checkpoint_id))]

    # ---- deleting and copying --------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        def op(ex: Callable[..., Any]) -> None:
            for table in ("ctxfold_lg_checkpoints", "ctxfold_lg_blobs", "ctxfold_lg_writes"):
                ex(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

        self._run(op)

    def delete_checkpoints(self, keys: Sequence[tuple[str, str, str]]) -> None:
        """Checkpoints (thread, namespace, id) and their pending writes."""
        def op(ex: Callable[..., Any]) -> None:
            for key in keys:
                for table in ("ctxfold_lg_checkpoints", "ctxfold_lg_writes"):
                    ex(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", key)

        if keys:
            self._run(op)

    def orphan(self, keys: Sequence[tuple[str, str, str]]) -> None:
        """Checkpoints (thread, namespace, id) left with no parent (``prune`` deleted theirs)."""
        def op(ex: Callable[..., Any]) -> None:
            for key in keys:
                ex("UPDATE ctxfold_lg_checkpoints SET parent_checkpoint_id = NULL "
                   "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", key)

        if keys:
            self._run(op)

    def run_checkpoints(self, run_ids: Sequence[str]) -> list[CheckpointRow]:
        """The checkpoints whose metadata ``run_id`` is one of ``run_ids``."""
        marks = ", ".join(["?"] * len(run_ids))
        return [_row(r) for r in self._read(
            f"SELECT {_COLUMNS} FROM ctxfold_lg_checkpoints WHERE run_id IN ({marks})",
            list(run_ids))]

    def namespaces(self, thread_id: str) -> list[str]:
        return [r[0] for r in self._read("SELECT DISTINCT checkpoint_ns FROM ctxfold_lg_checkpoints WHERE thread_id = ?",
                                         (thread_id,))]

    def copy_thread(self, source: str, target: str) -> None:
        def op(ex: Callable[..., Any]) -> None:
            for table, columns in (
                ("ctxfold_lg_checkpoints", _COLUMNS[len("thread_id, "):] + ", run_id"),
                ("ctxfold_lg_blobs", "checkpoint_ns, channel, version, type, blob"),
                ("ctxfold_lg_writes", "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path"),
            ):
                ex(f"INSERT INTO {table} (thread_id, {columns}) SELECT ?, {columns} FROM {table} WHERE thread_id = ?",
                   (target, source))

        self._run(op)


def _values(count: int, width: int, ph: str) -> str:
    """``count`` rows of ``width`` placeholders, for a VALUES list."""
    one = "(" + ", ".join([ph] * width) + ")"
    return ", ".join([one] * count)


def put_statements(pg: bool, row: CheckpointRow, run_id: str | None,
                   blobs: Sequence[tuple[str, str, str, bytes]]) -> list[Statement]:
    """``Tables.put_statements`` for PostgreSQL (``pg``) or SQLite, in its placeholder style."""
    thread_id, ns = row[0], row[1]
    checkpoint = f"INTO ctxfold_lg_checkpoints ({_COLUMNS}, run_id) VALUES {_values(1, 9, '%s' if pg else '?')}"
    out: list[Statement] = []
    if pg:
        # (the PostgreSQL store runs these, with the log appends, as parts of one statement)
        if blobs:
            channels, versions, kinds, data = (list(column) for column in zip(*blobs))
            out.append((_PG_BLOBS, [thread_id, ns, channels, versions, kinds, data]))
        return [*out, (f"INSERT {checkpoint} {_PG_UPSERT_CHECKPOINT}", (*row, run_id))]
    for chunk in _chunks(blobs, _ROWS_PER_STATEMENT):
        params = [x for channel, version, kind, data in chunk for x in (thread_id, ns, channel, version, kind, data)]
        out.append((f"INSERT OR REPLACE INTO ctxfold_lg_blobs ({_BLOB_COLUMNS}) VALUES {_values(len(chunk), 6, '?')}",
                    params))
    return [*out, (f"INSERT OR REPLACE {checkpoint}", (*row, run_id))]


def view_statements(row: CheckpointRow, run_id: str | None,
                    blobs: Sequence[tuple[str, str, str, bytes]]) -> list[Statement]:
    """``Tables.put_statements`` on a SQLite store: rows of its write view (the blobs, then the
    checkpoint), which the store's save makes one statement with its own."""
    thread_id, ns = row[0], row[1]
    rows: list[tuple[Any, ...]] = [("lg_blob", thread_id, ns, channel, version, kind, data, None, None, None)
                                   for channel, version, kind, data in blobs]
    rows.append(("lg_checkpoint", *row, run_id))
    return write_statements(rows)


def writes_statements(pg: bool, thread_id: str, ns: str, checkpoint_id: str, task_id: str, task_path: str,
                      rows: Sequence[tuple[int, str, str, bytes]], replace: bool) -> list[Statement]:
    """A task's pending writes for PostgreSQL (``pg``: one statement) or SQLite (one below
    thousands of rows). ``rows``: (idx, channel, type, data); ``replace`` as
    ``Tables.put_writes``."""
    if not rows:
        return []
    if pg:
        idx, channels, kinds, data = (list(column) for column in zip(*rows))
        return [(_PG_WRITES + (_PG_WRITES_REPLACE if replace else "DO NOTHING"),
                 [thread_id, ns, checkpoint_id, task_id, task_path, idx, channels, kinds, data])]
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    out: list[Statement] = []
    for chunk in _chunks(rows, _ROWS_PER_STATEMENT):
        params = [x for idx, channel, kind, data in chunk
                  for x in (thread_id, ns, checkpoint_id, task_id, idx, channel, kind, data, task_path)]
        out.append((f"{verb} INTO ctxfold_lg_writes ({_WRITE_COLUMNS}) VALUES {_values(len(chunk), 9, '?')}", params))
    return out


def _chunks(rows: Sequence[T], size: int) -> list[Sequence[T]]:
    """Rows in groups small enough for one statement's parameters."""
    return [rows[i:i + size] for i in range(0, len(rows), size)]


# ---- the reads, as (SQL with ? placeholders, parameters): shared with the async tables ----------


def q_checkpoint(thread_id: str, ns: str, checkpoint_id: str | None) -> tuple[str, tuple[Any, ...]]:
    """The checkpoint ``checkpoint_id``, or the namespace's latest."""
    if checkpoint_id is None:
        return (f"SELECT {_COLUMNS} FROM ctxfold_lg_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "ORDER BY checkpoint_id DESC LIMIT 1", (thread_id, ns))
    return (f"SELECT {_COLUMNS} FROM ctxfold_lg_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND checkpoint_id = ?", (thread_id, ns, checkpoint_id))


def q_checkpoints(thread_id: str | None, ns: str | None, checkpoint_id: str | None,
                  before: str | None, limit: int | None = None) -> tuple[str, list[Any]]:
    """Checkpoints newest first, at most ``limit`` (a listing of a long thread's latest few
    reads those rows only)."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("thread_id", thread_id), ("checkpoint_ns", ns), ("checkpoint_id", checkpoint_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if before is not None:
        where.append("checkpoint_id < ?")
        params.append(before)
    sql = f"SELECT {_COLUMNS} FROM ctxfold_lg_checkpoints"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(max(limit, 0))
    return sql, params


def q_blobs(thread_id: str, ns: str, versions: dict[str, Any], pg: bool) -> tuple[str, list[Any]]:
    """Each channel's blob at its version. On PostgreSQL the pairs as arrays: one statement
    text whatever their count (see the writes above)."""
    if pg:
        return ("SELECT b.channel, b.type, b.blob FROM unnest(%b::text[], %b::text[]) AS v (channel, version) "
                "JOIN ctxfold_lg_blobs b ON b.thread_id = %s AND b.checkpoint_ns = %s AND b.channel = v.channel "
                "AND b.version = v.version", [list(versions), [str(v) for v in versions.values()], thread_id, ns])
    pairs = " OR ".join(["(channel = ? AND version = ?)"] * len(versions))
    params: list[Any] = [thread_id, ns]
    for channel, version in versions.items():
        params += [channel, str(version)]
    return (f"SELECT channel, type, blob FROM ctxfold_lg_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND ({pairs})",
            params)


def q_writes(thread_id: str, ns: str, checkpoint_id: str) -> tuple[str, tuple[Any, ...]]:
    return ("SELECT task_id, channel, type, blob, task_path, idx FROM ctxfold_lg_writes "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", (thread_id, ns, checkpoint_id))


def q_chain(thread_id: str, ns: str, checkpoint_id: str, limit: int) -> tuple[str, tuple[Any, ...]]:
    """The checkpoint and its ancestors, nearest first, at most ``limit`` (see
    ``Tables.chain``)."""
    return (f"""WITH RECURSIVE chain AS (
        SELECT {_COLUMNS}, 1 AS depth FROM ctxfold_lg_checkpoints
            WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
        UNION ALL
        SELECT {', '.join('c.' + c for c in _COLUMNS.split(', '))}, chain.depth + 1
            FROM chain JOIN ctxfold_lg_checkpoints c ON c.thread_id = chain.thread_id
                AND c.checkpoint_ns = chain.checkpoint_ns AND c.checkpoint_id = chain.parent_checkpoint_id
            WHERE chain.depth < ?
    ) SELECT {_COLUMNS} FROM chain ORDER BY depth""", (thread_id, ns, checkpoint_id, limit))


# The pending writes to some channels of some checkpoints, and which channel versions hold a
# value: on PostgreSQL with arrays (one statement text), on SQLite with a mark per value.
_WRITES_OF = ("SELECT checkpoint_id, task_id, channel, type, blob, task_path, idx FROM ctxfold_lg_writes "
              "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id {ids} AND channel {channels}")
_VALUED = ("SELECT channel, version FROM ctxfold_lg_blobs WHERE thread_id = ? AND checkpoint_ns = ? "
           "AND channel {channels} AND version {versions} AND type <> 'empty'")


def _marks(n: int) -> str:
    return f"IN ({', '.join('?' * n)})"


def _write_row(r: Sequence[Any]) -> tuple[str, str, str, bytes, str, int]:
    return (r[0], r[1], r[2], bytes(r[3]), r[4], r[5])


def _row(r: Sequence[Any]) -> CheckpointRow:
    return (r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6], bytes(r[7]))


@contextmanager
def _nolock() -> Iterator[None]:
    yield


def _pg_error() -> type[BaseException]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a saver without PostgreSQL
        return sqlite3.Error
    return psycopg.Error
