"""The SQLite store's write view: a save with rows of the caller's own tables (``_save_with``
given ``write_statements``) is one INSERT into ``ctxfold_write`` in autocommit, with the
guarantees of the transaction it replaces: all of it or none, a moved head a ConflictError, a
seq stored twice a ConflictError, a key of the caller's own a StoreError."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from _stores import moved_on_elsewhere, without_write_view
from ctxfold import ConflictError, Context, Message, Store
from ctxfold.errors import StoreError
from ctxfold.stores._sqlite import WRITE, write_rows, write_statements

# A kind of the test's own, as code that keeps tables beside the store's adds: a row of the
# view with kind 'probe' inserts its first value into the table probe.
_PROBE = (
    "CREATE TABLE probe (x TEXT PRIMARY KEY)",
    """CREATE TRIGGER probe_write INSTEAD OF INSERT ON ctxfold_write WHEN NEW.kind = 'probe' BEGIN
        INSERT INTO probe (x) VALUES (NEW.a);
    END""",
)


def _probe(*values: str) -> list[tuple[object, ...]]:
    return [("probe", v, None, None, None, None, None, None, None, None) for v in values]


def _run(store: Store, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    return store._backend._run(lambda con: con.execute(sql, params).fetchall())  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def store(sqlite_url) -> Iterator[Store]:
    with Store(sqlite_url) as s:
        for statement in _PROBE:
            _run(s, statement)
        yield s


@contextmanager
def _traced(store: Store) -> Iterator[list[str]]:
    """The statements the store's connections run meanwhile, each once (SQLite's trace gives a
    statement again for each statement of a trigger it fires)."""
    seen: list[str] = []

    def trace(sql: str) -> None:
        if not seen or seen[-1] != sql:
            seen.append(sql)

    cons = list(store._backend._all)  # type: ignore[attr-defined]
    for con in cons:
        con.set_trace_callback(trace)
    try:
        yield seen
    finally:
        for con in cons:
            con.set_trace_callback(None)


def _probes(store: Store) -> list[object]:
    return [r[0] for r in _run(store, "SELECT x FROM probe ORDER BY x")]


def test_a_save_with_view_rows_is_one_statement(store: Store) -> None:
    one, two = Context(), Context()
    one.add_message(Message.user("first"))
    two.add_message(Message.user("second"))
    store._save_with([], write_statements(_probe("warm")))  # (a connection in the pool to trace)
    with _traced(store) as seen:
        store._save_with([one, two], write_statements(_probe("a", "b")))
    assert len(seen) == 1 and seen[0].startswith(WRITE), seen  # no BEGIN, no COMMIT
    assert store.load(one.id).messages == one.messages and store.load(two.id).messages == two.messages
    assert _probes(store) == ["a", "b", "warm"]
    # the next save of a context moves its head under the guard
    one.add_message(Message.user("more"))
    with _traced(store) as seen:
        store._save_with([one], write_statements(_probe("c")))
    assert len(seen) == 1 and store.head(one.id) == 2 and one.stored_seq == 2
    assert [m.content for m in store.load(one.id).messages] == ["first", "more"]


def test_a_moved_head_refuses_everything(store: Store, sqlite_url) -> None:
    one, two = Context(), Context()
    one.add_message(Message.user("first"))
    two.add_message(Message.user("second"))
    store._save_with([one, two], write_statements(_probe("saved")))
    moved_on_elsewhere(sqlite_url, two.id)
    one.add_message(Message.user("more"))
    two.add_message(Message.user("lost"))
    with pytest.raises(ConflictError, match=two.id):
        store._save_with([one, two], write_statements(_probe("refused")))
    assert _probes(store) == ["saved"]
    assert store.head(one.id) == 1 and one.stored_seq == 1 and two.stored_seq == 1
    assert [m.content for m in store.load(two.id).messages] == ["second", "elsewhere"]
    # a context whose id is taken is refused the same way
    taken = Context.deserialize({**one.serialize(), "id": two.id})
    with pytest.raises(ConflictError, match="already in the store"):
        store._save_with([taken], write_statements(_probe("refused")))
    assert _probes(store) == ["saved"]


def test_a_key_of_the_callers_own_is_a_store_error(store: Store) -> None:
    ctx = Context()
    ctx.add_message(Message.user("one"))
    store._save_with([ctx], write_statements(_probe("taken")))
    ctx.add_message(Message.user("two"))
    with pytest.raises(StoreError, match="probe") as caught:
        store._save_with([ctx], write_statements(_probe("new", "taken")))
    assert not isinstance(caught.value, ConflictError)
    assert _probes(store) == ["taken"] and store.head(ctx.id) == 1 and ctx.stored_seq == 1
    store._save_with([ctx], write_statements(_probe("new")))  # the connection works on
    assert store.load(ctx.id).messages == ctx.messages and _probes(store) == ["new", "taken"]


def test_a_seq_stored_twice_is_a_conflict(store: Store) -> None:
    ctx = Context()
    ctx.add_message(Message.user("one"))
    store.save(ctx)
    _run(store, "INSERT INTO ctxfold_events (context_id, seq, data) VALUES (?, 1, '{}')", (ctx.id,))
    ctx.add_message(Message.user("two"))
    with pytest.raises(ConflictError, match="a seq from 1 on is already stored"):
        store._save_with([ctx], write_statements(_probe("refused")))
    assert _probes(store) == [] and store.head(ctx.id) == 1 and ctx.stored_seq == 1


def test_more_rows_than_a_statement_holds_are_one_transaction(store: Store) -> None:
    # past SQLite's bound on a statement's parameters: several statements, still all or none
    ctx = Context()
    for i in range(2000):
        ctx.add_message(Message.user(f"m{i}"))
    store._save_with([], write_statements(_probe("warm")))
    statements = write_statements(_probe(*(f"{i:05}" for i in range(3000))))
    assert len(statements) == 1  # alone one statement; with the 2,001 rows of the save, too many
    store._save_with([ctx], statements)
    assert len(_probes(store)) == 3001
    assert len(store.load(ctx.id).messages) == 2000
    more = write_statements(_probe(*(f"x{i:05}" for i in range(5000))))
    assert len(more) == 2
    ctx.add_message(Message.user("last"))
    with pytest.raises(StoreError, match="probe"):
        store._save_with([ctx], [*more, *write_statements(_probe("00000"))])  # the last row's key is taken
    assert len(_probes(store)) == 3001 and store.head(ctx.id) == 2000 and ctx.stored_seq == 2000


def test_a_store_made_before_the_view_gets_it_when_opened(sqlite_url) -> None:
    with Store(sqlite_url) as store:
        ctx = Context()
        ctx.add_message(Message.user("old"))
        store.save(ctx)
    without_write_view(sqlite_url)
    with Store(sqlite_url) as store:
        for statement in _PROBE:
            _run(store, statement)
        ctx = store.load(ctx.id)
        ctx.add_message(Message.user("new"))
        store._save_with([ctx], write_statements(_probe("x")))
        assert [m.content for m in store.load(ctx.id).messages] == ["old", "new"] and _probes(store) == ["x"]


@pytest.mark.parametrize("rows", [1, 3, 4, 5, 8, 9, 16, 17, 40])
def test_a_statement_is_padded_to_its_bucket_and_the_padding_writes_nothing(store: Store, rows: int) -> None:
    params: list[object] = [x for row in _probe(*(f"{i:03}" for i in range(rows))) for x in row]
    sql, padded = write_rows(list(params))
    bucket = rows if rows <= 8 else 1 << (rows - 1).bit_length()  # exact up to 8, then 16, 32, …
    assert sql.count("(?") == bucket and len(padded) == 10 * bucket and padded[:len(params)] == params
    ctx = Context()
    ctx.add_message(Message.user("one"))
    store._save_with([ctx], write_statements(_probe(*(f"{i:03}" for i in range(rows)))))
    assert _probes(store) == [f"{i:03}" for i in range(rows)]
    assert [m.content for m in store.load(ctx.id).messages] == ["one"]


def test_a_new_connection_never_waits_for_another_writer_and_then_waits_as_before(store: Store, sqlite_url) -> None:
    # Once the view has a user, each connection compiles the view's statements as it opens, by
    # running them with padding rows only; another connection's write lock makes that fail at
    # once (compiled all the same), not wait out the busy timeout, and the timeout is the
    # store's again afterwards.
    path = sqlite_url.removeprefix("sqlite://")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    backend = store._backend  # type: ignore[attr-defined]
    first = backend._acquire()
    backend.warm_view(first)
    opened: list[sqlite3.Connection] = []
    try:
        opener = threading.Thread(target=lambda: opened.append(backend._acquire()))
        opener.start()
        opener.join(timeout=20)  # the busy timeout is 60 s: waiting for the lock would not end here
        assert not opener.is_alive() and len(opened) == 1
        assert opened[0].execute("PRAGMA busy_timeout").fetchone()[0] == 60_000
        threading.Timer(0.3, holder.execute, ("COMMIT",)).start()
        ctx = Context()
        ctx.add_message(Message.user("after the lock"))
        backend._release(opened.pop())
        store._save_with([ctx], write_statements(_probe("waited")))  # waits for the holder, then writes
        assert _probes(store) == ["waited"]
    finally:
        backend._release(first)
        for con in opened:
            backend._release(con)
        holder.close()
