"""The Agents SDK session keeps items that are not Responses items (``EncryptedSession``'s
envelopes, anything without a ``type`` or a ``role``) opaque and byte-exact, so the SDK's
wrappers work on top of it."""

from __future__ import annotations

import asyncio
import json

import pytest
from agents.extensions.memory.encrypt_session import EncryptedSession
from ctxfold.adapters.openai_agents import ContextSession

pytestmark = pytest.mark.frameworks

ITEMS = [
    {"role": "user", "content": "hello"},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'},
    {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    {"role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}],
     "type": "message", "status": "completed", "id": "msg_1"},
]


@pytest.mark.parametrize("where", ["memory", "store"])
def test_encrypted_session_on_a_context_session(where, store_url):
    async def go() -> None:
        backend = ContextSession("enc", None if where == "memory" else store_url)
        try:
            session = EncryptedSession("enc", backend, "a-high-entropy-test-key-0123456789", ttl=600)
            await session.add_items(json.loads(json.dumps(ITEMS)))
            assert await session.get_items() == ITEMS
            stored = await backend.get_items()
            assert len(stored) == len(ITEMS) and all("__enc__" in i and "role" not in i for i in stored)
            assert await session.pop_item() == ITEMS[-1]
            assert await session.get_items(limit=2) == ITEMS[1:3]
        finally:
            backend.close()

    asyncio.run(go())


def test_opaque_items_come_back_byte_exact():
    odd = [{"__enc__": 1, "payload": "gAAAA=="}, {"x": [1, {"y": None}], "z": "\u0000é"}, {}]

    async def go() -> list:
        s = ContextSession("o")
        await s.add_items([{"role": "user", "content": "hi"}, *json.loads(json.dumps(odd))])
        got = await s.get_items()
        assert s.context.message_count == 4
        return got

    got = asyncio.run(go())
    assert [json.dumps(i, sort_keys=True) for i in got[1:]] == [json.dumps(i, sort_keys=True) for i in odd]
    assert got[1:] == odd
