"""ContextSessionService on a ``ctxfold.AsyncStore`` (given one, or a URL it opens as one): the
service's calls await the store's coroutines instead of sending blocking calls to worker
threads, behave as on a blocking ``Store`` (one database, either kind of store on it), and the
store passed in stays the caller's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _adk import play, scenario
from ctxfold import AsyncStore, Store
from ctxfold.adapters.google_adk import ContextSessionService
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

pytestmark = pytest.mark.frameworks


def event(n: int, ts: float) -> Event:
    return Event(id=f"e{n}", invocation_id="inv", author="user", timestamp=ts,
                 content=types.Content(role="user", parts=[types.Part(text=f"m{n}")]))


def test_a_url_is_opened_as_an_async_store(store_url):
    async def go() -> None:
        service = ContextSessionService(store_url)
        assert isinstance(service.store, AsyncStore)
        await service.create_session(app_name="a", user_id="u", session_id="s")
        await service.close()
        from ctxfold import StoreError

        with pytest.raises(StoreError):  # closed with the service that opened it
            await service.store.list()

    asyncio.run(go())


def test_no_call_sends_store_work_to_a_thread_on_postgres(pg_url, monkeypatch):
    """On PostgreSQL every database call is psycopg's async I/O: ``asyncio.to_thread`` (what
    the service used for a blocking Store) is never called."""

    async def forbidden(*args: Any, **kw: Any) -> Any:
        raise AssertionError("store work sent to a worker thread")

    async def go() -> list[Any]:
        async with AsyncStore(pg_url) as store:
            service = ContextSessionService(store)
            monkeypatch.setattr(asyncio, "to_thread", forbidden)
            calls = scenario(3, 40)
            return await play(service, calls)

    results = asyncio.run(go())
    assert results and ("raised", "AssertionError") not in results


@pytest.mark.parametrize("seed", range(3))
def test_the_same_outcomes_on_an_async_store_and_a_blocking_store(tmp_path, seed):
    """A seeded random scenario of ADK calls gives the same outcome, call by call, on a service
    over an AsyncStore as over a Store."""
    calls = scenario(seed, 60)

    async def go(store: Any) -> list[Any]:
        return await play(ContextSessionService(store), calls)

    with Store(tmp_path / "blocking.db") as blocking:
        want = asyncio.run(go(blocking))

    async def on_async() -> list[Any]:
        async with AsyncStore(tmp_path / "async.db") as store:
            return await go(store)

    assert asyncio.run(on_async()) == want


def test_an_async_store_and_a_blocking_store_on_one_database(store_url):
    """A service on an AsyncStore and one on a Store of the same database see each other's
    appends, and a stale writer is refused whichever it is."""

    async def go() -> None:
        async with AsyncStore(store_url) as astore:
            with Store(store_url) as store:
                a, b = ContextSessionService(astore), ContextSessionService(store)
                await a.create_session(app_name="a", user_id="u", session_id="s", state={"app:k": 1})
                sa = await a.get_session(app_name="a", user_id="u", session_id="s")
                sb = await b.get_session(app_name="a", user_id="u", session_id="s")
                assert sb.state == {"app:k": 1}
                await b.append_event(sb, event(0, 10.0))
                with pytest.raises(StaleSessionError):
                    await a.append_event(sa, event(1, 11.0))
                sa = await a.get_session(app_name="a", user_id="u", session_id="s")
                await a.append_event(sa, event(1, 11.0))
                recent = await b.get_session(app_name="a", user_id="u", session_id="s",
                                             config=GetSessionConfig(num_recent_events=1))
                assert [e.id for e in recent.events] == ["e1"]
                listed = await b.list_sessions(app_name="a")
                assert [s.id for s in listed.sessions] == ["s"]
                # The stores passed in are the caller's: closing the services leaves them open.
                await a.close()
                await b.close()
                assert [c.id for c in await astore.list()] and store.list()

    asyncio.run(go())


def test_context_on_an_async_store_is_the_copy_the_service_last_read(sqlite_url):
    async def go() -> None:
        service = ContextSessionService(sqlite_url)
        other = ContextSessionService(sqlite_url)
        try:
            await other.create_session(app_name="a", user_id="u", session_id="s")
            with pytest.raises(RuntimeError, match="get_session"):
                service.context("a", "u", "s")
            s = await service.get_session(app_name="a", user_id="u", session_id="s")
            await service.append_event(s, event(0, 10.0))
            ctx = service.context("a", "u", "s")
            assert ctx is not None and [m.text for m in ctx.messages] == ["m0"]
        finally:
            await service.close()
            await other.close()

    asyncio.run(go())


def test_a_cancelled_append_runs_to_its_end(sqlite_url):
    async def go() -> None:
        service = ContextSessionService(sqlite_url)
        try:
            s = await service.create_session(app_name="a", user_id="u", session_id="s")
            task = asyncio.ensure_future(service.append_event(s, event(0, 10.0)))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The append, once started, was not cut short: the session holds the event, whole.
            for _ in range(100):
                got = await service.get_session(app_name="a", user_id="u", session_id="s")
                if got.events:
                    break
                await asyncio.sleep(0.01)
            assert len(got.events) == 1
        finally:
            await service.close()

    asyncio.run(go())


@pytest.mark.parametrize("where", ["memory", "async-store"])
def test_one_service_shared_by_threads_each_with_its_own_loop(where, sqlite_url):
    """Two threads, each running its own event loop, append to one session through one service:
    the per-session lock orders them across loops, stale copies are refused and retried, and
    every event is stored once."""
    import threading

    service = ContextSessionService(None if where == "memory" else sqlite_url)
    asyncio.run(service.create_session(app_name="a", user_id="u", session_id="s"))
    errors: list[BaseException] = []

    def writer(me: int) -> None:
        async def go() -> None:
            for n in range(25):
                while True:
                    s = await service.get_session(app_name="a", user_id="u", session_id="s")
                    try:
                        await service.append_event(s, Event(id=f"w{me}-{n}", invocation_id="inv", author=f"w{me}",
                                                            timestamp=float(n)))
                        break
                    except StaleSessionError:
                        continue

        try:
            asyncio.run(go())
        except BaseException as e:  # reported below, with the thread's traceback
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    got = asyncio.run(service.get_session(app_name="a", user_id="u", session_id="s"))
    ids = [e.id for e in got.events]
    assert sorted(ids) == sorted(f"w{m}-{n}" for m in range(2) for n in range(25))
    for m in range(2):
        assert [i for i in ids if i.startswith(f"w{m}-")] == [f"w{m}-{n}" for n in range(25)]
    asyncio.run(service.close())
