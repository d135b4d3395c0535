"""Hypothesis: every export of generated transcripts — with compaction, windows, dangling calls,
orphan results, parallel calls, long and odd ids, images in tool results, thinking from each
provider and from none, empty texts — validates against the SDKs' types and keeps the APIs'
rules; generated valid requests round-trip byte-exact."""

from __future__ import annotations

import json

from _sdk import check_anthropic, check_chat, check_responses, no_reasoning_leak
from ctxfold import Context, Message, Part, ToolDefinitionsMessage, formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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
PROVIDERS = (None, "anthropic", "openai_responses", "openai_chat", "gemini")


@st.composite
def thinking(draw, n: int):
    prov = draw(st.sampled_from(PROVIDERS))
    secret = f"SECRET{n}x{prov}"
    extra = {"provider": prov} if prov else {}
    if prov == "anthropic":
        extra["signature"] = f"sig{n}"
    if prov == "openai_responses":
        extra["id"] = f"rs_{n}"
        extra["summary"] = [{"type": "summary_text", "text": secret}]
    return Part.thinking(secret, **extra), secret, prov


@st.composite
def transcripts(draw):
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
            p, s, prov = draw(thinking(turn * 10 + k))
            content.append(p)
            secrets.append((s, prov))
        if draw(st.booleans()):
            content.append(Part.text(draw(texts)))
        calls = []
        for c in range(draw(st.integers(0, 3))):
            cid = draw(ids)
            args = draw(st.sampled_from(['{"a": 1}', "{}", {"k": "é"}, "not json"]))
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
                msgs.append(
                    Message.user(
                        [
                            Part.tool_result(cid, draw(st.sampled_from(["r", [Part.text("r").to_dict(), IMAGE.to_dict()]]))),
                            Part.text(draw(texts)),
                        ]
                    )
                )
            elif how == "later":
                msgs.append(Message.user("interlude"))
                msgs.append(Message.tool(cid, "late"))
        if draw(st.booleans()):
            msgs.append(Message.tool(draw(ids), "orphan"))
    return msgs, secrets


@st.composite
def sources(draw):
    msgs, secrets = draw(transcripts())
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


@SETTINGS
@given(sources())
def test_every_export_is_valid(src_secrets):
    src, secrets = src_secrets
    every = [s for s, _ in secrets]
    chat = formats.to_openai_chat(src)
    check_chat(chat)
    no_reasoning_leak(chat, every, [])
    ant = formats.to_anthropic(src)
    check_anthropic(ant)
    no_reasoning_leak(ant, every, [s for s, p in secrets if p == "anthropic"])
    resp = formats.to_openai_responses(src)
    check_responses(resp)
    no_reasoning_leak(resp, every, [s for s, p in secrets if p == "openai_responses"])


# ---- generated valid requests round-trip --------------------------------------------------

word_ids = st.from_regex(r"[A-Za-z0-9_-]{1,30}", fullmatch=True)
safe = st.text(min_size=1, max_size=15).filter(lambda t: t.strip())


@st.composite
def chat_requests(draw):
    out = [{"role": "system", "content": draw(safe)}]
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(st.sampled_from([draw(safe), [{"type": "text", "text": draw(safe)}]]))})
        cids = [i for i in draw(st.lists(word_ids, max_size=3, unique=True)) if i not in used]
        used.update(cids)
        if cids:
            out.append(
                {
                    "role": "assistant",
                    "content": draw(st.sampled_from([None, draw(safe)])),
                    "tool_calls": [
                        {"id": c, "type": "function", "function": {"name": "f", "arguments": draw(st.text(max_size=10))}}
                        for c in cids
                    ],
                }
            )
            for c in cids:
                out.append({"role": "tool", "tool_call_id": c, "content": draw(safe)})
        out.append({"role": "assistant", "content": draw(safe)})
    return out


@st.composite
def anthropic_requests(draw):
    out = []
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(st.sampled_from([draw(safe), [{"type": "text", "text": draw(safe)}]]))})
        cids = [i for i in draw(st.lists(word_ids, max_size=3, unique=True)) if i not in used]
        used.update(cids)
        blocks = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(st.text(max_size=10)), "signature": draw(safe)})
        blocks.append({"type": "text", "text": draw(safe)})
        blocks += [
            {"type": "tool_use", "id": c, "name": "f", "input": {"x": draw(st.integers(-(2**63), 2**63 - 1))}} for c in cids
        ]
        out.append({"role": "assistant", "content": blocks})
        if cids:
            res = [{"type": "tool_result", "tool_use_id": c, "content": draw(safe)} for c in draw(st.permutations(cids))]
            if draw(st.booleans()):
                res.append({"type": "text", "text": draw(safe)})
            out.append({"role": "user", "content": res})
            out.append({"role": "assistant", "content": draw(safe)})
    return out


@st.composite
def responses_requests(draw):
    out = []
    used: set[str] = set()
    for n in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(safe)})
        if draw(st.booleans()):
            out.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{n}",
                    "summary": [{"type": "summary_text", "text": draw(st.text(max_size=8))}],
                    "encrypted_content": draw(safe),
                }
            )
        cids = [i for i in draw(st.lists(word_ids, max_size=3, unique=True)) if i not in used]
        used.update(cids)
        for c in cids:
            out.append({"type": "function_call", "call_id": c, "name": "f", "arguments": draw(st.text(max_size=10))})
        for c in cids:
            out.append({"type": "function_call_output", "call_id": c, "output": draw(safe)})
        out.append(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{n}",
                "status": "completed",
                "content": [{"type": "output_text", "text": draw(safe), "annotations": []}],
            }
        )
    return out


@SETTINGS
@given(chat_requests())
def test_generated_chat_requests_round_trip(p):
    out = formats.to_openai_chat(formats.from_openai_chat(p), strict=True)
    assert json.dumps(out["messages"]) == json.dumps(p)


@SETTINGS
@given(
    anthropic_requests(), st.sampled_from([None, "sys", [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]])
)
def test_generated_anthropic_requests_round_trip(p, system):
    out = formats.to_anthropic(formats.from_anthropic(p, system=system), strict=True)
    want = ({"system": system} if system is not None else {}) | {"messages": p}
    assert json.dumps(out) == json.dumps(want)


@SETTINGS
@given(responses_requests())
def test_generated_responses_requests_round_trip(p):
    out = formats.to_openai_responses(formats.from_openai_responses(p), strict=True)
    assert json.dumps(out["input"]) == json.dumps(p)
