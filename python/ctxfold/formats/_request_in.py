"""A whole provider request as a Context (``formats.to_context``), and telling a provider
request from a ctxfold file (the CLI refuses to read one as the other)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._context import Context
from .._core import ToolDefinitionsMessage, request_header
from ..errors import FormatError

__all__ = ["REQUEST_EVENT", "looks_like_request", "to_context"]

FORMATS = ("openai_chat", "openai_responses", "anthropic")

# The bookkeeping event whose data holds a request's other keyword arguments (model,
# temperature, …), saved with the context.
REQUEST_EVENT = "request_header"

# Keys of a request that become the context's messages and tools, not its header.
_BODY = {"openai_chat": ("messages", "tools"), "openai_responses": ("input", "instructions", "tools"),
         "anthropic": ("messages", "system", "tools")}


def a_request(fmt: str) -> str:
    """``"an openai_chat request"``, ``"an anthropic request"``: the article the name takes."""
    return f"{'an' if fmt[:1] in tuple('aeiou') else 'a'} {fmt} request"


def to_context(request: Any, format: str) -> Context:
    """The Context a whole request of ``format`` holds: its messages (a leading system
    prompt — Chat/Responses ``system``/``developer``, Responses ``instructions``, Anthropic
    ``system`` — in the ``system_prompt`` slot), its ``tools`` in a ``ToolDefinitionsMessage``
    with ``tool_list`` bound, and its other keyword arguments (``model``, ``temperature``, …) as
    the data of a ``request_header`` event (``{"format": ..., "request": {...}}``), so they are
    saved with it.
    ``to_X(to_context(p, "X"))`` gives ``p``'s messages (or input) and tools back. A request
    dict or an SDK object with ``model_dump``; a malformed one → ``FormatError``."""
    from . import from_anthropic, from_openai_chat, from_openai_responses, tool_list

    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: one of {', '.join(FORMATS)}")
    if hasattr(request, "model_dump") and not isinstance(request, Mapping):
        request = request.model_dump(exclude_unset=True)
    if not isinstance(request, Mapping):
        raise FormatError(f"{a_request(format)} is a dict of keyword arguments, got {type(request).__name__}")
    key = "input" if format == "openai_responses" else "messages"
    if key not in request:
        raise FormatError(f"{a_request(format)} needs {key!r}")
    body = request[key]
    if format == "openai_chat":
        messages = from_openai_chat(body)
    elif format == "openai_responses":
        if isinstance(body, str):
            body = [{"role": "user", "content": body}]
        messages = from_openai_responses(body)
        instructions = request.get("instructions")
        if instructions is not None:
            if not isinstance(instructions, str):
                raise FormatError("instructions: expected a str")
            messages = [*from_openai_responses([{"role": "system", "content": instructions}]), *messages]
    else:
        messages = from_anthropic(body, system=request.get("system"))
    tools = request.get("tools")
    listed = tool_list(tools) if tools else None
    header = {k: v for k, v in request.items() if k not in _BODY[format]}
    ctx = Context(messages=messages)
    if listed is not None:
        ctx.append(ToolDefinitionsMessage.create(), "tools")
        ctx.materialize({"tool_list": listed})
    if header:
        ctx.log_event(REQUEST_EVENT, request_header(format, header))
    return ctx


def looks_like_request(data: Any) -> str | None:
    """The provider format a JSON document looks like, or ``None`` when it may be a ctxfold
    file. A ctxfold file is an object with ``version`` (or the versionless layout's keys); a
    request is the keyword arguments of one (``input``; ``messages`` with ``model``, ``tools``
    or ``system``, or with blocks only a provider writes), or a bare list of its messages."""
    if isinstance(data, list):
        return _kind_of_messages(data) or "openai_chat"
    if not isinstance(data, dict) or "version" in data:
        return None
    if {"anchor_points", "content_map", "events", "id"} & data.keys():
        return None
    if "input" in data:
        return "openai_responses"
    messages = data.get("messages")
    if not isinstance(messages, list):
        return None
    if "system" in data:
        return "anthropic"
    kind = _kind_of_messages(messages)
    if kind is not None:
        return kind
    if "model" in data or "tools" in data:
        return "openai_chat"
    return None


def _kind_of_messages(messages: list[Any]) -> str | None:
    for m in messages:
        if not isinstance(m, dict):
            continue
        if "tool_calls" in m and any(isinstance(c, dict) and "function" in c for c in m["tool_calls"] or []):
            return "openai_chat"
        if m.get("type") in ("function_call", "function_call_output", "reasoning", "message"):
            return "openai_responses"
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                t = b.get("type") if isinstance(b, dict) else None
                if t in ("tool_use", "tool_result", "thinking", "redacted_thinking"):
                    return "anthropic"
                if t in ("image_url", "input_audio"):
                    return "openai_chat"
                if t in ("input_text", "output_text", "input_image"):
                    return "openai_responses"
    return None
