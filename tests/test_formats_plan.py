"""The core's plan of a request (``_core.format_plan``): the one pairing every exporter builds
on — the JSON formats in the core, LangChain and Pydantic AI in Python. The frameworks' plan is
the JSON formats' plan with their ids kept; what it reports is what ``strict=True`` refuses."""

from __future__ import annotations

import re

import pytest
from _transcripts import sources
from ctxfold import Context, FormatError, Message, Part, ToolDefinitionsMessage, _core, formats
from hypothesis import HealthCheck, given, settings

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The repairs that only a target with an id grammar makes.
ID_REPAIR = re.compile(r'^call id ".*" (does not fit .*|is made more than once); sent as ".*"$')


def _shape(plan: _core.FormatPlan) -> list[object]:
    out: list[object] = []
    for step in plan.steps:
        if step[0] == "message":
            out.append(("message", step[1]))
        else:
            _, run, answers = step
            out.append(("turn", list(run), [(a.call.id, a.message, a.part) for a in answers]))
    return out


def _core_src(src):
    return src._core if isinstance(src, Context) else list(src)


@SETTINGS
@given(sources())
def test_the_frameworks_pair_as_the_json_formats_do(src_secrets):
    src, _ = src_secrets
    chat = _core.format_plan("openai_chat", _core_src(src))
    for target in ("langchain", "pydantic_ai"):
        p = _core.format_plan(target, _core_src(src))
        assert _shape(p) == _shape(chat)
        assert p.problems == [x for x in chat.problems if not ID_REPAIR.match(x)]
        assert p.ids == {}  # a framework's ids are sent as they are
        assert [m.id for m in p.messages] == [m.id for m in chat.messages]
    # every answer placed is one tool message of the Chat request, in order
    sent = [m["tool_call_id"] for m in formats.to_openai_chat(src)["messages"] if m["role"] == "tool"]
    assert sent == [a.sent for s in chat.steps if s[0] == "turn" for a in s[2]]


@SETTINGS
@given(sources())
def test_strict_refuses_with_the_plans_problems(src_secrets):
    src, _ = src_secrets
    for target in ("openai_chat", "anthropic", "langchain"):
        problems = _core.format_plan(target, _core_src(src)).problems
        if not problems:
            _core.format_plan(target, _core_src(src), True)
            continue
        with pytest.raises(FormatError) as e:
            _core.format_plan(target, _core_src(src), True)
        assert str(e.value).endswith(": " + "; ".join(problems))


def test_the_plan_of_a_request():
    tools = ToolDefinitionsMessage.create()
    msgs = [
        Message.system("s"),
        tools,
        Message.user("hi"),
        Message.assistant(
            [Part.text("t"), Part.tool_use("call a", "f", {"x": 1})],
            tool_calls=[{"id": "b", "name": "g", "arguments": "{}"}, {"id": "call a", "name": "f", "arguments": {"x": 1}}],
        ),
        Message.user([Part.tool_result("b", "rb"), Part.text("more")]),
        Message.tool("zzz", "orphan"),
    ]
    p = _core.format_plan("anthropic", msgs)
    assert [m.id for m in p.messages] == [m.id for m in msgs if m is not tools]
    # the calls are the core's: the tool_use part, then the entry no part makes
    calls = p.calls[2]
    assert [(c.id, c.name, c.entry, c.part) for c in calls] == [("call a", "f", 1, 1), ("b", "g", 0, None)]
    assert calls[0].arguments == {"x": 1} and calls[1].arguments == "{}"
    mapped = p.ids["call a"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]+", mapped) and calls[0].sent == mapped and calls[1].sent == "b"
    assert [s[0] for s in p.steps] == ["message", "message", "turn", "message"]
    _, run, answers = p.steps[2]
    assert list(run) == [2]
    # the answer given, from the user message's part; then the interrupted result
    assert [(a.call.id, a.message, a.part, a.sent) for a in answers] == [("b", 3, 0, "b"), ("call a", None, None, mapped)]
    # the user message that held an answer is sent after the answers, without it
    assert p.steps[3] == ("message", 3)
    assert p.interop == [None] * 5
    assert len(p.problems) == 3 and any("zzz" in x for x in p.problems)
    assert _core.INTERRUPTED == "Tool call was interrupted and not executed. Please retry if needed."


def test_an_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown format"):
        _core.format_plan("gemini", [])


def test_interop_is_what_the_targets_importer_kept():
    [m] = formats.from_openai_chat([{"role": "user", "content": "hi", "x_extra": 1}])
    assert _core.format_plan("openai_chat", [m]).interop[0]["format"] == "openai_chat"
    assert _core.format_plan("anthropic", [m]).interop == [None]
