"""Where the sessions live: in this process (``MemoryLogs``) or in a store (``StoredLogs``).
Both hand the service the same things — a session's log caught up with what is stored, its
recent events, the sessions under an id prefix, the shared state — so the service's rules
(ADK's scopes, stale writers, compaction) are written once, over either.

The calls are coroutines. A ``ctxfold.AsyncStore`` is awaited as it is; a blocking
``ctxfold.Store`` is called on a worker thread (``_ThreadedStore``), so either way the event
loop never waits on the database. In memory nothing waits: the calls run inline.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from ..._context import Context
from ...errors import ConflictError
from ...stores import AsyncStore, Store
from ...stores._opening import opened_store
from ._events import EVENT_KEY, event_text_of_row, timestamp_of_row

__all__ = ["INFO_KEY", "MemoryLogs", "SessionLog", "StoredLogs", "Stripes", "WriteLost"]

# The session's own fields (ids, session-scoped state, times) ride in the Context's deps
# under this key, as one JSON text: text, so that the store's redaction of credential-shaped
# deps keys never touches a state key such as "api_token".
INFO_KEY = "adk_session"
STATE_KEY = "adk_state"  # deps of a shared-state Context: the app's or user's state, as JSON text

_STRIPES = 64  # writers of different sessions rarely share a lock; of one session, always
_CACHED = 256  # sessions whose Context a StoredLogs keeps in memory between calls
_MAX_ATTEMPTS = 1000  # shared-state writes retried against other writers before giving up


# (head, the session's own fields, the ADK events' JSON) of a recent read.
Recent = tuple[int, dict[str, Any], list[str]]


class WriteLost(Exception):
    """Another writer saved the session first: nothing of this write was stored."""


def info_of(deps: dict[str, Any]) -> dict[str, Any] | None:
    text = deps.get(INFO_KEY)
    return json.loads(text) if isinstance(text, str) else None


def state_of(deps: dict[str, Any]) -> dict[str, Any]:
    text = deps.get(STATE_KEY)
    state = json.loads(text) if isinstance(text, str) else {}
    return state if isinstance(state, dict) else {}


@dataclass
class SessionLog:
    """A session: its Context, the ADK events it holds (their JSON, in order, with an index by
    event id for ADK's idempotent re-delivery), and its own fields (``info``: app_name,
    user_id, id, state, last_update_time: the fields of ADK's ``Session`` but its events)."""

    ctx: Context
    info: dict[str, Any]
    texts: list[str] = field(default_factory=list)
    by_id: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def new(cls, context_id: str, info: dict[str, Any]) -> SessionLog:
        ctx = Context.deserialize({"version": 2, "id": context_id, "needs_response": False})
        ctx.merge_deps({INFO_KEY: json.dumps(info)})
        return cls(ctx, info)

    @classmethod
    def of(cls, ctx: Context) -> SessionLog:
        info = info_of(ctx.deps)
        if info is None:
            raise ValueError(f"context {ctx.id} is not an ADK session (no {INFO_KEY} in its deps)")
        log = cls(ctx, info)
        log.absorb([t for e in ctx.events() if e.message is not None and isinstance(
            t := e.message.metadata.get(EVENT_KEY), str)])
        return log

    def absorb(self, texts: list[str]) -> None:
        for text in texts:
            self.by_id.setdefault(_event_id(text), []).append(len(self.texts))
            self.texts.append(text)

    def set_info(self, info: dict[str, Any]) -> None:
        self.ctx.merge_deps({INFO_KEY: json.dumps(info)})
        self.info = info


def _event_id(text: str) -> str:
    event_id = json.loads(text).get("id", "")
    return event_id if isinstance(event_id, str) else ""


class Stripes:
    """One lock per stripe of context ids: a session's writers in this process queue on it.
    Tasks of one event loop wait on an asyncio lock; loops in other threads (a service shared
    by threads, each running its own loop) on a thread lock, waited for on a worker thread so
    no loop is blocked."""

    def __init__(self) -> None:
        self._threads = [threading.Lock() for _ in range(_STRIPES)]
        # An asyncio.Lock belongs to the loop it first waited in: one set per loop.
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[asyncio.Lock]] = \
            weakref.WeakKeyDictionary()
        self._guard = threading.Lock()

    @asynccontextmanager
    async def hold(self, context_id: str) -> AsyncIterator[None]:
        i = zlib.crc32(context_id.encode()) % _STRIPES
        loop = asyncio.get_running_loop()
        with self._guard:
            locks = self._loops.get(loop)
            if locks is None:
                locks = self._loops[loop] = [asyncio.Lock() for _ in range(_STRIPES)]
        async with locks[i]:
            lock = self._threads[i]
            if not lock.acquire(blocking=False):
                waiting = asyncio.ensure_future(asyncio.to_thread(lock.acquire))
                try:
                    await asyncio.shield(waiting)
                except asyncio.CancelledError:
                    # The wait goes on in its thread: release the lock once it is taken.
                    waiting.add_done_callback(lambda t: lock.release() if not t.cancelled() else None)
                    raise
            try:
                yield
            finally:
                lock.release()


class MemoryLogs:
    """Sessions and shared state in this process only."""

    def __init__(self) -> None:
        self._logs: dict[str, SessionLog] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._all = threading.Lock()

    async def session(self, context_id: str) -> SessionLog | None:
        return self._logs.get(context_id)

    async def exists(self, context_id: str) -> bool:
        return context_id in self._logs

    async def create(self, log: SessionLog) -> bool:
        with self._all:
            if log.ctx.id in self._logs:
                return False
            self._logs[log.ctx.id] = log
            return True

    async def commit(self, log: SessionLog) -> None:
        pass  # the Context is the stored one

    def forget(self, context_id: str) -> None:
        pass

    async def recent(self, context_id: str, count: int | None, after: float | None) -> Recent | None:
        log = self._logs.get(context_id)
        if log is None:
            return None
        texts = log.texts if count is None else log.texts[-count:] if count else []
        if after is not None:
            i = len(texts) - 1
            while i >= 0 and json.loads(texts[i]).get("timestamp", 0.0) >= after:
                i -= 1
            texts = texts[i + 1:]
        return log.ctx.next_seq, dict(log.info), list(texts)

    async def scan(self, prefix: str) -> list[str]:
        with self._all:
            return [json.dumps(log.info) for cid, log in self._logs.items() if cid.startswith(prefix)]

    async def delete(self, context_id: str) -> None:
        with self._all:
            self._logs.pop(context_id, None)

    async def state(self, context_id: str) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(self._states.get(context_id, {})))
        return copy

    async def states(self, prefix: str) -> dict[str, dict[str, Any]]:
        with self._all:
            return {cid: json.loads(json.dumps(s)) for cid, s in self._states.items() if cid.startswith(prefix)}

    async def update_state(self, context_id: str, delta: dict[str, Any]) -> None:
        with self._all:
            self._states.setdefault(context_id, {}).update(json.loads(json.dumps(delta)))

    def context(self, context_id: str) -> Context | None:
        log = self._logs.get(context_id)
        return None if log is None else log.ctx

    async def close(self) -> None:
        pass


class _ThreadedStore:
    """A blocking ``ctxfold.Store`` with the coroutines of an ``AsyncStore`` that the logs use:
    each call on a worker thread."""

    def __init__(self, store: Any) -> None:
        self._store = store

    async def load(self, context_id: str) -> Context:
        ctx: Context = await asyncio.to_thread(self._store.load, context_id)
        return ctx

    async def save(self, ctx: Context) -> None:
        await asyncio.to_thread(self._store.save, ctx)

    async def refresh(self, ctx: Context) -> int:
        n: int = await asyncio.to_thread(self._store.refresh, ctx)
        return n

    async def tail(self, context_id: str, count: int, *, before: int | None = None) -> Any:
        return await asyncio.to_thread(self._store.tail, context_id, count, before=before)

    async def scan_deps(self, prefix: str, key: str) -> list[tuple[str, str | None]]:
        rows: list[tuple[str, str | None]] = await asyncio.to_thread(self._store.scan_deps, prefix, key)
        return rows

    async def delete(self, context_id: str) -> None:
        await asyncio.to_thread(self._store.delete, context_id)

    async def contains(self, context_id: str) -> bool:
        return await asyncio.to_thread(self._store.__contains__, context_id)


class StoredLogs:
    """Sessions and shared state in a store: a ``ctxfold.AsyncStore`` (its coroutines), a
    ``ctxfold.Store`` (on worker threads), or a URL (opened here as an ``AsyncStore``). A
    session's Context is kept in memory between calls (the last ``_CACHED`` used) and caught up
    with the store (``refresh``: one indexed read when nothing is new, else only the new
    events) before each use, so an append is one read and one save of the new event, at any
    session length."""

    def __init__(self, store: Any) -> None:
        opened, self._owned = opened_store(store, prefer=AsyncStore)  # owned: opened from a URL, closed by close()
        if opened is None:
            raise TypeError("StoredLogs needs a store (MemoryLogs keeps the sessions in memory)")
        self.store: AsyncStore | Store = opened
        self._db: AsyncStore | _ThreadedStore = opened if isinstance(opened, AsyncStore) else _ThreadedStore(opened)
        self._cache: OrderedDict[str, SessionLog] = OrderedDict()
        self._states: OrderedDict[str, Context] = OrderedDict()
        self._cache_lock = threading.Lock()

    # ---- the cache -----------------------------------------------------------------------

    def _cached(self, cache: OrderedDict[str, Any], context_id: str) -> Any:
        with self._cache_lock:
            found = cache.get(context_id)
            if found is not None:
                cache.move_to_end(context_id)
            return found

    def _keep(self, cache: OrderedDict[str, Any], context_id: str, value: Any) -> None:
        with self._cache_lock:
            cache[context_id] = value
            cache.move_to_end(context_id)
            while len(cache) > _CACHED:
                cache.popitem(last=False)

    def forget(self, context_id: str) -> None:
        with self._cache_lock:
            self._cache.pop(context_id, None)
            self._states.pop(context_id, None)

    # ---- sessions ------------------------------------------------------------------------

    async def session(self, context_id: str) -> SessionLog | None:
        """The session's log as stored now, or None when the store does not hold it."""
        log: SessionLog | None = self._cached(self._cache, context_id)
        if log is not None:
            before = log.ctx.next_seq
            try:
                applied = await self._db.refresh(log.ctx)
            except ConflictError:
                log = None  # deleted, or another session under this id: read it anew
            else:
                if applied:
                    # Only the new rows: the events other writers saved since.
                    tail = await self._db.tail(context_id, log.ctx.next_seq - before, before=log.ctx.next_seq)
                    log.absorb([t for row in tail.events if (t := event_text_of_row(row)) is not None])
                    info = info_of(log.ctx.deps)
                    if info is not None:
                        log.info = info
                return log
        self.forget(context_id)
        try:
            ctx = await self._db.load(context_id)
        except KeyError:
            return None
        log = SessionLog.of(ctx)
        self._keep(self._cache, context_id, log)
        return log

    async def exists(self, context_id: str) -> bool:
        return await self._db.contains(context_id)

    async def create(self, log: SessionLog) -> bool:
        try:
            await self._db.save(log.ctx)
        except ConflictError:
            return False
        self._keep(self._cache, log.ctx.id, log)
        return True

    async def commit(self, log: SessionLog) -> None:
        try:
            await self._db.save(log.ctx)
        except ConflictError:
            raise WriteLost() from None

    async def recent(self, context_id: str, count: int | None, after: float | None) -> Recent | None:
        """(head, info, the ADK events' JSON) of the session's last ``count`` events that are
        not older than ``after`` (ADK's ``GetSessionConfig``), reading the log backwards in
        growing pages from one head: O(what is returned), not O(session)."""
        page = 16 if count is None else 0 if count == 0 else count + 4
        before: int | None = None
        head = 0
        info: dict[str, Any] | None = None
        found: list[str] = []
        while True:
            try:
                tail = await self._db.tail(context_id, page, before=before)
            except KeyError:
                return None
            if info is None:
                head = tail.head
                info = info_of(tail.state.get("deps") or {}) or {}
            done = not tail.events or tail.events[0].get("seq", 0) == 0 or count == 0
            for row in reversed(tail.events if count != 0 else []):
                text = event_text_of_row(row)
                if text is None:
                    continue
                if after is not None and timestamp_of_row(row) < after:
                    done = True
                    break
                found.append(text)
                if count is not None and len(found) >= count:
                    done = True
                    break
            if done:
                break
            before = tail.events[0]["seq"]
            page *= 2
        found.reverse()
        return head, info, found

    async def scan(self, prefix: str) -> list[str]:
        """The sessions' own fields under an id prefix, each its JSON text as stored."""
        return [text for _, text in await self._db.scan_deps(prefix, INFO_KEY) if text is not None]

    async def delete(self, context_id: str) -> None:
        self.forget(context_id)
        try:
            await self._db.delete(context_id)
        except KeyError:
            pass

    # ---- shared state --------------------------------------------------------------------

    async def state(self, context_id: str) -> dict[str, Any]:
        try:
            return state_of((await self._db.tail(context_id, 0)).state.get("deps") or {})
        except KeyError:
            return {}

    async def states(self, prefix: str) -> dict[str, dict[str, Any]]:
        return {cid: state_of({STATE_KEY: text}) for cid, text in await self._db.scan_deps(prefix, STATE_KEY)}

    async def update_state(self, context_id: str, delta: dict[str, Any]) -> None:
        """``state.update(delta)`` on the stored state, against other writers: each update is
        one bookkeeping event (the delta) and the new state, saved only if nobody saved in
        between; else caught up and redone, so no writer's keys are lost."""
        for _ in range(_MAX_ATTEMPTS):
            ctx: Context | None = self._cached(self._states, context_id)
            try:
                if ctx is not None:
                    await self._db.refresh(ctx)
                else:
                    ctx = await self._db.load(context_id)
            except (ConflictError, KeyError):
                ctx = Context.deserialize({"version": 2, "id": context_id, "needs_response": False})
            state = state_of(ctx.deps)
            state.update(delta)
            ctx.log_event("step_end", {STATE_KEY: json.dumps(delta)})
            ctx.merge_deps({STATE_KEY: json.dumps(state)})
            try:
                await self._db.save(ctx)
            except ConflictError:
                self.forget(context_id)
                continue
            self._keep(self._states, context_id, ctx)
            return
        raise ConflictError(f"{context_id}: gave up after {_MAX_ATTEMPTS} conflicting writes")

    # ---- outside the event loop ------------------------------------------------------------

    def context(self, context_id: str) -> Context | None:
        """The session's Context without awaiting: from a blocking ``Store``, loaded now; from
        an ``AsyncStore``, the copy this service holds as of its last call on the session."""
        from ... import Store

        if isinstance(self.store, Store):
            try:
                ctx: Context = self.store.load(context_id)
            except KeyError:
                return None
            return ctx
        log: SessionLog | None = self._cached(self._cache, context_id)
        if log is None:
            raise RuntimeError(f"session {context_id!r} has not been read by this service: await get_session() "
                               "first (on an AsyncStore the Context is read by the service's calls)")
        return log.ctx

    async def close(self) -> None:
        if not self._owned:
            return
        if isinstance(self.store, AsyncStore):
            await self.store.close()
        else:
            await asyncio.to_thread(self.store.close)
