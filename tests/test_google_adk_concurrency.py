"""Two processes appending to one ADK session on one store (SQLite file, PostgreSQL): in each
race both read the session, both append; exactly one wins and the other gets ADK's
StaleSessionError with nothing written; it re-reads and appends again. In the end every event of
both is stored once, in each writer's order, and the shared state holds both writers' keys."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from _adk import close
from ctxfold.adapters.google_adk import ContextSessionService

pytestmark = pytest.mark.frameworks

TESTS = str(Path(__file__).resolve().parent)

WRITER = """
import asyncio, sys
sys.path.insert(0, sys.argv[3])
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event, EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from ctxfold.adapters.google_adk import ContextSessionService

url, me = sys.argv[1], sys.argv[2]

async def main():
    service = ContextSessionService(url)
    session = None
    n = 0
    def event():
        return Event(id=f"{me}-{n}", invocation_id=f"{me}-inv", author=me,
                     content=types.Content(role="model", parts=[types.Part(text=f"{me} says {n}")]),
                     actions=EventActions(state_delta={f"user:{me}": n, f"app:{me}": n, me: n}))
    async def read(recent):
        config = GetSessionConfig(num_recent_events=3) if recent else None
        return await service.get_session(app_name="race", user_id="u", session_id="s", config=config)
    print("ready", flush=True)
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "read":
            session = await read(arg == "recent")
            print("read", flush=True)
        elif cmd == "append":
            try:
                await service.append_event(session, event())
                n += 1
                print("won", flush=True)
            except StaleSessionError:
                print("stale", flush=True)
        elif cmd == "retry":
            while True:
                session = await read(False)
                try:
                    await service.append_event(session, event())
                    n += 1
                    break
                except StaleSessionError:
                    pass
            print("ok", flush=True)
        elif cmd == "quit":
            break
    await service.close()

asyncio.run(main())
"""


def _send(p: subprocess.Popen, line: str) -> None:
    p.stdin.write(line + "\n")
    p.stdin.flush()


def _reply(p: subprocess.Popen) -> str:
    return p.stdout.readline().strip()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_processes_one_winner_per_race_nothing_lost(backend, request, tmp_path):
    url = str(tmp_path / "race.db") if backend == "sqlite" else request.getfixturevalue("pg_url")

    async def setup():
        service = ContextSessionService(url)
        await service.create_session(app_name="race", user_id="u", session_id="s")
        await close(service)

    asyncio.run(setup())
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, name, TESTS], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for name in ("p0", "p1")]
    try:
        for p in procs:
            assert _reply(p) == "ready"
        rounds = 12
        for r in range(rounds):
            for p in procs:
                _send(p, "read recent" if r % 2 else "read")
            assert [_reply(p) for p in procs] == ["read", "read"]
            for p in procs:
                _send(p, "append")
            outcome = [_reply(p) for p in procs]
            assert sorted(outcome) == ["stale", "won"], outcome
            loser = procs[outcome.index("stale")]
            _send(loser, "retry")
            assert _reply(loser) == "ok"
        for p in procs:
            _send(p, "quit")
            p.wait(timeout=60)
            assert p.returncode == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdin.close()
            p.stdout.close()

    async def check():
        service = ContextSessionService(url)
        try:
            return (await service.get_session(app_name="race", user_id="u", session_id="s"),
                    await service.get_user_state(app_name="race", user_id="u"))
        finally:
            await close(service)

    session, user_state = asyncio.run(check())
    ids = [e.id for e in session.events]
    assert len(ids) == 2 * rounds and len(set(ids)) == len(ids)
    for name in ("p0", "p1"):
        mine = [int(i.split("-")[1]) for i in ids if i.startswith(name)]
        assert mine == list(range(rounds))
        assert session.state[name] == rounds - 1 and session.state[f"app:{name}"] == rounds - 1
        assert user_state[name] == rounds - 1
