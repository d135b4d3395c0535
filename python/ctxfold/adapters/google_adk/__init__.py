"""ctxfold as Google ADK's session service (extra ``ctxfold[google-adk]``).

``ContextSessionService(store=None)`` is a ``google.adk.sessions.BaseSessionService`` that keeps
each session as a ctxfold ``Context``: every ADK event one message (the event itself, as ADK
stores it, in its metadata), so the session is an append-only log whose fold is the
conversation. Without a store the sessions live in memory; with a ``ctxfold.Store`` (or its URL)
an append saves one event, recent reads (``GetSessionConfig``) read only the end of the log,
and a writer whose copy of the session is stale gets ADK's ``StaleSessionError``.

    from google.adk.runners import Runner
    from ctxfold.adapters.google_adk import ContextSessionService

    service = ContextSessionService("sessions.db")
    runner = Runner(app_name="weather", agent=agent, session_service=service)

See ``docs/adapters.md``.
"""

from __future__ import annotations

try:
    import google.adk.sessions  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("ctxfold.adapters.google_adk needs Google ADK: pip install 'ctxfold[google-adk]'") from exc

from ._keys import session_id as context_id
from ._service import ContextSessionService

__all__ = ["ContextSessionService", "context_id"]
