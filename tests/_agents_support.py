"""Shared pieces of the OpenAI Agents SDK adapter tests: the session backends each test runs on,
and the byte-exact comparison the SDK itself uses when it rewinds a turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import agents
import ctxfold
from ctxfold.adapters.openai_agents import ContextSession

_T = TypeVar("_T")

# Runs here never reach OpenAI: no trace export either.
agents.set_tracing_disabled(True)

BACKENDS = ["memory", "sqlite-store", "sqlite-url", "postgres-url"]


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coro)


def exact(items: list[Any]) -> list[str]:
    """The SDK's own identity for an item (``fingerprint_input_item``: ``json.dumps(item,
    sort_keys=True)``), so equality here is the equality a rewind needs."""
    return [json.dumps(i, sort_keys=True) for i in items]


def backends(kind: str, request: Any, tmp_path: Path) -> Backends:
    """``Backends(kind)``; for PostgreSQL, on a schema of its own of the test server (the
    ``pg_url`` fixture: a failure in CI without a server, a skip that says why by hand)."""
    url = request.getfixturevalue("pg_url") if kind.startswith("postgres") else None
    return Backends(kind, tmp_path, url)


class Backends:
    """Makes ContextSessions on one backend; every session made for the same id on a store
    backend shares that store (as two processes on one database would)."""

    def __init__(self, kind: str, tmp_path: Path, postgres_url: str | None = None) -> None:
        self.kind = kind
        self.path = tmp_path / "sessions.db"
        self.postgres_url = postgres_url
        self._store: Any = None
        self._opened: list[ContextSession] = []

    def store(self) -> Any:
        if self._store is None:
            self._store = ctxfold.Store(f"sqlite:///{self.path}")
        return self._store

    def session(self, session_id: str = "s1", **kw: Any) -> ContextSession:
        if self.kind == "memory":
            s = ContextSession(session_id, **kw)
        elif self.kind == "sqlite-store":
            s = ContextSession(session_id, self.store(), **kw)
        elif self.kind == "postgres-url":
            assert self.postgres_url is not None
            s = ContextSession(session_id, self.postgres_url, **kw)
        else:
            s = ContextSession(session_id, f"sqlite:///{self.path}", **kw)
        self._opened.append(s)
        return s

    def close(self) -> None:
        for s in self._opened:
            s.close()
        if self._store is not None:
            self._store.close()

