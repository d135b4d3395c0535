"""On a SQLite store, a checkpoint is one statement: its log appends and its rows are rows of the
store's write view, one INSERT in autocommit (no BEGIN, no COMMIT). Checked on the statements a
real chat graph's turns run, and on what the database then holds."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import chat_graph, reply  # noqa: E402
from _stores import without_write_view  # noqa: E402
from ctxfold import Store  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from ctxfold.stores._sqlite import WRITE  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402

pytestmark = pytest.mark.frameworks


def test_a_checkpoint_is_one_statement(sqlite_url) -> None:
    with Store(sqlite_url) as store, ContextSaver(store) as saver:
        graph = chat_graph([reply(n) for n in range(3)], saver)
        config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
        graph.invoke({"messages": [HumanMessage("first", id="h0")]}, config)  # (the pool's connections opened)
        seen: list[str] = []
        inside = threading.local()  # the statements of the put this thread is in

        def trace(sql: str) -> None:
            mine = getattr(inside, "put", None)
            for out in (seen, *([mine] if mine is not None else [])):
                if not out or out[-1] != sql:  # (SQLite traces a statement again for each of its triggers')
                    out.append(sql)

        for con in store._backend._all:  # type: ignore[attr-defined]
            con.set_trace_callback(trace)
        puts: list[list[str]] = []
        inner = saver.put

        def put(*a: Any) -> Any:
            inside.put = []
            try:
                return inner(*a)
            finally:
                puts.append(inside.put)
                inside.put = None

        saver.put = put  # type: ignore[method-assign]
        for n in (1, 2):
            graph.invoke({"messages": [HumanMessage(f"turn {n}", id=f"h{n}")]}, config, durability="sync")
        for con in store._backend._all:  # type: ignore[attr-defined]
            con.set_trace_callback(None)

        assert len(puts) == 6  # an input checkpoint and two steps a turn
        for statements in puts:
            assert len(statements) == 1 and statements[0].startswith(WRITE), statements
        assert not [s for s in seen if s.strip().upper() in ("BEGIN", "BEGIN IMMEDIATE", "COMMIT")]

        # what the rows say: the log holds each message once, every checkpoint reads its list
        log = store.load('["langgraph", "t", "", "messages"]')
        assert [m.id for m in log.messages] == ["h0", "ai-0", "h1", "ai-1", "h2", "ai-2"]
        history = list(graph.get_state_history(config))
        assert len(history) == 9
        assert [len(s.values.get("messages", [])) for s in history] == [6, 5, 4, 4, 3, 2, 2, 1, 0]
    with ContextSaver(sqlite_url) as cold:
        again = chat_graph([], cold)
        assert [m.id for m in again.get_state(config).values["messages"]] == ["h0", "ai-0", "h1", "ai-1", "h2", "ai-2"]


def test_a_database_made_before_the_view_gets_it(sqlite_url) -> None:
    # a store and saver tables made by a ctxfold without the write view: opening them adds it
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    with ContextSaver(sqlite_url) as saver:
        chat_graph([reply(0)], saver).invoke({"messages": [HumanMessage("first", id="h0")]}, config)
    without_write_view(sqlite_url)
    with ContextSaver(sqlite_url) as saver:
        graph = chat_graph([reply(1)], saver)
        graph.invoke({"messages": [HumanMessage("second", id="h1")]}, config)
        assert [m.id for m in graph.get_state(config).values["messages"]] == ["h0", "ai-0", "h1", "ai-1"]
        assert len(list(graph.get_state_history(config))) == 6
