"""A message's strings are made into Python strings on its first request and shared by every
later one (docs/formats.md, "Speed"); the dicts and lists of a request are new every time."""

from __future__ import annotations

from _transcripts import sources
from ctxfold import Context, Message, Part, formats
from hypothesis import HealthCheck, given, settings

EXPORTERS = (formats.to_openai_chat, formats.to_anthropic, formats.to_openai_responses)


def _agent_turns() -> Context:
    ctx = Context()
    ctx.add_messages([
        Message.user("find the failing test"),
        Message.assistant(
            [Part.text("searching")],
            tool_calls=[
                {"id": "call_1", "name": "search", "arguments": {"q": "flaky"}},
                {"id": "x" * 70, "name": "grep", "arguments": '{"pattern": "é"}'},
            ],
        ),
        Message.tool("call_1", "test_cache.py::test_key"),
        Message.assistant("found it"),
    ])
    return ctx


def _strings(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _strings(x, out)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out)
    return out


def _containers(v, out):
    if isinstance(v, (dict, list)):
        out.append(v)
        for x in v.values() if isinstance(v, dict) else v:
            _containers(x, out)
    return out


def test_the_messages_strings_are_shared_between_requests():
    ctx = _agent_turns()
    for export in EXPORTERS:
        a, b = export(ctx), export(ctx)
        assert a == b
        sa, sb = _strings(a, []), _strings(b, [])
        # Every text, id and argument string of a message is the same object both times.
        for text in ("find the failing test", "searching", "call_1", '{"q":"flaky"}', "test_cache.py::test_key"):
            if text in sa:
                i = sa.index(text)
                assert sa[i] is sb[i], (export.__name__, text)


def test_every_request_has_containers_of_its_own():
    ctx = _agent_turns()
    for export in EXPORTERS:
        first = export(ctx)
        before = export(ctx)
        ids = {id(c) for c in _containers(first, [])}
        assert not ids & {id(c) for c in _containers(before, [])}
        for c in _containers(first, []):
            if isinstance(c, dict):
                c["changed"] = True
            else:
                c.append("changed")
        assert export(ctx) == before


def test_strings_not_the_messages_own_are_right():
    """A remapped id, the interrupted result and a dangling call's answer are made fresh:
    never taken for one of a message's strings."""
    ctx = _agent_turns()
    chat = formats.to_openai_chat(ctx)["messages"]
    calls = chat[1]["tool_calls"]
    assert calls[0]["id"] == "call_1" and len(calls[1]["id"]) <= 40
    answers = {m["tool_call_id"]: m["content"] for m in chat if m["role"] == "tool"}
    assert answers["call_1"] == "test_cache.py::test_key"
    assert answers[calls[1]["id"]].startswith("Tool call was interrupted")
    assert formats.to_openai_chat(ctx)["messages"] == chat


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_a_warm_request_equals_a_cold_one(src_secrets):
    """The second export (strings shared from the first) equals the export of copies of the
    messages that were never exported."""
    src, _ = src_secrets
    messages = list(src.messages) if isinstance(src, Context) else list(src)
    for export in EXPORTERS:
        export(messages)
        warm = export(messages)
        cold = export([Message.from_dict(m.to_dict()) for m in messages])
        assert warm == cold
