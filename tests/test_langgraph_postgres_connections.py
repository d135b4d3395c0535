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
