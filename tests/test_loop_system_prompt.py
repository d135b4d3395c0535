"""The configured ``system_prompt`` is sent: shown as a leading system message when the
transcript has none, so token totals, windows and every exporter see it; and a system prompt
that comes in through an importer is a ``SystemPromptMessage`` in its slot, kept by windows."""

from __future__ import annotations

import pytest
from ctxfold import Context, Message, SystemPromptMessage, formats
from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_first_example_sends_its_system_prompt():
    ctx = Context.new(system_prompt="Be helpful")
    ctx.add_message(Message.user("Hello"))
    assert formats.to_openai_chat(ctx)["messages"] == [
        {"role": "system", "content": "Be helpful"}, {"role": "user", "content": "Hello"}]
    assert formats.to_anthropic(ctx) == {"system": "Be helpful", "messages": [{"role": "user", "content": "Hello"}]}
    assert formats.to_openai_responses(ctx)["input"][0] == {"role": "system", "content": "Be helpful"}
    assert [m.role for m in ctx.messages] == ["system", "user"]
    assert ctx.message_count == len(ctx) == 2


def test_counted_in_token_totals():
    ctx = Context(messages=[Message.user("Hello")])
    without = ctx.total_token_count()
    ctx.system_prompt = "You are a careful assistant."
    assert ctx.total_token_count() == sum(m.count_tokens("cl100k_base") for m in ctx.messages) > without


def test_the_transcripts_own_system_message_wins():
    ctx = Context(system_prompt="configured", messages=[Message.system("own"), Message.user("u")])
    assert [m.text for m in ctx.messages] == ["own", "u"]


def test_with_the_overlay_appended():
    ctx = Context(system_prompt="Be brief", messages=[Message.user("u")])
    ctx.put_system_prompt_overlay("Today is Monday")
    assert ctx.messages[0].text == "Be brief\n\nToday is Monday"
    ctx.put_system_prompt_overlay(None)
    assert ctx.messages[0].text == "Be brief"
    ctx.system_prompt = None
    assert [m.text for m in ctx.messages] == ["u"]


def test_empty_is_not_shown_and_a_non_str_refused():
    ctx = Context(system_prompt="", messages=[Message.user("u")])
    assert [m.text for m in ctx.messages] == ["u"] and ctx.system_prompt == ""
    with pytest.raises(TypeError, match="system_prompt"):
        ctx.system_prompt = 3  # type: ignore[assignment]


def test_not_logged_not_a_position_and_carried():
    ctx = Context(system_prompt="p", messages=[Message.user("a"), Message.assistant("b")])
    assert [m.text for m in ctx.messages_at(ctx.next_seq)] == ["a", "b"]
    assert all(e.message.text != "p" for e in ctx.events())
    assert Context.deserialize(ctx.serialize()).messages[0].text == "p"
    assert ctx.rolling_sequence_window(1).messages[0].text == "p"
    assert ctx.strip_thinking().system_prompt == "p"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 120), st.lists(st.text("abc ", min_size=1, max_size=40), min_size=1, max_size=12))
def test_token_windows_count_it(budget, texts):
    ctx = Context(system_prompt="Answer in French, briefly, and cite sources.",
                  messages=[Message.user(t) if i % 2 == 0 else Message.assistant(t) for i, t in enumerate(texts)])
    w = ctx.rolling_token_window(budget)
    if w is None:
        assert ctx.total_token_count() <= budget
        return
    assert w.messages[0].text.startswith("Answer in French")
    if w.message_count > 1:
        assert w.total_token_count() <= budget


def test_an_imported_system_prompt_is_kept_by_windows():
    long = "word " * 40
    msgs = formats.from_anthropic([{"role": "user", "content": long}, {"role": "assistant", "content": long},
                                   {"role": "user", "content": "and now?"}], system="Be terse")
    assert isinstance(msgs[0], SystemPromptMessage)
    ctx = Context(messages=msgs)
    assert ctx.system_prompt_message is msgs[0]
    assert [m for m in ctx.messages] == msgs
    w = ctx.rolling_token_window(40)
    assert w is not None
    assert formats.to_anthropic(w) == {"system": "Be terse", "messages": [{"role": "user", "content": "and now?"}]}


@pytest.mark.parametrize("fmt, request_messages", [
    ("openai_chat", [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]),
    ("openai_chat", [{"role": "developer", "content": "S"}, {"role": "user", "content": "u"}]),
    ("openai_responses", [{"role": "developer", "content": "S"}, {"role": "user", "content": "u"}]),
])
def test_leading_system_and_developer_items_import_as_the_system_prompt(fmt, request_messages):
    msgs = getattr(formats, f"from_{fmt}")(request_messages)
    assert isinstance(msgs[0], SystemPromptMessage) and not isinstance(msgs[1], SystemPromptMessage)
    ctx = Context.new(messages=msgs)
    assert ctx.anchor_points[0] == ("system_prompt", 1)
    key = "messages" if fmt == "openai_chat" else "input"
    assert getattr(formats, f"to_{fmt}")(ctx)[key] == request_messages
