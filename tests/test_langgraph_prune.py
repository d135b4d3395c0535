"""``prune`` and ``delete_for_runs`` shrink the message logs: a fork none of the remaining
checkpoints reads is deleted from the store, a log some remaining checkpoint reads (its own,
or the one its branch shares a prefix with) is kept whole, and what is left reads back
exactly. Measured by the contexts the store lists and the events it holds, before and after."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import each_saver  # noqa: E402,F401  (the fixture "saver")
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402

pytestmark = pytest.mark.frameworks

MAIN = '["langgraph", "t", "", "messages"]'


def _put(saver: ContextSaver, messages: list[BaseMessage], parent: str | None, n: int, run: str) -> str:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages}
    cp["channel_versions"] = {"messages": f"{n:032}.0"}
    conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
    if parent:
        conf["checkpoint_id"] = parent
    saver.put({"configurable": conf}, cp, {"step": n, "run_id": run}, dict(cp["channel_versions"]))
    return cp["id"]


def _turn(n: int, tag: str = "") -> list[BaseMessage]:
    return [HumanMessage(f"q{n}{tag} " * 30, id=f"h{n}{tag}"), AIMessage(f"a{n}{tag} " * 30, id=f"a{n}{tag}")]


def _tree(saver: ContextSaver) -> dict[str, tuple[str, list[BaseMessage]]]:
    """A main line of 6 turns (run "main"), a branch from turn 2 (run "b1", 3 turns) and one
    from turn 4 (run "b2", 2 turns). Name → (checkpoint id, its list)."""
    out: dict[str, tuple[str, list[BaseMessage]]] = {}
    msgs: list[BaseMessage] = []
    parent = None
    for n in range(6):
        msgs = [*msgs, *_turn(n)]
        parent = _put(saver, msgs, parent, n, "main")
        out[f"main{n}"] = (parent, msgs)
    for name, start, turns in (("b1", 2, 3), ("b2", 4, 2)):
        parent, msgs = out[f"main{start}"]
        for k in range(turns):
            msgs = [*msgs, *_turn(10 + k, name)]
            parent = _put(saver, msgs, parent, 10 + k, name)
            out[f"{name}.{k}"] = (parent, msgs)
    return out


def _logs(saver: ContextSaver) -> dict[str, int]:
    """Every message log of the thread the store (or the saver's memory) holds → its events."""
    if saver.store is None:
        return {cid: log.ctx.next_seq for cid, log in saver._logs._open.items()}
    return {cid: saver.store.head(cid) or 0 for cid, _ in saver.store.scan('["langgraph", "t", ')}


def _read(saver: ContextSaver, cid: str) -> list[BaseMessage]:
    t = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": cid}})
    assert t is not None
    return t.checkpoint["channel_values"]["messages"]


def _left(saver: ContextSaver) -> set[str]:
    return {t.config["configurable"]["checkpoint_id"] for t in saver.list({"configurable": {"thread_id": "t"}})}


def test_a_branch_is_a_fork_that_holds_only_its_own_turns(saver) -> None:
    _tree(saver)
    logs = _logs(saver)
    assert logs[MAIN] == 12 and len(logs) == 3
    assert sorted(n for cid, n in logs.items() if cid != MAIN) == [4, 6]  # its turns only, not the prefix


def test_delete_for_runs_deletes_the_forks_no_checkpoint_reads(saver) -> None:
    tree = _tree(saver)
    before = _logs(saver)
    saver.delete_for_runs(["b1"])
    after = _logs(saver)
    assert len(after) == 2 and MAIN in after and sum(after.values()) == sum(before.values()) - 6
    assert _left(saver) == {cid for name, (cid, _) in tree.items() if not name.startswith("b1")}
    for name, (cid, want) in tree.items():
        if not name.startswith("b1"):
            assert _read(saver, cid) == want
    # the main line's checkpoints go; b2 still reads its prefix from the main log, which stays
    saver.delete_for_runs(["main"])
    assert set(_logs(saver)) == set(after) and _left(saver) == {tree["b2.0"][0], tree["b2.1"][0]}
    assert _read(saver, tree["b2.1"][0]) == tree["b2.1"][1]
    saver.delete_for_runs(["b2"])
    assert _logs(saver) == {} and _left(saver) == set()


def test_prune_keep_latest_leaves_the_logs_the_latest_reads(saver) -> None:
    tree = _tree(saver)  # the latest checkpoint is b2's last: it reads b2's fork and the main log
    before = _logs(saver)
    saver.prune(["t"])
    after = _logs(saver)
    assert _left(saver) == {tree["b2.1"][0]}
    assert len(before) == 3 and len(after) == 2 and MAIN in after  # b1's fork is gone
    assert sum(after.values()) == sum(before.values()) - 6
    assert _read(saver, tree["b2.1"][0]) == tree["b2.1"][1]
    # the thread goes on from what is left
    more = [*tree["b2.1"][1], *_turn(99)]
    cid = _put(saver, more, tree["b2.1"][0], 99, "again")
    assert _read(saver, cid) == more
    saver.prune(["t"], strategy="delete")
    assert _logs(saver) == {} and _left(saver) == set()


def test_prune_on_the_main_line_deletes_every_fork(saver) -> None:
    tree = _tree(saver)
    latest = [*tree["main5"][1], *_turn(6)]
    cid = _put(saver, latest, tree["main5"][0], 6, "main")
    saver.prune(["t"])
    assert set(_logs(saver)) == {MAIN} and _left(saver) == {cid}
    assert _read(saver, cid) == latest
