"""A saver on PostgreSQL has each connection of its pool run what a graph's turn runs before the
first turn (the server's first run of a statement on a connection costs most): the blocking
saver when it is made, the async one at its first call in an event loop (or ``async with``).
The turns of new threads, a chat and a tool loop with parallel calls, then prepare nothing
more on any connection, and open none."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("psycopg")

from _langgraph_graphs import chat_graph, reply, tool_graph  # noqa: E402
from _stores import pg_url  # noqa: E402,F401
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402

pytestmark = pytest.mark.frameworks

_CALLS = [{"name": "weather", "args": {"city": c}, "id": f"call-{c}", "type": "tool_call"} for c in ("Paris", "Rome")]


def _graphs(saver: ContextSaver) -> list[tuple[Any, str, list[Any]]]:
    """(graph, thread, inputs): two chat threads of two turns, and a tool loop."""
    chat = chat_graph([AIMessage(f"answer {n}", id=f"ai-{n}") for n in range(4)], saver)
    tools = tool_graph([reply(0, "", tool_calls=_CALLS), reply(1, "sunny")], saver)
    return [*((chat, thread, [HumanMessage(f"question {n}", id=f"h-{thread}-{n}") for n in range(2)])
              for thread in ("a", "b")),
            (tools, "tools", [HumanMessage("weather in Paris and Rome?", id="h-tools")])]


def test_a_blocking_saver_has_run_what_a_turn_runs_when_it_is_made(pg_url) -> None:  # noqa: F811
    with ContextSaver(pg_url) as saver:
        pool = saver.store._db  # type: ignore[union-attr]
        before = {id(con): set(con._ctxfold_names or {}) for con in pool._all}
        assert len(before) == 3 and all(before.values())
        for graph, thread, inputs in _graphs(saver):
            for message in inputs:
                graph.invoke({"messages": [message]}, {"configurable": {"thread_id": thread}})
        assert {id(con) for con in pool._all} == set(before)
        for con in pool._all:
            new = {text.decode()[:80] for text, _ in set(con._ctxfold_names or {}) - before[id(con)]}
            assert not new, new


def test_an_async_saver_has_run_what_a_turn_runs_at_its_first_call(pg_url) -> None:  # noqa: F811
    async def main() -> None:
        async with ContextSaver(pg_url) as saver:
            backend = saver._astore._backend  # type: ignore[union-attr]
            before = {id(con): set(con._prepared._names) for _, con in backend._idle}
            assert len(before) == 3 and all(before.values())
            for graph, thread, inputs in _graphs(saver):
                for message in inputs:
                    await graph.ainvoke({"messages": [message]}, {"configurable": {"thread_id": thread}})
            assert {id(con) for con in backend._open} == set(before)
            for _, con in backend._idle:
                new = {key[0].decode()[:80] for key in set(con._prepared._names) - before[id(con)]}
                assert not new, new

    asyncio.run(main())


def test_thousands_of_channels_and_writes_are_one_statement_each_and_read_back(pg_url) -> None:  # noqa: F811
    # the rows of a checkpoint's blobs and of a task's writes go as arrays: no bound on their
    # count (a VALUES list of 9,000 rows would pass PostgreSQL's 65,535 parameters)
    from langgraph.checkpoint.base import empty_checkpoint

    n = 9_000
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {f"c{i}": {"i": i, "text": "x" * (i % 7)} for i in range(n)}
    checkpoint["channel_versions"] = {f"c{i}": f"{i + 1:032}.0.1" for i in range(n)}
    writes = [(f"c{i}", i) for i in range(n)]

    def check(t: Any) -> None:
        assert t is not None and t.checkpoint["channel_values"] == checkpoint["channel_values"]
        assert sorted((task, channel, value) for task, channel, value in t.pending_writes) == \
            sorted(("task", channel, value) for channel, value in writes)

    with ContextSaver(pg_url) as saver:
        config = saver.put({"configurable": {"thread_id": "wide", "checkpoint_ns": ""}}, checkpoint,
                           {"source": "input", "step": -1}, checkpoint["channel_versions"])
        saver.put_writes(config, writes, "task")
        check(saver.get_tuple(config))

    async def main() -> None:
        async with ContextSaver(pg_url) as saver:
            check(await saver.aget_tuple(config))
            other = {**checkpoint, "id": checkpoint["id"][:-1] + "f"}
            aconfig = await saver.aput({"configurable": {"thread_id": "wide-async", "checkpoint_ns": ""}}, other,
                                       {"source": "input", "step": -1}, checkpoint["channel_versions"])
            await saver.aput_writes(aconfig, writes, "task")
            check(await saver.aget_tuple(aconfig))

    asyncio.run(main())
