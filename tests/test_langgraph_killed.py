"""A process running a graph on ContextSaver, killed with SIGKILL wherever it is (inside a
checkpoint's statement, a pending write's, between them), leaves whole data: every checkpoint
stored reads back, its messages a prefix of the conversation, its logs load; and the next
process takes the thread up where the last whole checkpoint left it (a turn cut off after its
input was saved is finished, from its pending writes where its node had run)."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest

pytest.importorskip("langgraph")

from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402

pytestmark = pytest.mark.frameworks

THREAD = {"configurable": {"thread_id": "killed", "checkpoint_ns": ""}}

RUNNER = """
import sys
from ctxfold.adapters.langgraph import ContextSaver
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

big = "x" * 20_000  # saves that take a while, so that kills land inside them

def agent(state):
    n = len(state["messages"]) // 2
    return {"messages": [AIMessage(f"a{n} {big}", id=f"a{n}")]}

g = StateGraph(MessagesState)
g.add_node("agent", agent)
g.add_edge(START, "agent")
graph = g.compile(checkpointer=ContextSaver(sys.argv[1]))
config = {"configurable": {"thread_id": "killed"}}
# The last run was cut off after its input was saved: finish it (its tasks that had run have
# their writes pending, and new input would discard them: LangGraph's rule, on any saver).
if graph.get_state(config).tasks:
    graph.invoke(None, config)
print("ready", flush=True)
while True:
    n = len(graph.get_state(config).values.get("messages", [])) // 2
    graph.invoke({"messages": [HumanMessage(f"h{n} {big}", id=f"h{n}")]}, config)
"""


def _conversation(length: int) -> list[tuple[str, str]]:
    return [(f"{'ha'[i % 2]}{i // 2}", f"{'ha'[i % 2]}{i // 2} ") for i in range(length)]


def _check_whole(url: str) -> int:
    """Every checkpoint of the thread reads back whole, from a saver that cached nothing;
    every log of the store loads; the number of messages at the latest checkpoint."""
    with ContextSaver(url) as saver:
        tuples = list(saver.list(THREAD))
        assert tuples
        for listed in tuples:
            t = saver.get_tuple(listed.config)
            assert t is not None and t.checkpoint == listed.checkpoint
            messages = t.checkpoint["channel_values"].get("messages", [])
            assert [(m.id, m.content[:len(m.id) + 1]) for m in messages] == _conversation(len(messages))
            parent = t.parent_config
            assert parent is None or saver.get_tuple(parent) is not None
        assert saver.store is not None
        for cid, _ in saver.store.scan('["langgraph", "killed", '):
            saver.store.load(cid)
        latest = saver.get_tuple(THREAD)
        assert latest is not None
        return len(latest.checkpoint["channel_values"]["messages"])


@pytest.mark.parametrize("backend", ["sqlite_url", "pg_url"])
def test_sigkill_mid_checkpoint_leaves_whole_data(request, backend) -> None:
    url = request.getfixturevalue(backend)
    ContextSaver(url).close()  # the tables, before the first runner
    rng = random.Random(21)
    length = 0
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-c", RUNNER, url], stdout=subprocess.PIPE)
        assert p.stdout is not None
        try:
            assert p.stdout.readline().strip() == b"ready"
            time.sleep(rng.uniform(0.05, 0.35))
        finally:
            p.kill()  # SIGKILL: wherever the saver is (and never left running)
            p.wait()
            p.stdout.close()
        now = _check_whole(url)
        assert now >= length
        length = now
    assert length > 0
