"""LangGraph's own checkpointer conformance suite on ContextSaver: every capability (put,
put_writes, get_tuple, list, delete_thread, copy_thread, delete_for_runs, prune) in memory, on
SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langgraph.checkpoint.conformance import checkpointer_test, validate  # noqa: E402
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES  # noqa: E402

pytestmark = pytest.mark.frameworks


def _run(make) -> None:
    @checkpointer_test(name="ContextSaver")
    async def saver():
        s = make()
        try:
            yield s
        finally:
            s.close()

    report = asyncio.run(validate(saver))
    report.print_report()
    failures = {name: r.failures for name, r in report.results.items() if r.passed is not True}
    assert not failures, failures
    # every capability is detected, run and passed (none skipped as not implemented)
    assert {name for name, r in report.results.items() if r.detected and r.passed} == {c.value for c in ALL_CAPABILITIES}
    assert all(r.tests_failed == 0 and r.tests_passed > 0 for r in report.results.values())


def test_conformance_in_memory() -> None:
    _run(ContextSaver)


def test_conformance_sqlite(sqlite_url) -> None:
    _run(lambda: ContextSaver(sqlite_url))


def test_conformance_postgres(pg_url) -> None:
    _run(lambda: ContextSaver(pg_url))
