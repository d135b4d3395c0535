"""Code written for LangGraph's stock savers runs with ContextSaver unchanged: ``with
X.from_conn_string(…) as saver: saver.setup()``, and its async twin ``async with … : await
saver.setup()``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import chat_graph, reply  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "t1"}}


def _texts(state: Any) -> list[str]:
    return [m.content for m in state.values["messages"]]


def test_from_conn_string_and_setup_as_with_the_stock_savers(store_url: str) -> None:
    with ContextSaver.from_conn_string(store_url) as saver:
        assert saver.setup() is not None  # (an awaitable already done: ignored here)
        graph = chat_graph([reply(0, "hello back")], saver)
        graph.invoke({"messages": [HumanMessage("hello", id="human-1")]}, CFG)
    with pytest.raises(RuntimeError, match="closed"):
        saver.get_tuple(CFG)
    with ContextSaver.from_conn_string(store_url) as again:  # the thread is in the store
        assert _texts(chat_graph([], again).get_state(CFG)) == ["hello", "hello back"]


def test_the_async_twin(store_url: str) -> None:
    async def run() -> list[str]:
        async with ContextSaver.from_conn_string(store_url) as saver:
            await saver.setup()
            graph = chat_graph([reply(0, "async back")], saver)
            await graph.ainvoke({"messages": [HumanMessage("async hello", id="human-1")]}, CFG)
            return _texts(await graph.aget_state(CFG))

    assert asyncio.run(run()) == ["async hello", "async back"]


def test_a_path_and_memory(tmp_path: Any) -> None:
    with ContextSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        assert saver.store is not None and saver.store.url == f"sqlite://{tmp_path}/checkpoints.sqlite"
    with ContextSaver.from_conn_string(":memory:") as memory:
        assert memory.store is None
        chat_graph([reply(0)], memory).invoke({"messages": [HumanMessage("hi", id="human-1")]}, CFG)
        assert len(chat_graph([], memory).get_state(CFG).values["messages"]) == 2
    assert not (tmp_path / ":memory:").exists()


def test_setup_on_a_closed_saver_says_so() -> None:
    saver = ContextSaver()
    saver.close()
    with pytest.raises(RuntimeError, match="closed"):
        saver.setup()


# ---- listing a long thread -----------------------------------------------------------------


class _Counting(ContextSaver):
    """Counts the checkpoints it builds and the rows its listings read."""

    built = 0
    rows = 0

    def _tuple(self, row: Any) -> Any:
        self.built += 1
        return super()._tuple(row)

    def _listed(self, rows: Any, filter: Any, limit: Any) -> Any:
        self.rows += len(rows)
        return super()._listed(rows, filter, limit)


def test_a_listing_builds_what_is_read_and_reads_what_the_limit_lets(store_url: str) -> None:
    with _Counting(store_url) as saver:
        graph = chat_graph([reply(n) for n in range(10)], saver)
        for n in range(10):
            graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)
        saver.built = saver.rows = 0
        everything = list(saver.list(CFG))
        assert len(everything) == 30 and saver.built == 30 and saver.rows == 30

        saver.built = saver.rows = 0
        listing = saver.list(CFG)
        first = next(listing)
        assert saver.built == 1 and first.config == everything[0].config
        assert first.checkpoint["channel_values"]["messages"] == everything[0].checkpoint["channel_values"]["messages"]

        saver.built = saver.rows = 0
        assert [t.config for t in saver.list(CFG, limit=4)] == [t.config for t in everything[:4]]
        assert saver.built == 4 and saver.rows == 4  # the limit is the database's

        saver.built = saver.rows = 0
        inputs = [t.config for t in saver.list(CFG, filter={"source": "input"}, limit=2)]
        assert inputs == [t.config for t in everything if t.metadata["source"] == "input"][:2]
        assert saver.built == 2 and saver.rows == 30  # a filter reads every row, builds what it gives

        before = everything[5].config
        assert [t.config for t in saver.list(CFG, before=before, limit=2)] == [t.config for t in everything[6:8]]
        assert list(saver.list(CFG, limit=0)) == []


def test_a_thread_id_that_is_no_str_is_kept_as_text_and_given_back_as_given(store_url: str) -> None:
    # As the SQL stock savers: the rows hold the thread id's text (7 and "7" are one thread),
    # a put returns the config with the id as the caller gave it, and reads give the text.
    with ContextSaver(store_url) as saver:
        graph = chat_graph([reply(0, "seven")], saver)
        graph.invoke({"messages": [HumanMessage("hi", id="human-1")]}, {"configurable": {"thread_id": 7}})
        latest = saver.get_tuple({"configurable": {"thread_id": "7"}})
        assert latest is not None and latest.config["configurable"]["thread_id"] == "7"
        again = saver.get_tuple({"configurable": {"thread_id": 7}})
        assert again is not None and again.checkpoint == latest.checkpoint
        cp = latest.checkpoint
        given = saver.put({"configurable": {"thread_id": 7, "checkpoint_ns": "",
                                            "checkpoint_id": latest.config["configurable"]["checkpoint_id"]}},
                          {**cp, "id": cp["id"][:-1] + ("0" if cp["id"][-1] != "0" else "1")}, {}, {})
        assert given["configurable"]["thread_id"] == 7


def test_listing_every_thread_is_newest_first_across_threads(store_url: str) -> None:
    # list(None) orders by checkpoint id over every thread and namespace, as SqliteSaver does
    # (InMemorySaver lists thread by thread); within a thread the order is every saver's.
    with ContextSaver(store_url) as saver:
        graph = chat_graph([reply(n) for n in range(4)], saver)
        for n, thread in enumerate(("a", "b", "a", "b")):
            graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, {"configurable": {"thread_id": thread}})
        ids = [t.config["configurable"]["checkpoint_id"] for t in saver.list(None)]
        assert len(ids) == 12 and ids == sorted(ids, reverse=True)
        assert [t.config["configurable"]["thread_id"] for t in saver.list(None, limit=3)] == ["b"] * 3
