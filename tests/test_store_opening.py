"""The ``store=`` argument of the framework adapters (the Agents SDK session and the LangGraph
saver here; the ADK session service in test_google_adk_store_opening.py): each kind — ``None``, a ``Store``, an ``AsyncStore``, a
URL, a path — gives the kind of store the adapter's calls run on, on the right database; each
adapter closes the stores it opened and only those; a wrong kind is one ``TypeError``; and a
store the LangGraph saver opens beside the given one is as durable as it."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from _opening_cases import (
    CASES,
    CFG,
    WRONG_TYPE,
    Given,
    assert_closed_only_its_own,
    assert_works_on,
    close_caller,
    database,
    is_open,
)
from _stores import stored_context
from ctxfold import AsyncStore, Message, Store
from ctxfold.stores._opening import beside, opened_store

# ---- the helpers themselves --------------------------------------------------------------------


def test_opened_store_uses_a_store_as_given_and_opens_a_url_as_the_preferred_kind(tmp_path) -> None:
    assert opened_store(None, prefer=Store) == (None, False)
    with Store(tmp_path / "a.db") as store:
        assert opened_store(store, prefer=AsyncStore) == (store, False)
    astore = AsyncStore(tmp_path / "a.db")
    assert opened_store(astore, prefer=Store) == (astore, False)
    asyncio.run(astore.close())
    for arg in (f"sqlite://{tmp_path}/a.db", tmp_path / "a.db"):
        for prefer in (Store, AsyncStore):
            opened, owned = opened_store(arg, prefer=prefer)
            assert type(opened) is prefer and owned
            assert opened.url == f"sqlite://{tmp_path}/a.db"
            if isinstance(opened, AsyncStore):
                asyncio.run(opened.close())
            elif opened is not None:
                opened.close()


@pytest.mark.parametrize("wrong", [42, b"sessions.db", ["sqlite:///x.db"], object()])
def test_a_wrong_kind_of_store_is_one_type_error(wrong) -> None:
    with pytest.raises(TypeError) as raised:
        opened_store(wrong, prefer=Store)
    assert str(raised.value) == WRONG_TYPE + type(wrong).__name__


@pytest.mark.parametrize("durable", [False, True])
def test_beside_opens_the_other_kind_on_the_same_database_as_durable(durable, store_url) -> None:
    async def go() -> None:
        with Store(store_url, durable=durable) as store:
            astore = beside(store)
            assert isinstance(astore, AsyncStore) and astore._opened_as == store._opened_as
            assert astore._opened_as[1] is durable
            again = beside(astore)
            assert isinstance(again, Store) and again._opened_as == store._opened_as
            try:
                ctx = stored_context(store, "one", 2)
                assert (await astore.load("one")).message_count == 2
                ctx.add_message(Message.user("more"))
                again.save(ctx)
                assert await astore.head("one") == store.head("one") == ctx.stored_seq
            finally:
                again.close()
                await astore.close()

    asyncio.run(go())


def test_beside_opens_the_same_sqlite_file_from_another_working_directory(tmp_path, monkeypatch) -> None:
    """A store opened from a relative path: the one beside it opens the same file even when the
    working directory has changed since."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    monkeypatch.chdir(tmp_path / "first")
    with Store("rel.db") as store:
        monkeypatch.chdir(tmp_path / "second")
        astore = beside(store)
        with beside(astore) as again:
            assert again.url == astore.url == store.url == f"sqlite://{tmp_path}/first/rel.db"
        asyncio.run(astore.close())
    assert not (tmp_path / "second" / "rel.db").exists()


# ---- the Agents SDK session ---------------------------------------------------------------------


@pytest.mark.parametrize(("where", "kind"), CASES)
def test_openai_agents_session(where, kind, request, tmp_path) -> None:
    pytest.importorskip("agents")
    from ctxfold.adapters.openai_agents import ContextSession

    given = Given(kind, database(where, request) if kind != "none" else "", tmp_path)

    async def go() -> None:
        session = ContextSession("s", given.arg)
        await session.add_items([{"role": "user", "content": "hello"}])
        assert await session.get_items() == [{"role": "user", "content": "hello"}]
        log: Any = session._log
        store = getattr(log, "store", None)
        assert_works_on(store, given)
        assert given.stored_ids() == ([] if kind == "none" else ["s"])
        session.close()
        await assert_closed_only_its_own(store, given)

    asyncio.run(go())


def test_openai_agents_session_refuses_a_wrong_kind_of_store() -> None:
    pytest.importorskip("agents")
    from ctxfold.adapters.openai_agents import ContextSession

    with pytest.raises(TypeError) as raised:
        ContextSession("s", 42)  # type: ignore[arg-type]
    assert str(raised.value) == WRONG_TYPE + "int"


# ---- the LangGraph saver ------------------------------------------------------------------------


def _graph(saver: Any, turns: int) -> Any:
    from _langgraph_graphs import chat_graph, reply

    return chat_graph([reply(n) for n in range(turns)], saver)


@pytest.mark.parametrize(("where", "kind"), CASES)
def test_langgraph_saver(where, kind, request, tmp_path) -> None:
    """The blocking calls run on a Store, the async ones on an AsyncStore, both on the given
    database; the saver closes the ones it opened."""
    pytest.importorskip("langgraph")
    from ctxfold.adapters.langgraph import ContextSaver
    from langchain_core.messages import HumanMessage

    given = Given(kind, database(where, request) if kind != "none" else "", tmp_path)

    async def go() -> None:
        saver = ContextSaver(given.arg)
        graph = _graph(saver, 2)
        await asyncio.to_thread(graph.invoke, {"messages": [HumanMessage("one", id="h1")]}, CFG)
        out = await graph.ainvoke({"messages": [HumanMessage("two", id="h2")]}, CFG)
        assert [m.content for m in out["messages"]][::2] == ["one", "two"]
        sync_side, async_side = saver.store, saver._astore
        if kind == "none":
            assert sync_side is None and async_side is None
        else:
            assert isinstance(sync_side, Store) and isinstance(async_side, AsyncStore)
            assert sync_side.url == async_side.url == given.url
            assert sync_side._opened_as == async_side._opened_as
            if kind == "store":
                assert sync_side is given.caller
            if kind == "async_store":
                assert async_side is given.caller
            assert given.stored_ids()  # the logs are in the given database
        saver.close()
        if kind != "none":
            assert await is_open(sync_side) is (kind == "store")
            assert await is_open(async_side) is (kind == "async_store")
        await close_caller(given)

    asyncio.run(go())


def test_langgraph_saver_refuses_a_wrong_kind_of_store() -> None:
    pytest.importorskip("langgraph")
    from ctxfold.adapters.langgraph import ContextSaver

    with pytest.raises(TypeError) as raised:
        ContextSaver(42)  # type: ignore[arg-type]
    assert str(raised.value) == WRONG_TYPE + "int"


def _synchronous(backend: Any) -> list[int]:
    """``PRAGMA synchronous`` of every connection a SQLite backend opened (1 NORMAL, 2 FULL)."""
    return [con.execute("PRAGMA synchronous").fetchone()[0] for con in backend._all]


@pytest.mark.parametrize("durable", [False, True])
def test_langgraph_saver_on_a_store_writes_async_as_durably(durable, tmp_path) -> None:
    """Given ``Store(path, durable=...)``, the AsyncStore the saver opens for its async calls
    commits with the same ``synchronous`` level."""
    pytest.importorskip("langgraph")
    from ctxfold.adapters.langgraph import ContextSaver
    from langchain_core.messages import HumanMessage

    async def go() -> list[int]:
        with Store(tmp_path / "d.db", durable=durable) as store, ContextSaver(store) as saver:
            await _graph(saver, 1).ainvoke({"messages": [HumanMessage("one", id="h1")]}, CFG)
            astore = saver._astore
            assert astore is not None and astore._opened_as[1] is durable
            threaded: Any = astore._backend
            # On the store's worker thread, between its calls: the connections its writes used.
            return await threaded.blocking(lambda: _synchronous(threaded._db()))

    levels = asyncio.run(go())
    assert levels and set(levels) == {2 if durable else 1}
    with sqlite3.connect(tmp_path / "d.db") as con:  # and the async turn was written there
        assert con.execute("SELECT count(*) FROM ctxfold_events").fetchone()[0] > 0


@pytest.mark.parametrize("durable", [False, True])
def test_langgraph_saver_on_an_async_store_writes_blocking_as_durably(durable, tmp_path) -> None:
    """Given ``AsyncStore(path, durable=...)``, the Store the saver opens for its blocking calls
    commits with the same ``synchronous`` level."""
    pytest.importorskip("langgraph")
    from ctxfold.adapters.langgraph import ContextSaver
    from langchain_core.messages import HumanMessage

    astore = AsyncStore(tmp_path / "d.db", durable=durable)
    with ContextSaver(astore) as saver:
        _graph(saver, 1).invoke({"messages": [HumanMessage("one", id="h1")]}, CFG)
        assert saver.store is not None and saver.store._opened_as[1] is durable
        levels = _synchronous(saver.store._db)
    asyncio.run(astore.close())
    assert levels and set(levels) == {2 if durable else 1}

