"""``prune(strategy="keep_latest")``'s rules beyond keeping each namespace's latest checkpoint,
as LangGraph's PostgresSaver has them: a kept checkpoint whose parent is deleted is left with no
parent; a subgraph call's namespace goes with the root checkpoint it started from; a checkpoint
another writer saves while the prune runs loses nothing (its blobs and logs are never taken for
garbage)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import each_saver  # noqa: E402,F401  (the fixture "saver")
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402

pytestmark = pytest.mark.frameworks


def _put(saver: ContextSaver, thread: str, parent: dict[str, Any] | None, n: int, values: dict[str, Any],
         *, ns: str = "", metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint holding ``values``, each channel at version ``n`` (LangGraph's ``put``)."""
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = {ch: f"{n:032}.0" for ch in values}
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if parent is not None:
        conf["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return saver.put({"configurable": conf}, cp, {"step": n, **(metadata or {})}, dict(cp["channel_versions"]))


def _turns(saver: ContextSaver, thread: str, count: int, *, ns: str = "",
           metadata: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[BaseMessage]]:
    msgs: list[BaseMessage] = []
    parent = None
    for n in range(count):
        msgs = [*msgs, HumanMessage(f"q{n}", id=f"h{n}"), AIMessage(f"a{n}", id=f"a{n}")]
        parent = _put(saver, thread, parent, n, {"messages": msgs, "notes": {"turn": n}}, ns=ns, metadata=metadata)
        saver.put_writes(parent, [("notes", n)], f"task-{n}")
    assert parent is not None
    return parent, msgs


def _ids(saver: ContextSaver, thread: str) -> set[tuple[str, str]]:
    return {(t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"])
            for t in saver.list({"configurable": {"thread_id": thread}})}


def test_a_kept_checkpoint_whose_parent_is_deleted_has_no_parent(saver: ContextSaver) -> None:
    head, _ = _turns(saver, "t", 4)
    before = saver.get_tuple(head)
    assert before is not None and before.parent_config is not None
    saver.prune(["t"])
    after = saver.get_tuple(head)
    assert after == before._replace(parent_config=None)
    assert [t.config for t in saver.list({"configurable": {"thread_id": "t"}})] == [head]


def test_a_subgraph_call_goes_with_the_checkpoint_it_started_from(saver: ContextSaver) -> None:
    older = _put(saver, "t", None, 0, {"x": 0})
    head = _put(saver, "t", older, 1, {"x": 1})
    started_from = {
        "finished:1": older["configurable"]["checkpoint_id"],     # its root checkpoint is pruned
        "interrupted:2": head["configurable"]["checkpoint_id"],   # started from the kept head
        "running:3": "an-unsaved-checkpoint",                     # its root is not saved yet
        "checkpointer_true": older["configurable"]["checkpoint_id"],  # no task id: outlives calls
    }
    heads = {ns: _turns(saver, "t", 3, ns=ns, metadata={"parents": {"": root}})[0]
             for ns, root in started_from.items()}
    saver.prune(["t"])
    assert _ids(saver, "t") == {("", head["configurable"]["checkpoint_id"])} | {
        (ns, heads[ns]["configurable"]["checkpoint_id"]) for ns in ("interrupted:2", "running:3", "checkpointer_true")}
    kept = saver.get_tuple(heads["interrupted:2"])
    assert kept is not None and [m.content for m in kept.checkpoint["channel_values"]["messages"]] == [
        "q0", "a0", "q1", "a1", "q2", "a2"]
    assert saver.get_tuple(heads["finished:1"]) is None


# Where a prune can meet a put from another writer: after reading the rows it prunes, after
# reading what remains, after reading the message channels' blobs.
_MOMENTS = [("namespaces", lambda a: True), ("checkpoints", lambda a: a[1:] == (None, None, None)),
            ("blobs_of_kind", lambda a: True)]


@pytest.mark.parametrize("where", [m[0] for m in _MOMENTS])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_checkpoint_saved_while_the_prune_runs_loses_nothing(kind: str, where: str, request: Any) -> None:
    url = request.getfixturevalue("sqlite_url" if kind == "sqlite" else "pg_url")
    with ContextSaver(url) as saver, ContextSaver(url) as other:
        head, msgs = _turns(saver, "t", 4)
        latest = [*msgs, HumanMessage("q4", id="h4"), AIMessage("a4", id="a4")]
        saved: list[dict[str, Any]] = []
        test: Callable[[tuple[Any, ...]], bool] = dict((m[0], m[1]) for m in _MOMENTS)[where]
        inner = getattr(saver._tables, where)

        def meanwhile(*a: Any) -> Any:
            out = inner(*a)
            if not saved and test(a):  # once: another writer goes on from the head
                saved.append(_put(other, "t", head, 4, {"messages": latest, "notes": {"turn": 4}}))
                other.put_writes(saved[0], [("notes", 4)], "task-4")
            return out

        setattr(saver._tables, where, meanwhile)
        saver.prune(["t"])
        assert saved
        for reader in (saver, other, ContextSaver(url)):
            got = reader.get_tuple(saved[0])
            assert got is not None
            assert got.checkpoint["channel_values"] == {"messages": latest, "notes": {"turn": 4}}
            assert [w[2] for w in got.pending_writes or []] == [4]
            if reader is not saver and reader is not other:
                reader.close()
