"""``ctxfold convert --to FORMAT IN OUT`` / ``--from FORMAT IN OUT``, and the demo's exports."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from functools import partial
from typing import Any

from .._console import note, timed, timed_turns
from .._context import Context
from .._files import report, write_json
from ..errors import FormatError
from . import to_anthropic, to_context, to_openai_chat, to_openai_responses
from ._request_in import a_request, looks_like_request

FORMATS = ("openai_chat", "openai_responses", "anthropic")


def export(ctx: Context, fmt: str) -> Mapping[str, Any]:
    if fmt == "openai_chat":
        return to_openai_chat(ctx)
    if fmt == "openai_responses":
        return to_openai_responses(ctx)
    return to_anthropic(ctx)


def load_context(src: str) -> Context:
    """``Context.load(src)``, unless the file is a provider request: then a ``FormatError``
    naming the format it looks like and the ``--from`` that reads it (nothing is written)."""
    refuse_request(src)
    return Context.load(src)


def refuse_request(src: str) -> None:
    try:
        with open(src, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return  # Context.load says what is wrong with it
    fmt = looks_like_request(data)
    if fmt is not None:
        raise FormatError(f"{src} looks like {a_request(fmt)}, not a ctxfold file: read it with "
                          f"`ctxfold convert --from {fmt} {src} OUT`")


def convert_to(fmt: str, src: str, dst: str, pretty: bool = False) -> None:
    """A saved context → the request JSON (the keyword arguments) of ``fmt``."""
    ctx = load_context(src)
    req = export(ctx, fmt)
    where = write_json(dst, req, pretty=pretty)
    key = "input" if fmt == "openai_responses" else "messages"
    report(dst, f"wrote {where}: {a_request(fmt)}, {len(req[key]):,} {key} from {len(ctx):,} messages")


def request_context(fmt: str, src: str) -> Context:
    """A request JSON of ``fmt`` (the keyword arguments, or just the list of messages) as a
    Context, through ``formats.to_context``: the tools and the other keyword arguments come
    along."""
    with open(src, encoding="utf-8") as f:
        try:
            req = json.load(f)
        except json.JSONDecodeError as e:
            raise FormatError(f"{src}: not JSON: {e}") from None
        except RecursionError:
            raise FormatError(f"{src}: nested too deeply to read") from None
    key = "input" if fmt == "openai_responses" else "messages"
    if not isinstance(req, dict):
        req = {key: req}
    elif key not in req:
        raise FormatError(f"{src}: {a_request(fmt)} needs {key!r}")
    return to_context(req, fmt)


def convert_from(fmt: str, src: str, dst: str, pretty: bool = False) -> None:
    """A request JSON of ``fmt`` → a saved context (version 2) at ``dst``."""
    ctx = request_context(fmt, src)
    where = write_json(dst, ctx.serialize(), pretty=pretty)
    tools = " and its tools" if ctx.tool_definitions_message is not None else ""
    report(dst, f"wrote {where}: version 2, {len(ctx):,} messages{tools} from {a_request(fmt)}")


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
