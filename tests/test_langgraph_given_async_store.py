"""ContextSaver on an AsyncStore the caller owns: the async graph calls run on that store, the
blocking ones on a Store the saver opens beside it on the same database; both see one thread,
checkpoint for checkpoint as InMemorySaver, and closing the saver leaves the caller's store
open."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import Ids, Recording, chat_graph, reply  # noqa: E402
from ctxfold import AsyncStore  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "t"}}


async def _turns(saver: Any) -> Any:
    """Two async turns, a blocking one (on the event loop's executor), and a last async one."""
    ids = Ids()
    graph = chat_graph([reply(n) for n in range(4)], saver)
    outs = [ids(await graph.ainvoke({"messages": [HumanMessage("one", id="h1")]}, CFG)),
            ids(await graph.ainvoke({"messages": [HumanMessage("two", id="h2")]}, CFG))]
    outs.append(ids(await asyncio.to_thread(graph.invoke, {"messages": [HumanMessage("three", id="h3")]}, CFG)))
    outs.append(ids(await graph.ainvoke({"messages": [HumanMessage("four", id="h4")]}, CFG)))
    history = [(ids(h.values), list(h.next)) async for h in graph.aget_state_history(CFG)]
    blocking = [(ids(h.values), list(h.next)) for h in await asyncio.to_thread(lambda: list(graph.get_state_history(CFG)))]
    return outs, history, blocking


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_a_given_async_store_is_used_and_left_open(where, request) -> None:
    url = request.getfixturevalue("sqlite_url" if where == "sqlite" else "pg_url")

    async def run() -> Any:
        async with AsyncStore(url) as store:
            saver = Recording(store)
            try:
                got = await _turns(saver)
                assert saver._astore is store
                assert saver.check_exact() > 0
            finally:
                saver.close()
            # The caller's store is still open, and holds the thread's log.
            listed = [c.id for c in await store.list()]
            assert any('"t"' in cid for cid in listed), listed
            return got

    got = asyncio.run(run())
    expected = asyncio.run(_turns(InMemorySaver()))
    assert got == expected
    outs, history, blocking = got
    assert history == blocking and len(outs) == 4
