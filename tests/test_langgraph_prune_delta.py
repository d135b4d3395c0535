"""``prune(strategy="keep_latest")`` on a graph whose messages live in a ``DeltaChannel``:
such a channel stores a value only every ``snapshot_frequency`` updates and is rebuilt from
the ancestors' pending writes since, so the latest checkpoint alone would read back empty.
The saver keeps the parent chain back to the stored value; the thread reads back, and goes
on, as it does on ``InMemorySaver`` (the oracle, never pruned).

(No ``from __future__ import annotations``: LangGraph reads a state's annotations at run time,
and these name a snapshot frequency local to a test.)"""

from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import batched_messages, each_saver  # noqa: E402,F401  (each_saver: the fixture "saver")
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage  # noqa: E402
from langgraph.channels import DeltaChannel  # noqa: E402
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, StateGraph  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

pytestmark = pytest.mark.frameworks


def _graph(saver: BaseCheckpointSaver, every: int) -> Any:
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], DeltaChannel(batched_messages, snapshot_frequency=every)]
        seen: int

    def agent(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"answer {n}", id=f"ai-{n}")], "seen": n}

    def check(state: State) -> dict[str, Any]:
        return {"seen": len(state["messages"])}

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("check", check)  # a step that leaves the messages alone
    g.add_edge(START, "agent")
    g.add_edge("agent", "check")
    return g.compile(checkpointer=saver)


def _turns(graph: Any, first: int, last: int) -> None:
    for i in range(first, last):
        graph.invoke({"messages": [HumanMessage(f"question {i}", id=f"h{i}")]}, {"configurable": {"thread_id": "t"}})


_CONFIG = {"configurable": {"thread_id": "t"}}


@pytest.mark.parametrize("every", [1, 4, 1000])
def test_keep_latest_keeps_what_a_delta_channel_is_rebuilt_from(saver: ContextSaver, every: int) -> None:
    graph, oracle = _graph(saver, every), _graph(InMemorySaver(), every)
    _turns(graph, 0, 9)
    _turns(oracle, 0, 9)
    before = len(list(saver.list(_CONFIG)))
    saver.prune(["t"])
    left = list(saver.list(_CONFIG))
    assert graph.get_state(_CONFIG).values == oracle.get_state(_CONFIG).values
    assert len(graph.get_state(_CONFIG).values["messages"]) == 18
    if every == 1000:  # no value stored since the first turn: the whole chain is still read
        assert len(left) == before
    else:
        assert len(left) < before
    # the thread goes on from what is left, as it does where nothing was pruned
    _turns(graph, 9, 12)
    _turns(oracle, 9, 12)
    assert graph.get_state(_CONFIG).values == oracle.get_state(_CONFIG).values


def test_keep_latest_keeps_the_latest_alone_when_it_holds_the_value(saver: ContextSaver) -> None:
    # every step writes the messages: with a value stored at each update, the latest checkpoint
    # holds it, and nothing older is read
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], DeltaChannel(batched_messages, snapshot_frequency=1)]

    g = StateGraph(State)
    g.add_node("agent", lambda s: {"messages": [AIMessage(f"a{len(s['messages'])}", id=f"a{len(s['messages'])}")]})
    g.add_edge(START, "agent")
    graph = g.compile(checkpointer=saver)
    _turns(graph, 0, 4)
    want = graph.get_state(_CONFIG).values
    saver.prune(["t"])
    assert len(list(saver.list(_CONFIG))) == 1
    assert graph.get_state(_CONFIG).values == want and len(want["messages"]) == 8


def test_prune_refuses_a_str_of_thread_ids(saver: ContextSaver) -> None:
    graph = _graph(saver, 4)
    _turns(graph, 0, 2)
    with pytest.raises(TypeError, match="not a str"):
        saver.prune("t")  # type: ignore[arg-type]  # (would prune thread "t" by luck only)
    assert len(graph.get_state(_CONFIG).values["messages"]) == 4
