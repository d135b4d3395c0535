"""The ``ctxfold`` command: ``demo``, ``convert IN OUT``, ``stats FILE``, ``store URL …``."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from ._context import Context
from ._core import Message, SystemPromptMessage, ToolDefinitionsMessage, encodings
from ._files import write_json_atomic
from ._store_cli import add_store_parser, demo_turns, run_store
from .demo_transcript import build_transcript

T = TypeVar("T")


def _safe_console() -> None:
    """Never fail on a character the console cannot show (Windows' cp1252, ``PYTHONIOENCODING``,
    an ASCII pipe): it is written as a backslash escape instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _glyph(preferred: str, plain: str) -> str:
    """``preferred`` where stdout's encoding has it, else the ASCII ``plain``."""
    try:
        preferred.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return plain
    return preferred


def _note(text: str) -> None:
    print(f"    {_glyph('→', '->')} {text}")


def _timed(label: str, f: Callable[[], T]) -> T:
    t = time.perf_counter()
    out = f()
    dt = time.perf_counter() - t
    unit, scale = ("ms", 1e3) if dt >= 1e-3 else (_glyph("µs", "us"), 1e6)
    print(f"  {label:<52} {dt * scale:10.2f} {unit}")
    return out


def demo(n: int) -> None:
    print(f"ctxfold demo: a {n:,}-message agent transcript\n")
    sp = SystemPromptMessage.create("You are a careful build engineer.", hooks=["memory"])
    td = ToolDefinitionsMessage.create()
    ctx = Context.create(sp, td)
    messages = _timed(f"build {n:,} Message objects", lambda: build_transcript(n))
    _timed(f"add_messages ({n:,} events)", lambda: ctx.add_messages(messages))
    one = Message.user("one more turn")
    _timed("add_message (one more, at the end)", lambda: ctx.add_message(one))
    shown = _timed("read messages", lambda: ctx.messages)
    _note(f"{len(shown):,} messages, first is {type(shown[0]).__name__}, anchors {ctx.anchor_points}")
    ctx.add_anchor("pinned", n // 2)
    _timed("append at a mid-transcript anchor", lambda: ctx.append(Message.user("pinned note"), "pinned"))
    tools = json.dumps([{"name": "search", "description": "search the web", "parameters": {}},
                        {"name": "shell", "description": "run a command", "parameters": {}}])
    _timed("materialize memory + tool_list + tool_filter", lambda: ctx.materialize(
        {"memory": "The user prefers short answers.", "tool_list": tools, "tool_filter": '["search"]'}))
    _note(f"system prompt now {ctx.messages[0].content!r}")
    _note(f"tools now {[p.name for p in ctx.messages[1].parts]}")
    half = len(ctx) // 2
    summary = Message.system(f"[summary of messages 2..{half}]")
    _timed(f"replace_message_range(2, {half}) (compaction)", lambda: ctx.replace_message_range(2, half, summary))
    _note(f"{len(ctx):,} messages shown, {ctx.next_seq:,} events kept (nothing lost)")
    ctx.add_message(Message.assistant("checking", tool_calls=[{"id": "dangling_1", "name": "shell"}]))
    _timed("patch_dangling_tool_calls", ctx.patch_dangling_tool_calls)
    _note(f"last message: {ctx.last_message()!r}")
    _timed("put_system_prompt_overlay", lambda: ctx.put_system_prompt_overlay("Today is Monday."))
    for enc in ("cl100k_base", "o200k_base"):
        total = _timed(f"total_token_count({enc}), cold", lambda e=enc: ctx.total_token_count(e))  # type: ignore[misc]
        _timed(f"total_token_count({enc}), warm", lambda e=enc: ctx.total_token_count(e))  # type: ignore[misc]
        _note(f"{total:,} tokens")
    budget = ctx.total_token_count() // 10
    window = _timed(f"rolling_token_window({budget:,}) (~10%)", lambda: ctx.rolling_token_window(budget))
    if window is not None:
        _note(f"window keeps {len(window):,} messages, {window.total_token_count():,} tokens")
    seq = _timed("rolling_sequence_window(1000)", lambda: ctx.rolling_sequence_window(1000))
    if seq is not None:
        _note(f"{len(seq):,} messages, first non-special role {seq.messages[2].role!r}")
    stripped = _timed("strip_thinking()", ctx.strip_thinking)
    _note(f"{len(stripped):,} messages")
    from .formats._cli import demo_exports

    demo_exports(ctx, _timed)
    with tempfile.TemporaryDirectory() as d:
        path = _timed("save (atomic)", lambda: ctx.save(d))
        loaded = _timed("load", lambda: Context.load(path))
        loaded.put_system_prompt_overlay("Today is Monday.")  # runtime state, never saved
        same = [m.to_dict() for m in loaded.messages] == [m.to_dict() for m in ctx.messages]
        _note(f"loaded {len(loaded):,} messages; equal to the original: {same}")
        demo_turns(ctx, d)


def stats(path: str) -> None:
    print_stats(Context.load(path))


def print_stats(ctx: Context) -> None:
    msgs = ctx.messages
    print(f"context {ctx.id}: {len(msgs):,} messages, {ctx.next_seq:,} events")
    print("messages by role:", dict(Counter(m.role for m in msgs)))
    print("events by type:  ", dict(Counter(e.type for e in ctx.events())))
    print("anchors:         ", ctx.anchor_points)
    for enc in ("cl100k_base", "o200k_base"):
        print(f"tokens {enc}: {ctx.total_token_count(enc):,}")


def convert(src: str, dst: str) -> None:
    """Any layout ``load`` reads (version 2 or 1, the versionless seed layout) → version 2,
    written atomically (a temporary file beside ``dst``, then a rename)."""
    ctx = Context.load(src)
    write_json_atomic(dst, ctx.serialize())
    print(f"wrote {dst}: version 2, {len(ctx):,} messages, {ctx.next_seq:,} events")


def main(argv: list[str] | None = None) -> int:
    _safe_console()
    p = argparse.ArgumentParser(prog="ctxfold", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="build a large agent transcript and time every operation")
    d.add_argument("--messages", type=int, default=100_000)
    s = sub.add_parser("stats", help="messages by role, tokens per encoding, events, anchors")
    s.add_argument("file")
    c = sub.add_parser("convert", help="any readable layout -> version 2; --to/--from a provider request (SPEC §10)")
    way = c.add_mutually_exclusive_group()
    way.add_argument("--to", choices=("openai_chat", "openai_responses", "anthropic"), help="write the request JSON")
    way.add_argument("--from", dest="from_", choices=("openai_chat", "openai_responses", "anthropic"),
                     help="read a request JSON into a saved context")
    c.add_argument("src")
    c.add_argument("dst")
    sub.add_parser("encodings", help="list the token encodings")
    add_store_parser(sub)
    a = p.parse_args(argv)
    if a.cmd == "store":
        return run_store(a)
    try:
        if a.cmd == "demo":
            demo(a.messages)
        elif a.cmd == "stats":
            stats(a.file)
        elif a.cmd == "convert" and (a.to or a.from_):
            from .formats._cli import convert_from, convert_to

            (convert_to if a.to else convert_from)(a.to or a.from_, a.src, a.dst)
        elif a.cmd == "convert":
            convert(a.src, a.dst)
        else:
            print("\n".join(encodings()))
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at exit
    except BrokenPipeError:
        # The reader went away (``ctxfold demo | head``): stop quietly, as other tools do. Output
        # still buffered goes to devnull, so the flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError) as e:
        # Bad files are the user's to fix: one line saying what and where, no traceback.
        print(f"ctxfold: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
