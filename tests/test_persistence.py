from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from ctxfold import Context, DecodeError, Message, Part, SystemPromptMessage, ToolDefinitionsMessage, Usage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def rich_context() -> Context:
    ctx = Context.create(SystemPromptMessage.create("s", hooks=["mem"]), ToolDefinitionsMessage.create())
    ctx.add_messages([Message.user("u"), Message.assistant([Part.thinking("t", signature="x"), Part.text("a")],
                                                           tool_calls=[{"id": "1", "name": "f", "arguments": "{ }"}])])
    ctx.add_message(Message.tool("1", "r"), source="memory")
    ctx.log_event("turn_end", {"turn": 1})
    ctx.replace_message_range(2, 3, Message.system("sum"))
    ctx.add_anchor("pin", 3)
    ctx.materialize({"mem": "remember", "tool_list": '[{"name":"a"}]'})
    ctx.add_usage(Usage(requests=1, total_tokens=5))
    ctx.merge_deps({"api_key": "k", "AUTH_TOKEN": "t", "user_password": "p", "max_tokens": 5,
                    "nested": {"secret": 1, "ok": 2}, "fn": print})
    ctx.system_prompt = "sys"
    ctx.put_system_prompt_overlay("never saved")
    return ctx


def same(a: Context, b: Context) -> None:
    assert [m.to_dict() for m in a.messages] == [m.to_dict() for m in b.messages]
    assert a.events() == b.events() and a.anchor_points == b.anchor_points
    assert a.content_map == b.content_map and a.id == b.id


def test_round_trip_and_redaction(tmp_path):
    ctx = rich_context()
    d = ctx.serialize()
    assert d["deps"] == {"max_tokens": 5, "nested": {"ok": 2}}
    assert "never saved" not in json.dumps(d)
    json.dumps(d)
    back = Context.deserialize(d)
    ctx.put_system_prompt_overlay(None)
    same(ctx, back)
    assert back.serialize() == d and back.usage == ctx.usage and back.system_prompt == "sys"
    path = ctx.save(tmp_path / "sessions")
    assert os.path.basename(path) == f"{ctx.created_at:%Y%m%d}-{ctx.id}.json"
    same(ctx, Context.load(path))


def test_v1_and_versionless_and_empty():
    v1 = {"version": 1, "messages": [{"role": "user", "content": "hi", "tool_calls": [], "metadata": {}},
                                     {"role": "assistant", "content": "yo"}], "system_prompt": "p"}
    c = Context.deserialize(v1)
    # the system prompt is shown before a transcript without a system message of its own
    assert [m.content for m in c.messages] == ["p", "hi", "yo"] and c.needs_response is False
    seed = {"messages": [{"role": "system", "_type": "SystemPromptMessage", "id": "s1", "_hook_ids": [],
                          "creation_timestamp": "2026-01-01T10:00:00", "content": [{"type": "text", "text": "sys"}]},
                         {"role": "user", "_type": "Whatever", "content": [{"type": "text", "text": "u"}]}],
            "anchor_points": [["system_prompt", 1], ["tools", 1], ["messages", 2]], "content_map": {}, "id": "abc"}
    c = Context.load_from_dict(seed)
    assert c.system_prompt_message.id == "s1" and c.messages[1].text == "u" and c.needs_response is True
    assert c.messages[0].created_at.tzinfo is not None
    assert len(Context.load_from_dict({}).messages) == 0


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        Context.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"version": 2, "events": [')
    with pytest.raises(DecodeError):
        Context.load(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(DecodeError):
        Context.load(bad)
    d = rich_context().serialize()
    d["events"][1]["seq"] = 5
    with pytest.raises(DecodeError, match=r"events\[1\]"):
        Context.deserialize(d)
    d = rich_context().serialize()
    d["events"][0]["type"] = "nope"
    with pytest.raises(DecodeError, match="unknown event type"):
        Context.deserialize(d)
    d = rich_context().serialize()
    d["anchors"] = [["messages", 99]]
    with pytest.raises(DecodeError):
        Context.deserialize(d)
    ctx = Context.new()
    ctx._core = type(ctx._core)(id="../evil")
    with pytest.raises(ValueError):
        ctx.save(tmp_path)


def _mutations(doc):
    text = json.dumps(doc)
    return st.one_of(
        st.integers(0, len(text)).map(lambda i: text[:i]),
        st.tuples(st.integers(0, len(text) - 1), st.characters()).map(lambda t: text[: t[0]] + t[1] + text[t[0] + 1:]),
    )


DOC = rich_context().serialize()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations(DOC))
def test_corruption_only_raises_decode_error(text):
    try:
        data = json.loads(text)
    except ValueError:
        return
    try:
        Context.load_from_dict(data) if isinstance(data, dict) else Context.deserialize(data)
    except DecodeError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                    max_leaves=10), st.sampled_from(["events", "anchors", "content_map", "messages", "id", "usage"]))
def test_wrong_types_anywhere(value, key):
    d = json.loads(json.dumps(DOC))
    d[key] = value
    try:
        Context.deserialize(d)
    except DecodeError:
        pass


def _paths(v, prefix=()):
    """Every path into a JSON value, for mutating anywhere."""
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, prefix + (i,))


PATHS = [p for p in _paths(DOC) if p]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats(allow_nan=False)
                           | st.text(max_size=6), lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=8)


def _set(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


@st.composite
def structural_mutations(draw):
    """Change a value anywhere, drop / duplicate / swap events, stretch replace ranges and
    insert positions, shift anchors: several at once."""
    d = json.loads(json.dumps(DOC))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "drop", "dup", "swap", "stretch", "anchor"]))
        ev = d.get("events") if isinstance(d.get("events"), list) else None
        if kind == "set":
            path = draw(st.sampled_from(PATHS))
            try:
                _set(d, path, draw(JSON_VALUES))
            except (KeyError, IndexError, TypeError):
                pass
        elif kind in ("drop", "dup", "swap") and ev:
            i, j = draw(st.integers(0, len(ev) - 1)), draw(st.integers(0, len(ev) - 1))
            if kind == "drop":
                ev.pop(i)
            elif kind == "dup":
                ev.insert(i, json.loads(json.dumps(ev[j])))
            else:
                ev[i], ev[j] = ev[j], ev[i]
        elif kind == "stretch" and ev:
            e = draw(st.sampled_from(ev))
            data = e.get("data") if isinstance(e, dict) else None
            if isinstance(data, dict):
                for key in ("first", "last", "position"):
                    if isinstance(data.get(key), int):
                        data[key] += draw(st.integers(-3, 3))
        elif kind == "anchor" and isinstance(d.get("anchors"), list) and d["anchors"]:
            a = draw(st.sampled_from(d["anchors"]))
            if isinstance(a, list) and len(a) == 2 and isinstance(a[1], int):
                a[1] += draw(st.integers(-2, 2))
    return d


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structural_mutations())
def test_structural_corruption_only_raises_decode_error(doc):
    try:
        ctx = Context.deserialize(doc)
    except DecodeError as e:
        assert str(e)  # says something, and where
        return
    # Accepted: then it is whole — it saves, loads back and replays to the same fold.
    again = Context.deserialize(ctx.serialize())
    same(ctx, again)


VALID_BYTES = json.dumps(DOC).encode()


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.integers(0, len(VALID_BYTES) - 1).map(lambda i: VALID_BYTES[:i]),
    st.tuples(st.integers(0, len(VALID_BYTES) - 1), st.integers(0, 255)).map(
        lambda t: VALID_BYTES[: t[0]] + bytes([t[1]]) + VALID_BYTES[t[0] + 1:]),
    st.tuples(st.integers(0, len(VALID_BYTES) - 1), st.binary(min_size=1, max_size=4)).map(
        lambda t: VALID_BYTES[: t[0]] + t[1] + VALID_BYTES[t[0]:]),
))
def test_corrupted_files_only_raise_decode_error(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("bad") / "f.json"
    path.write_bytes(blob)
    try:
        Context.load(path)
    except DecodeError as e:
        assert str(path) in str(e)


SAVER = """
import sys
from ctxfold import Context, Message
ctx = Context.new(messages=[Message.user("x" * 100) for _ in range(20000)])
print("ready", flush=True)
while True:
    ctx.add_message(Message.user("more"))
    ctx.save(sys.argv[1])
"""


def test_sigkill_mid_save_never_tears(tmp_path):
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path)], stdout=subprocess.PIPE)
        p.stdout.readline()
        time.sleep(0.3)
        p.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
        p.wait()
        p.stdout.close()
        files = [f for f in os.listdir(tmp_path) if f.endswith(".json") and not f.startswith(".")]
        for f in files:
            assert len(Context.load(tmp_path / f)) >= 20000


def test_serialize_leaves_the_garbage_collector_as_it_was():
    import gc

    ctx = rich_context()
    assert gc.isenabled()
    ctx.serialize()
    assert gc.isenabled()
    gc.disable()
    try:
        ctx.serialize()
        assert not gc.isenabled()
    finally:
        gc.enable()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=6))
def test_floats_come_back_to_the_bit(tmp_path_factory, xs):
    # A float in a message (a part's field, metadata, a call's arguments) is a value like any
    # other: saved and loaded any number of times it is the same float, never one ulp away
    # (JSON text read back with a correctly rounded parser).
    m = Message.assistant([Part.text("t"), Part.thinking("x", signature="s")], metadata={"xs": xs},
                          tool_calls=[{"id": "c", "name": "f", "arguments": {"xs": xs}}])
    ctx = Context()
    ctx.add_message(m)
    path = ctx.save(tmp_path_factory.mktemp("floats"))
    for again in (Context.deserialize(ctx.serialize()), Context.load(path),
                  Context.deserialize(json.loads(json.dumps(ctx.serialize())))):
        for _ in range(2):
            again = Context.deserialize(again.serialize())
        got = again.messages[0]
        assert [x.hex() for x in got.metadata["xs"]] == [x.hex() for x in xs]
        assert [x.hex() for x in got.tool_calls[0]["arguments"]["xs"]] == [x.hex() for x in xs]
        assert again.events() == ctx.events()
