"""An assistant item's ``output_text`` parts come back from the Responses format with the keys
they came with: ``annotations`` when it was there, none added when it was not (the SDK's own
sessions give an item back as it was stored, and the Agents SDK session compares items
byte-exact)."""

from __future__ import annotations

import json

import pytest
from ctxfold import formats

BARE = {"type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "world"}]}
ANNOTATED = {"type": "message", "role": "assistant", "status": "completed", "id": "msg_1",
             "content": [{"type": "output_text", "text": "hi", "annotations": [], "logprobs": []},
                         {"type": "output_text", "text": "there", "annotations": [
                             {"type": "url_citation", "url": "https://example.com", "title": "x",
                              "start_index": 0, "end_index": 5}]}]}


@pytest.mark.parametrize("item", [BARE, ANNOTATED, {**BARE, "content": [*BARE["content"], *ANNOTATED["content"]]}])
def test_output_text_round_trips_byte_exact(item):
    messages = formats.from_openai_responses([item])
    back = formats.to_openai_responses(messages, pair=False)["input"]
    assert [json.dumps(i) for i in back] == [json.dumps(item)]


def test_the_text_is_still_the_messages_text():
    [m] = formats.from_openai_responses([BARE])
    assert m.role == "assistant" and m.text == "world"
    # Other formats get the text as theirs.
    assert formats.to_openai_chat([m])["messages"][0]["content"] == [{"type": "text", "text": "world"}]
