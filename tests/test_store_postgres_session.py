"""A PostgreSQL transaction in one round trip (the store's saves and snapshot reads, the
LangGraph saver's rows): what it commits, what a failing statement or an exception in the
block leaves (nothing, and an idle connection), and that a statement's error coming back while
later ones are still being queued is raised cleanly, without psycopg's warning about ending a
pipeline over an error."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")

from _stores import pg_url  # noqa: E402,F401
from ctxfold import AsyncStore, Context, Message, Store  # noqa: E402
from ctxfold.errors import ConflictError  # noqa: E402
from ctxfold.stores._postgres_session import BEGIN_SNAPSHOT, connect, connect_async, one_trip, one_trip_async  # noqa: E402

IDLE = psycopg.pq.TransactionStatus.IDLE


@pytest.fixture
def con(pg_url):  # noqa: F811
    c = psycopg.connect(pg_url, autocommit=True)
    c.execute("CREATE TABLE t (k int PRIMARY KEY)")
    yield c
    c.close()


def _keys(con) -> list[int]:
    return [r[0] for r in con.execute("SELECT k FROM t ORDER BY k").fetchall()]


def test_connections_prepare_at_once_and_plan_generically(pg_url) -> None:  # noqa: F811
    # the store's, the async store's and the LangGraph tables' connections are all made here
    with connect(pg_url) as c:
        assert c.prepare_threshold == 0 and c.autocommit
        assert c.execute("SHOW plan_cache_mode").fetchone() == ("force_generic_plan",)
        c.execute("SELECT %s::int", (1,))
        assert c.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0] >= 1
    with Store(pg_url) as store:
        store.head("x")
        assert store._db._all[0].execute("SHOW plan_cache_mode").fetchone() == ("force_generic_plan",)

    async def main() -> tuple[Any, ...]:
        async with await connect_async(pg_url) as c:
            return (c.prepare_threshold, await (await c.execute("SHOW plan_cache_mode")).fetchone())

    assert asyncio.run(main()) == (0, ("force_generic_plan",))


def test_the_statements_commit_together(con) -> None:
    with one_trip(con):
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("INSERT INTO t VALUES (2)")
    assert _keys(con) == [1, 2]
    assert con.info.transaction_status == IDLE


@pytest.mark.parametrize("late", [False, True])
def test_a_failing_statement_writes_nothing_and_warns_nothing(con, caplog, late) -> None:
    caplog.set_level(logging.WARNING, logger="psycopg")
    with pytest.raises(psycopg.errors.UniqueViolation):
        with one_trip(con):
            con.execute("INSERT INTO t VALUES (1)")
            con.execute("INSERT INTO t VALUES (1)")
            if late:  # the error is back before the next statement is queued
                time.sleep(0.1)
            con.execute("INSERT INTO t VALUES (3)")
    assert _keys(con) == []
    assert con.info.transaction_status == IDLE
    assert not [r for r in caplog.records if r.name.startswith("psycopg")]


def test_an_exception_in_the_block_writes_nothing(con) -> None:
    with pytest.raises(RuntimeError):
        with one_trip(con):
            con.execute("INSERT INTO t VALUES (1)")
            raise RuntimeError("the caller's own failure")
    assert _keys(con) == []
    assert con.info.transaction_status == IDLE


def test_a_connection_keeps_working_after_refused_saves(pg_url) -> None:  # noqa: F811
    # Two stores save one context in turn, the second always refused: its connection runs the
    # same statements again and again (psycopg prepares them from their fifth run) between
    # failed transactions. A rollback that left psycopg believing in statements the server no
    # longer had made the next read fail ("prepared statement … does not exist").
    with Store(pg_url) as a, Store(pg_url) as b:
        ctx = Context()
        a.save(ctx)
        mine, theirs = a.load(ctx.id), b.load(ctx.id)
        for i in range(12):
            mine.add_messages([Message("user", f"a{i}")])
            a._save_with([mine], [("SELECT %s", (i,))])
            theirs.add_messages([Message("user", f"b{i}")])
            with pytest.raises(ConflictError):
                b._save_with([theirs], [("SELECT %s", (i,))])
            theirs = b.load(ctx.id)
        assert [m.content for m in b.load(ctx.id).messages] == [f"a{i}" for i in range(12)]


def test_an_async_connection_keeps_working_after_refused_saves(pg_url) -> None:  # noqa: F811
    async def main() -> list[str]:
        async with AsyncStore(pg_url) as a, AsyncStore(pg_url) as b:
            ctx = Context()
            await a.save(ctx)
            mine, theirs = await a.load(ctx.id), await b.load(ctx.id)
            for i in range(12):
                mine.add_messages([Message("user", f"a{i}")])
                await a._save_with([mine], [("SELECT %s", (i,))])
                theirs.add_messages([Message("user", f"b{i}")])
                with pytest.raises(ConflictError):
                    await b._save_with([theirs], [("SELECT %s", (i,))])
                theirs = await b.load(ctx.id)
            return [str(m.content) for m in (await b.load(ctx.id)).messages]

    assert asyncio.run(main()) == [f"a{i}" for i in range(12)]


def test_a_snapshot_read_sees_one_state(con) -> None:
    con.execute("INSERT INTO t VALUES (1)")
    with one_trip(con, BEGIN_SNAPSHOT):
        first = con.execute("SELECT count(*) FROM t")
        second = con.execute("SELECT k FROM t")
    assert first.fetchone() == (1,) and second.fetchall() == [(1,)]
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        with one_trip(con, BEGIN_SNAPSHOT):
            con.execute("INSERT INTO t VALUES (2)")
    assert _keys(con) == [1]


@pytest.mark.parametrize("late", [False, True])
def test_async_the_same(pg_url, caplog, late) -> None:  # noqa: F811
    caplog.set_level(logging.WARNING, logger="psycopg")

    async def main() -> list[int]:
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as c:
            await c.execute("CREATE TABLE t (k int PRIMARY KEY)")
            async with one_trip_async(c):
                await c.execute("INSERT INTO t VALUES (1)")
            with pytest.raises(psycopg.errors.UniqueViolation):
                async with one_trip_async(c):
                    await c.execute("INSERT INTO t VALUES (2)")
                    await c.execute("INSERT INTO t VALUES (1)")
                    if late:
                        await asyncio.sleep(0.1)
                    await c.execute("INSERT INTO t VALUES (3)")
            with pytest.raises(RuntimeError):
                async with one_trip_async(c):
                    await c.execute("INSERT INTO t VALUES (4)")
                    raise RuntimeError("the caller's own failure")
            assert c.info.transaction_status == IDLE
            cur = await c.execute("SELECT k FROM t ORDER BY k")
            return [r[0] for r in await cur.fetchall()]

    assert asyncio.run(main()) == [1]
    assert not [r for r in caplog.records if r.name.startswith("psycopg")]
