"""Errors say where they were found twice: in their text, and as data (``loc``, a tuple of keys
and indices from the outside in), and both agree."""

from __future__ import annotations

import json
import re

import pytest
from _stores import Sql, sqlite_url  # noqa: F401  (a fixture)
from ctxfold import Context, DecodeError, FormatError, Message, _core
from ctxfold.errors import ConflictError, ContextError, UnknownAnchorError
from ctxfold.stores import Store
from hypothesis import given
from hypothesis import strategies as st


def _document() -> dict:
    ctx = Context()
    ctx.add_messages([Message.user("hi"), Message.assistant("hello")])
    return json.loads(json.dumps(ctx.serialize()))


def _rendered(loc: tuple[str | int, ...]) -> str:
    """The path as the text shows it: keys joined by dots, indices in brackets."""
    out = ""
    for item in loc:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else item)
    return out


def test_a_bad_document_names_the_place_in_its_text_and_its_loc():
    doc = _document()
    doc["events"][-1]["data"]["message"]["role"] = "robot"
    with pytest.raises(DecodeError) as e:
        Context.deserialize(doc)
    i = len(doc["events"]) - 1
    assert e.value.loc == ("events", i, "data", "message", "role")
    assert str(e.value).startswith(f"events[{i}].data.message.role: invalid role \"robot\"")


@pytest.mark.parametrize(("path", "value", "loc"), [
    (["events", 1, "seq"], 7, ("events", 1, "seq")),
    (["events", 0, "type"], "nope", ("events", 0, "type")),
    (["events", 0, "data", "op"], "move", ("events", 0, "data", "op")),
    (["events", 0, "data", "message", "content"], 3, ("events", 0, "data", "message", "content")),
    (["anchors"], [["a", 1], ["b", 0]], ("anchors", 1)),
    (["children"], [1], ("children", 0)),
    (["version"], 7, ()),
])
def test_each_place_is_data(path, value, loc):
    doc = _document()
    at = doc
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    with pytest.raises(DecodeError) as e:
        Context.deserialize(doc)
    assert e.value.loc == loc
    assert str(e.value).startswith(f"{_rendered(loc)}: " if loc else "")


def test_a_file_leads_the_text_and_the_path_stays_the_documents(tmp_path):
    doc = _document()
    doc["events"][0]["data"]["op"] = "move"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DecodeError) as e:
        Context.load(path)
    assert e.value.loc == ("events", 0, "data", "op")
    assert str(e.value).startswith(f"{path}: events[0].data.op: ")


def test_a_runtime_field_of_the_wrong_type_is_placed_by_its_key(tmp_path):
    doc = _document()
    doc["iteration"] = "three"
    with pytest.raises(DecodeError) as e:
        Context.deserialize(doc)
    assert e.value.loc == ("iteration",)
    assert str(e.value) == "iteration: wrong type str"
    doc = _document()
    doc["started_at"] = 5
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DecodeError) as e:
        Context.load(path)
    assert e.value.loc == ("started_at",)
    assert str(e.value) == f"{path}: started_at: wrong type int"


def test_a_corrupt_store_row_names_the_context_and_seq_and_keeps_the_path(sqlite_url):  # noqa: F811
    with Store(sqlite_url) as store:
        ctx = Context()
        ctx.add_messages([Message.user("a"), Message.user("b")])
        store.save(ctx)
    sql = Sql(sqlite_url)
    sql.run("UPDATE ctxfold_events SET data = replace(data, '\"role\":\"user\"', '\"role\":\"boss\"') WHERE seq = 1")
    sql.close()
    with Store(sqlite_url) as store, pytest.raises(DecodeError) as e:
        store.load(ctx.id)
    assert e.value.loc == ("data", "message", "role")
    assert str(e.value).startswith(f"context {ctx.id}: seq 1: data.message.role: ")


def test_arguments_with_a_place_carry_it_on_the_builtin_exception():
    with pytest.raises(ValueError, match=r"^content\[1\]: a part needs a string \"type\"$") as v:
        Message("user", [{"type": "text", "text": "a"}, {"text": "b"}])
    assert v.value.loc == ("content", 1)
    with pytest.raises(TypeError, match=r"^metadata\.a\[0\]: set is not JSON") as t:
        Message("user", "x", metadata={"a": [{1}]})
    assert t.value.loc == ("metadata", "a", 0)
    with pytest.raises(ValueError, match=r"^tool_calls\[0\]: a tool call needs \"name\"$") as c:
        Message("assistant", None, tool_calls=[{"id": "a"}])
    assert c.value.loc == ("tool_calls", 0)
    # No place, no loc on a builtin exception.
    with pytest.raises(ValueError) as r:
        Message("robot", "x")
    assert not hasattr(r.value, "loc")


def test_a_provider_value_that_is_not_json_is_a_placed_format_error():
    with pytest.raises(FormatError) as e:
        _core.format_import("openai_chat", [{"role": "user", "content": "a"}, {"role": "user", "content": {1}}])
    assert e.value.loc == ("messages", 1, "content")
    assert str(e.value).startswith("messages[1].content: set is not JSON")


def test_a_provider_message_the_core_cannot_convert_is_placed():
    bad = [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"arguments": "{}"}}]}]
    with pytest.raises(FormatError) as e:
        _core.format_import("openai_chat", bad)
    assert e.value.loc == ("messages", 0, "tool_calls", 0, "function")
    assert str(e.value) == 'messages[0].tool_calls[0].function: missing "name"'


def test_errors_without_a_path_have_an_empty_loc():
    ctx = Context()
    with pytest.raises(UnknownAnchorError) as e:
        ctx.append(Message.user("x"), "nope")
    assert e.value.loc == ()
    assert ConflictError("x").loc == () and ContextError().loc == ()


keys = st.lists(st.text(alphabet="abcxyz_", min_size=1, max_size=5), max_size=6)
labels = st.lists(st.text(alphabet="abc ./", min_size=1, max_size=8), max_size=3)


@given(outer=keys, within=labels)
def test_located_adds_places_outside_and_renders_them_as_the_core_does(outer, within):
    """An error placed by the core, then placed further out from Python (one key, one label at
    a time), reads as one path after what held it, and its loc is that path."""
    doc = _document()
    doc["events"][0]["data"]["op"] = "move"
    with pytest.raises(DecodeError) as caught:
        Context.deserialize(doc)
    e = caught.value
    for key in reversed(outer):
        e = _core.located(e, key)
    for label in reversed(within):
        e = _core.located(e, within=label)
    assert isinstance(e, DecodeError)
    loc = (*outer, "events", 0, "data", "op")
    assert e.loc == loc
    lead = "".join(f"{w}: " for w in within)
    assert str(e) == f"{lead}{_rendered(loc)}: " + 'must be "insert" or "replace"'


def test_located_takes_a_plain_exception_as_its_text():
    e = _core.located(DecodeError("expected str, got bool"), "agent_name")
    assert type(e) is DecodeError and e.loc == ("agent_name",)
    assert str(e) == "agent_name: expected str, got bool"
    assert re.match(r"^f\.json: agent_name: ", str(_core.located(e, within="f.json")))


def test_a_framework_message_the_core_refuses_is_placed_under_its_index():
    from ctxfold import formats
    from langchain_core.messages import AIMessage, HumanMessage

    class Opaque:
        pass

    with pytest.raises(FormatError) as e:
        formats.from_langchain([HumanMessage("ok"), AIMessage(content="x", additional_kwargs={"parsed": Opaque()})])
    assert e.value.loc == ("messages", 1, "metadata", "interop", "extra", "additional_kwargs", "parsed")
    assert str(e.value).startswith("messages[1].metadata.interop.extra.additional_kwargs.parsed: Opaque is not JSON")
