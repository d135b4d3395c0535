"""An image costs the documented flat 85 tokens however it arrived: ctxfold's own image part,
an OpenAI Chat ``image_url`` part, a Responses ``input_image`` item part, an Anthropic
``image`` block — imported through the formats or given as a part as it came. None of its
text (a URL, base64 bytes) is counted."""

from __future__ import annotations

import pytest
from ctxfold import Context, Message, Part, formats

URL = "https://example.com/a/rather/long/path/to/a-picture-of-a-cat-on-a-mat.png"
DATA = "iVBORw0KGgoAAAANSUhEUgAA" * 40
ENCS = ["cl100k_base", "o200k_base"]
QUESTION = "What is in this picture?"


def imported() -> dict[str, Message]:
    """One user message (the question, then one image) per way an image comes in."""
    chat = formats.from_openai_chat([{"role": "user", "content": [
        {"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": URL, "detail": "high"}}]}])
    chat_data = formats.from_openai_chat([{"role": "user", "content": [
        {"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}}]}])
    responses = formats.from_openai_responses([{"role": "user", "content": [
        {"type": "input_text", "text": QUESTION}, {"type": "input_image", "image_url": URL, "detail": "auto"}]}])
    responses_file = formats.from_openai_responses([{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": QUESTION}, {"type": "input_image", "file_id": "file-abc123"}]}])
    anthropic = formats.from_anthropic([{"role": "user", "content": [
        {"type": "text", "text": QUESTION}, {"type": "image", "source": {"type": "url", "url": URL}}]}])
    anthropic_b64 = formats.from_anthropic([{"role": "user", "content": [
        {"type": "text", "text": QUESTION},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": DATA}}]}])
    return {
        "Part.image": Message.user([Part.text(QUESTION), Part.image({"type": "url", "url": URL})]),
        "Part.image, a URL string": Message.user([Part.text(QUESTION), Part.image(URL)]),
        "a Chat image_url part as it came": Message.user([
            Part.text(QUESTION), Part.from_dict({"type": "image_url", "image_url": {"url": URL}})]),
        "a Responses input_image part as it came": Message.user([
            Part.text(QUESTION), Part.from_dict({"type": "input_image", "image_url": URL})]),
        "from_openai_chat": chat[0],
        "from_openai_chat, a data URL": chat_data[0],
        "from_openai_responses": responses[0],
        "from_openai_responses, a file id": responses_file[0],
        "from_anthropic": anthropic[0],
        "from_anthropic, base64": anthropic_b64[0],
    }


@pytest.mark.parametrize("enc", ENCS)
@pytest.mark.parametrize("how", list(imported()))
def test_an_image_costs_85_tokens_however_it_arrived(enc: str, how: str) -> None:
    m = imported()[how]
    assert [p.type for p in m.parts][0] == "text" and len(m.parts) == 2
    text_only = Message.user([Part.text(QUESTION)]).count_tokens(enc)
    assert m.count_tokens(enc) == text_only + 85, how


@pytest.mark.parametrize("enc", ENCS)
def test_a_context_of_images_counts_85_per_image(enc: str) -> None:
    messages = list(imported().values())
    ctx = Context(messages=messages)
    text_only = Message.user([Part.text(QUESTION)]).count_tokens(enc)
    assert ctx.total_token_count(enc) == len(messages) * (text_only + 85)
    # The windows budget with the same counts: exactly three image messages fit.
    window = ctx.rolling_token_window(3 * (text_only + 85), enc)
    assert window is not None and window.message_count == 3
