"""Store rows that lie, on both backends: a state row that is not its events' companion, event
seqs and heads that are not non-negative integers, listing columns of the wrong type, a URL
psycopg cannot parse, a schema version below 1, a bad ``stored_seq``, and a refresh racing an
append on the same Context. Each gives a ctxfold error naming the context, never a bare
``TypeError``/``ValueError``/``OverflowError`` or another context."""

from __future__ import annotations

import json
import threading

import pytest
from _stores import Sql
from ctxfold import ConflictError, Context, DecodeError, Message, Store, StoreError


def _saved(url: str, n: int = 3) -> Context:
    with Store(url) as store:
        ctx = Context()
        ctx.add_messages([Message.user(f"u{i}") for i in range(n)])
        store.save(ctx)
    return ctx


def _state(sql: Sql, cid: str) -> dict:
    return json.loads(sql.run("SELECT state FROM ctxfold_contexts WHERE id = %s", cid)[0][0])


def _set_state(sql: Sql, cid: str, state: dict) -> None:
    sql.run("UPDATE ctxfold_contexts SET state = %s WHERE id = %s", json.dumps(state), cid)


# ---- the state row is the companion of the events asked for -------------------------------


def test_a_state_naming_another_id_is_refused(store_url, sql):
    ctx = _saved(store_url)
    state = _state(sql, ctx.id)
    _set_state(sql, ctx.id, {**state, "id": "someone-else"})
    with Store(store_url) as store, pytest.raises(DecodeError, match=f"context {ctx.id}: state: .*someone-else"):
        store.load(ctx.id)


def test_a_state_without_an_id_is_refused(store_url, sql):
    ctx = _saved(store_url)
    state = _state(sql, ctx.id)
    del state["id"]
    _set_state(sql, ctx.id, state)
    with Store(store_url) as store, pytest.raises(DecodeError, match=f"context {ctx.id}: state: .*id"):
        store.load(ctx.id)


@pytest.mark.parametrize("version", [1, 3, 0, "2", None])
def test_a_state_of_another_version_is_refused(store_url, sql, version):
    ctx = _saved(store_url)
    state = _state(sql, ctx.id)
    _set_state(sql, ctx.id, {**state, "version": version, "messages": []})
    with Store(store_url) as store, pytest.raises(DecodeError, match=f"context {ctx.id}: state: .*version"):
        store.load(ctx.id)


def test_the_loaded_id_is_the_asked_id(store_url):
    ctx = _saved(store_url)
    with Store(store_url) as store:
        assert store.load(ctx.id).id == ctx.id


# ---- seqs and heads ------------------------------------------------------------------------


@pytest.mark.parametrize("seq", ["'abc'", "2.5", "x'00'"])
def test_a_non_integer_event_seq_is_a_decode_error(sqlite_url, seq):
    ctx = _saved(sqlite_url)
    with Store(sqlite_url) as store:
        reader = store.load(ctx.id)
        ctx.add_message(Message.user("more"))
        store.save(ctx)
    s = Sql(sqlite_url)
    s.run(f"UPDATE ctxfold_events SET seq = {seq} WHERE seq = 3")
    s.close()
    with Store(sqlite_url) as store:
        with pytest.raises(DecodeError, match=f"context {ctx.id}: .*seq"):
            store.load(ctx.id)
        before = reader.serialize()
        with pytest.raises(DecodeError, match=f"context {ctx.id}: .*seq"):
            store.refresh(reader)
        assert reader.serialize() == before


def test_a_negative_event_seq_is_a_decode_error(store_url, sql):
    ctx = _saved(store_url)
    sql.run("UPDATE ctxfold_events SET seq = -5 WHERE seq = 0")
    with Store(store_url) as store, pytest.raises(DecodeError, match=f"context {ctx.id}: "):
        store.load(ctx.id)


@pytest.mark.parametrize("head", ["'abc'", "-1", "2.5", "x'03'"])
def test_a_corrupt_next_seq_is_a_decode_error(sqlite_url, head):
    ctx = _saved(sqlite_url)
    s = Sql(sqlite_url)
    s.run(f"UPDATE ctxfold_contexts SET next_seq = {head}")
    s.close()
    with Store(sqlite_url) as store:
        for read in (store.load, store.head):
            with pytest.raises(DecodeError, match=f"context {ctx.id}: next_seq"):
                read(ctx.id)
        assert ctx.id in store  # the row is there, whatever it holds
        with pytest.raises(DecodeError, match=f"context {ctx.id}: next_seq"):
            store.list()


def test_a_negative_next_seq_is_a_decode_error(store_url, sql):
    ctx = _saved(store_url)
    sql.run("UPDATE ctxfold_contexts SET next_seq = -1")
    with Store(store_url) as store:
        for read in (store.load, store.head):
            with pytest.raises(DecodeError, match=f"context {ctx.id}: next_seq"):
                read(ctx.id)
        with pytest.raises(DecodeError, match=f"context {ctx.id}: next_seq"):
            store.list()
        with pytest.raises(DecodeError, match=f"context {ctx.id}: next_seq"):
            store.refresh(ctx)


# ---- listings ------------------------------------------------------------------------------


@pytest.mark.parametrize(("column", "value"), [
    ("created_at", "'yesterday'"), ("updated_at", "'2024-13-45T99:00:00.000000Z'"), ("updated_at", "42"),
    ("next_seq", "'seven'"), ("message_count", "'three'"), ("message_count", "-2"), ("agent_name", "x'00ff'"),
    ("origin_context_id", "x'31'"), ("id", "x'6869'"),
])
def test_a_listing_column_of_the_wrong_type_is_a_decode_error(sqlite_url, column, value):
    _saved(sqlite_url)
    s = Sql(sqlite_url)
    s.run(f"UPDATE ctxfold_contexts SET {column} = {value}")
    s.close()
    with Store(sqlite_url) as store, pytest.raises(DecodeError, match=f"{column}"):
        store.list()


def test_listings_are_typed(store_url):
    ctx = _saved(store_url)
    with Store(store_url) as store:
        (only,) = store.list()
    assert (only.id, only.next_seq, only.message_count) == (ctx.id, 3, 3)
    assert type(only.next_seq) is int and type(only.message_count) is int


# ---- opening -------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["postgresql://%zz", "postgresql://host:notaport/db", "postgres://a b c=d"])
def test_an_unparsable_postgres_url_is_a_store_error(url):
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError):
        Store(url)


@pytest.mark.parametrize("version", [0, -3])
def test_a_schema_version_below_one_is_refused(store_url, sql, version):
    _saved(store_url)
    sql.run("UPDATE ctxfold_schema SET version = %s", version)
    with pytest.raises(StoreError, match="version"):
        Store(store_url)


# ---- stored_seq ----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "error"), [(-1, ValueError), (2**64, ValueError), ("3", TypeError),
                                              (2.0, TypeError), (True, TypeError)])
def test_a_bad_stored_seq_is_refused_when_set(value, error):
    ctx = Context()
    with pytest.raises(error, match="stored_seq"):
        ctx.stored_seq = value
    assert ctx.stored_seq is None
    ctx.stored_seq = 0
    assert ctx.stored_seq == 0


# ---- refresh racing an append on the same Context ------------------------------------------


def test_refresh_racing_appends_is_a_conflict_or_success(store_url):
    """One thread appends to a Context while another refreshes it from a store that a second
    writer has moved on: each refresh catches up or is a ConflictError, never a DecodeError
    about sound rows, and the Context ends whole."""
    ctx = _saved(store_url, 1)
    outcomes = {"ok": 0, "conflict": 0}
    errors: list[BaseException] = []
    with Store(store_url) as store:
        writer = store.load(ctx.id)
        for i in range(120):
            reader = store.load(ctx.id)
            writer.add_message(Message.user(f"w{i}"))
            store.save(writer)
            start = threading.Barrier(2)

            def append(reader: Context = reader, wait: int = i % 12, start: threading.Barrier = start) -> None:
                start.wait()
                for _ in range(wait * 40):
                    pass
                reader.add_message(Message.user("local"))

            t = threading.Thread(target=append)
            t.start()
            start.wait()
            try:
                store.refresh(reader)
                outcomes["ok"] += 1
            except ConflictError:
                outcomes["conflict"] += 1
            except BaseException as e:  # noqa: BLE001 - the test reports whatever escaped
                errors.append(e)
            t.join()
            assert Context.deserialize(reader.serialize()).serialize() == reader.serialize()
            assert reader.messages[-1].text == "local"
    assert not errors, errors[:3]
    assert sum(outcomes.values()) == 120


def test_the_cli_shows_a_corrupt_seq_as_one_line(sqlite_url, capsys):
    from ctxfold._cli import main

    ctx = _saved(sqlite_url)
    s = Sql(sqlite_url)
    s.run("UPDATE ctxfold_events SET seq = 'abc' WHERE seq = 1")
    s.close()
    assert main(["store", sqlite_url, ctx.id]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"context {ctx.id}: seq 'abc'" in err and "Traceback" not in err
