"""LangChain ↔ ctxfold (ctxfold.formats.to_langchain / from_langchain).

Realistic messages come from LangChain's own OpenAI and Anthropic integrations, parsed from SDK
response objects (no network); exports are checked by LangChain's classes, by the requests those
integrations build from them (validated against the SDKs' param types), and by pairing and
reasoning properties on hypothesis transcripts."""

from __future__ import annotations

import os
import subprocess
import sys

import anthropic
import pytest
from _transcripts import sources
from ctxfold import Context, FormatError, Message, Part, formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_openai import ChatOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.responses import Response
from pydantic import TypeAdapter

os.environ.setdefault("OPENAI_API_KEY", "sk-test-not-used")
os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-test-not-used")

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHAT = TypeAdapter(list[ChatCompletionMessageParam])
ANTHROPIC = TypeAdapter(list[anthropic.types.MessageParam])


def same(a: list[BaseMessage], b: list[BaseMessage]) -> None:
    assert a == b
    assert messages_to_dict(a) == messages_to_dict(b)  # class and every field
    assert [type(x) for x in a] == [type(x) for x in b]


# ---- realistic messages, made by LangChain's integrations --------------------------------------


def anthropic_turn() -> AIMessage:
    msg = anthropic.types.Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "The user wants weather.", "signature": "EqQBCkYIBRgCKkD+/=="},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
                {"type": "text", "text": "I'll check both cities."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Zürich"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 5},
        }
    )
    gen = ChatAnthropic(model="claude-sonnet-4-5")._format_output(msg)
    m = gen.generations[0].message
    assert isinstance(m, AIMessage)
    return m


def openai_chat_turn() -> AIMessage:
    cc = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [
                            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
                            {"id": "call_2", "type": "function", "function": {"name": "add", "arguments": '{"a": 1,'}},
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }
    )
    m = ChatOpenAI(model="gpt-4o")._create_chat_result(cc).generations[0].message
    assert isinstance(m, AIMessage) and m.invalid_tool_calls
    return m


def openai_responses_turn(output_version: str) -> AIMessage:
    from langchain_openai.chat_models.base import _construct_lc_result_from_responses_api

    resp = Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-5",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "thinking it over"}],
                    "encrypted_content": "gAAAAB-opaque",
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "hello", "annotations": []}],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_9",
                    "name": "add",
                    "arguments": '{"a":1,"b":2}',
                    "status": "completed",
                },
            ],
            "usage": {
                "input_tokens": 3,
                "output_tokens": 4,
                "total_tokens": 7,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 2},
            },
        }
    )
    m = _construct_lc_result_from_responses_api(resp, output_version=output_version).generations[0].message
    assert isinstance(m, AIMessage)
    return m


def realistic() -> list[BaseMessage]:
    ant = anthropic_turn()
    chat = openai_chat_turn()
    return [
        SystemMessage("You are terse.", id="sys-1"),
        SystemMessage("Prefer metric units.", additional_kwargs={"__openai_role__": "developer"}),
        HumanMessage(
            content=[
                "What's the weather in",
                {"type": "text", "text": " Paris and Zürich?", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
                {"type": "image", "url": "https://example.com/map.png", "extras": {"detail": "high"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "image", "source_type": "url", "url": "https://example.com/v0.png"},
                {"type": "file", "file_id": "file-abc", "mime_type": "application/pdf"},
            ],
            id="h-1",
            name="alice",
        ),
        ant,
        ToolMessage("18°C, cloudy", tool_call_id="toolu_01A", name="get_weather", artifact={"raw": {"t": 18}}),
        ToolMessage(
            content=[{"type": "text", "text": "radar:"}, {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}],
            tool_call_id="toolu_01B",
            status="error",
            id="t-2",
        ),
        HumanMessage("and add 1 and 2"),
        chat,
        ToolMessage("3", tool_call_id="call_1"),
        ToolMessage("bad arguments", tool_call_id="call_2", status="error"),
        HumanMessage("once more with reasoning"),
        openai_responses_turn("responses/v1"),
        ToolMessage("3", tool_call_id="call_9"),
        openai_responses_turn("v1"),
        ToolMessage("3", tool_call_id="call_9", id="again"),
        AIMessage(content="", tool_calls=[{"name": "noop", "args": {}, "id": "c-empty"}], id=None),
        ToolMessage("", tool_call_id="c-empty"),
        ChatMessage(content="a critic's note", role="user"),
        FunctionMessage(content="legacy result", name="old_fn"),
        AIMessage(
            content=[
                {"type": "non_standard", "value": {"x": 1}},
                {"type": "text-plain", "text": "t", "mime_type": "text/plain"},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
            ]
        ),
        HumanMessage(""),
    ]


def test_realistic_round_trip():
    lc = realistic()
    ctx_msgs = formats.from_langchain(lc)
    assert len(ctx_msgs) == len(lc)
    same(formats.to_langchain(ctx_msgs), lc)
    # through a Context and its own save format too
    ctx = Context(messages=ctx_msgs)
    same(formats.to_langchain(ctx), lc)
    same(formats.to_langchain(Context.deserialize(ctx.serialize())), lc)


def test_import_mapping():
    lc = realistic()
    m = formats.from_langchain(lc)
    assert [x.role for x in m[:4]] == ["system", "developer", "user", "assistant"]
    ant = m[3]
    thinking = [p for p in ant.parts if p.type == "thinking"]
    assert [p.provider for p in thinking] == ["langchain", "langchain"]
    assert thinking[0].text == "The user wants weather." and thinking[0].signature == "EqQBCkYIBRgCKkD+/=="
    assert thinking[1].redacted is True and thinking[1].data.startswith("EmwK")
    assert ant.tool_calls == [
        {"id": "toolu_01A", "name": "get_weather", "arguments": {"city": "Paris"}},
        {"id": "toolu_01B", "name": "get_weather", "arguments": {"city": "Zürich"}},
    ]
    assert ant.text == "I'll check both cities."  # reasoning is never text
    img = m[2].parts[2]
    assert img.type == "image" and img.source == {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    assert m[2].parts[0].text == "What's the weather in"
    chat = m[7]
    assert chat.tool_calls[0]["arguments"] == {"a": 1, "b": 2}
    assert chat.tool_calls[1]["arguments"] == '{"a": 1,' and chat.tool_calls[1]["invalid"] is True
    tool = m[4]
    assert tool.tool_call_id == "toolu_01A" and tool.metadata["interop"]["artifact"] == {"raw": {"t": 18}}
    assert m[5].metadata["interop"]["extra"]["status"] == "error"
    assert ant.metadata["interop"]["extra"]["usage_metadata"]["input_token_details"]["cache_read"] == 3


def test_exact_argument_strings_round_trip():
    # A model's exact bytes: kept where LangChain's OpenAI integration keeps raw calls.
    raw = '{"city":  "Zürich",\n "units":"metric"}'
    m = Message.assistant(
        None,
        tool_calls=[
            {"id": "call_1", "name": "w", "arguments": raw},
            {"id": "call_2", "name": "w", "arguments": "not json"},
            {"id": "call_3", "name": "w", "arguments": {"k": "é"}},
        ],
    )
    ans = [Message.tool("call_1", "a"), Message.tool("call_2", "b"), Message.tool("call_3", "c")]
    ai = formats.to_langchain([m, *ans])[0]
    assert isinstance(ai, AIMessage)
    assert ai.tool_calls[0]["args"] == {"city": "Zürich", "units": "metric"}
    assert ai.additional_kwargs["tool_calls"][0]["function"]["arguments"] == raw
    assert ai.invalid_tool_calls[0]["args"] == "not json"
    back = formats.from_langchain([ai])[0]
    assert [c["arguments"] for c in back.tool_calls] == [raw, {"k": "é"}, "not json"]


def test_pairing_repairs_and_strict():
    msgs = [
        Message.user("hi"),
        Message.assistant(
            "", tool_calls=[{"id": "a", "name": "f", "arguments": "{}"}, {"id": "b", "name": "g", "arguments": "{}"}]
        ),
        Message.user("interlude"),
        Message.tool("b", "late answer"),
        Message.tool("zzz", "orphan"),
    ]
    out = formats.to_langchain(msgs)
    assert [type(x).__name__ for x in out] == ["HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "HumanMessage"]
    assert [x.tool_call_id for x in out[2:4]] == ["b", "a"]
    assert out[3].content == "Tool call was interrupted and not executed. Please retry if needed." and out[3].name == "f"
    with pytest.raises(FormatError) as e:
        formats.to_langchain(msgs, strict=True)
    s = str(e.value)
    assert "3 repairs" in s and '"a"' in s and "moved" in s and '"zzz"' in s
    # the repairs are the core's: word for word what the JSON exporters report
    with pytest.raises(FormatError) as chat:
        formats.to_openai_chat(msgs, strict=True)
    assert str(chat.value) == s
    assert formats.to_langchain(msgs[:2] + [Message.tool("a", "x"), Message.tool("b", "y")], strict=True)


def test_tool_results_in_user_messages_become_tool_messages():
    msgs = [
        Message.assistant([Part.tool_use("t1", "shot", {"q": 1})]),
        Message.user(
            [
                Part.tool_result(
                    "t1",
                    [Part.text("here").to_dict(), Part.image({"type": "url", "url": "https://x/y.png"}).to_dict()],
                    is_error=True,
                ),
                Part.text("thanks"),
            ]
        ),
    ]
    out = formats.to_langchain(msgs)
    assert isinstance(out[0], AIMessage) and out[0].tool_calls[0]["id"] == "t1" and out[0].content == []
    assert isinstance(out[1], ToolMessage) and out[1].status == "error"
    assert out[1].content == [{"type": "text", "text": "here"}, {"type": "image", "url": "https://x/y.png"}]
    assert isinstance(out[2], HumanMessage) and out[2].content == [{"type": "text", "text": "thanks"}]


def test_reasoning_only_back_to_langchain():
    msgs = [
        Message.user("q"),
        Message.assistant([Part.thinking("ANTHROPIC-SECRET", signature="s", provider="anthropic")]),
        Message.assistant([Part.thinking("NOBODY-SECRET"), Part.text("answer")]),
    ]
    out = formats.to_langchain(msgs)
    assert len(out) == 2  # the message with only another maker's reasoning has nothing to send
    assert "SECRET" not in repr(out)
    # LangChain's own reasoning goes back, even in a message rebuilt outside LangChain
    own = formats.from_langchain([AIMessage(content=[{"type": "thinking", "thinking": "MINE", "signature": "s"}])])[0]
    rebuilt = Message.assistant(own.content)
    assert formats.to_langchain([rebuilt])[0].content == [{"type": "thinking", "thinking": "MINE", "signature": "s"}]


def test_developer_and_tools_and_overlay():
    from ctxfold import ToolDefinitionsMessage

    ctx = Context.create(tool_definitions_message=ToolDefinitionsMessage.create())
    ctx.materialize({"tool_list": '[{"name": "f", "description": "d", "parameters": {}}]'})
    ctx.add_messages([Message.system("sys"), Message("developer", "dev"), Message.user("hi")])
    ctx.put_system_prompt_overlay("extra")
    out = formats.to_langchain(ctx)
    shown = [m for m in ctx.messages if m.role != "tool"]
    assert [m.content for m in out] == [m.content for m in shown]  # the overlay as the Context shows it
    assert "extra" in repr(out)
    assert [type(m).__name__ for m in out][-3:] == ["SystemMessage", "SystemMessage", "HumanMessage"]
    assert out[-2].additional_kwargs == {"__openai_role__": "developer"}
    assert [m.id for m in out] == [m.id for m in shown]


# ---- malformed input ---------------------------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"role": "user", "content": "x"}, "messages[1]: expected a LangChain BaseMessage, got dict"),
        (RemoveMessage(id="x"), "messages[1]: unsupported message class RemoveMessage"),
        (
            AIMessage.model_construct(
                content="",
                tool_calls=[{"name": "f", "args": {}, "id": None, "type": "tool_call"}],
                invalid_tool_calls=[],
                additional_kwargs={},
                response_metadata={},
                type="ai",
            ),
            "messages[1].tool_calls[0]: a tool call needs a string id",
        ),
        (
            HumanMessage.model_construct(content=[7], additional_kwargs={}, response_metadata={}, type="human"),
            "messages[1].content[0]: expected a str or a dict, got int",
        ),
        (ChatMessage(content="x", role="critic"), "messages[1].role: ChatMessage role 'critic'"),
        (AIMessage(content="x", additional_kwargs={"parsed": Opaque()}),
         "messages[1].metadata.interop.extra.additional_kwargs.parsed: Opaque is not JSON"),
    ],
)
def test_malformed_input_names_the_place(bad, where):
    with pytest.raises(FormatError) as e:
        formats.from_langchain([HumanMessage("ok"), bad])
    assert str(e.value).startswith(where)


def test_non_json_artifact_is_dropped_with_a_warning(caplog):
    m = formats.from_langchain([ToolMessage("r", tool_call_id="c", artifact=Opaque())])[0]
    assert "artifact" not in m.metadata["interop"]
    assert "artifact" in caplog.text


def test_without_the_extra_the_error_names_it():
    code = (
        "import sys; sys.modules['langchain_core'] = None; sys.modules['langchain_core.messages'] = None\n"
        "from ctxfold import formats\n"
        "try:\n    formats.to_langchain([])\nexcept ImportError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'ctxfold[langchain]'" in r.stdout


# ---- hypothesis: exports LangChain and its integrations accept ---------------------------------


def check_pairing(out: list[BaseMessage]) -> None:
    """Every ToolMessage answers a call of the AIMessages right before the run of answers it is
    in, and every call is answered there."""
    i = 0
    while i < len(out):
        m = out[i]
        if isinstance(m, AIMessage):
            j = i
            calls: list[str] = []
            while j < len(out) and isinstance(out[j], AIMessage):
                calls += [c["id"] for c in out[j].tool_calls] + [c["id"] for c in out[j].invalid_tool_calls]
                j += 1
            k = j
            answered = []
            while k < len(out) and isinstance(out[k], ToolMessage):
                answered.append(out[k].tool_call_id)
                k += 1
            assert sorted(answered) == sorted(calls)
            i = k
            continue
        assert not isinstance(m, ToolMessage), f"orphan ToolMessage at {i}"
        i += 1


@SETTINGS
@given(sources())
def test_every_export_is_accepted(src_secrets):
    src, secrets = src_secrets
    out = formats.to_langchain(src)
    for m in out:  # LangChain's classes validate themselves: rebuilt from their fields, equal
        assert type(m).model_validate(m.model_dump()) == m
    check_pairing(out)
    text = repr(out)
    for s, prov in secrets:
        if prov != "langchain":
            assert s not in text
    for m in out:
        for b in m.content if isinstance(m.content, list) else []:
            if isinstance(b, dict) and b.get("type") == "text":
                assert "SECRET" not in b["text"]  # never reasoning as text
    # The requests LangChain's own integrations build from it, against the SDKs' types.
    payload = ChatOpenAI(model="gpt-4o")._get_request_payload(out)
    CHAT.validate_python(payload["messages"])
    # ChatAnthropic refuses a system message after the first other one (ctxfold keeps roles as
    # they are: a compaction summary may be one); docs/formats-frameworks.md says so.
    lead = next((k for k, m in enumerate(out) if not isinstance(m, SystemMessage)), len(out))
    if not any(isinstance(m, SystemMessage) for m in out[lead:]):
        ant = ChatAnthropic(model="claude-sonnet-4-5")._get_request_payload(out)
        ANTHROPIC.validate_python(ant["messages"])


# ---- hypothesis: generated LangChain messages round-trip ---------------------------------------

block_text = st.text(max_size=12)
blocks = st.one_of(
    block_text,
    st.builds(lambda t: {"type": "text", "text": t}, block_text),
    st.builds(lambda t, i: {"type": "text", "text": t, "id": i, "annotations": []}, block_text, block_text),
    st.builds(lambda t: {"type": "reasoning", "reasoning": t, "extras": {"signature": "s"}}, block_text),
    st.builds(lambda t, s: {"signature": s, "thinking": t, "type": "thinking"}, block_text, block_text),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, block_text),
    st.builds(lambda d: {"type": "image", "base64": d, "mime_type": "image/png"}, block_text),
    st.builds(lambda u: {"type": "image", "url": u, "id": "img"}, block_text),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": u}}, block_text),
    st.builds(lambda v: {"type": "non_standard", "value": {"v": v}}, block_text),
    st.builds(lambda u: {"type": "image", "source_type": "url", "url": u}, block_text),
    st.just({"type": "text"}),
    st.just({"no": "type"}),
)
contents = st.one_of(block_text, st.lists(blocks, max_size=4))
lc_ids = st.one_of(st.none(), st.text(min_size=1, max_size=10))
args = st.dictionaries(
    st.text(max_size=5), st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=5), st.none()), max_size=3
)


@st.composite
def lc_conversations(draw):
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage(content=draw(contents), id=draw(lc_ids)))
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        out.append(HumanMessage(content=draw(contents), id=draw(lc_ids), name=draw(st.one_of(st.none(), st.just("bob")))))
        calls = [{"name": f"t{k}", "args": draw(args), "id": f"c{(n := n + 1)}"} for k in range(draw(st.integers(0, 3)))]
        out.append(
            AIMessage(
                content=draw(contents),
                tool_calls=calls,
                id=draw(lc_ids),
                response_metadata=draw(st.sampled_from([{}, {"model_provider": "anthropic"}])),
                usage_metadata=draw(st.sampled_from([None, {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}])),
            )
        )
        for c in calls:
            out.append(
                ToolMessage(
                    content=draw(contents),
                    tool_call_id=c["id"],
                    status=draw(st.sampled_from(["success", "error"])),
                    artifact=draw(st.one_of(st.none(), args)),
                    id=draw(lc_ids),
                )
            )
    return out


@SETTINGS
@given(lc_conversations())
def test_generated_langchain_round_trip(lc):
    same(formats.to_langchain(formats.from_langchain(lc), strict=True), lc)
