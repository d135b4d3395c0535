"""ctxfold as the OpenAI Agents SDK's ``Session`` (extra ``ctxfold[openai-agents]``).

``ContextSession(session_id, store=None, *, session_settings=None)`` keeps the Responses input
items the SDK hands it as a ctxfold ``Context``, one message per item, through the
``openai_responses`` format of ``ctxfold.formats``; ``get_items`` turns them back into exactly
the items that were added. Removals (``pop_item``, ``clear_session``) are ``remove`` events, so
the log keeps everything a run ever wrote. Without a store the session lives in memory; with a
``ctxfold.Store`` (or its URL) every call appends only what is new, and sessions with the same
id on the same store — in this process or others — see each other's items.

    from agents import Agent, Runner
    from ctxfold.adapters.openai_agents import ContextSession

    session = ContextSession("user-42", "sessions.db")
    await Runner.run(agent, "Hello", session=session)
    session.context            # the Context: windows, compaction, history, formats

See ``docs/adapters.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

try:
    from agents.memory.session_settings import SessionSettings, coerce_session_settings, resolve_session_limit
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "ctxfold.adapters.openai_agents needs the OpenAI Agents SDK: pip install 'ctxfold[openai-agents]'"
    ) from exc

from .. import formats
from .._compaction import CompactionPlan, Compactor
from .._context import Context
from .._core import Message
from ..errors import ConflictError, FormatError

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionInputCallback

    from ..stores import AsyncStore, Store

__all__ = ["ContextSession"]

_T = TypeVar("_T")
_logger = logging.getLogger("ctxfold")

# A write that keeps losing the race to other writers gives up after this many attempts rather
# than spin forever; each loss means another writer's turn landed, so the store is progressing.
_MAX_ATTEMPTS = 1000


class ContextSession:
    """The SDK's ``Session`` protocol over a ctxfold ``Context`` (``isinstance(s,
    agents.memory.Session)`` holds).

    ``store``: ``None`` (in memory, private to this object), a ``ctxfold.AsyncStore`` or a
    store URL / path (opened here as an ``AsyncStore`` and closed by ``close()``), or a
    ``ctxfold.Store`` (its blocking calls then run on worker threads). ``session_settings``: a
    ``SessionSettings`` or its dict; ``settings.limit`` is the default of ``get_items``.
    ``compaction``: a ``ctxfold.Compactor``; after ``add_items`` leaves the history over its
    budget, the oldest items are summarized (one replace event: the log keeps them).
    """

    session_id: str
    """The session's id: the id of its context, in the store and in memory."""
    session_settings: SessionSettings | None
    """The SDK's session settings (``limit`` caps what ``get_items`` returns)."""

    def __init__(
        self,
        session_id: str,
        store: AsyncStore | Store | str | os.PathLike[str] | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        compaction: Compactor | None = None,
    ) -> None:
        if compaction is not None and not isinstance(compaction, Compactor):
            raise TypeError(f"compaction must be a ctxfold.Compactor, got {type(compaction).__name__}")
        self.compaction = compaction
        """The ``Compactor`` run after ``add_items`` leaves the history over its budget, or ``None``."""
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty str")
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self._log: _MemoryLog | _StoredLog | _AsyncStoredLog = _open_log(session_id, store)
        self._closed = False

    # ---- the Context behind the session ----------------------------------------------------

    @property
    def context(self) -> Context:
        """The Context holding the items, as of this session's last call (a stored session
        reads the store on its next call, not here). Window it, count it, export it with
        ``ctxfold.formats``; ``messages[i]`` is item ``i`` of ``get_items()``. A session on an
        ``AsyncStore`` (or a URL) has read nothing before its first call: ``RuntimeError``
        then, rather than an empty Context that is not the stored one."""
        return self._log.context()

    @property
    def store(self) -> AsyncStore | Store | None:
        """The store the items are saved to, or ``None`` in memory."""
        return None if isinstance(self._log, _MemoryLog) else self._log.store

    # ---- the Session protocol --------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items in order (``session_settings.limit`` when ``limit`` is
        ``None``; all of them when both are ``None``; ``0`` → ``[]``), each exactly as added."""
        self._check_open()
        n = resolve_session_limit(limit, self.session_settings)
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
            raise ValueError(f"limit must be None or an int >= 0, got {n!r}")
        return await self._log.read(lambda ctx: _items(ctx if n is None else ctx._tail(n)))

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items, one message each. A malformed item → ``ctxfold.FormatError`` and
        nothing is added."""
        self._check_open()
        messages = _messages(items)
        if messages:
            await self._log.write(lambda ctx: ctx.add_messages(messages))
            if self.compaction is not None:
                await _compact(self._log, self.compaction)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the last item (a ``remove`` event: the log keeps it) and return it exactly as
        it was added; ``None`` when the session is empty."""
        self._check_open()

        def pop(ctx: Context) -> TResponseInputItem | None:
            last = ctx.last_message()
            if last is None:
                return None
            item = _items([last])[0]
            ctx.remove_message(ctx.message_count - 1)
            return item

        return await self._log.write(pop)

    async def clear_session(self) -> None:
        """Remove every item (one ``remove`` event; none when already empty). The log keeps
        them: ``context.messages_at(seq)`` still reads the past."""
        self._check_open()
        await self._log.write(lambda ctx: ctx.clear())

    # ---- the SDK's atomic compaction ----------------------------------------------------------

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[TResponseInputItem], bool] | None = None
    ) -> Any:
        """The SDK's compaction protocol (what its ``OpenAIResponsesCompactionSession`` asks a
        backend for before an automatic compaction): the last ``limit`` items, whether they are
        the whole history, and ``replace_suffix(start, output)``, which swaps the items from
        ``start`` of that read for ``output`` in one write — if those items are still the last
        ones (else ``False`` and nothing written). ``prune_prefix`` (the SDK's
        ``EncryptedSession`` passes one) also removes, in that same write, the oldest items it
        says are expired. On a store the write is one save: one transaction, and a conflict
        with another writer re-checks the suffix against what is stored now.

        ``None`` (no snapshot: the SDK then reads the whole history) from a subclass that
        overrides how items are read or written, whose own rules a snapshot would bypass."""
        if not _snapshot_safe(type(self)):
            return None
        try:
            from agents.memory.session import _CompactionSnapshot
        except ImportError:  # an SDK without the protocol never asks for it
            return None
        self._check_open()
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1, got {limit!r}")

        def read(ctx: Context) -> tuple[list[str], list[TResponseInputItem], bool]:
            tail = ctx._tail(limit)
            return [m.id for m in tail], _items(tail), ctx.message_count <= limit

        ids, items, complete = await self._log.read(read)

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            expected = ids[start:]
            if not expected:
                return False
            replacement = _messages(output)  # a malformed item: FormatError before anything is written

            def replace(ctx: Context) -> bool:
                n, k = ctx.message_count, len(expected)
                if n < k or [m.id for m in ctx._tail(k)] != expected:
                    return False  # the suffix changed since it was read
                first = n - k
                expired = 0
                if prune_prefix is not None:
                    for item in _items(ctx[:first]):
                        if not prune_prefix(item):
                            break
                        expired += 1
                ctx.remove_message_range(first, n - 1)
                if expired:
                    ctx.remove_message_range(0, expired - 1)
                ctx.add_messages(replacement)
                return True

            return await self._log.write(replace)

        return _CompactionSnapshot(items, complete, replace_suffix)

    # ---- extras ------------------------------------------------------------------------------

    def token_window(self, max_tokens: int, encoding: str = "o200k_base") -> SessionInputCallback:
        """A ``RunConfig(session_input_callback=...)`` that gives the model the longest suffix
        of the history that fits in ``max_tokens`` together with the new input (tokens counted
        exactly by ctxfold, from counts cached per message), never starting on a tool
        result. The whole history stays in the session; only the model's view is windowed."""
        if not isinstance(max_tokens, int) or max_tokens < 0:
            raise ValueError("max_tokens must be an int >= 0")

        def combine(history: list[TResponseInputItem], new_items: list[TResponseInputItem]) -> list[TResponseInputItem]:
            budget = max_tokens - sum(m.count_tokens(encoding) for m in _messages(new_items))
            keep = _fitting_suffix(self.context.messages, budget, encoding)
            keep = min(keep, len(history))
            return history[len(history) - keep :] + new_items

        return combine

    def close(self) -> None:
        """End the session: its calls then raise ``RuntimeError``, as a closed
        ``SQLiteSession``'s do. Closes the store if this session opened it from a URL (a store
        passed in is the caller's to close). Closing twice is harmless."""
        if not self._closed:
            self._closed = True
            self._log.close()

    def _check_open(self) -> None:
        if self._closed:
            # Worded as the SDK's own sessions word it ("SQLiteSession is closed").
            raise RuntimeError(f"{type(self).__name__} is closed (session {self.session_id!r})")

    def __repr__(self) -> str:
        where = "memory" if self.store is None else "store"
        return f"ContextSession({self.session_id!r}, {where})"


# ---- items <-> messages ----------------------------------------------------------------------


def _messages(items: Sequence[Any]) -> list[Message]:
    """One message per item through the ``openai_responses`` importer; nothing half-done."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"items must be a list of Responses input items, got {type(items).__name__}")
    if not items:
        return []
    items = [_wrap_opaque(i) if _is_opaque(i) else i for i in items]
    messages = formats.from_openai_responses(items)
    if len(messages) != len(items):  # the format promises one message per item
        raise FormatError(f"{len(items)} items became {len(messages)} messages")
    return messages


def _items(src: Context | list[Message]) -> list[TResponseInputItem]:
    """The items the messages were made from, exactly, in order. ``pair=False``: no request
    pairing — a ``function_call`` still waiting for its output, or an output whose call was
    popped, is given back as it was added (the SDK pops and rewinds items one by one). A
    whole Context is exported in Rust under one lock, without a Python list of its messages."""
    if isinstance(src, list) and not src:
        return []
    items: list[Any] = formats.to_openai_responses(src, pair=False)["input"]
    return [i["item"] if i.get("type") == _OPAQUE else i for i in items]


# An item that is not a Responses item at all (no "type", no "role": an EncryptedSession
# envelope, say) is kept opaque: wrapped in an item of a type of ours, which the format keeps
# as an item it has no meaning for and gives back as it came, and unwrapped on the way out.
_OPAQUE = "ctxfold_opaque_item"


def _is_opaque(item: Any) -> bool:
    return isinstance(item, dict) and "type" not in item and "role" not in item


def _wrap_opaque(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": _OPAQUE, "item": item}


_SESSION_METHODS = ("get_items", "add_items", "pop_item", "clear_session")


def _snapshot_safe(cls: type) -> bool:
    """Whether a snapshot's direct reads and writes of the Context are what ``cls`` would do:
    it keeps ContextSession's own session methods."""
    return all(getattr(cls, name, None) is getattr(ContextSession, name) for name in _SESSION_METHODS)


def _fitting_suffix(messages: list[Message], budget: int, encoding: str) -> int:
    """How many of the last messages fit in ``budget`` tokens, the kept run not starting on a
    tool result. Walks back from the end, so it costs what it keeps."""
    total = 0
    keep = 0
    for m in reversed(messages):
        total += m.count_tokens(encoding)
        if total > budget:
            break
        keep += 1
    start = len(messages) - keep
    while keep and _is_tool_result(messages[start]):
        start += 1
        keep -= 1
    return keep


def _is_tool_result(m: Message) -> bool:
    return m.role == "tool" or any(p.type == "tool_result" for p in m.parts)


async def _compact(log: _MemoryLog | _StoredLog | _AsyncStoredLog, compactor: Compactor) -> None:
    """Summarize the oldest items when the history is over the compactor's budget. The plan
    is made under the session's lock, the summarizer runs outside it (items may be added
    meanwhile), and the summary is applied as a compare-and-swap: a plan that went stale, or a
    summarizer that raised, leaves the history as it is until the next ``add_items``."""
    plan: CompactionPlan | None = await log.read(
        lambda ctx: ctx.plan_compaction(compactor.max_tokens, **compactor.plan_options)
    )
    if plan is None:
        return
    try:
        summary = compactor.summarize(plan)
        if inspect.isawaitable(summary):
            summary = await summary
    except Exception:
        # The items are saved; a failed summary must not fail the turn that added them.
        # Nothing was written, and the next add_items tries again.
        _logger.warning("ctxfold: the summarizer failed; the history is left as it is", exc_info=True)
        return

    def apply(ctx: Context) -> None:
        try:
            ctx.apply_compaction(plan, summary)
        except ConflictError:
            # Stale (the store writer's own retry also raises ConflictError, so this one
            # must not escape as if the save had lost a race).
            _logger.info("ctxfold: compaction of %s skipped: the history changed meanwhile", log)

    await log.write(apply)


def _new_context(session_id: str) -> Context:
    """An empty Context whose id is the session id (the key it is stored under)."""
    return Context.deserialize({"version": 2, "id": session_id})


# ---- where the Context lives -----------------------------------------------------------------


class _MemoryLog:
    """The Context in this process only. Calls run inline: there is no I/O to wait for."""

    def __init__(self, session_id: str) -> None:
        self._ctx = _new_context(session_id)
        self._lock = threading.Lock()

    def context(self) -> Context:
        return self._ctx

    async def read(self, op: Callable[[Context], _T]) -> _T:
        with self._lock:
            return op(self._ctx)

    async def write(self, op: Callable[[Context], _T]) -> _T:
        with self._lock:
            return op(self._ctx)

    def close(self) -> None:
        pass


class _StoredLog:
    """The Context in a ``ctxfold.Store``: each call brings the local copy up to the store's
    head (``Store.refresh``: one indexed read when nothing is new, else only the new events),
    applies its change, and saves only the new events. A ``ConflictError`` (another writer
    saved in between) rewinds the unsaved change, refreshes and redoes it, so concurrent
    writers lose nothing. Store work runs in a worker thread so the event loop is never
    blocked."""

    def __init__(self, session_id: str, store: Store, *, owned: bool) -> None:
        self.store, self._owned = store, owned
        self._id = session_id
        self._ctx: Context | None = None  # loaded on first use, in the worker thread
        self._lock = threading.Lock()

    def context(self) -> Context:
        with self._lock:
            if self._ctx is None:
                self._ctx = self._load()
            return self._ctx

    def _load(self) -> Context:
        try:
            return self.store.load(self._id)
        except KeyError:
            return _new_context(self._id)

    def _caught_up(self) -> Context:
        """The local copy with every event other writers stored since it was read."""
        if self._ctx is None:
            self._ctx = self._load()
        elif self._ctx.stored_seq is None:
            # Never saved: the session is new, unless another writer has created it since.
            if self.store.head(self._id) is not None:
                self._ctx = self._load()
        else:
            try:
                self.store.refresh(self._ctx)
            except ConflictError:
                # Deleted from the store, or saved anew under this id: what is stored now wins.
                self._ctx = self._load()
        return self._ctx

    def _read(self, op: Callable[[Context], _T]) -> _T:
        with self._lock:
            return op(self._caught_up())

    def _write(self, op: Callable[[Context], _T]) -> _T:
        # Optimistic: change the caught-up copy and save it. If another writer saved in
        # between, the store refuses (ConflictError) and nothing is written: rewind the
        # change, catch up with what is stored now and redo it. No item is lost and none is
        # written twice.
        with self._lock:
            ctx = self._caught_up()
            for attempt in range(_MAX_ATTEMPTS):
                point = ctx._savepoint()
                try:
                    result = op(ctx)
                    if ctx.next_seq == point.seq:
                        return result  # nothing to write (a pop or clear of an empty session)
                    self.store.save(ctx)
                    return result
                except ConflictError:
                    # The copy holds the change unsaved: drop it. A short random pause
                    # spreads out writers that keep colliding.
                    ctx._rewind(point)
                    ctx = self._caught_up()
                    time.sleep(random.uniform(0, 0.001 * min(attempt + 1, 20)))
                except BaseException:
                    self._ctx = None  # never keep a copy that may differ from the store
                    raise
            raise ConflictError(f"session {self._id!r}: gave up after {_MAX_ATTEMPTS} conflicting writes")

    async def read(self, op: Callable[[Context], _T]) -> _T:
        return await asyncio.to_thread(self._read, op)

    async def write(self, op: Callable[[Context], _T]) -> _T:
        # Shielded: once a write has started it runs to its end in its thread (a cancelled
        # caller does not leave the session half-written); the lock orders the next call after it.
        return await asyncio.shield(asyncio.to_thread(self._write, op))

    def close(self) -> None:
        if self._owned:
            self.store.close()


def _open_log(session_id: str, store: Any) -> _MemoryLog | _StoredLog | _AsyncStoredLog:
    """Where the session's Context lives: in memory, or in the store (a URL or a path opened as
    an ``AsyncStore``, which the log closes; a store passed in stays its caller's)."""
    from .. import AsyncStore, Store
    from ..stores._opening import opened_store

    opened, owned = opened_store(store, prefer=AsyncStore)
    if opened is None:
        return _MemoryLog(session_id)
    if isinstance(opened, Store):
        return _StoredLog(session_id, opened, owned=owned)
    return _AsyncStoredLog(session_id, opened, owned=owned)


class _AsyncStoredLog:
    """The Context in a ``ctxfold.AsyncStore``: ``_StoredLog``'s rules (catch up, change,
    save only the new events; a conflict rewinds, catches up and redoes the change) with the
    store's coroutines, so the event loop never waits on the database."""

    def __init__(self, session_id: str, store: AsyncStore, *, owned: bool) -> None:
        self.store, self._owned = store, owned
        self._id = session_id
        self._ctx: Context | None = None  # loaded on first use
        # One lock per event loop: an asyncio.Lock belongs to the loop it first waited in,
        # and a session may outlive a loop (asyncio.run per call).
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
        self._thread_lock = threading.Lock()

    def _loop_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    @contextlib.asynccontextmanager
    async def _lock(self) -> AsyncIterator[None]:
        """The session's calls in turn: the tasks of one loop on an asyncio lock, and loops in
        other threads (a session shared by threads, each running its own loop) on a thread
        lock, waited for on a worker thread so the loop is never blocked."""
        async with self._loop_lock():
            if not self._thread_lock.acquire(blocking=False):
                waiting = asyncio.ensure_future(asyncio.to_thread(self._thread_lock.acquire))
                try:
                    await asyncio.shield(waiting)
                except asyncio.CancelledError:
                    # The wait goes on in its thread: release the lock once it is taken.
                    waiting.add_done_callback(lambda t: self._thread_lock.release() if not t.cancelled() else None)
                    raise
            try:
                yield
            finally:
                self._thread_lock.release()

    def context(self) -> Context:
        if self._ctx is None:
            raise RuntimeError(f"session {self._id!r} has not read its store yet: await one of its calls "
                               "(get_items()) first")
        return self._ctx

    async def _load(self) -> Context:
        try:
            return await self.store.load(self._id)
        except KeyError:
            return _new_context(self._id)

    async def _caught_up(self) -> Context:
        if self._ctx is None:
            self._ctx = await self._load()
        elif self._ctx.stored_seq is None:
            if await self.store.head(self._id) is not None:
                self._ctx = await self._load()
        else:
            try:
                await self.store.refresh(self._ctx)
            except ConflictError:
                self._ctx = await self._load()
        return self._ctx

    async def read(self, op: Callable[[Context], _T]) -> _T:
        async with self._lock():
            return op(await self._caught_up())

    async def _write(self, op: Callable[[Context], _T]) -> _T:
        async with self._lock():
            ctx = await self._caught_up()
            for attempt in range(_MAX_ATTEMPTS):
                point = ctx._savepoint()
                try:
                    result = op(ctx)
                    if ctx.next_seq == point.seq:
                        return result
                    await self.store.save(ctx)
                    return result
                except ConflictError:
                    ctx._rewind(point)
                    ctx = await self._caught_up()
                    await asyncio.sleep(random.uniform(0, 0.001 * min(attempt + 1, 20)))
                except BaseException:
                    self._ctx = None
                    raise
            raise ConflictError(f"session {self._id!r}: gave up after {_MAX_ATTEMPTS} conflicting writes")

    async def write(self, op: Callable[[Context], _T]) -> _T:
        # Shielded: a write once started runs to its end (a cancelled caller does not leave
        # the session half-written); the lock orders the next call after it.
        return await asyncio.shield(self._write(op))

    def close(self) -> None:
        if self._owned:
            self.store._close_now()
