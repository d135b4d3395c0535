"""Framework conversions side by side: ``to_langchain`` against a plain Python loop over
``ctx.messages`` building the same LangChain messages, ``from_langchain`` against a plain loop
building the same ctxfold messages back; ``to_pydantic_ai`` / ``from_pydantic_ai`` against
Pydantic AI's own JSON round trip of the same messages (``ModelMessagesTypeAdapter``), the way a
Pydantic AI app persists its history today."""

from __future__ import annotations

import pytest
from conftest import SIZES
from ctxfold import Message, formats
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic_ai.messages import ModelMessagesTypeAdapter
from test_bench import filled


def to_langchain_loop(messages):
    """The hand-written mapping for this transcript (its thinking has no maker: dropped), with
    the same ids, so that it builds exactly what ``to_langchain`` builds."""
    out = []
    for m in messages:
        role = m.role
        content = m.content
        if isinstance(content, list):
            content = [{"type": "text", "text": p.text} for p in content if p.type == "text"]
        elif content is None:
            content = ""
        if role == "assistant":
            calls = [{"name": c["name"], "args": c["arguments"], "id": c["id"], "type": "tool_call"} for c in m.tool_calls]
            out.append(AIMessage(content=content, tool_calls=calls, name=m.name, id=m.id))
        elif role == "tool":
            out.append(ToolMessage(content=content, tool_call_id=m.tool_call_id, name=m.name, id=m.id))
        elif role == "user":
            out.append(HumanMessage(content=content, name=m.name, id=m.id))
        else:
            out.append(SystemMessage(content=content, name=m.name, id=m.id))
    return out


def from_langchain_loop(lc):
    """LangChain messages back into ctxfold messages by hand (no interop metadata kept)."""
    roles = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
    out = []
    for m in lc:
        kw = {}
        if m.type == "ai":
            kw["tool_calls"] = [{"id": c["id"], "name": c["name"], "arguments": c["args"]} for c in m.tool_calls]
        elif m.type == "tool":
            kw["tool_call_id"] = m.tool_call_id
        out.append(Message(roles[m.type], m.content, name=m.name, id=m.id, **kw))
    return out


def slow(n):
    return 1 if n >= 100_000 else 3


@pytest.mark.parametrize("n", SIZES)
def test_to_langchain(record, n):
    ctx = filled(n)
    assert formats.to_langchain(ctx) == to_langchain_loop(ctx.messages)  # the same work
    record("to_langchain", n, "ctxfold", lambda: formats.to_langchain(ctx), rounds=slow(n))
    record("to_langchain", n, "python loop", lambda: to_langchain_loop(ctx.messages), rounds=slow(n))


@pytest.mark.parametrize("n", SIZES)
def test_from_langchain(record, n):
    lc = to_langchain_loop(filled(n).messages)
    record("from_langchain", n, "ctxfold", lambda: formats.from_langchain(lc), rounds=slow(n))
    record("from_langchain", n, "python loop (no interop kept)", lambda: from_langchain_loop(lc), rounds=slow(n))


@pytest.mark.parametrize("n", SIZES)
def test_to_pydantic_ai(record, n):
    ctx = filled(n)
    dumped = ModelMessagesTypeAdapter.dump_python(formats.to_pydantic_ai(ctx), mode="json")
    record("to_pydantic_ai", n, "ctxfold", lambda: formats.to_pydantic_ai(ctx), rounds=slow(n))
    record(
        "to_pydantic_ai",
        n,
        "ModelMessagesTypeAdapter load",
        lambda: ModelMessagesTypeAdapter.validate_python(dumped),
        rounds=slow(n),
    )


@pytest.mark.parametrize("n", SIZES)
def test_from_pydantic_ai(record, n):
    pa = formats.to_pydantic_ai(filled(n))
    record("from_pydantic_ai", n, "ctxfold", lambda: formats.from_pydantic_ai(pa), rounds=slow(n))
    record(
        "from_pydantic_ai",
        n,
        "ModelMessagesTypeAdapter dump",
        lambda: ModelMessagesTypeAdapter.dump_python(pa, mode="json"),
        rounds=slow(n),
    )
