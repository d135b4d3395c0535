"""Compaction over random transcripts with tool groups (parallel calls, ``tool_use`` parts,
dangling calls, thinking, special messages, an overlay, pinned messages): no plan splits a
call from its answers or touches the head or a pin; an applied plan with a short summary fits
the budget, adds no orphan or dangling call to the result, its windows or its exports, writes
one event per range, and leaves the originals in ``messages_at``."""

from __future__ import annotations

from typing import Any

from ctxfold import Context, Message, Part, SystemPromptMessage, ToolDefinitionsMessage
from ctxfold.errors import FormatError
from ctxfold.formats import to_anthropic, to_openai_chat, to_openai_responses
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SUMMARY = "short summary"

sizes = st.integers(0, 30)


def say(n: int, tag: str) -> str:
    return f"{tag} " + "word " * n


@st.composite
def transcripts(draw: Any) -> Context:
    """A context: maybe specials, maybe a leading system message, then turns of every kind."""
    if draw(st.booleans()):
        ctx = Context.create(
            system_prompt_message=SystemPromptMessage.create("be brief"),
            tool_definitions_message=draw(st.sampled_from([None, ToolDefinitionsMessage.create()])),
        )
    else:
        ctx = Context()
        if draw(st.booleans()):
            ctx.add_message(Message.system("rules"))
    calls = 0
    for turn in range(draw(st.integers(1, 14))):
        ctx.add_message(Message.user(say(draw(sizes), f"u{turn}"), metadata=pin(draw)))
        kind = draw(st.sampled_from(["plain", "calls", "parts", "dangling", "thinking", "run"]))
        if kind == "plain":
            ctx.add_message(Message.assistant(say(draw(sizes), f"a{turn}"), metadata=pin(draw)))
        elif kind == "thinking":
            ctx.add_message(Message.assistant([Part.thinking("hmm", signature="sig")]))
        elif kind in ("calls", "dangling", "run"):
            if kind == "run":
                ctx.add_message(Message.assistant([Part.thinking("first", signature="s")]))
            ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            ctx.add_message(
                Message.assistant(
                    say(draw(sizes), "calling"),
                    tool_calls=[{"id": i, "name": "f", "arguments": "{}"} for i in ids],
                    metadata=pin(draw),
                )
            )
            answered = ids if kind != "dangling" else ids[: draw(st.integers(0, len(ids) - 1))]
            for i in draw(st.permutations(answered)):
                ctx.add_message(Message.tool(i, say(draw(sizes), "result"), metadata=pin(draw)))
        else:
            ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 2)))]
            calls += len(ids)
            ctx.add_message(Message.assistant([Part.thinking("plan", signature="s")] + [Part.tool_use(i, "g", {}) for i in ids]))
            ctx.add_message(Message.user([Part.tool_result(i, say(draw(sizes), "out")) for i in ids] + [Part.text("next")]))
    if draw(st.booleans()):
        ctx.put_system_prompt_overlay("today is Tuesday")
    return ctx


def pin(draw: Any) -> dict[str, Any]:
    return {"pinned": True} if draw(st.integers(0, 9)) == 0 else {}


# ---- an oracle of calls, answers and groups, written from the messages alone --------------


def calls_of(m: Message) -> list[str]:
    if m.role != "assistant":
        return []
    ids = [p.get("call_id") for p in m.parts if p.type == "tool_use"]
    ids += [c["id"] for c in m.tool_calls if c["id"] not in ids]
    return [i for i in ids if isinstance(i, str)]


def answers_of(m: Message) -> list[str]:
    out = [m.tool_call_id] if m.role == "tool" and m.tool_call_id else []
    if m.role != "assistant":
        out += [p.get("call_id") for p in m.parts if p.type == "tool_result"]
    return [i for i in out if isinstance(i, str)]


def groups(msgs: list[Message]) -> list[set[int]]:
    """Each calling turn (a run of assistant messages) with the messages answering its calls."""
    out: list[set[int]] = []
    by_id: dict[str, int] = {}
    i = 0
    while i < len(msgs):
        if msgs[i].role != "assistant":
            for a in answers_of(msgs[i]):
                if a in by_id:
                    out[by_id[a]].add(i)
            i += 1
            continue
        j = i
        while j < len(msgs) and msgs[j].role == "assistant":
            j += 1
        ids = [c for k in range(i, j) for c in calls_of(msgs[k])]
        if ids:
            out.append(set(range(i, j)))
            for c in ids:
                by_id[c] = len(out) - 1
        i = j
    return out


def unpaired(msgs: list[Message]) -> set[tuple[str, str]]:
    """Calls no later message answers, and answers with no call before them."""
    out = set()
    made: set[str] = set()
    for k, m in enumerate(msgs):
        for a in answers_of(m):
            if a not in made:
                out.add(("orphan", a))
        for c in calls_of(m):
            made.add(c)
            if not any(c in answers_of(n) for n in msgs[k + 1 :]):
                out.add(("dangling", c))
    return out


def transcript(ctx: Context) -> list[Message]:
    """The positions' messages (``messages`` without the overlay)."""
    return ctx.messages_at(ctx.next_seq)


def head_length(msgs: list[Message]) -> int:
    n = 0
    while n < len(msgs) and (msgs[n].role in ("system", "developer") or type(msgs[n]).__name__ == "ToolDefinitionsMessage"):
        n += 1
    return n


def summarized(plan: Any) -> set[int]:
    return {p for a, b in plan.ranges for p in range(a, b + 1)}


def exports_clean(src: Any) -> bool:
    try:
        for export in (to_openai_chat, to_anthropic, to_openai_responses):
            export(src, strict=True)
    except FormatError:
        return False
    return True


# ---- the properties ------------------------------------------------------------------------


@SETTINGS
@given(transcripts(), st.floats(0.05, 0.95), st.sampled_from(["tokens", "last", "both"]), st.data())
def test_no_plan_splits_a_group_or_touches_the_head_or_a_pin(ctx: Context, share: float, how: str, data: Any):
    msgs = transcript(ctx)
    pinned = data.draw(st.lists(st.integers(0, len(msgs) - 1), max_size=2, unique=True))
    opts: dict[str, Any] = {"pinned": pinned}
    if how in ("last", "both"):
        opts["keep_last"] = data.draw(st.integers(0, len(msgs)))
    if how in ("tokens", "both"):
        opts["keep_tokens"] = data.draw(st.integers(0, ctx.total_token_count()))
    plan = ctx.plan_compaction(int(ctx.total_token_count() * share), **opts)
    if plan is None:
        return
    inside = summarized(plan)
    assert all(plan.messages[k] is msgs[p] for k, p in enumerate(sorted(inside)))
    for g in groups(msgs):
        assert g <= inside or not (g & inside), f"group {sorted(g)} split by {plan.ranges}"
    assert min(inside) >= head_length(msgs)
    marked = {p for p, m in enumerate(msgs) if m.metadata.get("pinned") is True}
    for p in marked | set(pinned):
        assert p not in inside
        for g in groups(msgs):
            if p in g:
                assert not (g & inside)
    # Ranges are maximal runs: what lies between two of them is kept for a reason.
    for (_, b), (a, _) in zip(plan.ranges, plan.ranges[1:]):
        assert b + 1 < a


@SETTINGS
@given(transcripts(), st.data())
def test_an_applied_plan_fits_and_adds_nothing_unpaired(ctx: Context, data: Any):
    msgs = transcript(ctx)
    total = ctx.total_token_count()
    # Room for what is never summarized (the head, the overlay), a call group the kept suffix
    # grows back over, and the summary.
    summary_tokens = Message.assistant(SUMMARY).count_tokens()
    head = sum(m.count_tokens() for m in ctx.messages[: len(ctx.messages) - len(msgs) + head_length(msgs)])
    biggest = max((sum(msgs[p].count_tokens() for p in g) for g in groups(msgs)), default=0)
    marked = {p for p, m in enumerate(msgs) if m.metadata.get("pinned") is True}
    held = marked.union(*[g for g in groups(msgs) if g & marked])
    pinned = sum(msgs[p].count_tokens() for p in held)
    floor = 2 * (head + biggest + pinned + summary_tokens + 10)
    assume(floor < total)
    budget = data.draw(st.integers(floor, total - 1))
    clean_before = exports_clean(ctx)
    before_unpaired = unpaired(msgs)
    plan = ctx.plan_compaction(budget)
    assert plan is not None
    seq = ctx.next_seq
    ctx.apply_compaction(plan, SUMMARY)
    # One event per range; the originals are where they were, at the compaction's seq.
    assert ctx.next_seq == seq + len(plan.ranges)
    then = ctx.messages_at(seq)
    assert all(a is b for a, b in zip(then, msgs)) and len(then) == len(msgs)
    record = ctx.compactions()[-1]
    assert record.seq == seq and (record.first, record.last) == (plan.first, plan.last)
    assert ctx.total_token_count() <= budget
    after = transcript(ctx)
    assert unpaired(after) <= before_unpaired
    for window in (ctx.rolling_token_window(budget // 2), ctx.rolling_sequence_window(3)):
        if window is not None:
            assert unpaired(transcript(window)) <= before_unpaired
            if clean_before:
                assert exports_clean(window)
    if clean_before:
        assert exports_clean(ctx)


@SETTINGS
@given(transcripts(), st.integers(0, 4), st.integers(0, 20))
def test_clearing_tool_results_keeps_every_pair(ctx: Context, keep_last: int, min_tokens: int):
    msgs = transcript(ctx)
    before = unpaired(msgs)
    clean = exports_clean(ctx)
    seq = ctx.next_seq
    ctx.clear_tool_results(keep_last=keep_last, min_tokens=min_tokens)
    after = transcript(ctx)
    assert len(after) == len(msgs)
    assert unpaired(after) == before
    assert [answers_of(m) for m in after] == [answers_of(m) for m in msgs]
    assert ctx.messages_at(seq) == msgs
    if clean:
        assert exports_clean(ctx)
