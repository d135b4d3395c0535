"""``Context.pending_tool_calls()``: the calls an agent still has to run, with their arguments
decoded whatever API they came from, oldest first."""

from __future__ import annotations

import json

import ctxfold
from ctxfold import Context, Message, Part, ToolCall
from hypothesis import given, settings
from hypothesis import strategies as st


def chat_completion(*calls: tuple[str, str, str]) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
            "role": "assistant", "content": None, "refusal": None,
            "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                           for i, n, a in calls]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def test_openai_chat_calls_with_string_arguments():
    ctx = Context()
    ctx.add_message(Message.user("weather in Paris and Rome?"))
    ctx.add_response(chat_completion(("call_1", "weather", '{"city": "Paris"}'),
                                     ("call_2", "weather", '{"city":"Rome"}')))
    pending = ctx.pending_tool_calls()
    assert pending == [
        ToolCall("call_1", "weather", {"city": "Paris"}, 1, '{"city": "Paris"}'),
        ToolCall("call_2", "weather", {"city": "Rome"}, 1, '{"city":"Rome"}'),
    ]
    ctx.add_message(Message.tool("call_1", "18C"))
    assert [c.id for c in ctx.pending_tool_calls()] == ["call_2"]
    ctx.add_message(Message.tool("call_2", "21C"))
    assert ctx.pending_tool_calls() == []


def test_anthropic_calls_with_input_dicts_answered_by_tool_result_parts():
    ctx = Context()
    ctx.add_message(Message.user("look it up"))
    ctx.add_response({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x", "n": 2}},
                    {"type": "tool_use", "id": "toolu_2", "name": "fetch", "input": {}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })
    [first, second] = ctx.pending_tool_calls()
    assert (first.id, first.name, first.arguments, first.raw_arguments) == ("toolu_1", "search", {"q": "x", "n": 2},
                                                                              {"q": "x", "n": 2})
    assert (second.id, second.arguments, second.message_index) == ("toolu_2", {}, 1)
    # two tool_result user messages, one per call
    ctx.add_message(Message.user([Part.tool_result("toolu_1", "found")]))
    assert [c.id for c in ctx.pending_tool_calls()] == ["toolu_2"]
    ctx.add_message(Message.user([Part.tool_result("toolu_2", "page")]))
    assert ctx.pending_tool_calls() == []


def test_responses_calls_over_several_messages():
    ctx = Context()
    ctx.add_message(Message.user("two things"))
    ctx.add_response({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4.1", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "a", "arguments": "{}",
             "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "c2", "name": "b", "arguments": '{"k": [1]}',
             "status": "completed"},
        ],
        "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
    })
    pending = ctx.pending_tool_calls()
    assert [(c.id, c.name, c.arguments) for c in pending] == [("c1", "a", {}), ("c2", "b", {"k": [1]})]
    assert all(ctx.messages[c.message_index].role == "assistant" for c in pending)
    assert pending[0].message_index < pending[1].message_index
    ctx.add_message(Message.tool("c2", "done"))
    assert [c.id for c in ctx.pending_tool_calls()] == ["c1"]


def test_bad_json_arguments_are_none_and_kept_raw():
    ctx = Context(messages=[Message.assistant(None, tool_calls=[{"id": "x", "name": "f", "arguments": "{oops"}])])
    [call] = ctx.pending_tool_calls()
    assert call.arguments is None and call.raw_arguments == "{oops"


def test_a_call_made_twice_is_pending_once_and_no_arguments_is_an_empty_dict():
    twice = Message.assistant([Part.tool_use("d", "f")], tool_calls=[{"id": "d", "name": "f"}])
    ctx = Context(messages=[Message.user("go"), twice])
    assert ctx.pending_tool_calls() == [ToolCall("d", "f", {}, 1, None)]


def test_calls_before_a_completed_turn_are_settled():
    """The model answered in text after a call nothing answered: it moved on. (Such a call is
    what ``patch_dangling_tool_calls`` answers.)"""
    ctx = Context(messages=[
        Message.user("a"),
        Message.assistant(None, tool_calls=[{"id": "lost", "name": "f", "arguments": "{}"}]),
        Message.user("never mind"),
        Message.assistant("ok"),
        Message.user("b"),
        Message.assistant(None, tool_calls=[{"id": "now", "name": "g", "arguments": "{}"}]),
    ])
    assert [c.id for c in ctx.pending_tool_calls()] == ["now"]


def test_positions_do_not_count_the_shown_system_prompt():
    ctx = Context(system_prompt="Be brief", messages=[
        Message.user("a"), Message.assistant(None, tool_calls=[{"id": "c", "name": "f", "arguments": "{}"}])])
    ctx.put_system_prompt_overlay("today is Monday")
    [call] = ctx.pending_tool_calls()
    assert call.message_index == 1
    assert ctx.messages_at(ctx.next_seq)[call.message_index].tool_calls[0]["id"] == "c"


def test_exported():
    assert ctxfold.ToolCall is ToolCall and "ToolCall" in ctxfold.__all__


# ---- the rule over sequences: a loop's transcript, checked against a whole-transcript scan ----

@st.composite
def loops(draw: st.DrawFn) -> list[Message]:
    """Turns of an agent loop: a user message, a model turn with 0..3 calls (as tool_calls
    entries, or tool_use parts, or one Responses-style message per call), and answers to some of
    them in any order, split over messages. A turn that leaves calls unanswered is the last."""
    out: list[Message] = []
    n = 0
    for _ in range(draw(st.integers(1, 5))):
        out.append(Message.user("u"))
        k = draw(st.integers(0, 3))
        ids = [f"c{n + i}" for i in range(k)]
        n += k
        args = [draw(st.dictionaries(st.sampled_from("abc"), st.integers(-1000, 1000), max_size=2)) for _ in ids]
        shape = draw(st.sampled_from(["entries", "parts", "split"]))
        if not ids:
            out.append(Message.assistant("text"))
        elif shape == "entries":
            out.append(Message.assistant(None, tool_calls=[{"id": i, "name": "f", "arguments": json.dumps(a)}
                                                           for i, a in zip(ids, args)]))
        elif shape == "parts":
            out.append(Message.assistant([Part.tool_use(i, "f", a) for i, a in zip(ids, args)]))
        else:
            out.extend(Message.assistant(None, tool_calls=[{"id": i, "name": "f", "arguments": a}])
                       for i, a in zip(ids, args))
        answered = draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
        for i in answered:
            out.append(Message.tool(i, "r") if draw(st.booleans()) else Message.user([Part.tool_result(i, "r")]))
        if len(answered) < len(ids):
            break
    return out


def whole_scan(messages: list[Message]) -> list[tuple[str, int]]:
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    answered |= {p.call_id for m in messages if isinstance(m.content, list) for p in m.content
                 if p.type == "tool_result"}
    out = []
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        ids = [p.call_id for p in (m.content if isinstance(m.content, list) else []) if p.type == "tool_use"]
        ids += [c["id"] for c in m.tool_calls if c["id"] not in ids]
        out += [(c, i) for c in ids if c not in answered]
    return out


@settings(max_examples=200, deadline=None)
@given(loops())
def test_pending_is_every_unanswered_call_of_a_loop(messages):
    ctx = Context(messages=messages)
    assert [(c.id, c.message_index) for c in ctx.pending_tool_calls()] == whole_scan(messages)
