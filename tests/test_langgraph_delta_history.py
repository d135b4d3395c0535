"""``get_delta_channel_history`` (what LangGraph rebuilds a ``DeltaChannel`` from) read from
the rows gives what ``BaseCheckpointSaver``'s own walk (a ``get_tuple`` per ancestor) gives on
the same saver: at every checkpoint of real graphs, for delta channels, a message channel that
is a log, a plain one and one that does not exist; across pages of ancestors, branches made by
``update_state``, parallel tasks writing the same channel; sync and async; on memory, SQLite
and PostgreSQL. Graphs on it behave as on ``InMemorySaver``.

(No ``from __future__ import annotations``: LangGraph reads a state's annotations at run time,
and these name a snapshot frequency local to a test.)"""

import asyncio
import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import batched_messages, each_saver  # noqa: E402,F401  (each_saver: the fixture "saver")
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage  # noqa: E402
from langgraph.channels import DeltaChannel  # noqa: E402
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, StateGraph, add_messages  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

pytestmark = pytest.mark.frameworks

_CHANNELS = ["messages", "notes", "log", "count", "no-such-channel"]


def _summed(state: int | None, writes: Sequence[int]) -> int:
    return (state or 0) + sum(writes)


def _graph(saver: BaseCheckpointSaver, every: int) -> Any:
    """Two tasks a turn writing the delta channels in parallel, beside a message channel the
    saver keeps as a log (``log``) and a plain one (``count``)."""

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], DeltaChannel(batched_messages, snapshot_frequency=every)]
        notes: Annotated[int, DeltaChannel(_summed, snapshot_frequency=every + 1)]
        log: Annotated[list[AnyMessage], add_messages]
        count: Annotated[int, operator.add]

    def left(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"left {n}", id=f"l{n}")], "notes": 1, "count": 1}

    def right(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"right {n}", id=f"r{n}")], "notes": 2,
                "log": [AIMessage(f"log {n}", id=f"g{n}")]}

    g = StateGraph(State)
    g.add_node("left", left)
    g.add_node("right", right)
    g.add_edge(START, "left")
    g.add_edge(START, "right")
    return g.compile(checkpointer=saver)


def _turns(graph: Any, thread: str, first: int, last: int) -> None:
    for i in range(first, last):
        graph.invoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")], "log": [HumanMessage(f"q{i}", id=f"hl{i}")]},
                     {"configurable": {"thread_id": thread}})


def _same_as_the_base_walk(saver: ContextSaver, thread: str) -> int:
    """Every checkpoint of the thread: the saver's history equals the base class's; the count."""
    n = 0
    for tup in saver.list({"configurable": {"thread_id": thread}}):
        want = BaseCheckpointSaver.get_delta_channel_history(saver, config=tup.config, channels=_CHANNELS)
        assert saver.get_delta_channel_history(config=tup.config, channels=_CHANNELS) == want, tup.config
        n += 1
    return n


def test_every_checkpoint_gives_what_the_base_walk_gives(saver: ContextSaver) -> None:
    graph = _graph(saver, 3)
    _turns(graph, "t", 0, 8)
    # a branch from an early checkpoint, and a turn on it
    config = {"configurable": {"thread_id": "t"}}
    old = list(graph.get_state_history(config))[-4].config
    branch = graph.update_state(old, {"messages": [HumanMessage("edited", id="e")], "notes": 5}, as_node="left")
    graph.invoke({"messages": [HumanMessage("on the branch", id="b")]}, branch)
    assert _same_as_the_base_walk(saver, "t") > 20
    latest = saver.get_tuple(config)
    assert latest is not None
    history = saver.get_delta_channel_history(config=latest.config, channels=["messages", "notes"])
    assert "seed" in history["messages"] or history["messages"]["writes"]
    # no such thread, no channels
    assert saver.get_delta_channel_history(config={"configurable": {"thread_id": "none"}},
                                           channels=["messages"]) == {"messages": {"writes": []}}
    assert saver.get_delta_channel_history(config=latest.config, channels=[]) == {}


def test_a_chain_longer_than_a_page_is_read_whole(saver: ContextSaver) -> None:
    graph = _graph(saver, 10_000)  # no value stored after the first: the whole chain is read
    _turns(graph, "long", 0, 70)  # (two checkpoints a turn: past a page of 128 ancestors)
    config = {"configurable": {"thread_id": "long"}}
    latest = saver.get_tuple(config)
    assert latest is not None
    want = BaseCheckpointSaver.get_delta_channel_history(saver, config=latest.config, channels=_CHANNELS)
    got = saver.get_delta_channel_history(config=latest.config, channels=_CHANNELS)
    assert got == want and len(got["messages"]["writes"]) > 128


def test_the_async_twin_gives_the_same(saver: ContextSaver) -> None:
    graph = _graph(saver, 3)
    _turns(graph, "a", 0, 5)
    for tup in saver.list({"configurable": {"thread_id": "a"}}):
        got = asyncio.run(saver.aget_delta_channel_history(config=tup.config, channels=_CHANNELS))
        assert got == saver.get_delta_channel_history(config=tup.config, channels=_CHANNELS)


def test_graphs_on_it_behave_as_on_the_in_memory_saver(saver: ContextSaver) -> None:
    graph, oracle = _graph(saver, 4), _graph(InMemorySaver(), 4)
    for g in (graph, oracle):
        _turns(g, "g", 0, 9)
    config = {"configurable": {"thread_id": "g"}}
    assert [s.values for s in graph.get_state_history(config)] == [s.values for s in oracle.get_state_history(config)]


def _bare(checkpoint_id: str) -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    cp = empty_checkpoint()
    cp["id"] = checkpoint_id
    cp["channel_versions"] = {"ch": "1"}  # a delta channel's version with no stored value
    return cp


def test_a_parent_chain_made_a_cycle_is_walked_once(saver: ContextSaver) -> None:
    """A checkpoint put again under one of its descendants makes the parent chain a cycle
    (LangGraph's own walk never ends on it): the walk and ``prune`` visit each checkpoint once."""
    config = {"configurable": {"thread_id": "cycle", "checkpoint_ns": ""}}
    counters = {"counters_since_delta_snapshot": {"ch": (1, 1)}}
    a = saver.put(config, _bare("cp-a"), {}, {})
    saver.put_writes(a, [("ch", "write-a")], "task")
    b = saver.put(a, _bare("cp-b"), {}, {})
    saver.put_writes(b, [("ch", "write-b")], "task")
    c = saver.put(b, _bare("cp-c"), counters, {})
    saver.put(c, _bare("cp-a"), {}, {})  # a's parent is now c: c → b → a → c
    got = saver.get_delta_channel_history(config=c, channels=["ch"])
    assert got == {"ch": {"writes": [("task", "ch", "write-a"), ("task", "ch", "write-b")]}}
    saver.prune(["cycle"], strategy="keep_latest")  # keeps the chain back from c, once round
    assert {t.config["configurable"]["checkpoint_id"] for t in saver.list(config)} == {"cp-a", "cp-b", "cp-c"}
