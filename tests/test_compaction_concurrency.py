"""The compaction cycle while the agent goes on: a summarizer that runs while turns are
appended (in another task, in another thread) holds no lock, and what was appended meanwhile
stays after the summary; an edit of the range meanwhile makes the apply a ``ConflictError``
that writes nothing."""

from __future__ import annotations

import asyncio
import threading

import ctxfold
import pytest
from ctxfold import CompactionPlan, ConflictError, Context, Message


def chat(turns: int = 10) -> Context:
    ctx = Context.create(system_prompt_message=ctxfold.SystemPromptMessage.create("You are terse."))
    ctx.add_message(Message.user("memory:", hook_ids=[ctxfold.hook_id("mem")]))
    for i in range(turns):
        ctx.add_message(Message.user(f"q{i} " + "word " * 40))
        ctx.add_message(Message.assistant(f"a{i} " + "word " * 40))
    return ctx


def test_a_background_acompact_while_another_task_appends_20_turns():
    ctx = chat()

    async def main() -> Message | None:
        planned = asyncio.Event()
        appended = asyncio.Event()
        seen: list[CompactionPlan] = []

        async def summarize(plan: CompactionPlan) -> str:
            seen.append(plan)
            planned.set()
            await appended.wait()
            return f"summary of {len(plan.messages)} messages"

        async def agent() -> None:
            await planned.wait()
            for i in range(20):
                ctx.add_message(Message.user(f"later question {i}"))
                await asyncio.sleep(0)
                ctx.add_message(Message.assistant(f"later answer {i}"))
            appended.set()

        summary, _ = await asyncio.gather(ctx.acompact(summarize, 600, keep_last=4), agent())
        assert seen[0].based_on < ctx.next_seq - 40
        return summary

    before = ctx.messages
    summary = asyncio.run(main())
    assert summary is not None
    msgs = ctx.messages
    assert msgs[0] is before[0]
    assert msgs[1] is summary
    assert msgs[2 : 2 + 4] == before[-4:]
    assert [m.text for m in msgs[6:]] == [t for i in range(20) for t in (f"later question {i}", f"later answer {i}")]
    assert len(ctx.compactions()) == 1


def test_a_summarizer_in_another_thread_holds_no_lock():
    ctx = chat()
    planned = threading.Event()
    appended = threading.Event()

    def summarize(plan: CompactionPlan) -> str:
        planned.set()
        # The other thread must be able to append (and read) while this runs.
        assert appended.wait(timeout=30)
        return "summary"

    worker = threading.Thread(target=lambda: ctx.compact(summarize, 600, keep_last=2))
    worker.start()
    assert planned.wait(timeout=30)
    for i in range(20):
        ctx.add_message(Message.user(f"turn {i}"))
        assert ctx.total_token_count() > 0
    appended.set()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert ctx.messages[1].text == "summary"
    assert [m.text for m in ctx.messages[-20:]] == [f"turn {i}" for i in range(20)]


@pytest.mark.parametrize(
    "touch",
    [
        pytest.param(lambda c: c.replace_message(3, Message.user("edited")), id="replace"),
        pytest.param(lambda c: c.materialize({"mem": "the user likes tea"}), id="materialize"),
        pytest.param(lambda c: c.remove_message(4), id="remove"),
    ],
)
def test_an_edit_of_the_range_meanwhile_is_a_conflict(touch):
    ctx = chat()

    async def main() -> None:
        async def summarize(plan: CompactionPlan) -> str:
            assert plan.first == 1
            touch(ctx)
            ctx.add_message(Message.user("appended too"))
            await asyncio.sleep(0)
            return "summary"

        with pytest.raises(ConflictError):
            await ctx.acompact(summarize, 600, keep_last=4)

    asyncio.run(main())
    assert ctx.compactions() == []
    assert ctx.messages[-1].text == "appended too"
    # Planned again, it goes through.
    assert ctx.compact(lambda plan: "summary", 600, keep_last=4) is not None
