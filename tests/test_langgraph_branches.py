"""Branches on ContextSaver are forks: a real graph driven through any interleaving of turns from
old checkpoints, ``update_state`` edits (a new message, a message replaced by id, one removed,
all removed) and resumes gives the same states and state histories as on InMemorySaver, and
every checkpoint of every branch reads back exactly as it was put. A branch keeps its parent's
list in its parent's logs: a fork log holds only what the branch changed."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import Ids, Recording, snapshot  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "b"}}


def _graph(saver: Any) -> Any:
    answered = [0]

    def agent(state: MessagesState) -> dict[str, Any]:
        answered[0] += 1
        last = state["messages"][-1].content if state["messages"] else ""
        return {"messages": [AIMessage(f"echo {last} " + "lorem " * 10, id=f"ai-{answered[0]}")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=saver)


_step = st.one_of(
    st.tuples(st.just("say"), st.integers(0, 40), st.integers(0, 40)),
    st.tuples(st.just("edit"), st.integers(0, 40), st.integers(0, 40)),
    st.tuples(st.just("remove"), st.integers(0, 40), st.integers(0, 40)),
    st.tuples(st.just("clear"), st.integers(0, 40), st.just(0)),
    st.tuples(st.just("resume"), st.integers(0, 40), st.just(0)),
)


def _run(saver: Any, steps: list[tuple[str, int, int]]) -> Any:
    """The steps on ``saver``: each picks an old checkpoint by its place in the history
    (newest first), so that both savers take the same one."""
    graph = _graph(saver)
    ids = Ids()
    graph.invoke({"messages": [HumanMessage("hello", id="human-0")]}, CFG)
    for n, (op, back, which) in enumerate(steps, 1):
        history = list(graph.get_state_history(CFG))
        old = history[back % len(history)]
        msgs = old.values.get("messages", [])
        if op == "say":
            graph.invoke({"messages": [HumanMessage(f"say {n}", id=f"human-{n}")]}, old.config)
        elif op == "edit" and msgs:
            graph.update_state(old.config, {"messages": [HumanMessage(f"edit {n}", id=msgs[which % len(msgs)].id)]},
                               as_node="agent")
        elif op == "remove" and msgs:
            graph.update_state(old.config, {"messages": [RemoveMessage(id=msgs[which % len(msgs)].id)]},
                               as_node="agent")
        elif op == "clear":
            graph.update_state(old.config, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}, as_node="agent")
        elif op == "resume":
            graph.invoke(None, old.config)
    return snapshot(graph, CFG, ids)


@pytest.fixture(params=["memory", "sqlite"])
def make_saver(request, tmp_path):
    made: list[Recording] = []
    count = [0]

    def make() -> Recording:
        count[0] += 1
        s = Recording() if request.param == "memory" else Recording(f"sqlite://{tmp_path}/b{count[0]}.db")
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_step, min_size=1, max_size=12))
def test_any_interleaving_of_branches_is_what_in_memory_saver_gives(make_saver, steps) -> None:
    ours = make_saver()
    assert _run(ours, steps) == _run(InMemorySaver(), steps)
    assert ours.check_exact() > 0


def test_a_branch_logs_only_what_it_changed(make_saver) -> None:
    """An edit of an old checkpoint's last message starts a fork holding that message and
    what follows it; the messages before it stay in the main log, read from there."""
    saver = make_saver()
    graph = _graph(saver)
    for n in range(10):
        graph.invoke({"messages": [HumanMessage(f"q{n} " * 20, id=f"human-{n}")]}, CFG)
    history = list(graph.get_state_history(CFG))
    old = next(h for h in history if len(h.values.get("messages", [])) == 12 and not h.next)
    branch = graph.update_state(old.config, {"messages": [HumanMessage("q5 edited", id="human-5")]}, as_node="agent")
    graph.invoke({"messages": [HumanMessage("after the edit", id="human-x")]}, branch)
    state = graph.get_state(CFG)
    assert [m.id for m in state.values["messages"]] == [
        *(x for n in range(5) for x in (f"human-{n}", f"ai-{n + 1}")), "human-5", "ai-6", "human-x", "ai-11"]
    assert state.values["messages"][10].content == "q5 edited"
    main = '["langgraph", "b", "", "messages"]'
    forks = [cid for cid in saver._thread_logs("b") if cid != main]
    assert len(forks) == 1
    fork = saver.store.load(forks[0]) if saver.store is not None else saver._logs._open[forks[0]].ctx
    # the edited message, the new question and its answer: nothing of the ten messages before
    assert [m.id for m in fork.messages] == ["human-5", "ai-6", "human-x", "ai-11"]
    assert fork.origin_context_id == main
    main_log = saver.store.load(main) if saver.store is not None else saver._logs._open[main].ctx
    assert main_log.next_seq == 20  # the main line, untouched by the branch
    assert saver.check_exact() > 0


async def _arun(saver: Any, steps: list[tuple[str, int, int]]) -> Any:
    """``_run`` through the async API (ainvoke, aupdate_state, aget_state_history)."""
    graph = _graph(saver)
    ids = Ids()
    await graph.ainvoke({"messages": [HumanMessage("hello", id="human-0")]}, CFG)
    for n, (op, back, which) in enumerate(steps, 1):
        history = [h async for h in graph.aget_state_history(CFG)]
        old = history[back % len(history)]
        msgs = old.values.get("messages", [])
        if op == "say":
            await graph.ainvoke({"messages": [HumanMessage(f"say {n}", id=f"human-{n}")]}, old.config)
        elif op == "edit" and msgs:
            await graph.aupdate_state(old.config, {"messages": [HumanMessage(f"edit {n}", id=msgs[which % len(msgs)].id)]},
                                      as_node="agent")
        elif op == "remove" and msgs:
            await graph.aupdate_state(old.config, {"messages": [RemoveMessage(id=msgs[which % len(msgs)].id)]},
                                      as_node="agent")
    history = [h async for h in graph.aget_state_history(CFG)]
    return [(ids(h.values), list(h.next), (h.metadata or {}).get("step")) for h in history]


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_async_branches_on_the_async_store(where, request) -> None:
    import asyncio

    steps = [("say", 0, 0), ("say", 3, 0), ("edit", 1, 1), ("say", 0, 0), ("remove", 5, 2), ("say", 2, 0),
             ("edit", 7, 0), ("say", 0, 0)]
    ours = Recording(request.getfixturevalue("sqlite_url" if where == "sqlite" else "pg_url"))
    try:
        assert asyncio.run(_arun(ours, steps)) == asyncio.run(_arun(InMemorySaver(), steps))
        assert ours.check_exact() > 0
        assert ours._astore is not None  # the async calls went through the AsyncStore
        forks = [cid for cid in ours._thread_logs("b") if cid != '["langgraph", "b", "", "messages"]']
        assert forks
    finally:
        ours.close()
