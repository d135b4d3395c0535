"""Hypothesis: every export of generated transcripts — with compaction, windows, dangling calls,
orphan results, parallel calls, long and odd ids, images in tool results, thinking from each
provider and from none, empty texts — validates against the SDKs' types and keeps the APIs'
rules; generated valid requests round-trip byte-exact."""

from __future__ import annotations

import json

from _sdk import check_anthropic, check_chat, check_responses, no_reasoning_leak
from _transcripts import sources
from ctxfold import formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Reasoning from each provider the core exports to, from one it does not, and from none.
PROVIDERS = (None, "anthropic", "openai_responses", "openai_chat", "gemini")


@SETTINGS
@given(sources(PROVIDERS))
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
