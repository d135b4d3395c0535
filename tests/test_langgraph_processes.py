"""Many processes on one store (PostgreSQL, or one SQLite file) lose nothing: each runs a real chat graph on a thread of
its own and on one thread they all share (LangGraph branches it where two runs start from the
same checkpoint, and a writer that lost the race for the end of a log forks it); afterwards every
checkpoint any of them put reads back exactly, from a saver that cached nothing."""

from __future__ import annotations

import multiprocessing
import sqlite3

import psycopg
import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import Recording, chat_graph  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

pytestmark = pytest.mark.frameworks

TURNS = 8
PROCS = 4


def _writer(url: str, p: int, out) -> None:  # type: ignore[no-untyped-def]
    saver = Recording(url)
    answers = [AIMessage(f"answer {p}.{n} " * 10, id=f"ai-{p}-{n}") for n in range(2 * TURNS)]
    graph = chat_graph(answers, saver)
    for n in range(TURNS):
        for thread in ("shared", f"own-{p}"):
            graph.invoke({"messages": [HumanMessage(f"question {p}.{n} " * 10, id=f"h-{p}-{n}-{thread}")]},
                         {"configurable": {"thread_id": thread}})
    serde = JsonPlusSerializer()
    out.put([(key, serde.dumps_typed(values)) for key, values in saver.put_values.items()])
    saver.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_processes_on_one_store_lose_nothing(kind, request, tmp_path) -> None:
    # (on SQLite each checkpoint is one statement of the store's write view: a writer that lost
    # the race for a log's end has its statement aborted by the head's guard, whole)
    pg_url = request.getfixturevalue("pg_url") if kind == "postgres" else f"sqlite://{tmp_path / 'threads.db'}"
    ContextSaver(pg_url).close()  # the tables, before the race
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(pg_url, p, out)) for p in range(PROCS)]
    for proc in procs:
        proc.start()
    recorded = [out.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    serde = JsonPlusSerializer()
    with ContextSaver(pg_url) as saver:
        checked = 0
        for batch in recorded:
            for (thread, ns, cid), typed in batch:
                values = serde.loads_typed(typed)
                t = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}})
                assert t is not None
                for k, v in values.items():
                    assert t.checkpoint["channel_values"].get(k) == v, (thread, cid, k)
                checked += 1
        shared = [key for batch in recorded for key, _ in batch if key[0] == "shared"]
        assert len(list(saver.list({"configurable": {"thread_id": "shared"}}))) == len(shared)
        assert checked == sum(len(b) for b in recorded)
        for p in range(PROCS):
            latest = saver.get_tuple({"configurable": {"thread_id": f"own-{p}", "checkpoint_ns": ""}})
            assert latest is not None
            msgs = latest.checkpoint["channel_values"]["messages"]
            assert [m.id for m in msgs] == [x for n in range(TURNS) for x in (f"h-{p}-{n}-own-{p}", f"ai-{p}-{2 * n + 1}")]
        # every process's turns are in the shared thread's logs: its main log, and the forks
        # started where a writer lost the race for the log's end (none copies another's messages)
        logs = [saver.store.load(cid) for cid, _ in saver.store.scan('["langgraph", "shared", ')]
        assert '["langgraph", "shared", "", "messages"]' in {log.id for log in logs}
        logged = [e.message.id for log in logs for e in log.events() if e.message is not None]
        assert {f"h-{p}-{n}-shared" for p in range(PROCS) for n in range(TURNS)} <= set(logged)
        # a fork branches from a log of the thread, or (a first list whose parent had none, put
        # by a process that lost the race to start the main log) from nothing
        forks = [log for log in logs if log.id != '["langgraph", "shared", "", "messages"]']
        assert all(log.origin_context_id is None or log.origin_context_id.startswith('["langgraph", "shared", ')
                   for log in forks)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_saver_uses_its_stores_connections(kind, request, tmp_path) -> None:
    # The checkpoint rows, the pending writes and the reads borrow the store's pooled
    # connections: on PostgreSQL each prepares a statement once, on SQLite each keeps its page
    # cache and its writes count towards the log's checkpoints; the saver holds only what it
    # uses at once.
    url = request.getfixturevalue("pg_url") if kind == "postgres" else f"sqlite://{tmp_path / 'threads.db'}"
    with ContextSaver(url) as saver:
        assert saver.store is not None
        # on PostgreSQL the connections a turn uses at once are open before the first turn
        assert len(saver.store._db._idle) == (3 if kind == "postgres" else 1)
        graph = chat_graph([AIMessage(f"answer {n}", id=f"ai-{n}") for n in range(6)], saver)
        for n in range(6):
            graph.invoke({"messages": [HumanMessage(f"question {n}", id=f"h-{n}")]}, {"configurable": {"thread_id": "t"}})
        assert saver._tables._pool is saver.store._db
        pool = list(saver.store._db._all)
        assert 1 <= len(pool) <= 3  # LangGraph's put and put_writes can overlap: a connection each
        assert len(graph.get_state({"configurable": {"thread_id": "t"}}).values["messages"]) == 12
    for con in pool:  # closed with the store
        with pytest.raises((sqlite3.ProgrammingError, psycopg.OperationalError)):
            con.execute("SELECT 1")
