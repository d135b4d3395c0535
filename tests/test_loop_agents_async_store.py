"""The Agents SDK session on an ``AsyncStore``: a URL opens one, one passed in is shared, and
the Context behind a session is not shown before the session has read its store."""

from __future__ import annotations

import asyncio

import pytest
from ctxfold import AsyncStore, Context
from ctxfold.adapters.openai_agents import ContextSession


def test_a_url_session_uses_an_async_store(store_url):
    s = ContextSession("s", store_url)
    assert isinstance(s.store, AsyncStore)
    with pytest.raises(RuntimeError, match="has not read its store yet"):
        s.context  # noqa: B018
    asyncio.run(s.add_items([{"role": "user", "content": "hi"}]))
    assert [m.text for m in s.context.messages] == ["hi"]
    s.close()


def test_sessions_sharing_an_async_store(store_url):
    async def go() -> tuple[list, Context]:
        async with AsyncStore(store_url) as store:
            a, b = ContextSession("shared", store), ContextSession("shared", store)
            await asyncio.gather(*(x.add_items([{"role": "user", "content": f"{n}"}])
                                   for n, x in enumerate([a, b, a, b])))
            items = await b.get_items()
            a.close()  # the store is the caller's: still open
            return items, await store.load("shared")

    items, stored = asyncio.run(go())
    assert sorted(i["content"] for i in items) == ["0", "1", "2", "3"]
    assert stored.message_count == 4


def test_one_session_shared_by_threads_each_with_its_own_loop(store_url):
    """As the SDK's own concurrency test drives it: every thread runs its own event loop."""
    from concurrent.futures import ThreadPoolExecutor

    s = ContextSession("threads", store_url)
    with ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(lambda n: asyncio.run(s.add_items([{"role": "user", "content": f"m{n}"}])), range(20)))
    got = asyncio.run(s.get_items())
    assert sorted(i["content"] for i in got) == sorted(f"m{n}" for n in range(20))
    s.close()
