"""What the ``store=`` argument tests of the adapters share: each kind of argument on each
database, and how to tell whether a store is still open."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from ctxfold import AsyncStore, Store, StoreError

WRONG_TYPE = ("store must be None, a ctxfold.Store, a ctxfold.AsyncStore, a store URL (str) or a path "
              "(os.PathLike), got ")

# (database, kind of store argument): every kind on SQLite; on PostgreSQL every kind that names it.
CASES = [("sqlite", k) for k in ("none", "store", "async_store", "url", "path")] + \
        [("postgres", k) for k in ("store", "async_store", "url")]
CFG = {"configurable": {"thread_id": "t"}}


class Given:
    """A store argument of one kind on one database, and the caller's store when it is one."""

    def __init__(self, kind: str, url: str, tmp_path: pathlib.Path) -> None:
        self.kind, self.url = kind, url
        self.caller: Store | AsyncStore | None = None
        if kind == "store":
            self.caller = Store(url)
        elif kind == "async_store":
            self.caller = AsyncStore(url)
        self.arg: Any = {"store": self.caller, "async_store": self.caller, "url": url,
                         "path": pathlib.Path(url[len("sqlite://"):]), "none": None}[kind]

    def stored_ids(self) -> list[str]:
        """The contexts in the database, read through a store of the test's own."""
        if self.kind == "none":
            return []
        with Store(self.url) as store:
            return sorted(c.id for c in store.list())


def database(where: str, request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue("sqlite_url" if where == "sqlite" else "pg_url")


async def is_open(store: Store | AsyncStore) -> bool:
    """Whether the store still answers (a closed store raises ``StoreError``)."""
    try:
        if isinstance(store, AsyncStore):
            await store.head("probe")
        else:
            store.head("probe")
    except StoreError:
        return False
    return True


async def close_caller(given: Given) -> None:
    if isinstance(given.caller, AsyncStore):
        await given.caller.close()
    elif given.caller is not None:
        given.caller.close()


def assert_works_on(store: Store | AsyncStore | None, given: Given) -> None:
    """The store an adapter with async calls works on is the one its argument named: none, the
    caller's own, or, from a URL or a path, an AsyncStore of its own on that database."""
    if given.kind == "none":
        assert store is None
    elif given.caller is not None:
        assert store is given.caller
    else:
        assert isinstance(store, AsyncStore) and store.url == given.url


async def assert_closed_only_its_own(store: Store | AsyncStore | None, given: Given) -> None:
    """After the adapter's close: the store it opened is closed, the caller's is still open
    (then closed here)."""
    if store is not None:
        assert await is_open(store) is (given.caller is not None)
    await close_caller(given)

