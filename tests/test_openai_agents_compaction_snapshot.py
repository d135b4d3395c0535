"""ContextSession offers the Agents SDK's atomic compaction protocol: the last items read as a
snapshot, and their replacement by the compacted output in one write that happens only if those
items are still the last ones. The SDK's ``OpenAIResponsesCompactionSession`` uses it for an
automatic compaction instead of reading (and being limited by) the whole history."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import pytest
from _agents_support import BACKENDS, backends, run
from _stores import Sql
from agents import Agent, Runner
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ModelStep, ScriptedModel, assistant_message
from ctxfold.adapters.openai_agents import ContextSession

pytestmark = pytest.mark.frameworks

ITEMS: list[Any] = [
    {"role": "user", "content": "one"},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    {"role": "assistant", "content": "two"},
    {"role": "user", "content": "three"},
]
SUMMARY: list[Any] = [{"role": "user", "content": "summary of two and three"}]


@pytest.fixture(params=BACKENDS)
def sessions(request, tmp_path):
    b = backends(request.param, request, tmp_path)
    yield b
    b.close()


def test_the_snapshot_is_the_last_items_and_says_whether_they_are_all(sessions):
    async def go() -> None:
        s = sessions.session()
        await s.add_items(ITEMS)
        part = await s._get_compaction_snapshot(2)
        assert (part.items, part.complete) == (ITEMS[-2:], False)
        whole = await s._get_compaction_snapshot(len(ITEMS))
        assert (whole.items, whole.complete) == (ITEMS, True)
        assert (await s._get_compaction_snapshot(100)).complete

    run(go())


def test_replace_suffix_swaps_the_suffix_in_one_write(sessions):
    async def go() -> None:
        s = sessions.session()
        await s.add_items(ITEMS)
        snap = await s._get_compaction_snapshot(3)
        before = s.context.next_seq
        assert await snap.replace_suffix(1, SUMMARY) is True
        assert await s.get_items() == ITEMS[:3] + SUMMARY
        # A remove and an add: the log keeps the items that were compacted away.
        assert [e.type for e in s.context.events()[before:]] == ["remove", "user_message"]
        assert s.context.messages_at(before)[3].content == "two"
        if sessions.kind != "memory":
            other = sessions.session()  # what a second process on the same store reads
            assert await other.get_items() == ITEMS[:3] + SUMMARY

    run(go())


def test_a_suffix_that_changed_is_not_replaced(sessions):
    async def go() -> None:
        s = sessions.session()
        await s.add_items(ITEMS)
        snap = await s._get_compaction_snapshot(2)
        writer = s if sessions.kind == "memory" else sessions.session()
        await writer.add_items([{"role": "assistant", "content": "late"}])
        before = s.context.next_seq if sessions.kind == "memory" else None
        assert await snap.replace_suffix(0, SUMMARY) is False
        assert await s.get_items() == [*ITEMS, {"role": "assistant", "content": "late"}]
        if before is not None:
            assert s.context.next_seq == before  # nothing written
        # An empty suffix replaces nothing.
        fresh = await s._get_compaction_snapshot(2)
        assert await fresh.replace_suffix(2, SUMMARY) is False

    run(go())


def test_prune_prefix_removes_the_expired_oldest_items_in_the_same_write(sessions):
    async def go() -> None:
        s = sessions.session()
        await s.add_items(ITEMS)
        expired = {"one", "ok"}  # the first item, then the third: only the first is a prefix

        def is_expired(item: Any) -> bool:
            return item.get("content") in expired or item.get("output") in expired

        snap = await s._get_compaction_snapshot(2, prune_prefix=is_expired)
        assert await snap.replace_suffix(0, SUMMARY) is True
        assert await s.get_items() == ITEMS[1:3] + SUMMARY

    run(go())


def test_a_malformed_output_writes_nothing(sessions):
    async def go() -> None:
        from ctxfold.errors import FormatError

        s = sessions.session()
        await s.add_items(ITEMS)
        snap = await s._get_compaction_snapshot(2)
        with pytest.raises(FormatError):
            await snap.replace_suffix(0, [{"role": "user", "content": object()}])
        assert await s.get_items() == ITEMS

    run(go())


def test_a_subclass_that_changes_how_items_are_written_offers_no_snapshot():
    class Upper(ContextSession):
        async def add_items(self, items: list[Any]) -> None:
            await super().add_items([{**i, "content": str(i["content"]).upper()} for i in items])

    class Named(ContextSession):
        pass

    async def go() -> None:
        assert await Upper("u")._get_compaction_snapshot(2) is None
        assert await Named("n")._get_compaction_snapshot(2) is not None

    run(go())


def test_the_snapshot_writes_one_transaction_on_a_store(store_url):
    async def go() -> dict[str, int]:
        s = ContextSession("tx", store_url)
        sql = Sql(store_url)
        try:
            await s.add_items(ITEMS)
            snap = await s._get_compaction_snapshot(2)
            sql.count_writes()
            assert await snap.replace_suffix(0, SUMMARY)
            return sql.writes()
        finally:
            sql.close()
            s.close()

    writes = run(go())
    # One save: the head row moved once, the two events (remove, add) appended with it.
    assert writes.get("ctxfold_contexts") == 1 and writes.get("ctxfold_events") == 2


@pytest.mark.parametrize("where", ["memory", "store"])
def test_automatic_compaction_runs_on_the_snapshot_within_the_rollback_budget(where, tmp_path):
    """The SDK's own scenario: a budget of one item would refuse a whole-history read of the
    two items of the turn, but the snapshot's suffix replacement needs none."""

    async def go() -> None:
        backend = ContextSession("auto", None if where == "memory" else os.fspath(tmp_path / "s.db"))
        client = MagicMock()
        client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=SUMMARY))
        session = OpenAIResponsesCompactionSession(
            "auto", backend, client=client, max_rollback_items=1, should_trigger_compaction=lambda _: True)
        agent = Agent(name="t", model=ScriptedModel(steps=[ModelStep(output=[assistant_message("reply")])]))
        try:
            await Runner.run(agent, "hello", session=session)
            client.responses.compact.assert_awaited_once()
            assert await backend.get_items() == SUMMARY
            # The log keeps the compacted turn.
            removed = next(e.seq for e in backend.context.events() if e.type == "remove")
            assert [m.content for m in backend.context.messages_at(removed)][0] == "hello"
        finally:
            backend.close()

    run(go())
