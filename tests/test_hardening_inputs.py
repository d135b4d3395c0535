"""Inputs outside their contract at the edges of the API: usage counts of a provider's answer
that are not counts, and a session limit past any history."""

from __future__ import annotations

import asyncio

import pytest
from ctxfold import Context, FormatError, Message

BAD_COUNTS = ["12", 12.0, -5, True, [12], {"n": 12}, 2**64, 1.5]


def _chat(usage: dict) -> dict:
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": usage}


def _responses(usage: dict) -> dict:
    return {"id": "r", "object": "response", "output": [
        {"type": "message", "id": "m", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "hi", "annotations": []}]}], "usage": usage}


def _anthropic(usage: dict) -> dict:
    return {"id": "a", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "hi"}], "usage": usage}


CASES = [
    (_chat, "prompt_tokens"), (_chat, "completion_tokens"), (_chat, "total_tokens"),
    (_chat, ("prompt_tokens_details", "cached_tokens")),
    (_responses, "input_tokens"), (_responses, "output_tokens"),
    (_responses, ("input_tokens_details", "cached_tokens")),
    (_anthropic, "input_tokens"), (_anthropic, "output_tokens"), (_anthropic, "cache_read_input_tokens"),
    (_anthropic, "cache_creation_input_tokens"),
]


@pytest.mark.parametrize("bad", BAD_COUNTS, ids=repr)
@pytest.mark.parametrize(("shape", "key"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_a_usage_count_that_is_not_a_count_is_refused(shape, key, bad):
    usage: dict = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "input_tokens": 1,
                   "output_tokens": 1}
    if isinstance(key, tuple):
        usage[key[0]] = {key[1]: bad}
    else:
        usage[key] = bad
    ctx = Context()
    ctx.add_message(Message.user("q"))
    before = (ctx.serialize(), ctx.usage)
    with pytest.raises(FormatError, match="usage"):
        ctx.add_response(shape(usage))
    assert (ctx.serialize(), ctx.usage) == before


@pytest.mark.parametrize("shape", [_chat, _responses, _anthropic])
def test_good_and_unset_counts_are_taken(shape):
    ctx = Context()
    ctx.add_response(shape({"prompt_tokens": 3, "completion_tokens": 2, "input_tokens": 3, "output_tokens": 2,
                            "cache_read_input_tokens": None, "prompt_tokens_details": None}))
    assert (ctx.usage.input_tokens, ctx.usage.output_tokens, ctx.usage.requests) == (3, 2, 1)


@pytest.mark.parametrize("limit", [2**64, 2**63, 2**200, 4])
def test_a_session_limit_past_the_history_returns_everything(limit):
    pytest.importorskip("agents")
    from ctxfold.adapters.openai_agents import ContextSession

    async def run() -> None:
        s = ContextSession("s")
        items = [{"role": "user", "content": f"u{i}"} for i in range(3)]
        await s.add_items(items)
        assert await s.get_items(limit) == items

    asyncio.run(run())


def test_a_tail_past_the_transcript_is_all_of_it():
    ctx = Context(messages=[Message.user("a"), Message.user("b")])
    assert [m.text for m in ctx._tail(2**64)] == ["a", "b"]
