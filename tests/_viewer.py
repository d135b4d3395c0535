"""Contexts the viewer tests look at (a bit of everything: parts, tool calls, media, a summary
with a compaction record, a removal, a dynamic message, hostile markup), and an oracle for
where each shown message came from, computed from the saved file's events."""

from __future__ import annotations

from typing import Any

from ctxfold import Context, Message, Part, SystemPromptMessage, ToolDefinitionsMessage

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def sample_context() -> Context:
    sp = SystemPromptMessage.create("You are careful.", hooks=["memory"])
    ctx = Context.create(sp, ToolDefinitionsMessage.create())
    ctx.agent_name = "builder"
    ctx.add_messages([
        Message.user("the build failed, why?"),
        Message.assistant([Part.thinking("look at the cache key", signature="s1"), Part.text("checking")],
                          tool_calls=[{"id": "call_1", "name": "search", "arguments": {"q": "cache key"}}]),
        Message.tool("call_1", "cache miss for key sha256:9f8e (lockfile changed)", name="search"),
        Message.assistant("the lockfile changed the cache key"),
        Message.user([Part.text("and this screenshot?"), Part.image({"url": "https://example.com/s.png"})]),
        Message.assistant(HOSTILE),
    ])
    ctx.materialize({"memory": "The user prefers short answers."})
    # A compaction: positions 2..5 (the first turn) shadowed by one summary.
    ctx.replace_message_range(2, 5, Message.assistant("summary: the lockfile changed the cache key",
                                                      metadata={"compaction": True}))
    ctx.add_message(Message.user("thanks"))
    ctx.remove_message(ctx.message_count - 1)
    ctx.add_message(Message.user("one more question"))
    return ctx


def with_compaction_record(ctx: Context) -> Context:
    """``ctx`` reloaded with a compaction record in its replace events' data, as a compaction
    writes it."""
    d = ctx.serialize()
    for e in d["events"]:
        if e["data"].get("op") == "replace":
            e["data"]["compaction"] = {"based_on": e["seq"], "first": e["data"]["first"], "last": e["data"]["last"],
                                       "tokens_before": 123, "tokens_after": 9, "encoding": "cl100k_base"}
    return Context.deserialize(d)


def origins(ctx: Context, seq: int | None = None) -> list[int]:
    """The seq of the event that put each position there, replayed from the saved events."""
    seq = ctx.next_seq if seq is None else seq
    out: list[int] = []
    for e in ctx.serialize()["events"][:seq]:
        d: dict[str, Any] = e["data"]
        if d.get("op") == "insert":
            out.insert(d["position"], e["seq"])
        elif d.get("op") == "replace":
            out[d["first"]:d["last"] + 1] = [e["seq"]]
        elif d.get("op") == "remove":
            del out[d["first"]:d["last"] + 1]
    return out
