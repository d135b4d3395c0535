"""LangGraph's test fixtures ``sync_checkpointer`` and ``async_checkpointer``, made of ctxfold's
``ContextSaver``: in memory, on a SQLite file, and (with ``CTXFOLD_TEST_POSTGRES_URL`` set) on
PostgreSQL in a schema of its own per test. ``run.py`` appends an import of these to the
LangGraph tests' ``conftest.py``, so that they replace the stock savers there."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import pytest
from _stores import schema_on
from ctxfold.adapters.langgraph import ContextSaver

_POSTGRES = os.environ.get("CTXFOLD_TEST_POSTGRES_URL")
_KINDS = ["ctxfold_memory", "ctxfold_sqlite", *(["ctxfold_postgres"] if _POSTGRES else [])]


@contextmanager
def _target(kind: str) -> Iterator[str | None]:
    """What ``ContextSaver`` is given for ``kind``: nothing (memory), a SQLite URL of a new
    file, or a PostgreSQL URL whose search path is a new schema (dropped afterwards)."""
    if kind == "ctxfold_memory":
        yield None
    elif kind == "ctxfold_sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite://{os.path.join(folder, 'checkpoints.db')}"
    else:
        assert _POSTGRES is not None
        with schema_on(_POSTGRES, "lg_suite") as url:
            yield url


@pytest.fixture(scope="function", params=_KINDS)
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[ContextSaver]:
    with _target(request.param) as target, ContextSaver(target) as saver:
        yield saver


@pytest.fixture(scope="function", params=_KINDS)
async def async_checkpointer(request: pytest.FixtureRequest) -> AsyncIterator[ContextSaver]:
    with _target(request.param) as target:
        async with ContextSaver(target) as saver:
            yield saver
