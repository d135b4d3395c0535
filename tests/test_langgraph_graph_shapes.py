"""More shapes of real LangGraph graphs on ContextSaver, each against InMemorySaver (same outputs,
states and histories; every checkpoint exact; on a store, a new saver reads every checkpoint as
the one that wrote it): nodes fanned out with ``Send``, two message channels in one state,
messages given as dicts, tuples and a string, a pydantic state, a plain ``operator.add`` list
of messages (no ids, one object twice), every durability mode, LangChain's ``create_agent``
with parallel tool calls, ``Overwrite`` and ``update_state(as_node=…)``, a 1 MB message and
fields the mapping cannot hold, and the stream modes."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import Ids, both, chain, each_make_saver, reply, snapshot  # noqa: E402,F401  (each_make_saver: the fixture "make_saver")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph, add_messages  # noqa: E402
from langgraph.types import Overwrite, Send  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "t1"}}


def _answer(state: Any) -> dict[str, Any]:
    n = len(state["messages"])
    return {"messages": [AIMessage(f"answer {n}", id=f"ai-{n}")]}


def fan_out(saver: Any, ids: Ids) -> Any:
    """Three nodes sent at once (map-reduce), each adding a message in the same step."""
    class S(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        topics: list[str]

    def plan(state: S) -> dict[str, Any]:
        return {"topics": ["a", "b", "c"]}

    def write(state: S) -> dict[str, Any]:
        t = state["topics"][0]
        return {"messages": [AIMessage(f"about {t}", id=f"ai-{t}-{len(state['messages'])}")]}

    g = StateGraph(S)
    g.add_node("plan", plan)
    g.add_node("write", write)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("write", {"messages": [], "topics": [t]}) for t in s["topics"]],
                            ["write"])
    g.add_edge("write", END)
    graph = g.compile(checkpointer=saver)
    outs = [ids(graph.invoke({"messages": [HumanMessage(q, id=f"human-{q}")]}, CFG)) for q in ("go", "again")]
    return outs, snapshot(graph, CFG, ids)


def two_message_channels(saver: Any, ids: Ids) -> Any:
    """Two channels of messages in one state, one of them trimmed from its front."""
    class S(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        scratch: Annotated[list[AnyMessage], add_messages]

    def think(state: S) -> dict[str, Any]:
        n = len(state["messages"])
        out: list[Any] = [AIMessage(f"thought {n}", id=f"ai-thought-{n}")]
        if n > 2:
            out.insert(0, RemoveMessage(id=state["scratch"][0].id or ""))
        return {"scratch": out}

    def say(state: S) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"said after {len(state['scratch'])}", id=f"ai-say-{n}")]}

    graph = chain(saver, S, think, say)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)) for n in range(4)]
    return outs, snapshot(graph, CFG, ids)


def messages_not_objects(saver: Any, ids: Ids) -> Any:
    """Input as a dict, a (role, text) tuple and a plain string; a node answering with a dict
    (add_messages makes messages of them, with ids of its own)."""
    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "content": f"hi {len(state['messages'])}"}]}

    graph = chain(saver, MessagesState, agent)
    outs = [ids(graph.invoke({"messages": [{"role": "user", "content": "hello"}, ("user", "a tuple")]}, CFG)),
            ids(graph.invoke({"messages": "a plain string"}, CFG))]
    return outs, snapshot(graph, CFG, ids)


def pydantic_state(saver: Any, ids: Ids) -> Any:
    class S(BaseModel):
        messages: Annotated[list[AnyMessage], add_messages] = []
        count: int = 0

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(f"n{state.count}", id=f"ai-{state.count}")], "count": state.count + 1}

    graph = chain(saver, S, agent)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)) for n in range(3)]
    return outs, snapshot(graph, CFG, ids)


def concatenated_without_ids(saver: Any, ids: Ids) -> Any:
    """A list of messages under plain ``operator.add``: nothing gives them ids, and the node
    adds the very same message object every turn."""
    class S(TypedDict):
        log: Annotated[list[AnyMessage], operator.add]

    again = AIMessage("the same object", id="ai-again")

    def agent(state: S) -> dict[str, Any]:
        return {"log": [again, AIMessage(f"no id {len(state['log'])}"), HumanMessage("no id either")]}

    graph = chain(saver, S, agent)
    outs = [ids(graph.invoke({"log": [HumanMessage(f"q{n}")]}, CFG)) for n in range(3)]
    return outs, snapshot(graph, CFG, ids)


def durability_modes(saver: Any, ids: Ids) -> Any:
    """Two nodes a turn, the turns under each durability (``exit`` puts only the last)."""
    def second(state: Any) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"second {n}", id=f"ai-second-{n}")]}

    graph = chain(saver, MessagesState, _answer, second)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG, durability=d))
            for n, d in enumerate(["exit", "async", "sync", "exit"])]
    return outs, snapshot(graph, CFG, ids)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class _ToolModel(GenericFakeChatModel):
    """A scripted model an agent can bind tools to (its answers name them already)."""

    def bind_tools(self, tools: Any, **kw: Any) -> Any:
        return self


def langchain_agent(saver: Any, ids: Ids) -> Any:
    """LangChain's ``create_agent`` (its graph, its tool node), two tool calls at once."""
    from langchain.agents import create_agent

    calls = [{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"},
             {"name": "add", "args": {"a": 3, "b": 4}, "id": "c2", "type": "tool_call"}]
    model = _ToolModel(messages=iter([reply(0, "", tool_calls=calls), reply(1, "3 and 7"), reply(2, "bye")]))
    agent = create_agent(model, [add], checkpointer=saver)
    outs = [ids(agent.invoke({"messages": [HumanMessage("add", id="human-1")]}, CFG)),
            ids(agent.invoke({"messages": [HumanMessage("thanks", id="human-2")]}, CFG))]
    return outs, snapshot(agent, CFG, ids)


def overwritten_and_updated(saver: Any, ids: Ids) -> Any:
    """A node that replaces the whole list (``Overwrite``), then edits made as a node
    (``as_node``) and as the caller, on the latest checkpoint."""
    def agent(state: Any) -> dict[str, Any]:
        n = len(state["messages"])
        if n >= 3:
            return {"messages": Overwrite([SystemMessage("summary", id="sys-1"), AIMessage(f"after {n}", id=f"ai-{n}")])}
        return {"messages": [AIMessage(f"a{n}", id=f"ai-{n}")]}

    graph = chain(saver, MessagesState, agent)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)) for n in range(3)]
    graph.update_state(CFG, {"messages": [AIMessage("edited", id="ai-2")]}, as_node="agent")
    graph.update_state(CFG, {"messages": [AIMessage("appended", id="ai-x")]})
    outs.append(ids(graph.invoke({"messages": [HumanMessage("last", id="human-9")]}, CFG)))
    return outs, snapshot(graph, CFG, ids)


def large_and_odd(saver: Any, ids: Ids) -> Any:
    """A 1 MB message with characters outside the BMP, and messages with what the mapping has
    no place for (a tuple, bytes, a string part among content blocks, a tuple artifact, name
    and example): each kept exactly as ``serde`` keeps it."""
    odd = [HumanMessage("x" * 1_000_000 + "\u00e9\U0001F600", id="human-big"),
           AIMessage("", id="ai-odd", additional_kwargs={"t": (1, 2), "b": b"bytes", "f": 1.0, "n": None}),
           HumanMessage([{"type": "text", "text": "x"}, "a plain string part"], id="human-parts"),
           ToolMessage(content=[{"type": "json", "json": {"a": [1, {"b": 2}]}}], tool_call_id="c1", id="tool-1",
                       artifact=(1, "t")),
           AIMessage("named", id="ai-named", name="bob", example=True)]
    graph = chain(saver, MessagesState, _answer)
    outs = [ids(graph.invoke({"messages": odd}, CFG))]
    return outs, snapshot(graph, CFG, ids)


def stream_modes(saver: Any, ids: Ids) -> Any:
    graph = chain(saver, MessagesState, _answer)
    outs = []
    for n, mode in enumerate(["values", "updates", ["values", "updates", "checkpoints"]]):
        chunks = graph.stream({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG, stream_mode=mode)
        outs.append([ids(c[1]["values"]) if isinstance(c, tuple) and c[0] == "checkpoints" else ids(c)
                     for c in chunks])
    return outs, snapshot(graph, CFG, ids)


@pytest.mark.parametrize("scenario", [fan_out, two_message_channels, messages_not_objects, pydantic_state,
                                      concatenated_without_ids, durability_modes, langchain_agent,
                                      overwritten_and_updated, large_and_odd, stream_modes])
def test_same_as_in_memory_saver(scenario, make_saver) -> None:
    both(scenario, make_saver)
