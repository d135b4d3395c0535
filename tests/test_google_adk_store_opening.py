"""The ``store=`` argument of the ADK session service: each kind gives the store its calls run
on, on the right database; it closes the stores it opened and only those; a wrong kind is the
one ``TypeError`` all the adapters share (see test_store_opening.py)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("google.adk")

from _opening_cases import CASES, WRONG_TYPE, Given, close_caller, database, is_open  # noqa: E402
from ctxfold import AsyncStore  # noqa: E402

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
        if kind == "none":
            assert store is None
        elif given.caller is not None:
            assert store is given.caller
        else:  # a URL or a path: an AsyncStore of the service's own
            assert isinstance(store, AsyncStore) and store.url == given.url
        assert given.stored_ids() == ([] if kind == "none" else ["adk/a/u/s"])
        await service.close()
        if store is not None:
            assert await is_open(store) is (given.caller is not None)
        await close_caller(given)

    asyncio.run(go())


def test_google_adk_session_service_refuses_a_wrong_kind_of_store() -> None:
    from ctxfold.adapters.google_adk import ContextSessionService

    with pytest.raises(TypeError) as raised:
        ContextSessionService(42)  # type: ignore[arg-type]
    assert str(raised.value) == WRONG_TYPE + "int"
