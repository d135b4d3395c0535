"""Every example of the Elixir seed and the anchor behaviour of the Python seed, as docs/guide.md describes."""

from __future__ import annotations

import logging

import pytest
from ctxfold import (
    Context,
    DecodeError,
    Message,
    Part,
    RunContext,
    SandboxPolicy,
    SystemPromptMessage,
    ToolDefinitionsMessage,
    UnknownAnchorError,
    Usage,
)

INTERRUPTED = "Tool call was interrupted and not executed. Please retry if needed."


def replay(ctx: Context) -> list[Message]:
    """The fold, recomputed from events() alone."""
    out: list[Message] = []
    for e in ctx.events():
        d = e.data
        if e.type == "remove":
            del out[d["first"]: d["last"] + 1]
            continue
        if e.message is None:
            continue
        if d["op"] == "insert":
            out.insert(d["position"], e.message)
        else:
            out[d["first"]: d["last"] + 1] = [e.message]
    return out


def test_seed_examples():
    ctx = Context.new()
    ctx.add_message(Message.user("Hello"))
    assert len(ctx.messages) == 1
    ctx = Context.new()
    ctx.add_messages([Message.user("Hi"), Message.assistant("Hello")])
    assert len(ctx.messages) == 2 and len(ctx.assistant_messages()) == 1
    ctx.add_tool_call({"id": "call_123", "name": "search", "arguments": {"q": "test"}})
    assert len(ctx.tool_calls) == 1
    ctx.add_usage(Usage(input_tokens=100, output_tokens=50))
    ctx.add_usage({"input_tokens": 1})
    assert ctx.usage.input_tokens == 101 and ctx.usage.output_tokens == 50
    assert Context.new().last_message() is None
    assert Context.new(messages=[Message.user("Hello")]).last_message().content == "Hello"
    assert Context.new(max_iterations=5, iteration=5).max_iterations_reached()
    assert not Context.new(max_iterations=5, iteration=3).max_iterations_reached()
    c = Context.new(deps={"count": 0})
    c.merge_deps({"count": 1, "new_key": "value"})
    assert c.deps == {"count": 1, "new_key": "value"}
    c.increment_iteration()
    assert c.iteration == 1
    c.set_needs_response(False)
    assert c.needs_response is False
    restored = Context.deserialize(Context.new(system_prompt="Be helpful").serialize())
    assert restored.system_prompt == "Be helpful"
    assert Context.new(system_prompt="Be helpful", max_iterations=5).serialize()["version"] == 2
    run = Context.new(deps={"db": "postgres"}).to_run_context(sandbox=SandboxPolicy("read_only"))
    assert run.deps["db"] == "postgres" and run.sandbox.mode == "read_only"
    assert Context.from_run_context(RunContext({"key": "value"})).deps["key"] == "value"
    with pytest.raises(ValueError):
        SandboxPolicy("root")


def test_log_event_and_refusals(caplog):
    ctx = Context.new()
    ctx.log_event("turn_start", {"turn": 1})
    assert ctx.messages == []
    [e] = ctx.events()
    assert (e.type, e.data["turn"], e.message) == ("turn_start", 1, None)
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        assert ctx.log_event("user_message", {"content": "x"}) is None
        ctx.log_event("materialize", {})
        ctx.log_event("no_such_type", {})
    assert len(ctx.events()) == 1 and len(caplog.records) == 3


def test_needs_response_rules():
    ctx = Context.new(needs_response=False)
    ctx.add_message(Message.system("s"))
    assert ctx.needs_response is False
    ctx.add_message(Message.user("u"))
    assert ctx.needs_response is True
    ctx.add_message(Message.assistant("a"))
    assert ctx.needs_response is False
    ctx.add_message(Message.assistant("a", tool_calls=[{"id": "1", "name": "f"}]))
    assert ctx.needs_response is True


def test_identity_and_source():
    ctx = Context.new()
    m = Message.user("x")
    ctx.add_message(m, source="memory")
    assert ctx.messages[0] is m and ctx.events()[0].data["source"] == "memory"
    assert "source" not in m.to_dict()


def test_anchors():
    sp, td = SystemPromptMessage.create("sys"), ToolDefinitionsMessage.create()
    ctx = Context.create(sp, td)
    ctx.append(Message.user("u1"))
    ctx.append(Message.assistant("a1"))
    assert ctx.anchor_points == [("system_prompt", 1), ("tools", 2), ("messages", 4)]
    ctx.add_anchor("alpha", 3)
    assert ctx.anchor_points[2] == ("alpha", 3)
    ctx.append(Message.user("in alpha"), "alpha")
    assert [m.content for m in ctx.messages][3] == "in alpha"
    assert ctx.anchor_points == [("system_prompt", 1), ("tools", 2), ("alpha", 4), ("messages", 5)]
    with pytest.raises(UnknownAnchorError):
        ctx.append(Message.user("x"), "nope")
    with pytest.raises(KeyError):
        ctx.append(Message.user("x"), "nope")
    with pytest.raises(ValueError, match="Anchor point already exists: alpha"):
        ctx.add_anchor("alpha", 0)
    with pytest.raises(IndexError):
        ctx.add_anchor("far", 99)
    ctx.add_anchor("start", 0, after_existing=False)
    assert ctx.anchor_points[0] == ("start", 0)
    assert ctx.system_prompt_message is sp and ctx.tool_definitions_message is td


def test_replace_ranges():
    ctx = Context.new(messages=[Message.user(str(i)) for i in range(6)])
    first_time = ctx.messages[1].created_at
    ctx.replace_message_range(1, 3, Message.system("[summary]"))
    assert [m.content for m in ctx.messages] == ["0", "[summary]", "4", "5"]
    assert ctx.messages[1].created_at == first_time
    assert len(ctx.events()) == 7 and replay(ctx) == ctx.messages
    ctx.replace_message_range(0, 1, Message.system("[all]"))  # covers the earlier replacement
    assert [m.content for m in ctx.messages] == ["[all]", "4", "5"]
    ctx.replace_message(2, Message.user("last"))  # ends at the last message
    assert [m.content for m in ctx.messages] == ["[all]", "4", "last"]
    assert ctx.anchor_points[-1] == ("messages", 3)
    before = len(ctx.events())
    ctx.replace_message_range(2, 9, Message.user("x"))  # outside: no-op
    assert len(ctx.events()) == before
    with pytest.raises(ValueError):
        ctx.replace_message_range(2, 1, Message.user("x"))
    with pytest.raises(ValueError):
        ctx.replace_message(-1, Message.user("x"))


def test_replace_moves_anchors_inside_and_after():
    ctx = Context.new(messages=[Message.user(str(i)) for i in range(10)])
    ctx.add_anchor("a", 3)
    ctx.add_anchor("b", 6)
    ctx.replace_message_range(2, 5, Message.system("s"))
    pts = dict(ctx.anchor_points)
    assert pts["a"] == 3 and pts["b"] == 3 and pts["messages"] == 7


def test_overlay():
    ctx = Context.new(messages=[Message.system("base"), Message.user("u")])
    ctx.put_system_prompt_overlay("extra")
    assert ctx.messages[0].content == "base\n\nextra" and len(ctx.messages) == 2
    ctx.put_system_prompt_overlay("other")
    assert ctx.messages[0].content == "base\n\nother"
    ctx.put_system_prompt_overlay(None)
    assert ctx.messages[0].content == "base"
    assert not any("overlay" in str(e.data) for e in ctx.events())
    bare = Context.new(messages=[Message.user("u")])
    bare.put_system_prompt_overlay("extra")
    assert [m.role for m in bare.messages] == ["system", "user"]
    assert bare.messages[0].created_at == bare.messages[1].created_at
    parts = Context.new(messages=[Message.system([Part.text("a"), Part.image({"url": "x"})])])
    parts.put_system_prompt_overlay("o")
    assert parts.messages[0].parts[0].text == "a\n\no"
    assert "overlay" not in str(parts.serialize()) and "\n\no" not in str(parts.serialize())


def test_patch_dangling_tool_calls():
    ctx = Context.new(messages=[Message.assistant("Let me search", tool_calls=[{"id": "call_1", "name": "search"}])])
    ctx.patch_dangling_tool_calls()
    assert len(ctx.messages) == 2
    ctx = Context.new(messages=[
        Message.assistant("x", tool_calls=[{"id": "a", "name": "f"}, {"id": "b", "name": "g"}]),
        Message.tool("a", "done"),
        Message.assistant([Part.tool_use("c", "h", {})]),
        Message.user([Part.tool_result("c", "ok")]),
        Message.assistant("y", tool_calls=[{"id": "a", "name": "f"}, {"id": "d", "name": "k"}]),
        Message.user("next"),
    ], needs_response=False)
    ctx.patch_dangling_tool_calls()
    got = [(m.role, m.tool_call_id, m.name) for m in ctx.messages]
    assert got == [
        ("assistant", None, None), ("tool", "a", None), ("tool", "b", "g"),
        ("assistant", None, None), ("user", None, None),
        ("assistant", None, None), ("tool", "d", "k"), ("user", None, None),
    ]
    assert ctx.messages[2].content == INTERRUPTED and ctx.needs_response is False
    n = len(ctx.events())
    ctx.patch_dangling_tool_calls()
    assert len(ctx.events()) == n


def test_materialize_and_hooks():
    sp = SystemPromptMessage.create("You are X", hooks=["memory"])
    td = ToolDefinitionsMessage.create()
    ctx = Context.create(sp, td)
    assert ctx.messages[1].parts == []
    tools = '[{"name": "search", "description": "d", "parameters": {}}, {"name": "shell", "description": "e", "parameters": {}}]'
    ctx.materialize({"memory": "remember", "tool_list": tools, "tool_filter": '["sea.*"]'})
    assert ctx.messages[0].content == "You are X\n\nremember"
    assert [p.name for p in ctx.messages[1].parts] == ["search"]
    assert len(ctx.content_map) == 3 and ctx.events()[-1].type == "materialize"
    n = len(ctx.events())
    ctx.materialize({})
    assert len(ctx.events()) == n
    with pytest.raises(ValueError):
        ctx.materialize({"tool_list": "not json"})
    with pytest.raises(ValueError):
        ctx.materialize({"tool_filter": '["("]'})
    assert len(ctx.events()) == n and [p.name for p in ctx.messages[1].parts] == ["search"]
    # hook_index lists the messages as `messages` shows them (resolved, not raw).
    assert list(ctx.hook_index.values())[0][0] is ctx.messages[0]
    assert ctx.messages[0].id == sp.id
    child = Context.create(parent_context=ctx)
    assert child.content_map == ctx.content_map and child.origin_context_id == ctx.id
    assert child.id not in ctx.children


def test_notify_errors_are_logged(caplog):
    seen = []

    def notify(e):
        seen.append(e.seq)
        raise RuntimeError("boom")

    ctx = Context.new(notify=notify)
    with caplog.at_level(logging.ERROR, logger="ctxfold"):
        ctx.add_message(Message.user("x"))
        ctx.log_event("turn_end", {"turn": 1})
    assert seen == [0, 1] and len(ctx.messages) == 1


def test_deserialize_errors():
    with pytest.raises(DecodeError, match="unsupported version: 7"):
        Context.deserialize({"version": 7})
    with pytest.raises(DecodeError, match="missing or invalid version field"):
        Context.deserialize({"version": "2"})
    with pytest.raises(DecodeError, match="missing or invalid version field"):
        Context.deserialize({})


@pytest.mark.parametrize("tail", [
    [Message.user("u"), Message.system("s")],
    [Message.assistant("a", tool_calls=[{"id": "1", "name": "f"}]), Message("developer", "d")],
    [Message.tool("1", "r"), Message.assistant("done")],
    [Message.system("only system")],
])
def test_add_messages_equals_a_loop_and_notifies_in_order(tail):
    heard: list = []
    batch, loop = Context.new(needs_response=False, notify=heard.append), Context.new(needs_response=False)
    batch.add_messages(tail)
    for m in tail:
        loop.add_message(m)
    assert batch.needs_response is loop.needs_response
    assert [e.message for e in heard] == tail == batch.messages
    assert [e.seq for e in heard] == list(range(len(tail)))
    quiet = Context.new()
    quiet.add_messages(tail)
    assert [e.message for e in quiet.events()] == tail
