"""A saver that cannot be made leaves nothing open: when its checkpoint tables cannot be
created in the store's database, the store it opened (from a URL, or beside a given
AsyncStore) and the tables' own connection are closed at once — not left to the garbage
collector, which the failure's traceback can keep from them — and a store it was given stays
open."""

from __future__ import annotations

import asyncio
import gc
import sqlite3

import pytest

pytest.importorskip("langgraph")

from ctxfold import AsyncStore, Store  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from ctxfold.errors import StoreError  # noqa: E402


def _blocked(path: str) -> None:
    """A database where a table of the saver's cannot be made (an index holds its name)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE other (x)")
    con.execute("CREATE INDEX ctxfold_lg_blobs ON other (x)")
    con.commit()
    con.close()


def _open_connections() -> int:
    """How many SQLite connection objects of this process are open."""
    n = 0
    for o in gc.get_objects():
        if isinstance(o, sqlite3.Connection):
            try:
                o.in_transaction  # noqa: B018  (a closed connection refuses it)
            except sqlite3.ProgrammingError:
                continue
            n += 1
    return n


def test_a_url_it_opened_is_closed_again(tmp_path) -> None:
    path = str(tmp_path / "t.db")
    _blocked(path)
    before = _open_connections()
    with pytest.raises(StoreError, match="ctxfold_lg_blobs") as failure:
        ContextSaver(f"sqlite://{path}")
    assert failure.traceback  # the traceback, and every frame's objects, are still held here
    assert _open_connections() == before


def test_the_store_it_opened_beside_a_given_async_store_is_closed_again(tmp_path) -> None:
    path = str(tmp_path / "t.db")
    _blocked(path)

    async def main() -> None:
        async with AsyncStore(path) as given:
            await given.head("x")  # its own connection open
            before = _open_connections()
            with pytest.raises(StoreError, match="ctxfold_lg_blobs") as failure:
                ContextSaver(given)
            assert failure.traceback
            assert _open_connections() == before
            assert await given.head("x") is None  # the given store is still open

    asyncio.run(main())


def test_a_given_store_stays_open(tmp_path) -> None:
    path = str(tmp_path / "t.db")
    _blocked(path)
    with Store(path) as given:
        given.head("x")
        before = _open_connections()
        with pytest.raises(StoreError, match="ctxfold_lg_blobs") as failure:
            ContextSaver(given)
        assert failure.traceback
        assert _open_connections() == before
        assert given.head("x") is None
