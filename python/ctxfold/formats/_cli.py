"""``ctxfold convert --to FORMAT IN OUT`` / ``--from FORMAT IN OUT``, and the demo's exports."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

from .._console import note, timed, timed_turns
from .._context import Context
from .._core import Message
from .._files import write_json_atomic
from ..errors import FormatError
from . import from_anthropic, from_openai_chat, from_openai_responses, to_anthropic, to_openai_chat, to_openai_responses

FORMATS = ("openai_chat", "openai_responses", "anthropic")


def export(ctx: Context, fmt: str) -> dict[str, Any]:
    if fmt == "openai_chat":
        return to_openai_chat(ctx)
    if fmt == "openai_responses":
        return to_openai_responses(ctx)
    return to_anthropic(ctx)


def convert_to(fmt: str, src: str, dst: str) -> None:
    """A saved context → the request JSON (the keyword arguments) of ``fmt``."""
    ctx = Context.load(src)
    req = export(ctx, fmt)
    write_json_atomic(dst, req)
    key = "input" if fmt == "openai_responses" else "messages"
    print(f"wrote {dst}: {fmt} request, {len(req[key]):,} {key} from {len(ctx):,} messages")


def request_messages(fmt: str, src: str) -> list[Message]:
    """The messages of a request JSON of ``fmt`` (the keyword arguments, or just the list)."""
    with open(src, encoding="utf-8") as f:
        try:
            req = json.load(f)
        except json.JSONDecodeError as e:
            raise FormatError(f"{src}: not JSON: {e}") from None
    key = "input" if fmt == "openai_responses" else "messages"
    if isinstance(req, dict):
        if key not in req:
            raise FormatError(f"{src}: a {fmt} request needs {key!r}")
        body = req[key]
    else:
        body = req
    if fmt == "openai_chat":
        return from_openai_chat(body)
    if fmt == "openai_responses":
        if isinstance(body, str):
            body = [{"role": "user", "content": body}]
        messages = from_openai_responses(body)
        if isinstance(req, dict) and isinstance(req.get("instructions"), str):
            messages = [*from_openai_responses([{"role": "system", "content": req["instructions"]}]), *messages]
        return messages
    return from_anthropic(body, system=req.get("system") if isinstance(req, dict) else None)


def convert_from(fmt: str, src: str, dst: str) -> None:
    """A request JSON of ``fmt`` (the keyword arguments, or just the list) → a saved context
    (version 2) at ``dst``."""
    ctx = Context(messages=request_messages(fmt, src))
    write_json_atomic(dst, ctx.serialize())
    print(f"wrote {dst}: version 2, {len(ctx):,} messages from a {fmt} request")


def demo_exports(ctx: Context) -> None:
    """The per-turn cost of a real agent loop: a 10% token window, then each export."""

    budget = ctx.total_token_count() // 10
    t = time.perf_counter()
    window = ctx.rolling_token_window(budget) or ctx
    window_ms = (time.perf_counter() - t) * 1e3
    note(f"window of {len(window):,} messages in {window_ms:.2f} ms; exported (the first request")
    note("makes what each message exports to, later turns get it again: docs/formats.md; a turn")
    note("is the median of 5, each request kept until the next is back, as an agent loop does):")
    for fmt in FORMATS:
        key = "input" if fmt == "openai_responses" else "messages"
        sent = len(timed(f"to_{fmt}(whole transcript), first", partial(export, ctx, fmt))[key])
        timed_turns(f"to_{fmt}(whole transcript), a turn", partial(export, ctx, fmt))
        timed_turns(f"to_{fmt}(10% token window), a turn", partial(export, window, fmt))
        note(f"{sent:,} {key}")
