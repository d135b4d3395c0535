"""Stores: contexts kept as their event logs in SQLite (the embedded default) or
PostgreSQL (``ctxfold[postgres]``), appended to every turn, never rewritten."""

from ._async import AsyncStore
from ._rows import StoredContext, StoredTail
from ._store import Store

__all__ = ["AsyncStore", "Store", "StoredContext", "StoredTail"]
