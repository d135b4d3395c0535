"""A pytest plugin for running the OpenAI Agents SDK's own tests with ctxfold's ContextSession
in place of the SDK's sessions: the SDK's own runner and session tests must pass with it.
``run.py`` beside this file loads it into the SDK's test suite as found in its source
distribution.

``SQLiteSession(session_id, db_path=":memory:", ..., session_settings=None)`` becomes a
ContextSession: in memory for ``":memory:"``, else on a ctxfold SQLite store at ``db_path``.
The table-name arguments have no meaning for a ctxfold store and are accepted and ignored.
SQLiteSession's connection hooks that some tests use to inject a failing commit
(``_get_connection``, ``_connections``, ``_connections_lock``) are mapped onto the ctxfold
SQLite backend's own connections, so the failure lands in ctxfold's real write.

``tests.utils.simple_session.SimpleListSession``, the in-memory session of the SDK's tests (and
the base of their recording and failing sessions), becomes a ContextSession in memory too: its
class is rebased on ContextSession, keeping its constructor ``(session_id="test",
history=None)`` and its ``saved_items`` view.
"""

from __future__ import annotations

import os
from typing import Any

import agents
import agents.memory
import agents.memory.sqlite_session as sdk_sqlite
from ctxfold.adapters.openai_agents import ContextSession, _items, _messages


class SQLiteSession(ContextSession):
    """ContextSession spelled as the SDK's SQLiteSession."""

    def __init__(
        self,
        session_id: str,
        db_path: str | os.PathLike[str] = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        self.db_path = db_path
        store = None if str(db_path) == ":memory:" else os.fspath(db_path)  # (a path as SQLiteSession takes it)
        super().__init__(session_id, store, session_settings=session_settings)

    # SQLiteSession's connection hooks, on the ctxfold SQLite backend behind the store (opened
    # by the session's first call): its connection source asks `_get_connection`, so a test
    # that replaces it gives ctxfold's writes the connection it made.

    def _sqlite_backend(self) -> Any:
        backend = self._log.store._backend._backend  # type: ignore[union-attr]
        if backend is None:
            raise RuntimeError("the SQLite backend opens on the session's first call")
        if "_acquire" not in vars(backend):
            backend._acquire = lambda: self._get_connection()
        return backend

    def _get_connection(self) -> Any:
        backend = self._sqlite_backend()
        return type(backend)._acquire(backend)

    @property
    def _connections_lock(self) -> Any:
        return self._sqlite_backend()._all_lock

    @property
    def _connections(self) -> Any:
        return _Added(self._sqlite_backend()._all)


class _Added:
    """``add`` for the backend's list of connections (closed with the store)."""

    def __init__(self, connections: list[Any]) -> None:
        self._connections = connections

    def add(self, con: Any) -> None:
        self._connections.append(con)


for module in (agents, agents.memory, sdk_sqlite):
    module.SQLiteSession = SQLiteSession  # type: ignore[attr-defined]


# ---- the SDK tests' list session ---------------------------------------------------------------


class _ListSession(ContextSession):
    """ContextSession in memory with the constructor and views of the SDK tests' list session."""

    # The SDK's list session has no atomic suffix replacement, and its tests of compaction over
    # a backend without one construct it: its stand-in offers none either.
    _get_compaction_snapshot = None  # type: ignore[assignment]

    def __init__(self, session_id: str = "test", history: list[Any] | None = None) -> None:
        super().__init__(session_id)
        if history:
            self.context.add_messages(_messages(list(history)))
        self._ignore_ids_for_matching = False

    @property
    def saved_items(self) -> list[Any]:
        """The items, as ``get_items()`` gives them (what the tests inspect synchronously)."""
        return _items(self.context)

    @property
    def _items(self) -> list[Any]:
        return _items(self.context)


def _list_session_module() -> Any:
    """``tests.utils.simple_session`` imported with ``_ListSession`` as the base of its
    ``SimpleListSession`` (whose own storage is then dropped): the module's other sessions
    (counting, id-stripping) and every test's subclass derive from it unchanged."""
    import sys

    import agents.memory.session as sdk_session

    if "tests.utils.simple_session" in sys.modules:
        raise RuntimeError("tests.utils.simple_session was imported before the ctxfold plugin")
    real = sdk_session.Session
    sdk_session.Session = _ListSession  # type: ignore[misc]
    try:
        from tests.utils import simple_session
    except ImportError:  # not run from the SDK's source tree
        return None
    finally:
        sdk_session.Session = real  # type: ignore[misc]
    cls = simple_session.SimpleListSession
    assert issubclass(cls, ContextSession), cls.__mro__
    for name in ("__init__", "get_items", "add_items", "pop_item", "clear_session"):
        if name in vars(cls):
            delattr(cls, name)
    return simple_session


_list_session_module()
