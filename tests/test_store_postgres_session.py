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
from ctxfold.errors import ConflictError, StoreError  # noqa: E402
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


# ---- Connection.run: one statement through libpq's blocking call -------------------------------


def test_run_gives_what_execute_gives(pg_url) -> None:  # noqa: F811
    import datetime

    with connect(pg_url) as c:
        c.execute("CREATE TABLE r (k bigint PRIMARY KEY, t text, b bytea, at timestamptz, a bigint[], n text)")
        at = datetime.datetime(2026, 12, 2, 15, 0, 1, 123456, tzinfo=datetime.timezone.utc)
        row = (2**40, "tëxt 𝄞 100%", b"\x00\xff bytes", at, [1, 2, 3], None)
        c.run("INSERT INTO r VALUES (%s, %s, %s, %s, %b, %s)", row)
        assert c.run("SELECT * FROM r").fetchall() == [row] == c.execute("SELECT * FROM r").fetchall()
        assert c.run("SELECT k FROM r WHERE t LIKE %s", ("%100%%",)).fetchone() == (2**40,)
        assert c.run("SELECT '100%%'").fetchone() == ("100%",)  # %% is a percent sign
        assert c.run("SELECT k FROM r WHERE k = %s", (0,)).fetchone() is None
        assert c.run("UPDATE r SET n = %s", ("x",)).fetchall() == []


def test_run_raises_psycopgs_errors_and_the_connection_works_on(pg_url) -> None:  # noqa: F811
    with connect(pg_url) as c:
        c.execute("CREATE TABLE u (k int PRIMARY KEY)")
        c.run("INSERT INTO u VALUES (%s)", (1,))
        with pytest.raises(psycopg.errors.UniqueViolation) as caught:
            c.run("INSERT INTO u VALUES (%s)", (1,))
        assert caught.value.diag.constraint_name == "u_pkey"
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.run("SELECT * FROM no_such_table")
        assert c.info.transaction_status == IDLE
        c.run("INSERT INTO u VALUES (%s)", (2,))
        assert c.run("SELECT k FROM u ORDER BY k").fetchall() == [(1,), (2,)]


def test_run_prepares_once_and_again_after_deallocate_all(pg_url) -> None:  # noqa: F811
    with connect(pg_url) as c:
        def ours() -> int:
            return c.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'ctxfold%%'").fetchone()[0]

        for n in range(3):
            assert c.run("SELECT %s::int + 1", (n,)).fetchone() == (n + 1,)
        assert ours() == 1
        c.execute("DEALLOCATE ALL")  # what psycopg sends on a rollback when it prepared statements
        assert ours() == 0
        assert c.run("SELECT %s::int + 1", (5,)).fetchone() == (6,)
        assert ours() == 1


def test_a_statements_first_run_prepares_it_in_the_same_round_trip(pg_url) -> None:  # noqa: F811
    # the first run of a statement on a connection sends its preparation, the run and a sync
    # together: whatever fails, the connection is left idle, out of pipeline mode, and a name
    # is kept only for a statement the server prepared
    with connect(pg_url) as c:
        def ours() -> int:
            return c.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'ctxfold%%'").fetchone()[0]

        def clean() -> bool:
            return c.info.transaction_status == IDLE and c.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF

        c.execute("CREATE TABLE f (k int PRIMARY KEY, v text)")
        assert c.run("INSERT INTO f VALUES (%s, %s) RETURNING k, v", (1, "a")).fetchall() == [(1, "a")]
        assert clean() and ours() == 1
        with pytest.raises(psycopg.errors.SyntaxError):  # refused at preparation: no name kept
            c.run("SELEC %s", (1,))
        assert clean() and ours() == 1 and len(c._ctxfold_names or {}) == 1
        with pytest.raises(psycopg.errors.DivisionByZero):  # prepared, then failing at its run
            c.run("SELECT 1 / %s::int", (0,))
        assert clean() and ours() == 2
        assert c.run("SELECT 1 / %s::int", (1,)).fetchone() == (1,)  # the name kept is used
        assert ours() == 2
        big = "x" * 2_000_000  # more than a socket takes at once: sent as the socket drains
        assert c.run("SELECT length(%s)", (big,)).fetchone() == (len(big),)
        assert clean()


def test_run_on_a_connection_the_server_ended(pg_url) -> None:  # noqa: F811
    with connect(pg_url) as c, psycopg.connect(pg_url, autocommit=True) as killer:
        pid = c.info.backend_pid
        killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(100):  # until the server has ended it
            if killer.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0] == 0:
                break
            time.sleep(0.02)
        with pytest.raises(psycopg.OperationalError):
            c.run("SELECT 1")
        assert c.closed  # the pool drops it, never reuses it


def test_a_store_on_a_connection_the_server_ended_opens_another(pg_url) -> None:  # noqa: F811
    with Store(pg_url) as store, psycopg.connect(pg_url, autocommit=True) as killer:
        ctx = Context()
        ctx.add_message(Message.user("one"))
        store.save(ctx)
        for con in store._db._all:
            killer.execute("SELECT pg_terminate_backend(%s)", (con.info.backend_pid,))
        time.sleep(0.2)
        with pytest.raises(StoreError, match="terminat|closed|lost"):  # the read on the ended connection
            store.head(ctx.id)
        assert store.head(ctx.id) == 1  # a new connection
        ctx.add_message(Message.user("two"))
        store.save(ctx)
        assert store.load(ctx.id).messages == ctx.messages


def test_each_kind_of_call_goes_back_to_its_connection(pg_url) -> None:  # noqa: F811
    # A kind of call takes the connection it had last when that one is idle, and otherwise one
    # no other kind had last: calls that overlap prepare each statement on one connection.
    with Store(pg_url) as store:
        pool = store._db
        pool.open_idle(3)
        assert len(pool._all) == 3 and len(pool._idle) == 3
        mine = pool._acquire()
        pool._release(mine)
        writes = pool._acquire("writes")
        reads = pool._acquire("reads")
        assert len({id(mine), id(writes), id(reads)}) == 3
        pool._release(writes)
        pool._release(reads)
        for _ in range(3):
            for kind, con in (("", mine), ("writes", writes), ("reads", reads)):
                got = pool._acquire(kind)
                assert got is con
                pool._release(got)
        # its own one busy, a kind borrows another kind's idle one for the call, and goes back
        # to its own after
        held = pool._acquire("writes")
        lent = pool._acquire("writes")
        assert lent in (mine, reads)
        pool._release(lent)
        pool._release(held)
        assert pool._acquire("writes") is writes
        pool._release(writes)
        # a new kind, with every connection another kind's: it borrows; with none idle, a new
        # connection, which becomes its own
        busy = [pool._acquire(k) for k in ("", "writes", "reads")]
        fresh = pool._acquire("tables")
        assert fresh not in busy and len(pool._all) == 4
        for con in [*busy, fresh]:
            pool._release(con)
        assert pool._acquire("tables") is fresh
        pool._release(fresh)
        # a kind whose connection was closed while idle has none: it borrows an open one
        fresh.close()
        again = pool._acquire("tables")
        assert again in (mine, writes, reads) and "tables" not in pool._last
        pool._release(again)
        store.save(Context(messages=[Message.user("still works")]))


_MINE = [("SELECT count(*) FROM ctxfold_schema WHERE version = %s", (-1,)),
         ("INSERT INTO ctxfold_schema (version) VALUES (%s)", (-1,))]
_SAVE = [("INSERT INTO ctxfold_schema (version) VALUES (%s)", (-2,))]
_UNDO = [("DELETE FROM ctxfold_schema WHERE version < %s", (0,))]


def _kept_nothing(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM ctxfold_schema WHERE version < 0").fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM ctxfold_contexts").fetchone() == (1,)
        assert c.execute("SELECT count(*) FROM ctxfold_events WHERE context_id LIKE 'ctxfold-trial-%'").fetchone() == (0,)


def _ran_it_all(names: set[str]) -> None:
    assert any("ctxfold_contexts" in t for t in names) and any("ctxfold_events" in t for t in names)
    assert any("ctxfold_content" in t for t in names) and any("ctxfold_schema" in t for t in names)
    saves = [t for t in names if "ctxfold_schema (version)" in t and "head0" in t]
    assert any("INSERT INTO ctxfold_contexts" in t for t in saves)  # with a new context's append
    assert any("UPDATE ctxfold_contexts" in t for t in saves)  # with a moved one's
    assert any(t.startswith("INSERT INTO ctxfold_schema") for t in names)  # alone


def test_open_idle_runs_what_the_caller_will_on_each_connection_and_keeps_nothing(pg_url) -> None:  # noqa: F811
    # the connections a caller will use at once are opened, and each has run a read of the
    # store's tables, the caller's statements and its saves (new context, moved one, no
    # append), prepared there, in one transaction that the caller's undo and the store's
    # own deletes end: nothing stays
    with Store(pg_url) as store:
        store.save(Context(messages=[Message.user("there before")]))
        pool = store._db
        pool.open_idle(3, _MINE, [_SAVE], _UNDO)
        assert len(pool._all) == 3 and len(pool._idle) == 3
        for con in pool._all:
            assert con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            _ran_it_all({text.decode() for text, _ in (con._ctxfold_names or {})})
        _kept_nothing(pg_url)
        with pytest.raises(StoreError, match="no_such_table"):  # a statement that fails: no connection in a transaction
            pool.open_idle(3, [("SELECT 1 FROM no_such_table", ())], [_SAVE], _UNDO)
        assert all(con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE for con in pool._all)
        _kept_nothing(pg_url)
        store.save(Context(messages=[Message.user("still works")]))


def test_an_async_stores_open_idle_does_the_same_for_its_event_loop(pg_url) -> None:  # noqa: F811
    async def main() -> None:
        with Store(pg_url) as store:
            store.save(Context(messages=[Message.user("there before")]))
        async with AsyncStore(pg_url) as store:
            await store._open_idle(3, _MINE, [_SAVE], _UNDO)
            idle = [con for _, con in store._backend._idle]
            assert len(idle) == 3
            for con in idle:  # prepared where the calls will find them: psycopg's own cache
                _ran_it_all({key[0].decode() for key in con._prepared._names})
            _kept_nothing(pg_url)
            with pytest.raises(StoreError, match="no_such_table"):
                await store._open_idle(3, [("SELECT 1 FROM no_such_table", ())], [_SAVE], _UNDO)
            assert all(con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
                       for _, con in store._backend._idle)
            _kept_nothing(pg_url)
            await store.save(Context(messages=[Message.user("still works")]))

    asyncio.run(main())
