"""The ``store=`` argument of the ADK session service: each kind gives the store its calls run
on, on the right database; it closes the stores it opened and only those; a wrong kind is the
one ``TypeError`` all the adapters share (see test_store_opening.py)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("google.adk")

from _opening_cases import CASES, WRONG_TYPE, Given, assert_closed_only_its_own, assert_works_on, database  # noqa: E402

pytestmark = pytest.mark.frameworks


@pytest.mark.parametrize(("where", "kind"), CASES)
def test_google_adk_session_service(where, kind, request, tmp_path) -> None:
    from ctxfold.adapters.google_adk import ContextSessionService

    given = Given(kind, database(where, request) if kind != "none" else "", tmp_path)

    async def go() -> None:
        service = ContextSessionService(given.arg)
        await service.create_session(app_name="a", user_id="u", session_id="s")
        assert (await service.get_session(app_name="a", user_id="u", session_id="s")) is not None
        store = service.store
        assert_works_on(store, given)
        assert given.stored_ids() == ([] if kind == "none" else ["adk/a/u/s"])
        await service.close()
        await assert_closed_only_its_own(store, given)

    asyncio.run(go())


def test_google_adk_session_service_refuses_a_wrong_kind_of_store() -> None:
    from ctxfold.adapters.google_adk import ContextSessionService

    with pytest.raises(TypeError) as raised:
        ContextSessionService(42)  # type: ignore[arg-type]
    assert str(raised.value) == WRONG_TYPE + "int"
