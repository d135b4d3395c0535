"""AsyncStore.tail, .scan and .scan_deps: the Store's reads of a log's end and of a family of
contexts, as coroutines, on SQLite and PostgreSQL — the same results as the blocking Store's on
the same database, the same errors."""

from __future__ import annotations

import asyncio
import json

import pytest
from _stores import Sql, stored_context
from ctxfold import AsyncStore, DecodeError, Store


def test_tail_as_the_blocking_store_reads_it(store_url):
    with Store(store_url) as store:
        ctx = stored_context(store, "a/1", 10, note="x")
        ctx.remove_message(0)
        store.save(ctx)

        async def go() -> None:
            async with AsyncStore(store_url) as astore:
                t = await astore.tail("a/1", 3)
                assert t == store.tail("a/1", 3)
                assert t.head == 11 and t.state["deps"] == {"note": "x"}
                assert [e["seq"] for e in t.events] == [8, 9, 10] and t.events[-1]["type"] == "remove"
                below = await astore.tail("a/1", 2, before=3)
                assert [e["data"]["message"]["content"] for e in below.events] == ["m1", "m2"]
                assert (await astore.tail("a/1", 0)).events == []
                assert (await astore.tail("a/1", 50)).events[0]["seq"] == 0
                assert (await astore.tail("a/1", 11)).events == json.loads(json.dumps(ctx.serialize()["events"]))
                with pytest.raises(KeyError):
                    await astore.tail("nope", 1)
                with pytest.raises(ValueError):
                    await astore.tail("a/1", -1)
                with pytest.raises(TypeError):
                    await astore.tail("a/1", True)
                with pytest.raises(TypeError):
                    await astore.tail(1, 1)  # type: ignore[arg-type]

        asyncio.run(go())


def test_scan_and_scan_deps_as_the_blocking_store_reads_them(store_url):
    with Store(store_url) as store:
        for cid in ("fam/1", "fam/2", "fam0", "fa", "other/fam/3", "fam/%2F/x"):
            stored_context(store, cid, 1, tag=cid, number=3)

        async def go() -> None:
            async with AsyncStore(store_url) as astore:
                got = await astore.scan("fam/")
                assert sorted(cid for cid, _ in got) == ["fam/%2F/x", "fam/1", "fam/2"]
                assert sorted(got) == sorted(store.scan("fam/"))
                assert dict(got)["fam/1"]["deps"] == {"tag": "fam/1", "number": 3}
                assert len(await astore.scan("")) == 6
                deps = await astore.scan_deps("fam/", "tag")
                assert sorted(deps) == [("fam/%2F/x", "fam/%2F/x"), ("fam/1", "fam/1"), ("fam/2", "fam/2")]
                assert sorted(await astore.scan_deps("fam/", "number")) == [(c, None) for c, _ in sorted(deps)]
                assert sorted(await astore.scan_deps("fam/", "missing")) == [(c, None) for c, _ in sorted(deps)]
                with pytest.raises(ValueError):
                    await astore.scan_deps("fam/", "a.b")
                with pytest.raises(TypeError):
                    await astore.scan(None)  # type: ignore[arg-type]
                with pytest.raises(TypeError):
                    await astore.scan_deps("fam/", 1)  # type: ignore[arg-type]

        asyncio.run(go())


def test_a_corrupt_row_is_a_decode_error_naming_the_context(store_url):
    with Store(store_url) as store:
        stored_context(store, "bad/1", 2)
    sql = Sql(store_url)
    try:
        sql.run("UPDATE ctxfold_events SET data = %s WHERE context_id = %s AND seq = 1", "{not json", "bad/1")

        async def go() -> None:
            async with AsyncStore(store_url) as astore:
                with pytest.raises(DecodeError, match="bad/1"):
                    await astore.tail("bad/1", 2)
                assert len((await astore.tail("bad/1", 1, before=1)).events) == 1
                sql.run("UPDATE ctxfold_contexts SET state = %s WHERE id = %s", "{not json", "bad/1")
                with pytest.raises(DecodeError, match="bad/1"):
                    await astore.scan("bad/")

        asyncio.run(go())
    finally:
        sql.close()


def test_a_closed_store_refuses(sqlite_url):
    async def go() -> None:
        astore = AsyncStore(sqlite_url)
        await astore.close()
        from ctxfold import StoreError

        with pytest.raises(StoreError):
            await astore.scan("")
        with pytest.raises(StoreError):
            await astore.tail("x", 1)

    asyncio.run(go())
