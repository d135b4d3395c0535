"""ContextSessionService's own promises beside ADK's: compaction events as non-destructive
compactions of the Context (shown as ADK's request builder shows them), recent reads that read
only the end of the log, stale writers refused with nothing written, temp state never stored,
and the Context ids a store lists."""

from __future__ import annotations

import asyncio
import random

import pytest
from _adk import Clock, close, make_event, make_service
from _stores import Sql
from ctxfold import Store
from ctxfold.adapters.google_adk import ContextSessionService, context_id
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.flows.llm_flows.contents import _process_compaction_events
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.frameworks


def text_event(n: int, ts: float, **kw) -> Event:
    return Event(id=f"e{n}", invocation_id="inv", author="user" if n % 2 == 0 else "agent", timestamp=ts,
                 content=types.Content(role="user" if n % 2 == 0 else "model", parts=[types.Part(text=f"m{n}")]), **kw)


def compaction(n: int, ts: float, start: float, end: float) -> Event:
    summary = types.Content(role="model", parts=[types.Part(text=f"summary of {start}-{end}")])
    return Event(id=f"c{n}", invocation_id="inv", author="agent", timestamp=ts,
                 actions=EventActions(compaction=EventCompaction(start_timestamp=start, end_timestamp=end,
                                                                 compacted_content=summary)))


def shown(events) -> list[str]:
    return ["".join(p.text or "" for p in (e.content.parts or [])) for e in events if e.content is not None]


@pytest.fixture(params=["ctxfold-memory", "ctxfold-sqlite", "ctxfold-postgres"])
def service(request, tmp_path):
    s = make_service(request.param, request, tmp_path)
    yield s
    asyncio.run(close(s))


@pytest.mark.parametrize("seed", range(6))
def test_compactions_fold_as_adks_request_builder_shows_them(service, seed):
    """Random sessions with compactions (each over a range since the previous one, or a range
    that takes earlier summaries in): the Context's transcript is what ADK's request builder
    makes of the session's events, and every event is still in the session and the log."""
    r = random.Random(seed)

    async def go():
        s = await service.create_session(app_name="a", user_id="u", session_id="s")
        stamps: list[float] = []
        ts = 100.0
        for n in range(60):
            ts += 1.0
            if stamps and r.random() < 0.15:
                first = r.randrange(len(stamps))
                last = r.randrange(first, len(stamps))
                await service.append_event(s, compaction(n, ts, stamps[first], stamps[last]))
            else:
                await service.append_event(s, text_event(n, ts))
                stamps.append(ts)
        got = await service.get_session(app_name="a", user_id="u", session_id="s")
        return s, got, service.context("a", "u", "s")

    appended, got, ctx = asyncio.run(go())
    assert got.events == appended.events
    view = _process_compaction_events(got.events)
    assert [m.text for m in ctx.messages] == shown(view)
    assert sum(1 for e in ctx.events() if e.message is not None and "adk_event" in e.message.metadata) == 60


def test_recent_reads_read_only_the_end_of_the_log(tmp_path):
    """num_recent_events=k and after_timestamp read about k rows from the store, whatever the
    session's length; the Context is never loaded."""

    class CountingStore(Store):
        rows = 0
        loads = 0

        def tail(self, context_id, count, *, before=None):
            t = super().tail(context_id, count, before=before)
            CountingStore.rows += len(t.events)
            return t

        def load(self, context_id):
            CountingStore.loads += 1
            return super().load(context_id)

    async def go():
        writer = ContextSessionService(str(tmp_path / "s.db"))
        s = await writer.create_session(app_name="a", user_id="u", session_id="s")
        reads = {}
        for length in (50, 2000):
            while len(s.events) < length:
                n = len(s.events)
                await writer.append_event(s, text_event(n, 1000.0 + n))
            reader = ContextSessionService(CountingStore(str(tmp_path / "s.db")))
            CountingStore.rows = CountingStore.loads = 0
            recent = await reader.get_session(app_name="a", user_id="u", session_id="s",
                                              config=GetSessionConfig(num_recent_events=10))
            since = await reader.get_session(app_name="a", user_id="u", session_id="s",
                                             config=GetSessionConfig(after_timestamp=1000.0 + length - 5))
            assert [e.id for e in recent.events] == [f"e{n}" for n in range(length - 10, length)]
            assert [e.id for e in since.events] == [f"e{n}" for n in range(length - 5, length)]
            reads[length] = (CountingStore.rows, CountingStore.loads)
            reader.store.close()
        await writer.close()
        return reads

    reads = asyncio.run(go())
    assert reads[50] == reads[2000]
    rows, loads = reads[2000]
    assert loads == 0 and rows <= 10 + 4 + 16 + 32


def test_a_stale_writer_is_refused_and_nothing_is_written(tmp_path):
    async def go():
        url = str(tmp_path / "s.db")
        a, b = ContextSessionService(url), ContextSessionService(url)
        await a.create_session(app_name="a", user_id="u", session_id="s")
        sa = await a.get_session(app_name="a", user_id="u", session_id="s")
        sb = await b.get_session(app_name="a", user_id="u", session_id="s")
        await b.append_event(sb, text_event(0, 10.0, actions=EventActions(state_delta={"k": "b"})))
        with pytest.raises(StaleSessionError, match="modified in storage since it was loaded"):
            await a.append_event(sa, text_event(1, 11.0, actions=EventActions(state_delta={"k": "a"})))
        after = await a.get_session(app_name="a", user_id="u", session_id="s")
        assert [e.id for e in after.events] == ["e0"] and after.state == {"k": "b"}
        # Read again, the same writer appends.
        await a.append_event(after, text_event(1, 11.0))
        final = await b.get_session(app_name="a", user_id="u", session_id="s")
        assert [e.id for e in final.events] == ["e0", "e1"]
        await a.close()
        await b.close()

    asyncio.run(go())


def test_sessions_are_keyed_by_app_user_and_id(service):
    async def go():
        await service.create_session(app_name="app/x", user_id="alice", session_id="same")
        await service.create_session(app_name="app/x", user_id="bob", session_id="same", state={"who": "bob"})
        with pytest.raises(AlreadyExistsError):
            await service.create_session(app_name="app/x", user_id="bob", session_id="same")
        alice = await service.get_session(app_name="app/x", user_id="alice", session_id="same")
        bob = await service.get_session(app_name="app/x", user_id="bob", session_id="same")
        assert alice.state == {} and bob.state == {"who": "bob"}
        listed = await service.list_sessions(app_name="app/x")
        assert sorted(s.user_id for s in listed.sessions) == ["alice", "bob"]
        assert (await service.list_sessions(app_name="app")).sessions == []
        with pytest.raises(SessionNotFoundError):
            await service.append_event(alice.model_copy(update={"id": "nope"}), text_event(0, 1.0))
        # A service given a URL keeps its sessions in an AsyncStore it opened.
        return None if service.store is None else {c.id for c in await service.store.list()}

    ids = asyncio.run(go())
    assert context_id("app/x", "bob", "same") == "adk/app%2Fx/bob/same"
    if ids is not None:
        assert {"adk/app%2Fx/alice/same", "adk/app%2Fx/bob/same"} <= ids


def test_temp_state_is_never_stored_and_partial_events_are_not_appended(tmp_path):
    url = f"sqlite://{tmp_path}/s.db"

    async def go():
        service = ContextSessionService(url)
        s = await service.create_session(app_name="a", user_id="u", session_id="s",
                                         state={"temp:secret_sauce": 1, "kept": 2})
        event = text_event(0, 5.0, actions=EventActions(state_delta={"temp:secret_sauce": 3, "user:x": 4}))
        await service.append_event(s, event)
        assert s.state["temp:secret_sauce"] == 3  # the session object has it for the invocation
        partial = text_event(1, 6.0, partial=True)
        assert await service.append_event(s, partial) is partial
        # An equal re-delivery is not appended twice.
        await service.append_event(s, event.model_copy(deep=True))
        got = await service.get_session(app_name="a", user_id="u", session_id="s")
        await service.close()
        return got

    got = asyncio.run(go())
    assert [e.id for e in got.events] == ["e0"]
    assert got.state == {"kept": 2, "user:x": 4}
    sql = Sql(url)
    texts = [r[0] for r in sql.run("SELECT data FROM ctxfold_events")] + [r[0] for r in sql.run(
        "SELECT state FROM ctxfold_contexts")]
    assert texts and not any("secret_sauce" in t for t in texts)


def test_random_events_come_back_equal(service):
    r = random.Random(7)
    clock = Clock()

    async def go():
        s = await service.create_session(app_name="a", user_id="u", session_id="s")
        appended = []
        for n in range(40):
            e = make_event(r, clock, n, [])
            appended.append(await service.append_event(s, e))
        got = await service.get_session(app_name="a", user_id="u", session_id="s")
        return appended, got

    appended, got = asyncio.run(go())
    assert got.events == appended


def test_overlapping_contained_and_repeated_compactions(service):
    """Each case of ADK's rules: a partly overlapping range keeps the earlier summary, a range
    inside a shown one is superseded, the same range again replaces the summary, and a summary
    whose place lies inside the transcript is inserted there."""
    steps = [("c", 1.0, 7.0), ("c", 3.0, 7.5), ("c", 2.0, 4.0), ("c", 1.0, 7.0), ("c", 8.5, 9.0), ("c", 8.0, 10.0)]

    async def go():
        s = await service.create_session(app_name="a", user_id="u", session_id="s")
        for n in range(1, 11):
            await service.append_event(s, text_event(n, float(n)))
        ts = 20.0
        views = []
        for n, (_, start, end) in enumerate(steps):
            ts += 1
            await service.append_event(s, compaction(n, ts, start, end))
            got = await service.get_session(app_name="a", user_id="u", session_id="s")
            ctx = service.context("a", "u", "s")
            views.append(([m.text for m in ctx.messages], shown(_process_compaction_events(got.events))))
            if service.store is not None:
                assert (await service.store.load(ctx.id)).messages == ctx.messages
        return views, ctx

    views, ctx = asyncio.run(go())
    for i, (have, want) in enumerate(views):
        assert have == want, (i, steps[i])
    assert views[1][0][:3] == ["summary of 1.0-7.0", "summary of 3.0-7.5", "m8"]
    assert len(ctx.anchor_points) > 3  # a summary was inserted inside the transcript
    assert len(ctx.events()) > 16


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.just(None), st.tuples(st.integers(0, 30), st.integers(0, 30))), min_size=1, max_size=40))
def test_any_sequence_of_events_and_compactions_folds_as_adk_shows_it(steps):
    """The rule over sequences: whatever events and compaction ranges (by the indexes of
    earlier events, in any order, overlapping or not) are appended, the Context's transcript is
    ADK's view of the session, and the session gives every event back."""

    async def go():
        service = ContextSessionService()
        s = await service.create_session(app_name="a", user_id="u", session_id="s")
        stamps: list[float] = []
        for n, step in enumerate(steps):
            ts = 10.0 + n
            if step is None or not stamps:
                await service.append_event(s, text_event(n, ts))
                stamps.append(ts)
            else:
                i, j = sorted(k % len(stamps) for k in step)
                await service.append_event(s, compaction(n, ts, stamps[i], stamps[j]))
        got = await service.get_session(app_name="a", user_id="u", session_id="s")
        return s, got, service.context("a", "u", "s")

    appended, got, ctx = asyncio.run(go())
    assert got.events == appended.events and len(got.events) == len(steps)
    assert [m.text for m in ctx.messages] == shown(_process_compaction_events(got.events))


def test_returned_state_is_a_copy(service):
    async def go():
        s = await service.create_session(app_name="a", user_id="u", session_id="s", state={"tags": ["x"]})
        s.state["tags"].append("from create")
        got = await service.get_session(app_name="a", user_id="u", session_id="s")
        got.state["tags"].append("from get")
        await service.append_event(got, text_event(0, 5.0, actions=EventActions(state_delta={"n": 1})))
        return await service.get_session(app_name="a", user_id="u", session_id="s")

    assert asyncio.run(go()).state == {"tags": ["x"], "n": 1}
