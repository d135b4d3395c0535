"""Checks of exported requests against the SDKs' own param types, deeply, and the rules the
APIs enforce beyond their types (pairing, ids, empty content, reasoning)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from anthropic.types import MessageParam, TextBlockParam, ToolParam
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from pydantic import TypeAdapter

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(t: Any) -> TypeAdapter[Any]:
    if t not in _ADAPTERS:
        _ADAPTERS[t] = TypeAdapter(t)
    return _ADAPTERS[t]


def force(x: Any) -> Any:
    """Fields typed ``Iterable[...]`` validate lazily: walk everything, draining iterators."""
    if isinstance(x, dict):
        return {k: force(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [force(v) for v in x]
    if isinstance(x, Iterator) or type(x).__name__ == "ValidatorIterator":
        return [force(v) for v in x]
    return x


def validate(t: Any, value: Any) -> None:
    force(_adapter(t).validate_python(value))


def check_chat(req: dict[str, Any]) -> None:
    assert set(req) <= {"messages", "tools"}
    msgs = req["messages"]
    for m in msgs:
        validate(ChatCompletionMessageParam, m)
    for t in req.get("tools", []):
        validate(ChatCompletionToolParam, t)
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m.get("content") != [], m
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            assert m.get("content") is not None or calls, m
            ids = [c["id"] for c in calls]
            assert len(set(ids)) == len(ids)
            for c in calls:
                assert 1 <= len(c["id"]) <= 40
                body = c["function"] if c["type"] == "function" else c["custom"]
                assert isinstance(body.get("arguments", body.get("input")), str)
            answered = []
            j = i + 1
            while j < len(msgs) and msgs[j]["role"] == "tool":
                answered.append(msgs[j]["tool_call_id"])
                j += 1
            assert sorted(answered) == sorted(ids), (ids, answered)
            i = j
            continue
        assert m["role"] != "tool", f"tool message not right after its call: {m}"
        assert m["content"] is not None
        i += 1
    for m in msgs:
        if m["role"] == "tool":
            assert isinstance(m["content"], str) or all(p["type"] == "text" for p in m["content"])
        if m["role"] in ("system", "developer") and isinstance(m["content"], list):
            assert all(p["type"] == "text" for p in m["content"])


_WORD = re.compile(r"^[a-zA-Z0-9_-]+$")


def check_anthropic(req: dict[str, Any]) -> None:
    assert set(req) <= {"system", "messages", "tools"}
    if "system" in req:
        s = req["system"]
        if isinstance(s, list):
            for b in s:
                validate(TextBlockParam, b)
                assert b["text"].strip()
        else:
            assert isinstance(s, str) and (s == "" or s.strip())
    for t in req.get("tools", []):
        validate(ToolParam, t)
    msgs = req["messages"]
    for m in msgs:
        validate(MessageParam, m)
    seen_ids: set[str] = set()
    for i, m in enumerate(msgs):
        content = m["content"]
        if m["role"] == "user":
            assert content not in ("", []), m
            if isinstance(content, str):
                assert content.strip()
            else:
                assert any(b["type"] != "text" or b["text"].strip() for b in content), m
        blocks = content if isinstance(content, list) else []
        for b in blocks:
            if b["type"] == "text":
                assert b["text"] != ""
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        for u in uses:
            assert _WORD.match(u), u
            assert u not in seen_ids
            seen_ids.add(u)
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if results:
            # Results come first in a user turn and answer the turn just before.
            assert m["role"] == "user"
            assert all(b["type"] == "tool_result" for b in blocks[: len(results)])
            prev = msgs[i - 1]
            prev_uses = [b["id"] for b in prev["content"] if isinstance(prev["content"], list) and b["type"] == "tool_use"]
            assert sorted(results) == sorted(prev_uses), (results, prev_uses)
        if uses:
            nxt = msgs[i + 1]
            nb = nxt["content"]
            assert nxt["role"] == "user" and isinstance(nb, list)
            assert sorted(b["tool_use_id"] for b in nb if b["type"] == "tool_result") == sorted(uses)


def check_responses(req: dict[str, Any]) -> None:
    assert set(req) <= {"input", "tools", "instructions"}
    for it in req["input"]:
        validate(ResponseInputItemParam, it)
    for t in req.get("tools", []):
        validate(FunctionToolParam, t)
    calls: list[str] = []
    outputs: list[str] = []
    for it in req["input"]:
        ty = it.get("type")
        if ty == "function_call":
            assert 1 <= len(it["call_id"]) <= 64
            assert it["call_id"] not in calls
            calls.append(it["call_id"])
        elif ty == "function_call_output":
            assert it["call_id"] in calls, "output before its call"
            assert it["call_id"] not in outputs
            outputs.append(it["call_id"])
        elif it.get("role") == "assistant" and isinstance(it["content"], list):
            assert all(p["type"] in ("output_text", "refusal") for p in it["content"])
        elif isinstance(it.get("content"), list):
            assert it["content"], it
    assert sorted(calls) == sorted(outputs)


def no_reasoning_leak(req: dict[str, Any], secrets: list[str], own: list[str]) -> None:
    """No thinking text sent as text, and only the target's own reasoning sent at all."""
    text = json.dumps(req, ensure_ascii=False)
    for s in secrets:
        if s not in own:
            assert s not in text, f"foreign reasoning {s!r} was sent"
    for s in own:
        for piece in _texts(req):
            assert s not in piece, f"reasoning {s!r} sent as text"


def _texts(x: Any) -> Iterator[str]:
    if isinstance(x, dict):
        if x.get("type") in ("text", "input_text", "output_text") and isinstance(x.get("text"), str):
            yield x["text"]
        if isinstance(x.get("content"), str):
            yield x["content"]
        if isinstance(x.get("output"), str):
            yield x["output"]
        for v in x.values():
            yield from _texts(v)
    elif isinstance(x, list):
        for v in x:
            yield from _texts(v)
