"""Concurrent writers on one stored session: asyncio tasks sharing a session object, sessions
sharing a store, and separate processes, on SQLite and PostgreSQL. Every item lands exactly
once, each writer's items in the order it added them (a conflict rewinds the unsaved write,
catches up with the store and redoes it)."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import Counter

import ctxfold
from _agents_support import run
from ctxfold.adapters.openai_agents import ContextSession


def item(writer: str, n: int) -> dict:
    return {"role": "user", "content": f"{writer}:{n}"}


def check_all_landed(items: list[dict], writers: list[str], per_writer: int, batch: int) -> None:
    contents = [i["content"] for i in items]
    counts = Counter(contents)
    assert len(items) == len(writers) * per_writer * batch, "items lost or duplicated"
    assert all(c == 1 for c in counts.values()), [k for k, c in counts.items() if c > 1]
    for w in writers:
        mine = [int(c.split(":")[1]) for c in contents if c.split(":")[0] == w]
        assert mine == list(range(per_writer * batch)), f"{w}'s items out of order"


async def add_turns(session: ContextSession, writer: str, turns: int, batch: int) -> None:
    for t in range(turns):
        await session.add_items([item(writer, t * batch + k) for k in range(batch)])


def test_tasks_sharing_one_session(store_url):
    session = ContextSession("tasks", store_url)
    writers = [f"t{i}" for i in range(6)]

    async def go() -> list[dict]:
        await asyncio.gather(*(add_turns(session, w, 15, 2) for w in writers))
        return await session.get_items()

    check_all_landed(run(go()), writers, 15, 2)
    session.close()


def test_tasks_each_with_its_own_session_on_one_store(store_url):
    store = ctxfold.Store(store_url)
    writers = [f"t{i}" for i in range(6)]
    sessions = {w: ContextSession("shared", store) for w in writers}

    async def go() -> list[dict]:
        await asyncio.gather(*(add_turns(sessions[w], w, 15, 3) for w in writers))
        return await ContextSession("shared", store).get_items()

    check_all_landed(run(go()), writers, 15, 3)
    # what every session now sees is the same
    views = {w: run(s.get_items()) for w, s in sessions.items()}
    assert len({len(v) for v in views.values()}) == 1
    store.close()


def _process_writer(url: str, writer: str, turns: int, batch: int) -> None:
    session = ContextSession("procs", url)
    asyncio.run(add_turns(session, writer, turns, batch))
    session.close()


def test_processes_adding_to_one_session(store_url):
    url = store_url
    ContextSession("procs", url).close()
    writers = [f"p{i}" for i in range(4)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(url, w, 25, 2)) for w in writers]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0, f"writer exited with {p.exitcode}"
    session = ContextSession("procs", url)
    check_all_landed(run(session.get_items()), writers, 25, 2)
    # the stored log is whole: seqs contiguous, one insert per item
    assert [e.seq for e in session.context.events()] == list(range(len(session.context.events())))
    session.close()


def test_pops_racing_take_each_item_once(store_url):
    """Several sessions popping the same stored session: every item is handed to exactly one."""
    store = ctxfold.Store(store_url)
    run(ContextSession("pop", store).add_items([item("x", n) for n in range(60)]))
    sessions = [ContextSession("pop", store) for _ in range(5)]

    async def drain(s: ContextSession) -> list[dict]:
        got = []
        while (one := await s.pop_item()) is not None:
            got.append(one)
        return got

    async def go() -> list[list[dict]]:
        return await asyncio.gather(*(drain(s) for s in sessions))

    popped = [i["content"] for batch in run(go()) for i in batch]
    assert sorted(popped) == sorted(f"x:{n}" for n in range(60))
    assert run(ContextSession("pop", store).get_items()) == []
    store.close()



def test_a_lost_race_catches_up_without_reloading(store_url):
    """Another writer saves between this session's catch-up and its save: the save is refused,
    the session rewinds its change, refreshes (only the new event) and redoes it; it never
    loads the history again."""
    store = ctxfold.Store(store_url)
    mine, other = ContextSession("race", store), ContextSession("race", store_url)
    run(mine.add_items([item("mine", 0)]))
    loads: list[str] = []
    real_load, real_save = store.load, store.save

    def counting_load(context_id: str) -> ctxfold.Context:
        loads.append(context_id)
        return real_load(context_id)

    def save_after_another_writer(ctx: ctxfold.Context) -> None:
        if ctx.message_count == 2 and not loads and "other" not in str(run(other.get_items())):
            run(other.add_items([item("other", 0)]))  # lands first: this save now conflicts
        real_save(ctx)

    store.load, store.save = counting_load, save_after_another_writer  # type: ignore[method-assign]
    run(mine.add_items([item("mine", 1)]))
    assert loads == []
    assert [i["content"] for i in run(mine.get_items())] == ["mine:0", "other:0", "mine:1"]
    assert [e.seq for e in mine.context.events()] == [0, 1, 2]
    other.close()
    store.close()
