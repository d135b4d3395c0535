"""Removal and history, checked against replaying the log by hand."""

from __future__ import annotations

import logging

import pytest
from ctxfold import Context, Message, SystemPromptMessage, ToolDefinitionsMessage, hook_id
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from test_context import replay


def users(n: int) -> list[Message]:
    return [Message.user(f"m{i}") for i in range(n)]


def test_remove_message_and_range_keep_the_log():
    ctx = Context.new()
    msgs = users(6)
    ctx.add_messages(msgs)
    ctx.remove_message(1)
    assert ctx.messages == [msgs[0], *msgs[2:]]
    ctx.remove_message_range(1, 2)
    assert ctx.messages == [msgs[0], msgs[4], msgs[5]]
    ev = ctx.events()
    assert [e.type for e in ev[-2:]] == ["remove", "remove"]
    assert ev[-1].data == {"op": "remove", "first": 1, "last": 2} and ev[-1].message is None
    assert [e.message for e in ev[:6]] == msgs  # the removed messages stay in events()
    assert replay(ctx) == ctx.messages


def test_remove_shifts_anchors():
    ctx = Context.new()
    ctx.add_messages(users(10))
    ctx.add_anchor("a", 1)
    ctx.add_anchor("b", 3)
    ctx.add_anchor("c", 6)
    ctx.add_anchor("d", 8)
    ctx.remove_message_range(1, 5)
    assert dict(ctx.anchor_points) == {"system_prompt": 0, "tools": 0, "messages": 5, "a": 1, "b": 1, "c": 1, "d": 3}
    ctx.append(Message.user("at d"), "d")
    assert ctx.messages[3].text == "at d"


def test_clear_and_ranges(caplog):
    ctx = Context.new()
    ctx.clear()
    assert ctx.next_seq == 0  # nothing to remove: no event
    ctx.add_messages(users(3))
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        ctx.remove_message_range(1, 3)
    assert "outside" in caplog.text and len(ctx.messages) == 3 and ctx.next_seq == 3
    with pytest.raises(ValueError):
        ctx.remove_message_range(2, 1)
    with pytest.raises(ValueError):
        ctx.remove_message(-1)
    ctx.remove_message_range(0, 2**70)  # beyond 64 bits: outside, a warning, not OverflowError
    assert len(ctx.messages) == 3
    ctx.clear()
    assert ctx.messages == [] and ctx.next_seq == 4
    assert dict(ctx.anchor_points) == {"system_prompt": 0, "tools": 0, "messages": 0}
    ctx.add_message(Message.user("again"))
    assert [m.text for m in ctx.messages] == ["again"]


def test_log_event_refuses_remove(caplog):
    ctx = Context.new()
    ctx.add_messages(users(2))
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        ctx.log_event("remove", {"op": "remove", "first": 0, "last": 0})
    assert "refused" in caplog.text and ctx.next_seq == 2


def test_removal_survives_save_and_load(tmp_path):
    ctx = Context.create(SystemPromptMessage.create("sys"), ToolDefinitionsMessage.create())
    ctx.add_messages(users(5))
    ctx.remove_message_range(3, 4)
    ctx.replace_message_range(2, 3, Message.system("summary"))
    ctx.remove_message(2)
    back = Context.load(ctx.save(tmp_path))
    assert back.messages == ctx.messages and back.events() == ctx.events()
    assert back.anchor_points == ctx.anchor_points
    assert Context.deserialize(ctx.serialize()).messages == ctx.messages


def test_a_remove_that_does_not_fit_is_a_decode_error():
    from ctxfold import DecodeError

    ctx = Context.new()
    ctx.add_messages(users(2))
    ctx.remove_message(1)
    doc = ctx.serialize()
    doc["events"][2]["data"]["last"] = 5
    with pytest.raises(DecodeError, match=r"events\[2\]"):
        Context.deserialize(doc)
    doc["events"][2]["data"] = {"op": "insert", "position": 0}
    with pytest.raises(DecodeError, match=r"events\[2\]"):
        Context.deserialize(doc)


# ---- history ---------------------------------------------------------------------------


def fold_of(ctx: Context, seq: int) -> list[Message]:
    """The fold of events [0, seq), by hand (logged objects, unresolved)."""
    out: list[Message] = []
    for e in ctx.events()[:seq]:
        d = e.data
        if e.type == "remove":
            del out[d["first"]: d["last"] + 1]
        elif e.message is not None:
            if d["op"] == "insert":
                out.insert(d["position"], e.message)
            else:
                out[d["first"]: d["last"] + 1] = [e.message]
    return out


def bindings_before(ctx: Context, seq: int) -> dict[str, str]:
    bound: dict[str, str] = {}
    for e in ctx.events()[:seq]:
        if e.type == "materialize":
            bound.update({hook_id(k): v for k, v in e.data["bindings"].items()})
    return bound


def changed_since_by_definition(ctx: Context, seq: int) -> int:
    """changed_since's definition, literally: the smallest of the length then and every position an event
    after `seq` touched, each in the positions of its own time."""
    touched = [len(fold_of(ctx, seq))]
    for e in ctx.events()[seq:]:
        d = e.data
        if e.type == "remove" or e.message is not None:
            touched.append(d["position"] if d["op"] == "insert" else d["first"])
        elif e.type == "materialize":
            before = bindings_before(ctx, e.seq)
            rebound = {hook_id(k) for k, v in d["bindings"].items() if before.get(hook_id(k)) != v}
            for p, m in enumerate(fold_of(ctx, e.seq)):
                if rebound & set(m.hook_ids):
                    touched.append(p)
                    break
    return min(touched)


def test_messages_at_and_changed_since_examples():
    ctx = Context.create(SystemPromptMessage.create("sys", hooks=["mem"]))
    ctx.add_messages(users(4))
    s0 = ctx.next_seq
    first = ctx.messages
    ctx.add_message(Message.user("new"))
    assert ctx.changed_since(s0) == 5  # only appends since: the length then
    assert ctx.messages_at(s0) == first
    ctx.materialize({"mem": "remember"})
    assert ctx.changed_since(s0) == 0  # the system prompt carries the rebound hook
    assert ctx.messages_at(s0)[0].text == "sys"
    assert ctx.messages_at(ctx.next_seq)[0].text == "sys\n\nremember"
    s1 = ctx.next_seq
    ctx.materialize({"mem": "remember"})  # the same text again: nothing changes
    assert ctx.changed_since(s1) == len(ctx.messages_at(s1))
    ctx.replace_message_range(2, 3, Message.system("summary"))
    assert ctx.changed_since(s1) == 2
    ctx.remove_message(1)
    assert ctx.changed_since(s1) == 1
    assert ctx.messages_at(0) == []
    for bad in (-1, ctx.next_seq + 1, 2**64):
        with pytest.raises(IndexError):
            ctx.messages_at(bad)
        with pytest.raises(IndexError):
            ctx.changed_since(bad)


def test_messages_at_are_the_logged_objects():
    ctx = Context.new()
    msgs = users(3)
    ctx.add_messages(msgs)
    ctx.replace_message_range(0, 1, Message.system("s"))
    at = ctx.messages_at(3)
    assert all(a is m for a, m in zip(at, msgs))
    ctx.put_system_prompt_overlay("not in history")
    assert "not in history" not in ctx.messages_at(ctx.next_seq)[0].text


class History(RuleBasedStateMachine):
    """messages_at and changed_since against replaying the log by hand, after any mix of
    appends, inserts at anchors, replaces, removes, clears and materializations."""

    def __init__(self):
        super().__init__()
        self.ctx = Context.create(SystemPromptMessage.create("sys", hooks=["mem"]))
        self.n = 0

    def msg(self):
        self.n += 1
        hooks = ["mem"] if self.n % 7 == 0 else []
        return Message.user(f"m{self.n}", hook_ids=tuple(hook_id(h) for h in hooks))

    @rule(k=st.integers(1, 40))
    def add(self, k):
        self.ctx.add_messages(self.msg() for _ in range(k))

    @rule(name=st.sampled_from(["system_prompt", "tools", "messages"]))
    def append(self, name):
        self.ctx.append(self.msg(), name)

    @rule(a=st.floats(0, 1), b=st.floats(0, 1), remove=st.booleans())
    def change_range(self, a, b, remove):
        n = len(self.ctx.messages_at(self.ctx.next_seq))
        if n:
            first, last = sorted((int(a * (n - 1)), int(b * (n - 1))))
            if remove:
                self.ctx.remove_message_range(first, last)
            else:
                self.ctx.replace_message_range(first, last, Message.system(f"r{self.n}"))

    @rule()
    def clear(self):
        self.ctx.clear()

    @rule(text=st.sampled_from(["one", "two", ""]))
    def materialize(self, text):
        self.ctx.materialize({"mem": text})

    @invariant()
    def history_is_the_replayed_log(self):
        ctx = self.ctx
        assert replay(ctx) == fold_of(ctx, ctx.next_seq)
        assert [m.id for m in ctx.messages_at(ctx.next_seq)] == [m.id for m in ctx.messages]
        for seq in sorted({0, ctx.next_seq // 3, ctx.next_seq // 2, max(ctx.next_seq - 2, 0), ctx.next_seq}):
            raw = fold_of(ctx, seq)
            at = ctx.messages_at(seq)
            assert [m.id for m in at] == [m.id for m in raw]
            for r, m in zip(raw, at):
                if not r.hook_ids:
                    assert r is m
            k = ctx.changed_since(seq)
            assert k == changed_since_by_definition(ctx, seq)
            now = ctx.messages_at(ctx.next_seq)
            assert all(now[i] == at[i] for i in range(k))


TestHistory = History.TestCase
TestHistory.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
