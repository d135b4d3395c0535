"""The ``ctxfold`` command: ``demo``, ``convert IN OUT``, ``stats FILE``, ``store URL …``, ``show``, ``serve``."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

from ._console import interruptible, note, print_stats, reported, safe_console, timed
from ._context import Context
from ._core import Message, SystemPromptMessage, ToolDefinitionsMessage, __version__, encodings
from ._files import report, write_json
from ._store_cli import add_store_parser, demo_turns, run_store
from .demo_transcript import build_transcript
from .viewer._cli import add_viewer_parsers, run_viewer

DESCRIPTION = ("An LLM agent's conversation as an append-only event log: see a saved context, convert it "
               "to and from provider requests, keep contexts in a store, or time every operation on a "
               "large transcript. OUT may be - for standard output.")

#: The smallest transcript the demo's steps make sense on (a window, a mid-transcript anchor).
DEMO_MIN = 10


def demo(n: int) -> None:
    print(f"ctxfold demo: a {n:,}-message agent transcript\n")
    sp = SystemPromptMessage.create("You are a careful build engineer.", hooks=["memory"])
    td = ToolDefinitionsMessage.create()
    ctx = Context.create(sp, td)
    messages = timed(f"build {n:,} Message objects", lambda: build_transcript(n))
    timed(f"add_messages ({n:,} events)", lambda: ctx.add_messages(messages))
    one = Message.user("one more turn")
    timed("add_message (one more, at the end)", lambda: ctx.add_message(one))
    shown = timed("read messages", lambda: ctx.messages)
    note(f"{len(shown):,} messages, first is {type(shown[0]).__name__}, anchors {ctx.anchor_points}")
    ctx.add_anchor("pinned", n // 2)
    timed("append at a mid-transcript anchor", lambda: ctx.append(Message.user("pinned note"), "pinned"))
    tools = json.dumps([{"name": "search", "description": "search the web", "parameters": {}},
                        {"name": "shell", "description": "run a command", "parameters": {}}])
    timed("materialize memory + tool_list + tool_filter", lambda: ctx.materialize(
        {"memory": "The user prefers short answers.", "tool_list": tools, "tool_filter": '["search"]'}))
    note(f"system prompt now {ctx.messages[0].content!r}")
    note(f"tools now {[p.name for p in ctx.messages[1].parts]}")
    half = len(ctx) // 2
    summary = Message.system(f"[summary of messages 2..{half}]")
    timed(f"replace_message_range(2, {half}) (compaction)", lambda: ctx.replace_message_range(2, half, summary))
    note(f"{len(ctx):,} messages shown, {ctx.next_seq:,} events kept (nothing lost)")
    ctx.add_message(Message.assistant("checking", tool_calls=[{"id": "dangling_1", "name": "shell"}]))
    timed("patch_dangling_tool_calls", ctx.patch_dangling_tool_calls)
    note(f"last message: {ctx.last_message()!r}")
    timed("put_system_prompt_overlay", lambda: ctx.put_system_prompt_overlay("Today is Monday."))
    for enc in ("cl100k_base", "o200k_base"):
        total = timed(f"total_token_count({enc}), cold", lambda e=enc: ctx.total_token_count(e))  # type: ignore[misc]
        timed(f"total_token_count({enc}), warm", lambda e=enc: ctx.total_token_count(e))  # type: ignore[misc]
        note(f"{total:,} tokens")
    budget = ctx.total_token_count() // 10
    window = timed(f"rolling_token_window({budget:,}) (~10%)", lambda: ctx.rolling_token_window(budget))
    if window is not None:
        note(f"window keeps {len(window):,} messages, {window.total_token_count():,} tokens")
    seq = timed("rolling_sequence_window(1000)", lambda: ctx.rolling_sequence_window(1000))
    if seq is not None:
        note(f"{len(seq):,} messages, first non-special role {seq.messages[2].role!r}")
    stripped = timed("strip_thinking()", ctx.strip_thinking)
    note(f"{len(stripped):,} messages")
    from .formats._cli import demo_exports

    demo_exports(ctx)
    with tempfile.TemporaryDirectory() as d:
        path = timed("save (atomic)", lambda: ctx.save(d))
        loaded = timed("load", lambda: Context.load(path))
        loaded.put_system_prompt_overlay("Today is Monday.")  # runtime state, never saved
        same = [m.to_dict() for m in loaded.messages] == [m.to_dict() for m in ctx.messages]
        note(f"loaded {len(loaded):,} messages; equal to the original: {same}")
        demo_turns(ctx, d)


def stats(path: str) -> None:
    from .formats._cli import load_context

    print_stats(load_context(path))


def convert(src: str, dst: str, pretty: bool = False) -> None:
    """Any layout ``load`` reads (version 2 or 1, the versionless seed layout) → version 2,
    written by the rule every command writes by (``_files``)."""
    from .formats._cli import load_context

    ctx = load_context(src)
    where = write_json(dst, ctx.serialize(), pretty=pretty)
    report(dst, f"wrote {where}: version 2, {len(ctx):,} messages, {ctx.next_seq:,} events")


def demo_size(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < DEMO_MIN:
        raise argparse.ArgumentTypeError(f"at least {DEMO_MIN} messages, got {n}")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxfold", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"ctxfold {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="build a large agent transcript and time every operation")
    d.add_argument("--messages", type=demo_size, default=100_000, metavar="N",
                   help=f"how many messages to build (at least {DEMO_MIN}; default 100,000)")
    s = sub.add_parser("stats", help="messages by role, tokens per encoding, events, anchors")
    s.add_argument("file")
    c = sub.add_parser("convert", help="a saved context in any layout it reads -> version 2; with --to or --from, "
                                       "a provider request",
                       description="Without --to or --from: a saved context in any layout ctxfold reads -> a "
                                   "version 2 file. --to: a saved context -> the request JSON of that API. "
                                   "--from: a request JSON of that API -> a saved context. OUT may be - for "
                                   "standard output.")
    way = c.add_mutually_exclusive_group()
    way.add_argument("--to", choices=("openai_chat", "openai_responses", "anthropic"), help="write the request JSON")
    way.add_argument("--from", dest="from_", choices=("openai_chat", "openai_responses", "anthropic"),
                     help="read a request JSON into a saved context")
    c.add_argument("--pretty", action="store_true", help="indent the JSON written (2 spaces)")
    c.add_argument("src", metavar="IN")
    c.add_argument("dst", metavar="OUT")
    sub.add_parser("encodings", help="list the token encodings")
    add_store_parser(sub)
    add_viewer_parsers(sub)
    return p


def run(a: argparse.Namespace) -> int:
    if a.cmd == "store":
        return run_store(a)
    if a.cmd == "demo":
        demo(a.messages)
    elif a.cmd == "stats":
        stats(a.file)
    elif a.cmd == "convert" and (a.to or a.from_):
        from .formats._cli import convert_from, convert_to

        (convert_to if a.to else convert_from)(a.to or a.from_, a.src, a.dst, a.pretty)
    elif a.cmd == "convert":
        convert(a.src, a.dst, a.pretty)
    else:
        print("\n".join(encodings()))
    return 0


def main(argv: list[str] | None = None) -> int:
    safe_console()
    try:
        a = parser().parse_args(argv)
    except KeyboardInterrupt:
        print("ctxfold: interrupted", file=sys.stderr)
        return 130
    if a.cmd in ("show", "serve"):
        # The viewer runs in the main thread (a server handles its own signals).
        return run_viewer(a)
    return interruptible(lambda: reported(lambda: run(a)))

if __name__ == "__main__":
    sys.exit(main())
