"""The store side by side: one turn of 4 messages saved into a context of n messages
with ``store.save`` (SQLite default = the "ctxfold" column, SQLite durable, PostgreSQL), with
``ctx.save()`` (the whole file) and with the OpenAI Agents SDK's ``SQLiteSession.add_items``;
and a load with ``store.load`` against ``Context.load`` of the file and ``SQLiteSession.get_items``.
PostgreSQL runs when CTXFOLD_TEST_POSTGRES_URL names a server (`.ci/postgres start`)."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import uuid

import pytest
from conftest import SIZES
from ctxfold import Context, Message, Store
from ctxfold.demo_transcript import build_transcript

PG = os.environ.get("CTXFOLD_TEST_POSTGRES_URL")
_HISTORY: dict[int, list[Message]] = {}


def history(n: int) -> list[Message]:
    if n not in _HISTORY:
        _HISTORY[n] = build_transcript(n)
    return _HISTORY[n]


def turns():
    """Turns of 4 messages (user, assistant with a tool call, tool result, assistant), new
    objects each time, as an agent would add them."""
    i = 0
    while True:
        i += 1
        yield build_transcript(4, seed=1000 + i)


def as_items(messages: list[Message]) -> list[dict]:
    """The same messages as Responses input items, what SQLiteSession stores."""
    items: list[dict] = []
    for m in messages:
        if m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.text})
        elif m.tool_calls:
            items.append({"role": "assistant", "content": m.text})
            items += [{"type": "function_call", "call_id": c["id"], "name": c["name"],
                       "arguments": json.dumps(c.get("arguments", {}))} for c in m.tool_calls]
        else:
            items.append({"role": m.role, "content": m.text})
    return items


class Session:
    """An Agents SDK SQLiteSession on a file, driven from one event loop."""

    def __init__(self, folder: str, n: int):
        from agents import SQLiteSession

        self.loop = asyncio.new_event_loop()
        self.s = SQLiteSession(uuid.uuid4().hex, os.path.join(folder, "agents.db"))
        self.run(self.s.add_items(as_items(history(n))))

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def close(self):
        self.s.close()
        self.loop.close()


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as d:
        yield d


def stored(url: str, n: int, durable: bool = False) -> tuple[Store, Context]:
    store = Store(url, durable=durable)
    ctx = Context()
    ctx.add_messages(history(n))
    store.save(ctx)
    return store, ctx


@pytest.mark.parametrize("n", SIZES)
def test_save_one_turn(record, folder, n):
    op = "save one turn (4 messages)"
    gen = turns()

    def timed_turns(save, ctx: Context, impl: str, rounds: int):
        def setup():
            ctx.add_messages(next(gen))
            return (), {}
        record(op, n, impl, save, setup=setup, rounds=rounds)

    store, ctx = stored(os.path.join(folder, f"default-{n}.db"), n)
    timed_turns(lambda: store.save(ctx), ctx, "ctxfold", rounds=30)
    store.close()
    store, ctx = stored(os.path.join(folder, f"durable-{n}.db"), n, durable=True)
    timed_turns(lambda: store.save(ctx), ctx, "store sqlite durable", rounds=30)
    store.close()
    if PG:
        store, ctx = stored(PG, n)
        timed_turns(lambda: store.save(ctx), ctx, "store postgresql", rounds=30)
        store.delete(ctx.id)
        store.close()
    ctx = Context()
    ctx.add_messages(history(n))
    timed_turns(lambda: ctx.save(folder), ctx, "ctx.save (file)", rounds=5)
    session = Session(folder, n)
    turn_items: list[list[dict]] = []

    def setup_items():
        turn_items.append(as_items(next(gen)))
        return (), {}
    record(op, n, "agents SQLiteSession", lambda: session.run(session.s.add_items(turn_items[-1])),
           setup=setup_items, rounds=30)
    session.close()


@pytest.mark.parametrize("n", SIZES)
def test_load(record, folder, n):
    op = "load"
    store, ctx = stored(os.path.join(folder, f"load-{n}.db"), n)
    rounds = 3 if n >= 100_000 else 10
    record(op, n, "ctxfold", lambda: store.load(ctx.id), rounds=rounds)
    store.close()
    path = ctx.save(folder)
    record(op, n, "Context.load (file)", lambda: Context.load(path), rounds=rounds)
    if PG:
        store, ctx = stored(PG, n)
        record(op, n, "store postgresql", lambda: store.load(ctx.id), rounds=rounds)
        store.delete(ctx.id)
        store.close()
    session = Session(folder, n)
    record(op, n, "agents SQLiteSession", lambda: session.run(session.s.get_items()), rounds=rounds)
    session.close()
