"""What a new user of the formats ran into: usage counters, reasoning's maker across
frameworks, answers split over several messages under ``strict=True``, and a window that
begins with an assistant turn."""

from __future__ import annotations

import pytest
from ctxfold import Context, Message, Part, formats


def test_responses_cache_write_tokens_reach_usage():
    ctx = Context(messages=[Message.user("q")])
    ctx.add_response({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "a", "annotations": []}]}],
        "usage": {"input_tokens": 100, "output_tokens": 5, "total_tokens": 105,
                  "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 60},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    })
    assert (ctx.usage.cache_read_input_tokens, ctx.usage.cache_creation_input_tokens) == (40, 60)
    assert (ctx.usage.input_tokens, ctx.usage.total_tokens, ctx.usage.requests) == (100, 105, 1)


def test_pydantic_ai_anthropic_thinking_keeps_its_maker():
    pm = pytest.importorskip("pydantic_ai.messages")
    history = [
        pm.ModelRequest(parts=[pm.UserPromptPart(content="q")]),
        pm.ModelResponse(parts=[pm.ThinkingPart(content="let me think", signature="SIG==", provider_name="anthropic"),
                                pm.TextPart(content="a")]),
    ]
    msgs = formats.from_pydantic_ai(history)
    assert msgs[1].content[0].provider == "anthropic"
    assert formats.to_anthropic(msgs)["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": "let me think", "signature": "SIG=="}
    assert formats.to_pydantic_ai(msgs) == history  # and back through Pydantic AI to its maker
    assert "thinking" not in str(formats.to_openai_chat(msgs))  # never to another maker


def split_answers() -> list[Message]:
    return [
        Message.user("two lookups"),
        Message.assistant([Part.tool_use("a", "f", {"q": 1}), Part.tool_use("b", "f", {"q": 2})]),
        Message.user([Part.tool_result("a", "one")]),
        Message.user([Part.tool_result("b", "two")]),
        Message.assistant("done"),
    ]


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic"])
def test_answers_split_over_two_messages_need_no_repair(fmt):
    export = getattr(formats, f"to_{fmt}")
    assert export(split_answers(), strict=True) == export(split_answers())


def test_a_real_repair_is_still_reported():
    moved = split_answers()
    moved.insert(3, Message.user("an aside between the answers"))
    with pytest.raises(ctxfold_format_error(), match="not right after its call"):
        formats.to_anthropic(moved, strict=True)


def ctxfold_format_error() -> type[Exception]:
    from ctxfold import FormatError

    return FormatError


def test_an_anthropic_request_may_begin_with_an_assistant_turn():
    """The Messages API combines consecutive turns and no longer asks for a user turn first
    (the SDK's own ``messages`` documentation), so a window that starts on an assistant turn
    is sent as it is, with nothing to report."""
    ctx = Context(system_prompt="S", messages=[
        Message.user("x " * 200), Message.assistant("first answer"), Message.user("and?"), Message.assistant("more")])
    w = ctx.rolling_token_window(30)
    assert w is not None and w.messages[1].role == "assistant"
    request = formats.to_anthropic(w, strict=True)
    assert request["system"] == "S"
    assert [m["role"] for m in request["messages"]] == ["assistant", "user", "assistant"]


IMAGES = {
    "a URL string": (Part.image("https://example.com/cat.png"), "https://example.com/cat.png"),
    "a url dict": (Part.image({"url": "https://example.com/cat.png"}), "https://example.com/cat.png"),
    "a data URL": (Part.image("data:image/png;base64,iVBORw0KGgo="), "data:image/png;base64,iVBORw0KGgo="),
    "a Chat image_url part": (Part.from_dict({"type": "image_url", "image_url": {"url": "https://example.com/c.png"}}),
                              "https://example.com/c.png"),
}


@pytest.mark.parametrize("name", list(IMAGES))
def test_every_image_a_user_builds_is_sent(name):
    from anthropic.types import MessageParam
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputItemParam
    from pydantic import TypeAdapter

    part, url = IMAGES[name]
    msgs = [Message.user([Part.text("what is this?"), part])]
    chat = formats.to_openai_chat(msgs)["messages"][0]
    assert chat["content"][1] == {"type": "image_url", "image_url": {"url": url}}
    TypeAdapter(ChatCompletionMessageParam).validate_python(chat)
    item = formats.to_openai_responses(msgs)["input"][0]
    assert item["content"][1] == {"type": "input_image", "image_url": url, "detail": "auto"}
    TypeAdapter(ResponseInputItemParam).validate_python(item)
    block = formats.to_anthropic(msgs)["messages"][0]["content"][1]
    if url.startswith("data:"):
        assert block == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                     "data": "iVBORw0KGgo="}}
    else:
        assert block == {"type": "image", "source": {"type": "url", "url": url}}
    TypeAdapter(MessageParam).validate_python(formats.to_anthropic(msgs)["messages"][0])
