"""``to_openai_responses(..., pair=False)``: the items as they are — every message as exactly
the item(s) it exports to, in order, with no pairing plan (docs/formats.md). What an item
store such as the Agents SDK session gives back after popping and rewinding single items."""

from __future__ import annotations

import json

import pytest
from ctxfold import Context, FormatError, Message, _core, formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def as_is(items: list[dict]) -> list[dict]:
    return formats.to_openai_responses(formats.from_openai_responses(items), pair=False)["input"]


def same(a: object, b: object) -> None:
    """Equal, and in the same key order (what a byte-exact store promises)."""
    assert a == b
    assert json.dumps(a) == json.dumps(b)


CALL = {
    "type": "function_call",
    "id": "fc_68a1",
    "call_id": "call_weather",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
    "status": "completed",
}
OUTPUT = {"type": "function_call_output", "call_id": "call_weather", "output": "18°C"}


@pytest.mark.parametrize(
    "items",
    [
        [CALL],  # a call waiting for its output (an approval, a rewind)
        [OUTPUT],  # an output whose call was popped
        [OUTPUT, {"role": "user", "content": "and?"}, CALL],  # the output before its call
        [CALL, {"role": "user", "content": "wait"}, OUTPUT, OUTPUT],  # moved, then twice
        [{**CALL, "call_id": "c" * 80}],  # an id Responses would not accept, as it is
        [{"type": "function_call_output", "call_id": "x", "output": [{"type": "input_text", "text": "t"}]}],
    ],
)
def test_lone_calls_and_outputs_come_back_as_they_were(items):
    same(as_is(items), items)
    with pytest.raises(FormatError):  # the request export would have to repair every one
        formats.to_openai_responses(formats.from_openai_responses(items), strict=True)


def test_a_context_gives_back_every_prefix():
    items = [{"role": "user", "content": "weather?"}, CALL, OUTPUT, {"role": "assistant", "content": "18°C"}]
    ctx = Context()
    for n, item in enumerate(items, 1):
        ctx.add_messages(formats.from_openai_responses([item]))
        same(formats.to_openai_responses(ctx, pair=False)["input"], items[:n])


def test_a_tool_message_without_a_call_id_is_refused_not_left_out():
    with pytest.raises(FormatError, match=r"messages\[1\]: a tool message without a tool_call_id"):
        formats.to_openai_responses([Message("user", "hi"), Message("tool", "r")], pair=False)


@pytest.mark.parametrize("fmt", ["openai_chat", "anthropic"])
def test_only_responses_has_items_as_they_are(fmt):
    with pytest.raises(ValueError, match="openai_responses only"):
        _core.format_export(fmt, [Message("user", "hi")], False, False, False)


# ---- any items, in any order --------------------------------------------------------------

ids = st.sampled_from(["a", "b", "call_1", "x" * 70])
text = st.text(max_size=12)
item = st.one_of(
    st.builds(lambda c, a: {"type": "function_call", "call_id": c, "name": "f", "arguments": a}, ids, text),
    st.builds(lambda c, o: {"type": "function_call_output", "call_id": c, "output": o}, ids, text),
    st.builds(lambda t: {"role": "user", "content": t}, text.filter(bool)),
    st.builds(lambda t: {"role": "assistant", "content": t}, text.filter(bool)),
    st.builds(
        lambda t: {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": t}]},
        text,
    ),
    st.just({"type": "item_reference", "id": "msg_1"}),
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(item, max_size=12))
def test_any_items_come_back_exactly(items):
    same(as_is(items), items)
