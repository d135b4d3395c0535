"""The PostgreSQL backend, through psycopg 3 (``pip install 'ctxfold[postgres]'``).

A save is one statement in autocommit, so one round trip and one transaction: a guarded update
of the context's head row (``WHERE next_seq = expected``) feeds the inserts of the new events
and content entries, which insert nothing when the guard matched no row. Concurrent savers of
one context queue on that row's lock; after the winner commits, the others' guard re-reads the
new head, matches nothing, and they write nothing — no exception, no table lock. The primary key
(context, seq) refuses a seq written twice whatever the head says. The schema is in
``docs/store.md``."""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..errors import ConflictError, StoreError
from ._rows import Read, Statement, StoredContext, Write, first_moved, listed, trial_name
from ._schema import SCHEMA_VERSION, TABLES, check_existing

try:
    import psycopg
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("PostgreSQL stores need psycopg 3: pip install 'ctxfold[postgres]'") from e

from ._postgres_session import BEGIN, BEGIN_SNAPSHOT, Connection, connect, one_trip  # after the check that psycopg is there

__all__ = ["PostgresBackend", "SCHEMA_VERSION"]

T = TypeVar("T")

# Serializes creating the schema between processes that open a new database at once.
_SCHEMA_LOCK = 0x637478666F6C64  # "ctxfold"

_CREATE = (
    "CREATE TABLE ctxfold_schema (version integer NOT NULL)",
    """CREATE TABLE ctxfold_contexts (
        id                text PRIMARY KEY,
        next_seq          bigint NOT NULL,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        message_count     bigint NOT NULL,
        agent_name        text,
        origin_context_id text,
        state             text NOT NULL
    )""",
    "CREATE INDEX ctxfold_contexts_by_update ON ctxfold_contexts (updated_at DESC, id)",
    """CREATE TABLE ctxfold_events (
        context_id text NOT NULL REFERENCES ctxfold_contexts (id) ON DELETE CASCADE,
        seq        bigint NOT NULL,
        data       text NOT NULL,
        PRIMARY KEY (context_id, seq)
    )""",
    """CREATE TABLE ctxfold_content (
        context_id text NOT NULL REFERENCES ctxfold_contexts (id) ON DELETE CASCADE,
        ord        bigint NOT NULL,
        hash       text NOT NULL,
        text       text NOT NULL,
        PRIMARY KEY (context_id, hash)
    )""",
)

# An append is parts of one statement: the head row (created, or moved by the guard
# `next_seq = expected`), then the events and the content entries below it, which go in only
# when the head matched a row: an empty `head` inserts nothing. A save with no content entries
# (most: only long texts have one) leaves that part out. The parts are named with a number, so
# that the appends of several contexts can be parts of one statement; placeholders are
# positional, in the order of `_append_params`.
_CREATE_HEAD = """head{n} AS (
    INSERT INTO ctxfold_contexts
        (id, next_seq, created_at, updated_at, message_count, agent_name, origin_context_id, state)
    VALUES (%s, %s, %s, now(), %s, %s, %s, %s)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
)"""
_MOVE_HEAD = """head{n} AS (
    UPDATE ctxfold_contexts
    SET next_seq = %s, updated_at = now(), message_count = %s, agent_name = %s, origin_context_id = %s,
        state = %s
    WHERE id = %s AND next_seq = %s
    RETURNING id
)"""
_EVENTS = """new_events{n} AS (
    INSERT INTO ctxfold_events (context_id, seq, data)
    SELECT head{n}.id, e.seq, e.data
    FROM head{n}, unnest(%b::bigint[], %b::text[]) AS e (seq, data)
)"""
_CONTENT = """new_content{n} AS (
    INSERT INTO ctxfold_content (context_id, ord, hash, text)
    SELECT head{n}.id, c.ord, c.hash, c.text
    FROM head{n}, unnest(%b::bigint[], %b::text[], %b::text[]) AS c (ord, hash, text)
    ON CONFLICT DO NOTHING
)"""


@functools.lru_cache(maxsize=64)
def _append_parts(create: bool, content: bool, n: int) -> str:
    parts = [(_CREATE_HEAD if create else _MOVE_HEAD), _EVENTS] + ([_CONTENT] if content else [])
    return ",\n".join(p.format(n=n) for p in parts)


def _append_params(w: Write) -> list[Any]:
    agent, origin = _text(w.agent_name), _text(w.origin_context_id)
    params: list[Any] = [w.id, w.head, w.created_at, w.message_count, agent, origin, w.state] if w.expected is None \
        else [w.head, w.message_count, agent, origin, w.state, w.id, w.expected]
    params += [[s for s, _ in w.events], [d for _, d in w.events]]
    if w.content:
        params += [[o for o, _, _ in w.content], [h for _, h, _ in w.content], [t for _, _, t in w.content]]
    return params


def _parts_of(w: Write, n: int) -> str:
    return _append_parts(w.expected is None, bool(w.content), n)


def append_statement(w: Write) -> tuple[str, list[Any]]:
    """The one statement of a save and its parameters (the sync and async backends share it):
    create-and-append for a new context, the guarded append otherwise. Its row counts the
    heads written: 1, or 0 when the guard matched nothing (and nothing was written)."""
    return f"WITH {_parts_of(w, 0)}\nSELECT count(*) FROM head0", _append_params(w)


def append_or_abort_statement(w: Write) -> tuple[str, list[Any]]:
    """The save's statement for inside a larger transaction: a guard that matched nothing is
    an error (division by zero), which aborts the transaction."""
    return f"WITH {_parts_of(w, 0)}\nSELECT 1 / count(*) FROM head0", _append_params(w)


# A statement a save can take in as a part of its own: one data-modifying statement, not a
# WITH of its own (PostgreSQL allows data-modifying parts only at a statement's top level).
_PART = re.compile(r"\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def save_statement(writes: Sequence[Write], statements: Sequence[Statement]) -> Statement | None:
    """The appends and ``statements`` as one statement, which in autocommit is one transaction
    in one round trip with no BEGIN or COMMIT: each append's parts, then each statement as a
    part of its own, then the guards, ``1 / count(*)`` of each head, so that a guard that
    matched nothing is a division by zero that aborts everything. With no appends the last
    statement is the main one. ``None`` when a statement cannot be a part (see ``_PART``).

    The parts see one snapshot, as one statement does: a statement does not see what the
    others write (the saver's statements, a checkpoint's rows, never read each other's)."""
    parts: list[str] = []
    params: list[Any] = []
    for sql, p in statements:
        if not _PART.match(sql) or not isinstance(p, (list, tuple)):
            return None
    for i, w in enumerate(writes):
        parts.append(_parts_of(w, i))
        params += _append_params(w)
    rest = statements if writes else statements[:-1]
    for k, (sql, p) in enumerate(rest):
        parts.append(f"s{k} AS ({sql})")
        params += p
    if writes:
        main = "SELECT " + " + ".join(f"(SELECT 1 / count(*) FROM head{i})" for i in range(len(writes)))
    elif statements:
        main = statements[-1][0]
        params += statements[-1][1]
    else:
        return None
    return (f"WITH {', '.join(parts)}\n{main}" if parts else main), params


_HEAD_STATE = "SELECT next_seq, state FROM ctxfold_contexts WHERE id = %s"
_HEAD = "SELECT next_seq FROM ctxfold_contexts WHERE id = %s"
# The heads of a refused save's contexts: which one had moved (``first_moved``).
_HEADS_OF = "SELECT id, next_seq FROM ctxfold_contexts WHERE id = ANY(%s)"
# A first look at each of the store's tables (and their keys) on a connection, matching no row.
_TABLE_READS: tuple[Statement, ...] = (
    (_HEAD, ("",)),
    ("SELECT seq FROM ctxfold_events WHERE context_id = %s AND seq = 0", ("",)),
    ("SELECT ord FROM ctxfold_content WHERE context_id = %s AND hash = %s", ("", "")),
)


def trial_statements(statements: Sequence[Statement], saves: Sequence[Sequence[Statement]],
                     undo: Sequence[Statement]) -> list[Statement]:
    """What ``open_idle`` runs on a connection (the sync and async backends share it): one
    transaction of a read of each of the store's tables, ``statements``, each of ``saves`` as
    the statement of a save of nothing, of a new context's first events and of that
    context's next (its guard then matches), then ``undo`` and the deletes of that context:
    committed, it leaves nothing. (Not rolled back: psycopg forgets the statements it has
    prepared when it sees a ROLLBACK.) The values are of the types a real save's are, so that
    the server keeps the statements for those."""
    first = Write(id=trial_name(), expected=None, head=1, state="{}",
                  created_at=datetime.now(timezone.utc), message_count=1, agent_name=None, origin_context_id=None,
                  events=[(0, "{}")], content=[])
    next_ = dataclasses.replace(first, expected=1, head=2, message_count=2, events=[(1, "{}")])
    out: list[Statement] = [(BEGIN, ()), *_TABLE_READS, *statements]
    for save in saves:
        for writes in ([], [first], [next_]):
            one = save_statement(writes, save)
            if one is not None:
                out.append(one)
    return [*out, *undo, ("DELETE FROM ctxfold_events WHERE context_id = %s", (first.id,)),
            ("DELETE FROM ctxfold_contexts WHERE id = %s", (first.id,)), ("COMMIT", ())]


def tail_statement(context_id: str, count: int, before: int | None) -> tuple[str, tuple[Any, ...]]:
    """The events statement of a tail read and its parameters (the sync and async backends
    share it; it runs after ``_HEAD_STATE`` in one snapshot). Without ``before``, no bound on
    seq: a snapshot holds no event at or past its head (events and head are written in one
    transaction). A plain bound or none keeps the plan a backwards walk of the primary key:
    O(count)."""
    if before is None:
        return "SELECT seq, data FROM ctxfold_events WHERE context_id = %s ORDER BY seq DESC LIMIT %s", (context_id, count)
    return ("SELECT seq, data FROM ctxfold_events WHERE context_id = %s AND seq < %s ORDER BY seq DESC LIMIT %s",
            (context_id, before, count))


def tail_read(head: Any, events: list[Any]) -> Read | None:
    """A tail read's result from its head row and its events (newest first, as read)."""
    if head is None:
        return None
    events.reverse()
    return Read(head=int(head[0]), state=head[1], content=[], events=events)


def scan_statement(prefix: str, deps_key: str | None) -> tuple[str, Any]:
    """The statement of a scan and its parameters (shared by the sync and async backends).
    starts_with, not a range: the order of text under the database's collation need not be
    byte order, so a range could miss ids."""
    if deps_key is None:
        return "SELECT id, state FROM ctxfold_contexts WHERE starts_with(id, %s)", (prefix,)
    return ("SELECT id, CASE WHEN json_typeof(d -> %(k)s) = 'string' THEN d ->> %(k)s END "
            "FROM (SELECT id, state::json -> 'deps' AS d FROM ctxfold_contexts WHERE starts_with(id, %(p)s)) s",
            {"k": deps_key, "p": prefix})


def seq_taken(error: BaseException | None) -> bool:
    """Whether a database error is an event's (context, seq) stored twice: another writer
    saved those seqs first. A unique key of the caller's own statements is not."""
    return isinstance(error, psycopg.errors.UniqueViolation) and error.diag.constraint_name == "ctxfold_events_pkey"


def _utc(t: datetime) -> datetime:
    return t.astimezone(timezone.utc)


def _text(s: str | None) -> str | None:
    """A listing column: PostgreSQL text holds no NUL (the state keeps the exact value)."""
    return None if s is None else s.replace("\0", "\ufffd")


def _label(url: str) -> str:
    """The server a URL names, without credentials, for error messages. A URL psycopg cannot
    parse is named by its scheme alone (its text may hold a password)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(a URL psycopg cannot parse)"
    return f"postgresql://{info.get('host', '')}:{info.get('port', '')}/{info.get('dbname', '')}"


class PostgresBackend:
    def __init__(self, url: str) -> None:
        self._url = url
        self._label = _label(url)
        self._all: list[Connection] = []
        self._idle: list[Connection] = []
        self._all_lock = threading.Lock()
        self._last: dict[str, Connection] = {}  # each kind of call's last connection
        try:
            self._run(self._ensure_schema)
        except BaseException:
            self.close()
            raise

    def _name(self) -> str:
        return self._label

    # ---- connections -------------------------------------------------------------------

    def _acquire(self, kind: str = "") -> Connection:
        """An idle connection of this backend's, or a new one: pooled, not kept per thread
        (callers on short-lived threads reuse the connections already open).

        ``kind``: the kind of call (the store's own, or the LangGraph saver's pending writes
        and reads, which run beside its checkpoints). A kind goes back to the connection it
        last had when that one is idle, and otherwise takes one no other kind had last: a
        connection prepares each statement it runs, so calls that overlap, each on a
        connection of its own kind, prepare each statement once, not once per connection."""
        with self._all_lock:
            self._idle = [c for c in self._idle if not c.closed]
            own = self._last.get(kind)
            if own is not None and own.closed:  # (the server ended it): the kind has none
                del self._last[kind]
                own = None
            if own is not None and own in self._idle:
                self._idle.remove(own)
                return own
            unclaimed = [c for c in self._idle if c not in self._last.values()]
            # its own busy: another kind's idle one, lent for this call, before a new one
            con = (unclaimed or self._idle)[-1] if self._idle else None
            if con is not None:
                self._idle.remove(con)
                if unclaimed:  # (taken from them: from now on this kind's own)
                    self._last[kind] = con
                return con
        con = connect(self._url)
        with self._all_lock:
            self._all.append(con)
            if own is None:
                self._last[kind] = con
        return con

    def open_idle(self, count: int, statements: Sequence[Statement] = (),
                  saves: Sequence[Sequence[Statement]] = (), undo: Sequence[Statement] = ()) -> None:
        """Have each idle connection, and as many new ones as the pool lacks to hold ``count``
        (opened at once), run what its caller's first calls will: a read of each of the
        store's tables, ``statements``, and each of ``saves`` (statements the caller will hand
        ``append_with``) as the statement of a save with no append, with a new context's and
        with a moved one's; in one transaction that ``undo`` (the caller's statements deleting
        what its own wrote) and the store's own deletes end, so that nothing stays. For a
        caller that knows how many connections it will use at once and what it will run on
        them: neither opening a connection (milliseconds) nor the server's first run of a
        statement on it (its caches of the tables and its parsed statements are per
        connection: a first run took 0.7-1.3 ms, the next 0.1-0.3) is part of its first calls.
        A failure is a ``StoreError``, and leaves no connection in a transaction."""
        with self._all_lock:
            taken, self._idle = self._idle, []
            missing = max(count - len(self._all), 0)
        tried = trial_statements(statements, saves, undo)
        opened: list[Connection] = []

        def run(con: Connection | None) -> None:
            if con is None:
                con = connect(self._url)
                with self._all_lock:
                    self._all.append(con)
                    opened.append(con)
            for sql, params in tried:
                con.run(sql, params)

        try:
            # each connection opened and run on a thread of its own: the server's work for one
            # is not the others'
            with ThreadPoolExecutor(max(len(taken) + missing, 1), thread_name_prefix="ctxfold-open") as pool:
                list(pool.map(run, [*taken, *[None] * missing]))
        except psycopg.Error as e:
            raise StoreError(f"{self._name()}: {e}") from e
        finally:
            for con in [*taken, *opened]:  # (one a failure left in its transaction is closed)
                self._release(con)

    def _run(self, op: Callable[[Connection], T]) -> T:
        """``op`` on a connection of the pool; database errors become ``StoreError``. A
        connection an error left mid-transaction is closed, not reused."""
        try:
            con = self._acquire()
        except psycopg.Error as e:
            raise StoreError(f"{self._name()}: {e}") from e
        try:
            return op(con)
        except psycopg.Error as e:
            raise StoreError(f"{self._name()}: {e}") from e
        finally:
            self._release(con)

    def _release(self, con: Connection) -> None:
        """A connection back to the pool when it is idle; closed, not reused, otherwise."""
        idle = not con.closed and con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        with self._all_lock:
            if idle and con in self._all:
                self._idle.append(con)
            elif not idle and con in self._all:
                self._all.remove(con)
                self._last = {kind: c for kind, c in self._last.items() if c is not con}
                con.close()

    def _ensure_schema(self, con: Connection) -> None:
        with con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            have = {r[0] for r in con.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relkind IN ('r', 'p') "
                "AND c.relnamespace = current_schema()::regnamespace", (list(TABLES),))}
            if not have:
                for statement in _CREATE:
                    con.execute(statement)
                con.execute("INSERT INTO ctxfold_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
                return
            check_existing(self._name(), have,
                           lambda: con.execute("SELECT max(version) FROM ctxfold_schema").fetchone())

    # ---- the backend -------------------------------------------------------------------

    def append(self, w: Write) -> bool:
        sql, params = append_statement(w)

        def op(con: Connection) -> bool:
            row = con.run(sql, params).fetchone()
            return row is not None and row[0] == 1

        try:
            return self._run(op)
        except StoreError as e:
            if seq_taken(e.__cause__):
                raise ConflictError(f"context {w.id}: a seq from {w.expected} on is already stored") from e
            raise

    def append_with(self, writes: Sequence[Write], statements: Sequence[Statement]) -> int | None:
        """The appends and the statements as one statement (``save_statement``), or, when a
        statement cannot be a part of it, pipelined in one transaction: one round trip either
        way. A guard that matched nothing is a division by zero that aborts everything (then
        one read per write finds which head had moved)."""
        one = save_statement(writes, statements)

        def op(con: Connection) -> int | None:
            if not writes and not statements:
                return None
            try:
                if one is not None:  # one statement in autocommit is its own transaction
                    con.run(*one)
                    return None
                with one_trip(con):
                    for w in writes:
                        con.execute(*append_or_abort_statement(w))
                    for sql, params in statements:
                        con.execute(sql, params)
            except psycopg.errors.DivisionByZero:
                moved = first_moved(writes, con.execute(_HEADS_OF, ([w.id for w in writes],)))
                if moved is None:
                    raise
                return moved
            return None

        try:
            return self._run(op)
        except StoreError as e:
            if seq_taken(e.__cause__):
                raise ConflictError(" / ".join(f"context {w.id}: a seq from {w.expected} on is already stored"
                                               for w in writes)) from e
            raise

    def head(self, context_id: str) -> object | None:
        row = self._run(lambda con: con.run(_HEAD, (context_id,)).fetchone())
        return None if row is None else row[0]

    def peek(self, context_id: str) -> tuple[object, str] | None:
        row = self._run(lambda con: con.run(
            "SELECT next_seq, state FROM ctxfold_contexts WHERE id = %s", (context_id,)).fetchone())
        return None if row is None else (row[0], row[1])

    def read(self, context_id: str) -> Read | None:
        return self.read_since(context_id, 0, 0)

    def read_since(self, context_id: str, seq: int, ord: int) -> Read | None:
        def op(con: Connection) -> Read | None:
            # One snapshot for the head and every row below it; the statements are pipelined,
            # so the whole read is about one round trip.
            with one_trip(con, BEGIN_SNAPSHOT):
                head = con.execute("SELECT next_seq, state FROM ctxfold_contexts WHERE id = %s", (context_id,))
                content = con.execute("SELECT hash, text FROM ctxfold_content WHERE context_id = %s AND ord >= %s "
                                      "ORDER BY ord", (context_id, ord))
                events = con.execute("SELECT seq, data FROM ctxfold_events WHERE context_id = %s AND seq >= %s "
                                     "ORDER BY seq", (context_id, seq))
            row = head.fetchone()
            if row is None:
                return None
            return Read(head=row[0], state=row[1], content=content.fetchall(), events=events.fetchall())

        return self._run(op)

    def tail(self, context_id: str, count: int, before: int | None) -> Read | None:
        sql, params = tail_statement(context_id, count, before)

        def op(con: Connection) -> Read | None:
            with one_trip(con, BEGIN_SNAPSHOT):
                head = con.execute(_HEAD_STATE, (context_id,))
                events = con.execute(sql, params)
            return tail_read(head.fetchone(), events.fetchall())

        return self._run(op)

    def scan(self, prefix: str, deps_key: str | None) -> list[tuple[str, str]]:
        sql, params = scan_statement(prefix, deps_key)
        return self._run(lambda con: con.execute(sql, params).fetchall())

    def list(self, limit: int, offset: int) -> list[StoredContext]:
        rows = self._run(lambda con: con.execute(
            "SELECT id, created_at, updated_at, next_seq, message_count, agent_name, origin_context_id "
            "FROM ctxfold_contexts ORDER BY updated_at DESC, id LIMIT %s OFFSET %s", (limit, offset)).fetchall())
        return [listed(r, _utc) for r in rows]

    def contains(self, context_id: str) -> bool:
        return self._run(lambda con: con.execute(
            "SELECT 1 FROM ctxfold_contexts WHERE id = %s", (context_id,)).fetchone()) is not None

    def delete(self, context_id: str) -> bool:
        # Events and content go with the head row (ON DELETE CASCADE), in the same statement.
        return self._run(lambda con: con.execute(
            "DELETE FROM ctxfold_contexts WHERE id = %s", (context_id,)).rowcount == 1)

    def close(self) -> None:
        with self._all_lock:
            cons, self._all, self._idle, self._last = self._all, [], [], {}
        for con in cons:
            con.close()
