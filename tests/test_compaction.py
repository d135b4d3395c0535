"""Compaction through the Python API: plan, apply (a compare-and-swap), the sync and async
cycles, the cheaper tier, the records, a store, and bad inputs."""

from __future__ import annotations

import asyncio

import ctxfold
import pytest
from ctxfold import CompactionPlan, CompactionRecord, Compactor, ConflictError, Context, Message, Part, Store
from ctxfold.formats import to_anthropic, to_openai_chat


def words(n: int) -> str:
    return "word " * n


def chat(turns: int = 10) -> Context:
    ctx = Context.create(system_prompt_message=ctxfold.SystemPromptMessage.create("You are terse."))
    for i in range(turns):
        ctx.add_message(Message.user(f"q{i} {words(40)}"))
        ctx.add_message(Message.assistant(f"a{i} {words(40)}"))
    return ctx


def test_a_plan_names_the_range_and_what_it_holds():
    ctx = chat()
    total = ctx.total_token_count()
    assert ctx.plan_compaction(total) is None
    plan = ctx.plan_compaction(total // 2)
    assert isinstance(plan, CompactionPlan)
    assert plan.first == 1 and plan.ranges == ((plan.first, plan.last),)
    assert plan.based_on == ctx.next_seq
    shown = ctx.messages
    assert all(a is b for a, b in zip(plan.messages, shown[plan.first : plan.last + 1]))
    assert plan.tokens_before == sum(m.count_tokens() for m in plan.messages)
    kept = sum(m.count_tokens() for m in shown[plan.last + 1 :])
    assert kept <= total // 4 < kept + shown[plan.last].count_tokens()


def test_apply_writes_one_event_with_the_record():
    ctx = chat()
    seen: list[ctxfold.Event] = []
    ctx.notify = seen.append
    plan = ctx.plan_compaction(100, keep_last=4)
    assert plan is not None
    before = ctx.next_seq
    assert ctx.apply_compaction(plan, "they talked") is None
    assert ctx.next_seq == before + 1 and len(seen) == 1
    summary = ctx.messages[1]
    assert summary.role == "assistant" and summary.text == "they talked"
    record = {
        "based_on": plan.based_on,
        "first": 1,
        "last": plan.last,
        "tokens_before": plan.tokens_before,
        "tokens_after": summary.count_tokens(),
        "encoding": "cl100k_base",
    }
    assert seen[0].data["compaction"] == record
    assert summary.metadata["compaction"] == record
    assert ctx.compactions() == [CompactionRecord(seen[0].seq, 1, plan.last, record)]
    # The originals stay in the log.
    originals = ctx.messages_at(seen[0].seq)[plan.first : plan.last + 1]
    assert all(a is b for a, b in zip(originals, plan.messages))
    assert len(ctx) == 1 + 1 + 4


def test_a_message_summary_is_used_as_it_is():
    ctx = chat()
    plan = ctx.plan_compaction(100, keep_last=2)
    assert plan is not None
    mine = Message.user("[summary of earlier turns]", metadata={"mine": True})
    ctx.apply_compaction(plan, mine)
    shown = ctx.messages[1]
    assert shown.text == mine.text and shown.metadata == {"mine": True}
    assert shown.created_at == plan.messages[0].created_at  # a replacement inherits it


def test_compact_runs_the_cycle_and_a_raising_summarizer_changes_nothing():
    ctx = chat()
    events = ctx.events()

    def boom(plan: CompactionPlan) -> str:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        ctx.compact(boom, 500)
    assert ctx.events() == events

    with pytest.raises(TypeError, match="str or a Message"):
        ctx.compact(lambda plan: 42, 500)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="empty"):
        ctx.compact(lambda plan: "   ", 500)
    assert ctx.events() == events

    got: list[CompactionPlan] = []

    def summarize(plan: CompactionPlan) -> str:
        got.append(plan)
        return f"{len(plan.messages)} messages about words"

    summary = ctx.compact(summarize, 500)
    assert summary is not None and summary is ctx.messages[1]
    assert ctx.total_token_count() <= 500
    assert ctx.compact(summarize, 500) is None
    assert len(got) == 1


def test_plan_to_renders_the_range_as_a_request():
    ctx = Context(messages=[Message.user(words(50))])
    ctx.add_message(Message.assistant("calling", tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}]))
    ctx.add_message(Message.tool("c1", "result"))
    ctx.add_message(Message.user(words(50)))
    plan = ctx.plan_compaction(60, keep_last=1)
    assert plan is not None and plan.last == 2
    req = plan.to("openai_chat")
    assert [m["role"] for m in req["messages"]] == ["user", "assistant", "tool", "user"]
    assert req["messages"][-1]["content"] == ctxfold._compaction.SUMMARY_PROMPT
    assert plan.to("openai_chat", prompt=None) == to_openai_chat(list(plan.messages))
    assert plan.to("anthropic", prompt="Summarize.")["messages"][-1]["content"] == "Summarize."
    with pytest.raises(ValueError, match="unknown format"):
        plan.to("cobol")


def test_appends_meanwhile_survive_and_a_touched_range_conflicts():
    ctx = chat()
    plan = ctx.plan_compaction(100, keep_last=4)
    assert plan is not None
    ctx.add_message(Message.user("appended while summarizing"))
    ctx.apply_compaction(plan, "s")
    assert ctx.messages[-1].text == "appended while summarizing"

    for touch in (
        lambda c: c.replace_message(3, Message.user("edited")),
        lambda c: c.remove_message(2),
        lambda c: c.append(Message.system("new rule"), "system_prompt"),
    ):
        ctx = chat()
        plan = ctx.plan_compaction(100, keep_last=4)
        assert plan is not None
        touch(ctx)
        events = ctx.events()
        with pytest.raises(ConflictError, match="plan again"):
            ctx.apply_compaction(plan, "s")
        assert ctx.events() == events


def test_materialize_on_the_range_conflicts():
    ctx = Context()
    ctx.add_message(Message.user("memory:", hook_ids=[ctxfold.hook_id("mem")]))
    for i in range(6):
        ctx.add_message(Message.user(f"{i} {words(30)}"))
    plan = ctx.plan_compaction(100, keep_last=2)
    assert plan is not None and plan.first == 0
    ctx.materialize({"mem": "the user likes tea"})
    with pytest.raises(ConflictError):
        ctx.apply_compaction(plan, "s")
    # Rebinding a hook no message in the range carries is not a conflict.
    plan = ctx.plan_compaction(100, keep_last=2)
    assert plan is not None
    ctx.materialize({"other": "x"})
    ctx.apply_compaction(plan, "s")


def test_pinned_messages_split_the_plan():
    ctx = chat(6)
    ctx.replace_message(5, ctx.messages[5].replace(metadata={"pinned": True}))
    plan = ctx.plan_compaction(100, keep_last=2, pinned=[2])
    assert plan is not None
    assert plan.ranges == ((1, 1), (3, 4), (6, 10))
    assert (plan.first, plan.last) == (1, 10)
    kept = [ctx.messages[2], ctx.messages[5]]
    before = ctx.next_seq
    ctx.apply_compaction(plan, "s")
    assert ctx.next_seq == before + 3
    assert ctx.messages[2] is kept[0] and ctx.messages[3] is kept[1]
    assert len(ctx) == 1 + 1 + 2 + 2
    assert ctx.compactions()[0].record["ranges"] == [[1, 1], [3, 4], [6, 10]]


def test_clear_tool_results():
    ctx = Context(messages=[Message.user("go")])
    for i in range(4):
        ctx.add_message(Message.assistant(None, tool_calls=[{"id": f"c{i}", "name": "read", "arguments": "{}"}]))
        ctx.add_message(Message.tool(f"c{i}", words(40), name="read"))
    ctx.add_message(Message.assistant([Part.tool_use("u1", "search", {"q": "x"})]))
    ctx.add_message(Message.user([Part.text("and"), Part.tool_result("u1", words(40))]))
    ctx.add_message(Message.assistant(None, tool_calls=[{"id": "k", "name": "keep", "arguments": "{}"}]))
    ctx.add_message(Message.tool("k", words(40)))
    before = ctx.next_seq
    ctx.clear_tool_results(keep_last=1, exclude_tools=["keep"])
    assert ctx.next_seq == before + 4
    msgs = ctx.messages
    assert [m.text for m in msgs[2:9:2]] == ["[tool result cleared]"] * 4
    assert msgs[2].tool_call_id == "c0" and msgs[2].name == "read"
    assert msgs[10].parts[1].content == words(40) and msgs[-1].text == words(40)
    # Every call is still answered.
    to_openai_chat(ctx, strict=True)
    to_anthropic(ctx, strict=True)
    ctx.clear_tool_results(keep_last=0, min_tokens=1000)
    assert ctx.next_seq == before + 4
    ctx.clear_tool_results(keep_last=0, placeholder="gone")
    assert msgs[-1].text == words(40) and ctx.messages[-1].text == "gone"
    assert [p.get("content") for p in ctx.messages[10].parts] == [None, "gone"]
    assert ctx.messages[10].parts[0].text == "and"
    with pytest.raises(TypeError):
        ctx.clear_tool_results(exclude_tools="keep")


def test_bad_arguments():
    ctx = chat()
    with pytest.raises(ValueError, match="non-negative"):
        ctx.plan_compaction(-1)
    with pytest.raises(ValueError, match="non-negative"):
        ctx.plan_compaction(10, keep_last=-2)
    with pytest.raises(IndexError, match="pinned position 99"):
        ctx.plan_compaction(10, pinned=[99])
    with pytest.raises(ValueError):
        ctx.plan_compaction(10, encoding="nope")
    with pytest.raises(TypeError):
        ctx.apply_compaction("not a plan", "s")  # type: ignore[arg-type]
    plan = ctx.plan_compaction(10)
    assert plan is not None
    other = chat()
    with pytest.raises(ValueError, match="made for context"):
        other.apply_compaction(plan, "s")
    assert other.compactions() == []
    with pytest.raises(TypeError, match="unknown plan options"):
        Compactor(lambda p: "s", 10, keep_lst=3)


def test_a_compaction_is_one_event_to_save(store_url, sql):
    with Store(store_url) as store:
        ctx = chat()
        store.save(ctx)
        saved = ctx.stored_seq
        ctx.compact(lambda plan: "short", 500)
        assert ctx.next_seq == saved + 1
        sql.count_writes()
        store.save(ctx)
        assert sql.writes().get("ctxfold_events") == 1
        loaded = store.load(ctx.id)
        assert [m.text for m in loaded.messages] == [m.text for m in ctx.messages]
        assert loaded.compactions() == ctx.compactions()


def test_compactor_sync_and_async():
    compactor = Compactor(lambda plan: "sync summary", 500, keep_last=4)
    ctx = chat()
    assert compactor.over_budget(ctx)
    assert compactor.compact(ctx) is not None
    assert not compactor.over_budget(ctx)

    async def summarize(plan: CompactionPlan) -> str:
        await asyncio.sleep(0)
        return "async summary"

    ctx = chat()
    with pytest.raises(TypeError, match="acompact"):
        Compactor(summarize, 500).compact(ctx)
    assert len(ctx.compactions()) == 0
    summary = asyncio.run(Compactor(summarize, 500).acompact(ctx))
    assert summary is not None and summary.text == "async summary"


def test_a_dynamic_message_is_summarized_as_shown():
    ctx = Context()
    hooked = Message.user("memory:", hook_ids=[ctxfold.hook_id("mem")])
    ctx.add_message(hooked)
    for i in range(6):
        ctx.add_message(Message.user(f"{i} {words(30)}"))
    ctx.materialize({"mem": "the user likes tea"})
    plan = ctx.plan_compaction(100, keep_last=2)
    assert plan is not None
    assert plan.messages[0] is hooked
    assert plan.shown[0].text == "memory:\n\nthe user likes tea"
    assert "the user likes tea" in plan.to("openai_chat")["messages"][0]["content"]
    assert plan.tokens_before == sum(m.count_tokens() for m in plan.shown)
    assert plan.shown[1:] == plan.messages[1:]
