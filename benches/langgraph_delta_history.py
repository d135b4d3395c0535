"""A LangGraph chat graph whose messages live in a ``DeltaChannel``, side by side on the stock
savers and ContextSaver: what a turn costs as the thread grows.

    python benches/langgraph_delta_history.py [--turns 150] [--every 100] [--url URL] [--rounds 1]

A ``DeltaChannel`` stores the channel's value only every ``snapshot_frequency`` (``--every``)
updates; at the start of each turn LangGraph rebuilds it from the nearest checkpoint that holds
it plus the pending writes of every checkpoint since, which the saver reads for it in
``get_delta_channel_history``. The base class's version of that call does a ``get_tuple`` per
ancestor; the stock savers and ContextSaver read the chain from their rows instead.
``ContextSaver/SQLite/base walk`` is ContextSaver with the base class's version, for what that
reading buys. Printed per saver: the median time of a whole turn (``graph.invoke``) and of its
``get_delta_channel_history`` calls, over the first and the last tenth of the turns (the last
ones rebuild from up to ``2 * every`` checkpoints back: two updates a turn).

The PostgreSQL URL defaults to CTXFOLD_TEST_POSTGRES_URL (without one, those savers are left
out); the chat graph, its ~400-character messages and the savers' settings are those of
``langgraph_checkpoints.py``.

(No ``from __future__ import annotations``: LangGraph reads the state's annotations at run time,
and they name the snapshot frequency given.)"""

import argparse
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Annotated, Any

import langgraph_checkpoints as bench
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph, add_messages
from typing_extensions import TypedDict

_BASE_WALK = "ContextSaver/SQLite/base walk"


def _batched(state: list[AnyMessage] | None, writes: Sequence[Any]) -> list[AnyMessage]:
    return functools.reduce(add_messages, writes, state or [])


def _graph(saver: BaseCheckpointSaver, every: int) -> Any:
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], DeltaChannel(_batched, snapshot_frequency=every)]

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(bench._text(n, "answer"), id=f"ai-{n}")]}

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    return g.compile(checkpointer=saver)


def _run(kind: str, turns: int, every: int, folder: str, url: str | None) -> dict[str, float]:
    tenth = max(turns // 10, 1)
    with bench._saver("ContextSaver/SQLite" if kind == _BASE_WALK else kind, folder, url) as (saver, _):
        walk = saver.get_delta_channel_history
        if kind == _BASE_WALK:
            walk = functools.partial(BaseCheckpointSaver.get_delta_channel_history, saver)
        spent = [0.0]

        def timed(**kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return walk(**kw)
            finally:
                spent[0] += time.perf_counter() - t0

        saver.get_delta_channel_history = timed  # type: ignore[method-assign]
        graph = _graph(saver, every)
        config = {"configurable": {"thread_id": "t"}}
        whole, history = [], []
        for n in range(turns):
            before, t0 = spent[0], time.perf_counter()
            graph.invoke({"messages": [HumanMessage(bench._text(n, "question"), id=f"human-{n}")]}, config,
                         durability="sync")
            whole.append(time.perf_counter() - t0)
            history.append(spent[0] - before)
        assert len(graph.get_state(config).values["messages"]) == 2 * turns
    ms = {name: statistics.median(xs) * 1e3 for name, xs in (
        ("early", whole[:tenth]), ("late", whole[-tenth:]), ("early_h", history[:tenth]), ("late_h", history[-tenth:]))}
    return ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=150, help="turns of the thread (default 150)")
    ap.add_argument("--every", type=int, default=100, help="the channel's snapshot_frequency (default 100, "
                    "LangGraph's)")
    ap.add_argument("--url", default=os.environ.get("CTXFOLD_TEST_POSTGRES_URL"), help="a PostgreSQL server")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each saver, interleaved; medians printed")
    args = ap.parse_args()
    kinds = ["SqliteSaver", "ContextSaver/SQLite", _BASE_WALK]
    if args.url:
        kinds += ["PostgresSaver", "ContextSaver/PostgreSQL"]
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for kind in kinds:
                runs[kind].append(_run(kind, args.turns, args.every, folder, args.url))
    tenth = max(args.turns // 10, 1)
    print(f"\n{args.turns} turns, DeltaChannel(snapshot_frequency={args.every}); early = first {tenth} turns, late = "
          f"last {tenth}; median ms")
    print(f"{'saver':<30} | {'turn early':>10} | {'turn late':>9} | {'history early':>13} | {'history late':>12}")
    results = {k: {name: statistics.median(r[name] for r in rs) for name in rs[0]} for k, rs in runs.items()}
    for kind, r in results.items():
        print(f"{kind:<30} | {r['early']:>10.2f} | {r['late']:>9.2f} | {r['early_h']:>13.2f} | {r['late_h']:>12.2f}")
    for ours, other in (("ContextSaver/SQLite", "SqliteSaver"), ("ContextSaver/SQLite", _BASE_WALK),
                        ("ContextSaver/PostgreSQL", "PostgresSaver")):
        if ours in results and other in results:
            o, s = results[ours], results[other]
            print(f"  {ours} vs {other}: a late turn {s['late'] / o['late']:.2f}x less, its history "
                  f"{s['late_h'] / o['late_h']:.2f}x less")


if __name__ == "__main__":
    main()
