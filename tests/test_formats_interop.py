"""The interop shapes the frameworks' importers keep are built by the core
(``_core.interop_metadata``, ``_core.request_header``): the Python importers hand over only
what the framework had that ctxfold has no field for."""

from __future__ import annotations

import json

import pytest
from ctxfold import Message, _core, formats


def test_a_messages_interop_metadata_leads_with_its_format():
    md = _core.interop_metadata("langchain", {"class": "ChatMessage", "role": "critic", "extra": {"k": [1]}})
    assert json.dumps(md) == json.dumps(
        {"interop": {"format": "langchain", "class": "ChatMessage", "role": "critic", "extra": {"k": [1]}}})
    # What the core builds is what the exporters read back: the plan finds it by format.
    plan = _core.format_plan("langchain", [Message.user("x", metadata=md)])
    assert plan.interop[0] == md["interop"]
    assert _core.format_plan("pydantic_ai", [Message.user("x", metadata=md)]).interop[0] is None


def test_what_is_not_json_is_refused_as_metadata_is():
    with pytest.raises(TypeError) as kept:
        _core.interop_metadata("pydantic_ai", {"extra": {"when": {1, 2}}})
    with pytest.raises(TypeError) as given:
        Message.user("x", metadata={"interop": {"format": "pydantic_ai", "extra": {"when": {1, 2}}}})
    assert str(kept.value) == str(given.value)
    assert str(kept.value).startswith("metadata.interop.extra.when: set is not JSON")
    with pytest.raises(ValueError, match='unknown format "crewai"'):
        _core.interop_metadata("crewai", {})


def test_a_request_header_keeps_the_json_keyword_arguments():
    assert _core.request_header("anthropic", {"model": "m", "max_tokens": 5, "timeout": object()}) == {
        "format": "anthropic", "request": {"model": "m", "max_tokens": 5}}
    with pytest.raises(ValueError, match="unknown format"):
        _core.request_header("langchain", {})
    ctx = formats.to_context({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "openai_chat")
    [data] = [e.data for e in ctx.events() if e.type == "request_header"]
    assert data == {"format": "openai_chat", "request": {"model": "m"}}
