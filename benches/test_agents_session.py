"""The OpenAI Agents SDK session, side by side: ctxfold's ContextSession on a SQLite
``ctxfold.Store`` vs the SDK's file-backed ``SQLiteSession`` vs its ``SQLAlchemySession`` on
SQLite (aiosqlite), with ``n`` items of history already stored. Per call: ``add_items`` of one
turn (user message, reasoning, function call, its output, the answer) and ``get_items()`` /
``get_items(limit=50)``. ``ContextSession in memory`` (no store) is there to show the
adapter's own cost apart from the store's. Targets: add_items flat in ``n`` and not slower than SQLiteSession;
get_items(limit) independent of ``n``."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import ctxfold
import pytest
from agents import SQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from conftest import SIZES
from ctxfold.adapters.openai_agents import ContextSession

_turns = itertools.count()


def turn() -> list[dict]:
    t = next(_turns)
    call = f"call_{t}"
    return [
        {"role": "user", "content": f"Question {t}: what is the weather in city number {t}?"},
        {
            "id": f"rs_{t}",
            "summary": [{"text": "I should look it up.", "type": "summary_text"}],
            "type": "reasoning",
            "encrypted_content": "gAAAAABo" + "x" * 200,
        },
        {
            "arguments": f'{{"city": "city {t}"}}',
            "call_id": call,
            "name": "get_weather",
            "type": "function_call",
            "id": f"fc_{t}",
        },
        {"call_id": call, "output": '{"temp": 21, "sky": "clear", "wind": "3 km/h NW"}', "type": "function_call_output"},
        {
            "id": f"msg_{t}",
            "content": [
                {"annotations": [], "text": f"City {t}: 21°C, clear, light wind.", "type": "output_text", "logprobs": []}
            ],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
    ]


def history(n: int) -> list[dict]:
    return [i for _ in range(n // 5) for i in turn()]


@pytest.fixture(scope="module")
def loop():
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory, loop):
    """One session per (implementation, n), each filled with n items once."""
    made: dict[tuple[str, int], object] = {}
    root: Path = tmp_path_factory.mktemp("agents-sessions")
    stores: list[ctxfold.Store] = []

    def get(impl: str, n: int):
        key = (impl, n)
        if key not in made:
            if impl == "ctxfold":
                store = ctxfold.Store(f"sqlite:///{root / f'ctxfold-{n}.db'}")
                stores.append(store)
                s: object = ContextSession(f"bench-{n}", store)
            elif impl == "ContextSession in memory":
                s = ContextSession(f"bench-{n}")
            elif impl == "SQLiteSession":
                s = SQLiteSession(f"bench-{n}", root / f"sdk-{n}.sqlite3")
            else:
                s = SQLAlchemySession.from_url(f"bench-{n}", url=f"sqlite+aiosqlite:///{root / f'sa-{n}.db'}", create_tables=True)
            loop.run_until_complete(s.add_items(history(n)))  # type: ignore[attr-defined]
            made[key] = s
        return made[key]

    yield get
    for s in made.values():
        if isinstance(s, (ContextSession, SQLiteSession)):
            s.close()
        else:
            loop.run_until_complete(s.engine.dispose())  # type: ignore[attr-defined]
    for st in stores:
        st.close()


IMPLS = ["ctxfold", "ContextSession in memory", "SQLiteSession", "SQLAlchemySession"]


@pytest.mark.parametrize("n", SIZES)
def test_add_items_one_turn(record, sessions, loop, n):
    for impl in reversed(IMPLS):  # ctxfold last: its result is what pytest-benchmark keeps
        s = sessions(impl, n)
        record("session add_items (1 turn)", n, impl, lambda s=s: loop.run_until_complete(s.add_items(turn())), rounds=20)


@pytest.mark.parametrize("n", SIZES)
def test_get_items_all(record, sessions, loop, n):
    for impl in reversed(IMPLS):
        s = sessions(impl, n)
        record("session get_items()", n, impl, lambda s=s: loop.run_until_complete(s.get_items()), rounds=5)


@pytest.mark.parametrize("n", SIZES)
def test_get_items_limit_50(record, sessions, loop, n):
    for impl in reversed(IMPLS):
        s = sessions(impl, n)
        got = loop.run_until_complete(s.get_items(limit=50))
        assert len(got) == 50
        record("session get_items(limit=50)", n, impl, lambda s=s: loop.run_until_complete(s.get_items(limit=50)), rounds=20)
