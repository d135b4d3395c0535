"""Pydantic AI ↔ ctxfold (ctxfold.formats.to_pydantic_ai / from_pydantic_ai), against real
``Agent`` runs (``TestModel`` and ``FunctionModel``: no network): what a run produces round-trips
exactly, and a transcript exported from ctxfold is accepted as ``message_history``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from _transcripts import sources
from ctxfold import Context, FormatError, Message, Part, formats
from hypothesis import HealthCheck, given, settings
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PNG = b"\x89PNG\r\n\x1a\n"

# The outcome of a retried tool call: "retried" where pydantic-ai has it (2.55+, Python 3.11+).
_RETRIED = "retried" if "retried" in str(ToolReturnPart.__dataclass_fields__["outcome"].type) else "failed"


def dump(msgs: list[ModelMessage]) -> list[dict]:
    return ModelMessagesTypeAdapter.dump_python(msgs, mode="json")


def round_trips(msgs: list[ModelMessage]) -> list[Message]:
    ctx_msgs = formats.from_pydantic_ai(msgs)
    back = formats.to_pydantic_ai(ctx_msgs)
    assert back == msgs
    assert dump(back) == dump(msgs)
    # and through a saved Context
    ctx = Context(messages=ctx_msgs)
    again = formats.to_pydantic_ai(Context.deserialize(ctx.serialize()))
    assert again == msgs
    return ctx_msgs


# ---- what real runs produce --------------------------------------------------------------------


def tool_agent() -> Agent:
    agent = Agent(TestModel(), system_prompt="Be brief.", instructions="Answer in English.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    @agent.tool_plain
    def lookup(key: str) -> dict:
        return {"key": key, "values": [1, 2.5, None, "é"]}

    return agent


def test_test_model_run_round_trips_and_feeds_a_second_run():
    agent = tool_agent()
    r = agent.run_sync("What's the weather?")
    msgs = r.all_messages()
    assert any(isinstance(p, ToolCallPart) for m in msgs for p in m.parts)
    ctx_msgs = round_trips(msgs)
    roles = [m.role for m in ctx_msgs]
    assert roles[:3] == ["system", "user", "assistant"] and "tool" in roles
    calls = [p for m in ctx_msgs for p in m.parts if p.type == "tool_use"]
    assert {c.name for c in calls} == {"get_weather", "add", "lookup"}
    # ctxfold's transcript back as message_history: the run accepts it and goes on from it
    ctx = Context(messages=ctx_msgs)
    r2 = agent.run_sync("And tomorrow?", message_history=formats.to_pydantic_ai(ctx))
    assert r2.all_messages()[: len(msgs)] == msgs
    round_trips(r2.all_messages())


def thinking_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Anthropic-like: signed thinking, string args with odd spacing, parallel calls, a retry."""
    n = sum(isinstance(m, ModelResponse) for m in messages)
    if n == 0:
        return ModelResponse(
            parts=[
                ThinkingPart(content="Let me think.", signature="EqQBCkYIBRgCKkD+/==", provider_name="anthropic", id="th_1"),
                TextPart(content="Checking.", id="txt_1", provider_name="anthropic"),
                ToolCallPart("add", args='{"a": 1,  "b":2}', tool_call_id="toolu_01"),
                ToolCallPart("shot", args={"q": "Zürich"}, tool_call_id="toolu_02"),
                ToolCallPart("flaky", args="{}", tool_call_id="toolu_03"),
            ],
            model_name="claude-fake",
            provider_name="anthropic",
            provider_response_id="msg_01",
            finish_reason="tool_call",
            provider_details={"stop_reason": "tool_use"},
        )
    if n == 1:
        return ModelResponse(
            parts=[
                ThinkingPart(content="", signature="sig-empty-display", provider_name="anthropic"),
                ToolCallPart("flaky", args="{}", tool_call_id="toolu_04"),
            ],
            model_name="claude-fake",
        )
    return ModelResponse(parts=[TextPart("All done.")], model_name="claude-fake")


def test_function_model_run_with_thinking_retries_and_images():
    agent = Agent(FunctionModel(thinking_model))
    tries = {"n": 0}

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    @agent.tool_plain
    def shot(q: str) -> ToolReturn:
        return ToolReturn(return_value=f"photo of {q}", content=[BinaryContent(PNG, media_type="image/png")])

    @agent.tool_plain
    def flaky() -> str:
        tries["n"] += 1
        if tries["n"] == 1:
            raise ModelRetry("try again")
        return "ok"

    r = agent.run_sync(["Look at this:", ImageUrl("https://example.com/a.png"), BinaryContent(PNG, media_type="image/png")])
    msgs = r.all_messages()
    kinds = {type(p).__name__ for m in msgs for p in m.parts}
    assert {"ThinkingPart", "ToolReturnPart", "UserPromptPart"} <= kinds
    # A tool retry: `ToolReturnPart(outcome="retried")` from pydantic-ai 2.55 on (Python 3.11+),
    # a `RetryPromptPart` before (what Python 3.10 installs).
    assert any(getattr(p, "outcome", None) == "retried" or type(p).__name__ == "RetryPromptPart"
               for m in msgs for p in m.parts)
    ctx_msgs = round_trips(msgs)
    assistant = [m for m in ctx_msgs if m.role == "assistant"][0]
    th = assistant.parts[0]
    assert th.type == "thinking" and th.provider == "pydantic_ai" and th.signature == "EqQBCkYIBRgCKkD+/=="
    assert th.provider_name == "anthropic"
    assert assistant.parts[2].arguments == '{"a": 1,  "b":2}'  # byte-exact
    assert assistant.text == "Checking."  # reasoning is never text
    user = [m for m in ctx_msgs if m.role == "user"][0]
    assert [p.type for p in user.parts] == ["text", "image", "image"]
    assert user.parts[2].source["data"] == "iVBORw0KGgo="
    r2 = agent.run_sync("again", message_history=formats.to_pydantic_ai(ctx_msgs))
    assert r2.all_messages()[: len(msgs)] == msgs


def test_output_retry_round_trips():
    calls = {"n": 0}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls["n"] += 1
        return ModelResponse(parts=[TextPart("bad" if calls["n"] == 1 else "good")])

    agent = Agent(FunctionModel(model))

    @agent.output_validator
    def check(out: str) -> str:
        if out == "bad":
            raise ModelRetry("not that")
        return out

    msgs = agent.run_sync("go").all_messages()
    assert any(type(p).__name__ in ("RetryFeedbackPart", "RetryPromptPart") for m in msgs for p in m.parts)
    ctx_msgs = round_trips(msgs)
    assert [m.role for m in ctx_msgs] == ["user", "assistant", "user", "assistant"]


def test_hand_written_messages_round_trip():
    msgs = [
        ModelRequest(parts=[SystemPromptPart("sys"), UserPromptPart("hi")], instructions="be kind", run_id="r1"),
        ModelResponse(
            parts=[ToolCallPart("f", args=None, tool_call_id="c1"), ToolCallPart("g", args={}, tool_call_id="c2")],
            model_name="m",
            provider_name="openai",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("f", {"nested": [1, {"a": None}]}, tool_call_id="c1", metadata={"k": "v"}),
                ToolReturnPart("g", "bad args", tool_call_id="c2", outcome=_RETRIED),
            ]
        ),
        ModelResponse(parts=[TextPart("")]),
        ModelRequest(parts=[]),
    ]
    round_trips(msgs)


def test_legacy_retry_prompt_parts_round_trip():
    # Histories saved by older Pydantic AI have RetryPromptPart (deprecated in 2.x).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msgs = [
            ModelRequest(parts=[UserPromptPart("hi")]),
            ModelResponse(parts=[ToolCallPart("g", args={"x": 1}, tool_call_id="c2")]),
            ModelRequest(
                parts=[
                    RetryPromptPart(
                        [{"type": "missing", "loc": ("x",), "msg": "Field required", "input": {}}],
                        tool_name="g",
                        tool_call_id="c2",
                    )
                ]
            ),
            ModelResponse(parts=[TextPart("oops")]),
            ModelRequest(parts=[RetryPromptPart("not that", tool_call_id="out-1")]),
        ]
        ctx_msgs = round_trips(msgs)
    assert [m.role for m in ctx_msgs] == ["user", "assistant", "tool", "assistant", "user"]


def test_foreign_transcript_goes_to_an_agent():
    # A transcript from elsewhere: reasoning from another maker is dropped, calls keep their
    # exact arguments, a dangling call gets the interrupted result, an orphan is left out.
    msgs = [
        Message.system("sys"),
        Message.user([Part.text("see"), Part.image({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})]),
        Message.assistant(
            [Part.thinking("FOREIGN", signature="s", provider="anthropic"), Part.text("calling")],
            tool_calls=[{"id": "a", "name": "f", "arguments": '{"x":  1}'}, {"id": "b", "name": "g", "arguments": {}}],
        ),
        Message.tool("a", "done"),
        Message.tool("zzz", "orphan"),
    ]
    out = formats.to_pydantic_ai(msgs)
    assert "FOREIGN" not in repr(out)
    resp = out[1]
    assert isinstance(resp, ModelResponse) and [p.args for p in resp.parts if isinstance(p, ToolCallPart)] == ['{"x":  1}', {}]
    returns = [p for p in out[2].parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in returns] == [("a", "success"), ("b", "interrupted")]
    assert "orphan" not in repr(out)
    with pytest.raises(FormatError) as e:
        formats.to_pydantic_ai(msgs, strict=True)
    assert "2 repairs" in str(e.value)
    agent = Agent(TestModel(call_tools=[]))
    r = agent.run_sync("next", message_history=out)
    assert r.output


# ---- malformed input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"kind": "request", "parts": []}, "messages[1]: expected a ModelRequest or a ModelResponse, got dict"),
        (ModelResponse(parts=[ToolCallPart("f", args=object(), tool_call_id="c")]), "messages[1].parts[0].args"),
        (ModelRequest(parts=[SystemPromptPart(content=3)]), "messages[1].parts[0].content: expected a str"),  # type: ignore[arg-type]
        (
            ModelRequest(parts=[ToolReturnPart("f", object(), tool_call_id="c")]),
            "messages[1].parts[0].content: not JSON-serializable",
        ),
    ],
)
def test_malformed_input_names_the_place(bad, where):
    with pytest.raises(FormatError) as e:
        formats.from_pydantic_ai([ModelRequest(parts=[UserPromptPart("ok")]), bad])
    assert str(e.value).startswith(where)


def test_without_the_extra_the_error_names_it():
    code = (
        "import sys; sys.modules['pydantic_ai'] = None; sys.modules['pydantic_ai.messages'] = None\n"
        "from ctxfold import formats\n"
        "try:\n    formats.to_pydantic_ai([])\nexcept ImportError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'ctxfold[pydantic-ai]'" in r.stdout


# ---- hypothesis: exports Pydantic AI accepts ---------------------------------------------------


def check_pairing(out: list[ModelMessage]) -> None:
    """Every call of a response is answered in the request right after it; nothing else is."""
    pending: set[str] = set()
    for m in out:
        if isinstance(m, ModelResponse):
            pending |= {p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)}
            continue
        answered = {
            p.tool_call_id for p in m.parts if isinstance(p, (ToolReturnPart, RetryPromptPart)) and p.tool_name is not None
        }
        assert answered == pending, (answered, pending)
        pending = set()
    assert not pending


@SETTINGS
@given(sources())
def test_every_export_is_accepted(src_secrets):
    src, secrets = src_secrets
    out = formats.to_pydantic_ai(src)
    # Pydantic AI's own validation: dumped and loaded through its type adapter, unchanged
    assert dump(ModelMessagesTypeAdapter.validate_python(dump(out))) == dump(out)
    check_pairing(out)
    text = repr(out)
    for s, prov in secrets:
        if prov != "pydantic_ai":
            assert s not in text
    for m in out:
        for p in m.parts:
            if isinstance(p, TextPart):
                assert "SECRET" not in p.content
    # a real run takes it as its history
    agent = Agent(TestModel(call_tools=[]))
    agent.run_sync("next", message_history=out)
