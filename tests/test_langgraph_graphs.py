"""Real LangGraph graphs on ContextSaver give the same outputs, states and state histories as on
LangGraph's InMemorySaver, and every checkpoint reads back exactly as it was put: chat under
add_messages, a ToolNode loop with parallel calls, interrupt() and resume, RemoveMessage (one
and all), update_state branches, subgraphs; sync and async; in memory, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import Ids, Recording, both, chain, chat_graph, each_make_saver, reply, snapshot, tool_graph  # noqa: E402,F401  (each_make_saver: the fixture "make_saver")
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402
from langgraph.types import Command, Overwrite, interrupt  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "t1"}}


# ---- scenarios -----------------------------------------------------------------------------


def chat(saver: Any, ids: Ids) -> Any:
    graph = chat_graph([reply(n) for n in range(4)], saver)
    outs = [ids(graph.invoke({"messages": [SystemMessage("be brief", id="sys-0")]}, CFG))]
    for n in range(1, 4):
        outs.append(ids(graph.invoke({"messages": [HumanMessage(f"question {n} " * 20, id=f"human-{n}", name="ann")]}, CFG)))
    return outs, snapshot(graph, CFG, ids)


def tools_loop(saver: Any, ids: Ids) -> Any:
    calls = [{"name": "weather", "args": {"city": "Paris"}, "id": "call-1", "type": "tool_call"},
             {"name": "population", "args": {"city": "Lyon"}, "id": "call-2", "type": "tool_call"}]
    answers = [reply(0, "", tool_calls=calls), reply(1, "Paris is sunny; Lyon is big."),
               reply(2, "", tool_calls=[{**calls[0], "id": "call-3"}]), reply(3, "Still sunny.")]
    graph = tool_graph(answers, saver)
    outs = [ids(graph.invoke({"messages": [HumanMessage("weather in Paris, people in Lyon?", id="human-1")]}, CFG)),
            ids(graph.invoke({"messages": [HumanMessage("and now?", id="human-2")]}, CFG))]
    return outs, snapshot(graph, CFG, ids)


def approval(saver: Any, ids: Ids) -> Any:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt({"question": "send it?", "draft": state["messages"][-1].content})
        return {"messages": [AIMessage(f"approved: {answer}", id=f"ai-approved-{len(state['messages'])}")]}

    graph = chain(saver, MessagesState, ask)
    outs = [ids(graph.invoke({"messages": [HumanMessage("draft one", id="human-1")]}, CFG))]
    mid = snapshot(graph, CFG, ids)
    outs.append(ids(graph.invoke(Command(resume="yes"), CFG)))
    outs.append(ids(graph.invoke({"messages": [HumanMessage("draft two", id="human-2")]}, CFG)))
    outs.append(ids(graph.invoke(Command(resume="no"), CFG)))
    return outs, mid, snapshot(graph, CFG, ids)


def removals(saver: Any, ids: Ids) -> Any:
    def step(state: MessagesState) -> dict[str, Any]:
        msgs = state["messages"]
        last = msgs[-1].content
        if last == "forget the first":
            return {"messages": [RemoveMessage(id=msgs[0].id), AIMessage("forgotten", id=f"ai-{len(msgs)}")]}
        if last == "start over":
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage("fresh start", id="ai-fresh")]}
        if last == "fix the second":
            return {"messages": [AIMessage("a better second", id=msgs[1].id), AIMessage("fixed", id=f"ai-fix-{len(msgs)}")]}
        return {"messages": [AIMessage(f"echo {last}", id=f"ai-{len(msgs)}")]}

    graph = chain(saver, MessagesState, step)
    outs = []
    for n, text in enumerate(["hello", "again", "fix the second", "forget the first", "more", "start over", "after"]):
        outs.append(ids(graph.invoke({"messages": [HumanMessage(text, id=f"human-{n}")]}, CFG)))
    return outs, snapshot(graph, CFG, ids)


def branches(saver: Any, ids: Ids) -> Any:
    graph = chat_graph([reply(n) for n in range(6)], saver)
    for n in range(3):
        graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)
    history = list(graph.get_state_history(CFG))
    # back to the state after the first answer: a branch with an edited question
    old = next(h for h in history if len(h.values.get("messages", [])) == 2 and not h.next)
    fork = graph.update_state(old.config, {"messages": [HumanMessage("q1, edited", id="human-1b")]})
    out_fork = ids(graph.invoke(None, fork))
    # an edit of an old message in place, on another old checkpoint
    older = next(h for h in history if len(h.values.get("messages", [])) == 4 and not h.next)
    fork2 = graph.update_state(older.config, {"messages": [HumanMessage("q0 rewritten", id="human-0")]})
    out_fork2 = ids(graph.invoke({"messages": [HumanMessage("q after rewrite", id="human-9")]}, fork2))
    # and the main line goes on from its own latest
    latest = history[0].config
    out_main = ids(graph.invoke({"messages": [HumanMessage("q3", id="human-3")]}, latest))
    return [out_fork, out_fork2, out_main], snapshot(graph, CFG, ids)


class Outer(TypedDict):
    messages: Annotated[list, operator.add]
    notes: Annotated[list[str], operator.add]


def subgraphs(saver: Any, ids: Ids) -> Any:
    def inner_step(state: MessagesState) -> dict[str, Any]:
        ok = interrupt("inner approval?")
        return {"messages": [AIMessage(f"inner says {ok}", id=f"ai-inner-{len(state['messages'])}")]}

    inner = chain(None, MessagesState, inner_step)

    def before(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("before", id=f"ai-before-{len(state['messages'])}")]}

    g = StateGraph(MessagesState)
    g.add_node("before", before)
    g.add_node("inner", inner)
    g.add_edge(START, "before")
    g.add_edge("before", "inner")
    g.add_edge("inner", END)
    graph = g.compile(checkpointer=saver)
    outs = [ids(graph.invoke({"messages": [HumanMessage("go", id="human-1")]}, CFG))]
    state = graph.get_state(CFG, subgraphs=True)
    sub = [(ids(t.state.values), list(t.state.next)) for t in state.tasks if t.state is not None]
    outs.append(ids(graph.invoke(Command(resume="ok"), CFG)))
    outs.append(ids(graph.invoke({"messages": [HumanMessage("again", id="human-2")]}, CFG)))
    outs.append(ids(graph.invoke(Command(resume="fine"), CFG)))
    return outs, sub, snapshot(graph, CFG, ids)


def tool_messages_exact(saver: Any, ids: Ids) -> Any:
    """Messages with every field LangChain has, in a plain chat: they come back ``==``."""
    rich = [
        HumanMessage([{"type": "text", "text": "look"}, {"type": "image", "url": "https://x/y.png"}], id="human-1",
                     additional_kwargs={"k": 1}, response_metadata={"r": "m"}),
        AIMessage("", id="ai-1", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c1", "type": "tool_call"}],
                  invalid_tool_calls=[{"name": None, "args": "{bad", "id": "c2", "error": "bad json",
                                       "type": "invalid_tool_call"}],
                  additional_kwargs={"tool_calls": [{"id": "c1", "type": "function",
                                                     "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
                  usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
        ToolMessage("cold", tool_call_id="c1", name="weather", id="tool-1", artifact={"raw": [1, 2]}, status="success"),
        ToolMessage("oops", tool_call_id="c2", id="tool-2", status="error"),
        AIMessage([{"type": "reasoning", "reasoning": "hmm", "id": "rs_1"}, {"type": "text", "text": "cold in Oslo"}],
                  id="ai-2", response_metadata={"model_provider": "openai"}),
        HumanMessage("no id here"),
    ]

    def echo(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("ok", id=f"ai-ok-{len(state['messages'])}")]}

    graph = chain(saver, MessagesState, echo)
    outs = [ids(graph.invoke({"messages": rich}, CFG))]
    return outs, snapshot(graph, CFG, ids)


def edits_in_place(saver: Any, ids: Ids) -> Any:
    """Messages their holders change in place: the node's own answer after the turn, one read
    from ``get_state`` then written back with ``update_state`` (as LangGraph's own tests do),
    and lists read from the history. Only what is written back changes a checkpoint."""
    held = AIMessage("", id="ai-1", tool_calls=[{"name": "weather", "args": {"city": "Rome"}, "id": "c1",
                                                   "type": "tool_call"}])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [held]}

    graph = chain(saver, MessagesState, agent)
    outs = [ids(graph.invoke({"messages": [HumanMessage("weather?", id="human-1")]}, CFG))]
    held.tool_calls[0]["args"]["city"] = "Oslo"
    held.content = "changed by its holder after the turn"
    before = snapshot(graph, CFG, ids)
    last = graph.get_state(CFG).values["messages"][-1]
    last.tool_calls[0]["args"]["city"] = "Paris"
    assert graph.get_state(CFG).values["messages"][-1].tool_calls[0]["args"]["city"] == "Rome"
    graph.update_state(CFG, {"messages": last})
    for h in graph.get_state_history(CFG):
        for m in h.values.get("messages", []):
            m.additional_kwargs["scribbled"] = True
            m.content = "scribbled"
    return outs, before, snapshot(graph, CFG, ids)


def edits_by_a_node(saver: Any, ids: Ids) -> Any:
    """A node that changes messages of its state in place and returns them (add_messages keeps
    the very objects, by id, where they were): each checkpoint records the change, on the main
    line and on a branch. (``durability="sync"``: by default LangGraph writes a checkpoint on a
    background thread while the next node runs, so whether it holds a change that node makes
    in place is a race, whatever the saver. The node changes messages of earlier turns only:
    the turn's input is also the pending write of the task that took it in, which LangGraph may
    still be writing while the node runs, again whatever the saver.)"""

    def agent(state: MessagesState) -> dict[str, Any]:
        msgs = state["messages"]
        n = len(msgs)
        out: list[Any] = [AIMessage(f"answer {n}", id=f"ai-{n}", additional_kwargs={"turn": n})]
        if n > 2:
            earlier = msgs[1]
            earlier.content = f"revised at {n}"
            earlier.additional_kwargs["revisions"] = [*earlier.additional_kwargs.get("revisions", []), n]
            first = msgs[0]
            first.additional_kwargs.setdefault("seen_by", []).append("agent")
            out = [earlier, first, *out]
        return {"messages": out}

    graph = chain(saver, MessagesState, agent)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG, durability="sync"))
            for n in range(4)]
    old = next(h for h in graph.get_state_history(CFG) if len(h.values.get("messages", [])) == 4 and not h.next)
    outs.append(ids(graph.invoke({"messages": [HumanMessage("q on a branch", id="human-b")]}, old.config,
                                 durability="sync")))
    return outs, snapshot(graph, CFG, ids)


@pytest.mark.parametrize("scenario", [chat, tools_loop, approval, removals, branches, subgraphs, tool_messages_exact,
                                      edits_in_place, edits_by_a_node])
def test_same_as_in_memory_saver(scenario, make_saver) -> None:
    both(scenario, make_saver)


# ---- async -----------------------------------------------------------------------------------


async def achat(saver: Any, ids: Ids) -> Any:
    calls = [{"name": "weather", "args": {"city": "Rome"}, "id": "call-1", "type": "tool_call"},
             {"name": "population", "args": {"city": "Milan"}, "id": "call-2", "type": "tool_call"}]
    graph = tool_graph([reply(0, "", tool_calls=calls), reply(1, "done"), reply(2, "bye")], saver)
    outs = [ids(await graph.ainvoke({"messages": [HumanMessage("Rome and Milan?", id="human-1")]}, CFG)),
            ids(await graph.ainvoke({"messages": [HumanMessage("thanks", id="human-2")]}, CFG))]
    history = [h async for h in graph.aget_state_history(CFG)]
    state = await graph.aget_state(CFG)
    return outs, ids(state.values), [(ids(h.values), list(h.next)) for h in history]


def test_async_same_as_in_memory_saver(make_saver) -> None:
    ours = make_saver()
    expected = asyncio.run(achat(InMemorySaver(), Ids()))
    got = asyncio.run(achat(ours, Ids()))
    assert got == expected
    assert ours.check_exact() > 0


def test_a_turn_appends_only_the_turn(make_saver) -> None:
    """Each turn of a chat adds its two messages to the thread's log and nothing else."""
    saver = make_saver()
    graph = chat_graph([reply(n) for n in range(5)], saver)
    log_id = '["langgraph", "t1", "", "messages"]'
    sizes = []
    for n in range(5):
        graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)
        ctx = saver.store.load(log_id) if saver.store is not None else saver._logs._open[log_id].ctx
        sizes.append(ctx.next_seq)
        assert len(ctx.messages) == 2 * (n + 1)
    assert sizes == [2, 4, 6, 8, 10]


def test_removal_is_one_event_and_the_log_keeps_it(make_saver) -> None:
    saver = make_saver()
    graph = chat_graph([reply(n) for n in range(3)], saver)
    for n in range(3):
        graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"human-{n}")]}, CFG)
    graph.update_state(CFG, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]})
    log_id = '["langgraph", "t1", "", "messages"]'
    ctx = saver.store.load(log_id) if saver.store is not None else saver._logs._open[log_id].ctx
    assert ctx.messages == []
    assert [e.type for e in ctx.events()][-1] == "remove"
    assert ctx.next_seq == 7
    assert len(ctx.messages_at(6)) == 6
    assert graph.get_state(CFG).values["messages"] == []


# ---- messages without ids ----------------------------------------------------------------------
# LangGraph's add_messages gives a message without an id its id in place, on the list it adds
# and on the list it adds to, so the objects a checkpoint was put with can change after the put
# (or during it: the graph's thread goes on beside it). Each checkpoint holds the list as it was
# put, as on InMemorySaver, shared or not.


def _entrypoint(saver: Any) -> Any:
    from langgraph.func import entrypoint
    from langgraph.graph.message import add_messages

    @entrypoint(checkpointer=saver)
    def agent(inputs: list[Any], *, previous: Any) -> Any:
        messages = add_messages(previous or [], inputs)  # the inputs get their ids here, in place
        return entrypoint.final(value=len(messages), save=[*messages, AIMessage(f"ok {len(messages)}",
                                                                                 id=f"ai-{len(messages)}")])

    return agent


def _inputs(turn: int) -> list[Any]:
    return [HumanMessage(f"question {turn}"), AIMessage(f"a note without an id {turn}")]


def _started(checkpoints: list[Any], ids: Ids) -> Any:
    """What each checkpoint of the thread holds of the entrypoint's input and of its state."""
    return [(t.metadata["source"], ids(t.checkpoint["channel_values"].get("__start__")),
             ids(t.checkpoint["channel_values"].get("__previous__"))) for t in checkpoints]


def functional_without_ids(saver: Any, ids: Ids) -> Any:
    agent = _entrypoint(saver)
    outs = [agent.invoke(_inputs(n), CFG, durability="sync") for n in range(3)]
    return outs, _started(list(saver.list(CFG)), ids)


async def afunctional_without_ids(saver: Any, ids: Ids) -> Any:
    agent = _entrypoint(saver)
    outs = [await agent.ainvoke(_inputs(n), CFG, durability="sync") for n in range(3)]
    return outs, _started([t async for t in saver.alist(CFG)], ids)


def overwritten_without_ids(saver: Any, ids: Ids) -> Any:
    def node(state: MessagesState) -> dict[str, Any]:
        if state["messages"][-1].content == "overwrite":  # past add_messages: the new one keeps no id
            return {"messages": Overwrite([*state["messages"], AIMessage("no id")])}
        return {"messages": [AIMessage(f"ok {len(state['messages'])}", id=f"ai-{len(state['messages'])}")]}

    graph = StateGraph(MessagesState).add_node("n", node).add_edge(START, "n").compile(checkpointer=saver)
    outs = [ids(graph.invoke({"messages": [HumanMessage(text, id=f"human-{n}")]}, CFG, durability="sync"))
            for n, text in enumerate(["overwrite", "next", "more"])]
    return outs, snapshot(graph, CFG, ids)


@pytest.mark.parametrize("share", [False, True])
@pytest.mark.parametrize("scenario", [functional_without_ids, overwritten_without_ids])
def test_messages_given_ids_in_place_same_as_in_memory_saver(make_saver, scenario, share) -> None:
    ours = make_saver(share_messages=share)
    assert scenario(ours, Ids()) == scenario(InMemorySaver(), Ids())
    assert ours.check_exact() > 0


@pytest.mark.parametrize("share", [False, True])
def test_async_messages_given_ids_in_place_same_as_in_memory_saver(make_saver, share) -> None:
    ours = make_saver(share_messages=share)
    assert asyncio.run(afunctional_without_ids(ours, Ids())) == asyncio.run(afunctional_without_ids(InMemorySaver(), Ids()))
    assert ours.check_exact() > 0
