from __future__ import annotations

import copy
import json
import pickle
import random
from datetime import datetime, timedelta, timezone

import pytest
from ctxfold import Message, Part, SystemPromptMessage, ToolDefinitionsMessage, hook_id
from hypothesis import given, settings
from hypothesis import strategies as st


def test_message_is_an_immutable_value():
    m = Message.user("hi", metadata={"a": [1, 2.5, None]})
    assert m.role == "user" and m.content == "hi" and m.metadata == {"a": [1, 2.5, None]}
    with pytest.raises(AttributeError):
        m.content = "x"  # type: ignore[misc]
    m.metadata["a"] = 1  # a copy: the message does not change
    assert m.metadata == {"a": [1, 2.5, None]}
    same = Message.from_dict(m.to_dict())
    assert same == m and same is not m and hash(same) == hash(m) == hash(m.id)
    assert m != m.replace(content="other") and m.replace(content="other").content == "other"


def test_validation_errors():
    with pytest.raises(ValueError):
        Message("robot", "x")
    with pytest.raises(ValueError):
        Message.user("bad \ud800 surrogate")
    with pytest.raises(TypeError):
        Message.user("x", metadata={"f": object()})
    with pytest.raises(ValueError):
        Message.assistant("x", tool_calls=[{"name": "no id"}])


def test_created_at_is_aware_utc_with_microseconds():
    t = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    m = Message.user("x", created_at=t)
    assert m.created_at == t and m.created_at.tzinfo is not None
    assert m.created_at.utcoffset() == timedelta(0) and m.created_at.microsecond == 123456


def test_parts_and_text():
    m = Message.assistant([Part.thinking("hmm", signature="sig"), Part.text("a"), Part.text("b")])
    assert m.text == "ab" and len(m.parts) == 3
    assert m.parts[0].signature == "sig" and m.parts[0].source is None
    assert Message.user("x").parts == [Part.text("x")] and Message.assistant().parts == []
    weird = Part("custom_type", foo={"x": 1})
    assert Part.from_dict(weird.to_dict()) == weird
    args = '{"b": 1,  "a": 2}'
    assert Part.tool_use("c1", "f", args).arguments == args


def test_tool_factory_and_round_trip():
    m = Message.tool("call_1", {"ok": True, "n": [1, 2]})
    assert m.content == '{"ok":true,"n":[1,2]}' and m.tool_call_id == "call_1"
    d = m.to_dict()
    assert Message.from_dict(d).to_dict() == d
    assert Message.from_dict({"role": "user"}).content is None


def test_special_messages_are_messages():
    sp = SystemPromptMessage.create("static", hooks=["mem"])
    td = ToolDefinitionsMessage.create()
    assert isinstance(sp, Message) and isinstance(td, Message)
    assert sp.role == "system" and td.role == "tool"
    assert sp.hook_ids == (hook_id("mem"),)
    assert hook_id("tool_list") in td.hook_ids and hook_id("tool_filter") in td.hook_ids
    assert isinstance(Message.from_dict(sp.to_dict()), SystemPromptMessage)
    assert pickle.loads(pickle.dumps(sp)) == sp and copy.deepcopy(sp) is sp


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
def test_compact_json_is_pythons(x, s):
    """Tool results and counted text use Python's compact JSON, floats and escapes included."""
    value = {"x": x, "nested": [x, -x, s], "é": s}
    want = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert Message.tool("c", value).content == want


def _nested(depth: int) -> list:
    root: list = []
    node = root
    for _ in range(depth):
        child: list = []
        node.append(child)
        node = child
    return root


def test_deep_values_are_refused_not_crashed(tmp_path):
    from ctxfold import Context

    # Deep enough to blow a native stack: a clear ValueError, never a crash.
    with pytest.raises(ValueError, match="deeper than 100"):
        Message.user("x", metadata={"a": _nested(100_000)})
    with pytest.raises(ValueError, match="deeper than 100"):
        Part.text("x", extra=_nested(5_000))
    # The deepest value accepted still saves and loads back.
    m = Message.user("x", metadata={"a": _nested(99)})
    ctx = Context()
    ctx.add_message(m)
    assert Context.load(ctx.save(tmp_path)).messages == [m]


def test_floats_print_as_pythons_where_two_shortest_forms_tie():
    """A float exactly halfway between two shortest decimal forms (70368744177664.625 reads back
    from both ...62 and ...63) prints with the even last digit, as Python's repr does. Floats
    with few mantissa bits hit such ties often; a random sample of them over many exponents."""
    rng = random.Random(7)
    xs = [2.0**e * (1 + rng.randrange(1 << 20) / 2**20) for e in range(-30, 60) for _ in range(200)]
    xs += [-x for x in xs[::7]]
    assert Message.tool("c", xs).content == json.dumps(xs, separators=(",", ":"))
