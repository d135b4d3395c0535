"""Exporters side by side: ``to_openai_chat`` and ``to_anthropic`` against
LangChain's ``convert_to_openai_messages`` on the same messages as LangChain objects, and
against a plain Python loop over ``ctx.messages`` building the same dicts; and the per-turn
cost of an agent loop at 100k: a 10% token window, then the export."""

from __future__ import annotations

import pytest
from conftest import SIZES
from ctxfold import formats
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, convert_to_openai_messages
from test_bench import filled


def chat_loop(messages):
    """The hand-written mapping a user would write for this transcript (thinking dropped)."""
    out = []
    for m in messages:
        if m.role == "assistant":
            content = m.content
            if isinstance(content, list):
                content = [{"type": "text", "text": p.text} for p in content if p.type == "text"]
            d = {"role": "assistant", "content": content}
            if m.tool_calls:
                d["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {
                            "name": c["name"],
                            "arguments": c["arguments"] if isinstance(c["arguments"], str) else json_compact(c["arguments"]),
                        },
                    }
                    for c in m.tool_calls
                ]
            out.append(d)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def anthropic_loop(messages):
    out = []
    for m in messages:
        if m.role == "assistant":
            blocks = []
            if isinstance(m.content, list):
                blocks = [{"type": "text", "text": p.text} for p in m.content if p.type == "text" and p.text]
            elif m.content:
                blocks = m.content
            if m.tool_calls:
                if isinstance(blocks, str):
                    blocks = [{"type": "text", "text": blocks}]
                blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        elif m.role == "tool":
            out.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}]}
            )
        else:
            out.append({"role": "user", "content": m.content})
    return out


def json_compact(v):
    import json

    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def langchain(messages):
    out = []
    for m in messages:
        if m.role == "user":
            out.append(HumanMessage(m.content))
        elif m.role == "assistant":
            content = (
                m.content
                if isinstance(m.content, str)
                else [{"type": "text", "text": p.text} for p in m.content if p.type == "text"]
            )
            out.append(
                AIMessage(content, tool_calls=[{"id": c["id"], "name": c["name"], "args": c["arguments"]} for c in m.tool_calls])
            )
        elif m.role == "tool":
            out.append(ToolMessage(m.content, tool_call_id=m.tool_call_id))
    return out


@pytest.mark.parametrize("n", SIZES)
def test_to_openai_chat(record, n):
    ctx = filled(n)
    # The loop builds what the exporter builds: the comparison is of the same work.
    assert formats.to_openai_chat(ctx)["messages"] == chat_loop(ctx.messages)
    lc = langchain(ctx.messages)
    record("to_openai_chat", n, "ctxfold", lambda: formats.to_openai_chat(ctx))
    record("to_openai_chat", n, "python loop", lambda: chat_loop(ctx.messages))
    record("to_openai_chat", n, "langchain convert", lambda: convert_to_openai_messages(lc), rounds=1 if n >= 100_000 else 3)


@pytest.mark.parametrize("n", SIZES)
def test_to_anthropic(record, n):
    ctx = filled(n)
    assert formats.to_anthropic(ctx)["messages"] == anthropic_loop(ctx.messages)
    lc = langchain(ctx.messages)
    record("to_anthropic", n, "ctxfold", lambda: formats.to_anthropic(ctx))
    record("to_anthropic", n, "python loop", lambda: anthropic_loop(ctx.messages))
    record(
        "to_anthropic", n, "langchain convert (openai)", lambda: convert_to_openai_messages(lc), rounds=1 if n >= 100_000 else 3
    )


@pytest.mark.parametrize("n", [s for s in SIZES if s >= 100_000] or SIZES[-1:])
@pytest.mark.parametrize("fmt", ["openai_chat", "anthropic", "openai_responses"])
def test_window_then_export(record, n, fmt):
    """The per-turn cost of an agent loop: a 10% token window, then the request (counts warm,
    as they are from the second turn on). The other side: the window alone."""
    ctx = filled(n)
    budget = ctx.total_token_count() // 10
    export = getattr(formats, f"to_{fmt}")
    assert ctx.rolling_token_window(budget) is not None
    record(f"10% window + to_{fmt}", n, "ctxfold", lambda: export(ctx.rolling_token_window(budget)))
    record(f"10% window + to_{fmt}", n, "the window alone", lambda: ctx.rolling_token_window(budget))
