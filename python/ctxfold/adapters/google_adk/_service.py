"""``ContextSessionService``: ADK's session service over ctxfold Contexts."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from pydantic import TypeAdapter

from ._events import add_event
from ._keys import app_state_id, session_id, session_prefix, user_state_id, user_state_prefix
from ._logs import MemoryLogs, SessionLog, StoredLogs, Stripes, WriteLost

if TYPE_CHECKING:
    from ..._context import Context
    from ...stores import AsyncStore, Store

__all__ = ["ContextSessionService"]

_T = TypeVar("_T")

# ADK's database service's wording (its tests match "modified in storage"), and who moved it.
_STALE = ("The session has been modified in storage since it was loaded (another writer appended to it). "
          "Please reload the session before appending more events.")
_MARKER = "ctxfold:"  # the revision marker this service puts on the sessions it returns
_SESSIONS: TypeAdapter[list[Session]] = TypeAdapter(list[Session])


def _copied(state: dict[str, Any]) -> dict[str, Any]:
    if all(isinstance(v, (str, int, float, bool)) or v is None for v in state.values()):
        return state
    return copy.deepcopy(state)


class ContextSessionService(BaseSessionService):
    """ADK's ``BaseSessionService`` with every session a ctxfold ``Context``.

    ``store``: ``None`` (in memory, private to this object), a ``ctxfold.AsyncStore`` or a
    store URL / path (``"sessions.db"``, ``"sqlite:///abs/path.db"``, ``"postgresql://…"``;
    opened here as an ``AsyncStore``, closed by ``close()``), or a ``ctxfold.Store`` (its
    blocking calls then run on worker threads). The Context of a session is
    ``context(app_name, user_id, session_id)``; its id is ``adk/<app>/<user>/<session>`` (each
    part percent-encoded), so ``store.list()`` shows it.
    """

    def __init__(self, store: AsyncStore | Store | str | os.PathLike[str] | None = None) -> None:
        self._logs: MemoryLogs | StoredLogs = MemoryLogs() if store is None else StoredLogs(store)
        self._locks = Stripes()

    @property
    def store(self) -> AsyncStore | Store | None:
        """The store the sessions are kept in (an ``AsyncStore`` when given a URL), or ``None``
        in memory."""
        return self._logs.store if isinstance(self._logs, StoredLogs) else None

    async def _run(self, op: Coroutine[Any, Any, _T]) -> _T:
        # Every call runs as its own task, shielded: once started it runs to the end (a
        # cancelled caller never leaves a session half-written). The store work in it awaits
        # an AsyncStore, or a Store on a worker thread: the event loop never waits on the database.
        return await asyncio.shield(op)

    # ---- create / get ----------------------------------------------------------------------

    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        """A new session (``session_id`` stripped; a new uuid when not given). ``app:`` and
        ``user:`` keys of ``state`` go to the shared state, ``temp:`` keys nowhere, the rest to
        the session. An id already taken → ADK's ``AlreadyExistsError``."""
        return await self._run(self._create(app_name, user_id, state, session_id))

    async def _create(self, app_name: str, user_id: str, state: dict[str, Any] | None, given: str | None) -> Session:
        sid = given.strip() if given else None
        if sid and await self._logs.exists(session_id(app_name, user_id, sid)):
            raise AlreadyExistsError(f"Session with id {sid} already exists.")
        deltas = _session_util.extract_json_safe_state_delta(state or {})
        if deltas["app"]:
            await self._logs.update_state(app_state_id(app_name), deltas["app"])
        if deltas["user"]:
            await self._logs.update_state(user_state_id(app_name, user_id), deltas["user"])
        sid = sid or platform_uuid.new_uuid()
        now = platform_time.get_time()
        info = {"app_name": app_name, "user_id": user_id, "id": sid, "state": deltas["session"], "last_update_time": now}
        log = SessionLog.new(session_id(app_name, user_id, sid), info)
        if not await self._logs.create(log):
            raise AlreadyExistsError(f"Session with id {sid} already exists.")
        return self._session(info, [], log.ctx.next_seq, await self._shared(app_name, user_id))

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        """The session with its state merged (``app:``/``user:`` keys) and its events, each
        equal to the one appended; ``None`` when absent. With ``config``, only the last
        ``num_recent_events`` events not older than ``after_timestamp``, read from the end of
        the log: O(those events), not O(session)."""
        return await self._run(self._get(app_name, user_id, session_id, config))

    async def _get(self, app_name: str, user_id: str, sid: str, config: GetSessionConfig | None) -> Session | None:
        cid = session_id(app_name, user_id, sid.strip() if sid else sid)
        if config is not None and (config.num_recent_events is not None or config.after_timestamp is not None):
            found = await self._logs.recent(cid, config.num_recent_events, config.after_timestamp)
            if found is None:
                return None
            head, info, texts = found
        else:
            async with self._locks.hold(cid):
                log = await self._logs.session(cid)
                if log is None:
                    return None
                head, info, texts = log.ctx.next_seq, dict(log.info), list(log.texts)
        return self._session(info, texts, head, await self._shared(app_name, user_id))

    async def _shared(self, app_name: str, user_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        return await self._logs.state(app_state_id(app_name)), await self._logs.state(user_state_id(app_name, user_id))

    @staticmethod
    def _merged(info: dict[str, Any], app_state: dict[str, Any], user_state: dict[str, Any]) -> dict[str, Any]:
        # A copy: what a caller does to the returned state never reaches the stored one.
        state = copy.deepcopy(info.get("state") or {})
        state.update({State.APP_PREFIX + k: v for k, v in app_state.items()})
        state.update({State.USER_PREFIX + k: v for k, v in user_state.items()})
        return state

    def _session(self, info: dict[str, Any], texts: list[str], head: int,
                 shared: tuple[dict[str, Any], dict[str, Any]]) -> Session:
        session = Session(
            app_name=info["app_name"], user_id=info["user_id"], id=info["id"],
            state=self._merged(info, *shared), events=[Event.model_validate_json(t) for t in texts],
            last_update_time=info["last_update_time"],
        )
        session._storage_update_marker = f"{_MARKER}{head}"
        return session

    # ---- list / delete / user state -------------------------------------------------------

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The app's sessions (or one user's), without events, state merged, oldest update
        first (ties by user id, then session id), as ADK's own services list them. Reads each
        session's head row, never its events."""
        return await self._run(self._list(app_name, user_id))

    async def _list(self, app_name: str, user_id: str | None) -> ListSessionsResponse:
        # Each session's fields are stored as one JSON object of Session's own fields: the whole
        # listing is parsed and validated at once, in pydantic's Rust core.
        texts = await self._logs.scan(session_prefix(app_name, user_id))
        sessions = _SESSIONS.validate_json("[" + ",".join(texts) + "]")
        app_state = {State.APP_PREFIX + k: v for k, v in (await self._logs.state(app_state_id(app_name))).items()}
        if user_id is not None:
            found = {user_id: await self._logs.state(user_state_id(app_name, user_id))}
        else:
            prefix = user_state_prefix(app_name)
            found = {unquote(cid[len(prefix):]): s for cid, s in (await self._logs.states(prefix)).items()}
        users = {u: {State.USER_PREFIX + k: v for k, v in s.items()} for u, s in found.items()}
        for session in sessions:
            # Copies of containers: no two sessions share a mutable value of the shared state.
            if app_state:
                session.state.update(_copied(app_state))
            mine = users.get(session.user_id)
            if mine:
                session.state.update(_copied(mine))
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events (nothing when absent). Shared state stays."""
        await self._run(self._delete(app_name, user_id, session_id))

    async def _delete(self, app_name: str, user_id: str, sid: str) -> None:
        cid = session_id(app_name, user_id, sid.strip() if sid else sid)
        async with self._locks.hold(cid):
            await self._logs.delete(cid)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state in the app, keys without the prefix; ``{}`` when none."""
        return await self._run(self._logs.state(user_state_id(app_name, user_id)))

    # ---- append ----------------------------------------------------------------------------

    async def append_event(self, session: Session, event: Event) -> Event:
        """Append ``event`` to the session (a partial event is returned untouched) and apply
        its state delta by scope. ``temp:`` keys reach the session object, never the store.
        One save of the one new event; a compaction event (``actions.compaction``) replaces
        its range in the Context's transcript by its summary, the events kept.

        If the session was changed in storage since ``session`` was read (another writer
        appended), ADK's ``StaleSessionError`` and nothing is written; an event equal to one
        already appended (same id) is not appended twice. A session that does not exist →
        ADK's ``SessionNotFoundError``."""
        if event.partial:
            return event
        return await self._run(self._append(session, event))

    async def _append(self, session: Session, event: Event) -> Event:
        cid = session_id(session.app_name, session.user_id, session.id)
        async with self._locks.hold(cid):
            log = await self._logs.session(cid)
            if log is None:
                raise SessionNotFoundError(f"Session {session.id} not found.")
            # An equal re-delivery of an appended event is a no-op, as in ADK's in-memory service.
            for i in log.by_id.get(event.id, ()):
                if Event.model_validate_json(log.texts[i]) == event:
                    return event
            # As ADK's SQL services: temp state reaches the session object and leaves the event
            # before the freshness check.
            self._apply_temp_state(session, event)
            event = self._trim_temp_delta_state(event)
            self._check_fresh(session, log)
            text = event.model_dump_json(exclude_none=True)
            deltas = _session_util.extract_json_safe_state_delta(
                event.actions.state_delta if event.actions and event.actions.state_delta else {})
            info = dict(log.info, last_update_time=event.timestamp)
            if deltas["session"]:
                info["state"] = {**(info.get("state") or {}), **deltas["session"]}
            previous = dict(log.info)
            point = log.ctx._savepoint()
            try:
                add_event(log.ctx, event, text)
                log.set_info(info)
                await self._logs.commit(log)
            except BaseException as e:
                log.ctx._rewind(point)
                log.set_info(previous)
                self._logs.forget(cid)
                if isinstance(e, WriteLost):
                    raise StaleSessionError(_STALE) from None
                raise
            log.absorb([text])
            head = log.ctx.next_seq
        if deltas["app"]:
            await self._logs.update_state(app_state_id(session.app_name), deltas["app"])
        if deltas["user"]:
            await self._logs.update_state(user_state_id(session.app_name, session.user_id), deltas["user"])
        session.last_update_time = event.timestamp
        session._storage_update_marker = f"{_MARKER}{head}"
        return self._commit_event_to_session(session, event)

    @staticmethod
    def _check_fresh(session: Session, log: SessionLog) -> None:
        marker = session._storage_update_marker
        if isinstance(marker, str) and marker.startswith(_MARKER):
            # A session this service returned knows the exact head it was read at.
            if marker != f"{_MARKER}{log.ctx.next_seq}":
                raise StaleSessionError(_STALE)
            return
        # A session from elsewhere: stale if storage moved past its time, unless it holds the
        # same latest event (as ADK's database service decides).
        if log.info["last_update_time"] > session.last_update_time:
            last = json.loads(log.texts[-1]).get("id") if log.texts else None
            mine = session.events[-1].id if session.events else None
            if last != mine:
                raise StaleSessionError(_STALE)

    # ---- ctxfold -----------------------------------------------------------------------------

    def context(self, app_name: str, user_id: str, session_id_: str) -> Context | None:
        """The ctxfold Context of a session (``None`` when absent): its transcript has each
        event as a message, compactions applied; ``events()`` keeps all. In memory, the
        session's own Context; on a ``ctxfold.Store``, loaded now; on an ``AsyncStore`` (or a
        URL), the Context as of this service's last call on the session (``RuntimeError`` when
        it has not read the session yet: ``await get_session(...)`` first)."""
        return self._logs.context(session_id(app_name, user_id, session_id_))

    async def close(self) -> None:
        """Close the store if this service opened it from a URL."""
        await self._logs.close()
