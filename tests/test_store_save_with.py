"""``Store._save_with``: saves and the caller's own statements in one transaction, on SQLite
and PostgreSQL — all of it, or (a context whose head moved on) none of it."""

from __future__ import annotations

import pytest
from ctxfold import ConflictError, Context, Message, Store


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
        other = b.load(two.id)
        other.add_message(Message.user("elsewhere"))
        b.save(other)
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
                other = b.load(ctx.id)
                other.add_message(Message.user("elsewhere"))
                b.save(other)
                ctx.add_message(Message.user("lost"))
                with pytest.raises(ConflictError, match=ctx.id):
                    await a._save_with([ctx], [(f"INSERT INTO probe (x) VALUES ({mark})", ("refused",))])
                assert _rows(b) == ["saved"] and ctx.stored_seq == 1

    asyncio.run(main())
