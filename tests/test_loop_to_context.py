"""A whole provider request as a Context (``formats.to_context``), and the CLI: ``convert
--from`` keeps tools, model and temperature; ``convert --to``, ``convert`` and ``stats`` refuse
a provider request rather than reading it as a ctxfold file."""

from __future__ import annotations

import json

import pytest
from ctxfold import Context, FormatError, SystemPromptMessage, formats
from ctxfold._cli import main

CHAT_TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Find a thing",
                                                 "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
CHAT = {"model": "gpt-4o", "temperature": 0.2, "tools": CHAT_TOOLS, "messages": [
    {"role": "system", "content": "Be brief"},
    {"role": "user", "content": "find x"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "found"},
]}
ANTHROPIC = {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": "Be brief",
             "tools": [{"name": "lookup", "description": "Find a thing",
                        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}],
             "messages": [{"role": "user", "content": "find x"},
                          {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup",
                                                             "input": {"q": "x"}}]},
                          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                        "content": "found"}]}]}
RESPONSES = {"model": "gpt-4.1", "instructions": "Be brief", "input": [{"role": "user", "content": "find x"}],
             "tools": [{"type": "function", "name": "lookup", "description": "Find a thing",
                        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]}


def header(ctx: Context) -> dict:
    [e] = [e for e in ctx.events() if e.type == "request_header"]
    return e.data


@pytest.mark.parametrize("fmt, req, body", [("openai_chat", CHAT, ("messages", "tools")),
                                            ("anthropic", ANTHROPIC, ("system", "messages", "tools"))])
def test_round_trip_of_messages_and_tools(fmt, req, body):
    ctx = formats.to_context(req, fmt)
    assert getattr(formats, f"to_{fmt}")(ctx) == {k: req[k] for k in body}
    assert isinstance(ctx.system_prompt_message, SystemPromptMessage)
    assert ctx.tool_definitions_message is not None
    assert header(ctx)["request"] == {k: v for k, v in req.items() if k not in body}
    # saved with the context
    assert header(Context.deserialize(ctx.serialize())) == header(ctx)


def test_responses_instructions_and_tools():
    ctx = formats.to_context(RESPONSES, "openai_responses")
    out = formats.to_openai_responses(ctx, instructions=True)
    # The Responses exporter writes ``strict`` on every function tool (the SDK's type requires it).
    assert [{k: v for k, v in t.items() if k != "strict"} for t in out.pop("tools")] == RESPONSES["tools"]
    assert out == {"instructions": "Be brief", "input": RESPONSES["input"]}
    assert header(ctx) == {"format": "openai_responses", "request": {"model": "gpt-4.1"}}


def test_bad_requests():
    with pytest.raises(FormatError, match="needs 'messages'"):
        formats.to_context({"model": "m"}, "openai_chat")
    with pytest.raises(ValueError, match="unknown format"):
        formats.to_context(CHAT, "gemini")


def test_cli_convert_from_keeps_tools_model_and_temperature(tmp_path):
    src, dst, back = tmp_path / "req.json", tmp_path / "ctx.json", tmp_path / "again.json"
    src.write_text(json.dumps(CHAT))
    assert main(["convert", "--from", "openai_chat", str(src), str(dst)]) == 0
    ctx = Context.load(dst)
    assert header(ctx)["request"] == {"model": "gpt-4o", "temperature": 0.2}
    assert main(["convert", "--to", "openai_chat", str(dst), str(back)]) == 0
    assert json.loads(back.read_text()) == {"messages": CHAT["messages"], "tools": CHAT_TOOLS}


@pytest.mark.parametrize("fmt, req", [("openai_chat", CHAT), ("anthropic", ANTHROPIC),
                                      ("openai_responses", RESPONSES)])
@pytest.mark.parametrize("cmd", [["convert", "--to", "anthropic"], ["convert"], ["stats"]])
def test_cli_refuses_a_provider_request_as_a_ctxfold_file(tmp_path, capsys, fmt, req, cmd):
    src, dst = tmp_path / "req.json", tmp_path / "out.json"
    src.write_text(json.dumps(req))
    args = [*cmd, str(src)] + ([] if cmd == ["stats"] else [str(dst)])
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"looks like an {fmt} request" in err and f"--from {fmt}" in err
    assert not dst.exists()


def test_a_ctxfold_file_is_not_taken_for_a_request(tmp_path):
    ctx = formats.to_context(CHAT, "openai_chat")
    path = ctx.save(tmp_path)
    assert main(["stats", path]) == 0
    assert formats._request_in.looks_like_request(ctx.serialize()) is None


def test_tools_keep_the_keys_they_came_with():
    """``strict`` and ``cache_control`` come in with a request's tools and go back out to the
    API that takes them; the tool definitions message keeps every other key too (it is saved)."""
    chat = {"messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "lookup", "description": "Find",
                                                        "parameters": {"type": "object"}, "strict": True}}]}
    assert formats.to_openai_chat(formats.to_context(chat, "openai_chat")) == chat
    responses = {"input": [{"role": "user", "content": "x"}],
                 "tools": [{"type": "function", "name": "lookup", "description": "Find",
                            "parameters": {"type": "object"}, "strict": False}]}
    assert formats.to_openai_responses(formats.to_context(responses, "openai_responses")) == responses
    anthropic = {"messages": [{"role": "user", "content": "x"}],
                 "tools": [{"name": "lookup", "description": "Find", "input_schema": {"type": "object"},
                            "cache_control": {"type": "ephemeral"}, "x_custom": 1}]}
    ctx = formats.to_context(anthropic, "anthropic")
    out = formats.to_anthropic(ctx)
    assert out["tools"] == [{k: v for k, v in anthropic["tools"][0].items() if k != "x_custom"}]
    [tool] = [p for p in ctx.tool_definitions_message.parts if p.type == "tool"]
    assert tool.to_dict()["x_custom"] == 1 and tool.to_dict()["cache_control"] == {"type": "ephemeral"}
    again = Context.deserialize(ctx.serialize())
    assert formats.to_anthropic(again) == out
