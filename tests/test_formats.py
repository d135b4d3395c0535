"""Provider formats: exports valid against the SDKs' types, the APIs' rules kept,
round trips byte-exact, answers appended, malformed input refused with its place."""

from __future__ import annotations

import copy
import json

import pytest
from _sdk import check_anthropic, check_chat, check_responses
from anthropic.types import Message as AnthropicMessage
from ctxfold import Context, FormatError, Message, Part, SystemPromptMessage, ToolDefinitionsMessage, formats
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

# ---- realistic requests, written from each API's documentation ---------------------------

CHAT = [
    {"role": "developer", "content": "You are a careful assistant."},
    {"role": "system", "content": [{"type": "text", "text": "Answer in English."}], "name": "policy"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this image, and what's the weather in Paris and Tokyo?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_def", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Tōkyō" }'}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_abc", "content": "18°C, cloudy"},
    {"role": "tool", "tool_call_id": "call_def", "content": [{"type": "text", "text": "22°C"}]},
    {"role": "assistant", "content": "A cat. Paris is 18°C, Tokyo 22°C.", "refusal": None, "annotations": []},
    {
        "role": "user",
        "content": [
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "file", "file": {"file_id": "file-123", "filename": "r.pdf"}},
        ],
        "name": "bob",
    },
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]},
    {"role": "user", "content": "ok", "x-unknown": {"kept": [1, 2]}},
    {"role": "assistant", "tool_calls": [{"id": "call_x", "type": "custom", "custom": {"name": "run_sql", "input": "SELECT 1"}}]},
    {"tool_call_id": "call_x", "role": "tool", "content": "1"},
]

RESPONSES = [
    {"role": "developer", "content": "Be brief."},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Weather in Paris? Also read this."},
            {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "auto"},
            {"type": "input_file", "file_id": "file-9", "filename": "notes.pdf"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
        "encrypted_content": "gAAAAB-opaque==",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
        "status": "completed",
    },
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_time", "arguments": "{}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
    {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [
            {"type": "input_text", "text": "12:00"},
            {"type": "input_image", "image_url": "https://example.com/clock.png", "detail": "low"},
        ],
    },
    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAAB-second=="},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "phase": "final_answer",
        "content": [{"type": "output_text", "text": "18°C and noon.", "annotations": [], "logprobs": []}],
    },
    {"content": "thanks", "role": "user"},
    {"role": "assistant", "content": "You're welcome."},
    {"type": "item_reference", "id": "msg_0"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque-compaction"},
]

ANTHROPIC_SYSTEM = [{"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}]
ANTHROPIC = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Weather in Paris and London?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {
                "type": "document",
                "source": {"type": "url", "url": "https://example.com/a.pdf"},
                "title": "A",
                "cache_control": {"type": "ephemeral"},
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Two cities: two calls.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            },
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
            {
                "type": "tool_use",
                "id": "toolu_01B",
                "name": "get_weather",
                "input": {"city": "London"},
                "cache_control": {"type": "ephemeral"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01B",
                "content": [
                    {"type": "text", "text": "12C"},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/london.png"}},
                ],
            },
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "15C", "is_error": False},
            {"type": "text", "text": "Also: which is warmer?"},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "signature": "EqQBsignature-only"},
            {"type": "text", "text": "Paris.", "citations": None},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        ],
    },
    {"role": "user", "content": "Thanks!"},
    {"role": "assistant", "content": "Any time."},
    {"role": "user", "content": "bye", "x-extra": 1},
]


def test_chat_round_trip_is_byte_exact():
    ms = formats.from_openai_chat(copy.deepcopy(CHAT))
    out = formats.to_openai_chat(ms)
    assert json.dumps(out["messages"]) == json.dumps(CHAT)
    assert "tools" not in out
    check_chat(out)


def test_responses_round_trip_is_byte_exact_one_message_per_item():
    ms = formats.from_openai_responses(copy.deepcopy(RESPONSES))
    assert len(ms) == len(RESPONSES)
    out = formats.to_openai_responses(ms)
    assert json.dumps(out["input"]) == json.dumps(RESPONSES)
    for i, it in enumerate(RESPONSES):
        # Each item alone, as the Agents SDK session stores them.
        if it.get("type") != "function_call_output":  # alone, an output has no call: left out
            assert formats.to_openai_responses([ms[i]])["input"][0] == it


def test_responses_reasoning_is_marked_and_exact():
    ms = formats.from_openai_responses(RESPONSES)
    r = ms[2].parts[0]
    assert r.type == "thinking" and r.provider == "openai_responses"
    assert r.encrypted_content == "gAAAAB-opaque==" and r.text == "Need the weather tool."
    assert ms[3].tool_calls == [{"id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}]


def test_anthropic_round_trip_is_byte_exact():
    ms = formats.from_anthropic(copy.deepcopy(ANTHROPIC), system=copy.deepcopy(ANTHROPIC_SYSTEM))
    assert ms[0].role == "system"
    out = formats.to_anthropic(ms)
    assert json.dumps(out) == json.dumps({"system": ANTHROPIC_SYSTEM, "messages": ANTHROPIC})
    check_anthropic(out)
    assert formats.to_anthropic(formats.from_anthropic(ANTHROPIC, system="Be brief."))["system"] == "Be brief."


def test_anthropic_thinking_is_marked_and_tool_calls_are_entries():
    ms = formats.from_anthropic(ANTHROPIC)
    a = ms[1]
    assert [p.type for p in a.parts] == ["thinking", "thinking", "text"]
    assert all(p.provider == "anthropic" for p in a.parts[:2])
    assert a.parts[1].redacted is True
    assert [c["id"] for c in a.tool_calls] == ["toolu_01A", "toolu_01B"]
    assert a.tool_calls[0]["arguments"] == {"city": "Paris"}


# ---- reasoning goes only back to its maker --------------------------------------------------


def _mixed() -> list[Message]:
    return [
        Message.user("hi"),
        Message.assistant(
            [
                Part.thinking("ANTHROPIC-SECRET", signature="sig", provider="anthropic"),
                Part.thinking(
                    "RESPONSES-SECRET",
                    id="rs_9",
                    summary=[{"type": "summary_text", "text": "RESPONSES-SECRET"}],
                    provider="openai_responses",
                ),
                Part.thinking("UNMARKED-SECRET"),
                Part.text("hello"),
            ]
        ),
    ]


def test_reasoning_only_to_its_maker():
    chat = json.dumps(formats.to_openai_chat(_mixed()))
    assert "SECRET" not in chat
    ant = formats.to_anthropic(_mixed())
    assert "ANTHROPIC-SECRET" in json.dumps(ant) and "RESPONSES-SECRET" not in json.dumps(ant)
    assert "UNMARKED" not in json.dumps(ant)
    assert ant["messages"][1]["content"][0] == {"type": "thinking", "thinking": "ANTHROPIC-SECRET", "signature": "sig"}
    resp = formats.to_openai_responses(_mixed())
    text = json.dumps(resp)
    assert "ANTHROPIC" not in text and "UNMARKED" not in text
    assert resp["input"][1] == {
        "type": "reasoning",
        "id": "rs_9",
        "summary": [{"type": "summary_text", "text": "RESPONSES-SECRET"}],
    }
    check_chat(formats.to_openai_chat(_mixed()))
    check_anthropic(ant)
    check_responses(resp)


# ---- repairs ---------------------------------------------------------------------------------


def _needs_repair() -> list[Message]:
    long_id = "functions.Bash:0|" + "x" * 60
    return [
        Message.user("go"),
        Message.tool("call_orphan", "stale", name="lost"),
        Message.assistant(
            "running",
            tool_calls=[
                {"id": long_id, "name": "bash", "arguments": {"cmd": "ls"}},
                {"id": "call_dangling", "name": "grep", "arguments": '{"q":"é"}'},
            ],
        ),
        Message("tool", [Part.text("a.txt"), Part.image({"type": "url", "url": "https://x/y.png"})], tool_call_id=long_id),
        Message.user("next"),
    ]


def test_repairs_pair_and_remap():
    ms = _needs_repair()
    chat = formats.to_openai_chat(ms)
    check_chat(chat)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user", "user"]
    calls = chat["messages"][1]["tool_calls"]
    assert len(calls[0]["id"]) <= 40 and calls[0]["id"] == chat["messages"][2]["tool_call_id"]
    assert calls[1]["function"]["arguments"] == '{"q":"é"}'
    assert chat["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"cmd":"ls"}'
    assert "interrupted" in chat["messages"][3]["content"]
    assert chat["messages"][4]["content"] == [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    ant = formats.to_anthropic(ms)
    check_anthropic(ant)
    resp = formats.to_openai_responses(ms)
    check_responses(resp)
    # Deterministic: the same mapping every time, on the call and its answer.
    assert formats.to_openai_chat(ms) == chat


def test_strict_lists_every_problem():
    with pytest.raises(FormatError) as e:
        formats.to_openai_chat(_needs_repair(), strict=True)
    msg = str(e.value)
    assert "call_orphan" in msg and "call_dangling" in msg and "does not fit" in msg
    assert isinstance(e.value, ValueError)
    formats.to_openai_chat(formats.from_openai_chat(CHAT), strict=True)


def test_the_log_is_untouched_by_repairs():
    ctx = Context(messages=_needs_repair())
    before = ctx.next_seq
    formats.to_anthropic(ctx)
    assert ctx.next_seq == before and len(ctx.messages) == 5


# ---- a context as the source ----------------------------------------------------------------


def test_context_tools_overlay_and_dynamic_messages():
    ctx = Context.create(SystemPromptMessage.create("base"), ToolDefinitionsMessage.create())
    ctx.add_message(Message.user("hi"))
    tools = [
        {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}}
    ]
    ctx.materialize({"tool_list": formats.tool_list(tools)})
    ctx.put_system_prompt_overlay("overlay!")
    chat = formats.to_openai_chat(ctx)
    check_chat(chat)
    assert chat["tools"] == tools
    assert chat["messages"][0] == {"role": "system", "content": "base\n\noverlay!"}
    ant = formats.to_anthropic(ctx)
    check_anthropic(ant)
    assert ant["system"] == "base\n\noverlay!"
    assert ant["tools"] == [{"name": "f", "description": "d", "input_schema": {"type": "object", "properties": {}}}]
    resp = formats.to_openai_responses(ctx, instructions=True)
    check_responses(resp)
    assert resp["instructions"] == "base\n\noverlay!"
    assert resp["tools"][0]["name"] == "f"


def test_tool_list_reads_every_shape():
    chat = [{"type": "function", "function": {"name": "a", "description": "x", "parameters": {"type": "object"}}}]
    resp = [{"type": "function", "name": "a", "description": "x", "parameters": {"type": "object"}, "strict": None}]
    ant = [{"name": "a", "description": "x", "input_schema": {"type": "object"}}]
    want = [{"name": "a", "description": "x", "parameters": {"type": "object"}}]
    for t in (chat, ant):
        assert json.loads(formats.tool_list(t)) == want
    # Every other key a tool came with is kept (the exporters send the ones their API takes).
    assert json.loads(formats.tool_list(resp)) == [{**want[0], "strict": None}]
    with pytest.raises(FormatError, match=r"tools\[0\]: missing \"name\""):
        formats.tool_list([{"description": "x"}])


# ---- answers in -----------------------------------------------------------------------------


def test_add_response_chat_completion():
    resp = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
                    },
                }
            ],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 4},
            },
        }
    )
    ctx = Context()
    ctx.set_needs_response(False)
    ctx.add_response(resp)
    m = ctx.messages[-1]
    assert m.role == "assistant" and m.tool_calls[0]["arguments"] == '{"a": 1}'
    assert ctx.needs_response is True
    u = ctx.usage
    assert (u.requests, u.input_tokens, u.output_tokens, u.total_tokens, u.cache_read_input_tokens) == (1, 10, 5, 15, 4)
    check_chat(formats.to_openai_chat(ctx))


def test_add_response_openai_response():
    resp = Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1.0,
            "model": "o4-mini",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "f",
                    "arguments": "{}",
                    "status": "completed",
                },
            ],
            "usage": {
                "input_tokens": 7,
                "output_tokens": 3,
                "total_tokens": 10,
                "input_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 1},
            },
        }
    )
    ctx = Context()
    ctx.add_response(resp)
    assert len(ctx.messages) == 2 and ctx.messages[0].parts[0].provider == "openai_responses"
    assert ctx.needs_response is True
    assert (ctx.usage.input_tokens, ctx.usage.output_tokens, ctx.usage.cache_read_input_tokens) == (7, 3, 2)
    ctx.add_message(Message.tool("call_1", "done"))
    out = formats.to_openai_responses(ctx)
    check_responses(out)
    assert out["input"][0]["encrypted_content"] == "enc"


def test_add_response_anthropic_message():
    resp = AnthropicMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "Hi!"}],
            "usage": {"input_tokens": 20, "output_tokens": 4, "cache_read_input_tokens": 8, "cache_creation_input_tokens": 2},
        }
    )
    ctx = Context()
    ctx.add_message(Message.user("hello"))
    ctx.add_response(resp.model_dump())
    assert ctx.needs_response is False
    u = ctx.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.requests) == (
        20,
        4,
        8,
        2,
        1,
    )
    out = formats.to_anthropic(ctx)
    check_anthropic(out)
    assert out["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig"}


@pytest.mark.parametrize(
    "bad", [{}, {"choices": []}, {"object": "list"}, [1], "text", {"type": "message", "role": "user", "content": []}]
)
def test_add_response_refuses_other_shapes(bad):
    ctx = Context()
    with pytest.raises(FormatError):
        ctx.add_response(bad)
    assert ctx.messages == [] and ctx.usage.requests == 0


# ---- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "data", "where"),
    [
        (
            formats.from_openai_chat,
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"arguments": "{}"}}]},
            ],
            r'messages\[1\]\.tool_calls\[0\]\.function: missing "name"',
        ),
        (formats.from_openai_chat, [{"role": "wizard", "content": "x"}], r"messages\[0\]\.role"),
        (formats.from_openai_chat, [{"role": "tool", "content": "x"}], r'messages\[0\]: missing "tool_call_id"'),
        (formats.from_openai_chat, [{"role": "user", "content": 3}], r"messages\[0\]\.content"),
        (
            formats.from_openai_chat,
            [{"role": "user", "content": [{"type": "image_url"}]}],
            r"messages\[0\]\.content\[0\]\.image_url",
        ),
        (formats.from_openai_chat, ["hi"], r"messages\[0\]: expected an object"),
        (formats.from_openai_chat, [{"role": "user", "content": object()}], r"messages\[0\]\.content"),
        (
            formats.from_openai_responses,
            [{"type": "function_call", "call_id": "c", "name": "f"}],
            r'items\[0\]: missing "arguments"',
        ),
        (formats.from_openai_responses, [{"type": "message", "role": "user"}], r'items\[0\]: missing "content"'),
        (
            formats.from_anthropic,
            [{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "f", "input": "s"}]}],
            r"messages\[0\]\.content\[0\]",
        ),
        (
            formats.from_anthropic,
            [{"role": "user", "content": [{"type": "tool_result"}]}],
            r'messages\[0\]\.content\[0\]: missing "tool_use_id"',
        ),
        (formats.from_anthropic, {"role": "user"}, r"messages: expected a list"),
    ],
)
def test_malformed_input_names_the_place(fn, data, where):
    with pytest.raises(FormatError, match=where):
        fn(data)


# ---- CLI ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic"])
def test_cli_convert_to_and_from(tmp_path, fmt, capsys):
    from ctxfold._cli import main

    ctx = Context(messages=formats.from_anthropic(ANTHROPIC, system="sys"))
    saved = ctx.save(tmp_path)
    req_path = tmp_path / f"{fmt}.json"
    assert main(["convert", "--to", fmt, saved, str(req_path)]) == 0
    req = json.loads(req_path.read_text())
    {"openai_chat": check_chat, "openai_responses": check_responses, "anthropic": check_anthropic}[fmt](req)
    back = tmp_path / "back.json"
    assert main(["convert", "--from", fmt, str(req_path), str(back)]) == 0
    again = Context.load(back)
    redo = {
        "openai_chat": formats.to_openai_chat,
        "openai_responses": formats.to_openai_responses,
        "anthropic": formats.to_anthropic,
    }[fmt](again)
    assert redo == req
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [{"role": "wizard"}]}')
    assert main(["convert", "--from", fmt, str(bad), str(tmp_path / "x.json")]) == 1
    assert "ctxfold: error:" in capsys.readouterr().err
