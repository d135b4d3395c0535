"""``messages_at(next_seq)[i] is messages[i]``, resolved dynamic messages included, and the
prefix ``changed_since`` vouches for holds the very objects ``messages_at`` gave then."""

from __future__ import annotations

from ctxfold import Context, Message, SystemPromptMessage, ToolDefinitionsMessage, formats

TOOLS = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]


def dynamic_context() -> Context:
    ctx = Context.create(SystemPromptMessage.create("Be brief.", hooks=["today"]), ToolDefinitionsMessage.create())
    ctx.materialize({"today": "Monday", "tool_list": formats.tool_list(TOOLS)})
    ctx.add_messages([Message.user("a"), Message.assistant("b")])
    return ctx


def test_messages_at_now_are_the_shown_objects():
    ctx = dynamic_context()
    now, shown = ctx.messages_at(ctx.next_seq), ctx.messages
    assert len(now) == len(shown) == 4
    assert all(a is b for a, b in zip(now, shown))
    assert now[0].text == "Be brief.\n\nMonday"


def test_the_prefix_changed_since_vouches_for_is_identical():
    ctx = dynamic_context()
    seq = ctx.next_seq
    then = ctx.messages_at(seq)
    ctx.add_message(Message.user("c"))
    ctx.materialize({"unrelated": "x"})
    keep = ctx.changed_since(seq)
    assert keep == len(then)
    assert all(a is b for a, b in zip(then, ctx.messages[:keep]))
    # a rebinding changes the message that carries the hook, and only from there
    ctx.materialize({"today": "Tuesday"})
    assert ctx.changed_since(seq) == 0
    assert ctx.messages[0].text == "Be brief.\n\nTuesday"
    assert ctx.messages_at(seq)[0].text == "Be brief.\n\nMonday"
    assert ctx.messages_at(ctx.next_seq)[0] is ctx.messages[0]
