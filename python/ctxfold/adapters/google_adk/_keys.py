"""Where an ADK session lives in a store: the Context ids of sessions and of shared state.

ADK keys a session by (app name, user id, session id); two users may hold the same session id.
Each part is percent-encoded (``urllib.parse.quote`` with no safe characters, so ``/`` becomes
``%2F``) and the parts are joined with ``/``:

    session               adk/<app>/<user>/<session>
    app-scoped state      adk-app/<app>
    user-scoped state     adk-user/<app>/<user>

so ``store.list()`` and ``ctxfold show`` find a session under a readable id
(``adk/weather/alice/s-1``), and the sessions of one app or user are an id prefix.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

__all__ = ["app_state_id", "session_id", "session_prefix", "split_session_id", "user_state_id", "user_state_prefix"]


def _q(part: str) -> str:
    return quote(part, safe="")


def session_id(app_name: str, user_id: str, session: str) -> str:
    """The Context id of a session."""
    return f"adk/{_q(app_name)}/{_q(user_id)}/{_q(session)}"


def session_prefix(app_name: str, user_id: str | None = None) -> str:
    """The id prefix of an app's sessions, or of one user's sessions in it."""
    return f"adk/{_q(app_name)}/" if user_id is None else f"adk/{_q(app_name)}/{_q(user_id)}/"


def split_session_id(context_id: str) -> tuple[str, str, str]:
    """(app name, user id, session id) of a session's Context id."""
    _, app, user, session = context_id.split("/")
    return unquote(app), unquote(user), unquote(session)


def app_state_id(app_name: str) -> str:
    """The Context id holding an app's ``app:`` state."""
    return f"adk-app/{_q(app_name)}"


def user_state_id(app_name: str, user_id: str) -> str:
    """The Context id holding a user's ``user:`` state in an app."""
    return f"adk-user/{_q(app_name)}/{_q(user_id)}"


def user_state_prefix(app_name: str) -> str:
    """The id prefix of every user's state in an app."""
    return f"adk-user/{_q(app_name)}/"
