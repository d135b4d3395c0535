"""ContextSessionService against Google ADK's own SQL session services, side by side.

    python benches/google_adk_sessions.py                 # sessions of 100 and 1,000 events, 1,000 sessions listed
    python benches/google_adk_sessions.py --big           # and 10,000 events, 10,000 sessions listed
    python benches/google_adk_sessions.py --postgres URL  # and ContextSessionService on PostgreSQL

For each session length N (the session built by N ``append_event`` calls, untimed), the median
of: ``append_event`` (one more event), ``get_session`` (the whole session) and ``get_session``
with ``GetSessionConfig(num_recent_events=10)``; then ``list_sessions`` of an app holding S
sessions. Services: ContextSessionService on a SQLite store (and PostgreSQL when given),
ADK's SqliteSessionService, and ADK's DatabaseSessionService on ``sqlite+aiosqlite``, each on its
own file. The ratio columns are ADK's time over ctxfold's (above 1: ctxfold is faster)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ctxfold.adapters.google_adk import ContextSessionService
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

APP, USER = "bench", "alice"
TEXT = "The forecast for tomorrow is mostly sunny with a light breeze from the west. " * 3


def event(n: int) -> Event:
    role = "user" if n % 2 == 0 else "model"
    actions = EventActions(state_delta={"turn": n, "user:seen": n}) if n % 5 == 0 else EventActions()
    return Event(invocation_id=f"inv-{n // 4}", author="user" if role == "user" else "agent",
                 content=types.Content(role=role, parts=[types.Part(text=f"{n}: {TEXT}")]), actions=actions)


@contextmanager
def postgres_schema(url: str | None) -> Iterator[str | None]:
    """A schema of its own on the given server for the run's tables, dropped afterwards."""
    if url is None:
        yield None
        return
    import psycopg

    schema = f"adk_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    try:
        sep = "&" if "?" in url else "?"
        yield f"{url}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"DROP SCHEMA {schema} CASCADE")


def services(folder: Path, postgres: str | None) -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {
        "ctxfold sqlite": lambda: ContextSessionService(f"sqlite:///{folder / 'ctxfold.db'}"),
    }
    if postgres:
        out["ctxfold postgres"] = lambda: ContextSessionService(postgres)
    out["adk Sqlite"] = lambda: SqliteSessionService(str(folder / "adk-sqlite.db"))
    out["adk Database"] = lambda: DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'adk-database.db'}")
    return out


async def median(op: Callable[[], Awaitable[Any]], rounds: int) -> float:
    for _ in range(3):  # warm up: the worker threads and their connections, the caches
        await op()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        await op()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def measure_session(service: Any, n: int, rounds: int) -> dict[str, float]:
    sid = f"len-{n}"
    session = await service.create_session(app_name=APP, user_id=USER, session_id=sid)
    for i in range(n):
        await service.append_event(session, event(i))
    counter = iter(range(n, n + 10 * rounds + 10))
    session = await service.get_session(app_name=APP, user_id=USER, session_id=sid)

    async def append() -> None:
        await service.append_event(session, event(next(counter)))

    async def full() -> None:
        await service.get_session(app_name=APP, user_id=USER, session_id=sid)

    async def recent() -> None:
        got = await service.get_session(app_name=APP, user_id=USER, session_id=sid,
                                        config=GetSessionConfig(num_recent_events=10))
        assert len(got.events) == 10

    result = {"append_event": await median(append, rounds)}
    result["get_session (all)"] = await median(full, max(3, rounds // 4))
    result["get_session (last 10)"] = await median(recent, rounds)
    return result


async def measure_listing(service: Any, sessions: int, rounds: int) -> float:
    app = f"listing-{sessions}"
    for i in range(sessions):
        await service.create_session(app_name=app, user_id=f"user-{i % 50}", session_id=f"s-{i}",
                                     state={"n": i, "user:k": i % 7})
    async def listing() -> None:
        got = await service.list_sessions(app_name=app)
        assert len(got.sessions) == sessions
    return await median(listing, rounds)


async def run_service(make: Callable[[], Any], sizes: list[int], sessions: int, rounds: int) -> dict[tuple[str, int], float]:
    service = make()
    out: dict[tuple[str, int], float] = {}
    try:
        for n in sizes:
            for op, t in (await measure_session(service, n, rounds)).items():
                out[(op, n)] = t
        out[("list_sessions", sessions)] = await measure_listing(service, sessions, max(3, rounds // 4))
    finally:
        await service.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="add sessions of 10,000 events and list 10,000 sessions")
    ap.add_argument("--postgres", metavar="URL", help="also ContextSessionService on this PostgreSQL database")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    sizes = [100, 1000, 10000] if args.big else [100, 1000]
    sessions = 10000 if args.big else 1000
    with tempfile.TemporaryDirectory() as tmp, postgres_schema(args.postgres) as postgres:
        results = {}
        for name, make in services(Path(tmp), postgres).items():
            t0 = time.perf_counter()
            results[name] = asyncio.run(run_service(make, sizes, sessions, args.rounds))
            print(f"# {name}: done in {time.perf_counter() - t0:.0f} s", flush=True)
    names = list(results)
    ours = names[0]
    adk = [n for n in names if n.startswith("adk")]
    head = f"{'operation':<24}{'N':>7}" + "".join(f"{n:>18}" for n in names) + "".join(
        f"{n + ' / ' + ours.split()[0]:>22}" for n in adk)
    print(head)
    for key in results[ours]:
        row = f"{key[0]:<24}{key[1]:>7}" + "".join(f"{results[n][key] * 1e3:>15.3f} ms" for n in names)
        row += "".join(f"{results[n][key] / results[ours][key]:>21.1f}x" for n in adk)
        print(row)


if __name__ == "__main__":
    main()
