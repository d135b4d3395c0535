"""What the Google ADK adapter's tests share: the services under test side by side (ADK's own
InMemorySessionService and SqliteSessionService, and ContextSessionService in memory, on SQLite
and on PostgreSQL), seeded random scenarios of session calls, and the comparable form of what
each call returns."""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Callable
from typing import Any

import pytest
from ctxfold.adapters.google_adk import ContextSessionService
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import InMemorySessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

SERVICES = ("adk-memory", "adk-sqlite", "ctxfold-memory", "ctxfold-sqlite", "ctxfold-postgres")


def make_service(name: str, request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if name == "adk-memory":
        return InMemorySessionService()
    if name == "adk-sqlite":
        return SqliteSessionService(str(tmp_path / f"adk-{random.random()}.db"))
    if name == "ctxfold-memory":
        return ContextSessionService()
    if name == "ctxfold-sqlite":
        return ContextSessionService(str(tmp_path / f"ctxfold-{random.random()}.db"))
    if name == "ctxfold-postgres":
        return ContextSessionService(request.getfixturevalue("pg_url"))
    raise ValueError(name)


async def close(service: Any) -> None:
    if hasattr(service, "close"):
        await service.close()


# ---- comparable results ----------------------------------------------------------------------


def session_form(s: Session | None) -> Any:
    if s is None:
        return None
    # A snapshot: the session object goes on changing (appends update it in place).
    return {"app": s.app_name, "user": s.user_id, "id": s.id, "state": copy.deepcopy(s.state),
            "events": [e.model_dump(mode="json", exclude_none=True) for e in s.events],
            "last_update_time": s.last_update_time}


def outcome(value: Any) -> Any:
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__)
    if isinstance(value, Session) or value is None:
        return session_form(value)
    if hasattr(value, "sessions"):
        return [session_form(s) for s in value.sessions]
    return value


# ---- scenarios -------------------------------------------------------------------------------


class Clock:
    """ADK's clock and id provider, stepped by the scenario: every service sees the same times
    and the same generated ids."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.ids = 0

    def tick(self) -> float:
        self.now += 1.25
        return self.now

    def new_id(self) -> str:
        self.ids += 1
        return f"gen-{self.ids}"

    def install(self) -> None:
        platform_time.set_time_provider(lambda: self.now)
        platform_uuid.set_id_provider(self.new_id)


_VALUES: list[Callable[[random.Random], Any]] = [
    lambda r: r.randint(-5, 10**6),
    lambda r: r.choice(["a", "béta", "", "x" * 30, "line\nbreak"]),
    lambda r: round(r.uniform(-10, 10), 3),
    lambda r: r.choice([True, False, None]),
    lambda r: [r.randint(0, 9) for _ in range(r.randint(0, 3))],
    lambda r: {"n": r.randint(0, 9), "s": r.choice(["p", "q"])},
]


def _state(r: random.Random, prefixes: tuple[str, ...] = ("", "app:", "user:", "temp:")) -> dict[str, Any]:
    return {f"{r.choice(prefixes)}{r.choice('abcd')}": r.choice(_VALUES)(r) for _ in range(r.randint(0, 4))}


def _content(r: random.Random, n: int) -> types.Content | None:
    kind = r.randrange(5)
    if kind == 0:
        return None
    if kind == 1:
        return types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            id=f"call-{n}", name=r.choice(["lookup", "add"]), args={"q": r.choice(_VALUES)(r), "n": n}))])
    if kind == 2:
        return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            id=f"call-{n - 1}", name="lookup", response={"result": r.choice(_VALUES)(r)}))])
    role = r.choice(["user", "model"])
    parts = [types.Part(text=f"message {n} " + "word " * r.randint(0, 8))]
    if r.random() < 0.2:
        parts.append(types.Part(text="thinking", thought=True))
    return types.Content(role=role, parts=parts)


def make_event(r: random.Random, clock: Clock, n: int, earlier: list[float]) -> Event:
    content = _content(r, n)
    actions = EventActions(state_delta=_state(r)) if r.random() < 0.6 else EventActions()
    if earlier and r.random() < 0.08:
        first = r.randrange(len(earlier))
        last = r.randrange(first, len(earlier))
        actions.compaction = EventCompaction(
            start_timestamp=earlier[first], end_timestamp=earlier[last],
            compacted_content=types.Content(role="model", parts=[types.Part(text=f"summary {n}")]))
    author = "user" if content is not None and content.role == "user" else "agent"
    return Event(id=f"ev-{n}", invocation_id=f"inv-{n // 3}", author=author, timestamp=clock.tick(),
                 content=content, actions=actions)


APPS = ("app1", "app/2")
USERS = ("u1", "u 2", "u3")
SIDS = ("s1", "s2", " s3 ", "shared")


def scenario(seed: int, steps: int) -> list[tuple[str, dict[str, Any]]]:
    """A seeded list of calls. Every argument is fixed here (events too), so each service gets
    exactly the same calls."""
    r = random.Random(seed)
    clock = Clock()
    calls: list[tuple[str, dict[str, Any]]] = []
    created: list[tuple[str, str, str]] = []
    stamps: dict[tuple[str, str, str], list[float]] = {}
    for n in range(steps):
        op = r.choices(["create", "append", "get", "list", "delete", "user_state"], [3, 10, 3, 2, 1, 1])[0]
        app, user = r.choice(APPS), r.choice(USERS)
        if op == "create" or not created:
            sid = r.choice([*SIDS, None])
            calls.append(("create", {"app_name": app, "user_id": user, "state": _state(r), "session_id": sid,
                                     "now": clock.tick()}))
            if sid is not None:
                created.append((app, user, sid.strip()))
            continue
        key = r.choice(created)
        if op == "append":
            ev = make_event(r, clock, n, stamps.get(key, []))
            stamps.setdefault(key, []).append(ev.timestamp)
            calls.append(("append", {"key": key, "event": ev}))
        elif op == "get":
            config = r.choice([None, GetSessionConfig(num_recent_events=r.randint(0, 6)),
                               GetSessionConfig(after_timestamp=clock.now - r.uniform(0, 20)),
                               GetSessionConfig(num_recent_events=r.randint(1, 4),
                                                after_timestamp=clock.now - r.uniform(0, 20))])
            calls.append(("get", {"key": key, "config": config}))
        elif op == "list":
            calls.append(("list", {"app_name": key[0], "user_id": r.choice([None, key[1], "nobody"])}))
        elif op == "delete":
            calls.append(("delete", {"key": key}))
            created.remove(key)
            stamps.pop(key, None)
        else:
            calls.append(("user_state", {"app_name": key[0], "user_id": key[1]}))
    return calls


async def play(service: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's outcome. Appends go through the session object the service last returned
    for that session, as a runner holds it."""
    clock = Clock()
    clock.install()
    held: dict[tuple[str, str, str], Session] = {}
    out: list[Any] = []
    for op, args in calls:
        try:
            if op == "create":
                clock.now = args["now"]
                s = await service.create_session(app_name=args["app_name"], user_id=args["user_id"],
                                                 state=dict(args["state"]), session_id=args["session_id"])
                held[(s.app_name, s.user_id, s.id)] = s
                result: Any = s
            elif op == "append":
                key = args["key"]
                session = held.get(key) or Session(app_name=key[0], user_id=key[1], id=key[2])
                event = args["event"].model_copy(deep=True)
                returned = await service.append_event(session, event)
                result = {"returned": returned.model_dump(mode="json", exclude_none=True), "session": session_form(session)}
            elif op == "get":
                app, user, sid = args["key"]
                result = await service.get_session(app_name=app, user_id=user, session_id=sid, config=args["config"])
                if result is not None:
                    held[args["key"]] = result
            elif op == "list":
                result = await service.list_sessions(app_name=args["app_name"], user_id=args["user_id"])
            elif op == "delete":
                app, user, sid = args["key"]
                result = await service.delete_session(app_name=app, user_id=user, session_id=sid)
                held.pop(args["key"], None)
            else:
                result = await service.get_user_state(**args)
        except Exception as e:  # the outcome is compared: the same error type is expected
            result = e
        out.append(outcome(result))
    return out


def run(coro: Any) -> Any:
    return asyncio.run(coro)
