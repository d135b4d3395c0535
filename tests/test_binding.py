"""The binding converts, the core decides: one rule of what is JSON, one wording per rule,
whichever door a value comes in by."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from ctxfold import Context, DecodeError, FormatError, Message, Part, formats
from ctxfold._core import json_clean
from hypothesis import given
from hypothesis import strategies as st

# ---- the old facade's json_clean, kept here as the reference the core's must equal -----------

_SECRET_WORDS = {
    "secret", "secrets", "password", "passwords", "passwd", "token", "apikey", "privatekey",
    "accesskey", "credential", "credentials", "bearer", "authorization", "auth",
}
_SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key")}
_DROP = object()


def _is_secret(key: str) -> bool:
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)) if w]
    return any(w in _SECRET_WORDS for w in words) or any(p in _SECRET_PAIRS for p in zip(words, words[1:]))


def _reference(v: Any, redact: bool) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        try:
            v.encode()
        except UnicodeEncodeError:
            return _DROP
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**64 else _DROP
    if isinstance(v, float):
        return v if math.isfinite(v) else _DROP
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str) or (redact and _is_secret(k)):
                continue
            try:
                k.encode()
            except UnicodeEncodeError:
                continue
            c = _reference(x, redact)
            if c is not _DROP:
                out[k] = c
        return out
    if isinstance(v, (list, tuple)):
        return [c for c in (_reference(x, redact) for x in v) if c is not _DROP]
    return _DROP


_keys = st.one_of(
    st.sampled_from(["apiKey", "API_KEY", "max_tokens", "auth", "user", "accessKey", "x", "tokens", "a-b"]),
    st.text(max_size=8),
    st.integers(-3, 3),
)
_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6),
    st.just("\ud800"), st.just({1, 2}), st.just(b"bytes"), st.just(object()),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_values, st.booleans())
def test_json_clean_is_the_old_rule(v, redact):
    want = _reference(v, redact)
    got = json_clean(v, redact=redact)
    if want is _DROP:
        assert got is None
    else:
        assert repr(got) == repr(want)  # repr: NaN-free, so equal values print equally


def test_json_clean_too_deep_raises_like_an_argument():
    deep: Any = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(ValueError, match="deeper than 100"):
        json_clean(deep)


# ---- one wording per rule ---------------------------------------------------------------------

PART_TYPE = 'a part needs a string "type"'


def test_a_part_without_a_type_reads_the_same_everywhere():
    texts = []
    for make in (
        lambda: Part.from_dict({"text": "x"}),
        lambda: Message.user([{"text": "x"}]),
        lambda: Message("user", [{"type": 3}]),
        lambda: Message.from_dict({"role": "user", "content": [{"text": "x"}]}),
        lambda: Message.user("a").replace(content=[{"no": "type"}]),
    ):
        with pytest.raises(ValueError) as e:
            make()
        texts.append(str(e.value))
    assert all(t.endswith(PART_TYPE) for t in texts), texts
    ctx = Context()
    ctx.add_message(Message.user([Part.text("x")]))
    doc = ctx.serialize()
    doc["events"][-1]["data"]["message"]["content"] = [{"x": 1}]
    with pytest.raises(DecodeError, match=re.escape(PART_TYPE)):
        Context.deserialize(doc)


def test_not_json_names_the_place_and_the_type():
    with pytest.raises(TypeError, match=r"^metadata\.bad: set is not JSON"):
        Message.user("a", metadata={"ok": 1, "bad": {1}}).metadata  # noqa: B018
    with pytest.raises(TypeError, match=r"bad: set is not JSON"):
        Message.user("a", metadata={"ok": 1, "bad": {1}})
    with pytest.raises(TypeError, match=r"content\[1\]: expected a Part or a dict, got int"):
        Message.user([Part.text("x"), 5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"tool_calls\[0\]: expected a dict, got str"):
        Message.assistant("", tool_calls=["call"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="name: expected a str or None, got int"):
        Message.user("a", name=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Message.user("a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="lone surrogates"):
        Message.user("\ud800")
    # An importer says the same, as a FormatError with the request's path.
    with pytest.raises(FormatError, match=r"messages\[0\]\.content\[0\]\.x: set is not JSON"):
        formats.from_openai_chat([{"role": "user", "content": [{"type": "text", "text": "a", "x": {1}}]}])


def test_tool_calls_checked_by_the_core_with_their_index():
    with pytest.raises(ValueError, match=r"tool_calls\[1\]: a tool call needs \"id\""):
        Message.assistant("", tool_calls=[{"id": "a", "name": "f"}, {"name": "g"}])
    with pytest.raises(ValueError, match=r"tool_calls\[0\]: a tool call's arguments must be a dict or a JSON string"):
        Message.user("x").replace(role="assistant", tool_calls=[{"id": "a", "name": "f", "arguments": 3}])


def test_factories_keep_key_order_and_extra_keys():
    p = Part.tool_use("c1", "f", {"b": 1, "a": 2}, cache_control={"type": "ephemeral"})
    assert list(p.to_dict()) == ["type", "call_id", "name", "arguments", "cache_control"]
    assert Part.tool("f").to_dict() == {"type": "tool", "name": "f"}
    assert Message.tool("c1", {"b": [1, 2.5, None], "a": "é"}).content == '{"b":[1,2.5,null],"a":"é"}'
