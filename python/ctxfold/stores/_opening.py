"""Which store an adapter works on, from the ``store=`` argument its user passed.

The framework adapters (the Agents SDK session, the ADK session service, the LangGraph saver)
take the same kinds of ``store``: ``None`` (memory), a ``Store``, an ``AsyncStore``, a store
URL or an ``os.PathLike`` path. What is accepted, what a URL is opened as, who closes what, and
how the other kind of store is opened on the same database are decided here once, so the
adapters agree with each other and word a wrong argument alike."""

from __future__ import annotations

import os
from typing import overload

from ._async import AsyncStore
from ._store import Store

__all__ = ["beside", "opened_store"]


def opened_store(store: object, prefer: type[Store] | type[AsyncStore]) -> tuple[Store | AsyncStore | None, bool]:
    """(the store to work on, whether the adapter opened it) from a ``store=`` argument.

    ``None`` stays ``None`` (the adapter keeps its data in memory). A ``Store`` or an
    ``AsyncStore`` is used as it is: it stays its caller's, who may share it and closes it. A
    URL or a path is opened here as ``prefer``, the kind the adapter's own calls run on, and is
    the adapter's to close (``True``). Anything else is a ``TypeError`` naming the accepted
    kinds, before anything is opened."""
    if store is None:
        return None, False
    if isinstance(store, (Store, AsyncStore)):
        return store, False
    if isinstance(store, (str, os.PathLike)):
        return prefer(store), True
    raise TypeError("store must be None, a ctxfold.Store, a ctxfold.AsyncStore, a store URL (str) or a path "
                    f"(os.PathLike), got {type(store).__name__}")


@overload
def beside(store: Store) -> AsyncStore: ...
@overload
def beside(store: AsyncStore) -> Store: ...
def beside(store: Store | AsyncStore) -> Store | AsyncStore:
    """The other kind of store on ``store``'s database: an ``AsyncStore`` beside a ``Store``, a
    ``Store`` beside an ``AsyncStore`` (one database, one store: a context saved through either
    is refreshed and saved through the other), for code with both blocking and async calls.

    It is opened from what ``store`` was opened with, not from its ``url`` (which hides the
    password), and with the same ``durable``: commits made through the new store are as safe as
    the user asked for. The caller owns it and closes it."""
    url, durable = store._opened_as
    if isinstance(store, Store):
        return AsyncStore(url, durable=durable)
    return Store(url, durable=durable)
