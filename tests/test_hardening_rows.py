"""A row fuzzer over every column of every table of a store, on SQLite and PostgreSQL: one value
of one row is replaced by anything the database will hold there (SQLite: any type; PostgreSQL:
any value of the column's type, or an edit of the value that was there), and then the store is
opened, listed, asked for heads and membership, loaded, and a context loaded before is
refreshed. The only outcomes allowed are a ctxfold error or a correct answer: a load gives the
context asked for, whole; a refresh that fails leaves the context as it was."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from _stores import Sql
from ctxfold import Context, ContextError, Message, Part, Store, StoredContext, SystemPromptMessage
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

# Every column of every table, with its type (as both backends declare it, in words).
COLUMNS = {
    "ctxfold_schema": {"version": "int"},
    "ctxfold_contexts": {"id": "text", "next_seq": "int", "created_at": "time", "updated_at": "time",
                         "message_count": "int", "agent_name": "text", "origin_context_id": "text",
                         "state": "text"},
    "ctxfold_events": {"context_id": "text", "seq": "int", "data": "text"},
    "ctxfold_content": {"context_id": "text", "ord": "int", "hash": "text", "text": "text"},
}
TARGETS = [(t, c) for t, cols in COLUMNS.items() for c in cols]


def _seed(url: str) -> tuple[str, Context]:
    """A context saved in two turns, and a copy loaded after the first (to refresh)."""
    with Store(url) as store:
        ctx = Context.create(SystemPromptMessage.create("sys", hooks=["mem"]))
        ctx.agent_name = "agent"
        ctx.add_messages([Message.user("u0"), Message.assistant([Part.text("a0")],
                                                                tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}])])
        ctx.materialize({"mem": "first"})
        store.save(ctx)
        reader = store.load(ctx.id)
        ctx.add_messages([Message.tool("c1", "r"), Message.user("u1 \x00 𝄞")])
        ctx.materialize({"mem": "second"})
        ctx.add_anchor("pin", 2)
        store.save(ctx)
    return ctx.id, reader


def _ensure_schema(url: str, sql: Sql) -> None:
    """The store's tables, made by the store the first time (later examples reuse them)."""
    if sql.postgres:
        have = sql.run("SELECT count(*) FROM pg_tables WHERE tablename = 'ctxfold_schema' "
                       "AND schemaname = current_schema()")[0][0]
    else:
        have = sql.run("SELECT count(*) FROM sqlite_master WHERE name = 'ctxfold_schema'")[0][0]
    if not have:
        Store(url).close()


def _clear(sql: Sql) -> None:
    for t in ("ctxfold_events", "ctxfold_content", "ctxfold_contexts"):
        sql.run(f"DELETE FROM {t}")
    sql.run("DELETE FROM ctxfold_schema")
    sql.run("INSERT INTO ctxfold_schema (version) VALUES (1)")


# What is drawn never depends on what the database holds (ids, times and their lengths differ
# from one run to the next, and hypothesis replays draws): a value is drawn as a recipe, and
# applied to the value that was there.
EDITS = st.tuples(st.sampled_from(["cut", "replace", "insert"]), st.integers(0, 500), st.text(min_size=1, max_size=2))


def _edited(old: object, edit: tuple[str, int, str]) -> str:
    """An edit of a text value: cut short, or one character replaced or inserted."""
    if isinstance(old, bytes):
        old = old.decode("utf-8", "replace")
    old = old if isinstance(old, str) else ""
    how, at, piece = edit
    i = min(at, len(old))
    return {"cut": old[:i], "replace": old[:i] + piece + old[i + 1:], "insert": old[:i] + piece + old[i:]}[how]


def _values(postgres: bool, kind: str) -> st.SearchStrategy:
    """A recipe: a function of the value that was there."""
    ints = st.one_of(st.integers(-3, 12), st.integers(-(2**63), 2**63 - 1))

    def const(v: st.SearchStrategy) -> st.SearchStrategy:
        return v.map(lambda x: lambda old: x)

    edits = EDITS.map(lambda e: lambda old: _edited(old, e))
    if postgres:
        if kind == "int":
            return const(ints)
        if kind == "time":
            return const(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                                      timezones=st.just(timezone(timedelta(hours=5)))))
        return st.one_of(edits, const(st.text(max_size=8))).map(lambda f: lambda old: f(old).replace("\x00", ""))
    anything = const(st.one_of(ints, st.floats(allow_nan=False), st.text(max_size=8), st.binary(max_size=8)))
    if kind in ("text", "time"):
        as_blob = edits.map(lambda f: lambda old: f(old).encode("utf-8", "surrogatepass"))
        return st.one_of(edits, as_blob, anything)
    return anything


def _rows(sql: Sql, table: str) -> list:
    key = "ctid" if sql.postgres else "rowid"
    return [r[0] for r in sql.run(f"SELECT {key} FROM {table} ORDER BY {key}")]


def _check_listing(store: Store) -> None:
    try:
        listed = store.list()
    except ContextError:
        return
    for s in listed:
        assert isinstance(s, StoredContext) and isinstance(s.id, str)
        assert type(s.next_seq) is int and s.next_seq >= 0 and type(s.message_count) is int and s.message_count >= 0
        assert isinstance(s.created_at, datetime) and isinstance(s.updated_at, datetime)
        assert s.agent_name is None or isinstance(s.agent_name, str)
        assert s.origin_context_id is None or isinstance(s.origin_context_id, str)


def _check_load(store: Store, cid: str, present: bool) -> None:
    try:
        head = store.head(cid)
    except ContextError:
        head = None
    else:
        assert (head is not None) == present and (head is None or (type(head) is int and head >= 0))
    assert (cid in store) == present
    try:
        ctx = store.load(cid)
    except KeyError:
        assert not present
        return
    except ContextError:
        return
    assert present and ctx.id == cid
    if head is not None:
        assert ctx.stored_seq == head == ctx.next_seq
    doc = ctx.serialize()
    again = Context.deserialize(doc)
    assert again.serialize() == doc
    assert again.messages == ctx.messages and len(ctx.events()) == ctx.next_seq


def _check_refresh(store: Store, reader: Context) -> None:
    before = reader.serialize()
    try:
        store.refresh(reader)
    except ContextError:
        assert reader.serialize() == before
        return
    assert Context.deserialize(reader.serialize()).serialize() == reader.serialize()


def _fuzz(url: str, data: st.DataObject) -> None:
    sql = Sql(url)
    try:
        _ensure_schema(url, sql)
        _clear(sql)
        cid, reader = _seed(url)
        table, column = data.draw(st.sampled_from(TARGETS), label="column")
        key = "ctid" if sql.postgres else "rowid"
        rows = _rows(sql, table)
        row = rows[data.draw(st.integers(0, 63), label="row") % len(rows)]
        (old,) = sql.run(f"SELECT {column} FROM {table} WHERE {key} = %s", row)[0]
        value = data.draw(_values(sql.postgres, COLUMNS[table][column]), label="value")(old)
        try:
            sql.run(f"UPDATE {table} SET {column} = %s WHERE {key} = %s", value, row)
        except Exception:  # noqa: BLE001 - a value the database itself refuses is no row to read
            assume(False)
        try:
            store = Store(url)
        except ContextError:
            return
        with store:
            _check_listing(store)
            ids = [r[0] for r in sql.run("SELECT id FROM ctxfold_contexts")]
            for asked in {cid, *(i for i in ids if isinstance(i, str))}:
                _check_load(store, asked, asked in ids)
            _check_refresh(store, reader)
    finally:
        sql.close()


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.data())
def test_any_value_in_any_sqlite_column_is_a_ctxfold_error_or_a_correct_load(sqlite_url, data):
    _fuzz(sqlite_url, data)


@FUZZ
@given(data=st.data())
def test_any_value_in_any_postgres_column_is_a_ctxfold_error_or_a_correct_load(pg_url, data):
    _fuzz(pg_url, data)


@pytest.mark.parametrize(("table", "column"), TARGETS)
def test_every_column_is_fuzzed(table, column, sqlite_url):
    """The fuzzer's table of columns is the schema: a column added later is fuzzed too."""
    Store(sqlite_url).close()
    sql = Sql(sqlite_url)
    try:
        declared = {r[1] for r in sql.run(f"SELECT * FROM pragma_table_info('{table}')")}
    finally:
        sql.close()
    assert declared == set(COLUMNS[table]) and column in declared
