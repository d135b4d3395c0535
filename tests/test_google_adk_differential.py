"""ContextSessionService against Google ADK's own session services: seeded random scenarios of
create / append / get (full and recent) / list / delete / get_user_state calls, played on
InMemorySessionService, SqliteSessionService and ContextSessionService in memory, on SQLite and
on PostgreSQL, every outcome compared (sessions, merged state, events, listings, errors)."""

from __future__ import annotations

import pytest
from _adk import SERVICES, close, make_service, play, run, scenario

pytestmark = pytest.mark.frameworks

SEEDS = range(12)


def _play(name: str, calls, request, tmp_path):
    async def go():
        service = make_service(name, request, tmp_path)
        try:
            return await play(service, calls)
        finally:
            await close(service)

    return run(go())


@pytest.mark.parametrize("seed", SEEDS)
def test_same_outcomes_as_adk_services(seed, request, tmp_path):
    calls = scenario(seed, 80)
    reference = _play("adk-memory", calls, request, tmp_path)
    for name in SERVICES[1:]:
        got = _play(name, calls, request, tmp_path)
        for i, (want, have) in enumerate(zip(reference, got)):
            assert have == want, f"{name}, call {i} {calls[i][0]}: {have!r} != {want!r}"
        assert len(got) == len(reference)


def test_scenarios_exercise_every_call():
    ops = {op for seed in SEEDS for op, _ in scenario(seed, 80)}
    assert ops == {"create", "append", "get", "list", "delete", "user_state"}
    compactions = sum(1 for seed in SEEDS for op, a in scenario(seed, 80)
                      if op == "append" and a["event"].actions.compaction is not None)
    assert compactions > 0
