"""Real LangGraph graphs for the checkpointer tests: scripted chat models (no network), the
graphs the scenarios run, and a comparison of what two savers give back that ignores only what
is random in a run (message ids LangGraph makes up, checkpoint ids)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from ctxfold.adapters.langgraph import ContextSaver
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph, add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Interrupt


@pytest.fixture(name="saver", params=["memory", "sqlite", "postgres"])
def each_saver(request: Any) -> Iterator[ContextSaver]:
    """The fixture ``saver``: a ContextSaver in memory, on a fresh SQLite file, on a fresh
    PostgreSQL schema (imported under this name: a test's parameter ``saver`` is no
    redefinition of it)."""
    if request.param == "memory":
        s = ContextSaver()
    else:
        s = ContextSaver(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"))
    yield s
    s.close()


def batched_messages(state: list[AnyMessage] | None, writes: Sequence[Any]) -> list[AnyMessage]:
    """``add_messages`` over a batch of writes: a ``DeltaChannel``'s reducer of messages."""
    return functools.reduce(add_messages, writes, state or [])


def reply(turn: int, text: str = "", **kw: Any) -> AIMessage:
    """A model answer with everything a real one carries."""
    return AIMessage(
        content=text or f"answer {turn}: " + "lorem ipsum " * 8,
        id=f"ai-{turn}",
        additional_kwargs={"refusal": None},
        response_metadata={"model_name": "scripted", "finish_reason": "stop", "system_fingerprint": "fp_1"},
        usage_metadata={"input_tokens": 10 + turn, "output_tokens": 5, "total_tokens": 15 + turn,
                        "input_token_details": {"cache_read": 2}},
        **kw,
    )


def chat_graph(answers: list[AIMessage], checkpointer: Any) -> Any:
    model = GenericFakeChatModel(messages=iter(copy.deepcopy(answers)))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return chain(checkpointer, MessagesState, agent)


def chain(saver: Any, state: Any, *nodes: Any) -> Any:
    """A graph of ``nodes`` one after another (named after their functions), compiled on
    ``saver`` (``None``: a subgraph, on its parent's)."""
    g = StateGraph(state)
    previous = START
    for node in nodes:
        g.add_node(node.__name__, node)
        g.add_edge(previous, node.__name__)
        previous = node.__name__
    g.add_edge(previous, END)
    return g.compile(checkpointer=saver)


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def population(city: str) -> int:
    """How many people live in a city."""
    return len(city) * 100_000


def tool_graph(answers: list[AIMessage], checkpointer: Any) -> Any:
    model = GenericFakeChatModel(messages=iter(copy.deepcopy(answers)))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([weather, population]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


# ---- comparing two runs --------------------------------------------------------------------


class Ids:
    """Message ids as the order they were first seen in, so two runs compare."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, v: Any) -> Any:
        if isinstance(v, Interrupt):  # its id hashes the (random) checkpoint id
            return ("Interrupt", self(v.value))
        if isinstance(v, BaseMessage):
            d = v.model_dump()
            if v.id is not None and not v.id.startswith(("ai-", "human-", "sys-")):
                d["id"] = self.seen.setdefault(v.id, f"#{len(self.seen)}")
            return (type(v).__name__, self(d))
        if isinstance(v, dict):
            return {k: self(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self(x) for x in v]
        return v


def snapshot(graph: Any, config: dict[str, Any], ids: Ids) -> Any:
    """The state, its history and the subgraphs' states, as comparable values."""
    def one(s: Any) -> Any:
        return {
            "values": ids(s.values),
            "next": list(s.next),
            "step": s.metadata.get("step") if s.metadata else None,
            "source": s.metadata.get("source") if s.metadata else None,
            # A task's result is its pending writes, serialized on LangGraph's background thread
            # while add_messages gives id-less messages their ids in place: whether a written
            # message has its id yet is a race inside LangGraph, whatever the saver.
            "tasks": [(t.name, _without_ids(Ids()(t.result)) if t.result is not None else None,
                       [i.value for i in t.interrupts]) for t in s.tasks],
            "interrupts": [i.value for i in s.interrupts],
        }

    history = list(graph.get_state_history(config))
    position = {h.config["configurable"]["checkpoint_id"]: n for n, h in enumerate(history)}
    return {
        "state": one(graph.get_state(config)),
        "history": [(one(h), position.get((h.parent_config or {}).get("configurable", {}).get("checkpoint_id")))
                    for h in history],
    }


def _without_ids(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_ids(x) for k, x in v.items() if not (k == "id" and (x is None or str(x).startswith("#")))}
    if isinstance(v, (list, tuple)):
        return [_without_ids(x) for x in v]
    return v


class Recording(ContextSaver):
    """A ContextSaver that keeps a copy of every checkpoint's channel values as they were put,
    to check that each one reads back exactly: a message list message for message, each of its
    class and ``==`` (or, for one ``serde`` itself cannot give back equal, as ``serde`` gives
    it); any other value as ``serde`` gives it back. What ``serde`` gives is what LangGraph's own
    savers give: a tuple comes back a list."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.url: str | None = a[0] if a else None
        self.put_values: dict[tuple[str, str, str], dict[str, Any]] = {}

    def _prepare(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]  (put and aput)
        conf = config["configurable"]
        key = (str(conf["thread_id"]), conf.get("checkpoint_ns", ""), checkpoint["id"])
        self.put_values[key] = copy.deepcopy(dict(checkpoint["channel_values"]))
        return super()._prepare(config, checkpoint, metadata, new_versions)

    def check_exact(self) -> int:
        """Every checkpoint put reads back equal; the number checked."""
        for (thread_id, ns, cid), values in self.put_values.items():
            t = self.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}})
            assert t is not None, (thread_id, ns, cid)
            got = t.checkpoint["channel_values"]
            for k, v in values.items():
                if isinstance(v, list) and v and all(isinstance(x, BaseMessage) for x in v):
                    assert len(got.get(k, ())) == len(v), (thread_id, ns, cid, k)
                    for g, m in zip(got[k], v):
                        assert type(g) is type(m) and (g == m or g == self._round_trip(m)), (thread_id, ns, cid, k, m)
                else:
                    assert got.get(k) == self._round_trip(v), (thread_id, ns, cid, k)
        return len(self.put_values)

    def _round_trip(self, v: Any) -> Any:
        return self.serde.loads_typed(self.serde.dumps_typed(v))


def every_checkpoint(saver: Any) -> list[Any]:
    """Everything a saver gives back of every checkpoint it holds, newest first."""
    return [(t.config, t.parent_config, t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(None)]


@pytest.fixture(name="make_saver", params=["memory", "sqlite", "postgres"])
def each_make_saver(request: Any) -> Iterator[Callable[..., Recording]]:
    """The fixture ``make_saver``: makes Recording savers in memory, on a fresh SQLite file, on
    a fresh PostgreSQL schema (one store for every saver a test makes); closes them after."""
    made: list[Recording] = []

    def make(**kw: Any) -> Recording:
        if request.param == "memory":
            s = Recording(**kw)
        else:
            s = Recording(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"), **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def both(scenario: Callable[[Any, Ids], Any], make_saver: Callable[..., Recording]) -> None:
    """Run ``scenario(checkpointer, ids)`` on InMemorySaver and on ContextSaver: the same
    results, every checkpoint read back exactly, and on a store a new saver (its first reads
    rebuild every message from the logs) gives back every checkpoint as the one that wrote it."""
    ours = make_saver()
    expected = scenario(InMemorySaver(), Ids())
    got = scenario(ours, Ids())
    assert got == expected
    assert ours.check_exact() > 0
    if ours.url is not None:
        assert every_checkpoint(make_saver()) == every_checkpoint(ours)
