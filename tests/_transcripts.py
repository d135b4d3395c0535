"""Hypothesis transcripts for every exporter (the core's formats, LangChain, Pydantic AI):
compaction, windows, dangling calls, orphan results, parallel calls, long and odd ids, images in
tool results, thinking from several makers and from none, empty texts. Each suite names the
makers of reasoning it cares about (``providers``): its own, the others', and none."""

from __future__ import annotations

import json

from ctxfold import Context, Message, Part, ToolDefinitionsMessage
from hypothesis import strategies as st

texts = st.one_of(st.just(""), st.just("  \n"), st.text(max_size=20))
ids = st.one_of(
    st.from_regex(r"call_[a-z0-9]{1,8}", fullmatch=True),
    st.just("functions.Bash:0"),
    st.just("call_x|fc_y"),
    st.text(min_size=41, max_size=90),
    st.text(min_size=0, max_size=5),
)
IMAGE = Part.image({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
URL_IMAGE = Part.image({"type": "url", "url": "https://example.com/a.png"})
# The makers of reasoning the framework suites draw from (the core's suite names its own).
FRAMEWORK_PROVIDERS = (None, "anthropic", "openai_responses", "langchain", "pydantic_ai")


@st.composite
def thinking(draw, n: int, providers=FRAMEWORK_PROVIDERS):
    prov = draw(st.sampled_from(providers))
    secret = f"SECRET{n}x{prov}"
    extra = {"provider": prov} if prov else {}
    if prov in ("anthropic", "pydantic_ai"):
        extra["signature"] = f"sig{n}"
    if prov == "openai_responses":
        extra["id"] = f"rs_{n}"
        extra["summary"] = [{"type": "summary_text", "text": secret}]
    return Part.thinking(secret, **extra), secret, prov


@st.composite
def transcripts(draw, providers=FRAMEWORK_PROVIDERS):
    """(messages, [(secret reasoning text, its maker)])"""
    msgs: list[Message] = []
    secrets: list[tuple[str, str | None]] = []
    if draw(st.booleans()):
        msgs.append(Message.system(draw(texts)))
    if draw(st.booleans()):
        msgs.append(Message("developer", draw(texts)))
    for turn in range(draw(st.integers(1, 6))):
        user_parts = [Part.text(draw(texts))]
        if draw(st.booleans()):
            user_parts.append(draw(st.sampled_from([IMAGE, URL_IMAGE])))
        msgs.append(Message.user(draw(st.sampled_from([user_parts, draw(texts)]))))
        content: list[Part] = []
        for k in range(draw(st.integers(0, 2))):
            p, s, prov = draw(thinking(turn * 10 + k, providers))
            content.append(p)
            secrets.append((s, prov))
        if draw(st.booleans()):
            content.append(Part.text(draw(texts)))
        calls = []
        for c in range(draw(st.integers(0, 3))):
            cid = draw(ids)
            args = draw(st.sampled_from(['{"a": 1}', "{}", {"k": "é"}, "not json", "[1]"]))
            if draw(st.booleans()):
                calls.append({"id": cid, "name": f"tool{c}", "arguments": args})
            else:
                content.append(Part.tool_use(cid, f"tool{c}", args if isinstance(args, dict) else {"q": args}))
        msgs.append(Message.assistant(content or draw(texts), tool_calls=calls))
        made = [c["id"] for c in calls] + [p.call_id for p in content if p.type == "tool_use"]
        for cid in made:
            how = draw(st.sampled_from(["tool", "tool_image", "part", "none", "later"]))
            if how == "tool":
                msgs.append(Message.tool(cid, draw(texts)))
            elif how == "tool_image":
                msgs.append(Message("tool", [Part.text("see"), IMAGE], tool_call_id=cid))
            elif how == "part":
                result = draw(st.sampled_from(["r", [Part.text("r").to_dict(), IMAGE.to_dict()]]))
                msgs.append(Message.user([Part.tool_result(cid, result), Part.text(draw(texts))]))
            elif how == "later":
                msgs.append(Message.user("interlude"))
                msgs.append(Message.tool(cid, "late"))
        if draw(st.booleans()):
            msgs.append(Message.tool(draw(ids), "orphan"))
    return msgs, secrets


@st.composite
def sources(draw, providers=FRAMEWORK_PROVIDERS):
    """A Context (compacted, windowed, overlaid, with tool definitions) or a plain list."""
    msgs, secrets = draw(transcripts(providers))
    ctx = Context.create(tool_definitions_message=ToolDefinitionsMessage.create())
    ctx.materialize({"tool_list": json.dumps([{"name": "tool0", "description": "d", "parameters": {"type": "object"}}])})
    ctx.add_messages(msgs)
    how = draw(st.sampled_from(["plain", "compact", "window", "overlay", "list"]))
    if how == "compact" and len(ctx) > 3:
        a = draw(st.integers(1, len(ctx) - 2))
        b = draw(st.integers(a, len(ctx) - 1))
        ctx.replace_message_range(a, b, Message.system("[summary]"))
    elif how == "window":
        w = ctx.rolling_sequence_window(draw(st.integers(0, len(msgs))))
        ctx = w or ctx
    elif how == "overlay":
        ctx.put_system_prompt_overlay("overlay")
    src = msgs if how == "list" else ctx
    return src, secrets
