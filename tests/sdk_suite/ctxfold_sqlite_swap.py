"""A pytest plugin for running the OpenAI Agents SDK's own tests with ctxfold's ContextSession
in place of the SDK's ``SQLiteSession``: the SDK's own runner and session tests must pass
with it. ``run.py`` beside this file loads it into the SDK's test
suite as found in its source distribution.

``SQLiteSession(session_id, db_path=":memory:", ..., session_settings=None)`` becomes a
ContextSession: in memory for ``":memory:"``, else on a ctxfold SQLite store at ``db_path``.
The table-name arguments have no meaning for a ctxfold store and are accepted and ignored.
"""

from __future__ import annotations

import os
from typing import Any

import agents
import agents.memory
import agents.memory.sqlite_session as sdk_sqlite
from ctxfold.adapters.openai_agents import ContextSession


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
        store = None if str(db_path) == ":memory:" else f"sqlite:///{db_path}"
        super().__init__(session_id, store, session_settings=session_settings)


for module in (agents, agents.memory, sdk_sqlite):
    module.SQLiteSession = SQLiteSession  # type: ignore[attr-defined]
