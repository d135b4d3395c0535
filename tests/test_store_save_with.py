"""``Store._save_with``: saves and the caller's own statements in one transaction, on SQLite
and PostgreSQL — all of it, or (a context whose head moved on) none of it."""

from __future__ import annotations

import pytest
from _stores import moved_on_elsewhere
from ctxfold import ConflictError, Context, Message, Store
from ctxfold.errors import StoreError


def _rows(store: Store) -> list[str]:
    return [r[0] for r in store._backend._run(lambda con: con.execute("SELECT x FROM probe ORDER BY x").fetchall())]  # type: ignore[attr-defined]


def test_saves_and_statements_land_together_or_not_at_all(store_url) -> None:
    url = store_url
    with Store(url) as a, Store(url) as b:
        mark = "?" if url.startswith("sqlite") else "%s"
        a._backend._run(lambda con: con.execute("CREATE TABLE probe (x text)"))  # type: ignore[attr-defined]
        one, two = Context(), Context()
        one.add_message(Message.user("first"))
        two.add_message(Message.user("second"))
        a._save_with([one, two], [(f"INSERT INTO probe (x) VALUES ({mark})", ("both saved",))])
        assert b.load(one.id).messages == one.messages and b.load(two.id).messages == two.messages
        assert _rows(a) == ["both saved"]

        # another writer moves `two` on: the next transaction is refused whole
        moved_on_elsewhere(url, two.id)
        one.add_message(Message.user("more"))
        two.add_message(Message.user("lost"))
        with pytest.raises(ConflictError, match=two.id):
            a._save_with([one, two], [(f"INSERT INTO probe (x) VALUES ({mark})", ("refused",))])
        assert _rows(a) == ["both saved"]
        assert a.head(one.id) == 1 and one.stored_seq == 1  # `one` was not saved either
        assert [m.content for m in b.load(two.id).messages] == ["second", "elsewhere"]

        # nothing to save: the statements alone
        a._save_with([], [(f"INSERT INTO probe (x) VALUES ({mark})", ("statements only",))])
        assert _rows(a) == ["both saved", "statements only"]


def test_the_async_store_does_the_same(store_url) -> None:
    import asyncio

    from ctxfold import AsyncStore

    mark = "?" if store_url.startswith("sqlite") else "%s"

    async def main() -> None:
        async with AsyncStore(store_url) as a:
            with Store(store_url) as b:
                b._backend._run(lambda con: con.execute("CREATE TABLE probe (x text)"))  # type: ignore[attr-defined]
                ctx = Context()
                ctx.add_message(Message.user("first"))
                await a._save_with([ctx], [(f"INSERT INTO probe (x) VALUES ({mark})", ("saved",))])
                assert b.load(ctx.id).messages == ctx.messages and _rows(b) == ["saved"]
                moved_on_elsewhere(store_url, ctx.id)
                ctx.add_message(Message.user("lost"))
                with pytest.raises(ConflictError, match=ctx.id):
                    await a._save_with([ctx], [(f"INSERT INTO probe (x) VALUES ({mark})", ("refused",))])
                assert _rows(b) == ["saved"] and ctx.stored_seq == 1

    asyncio.run(main())


def test_a_failing_statement_is_a_store_error_and_writes_no_append(store_url) -> None:
    # (not a ConflictError: a unique key of the caller's own table is no other writer's save)
    mark = "?" if store_url.startswith("sqlite") else "%s"
    insert = f"INSERT INTO probe (x) VALUES ({mark})"
    with Store(store_url) as store:
        store._backend._run(lambda con: con.execute("CREATE TABLE probe (x text PRIMARY KEY)"))  # type: ignore[attr-defined]
        ctx = Context()
        ctx.add_message(Message.user("one"))
        store._save_with([ctx], [(insert, ("taken",))])
        ctx.add_message(Message.user("two"))
        with pytest.raises(StoreError, match="probe") as caught:
            store._save_with([ctx], [(insert, ("new",)), (insert, ("taken",))])
        assert not isinstance(caught.value, ConflictError)
        assert _rows(store) == ["taken"] and store.head(ctx.id) == 1 and ctx.stored_seq == 1
        store._save_with([ctx], [(insert, ("new",))])  # the connection works on
        assert store.load(ctx.id).messages == ctx.messages and _rows(store) == ["new", "taken"]


def test_a_seq_stored_twice_is_a_conflict(store_url) -> None:
    # An event row already at the seq a save writes (the head row says otherwise: only a
    # writer that bypassed the guard makes this): the primary key refuses it, as a conflict.
    mark = "?" if store_url.startswith("sqlite") else "%s"
    with Store(store_url) as store:
        store._backend._run(lambda con: con.execute("CREATE TABLE probe (x text)"))  # type: ignore[attr-defined]
        ctx = Context()
        ctx.add_message(Message.user("one"))
        store.save(ctx)
        store._backend._run(lambda con: con.execute(  # type: ignore[attr-defined]
            f"INSERT INTO ctxfold_events (context_id, seq, data) VALUES ({mark}, 1, '{{}}')", (ctx.id,)))
        ctx.add_message(Message.user("two"))
        with pytest.raises(ConflictError, match="a seq from 1 on is already stored"):
            store._save_with([ctx], [(f"INSERT INTO probe (x) VALUES ({mark})", ("refused",))])
        assert _rows(store) == [] and store.head(ctx.id) == 1 and ctx.stored_seq == 1
