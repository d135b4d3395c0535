"""Provider formats under abuse: key order kept at every depth whatever order a request spelled
its objects in (the SDKs' ``model_dump()`` order included), no empty or whitespace-only
assistant text sent to Anthropic, values outside the APIs' enumerations and required keys
refused on import and never emitted, and an assistant message with nothing in it never sent
to Chat. Behind them, two properties: shuffled valid requests of every format round-trip in
their own key order, and every cross-format export of fuzzed imports validates against the
target SDK's own types."""

from __future__ import annotations

import copy
import json
import random

import pytest
from _sdk import check_anthropic, check_chat, check_responses
from ctxfold import Context, FormatError, Message, Part, formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseReasoningItem

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def text(x: object) -> str:
    return json.dumps(x, ensure_ascii=False)


def shuffled(x: object, r: random.Random) -> object:
    if isinstance(x, dict):
        items = list(x.items())
        r.shuffle(items)
        return {k: shuffled(v, r) for k, v in items}
    if isinstance(x, list):
        return [shuffled(v, r) for v in x]
    return x


# ---- key order ----------------------------------------------------------------------------


def test_a_reasoning_item_keeps_the_sdk_model_dump_order():
    item = ResponseReasoningItem(id="rs_1", summary=[{"type": "summary_text", "text": "t"}], type="reasoning",
                                 encrypted_content="enc").model_dump(exclude_unset=True)
    assert list(item)[:3] == ["id", "summary", "type"]
    out = formats.to_openai_responses(formats.from_openai_responses([item]), strict=True)["input"]
    assert text(out) == text([item])


def test_a_reasoning_item_keeps_the_sdk_order_through_a_session():
    pytest.importorskip("agents")
    import asyncio

    from ctxfold.adapters.openai_agents import ContextSession

    item = ResponseReasoningItem(id="rs_1", summary=[], type="reasoning", encrypted_content="e",
                                 status="completed").model_dump()

    async def run() -> list:
        s = ContextSession("s")
        await s.add_items([item])
        return await s.get_items()

    assert text(asyncio.run(run())) == text([item])


CHAT_MEDIA = [
    {"image_url": {"detail": "low", "url": "https://x/a.png"}, "type": "image_url"},
    {"input_audio": {"format": "wav", "data": "AAAA"}, "type": "input_audio"},
    {"file": {"filename": "a.pdf", "file_id": "f1"}, "type": "file"},
]
RESPONSES_MEDIA = [
    {"detail": "auto", "type": "input_image", "image_url": "https://x/a.png"},
    {"filename": "x.pdf", "type": "input_file", "file_id": "f"},
]


@pytest.mark.parametrize("part", CHAT_MEDIA, ids=lambda p: p["type"])
def test_chat_media_parts_keep_their_key_order(part):
    p = [{"role": "user", "content": [part]}]
    assert text(formats.to_openai_chat(formats.from_openai_chat(p), strict=True)["messages"]) == text(p)


@pytest.mark.parametrize("part", RESPONSES_MEDIA, ids=lambda p: p["type"])
def test_responses_media_parts_keep_their_key_order(part):
    p = [{"role": "user", "content": [part]}]
    assert text(formats.to_openai_responses(formats.from_openai_responses(p), strict=True)["input"]) == text(p)


def test_media_carried_over_keeps_working_in_other_formats():
    ms = formats.from_openai_chat([{"role": "user", "content": [CHAT_MEDIA[0], {"text": "look", "type": "text"}]}])
    out = formats.to_anthropic(ms)
    check_anthropic(out)
    assert out["messages"][0]["content"][0]["type"] == "image"
    r = formats.to_openai_responses(ms)
    check_responses(r)
    assert r["input"][0]["content"][0] == {"type": "input_image", "image_url": "https://x/a.png", "detail": "low"}


# ---- Anthropic: no blank assistant text ---------------------------------------------------


@pytest.mark.parametrize("blank", ["", " ", "\n", "  \t", "\u3000"], ids=repr)
@pytest.mark.parametrize("as_part", [False, True])
def test_blank_assistant_text_is_never_sent_to_anthropic(blank, as_part):
    content = [Part.text(blank)] if as_part else blank
    for tail in ([Message.user("again")], []):
        ms = [Message.user("hi"), Message.assistant(content), *tail]
        out = formats.to_anthropic(ms)
        check_anthropic(out)
        for m in out["messages"]:
            if m["role"] == "assistant":
                c = m["content"]
                assert (c.strip() if isinstance(c, str) else any(b.get("text", "x").strip() for b in c)), out


def test_blank_text_beside_a_tool_use_is_left_out():
    m = Message.assistant([Part.text(" "), Part.text("real")], tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}])
    out = formats.to_anthropic([Message.user("hi"), m, Message.tool("c1", "r")])
    check_anthropic(out)
    blocks = out["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["text", "tool_use"] and blocks[0]["text"] == "real"


# ---- enumerations and required keys -------------------------------------------------------


@pytest.mark.parametrize(("importer", "wire", "where"), [
    (formats.from_openai_chat, [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x", "detail": "bogus"}}]}], r"image_url\.detail"),
    (formats.from_openai_chat, [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x", "detail": [None]}}]}], r"image_url\.detail"),
    (formats.from_openai_chat, [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "ogg"}}]}], r"input_audio\.format"),
    (formats.from_openai_responses, [{"role": "user", "content": [
        {"type": "input_image", "image_url": "https://x", "detail": "bogus"}]}], r"detail"),
    (formats.from_openai_responses, [{"type": "reasoning", "summary": []}], r"missing \"id\""),
    (formats.from_anthropic, [{"role": "user", "content": "q"}, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t"}]}], r"missing \"signature\""),
    (formats.from_anthropic, [{"role": "user", "content": [{"type": "image", "source": {}}]}], r"source"),
    (formats.from_anthropic, [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "x"}}]}], r"media_type"),
    (formats.from_anthropic, [{"role": "user", "content": [{"type": "image"}]}], r"source"),
    (formats.from_anthropic, [{"role": "user", "content": [{"type": "document", "source": {"type": "nope"}}]}],
     r"source"),
])
def test_values_outside_the_apis_shapes_are_refused_on_import(importer, wire, where):
    with pytest.raises(FormatError, match=where):
        importer(wire)


def test_hand_built_parts_are_never_emitted_invalid():
    ms = [Message.user([Part("image", source={"type": "url", "url": "https://x"}, detail="bogus"),
                        Part("audio", source={"type": "base64", "media_type": "audio/wav", "data": "AA"}, format="ogg"),
                        Part("image", source={}), Part.text("t")]),
          Message.assistant([Part.thinking("unsigned", provider="anthropic"),
                             Part.thinking("no id", provider="openai_responses"), Part.text("a")])]
    chat, responses, anthropic = formats.to_openai_chat(ms), formats.to_openai_responses(ms), formats.to_anthropic(ms)
    check_chat(chat)
    check_responses(responses)
    check_anthropic(anthropic)
    assert "bogus" not in text(chat) + text(responses) and "ogg" not in text(chat)
    assert "unsigned" not in text(anthropic) and "no id" not in text(responses)


def test_a_chat_assistant_message_with_nothing_is_not_sent():
    p = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None}, {"role": "user", "content": "r"}]
    out = formats.to_openai_chat(formats.from_openai_chat(p))
    check_chat(out)
    assert [m["role"] for m in out["messages"]] == ["user", "user"]
    audio = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "audio": {"id": "a1"}}]
    assert formats.to_openai_chat(formats.from_openai_chat(audio), strict=True)["messages"] == audio


# ---- property: shuffled valid requests keep their key order -------------------------------

safe = st.text(min_size=1, max_size=10).filter(lambda t: t.strip())
ids = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
urls = st.sampled_from(["https://x/a.png", "https://example.com/b.jpg"])


@st.composite
def chat_requests(draw):
    out: list = [{"role": "system", "content": draw(safe), "name": "n"}]
    for n in range(draw(st.integers(1, 3))):
        parts = [{"type": "text", "text": draw(safe)}]
        parts += draw(st.lists(st.sampled_from([
            {"type": "image_url", "image_url": {"url": draw(urls), "detail": draw(st.sampled_from(["low", "high", "auto"]))}},
            {"type": "image_url", "image_url": {"url": draw(urls)}},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": draw(st.sampled_from(["wav", "mp3"]))}},
            {"type": "file", "file": {"file_id": "f1", "filename": "a.pdf"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA", "filename": "b.pdf"}},
        ]), max_size=3))
        out.append({"role": "user", "content": parts})
        cid = f"call_{n}"
        out.append({"role": "assistant", "content": draw(st.sampled_from([None, draw(safe)])), "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "f", "arguments": draw(st.text(max_size=8))}}]})
        out.append({"role": "tool", "tool_call_id": cid, "content": draw(safe)})
        out.append({"role": "assistant", "content": draw(safe), "refusal": None})
    return out


@st.composite
def responses_requests(draw):
    out: list = []
    for n in range(draw(st.integers(1, 3))):
        parts = [{"type": "input_text", "text": draw(safe)}]
        parts += draw(st.lists(st.sampled_from([
            {"type": "input_image", "image_url": draw(urls), "detail": draw(st.sampled_from(["low", "high", "auto"]))},
            {"type": "input_image", "file_id": "file_1", "detail": "auto"},
            {"type": "input_file", "file_id": "f", "filename": "x.pdf"},
            {"type": "input_file", "file_url": "https://x/y.pdf"},
        ]), max_size=3))
        out.append({"role": "user", "content": parts})
        out.append({"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": draw(safe)}],
                    "encrypted_content": draw(safe), "status": "completed"})
        cid = f"call_{n}"
        out.append({"type": "function_call", "id": f"fc_{n}", "call_id": cid, "name": "f",
                    "arguments": draw(st.text(max_size=8)), "status": "completed"})
        out.append({"type": "function_call_output", "call_id": cid, "output": draw(safe)})
        out.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                    "content": [{"type": "output_text", "text": draw(safe), "annotations": []}]})
    return out


@st.composite
def anthropic_requests(draw):
    out: list = []
    for n in range(draw(st.integers(1, 3))):
        blocks = [{"type": "text", "text": draw(safe)}]
        blocks += draw(st.lists(st.sampled_from([
            {"type": "image", "source": {"type": "url", "url": draw(urls)}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}, "title": "t"},
            {"type": "text", "text": draw(safe), "cache_control": {"type": "ephemeral"}},
        ]), max_size=3))
        out.append({"role": "user", "content": blocks})
        cid = f"toolu_{n}"
        out.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": draw(st.text(max_size=8)), "signature": draw(safe)},
            {"type": "text", "text": draw(safe)},
            {"type": "tool_use", "id": cid, "name": "f",
             "input": {"a": draw(st.integers(-(2**63), 2**63 - 1)), "b": [1, {"c": 2, "d": 3}]}}]})
        out.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": cid, "content": [{"type": "text", "text": draw(safe)}]}]})
        out.append({"role": "assistant", "content": draw(safe)})
    return out


FORMATS = {
    "openai_chat": (chat_requests(), formats.from_openai_chat, lambda ms: formats.to_openai_chat(ms, strict=True)["messages"]),
    "openai_responses": (responses_requests(), formats.from_openai_responses,
                         lambda ms: formats.to_openai_responses(ms, strict=True)["input"]),
    "anthropic": (anthropic_requests(), formats.from_anthropic, lambda ms: formats.to_anthropic(ms, strict=True)["messages"]),
}


@pytest.mark.parametrize("name", list(FORMATS))
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_shuffled_valid_requests_round_trip_in_their_own_key_order(name, data, seed):
    requests, importer, exporter = FORMATS[name]
    p = shuffled(data.draw(requests), random.Random(seed))
    assert text(exporter(importer(p))) == text(p)


# ---- property: every cross-format export of fuzzed imports fits the target's SDK types -----

CHECKS = {
    "openai_chat": lambda ms: check_chat(formats.to_openai_chat(ms)),
    "openai_responses": lambda ms: check_responses(formats.to_openai_responses(ms)),
    "anthropic": lambda ms: check_anthropic(formats.to_anthropic(ms)),
}


JUNK = st.one_of(st.sampled_from(["bogus", "ogg", "", " ", "\n"]), st.none(), st.booleans(), st.integers(-3, 3),
                 st.just([None]), st.just({}))


def _places(x: object, out: list) -> list:
    """Every (object, key) of a request, depth first."""
    if isinstance(x, dict):
        for k, v in x.items():
            out.append((x, k))
            _places(v, out)
    elif isinstance(x, list):
        for v in x:
            _places(v, out)
    return out


def _fuzzed(x: object, data: st.DataObject) -> object:
    """A valid request with one to three of its keys dropped or their values replaced by junk
    of any JSON type (a bogus enumeration value, an empty text, a null): what an importer
    must refuse or carry over safely."""
    x = copy.deepcopy(x)
    places = _places(x, [])
    for i in data.draw(st.lists(st.integers(0, len(places) - 1), min_size=1, max_size=3, unique=True)):
        obj, key = places[i]
        if key in obj:
            if data.draw(st.booleans()):
                del obj[key]
            else:
                obj[key] = data.draw(JUNK)
    return x


@pytest.mark.parametrize("name", list(FORMATS))
@settings(SETTINGS, max_examples=400)
@given(data=st.data())
def test_every_export_of_a_fuzzed_import_fits_the_sdk_types(name, data):
    requests, importer, _ = FORMATS[name]
    p = _fuzzed(data.draw(requests), data)
    try:
        ms = importer(p)
    except FormatError:
        return
    ctx = Context(messages=ms)
    for target, check in CHECKS.items():
        # Another format: what a request of this one carried over. (Into its own format an
        # import goes back as it came, unknown keys and their values included.)
        if target != name:
            check(ctx)
            check(ms)
