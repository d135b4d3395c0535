"""``ctxfold.AsyncStore``: the Store's methods as coroutines, on SQLite (a worker thread) and
PostgreSQL (psycopg's async connections), sharing one database with the blocking ``Store``;
and the event loop keeps running while a save waits on the database."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import ctxfold
import pytest
from ctxfold import AsyncStore, ConflictError, Context, Message, Store, StoreError


def turn(ctx: Context, n: int) -> None:
    ctx.add_messages([Message.user(f"question {n}"), Message.assistant(f"answer {n}")])


def test_the_methods_as_coroutines(store_url):
    async def go() -> None:
        async with AsyncStore(store_url) as store:
            ctx = Context(system_prompt="Be brief", agent_name="a")
            turn(ctx, 0)
            await store.save(ctx)
            assert ctx.stored_seq == ctx.next_seq
            assert await store.contains(ctx.id)
            assert not await store.contains("nope")
            assert await store.head(ctx.id) == ctx.next_seq
            back = await store.load(ctx.id)
            assert back.serialize() == ctx.serialize()
            assert back.stored_seq == ctx.next_seq
            turn(ctx, 1)
            await store.save(ctx)
            assert await store.refresh(back) == 2
            assert back.messages == ctx.messages
            [listed] = await store.list()
            assert (listed.id, listed.message_count, listed.agent_name) == (ctx.id, 4, "a")
            with pytest.raises(KeyError):
                await store.load("nope")
            with pytest.raises(ValueError):
                await store.list(limit=-1)
            await store.delete(ctx.id)
            with pytest.raises(KeyError):
                await store.delete(ctx.id)
            assert await store.list() == []

    asyncio.run(go())


def test_one_database_for_store_and_async_store(store_url):
    ctx = Context()
    turn(ctx, 0)
    with Store(store_url) as sync:
        sync.save(ctx)

        async def go() -> Context:
            async with AsyncStore(store_url) as store:
                assert store.url == sync.url
                loaded = await store.load(ctx.id)
                turn(loaded, 1)
                await store.save(loaded)
                turn(ctx, 1)  # the same turn, from a copy that is now behind
                with pytest.raises(ConflictError, match="another writer saved first"):
                    await store.save(ctx)
                return loaded

        loaded = asyncio.run(go())
        assert sync.load(ctx.id).messages == loaded.messages
        turn(loaded, 2)
        sync.save(loaded)  # saved through the async store, saved again through the blocking one


def test_exactly_one_of_two_racing_saves_wins(store_url):
    async def go() -> list[object]:
        async with AsyncStore(store_url) as store:
            ctx = Context()
            turn(ctx, 0)
            await store.save(ctx)
            a, b = await store.load(ctx.id), await store.load(ctx.id)
            turn(a, 1)
            turn(b, 2)
            return await asyncio.gather(store.save(a), store.save(b), return_exceptions=True)

    results = asyncio.run(go())
    assert sorted(type(r).__name__ for r in results) == ["ConflictError", "NoneType"]


def test_one_context_saved_from_two_tasks_saves_in_turn(store_url):
    async def go() -> tuple[int, int]:
        async with AsyncStore(store_url) as store:
            ctx = Context()

            async def save_turn(n: int) -> None:
                turn(ctx, n)
                await store.save(ctx)

            await asyncio.gather(*(save_turn(n) for n in range(8)))
            return (await store.load(ctx.id)).message_count, ctx.message_count

    stored, local = asyncio.run(go())
    assert stored == local == 16


def test_saving_a_deleted_context_is_a_conflict(store_url):
    async def go() -> None:
        async with AsyncStore(store_url) as store:
            ctx = Context()
            turn(ctx, 0)
            await store.save(ctx)
            await store.delete(ctx.id)
            with pytest.raises(ConflictError, match="deleted"):
                await store.save(ctx)
            assert not await store.contains(ctx.id)

    asyncio.run(go())


def test_closed_and_bad_urls():
    with pytest.raises(ValueError, match="unknown store URL"):
        AsyncStore("mysql://x")
    with pytest.raises(TypeError):
        AsyncStore(42)  # type: ignore[arg-type]


def test_a_closed_store_refuses_calls(sqlite_url):
    async def go() -> None:
        store = AsyncStore(sqlite_url)
        await store.save(Context())
        await store.close()
        await store.close()
        with pytest.raises(StoreError, match="closed"):
            await store.list()

    asyncio.run(go())


def test_the_loop_runs_while_a_sqlite_save_waits_for_the_lock(sqlite_url):
    """Another connection holds the file's write lock; only a coroutine on the same loop
    releases it. A save that blocked the loop would wait out SQLite's busy timeout and fail."""
    path = sqlite_url[len("sqlite://"):]

    async def go() -> str:
        async with AsyncStore(sqlite_url) as store:
            holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            holder.execute("BEGIN IMMEDIATE")
            released: list[str] = []
            safety = threading.Timer(30, lambda: released or holder.execute("ROLLBACK"))
            safety.start()

            async def release() -> None:
                await asyncio.sleep(0.3)  # the save is waiting for the lock by now
                released.append("by the loop")
                holder.execute("ROLLBACK")

            ctx = Context()
            turn(ctx, 0)
            await asyncio.gather(store.save(ctx), release())
            safety.cancel()
            holder.close()
            assert await store.head(ctx.id) == ctx.next_seq
            return released[0]

    assert asyncio.run(go()) == "by the loop"


def test_the_loop_runs_while_a_postgres_save_waits_for_a_row_lock(pg_url):
    import psycopg

    async def go() -> str:
        async with AsyncStore(pg_url) as store:
            ctx = Context()
            turn(ctx, 0)
            await store.save(ctx)
            turn(ctx, 1)
            holder = psycopg.connect(pg_url)
            holder.execute("SELECT 1 FROM ctxfold_contexts WHERE id = %s FOR UPDATE", (ctx.id,))
            released: list[str] = []
            safety = threading.Timer(30, lambda: released or holder.cancel())
            safety.start()

            async def release() -> None:
                await asyncio.sleep(0.3)
                released.append("by the loop")
                holder.rollback()

            await asyncio.gather(store.save(ctx), release())
            safety.cancel()
            holder.close()
            assert await store.head(ctx.id) == ctx.next_seq
            return released[0]

    assert asyncio.run(go()) == "by the loop"


def test_a_store_outlives_its_event_loop(store_url):
    """``asyncio.run`` per call (each a new loop): connections of an ended loop are not reused."""
    store = AsyncStore(store_url)
    ctx = Context()
    for n in range(3):
        turn(ctx, n)
        asyncio.run(store.save(ctx))
    assert asyncio.run(store.load(ctx.id)).message_count == 6
    store._close_now()


def test_exported_at_the_top():
    assert ctxfold.AsyncStore is AsyncStore
    assert "AsyncStore" in ctxfold.__all__


def test_saving_a_deleted_context_is_a_conflict_with_the_blocking_store(store_url):
    with Store(store_url) as store:
        ctx = Context()
        turn(ctx, 0)
        store.save(ctx)
        store.delete(ctx.id)
        with pytest.raises(ConflictError, match="deleted"):
            store.save(ctx)
        assert ctx.id not in store
        ctx.stored_seq = None  # as the message says: save it here anew
        store.save(ctx)
        assert store.load(ctx.id).messages == ctx.messages
