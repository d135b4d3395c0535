"""ctxfold as LangGraph's checkpointer (extra ``ctxfold[langgraph]``).

``ContextSaver(store=None, *, serde=None)`` is a ``BaseCheckpointSaver``, sync and async. A
message channel (a list of LangChain messages, found by value) lives as ctxfold Context logs
per thread, namespace and channel: a checkpoint appends only what changed (new messages, a
message replaced by id, removals) and records where its list stands; reading a checkpoint is
the fold there. A checkpoint whose parent is not the latest list of its log (time travel,
``update_state`` on an old checkpoint, a writer that lost a race) starts a fork that shares its
parent's list up to where it parts from it. Every other channel is stored once per version
through ``serde``, and pending writes as the stock savers store them. With a store, one
checkpoint is one transaction: its log appends and its rows.

    from langgraph.graph import StateGraph, MessagesState
    from ctxfold.adapters.langgraph import ContextSaver

    saver = ContextSaver("threads.db")      # or a ctxfold.Store, or None (memory)
    graph = builder.compile(checkpointer=saver)

See ``docs/adapters.md``.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import json
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext as _nolock
from typing import Any, NamedTuple, TypeVar

try:
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        DeltaChannelHistory,
        PendingWrite,
        get_checkpoint_id,
        get_checkpoint_metadata,
        writes_sort_key,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("ctxfold.adapters.langgraph needs LangGraph: pip install 'ctxfold[langgraph]'") from exc

from ...errors import ConflictError
from ...stores import AsyncStore, Store
from ...stores._opening import beside, opened_store
from ...stores._rows import Statement
from ._atables import AsyncTables
from ._logs import Logs, NeedIO, Segment, decode, encode, log_id
from ._messages import MessageLog, as_put
from ._tables import CheckpointRow, Tables

__all__ = ["ContextSaver"]

_T = TypeVar("_T")

# The blob type of a message channel's value: its data is the list's segments (JSON), where in
# the channel's logs the list stands (see _logs).
MESSAGES = "ctxfold.messages"

# A put that keeps losing the race to other writers gives up after this many attempts; each
# loss means another writer's checkpoint landed, so the store is progressing.
_MAX_ATTEMPTS = 1000
# Connections a PostgreSQL saver opens up front: the most a turn of a graph was seen to use at once.
_CONNECTIONS_AT_ONCE = 3
# How many checkpoints' segments are remembered (a put reads its parent's from here).
_REMEMBERED = 1024
# Ancestors a DeltaChannel's history reads per statement (it stops at a stored value, which
# LangGraph writes every snapshot_frequency updates: 100 by default).
_CHAIN_PAGE = 128

Refs = dict[str, list[Segment]]


class Prepared(NamedTuple):
    """A put's checkpoint as taken when the put is called, before it waits for anything (the
    graph's thread goes on meanwhile, and may change what it passed): its row, its run id, its
    channel values, those of its message channels as ``as_put`` gives them, every other new
    channel value through ``serde``, the channels it changes, and the config it returns (the
    thread id as given: the rows hold its text, as the stock savers' do)."""

    row: CheckpointRow
    run_id: str | None
    values: dict[str, Any]
    lists: dict[str, list[BaseMessage]]
    plain: dict[str, tuple[str, bytes]]
    new_versions: ChannelVersions
    config: RunnableConfig


class _Done:
    """An awaitable with nothing to wait for: what ``ContextSaver.setup`` returns."""

    def __await__(self) -> Generator[None, None, None]:
        yield from ()


class ContextSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer whose message channels are ctxfold logs.

    ``store``: ``None`` (in memory, private to this saver), a ``ctxfold.Store``, a
    ``ctxfold.AsyncStore``, or a store URL or path (opened here, closed by ``close()``). The
    async methods run on an AsyncStore (the one given, or one the saver opens on the store's
    database); the blocking ones on a Store (the one given, or one the saver opens beside a
    given AsyncStore); a store the saver opens beside another is as ``durable`` as it. The
    checkpoint rows go into the store's database beside its contexts, each checkpoint in one
    transaction with its log appends.
    ``serde``: LangGraph's serializer for every other channel and the pending writes
    (``JsonPlusSerializer`` by default). One that encrypts (``EncryptedSerializer``, or any
    whose type names carry its ``+cipher`` mark) keeps every message too: the log's message
    then holds its role and ids, and the message itself only as that serializer's bytes.
    ``share_messages``: by default a read returns copies of its messages, a put keeps a copy
    of what it is given and compares the whole list with its own by value, so that a message
    its holder changes in place changes no checkpoint, and one changed in place and put again
    is recorded as changed (as with LangGraph's own savers), at a copy per message read and a
    comparison per message put. ``True`` shares the objects instead, for callers that never
    change a message in place: a read of a thread's latest checkpoint then costs no copy, and a
    put finds the unchanged messages by identity, so that it costs what changed. Either way a
    message without an id is copied when it is put and when it is read, and never found by
    identity: LangGraph's ``add_messages`` gives such a message its id in place (the one change
    in place LangGraph's reducers make), and a checkpoint holds it as it was when it was put.
    Any thread may call it; its connections are pooled."""

    def __init__(self, store: Store | AsyncStore | str | os.PathLike[str] | None = None, *,
                 serde: SerializerProtocol | None = None, share_messages: bool = False) -> None:
        super().__init__(serde=serde)
        self._share = bool(share_messages)
        given, owned = opened_store(store, prefer=Store)
        opened: list[Store | Tables] = [given] if owned and isinstance(given, Store) else []
        try:
            self._open(given, owned, opened)
        except BaseException:  # nothing this saver opened is left open
            for thing in reversed(opened):
                thing.close()
            raise

    def _open(self, given: Store | AsyncStore | None, owned: bool, opened: builtins.list[Store | Tables]) -> None:
        """The saver's state on ``given``; what it opens goes into ``opened`` (closed by the
        constructor should a later step fail)."""
        # Given an AsyncStore, the async calls run on it and the blocking ones on a Store of the
        # saver's own beside it.
        given_async: AsyncStore | None = None
        store: Store | None
        if isinstance(given, AsyncStore):
            given_async = given
            store = mine = beside(given)
            opened.append(mine)
        else:
            store = given
        self.store: Store | None = store
        """The store the checkpoints are kept in, or ``None`` (in memory)."""
        self._own_store = owned or given_async is not None
        # The checkpoint rows go into the store's own database, on the store's connections:
        # written with the log appends, read and pending writes on their own.
        backend: Any = self.store._db if self.store is not None else None
        self._tables = Tables(backend)
        opened.append(self._tables)
        self._logs = Logs(self.store, self.serde, self._share)
        # LangGraph writes a checkpoint and a task's pending writes from two threads at once.
        # SQLite has one writer per file: two connections racing for it meet SQLITE_BUSY and
        # sleep in its busy handler (milliseconds), so this saver's writes take turns here
        # instead. PostgreSQL locks rows, not the database: no lock.
        postgres = self._tables._pg  # the store's PostgreSQL backend, or None
        self._sqlite_writes: threading.Lock | None = None if postgres is not None else threading.Lock()
        if postgres is not None:
            # A turn of a graph uses up to three connections at once (a checkpoint's put and
            # its tasks' pending writes): opened now, and each has run what a turn runs, not
            # inside the first turn's calls.
            statements, checkpoint, undo = self._tables.turn_statements()
            postgres.open_idle(_CONNECTIONS_AT_ONCE, statements, [checkpoint], undo)
        # (thread, namespace, checkpoint id) → its message channels' segments: facts that
        # never change, so that a put finds its parent's without a read.
        self._refs: OrderedDict[tuple[str, str, str], Refs] = OrderedDict()
        self._async_worker: ThreadPoolExecutor | None = None
        self._astore: AsyncStore | None = given_async
        self._own_astore = given_async is None
        self._atables: AsyncTables | None = None
        self._aputs: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._aopened: asyncio.AbstractEventLoop | None = None  # the loop _aio opened connections for
        self._closed = False
        if self.store is not None:  # the store's schema checked now, not in a first turn
            self.store.head("")

    # ---- lifetime --------------------------------------------------------------------------

    @classmethod
    def from_conn_string(cls, conn_string: str, *, serde: SerializerProtocol | None = None,
                         share_messages: bool = False) -> ContextSaver:
        """A saver on ``conn_string``, for code written for the stock savers (``with
        SqliteSaver.from_conn_string(…) as saver``, ``async with
        AsyncPostgresSaver.from_conn_string(…) as saver``): a store URL (``sqlite://…``,
        ``postgresql://…``), a SQLite file's path, or ``":memory:"`` (in memory). The saver is
        its own context manager, blocking and async: leaving the block closes it."""
        return cls(None if conn_string == ":memory:" else conn_string, serde=serde, share_messages=share_messages)

    def setup(self) -> Awaitable[None]:
        """Nothing to do: the saver makes its tables when it opens its store. Here so that code
        written for the stock savers runs unchanged, blocking (``saver.setup()``) or async
        (``await saver.setup()``): what it returns is an awaitable that is already done."""
        self._check_open()
        return _Done()

    def close(self) -> None:
        """Close the checkpoint tables' connections, and the store if this saver opened it;
        later calls raise ``RuntimeError``. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._async_worker is not None:
            self._async_worker.shutdown(wait=True)
        if self._astore is not None and self._own_astore:
            self._astore._close_now()
        self._tables.close()
        if self._own_store and self.store is not None:
            self.store.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")

    def __enter__(self) -> ContextSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ContextSaver:
        """The saver, its async connections opened (see ``_aio``)."""
        await self._aio()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # ---- the segments of checkpoints -------------------------------------------------------

    def _remember(self, key: tuple[str, str, str], refs: Refs) -> None:
        self._refs[key] = refs
        self._refs.move_to_end(key)
        while len(self._refs) > _REMEMBERED:
            self._refs.popitem(last=False)

    def _forget(self, thread_id: str) -> None:
        for key in [k for k in self._refs if k[0] == thread_id]:
            del self._refs[key]

    def _parent_refs(self, thread_id: str, ns: str, parent_id: str | None, remembered: bool) -> Refs:
        """The segments of the parent checkpoint's message channels (none without one)."""
        if parent_id is None:
            return {}
        key = (thread_id, ns, parent_id)
        if remembered and key in self._refs:
            return self._refs[key]
        row = self._tables.checkpoint(thread_id, ns, parent_id)
        if row is None:
            return {}
        parent: Checkpoint = self.serde.loads_typed((row[4], row[5]))
        refs = {channel: decode(data)
                for channel, kind, data in self._tables.blobs(thread_id, ns, parent["channel_versions"])
                if kind == MESSAGES}
        self._remember(key, refs)
        return refs

    # ---- writing ---------------------------------------------------------------------------

    def _prepare(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                 new_versions: ChannelVersions) -> Prepared:
        """What a put stores, taken before it waits for anything (see ``Prepared``): the
        channel values first."""
        self._check_open()
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        parent_id: str | None = conf.get("checkpoint_id")
        c = checkpoint.copy()
        values: dict[str, Any] = c.pop("channel_values")  # type: ignore[misc]
        lists: dict[str, list[BaseMessage]] = {}
        with self._logs.lock:  # (the open logs' cached lists)
            parent = self._refs.get((thread_id, ns, parent_id)) if parent_id is not None else None
            for channel in new_versions:
                if channel in values:
                    known = self._logs.known(thread_id, ns, channel, parent.get(channel)) if parent else ()
                    as_list = as_put(values[channel], known)
                    if as_list is not None:
                        lists[channel] = as_list
        # every other new value (an empty list too: it may be a message channel emptied, or not)
        plain = {channel: self.serde.dumps_typed(values[channel])
                 for channel in new_versions if channel in values and channel not in lists}
        kind, data = self.serde.dumps_typed(c)
        md = get_checkpoint_metadata(config, metadata)
        md_kind, md_data = self.serde.dumps_typed(md)
        run_id = md.get("run_id")
        row: CheckpointRow = (thread_id, ns, checkpoint["id"], parent_id, kind, data, md_kind, md_data)
        put_config: RunnableConfig = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": ns,
                                                       "checkpoint_id": checkpoint["id"]}}
        return Prepared(row, str(run_id) if run_id is not None else None, values, lists, plain, new_versions,
                        put_config)

    def _stage(self, p: Prepared, parent: Refs, trust_open: bool,
               staged: list[MessageLog]) -> tuple[list[Statement], Refs]:
        """The checkpoint's statements and its channels' segments; each message channel's log
        appended to (unsaved, added to ``staged``) or a fork started."""
        row, values, new_versions = p.row, p.values, p.new_versions
        thread_id, ns, checkpoint_id = row[0], row[1], row[2]
        refs: Refs = {ch: segs for ch, segs in parent.items() if ch not in new_versions}
        blobs: list[tuple[str, str, str, bytes]] = []
        for channel, version in new_versions.items():
            if channel not in values:
                # A version with no value (a channel consumed, as ``__start__`` is each turn) has
                # no row: a read finds none, as it skips the "empty" rows stores made before.
                continue
            value = p.lists.get(channel, values[channel])
            if channel in p.lists or (isinstance(value, list) and not value and channel in parent):
                log, segs = self._logs.stage(thread_id, ns, channel, parent.get(channel), value, checkpoint_id,
                                             trust_open=trust_open)
                if log is not None:
                    staged.append(log)
                refs[channel] = segs
                blobs.append((channel, str(version), MESSAGES, encode(segs)))
            else:
                blobs.append((channel, str(version), *p.plain[channel]))
        return self._tables.put_statements(row, p.run_id, blobs), refs

    def _put(self, p: Prepared) -> RunnableConfig:
        """Store a checkpoint: each message channel in ``new_versions`` appends what changed to
        its log (or starts a fork), every other new channel version goes through ``serde``;
        with a store, all of it in one transaction."""
        thread_id, ns, parent_id, checkpoint_id = p.row[0], p.row[1], p.row[3], p.row[2]
        with self._logs.lock:
            for attempt in range(_MAX_ATTEMPTS):
                # the first attempt trusts what this saver remembers; a retry reads the store
                parent = self._parent_refs(thread_id, ns, parent_id, remembered=attempt == 0)
                staged: list[MessageLog] = []
                try:
                    statements, refs = self._stage(p, parent, attempt == 0, staged)
                    with self._sqlite_writes or _nolock():
                        if self.store is None:
                            self._tables.run(statements)
                        else:
                            self.store._save_with([log.ctx for log in staged], statements)
                except (ConflictError, KeyError) as e:
                    # Another writer saved to a log first (or deleted one): read again, redo.
                    self._logs.drop(staged)
                    if self.store is None or (isinstance(e, KeyError) and attempt > 0):
                        raise
                    time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
                    continue
                except BaseException:
                    if self.store is not None:
                        self._logs.drop(staged)  # unsaved events: the store's logs are the truth
                    raise
                self._remember((thread_id, ns, checkpoint_id), refs)
                return p.config
        raise ConflictError(f"thread {thread_id}: a checkpoint gave up after {_MAX_ATTEMPTS} attempts lost to "
                            "other writers")

    def _put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Store a task's pending writes. Writes to LangGraph's special channels (error,
        interrupt, …) replace what the task wrote there before; other writes already stored
        are kept, as the stock savers do."""
        self._check_open()
        conf = config["configurable"]
        rows = []
        for idx, (channel, value) in enumerate(writes):
            kind, data = self.serde.dumps_typed(value)
            rows.append((WRITES_IDX_MAP.get(channel, idx), channel, kind, data))
        with self._sqlite_writes or _nolock():
            self._tables.put_writes(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf["checkpoint_id"],
                                    task_id, task_path, rows, replace=all(w[0] in WRITES_IDX_MAP for w in writes))

    # ---- reading ---------------------------------------------------------------------------

    def _get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the thread's latest in
        the namespace), every message list read as the fold of its logs where it stands."""
        self._check_open()
        conf = config["configurable"]
        row = self._tables.checkpoint(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), get_checkpoint_id(config))
        return None if row is None else self._tuple(row)

    def _list(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
              before: RunnableConfig | None, limit: int | None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and namespace and id, when it
        names them), or of every thread when ``config`` is ``None``; ``filter`` matches metadata
        keys, ``before`` keeps older checkpoints, ``limit`` caps the count. The rows are read
        now; each checkpoint, its message lists with it, is built when the caller comes to it,
        so a caller that stops early builds no more."""
        self._check_open()
        rows = self._tables.checkpoints(*self._listing(config, before, filter, limit))
        return (self._tuple(row) for row in self._listed(rows, filter, limit))

    @staticmethod
    def _listing(config: RunnableConfig | None, before: RunnableConfig | None, filter: dict[str, Any] | None,
                 limit: int | None) -> tuple[str | None, str | None, str | None, str | None, int | None]:
        """The rows a listing reads: (thread, namespace, checkpoint id, before, limit), the
        limit only when no filter leaves rows out."""
        conf = config["configurable"] if config else {}
        thread_id = conf.get("thread_id")
        return (str(thread_id) if thread_id is not None else None, conf.get("checkpoint_ns"),
                get_checkpoint_id(config) if config else None, get_checkpoint_id(before) if before else None,
                None if filter else limit)

    def _listed(self, rows: Sequence[CheckpointRow], filter: dict[str, Any] | None,
                limit: int | None) -> Iterator[CheckpointRow]:
        """The rows a listing gives, in order: those whose metadata has ``filter``'s values,
        at most ``limit``."""
        count = 0
        for row in rows:
            if limit is not None and count >= limit:
                return
            if filter:
                md = self.serde.loads_typed((row[6], row[7]))
                if not all(md.get(k) == v for k, v in filter.items()):
                    continue
            count += 1
            yield row

    def _tuple(self, row: CheckpointRow) -> CheckpointTuple:
        thread_id, ns, checkpoint_id = row[0], row[1], row[2]
        checkpoint: Checkpoint = self.serde.loads_typed((row[4], row[5]))
        blobs = self._tables.blobs(thread_id, ns, checkpoint["channel_versions"])
        values, refs = self._values(thread_id, ns, blobs)
        for channel, segs in refs.items():
            values[channel] = self._logs.read(thread_id, ns, channel, segs)
        with self._logs.lock:
            self._remember((thread_id, ns, checkpoint_id), refs)
        return self._tuple_of(row, checkpoint, values, self._tables.writes(thread_id, ns, checkpoint_id))

    def _values(self, thread_id: str, ns: str, blobs: list[tuple[str, str, bytes]]) -> tuple[dict[str, Any], Refs]:
        """The channel values ``serde`` holds, and the segments of the message channels."""
        values: dict[str, Any] = {}
        refs: Refs = {}
        for channel, blob_kind, blob in blobs:
            if blob_kind == MESSAGES:
                refs[channel] = decode(blob)
            elif blob_kind != "empty":
                values[channel] = self.serde.loads_typed((blob_kind, blob))
        return values, refs

    def _tuple_of(self, row: CheckpointRow, checkpoint: Checkpoint, values: dict[str, Any],
                  writes: list[tuple[str, str, str, bytes, str, int]]) -> CheckpointTuple:
        thread_id, ns, checkpoint_id, parent_id, _, _, md_kind, md_data = row
        writes = sorted(writes, key=lambda w: writes_sort_key(w[4], w[0], w[5]))

        def config_of(cp_id: str) -> RunnableConfig:
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cp_id}}

        return CheckpointTuple(
            config=config_of(checkpoint_id),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed((md_kind, md_data)),
            parent_config=config_of(parent_id) if parent_id else None,
            pending_writes=[(w[0], w[1], self.serde.loads_typed((w[2], w[3]))) for w in writes],
        )

    def _delta_history(self, config: RunnableConfig, channels: Sequence[str]) -> dict[str, DeltaChannelHistory]:
        """LangGraph's walk for a ``DeltaChannel`` (``BaseCheckpointSaver``'s
        ``get_delta_channel_history``, which calls ``get_tuple`` for each ancestor, every
        message list rebuilt) on the rows: up the parent chain from the checkpoint's parent,
        each ancestor's pending writes to the channels, until an ancestor holds a value of
        each (its ``seed``). A page of ancestors at a time: one statement for the chain, one
        for their writes, one for which versions hold a value; then one read per seed."""
        self._check_open()
        channels = builtins.list(dict.fromkeys(channels))
        if not channels:
            return {}
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        start = get_checkpoint_id(config)
        if start is None:
            latest = self._tables.checkpoint(thread_id, ns, None)
            start = None if latest is None else latest[2]
        found: dict[str, builtins.list[PendingWrite]] = {ch: [] for ch in channels}  # newest first
        seeds: dict[str, Any] = {}
        waiting = set(channels)
        drop = 1  # the walk starts at the checkpoint's parent: the first page holds the checkpoint too
        # Each checkpoint once: a put of a checkpoint id again, under another parent, can make the
        # chain a cycle (LangGraph's own walk then never ends); the walk stops where it repeats.
        visited: set[str] = set()
        while start is not None and waiting:
            page = []
            for row in self._tables.chain(thread_id, ns, start, _CHAIN_PAGE):
                if row[2] in visited:  # (a page cut short is the walk's last)
                    break
                visited.add(row[2])
                page.append(row)
            chain, drop = page[drop:], 0
            writes: dict[str, builtins.list[tuple[str, str, str, bytes, str, int]]] = {}
            for r in self._tables.writes_of(thread_id, ns, [row[2] for row in chain], sorted(waiting)):
                writes.setdefault(r[0], []).append(r[1:])
            versions_of = [(row, self.serde.loads_typed((row[4], row[5]))["channel_versions"]) for row in chain]
            valued = self._tables.valued(thread_id, ns, {(ch, str(v[ch])) for _, v in versions_of
                                                         for ch in waiting if ch in v})
            for row, versions in versions_of:
                mine = sorted(writes.get(row[2], ()), key=lambda w: writes_sort_key(w[4], w[0], w[5]))
                for w in reversed(mine):
                    if w[1] in waiting:
                        found[w[1]].append((w[0], w[1], self.serde.loads_typed((w[2], w[3]))))
                here = {ch: versions[ch] for ch in waiting if ch in versions and (ch, str(versions[ch])) in valued}
                if here:
                    values, refs = self._values(thread_id, ns, self._tables.blobs(thread_id, ns, here))
                    for ch, segs in refs.items():
                        values[ch] = self._logs.read(thread_id, ns, ch, segs)
                    seeds.update(values)
                    waiting -= values.keys()
                if not waiting:
                    break
            start = page[-1][3] if len(page) == _CHAIN_PAGE else None
        out: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            out[ch] = {"writes": found[ch][::-1], "seed": seeds[ch]} if ch in seeds else {"writes": found[ch][::-1]}
        return out

    # ---- deleting and copying --------------------------------------------------------------

    def _thread_logs(self, thread_id: str) -> set[str]:
        """The ids of every message log of the thread (main logs and forks, every namespace)."""
        prefix = json.dumps(["langgraph", thread_id], ensure_ascii=False)[:-1] + ", "
        with self._logs.lock:
            found = {cid for cid in self._logs._open if cid.startswith(prefix)}
        if self.store is not None:
            found |= {cid for cid, _ in self.store.scan(prefix)}
        return found

    def _delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, writes and message logs, in every namespace."""
        self._check_open()
        thread_id = str(thread_id)
        self._tables.delete_thread(thread_id)
        for cid in self._thread_logs(thread_id):
            self._logs.delete(cid)
        with self._logs.lock:
            self._forget(thread_id)

    def _versions(self, row: CheckpointRow) -> set[tuple[str, str, str]]:
        """(namespace, channel, version) of each channel version the checkpoint ``row`` holds."""
        checkpoint: Checkpoint = self.serde.loads_typed((row[4], row[5]))
        return {(row[1], channel, str(v)) for channel, v in checkpoint["channel_versions"].items()}

    def _collect(self, thread_id: str, deleted: Sequence[CheckpointRow]) -> None:
        """After the checkpoints ``deleted`` are gone: delete what they read and no remaining
        checkpoint of the thread reads, channel blobs of their versions and the message logs
        (forks, or a main log) those name. Only what a deleted checkpoint read is looked at,
        so a checkpoint saved meanwhile (a run going on from a kept one) loses nothing: it
        reads new versions and logs of its own, or those of the checkpoint it went on from. A
        log some checkpoint reads keeps every event (the store only appends)."""
        freed = set().union(*map(self._versions, deleted)) if deleted else set()
        if freed:
            referenced: set[tuple[str, str, str]] = set()
            for row in self._tables.checkpoints(thread_id, None, None, None):
                referenced |= self._versions(row)
            garbage = freed - referenced
            gone: set[str] = set()
            read: set[str] = set()
            for ns, channel, version, data in self._tables.blobs_of_kind(thread_id, MESSAGES):
                key = (ns, channel, version)
                if key in garbage or key in referenced:
                    names = {log_id(thread_id, ns, channel, k) for k, *_ in decode(data)}
                    (gone if key in garbage else read).update(names)
            self._tables.delete_blobs(thread_id, sorted(garbage))
            for cid in sorted(gone - read):
                self._logs.delete(cid)
        with self._logs.lock:
            self._forget(thread_id)

    def _delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata ``run_id`` is one of ``run_ids``, their
        writes, and what no remaining checkpoint of their threads reads (blobs, forks)."""
        self._check_open()
        ids = [str(r) for r in run_ids]
        if not ids:
            return
        rows = self._tables.run_checkpoints(ids)
        self._tables.delete_checkpoints([row[:3] for row in rows])
        for thread_id in sorted({row[0] for row in rows}):
            self._collect(thread_id, [row for row in rows if row[0] == thread_id])

    def _copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another; each message log (main
        and forks) becomes a fork (``origin_context_id`` = the source's log) holding the
        source's whole log, so the copied checkpoints read exactly what the source's read."""
        self._check_open()
        source, target = str(source_thread_id), str(target_thread_id)
        for cid in sorted(self._thread_logs(source)):
            _, _, ns, channel, *key = json.loads(cid)
            self._logs.copy(cid, log_id(target, ns, channel, key[0] if key else ""))
        self._tables.copy_thread(source, target)

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> None:
        """``prune``: ``"keep_latest"`` per thread (``_keep_latest``), or ``"delete"``."""
        self._check_open()
        if isinstance(thread_ids, str):  # (a str is a sequence: of one-letter thread ids)
            raise TypeError("thread_ids must be a sequence of thread ids, not a str")
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        for thread_id in map(str, thread_ids):
            if strategy == "delete":
                self._delete_thread(thread_id)
                continue
            self._keep_latest(thread_id)

    def _keep_latest(self, thread_id: str) -> None:
        """``prune``'s ``keep_latest`` of one thread, on the rows as they are when it starts: a
        checkpoint saved meanwhile is neither seen nor deleted."""
        valued = {k[:3] for k in self._tables.blob_keys(thread_id) if k[3] != "empty"}
        rows = {ns: self._tables.checkpoints(thread_id, ns, None, None) for ns in self._tables.namespaces(thread_id)}
        kept = {ns: self._kept(these, valued) for ns, these in rows.items() if these}
        # A subgraph call's namespace (its task id after a ":"; a checkpointer=True subgraph's,
        # whose state outlives each call, has none) goes with the root checkpoint the call
        # started from, once that one is saved and not kept.
        root = {r[2] for r in rows.get("", ())} - kept.get("", set())
        calls = {ns for ns, these in kept.items() if ":" in ns and self._started_from(rows[ns][0]) in root}
        deleted = [r for ns, these in rows.items() if ns in kept for r in these if ns in calls or r[2] not in kept[ns]]
        self._tables.delete_checkpoints([r[:3] for r in deleted])
        # A kept checkpoint whose parent is deleted is left with no parent.
        gone = {r[1:3] for r in deleted}
        self._tables.orphan([r[:3] for ns, these in rows.items() if ns in kept and ns not in calls
                             for r in these if r[2] in kept[ns] and r[3] is not None and (ns, r[3]) in gone])
        self._collect(thread_id, deleted)

    def _started_from(self, row: CheckpointRow) -> str | None:
        """The root graph's checkpoint a subgraph's checkpoint ``row`` was started from (its
        metadata's ``parents``), or ``None``."""
        parents = self.serde.loads_typed((row[6], row[7])).get("parents")
        root = parents.get("") if isinstance(parents, dict) else None
        return root if isinstance(root, str) else None

    def _kept(self, rows: builtins.list[CheckpointRow], valued: set[tuple[str, str, str]]) -> set[str]:
        """The checkpoints ``keep_latest`` keeps of one namespace (``rows``, newest first): the
        latest, and the ancestors it reads a ``DeltaChannel`` from. Such a channel stores a
        value only every so many steps and is rebuilt from the nearest ancestor holding one
        plus the pending writes since (LangGraph's ``get_delta_channel_history``); a
        checkpoint's metadata names the channels that changed since they last stored a value
        (``counters_since_delta_snapshot``). So the parent chain is kept back to where each of
        those, at the version the chain holds, has a stored value (``valued``: (namespace,
        channel, version)); a version with no value is a step of the channel rebuilt."""
        latest = rows[0]
        metadata = self.serde.loads_typed((latest[6], latest[7]))
        waiting = set(metadata.get("counters_since_delta_snapshot") or ())
        by_id = {r[2]: r for r in rows}
        kept: set[str] = set()
        row: CheckpointRow | None = latest
        while row is not None and row[2] not in kept:  # (a chain made a cycle by a put again ends there)
            kept.add(row[2])
            versions = self.serde.loads_typed((row[4], row[5]))["channel_versions"]
            # (a channel with no version here was never written before: nothing older to read)
            waiting = {ch for ch in waiting if ch in versions and (row[1], ch, str(versions[ch])) not in valued}
            row = by_id.get(row[3]) if waiting and row[3] is not None else None
        return kept

    # ---- versions --------------------------------------------------------------------------

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Zero-padded counter plus a random tail, so that versions sort as text (as the stock
        savers make them)."""
        n = 0 if current is None else current if isinstance(current, int) else int(str(current).split(".")[0])
        return f"{n + 1:032}.{random.random():016}"

    # ---- the calls: sync on the caller's thread, async off the event loop ------------------

    async def _off(self, fn: Callable[..., _T], *args: Any, **kw: Any) -> _T:
        # The store's calls block: they run on the saver's thread for async callers, so the
        # event loop never waits on the database.
        self._check_open()
        if self._async_worker is None:
            self._async_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxfold-langgraph")
        return await asyncio.wrap_future(self._async_worker.submit(fn, *args, **kw))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Store a checkpoint: each message channel in ``new_versions`` appends what changed to
        its log, or starts a fork when its parent is not the log's latest list; every other new
        channel version goes through ``serde``. With a store: one transaction."""
        return self._put(self._prepare(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Store a task's pending writes. Writes to LangGraph's special channels (error,
        interrupt, …) replace what the task wrote there before; other writes already stored
        are kept, as the stock savers do."""
        self._put_writes(config, writes, task_id, task_path)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the thread's latest in
        the namespace), every message list read as the fold of its logs where it stands."""
        return self._get_tuple(config)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and namespace and id, when it
        names them), or of every thread when ``config`` is ``None``; ``filter`` matches metadata
        keys, ``before`` keeps older checkpoints, ``limit`` caps the count. Each checkpoint is
        built as the iteration comes to it."""
        return self._list(config, filter, before, limit)

    def get_delta_channel_history(self, *, config: RunnableConfig,
                                  channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        """For each of ``channels`` (``DeltaChannel``s), the pending writes of the checkpoint's
        ancestors since the nearest that holds the channel's value, oldest first, and that
        value as ``seed`` (none when no ancestor holds one): what the base class's walk gives,
        read from the rows a page of ancestors at a time instead of a ``get_tuple`` each."""
        return self._delta_history(config, channels)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, writes and message logs, in every namespace."""
        self._delete_thread(thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata ``run_id`` is one of ``run_ids``, their
        writes, and what no remaining checkpoint of their threads reads: blobs, forks (a
        thread's main log too, when none reads it)."""
        self._delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another; each message log becomes a
        fork (``origin_context_id`` = the source's log) holding the source's whole log, so the
        copied checkpoints read exactly what the source's read."""
        self._copy_thread(source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's latest checkpoint of each thread, with its
        writes, its channel versions and the logs it reads (every other fork is deleted), and
        the ancestors, with their writes, that a ``DeltaChannel`` of it is rebuilt from (back
        to the nearest that stores its value); ``"delete"``: delete the threads. A kept
        checkpoint whose parent is deleted is left with no parent; a subgraph call's namespace
        (its task id after a ``:``) goes whole with the root checkpoint the call started from,
        once that one is saved and not kept. A thread is pruned on its rows as they were when
        the prune began: a checkpoint saved meanwhile loses nothing.

        Raises ``TypeError`` for a ``str`` of thread ids, ``ValueError`` for another
        strategy."""
        self._prune(thread_ids, strategy)

    # ---- async: the AsyncStore and async table access ---------------------------------------

    def _async(self) -> tuple[AsyncStore, AsyncTables] | None:
        """The AsyncStore on the saver's database and the async tables (made on first use);
        ``None`` in memory, where nothing waits and the calls run inline."""
        self._check_open()
        if self.store is None:
            return None
        if self._astore is None:
            self._astore = beside(self.store)
        if self._atables is None:
            self._atables = AsyncTables(self._tables, self._astore)
        return self._astore, self._atables

    async def _aio(self) -> tuple[AsyncStore, AsyncTables] | None:
        """``_async``, with, at the first call of each event loop, the connections a turn uses
        at once opened for the loop and each having run what a turn runs, in a transaction
        that leaves nothing (as the blocking saver's are when it is made): a graph's first turn then
        opens and prepares nothing. (On SQLite: the AsyncStore opened.)"""
        io = self._async()
        if io is not None:
            loop = asyncio.get_running_loop()
            if self._aopened is not loop:
                self._aopened = loop  # (before the wait: calls meanwhile go on without it)
                statements, checkpoint, undo = self._tables.turn_statements() if self._tables._pg is not None else ([], [], [])
                await io[0]._open_idle(_CONNECTIONS_AT_ONCE, statements, [checkpoint], undo)
        return io

    async def _alock(self) -> asyncio.Lock:
        """This event loop's lock over the saver's puts (an asyncio.Lock belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if self._aputs is None or self._aputs[0] is not loop:
            self._aputs = (loop, asyncio.Lock())
        return self._aputs[1]

    async def _alogs(self, store: AsyncStore,
                     step: Callable[[builtins.list[MessageLog]], _T]) -> tuple[_T, builtins.list[MessageLog]]:
        """Run a step of the logs with the AsyncStore's answers: each time the step needs one
        it has not got (``NeedIO``), the step is undone (its staged logs dropped), the answer
        awaited, and the step run again. The step itself never waits."""
        answers: dict[tuple[str, str], Any] = {}
        while True:
            staged: builtins.list[MessageLog] = []
            with self._logs.lock:
                self._logs.answers = answers
                try:
                    return step(staged), staged
                except NeedIO as e:
                    need = e
                    for log in staged:  # their answers were changed by the step: ask again
                        answers.pop(("load", log.ctx.id), None)
                        answers.pop(("refresh", log.ctx.id), None)
                    self._logs.drop(staged)
                except BaseException:
                    self._logs.drop(staged)
                    raise
                finally:
                    self._logs.answers = None
            answers[(need.op, need.cid)] = await self._answer(store, need)

    @staticmethod
    async def _answer(store: AsyncStore, need: NeedIO) -> Any:
        if need.op == "load":
            try:
                return await store.load(need.cid)
            except KeyError:
                return None
        if need.op == "refresh":
            assert need.ctx is not None
            try:
                return await store.refresh(need.ctx)
            except (ConflictError, KeyError) as e:
                return e
        return await store.contains(need.cid)

    async def _aparent_refs(self, tables: AsyncTables, thread_id: str, ns: str, parent_id: str | None,
                            remembered: bool) -> Refs:
        if parent_id is None:
            return {}
        key = (thread_id, ns, parent_id)
        if remembered and key in self._refs:
            return self._refs[key]
        row = await tables.checkpoint(thread_id, ns, parent_id)
        if row is None:
            return {}
        parent: Checkpoint = self.serde.loads_typed((row[4], row[5]))
        refs = {channel: decode(data)
                for channel, kind, data in await tables.blobs(thread_id, ns, parent["channel_versions"])
                if kind == MESSAGES}
        with self._logs.lock:
            self._remember(key, refs)
        return refs

    async def _atuple(self, store: AsyncStore, tables: AsyncTables, row: CheckpointRow) -> CheckpointTuple:
        thread_id, ns, checkpoint_id = row[0], row[1], row[2]
        checkpoint: Checkpoint = self.serde.loads_typed((row[4], row[5]))
        values, refs = self._values(thread_id, ns, await tables.blobs(thread_id, ns, checkpoint["channel_versions"]))
        if refs:
            lists, _ = await self._alogs(store, lambda staged: {
                channel: self._logs.read(thread_id, ns, channel, segs) for channel, segs in refs.items()})
            values.update(lists)
        with self._logs.lock:
            self._remember((thread_id, ns, checkpoint_id), refs)
        return self._tuple_of(row, checkpoint, values, await tables.writes(thread_id, ns, checkpoint_id))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple``, for async graphs: the rows through async connections (PostgreSQL) or
        the AsyncStore's worker thread (SQLite), the logs through the AsyncStore."""
        io = await self._aio()
        if io is None:
            return self._get_tuple(config)
        store, tables = io
        conf = config["configurable"]
        row = await tables.checkpoint(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), get_checkpoint_id(config))
        return None if row is None else await self._atuple(store, tables, row)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """``list``, for async graphs."""
        io = await self._aio()
        if io is None:
            for t in self._list(config, filter, before, limit):
                yield t
            return
        store, tables = io
        rows = await tables.checkpoints(*self._listing(config, before, filter, limit))
        for row in self._listed(rows, filter, limit):
            yield await self._atuple(store, tables, row)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """``put``, for async graphs: the logs' appends and the rows in one transaction of the
        AsyncStore's."""
        p = self._prepare(config, checkpoint, metadata, new_versions)  # before anything is awaited
        io = await self._aio()
        if io is None:
            return self._put(p)
        store, tables = io
        thread_id, ns, parent_id, checkpoint_id = p.row[0], p.row[1], p.row[3], p.row[2]
        async with await self._alock():
            for attempt in range(_MAX_ATTEMPTS):
                parent = await self._aparent_refs(tables, thread_id, ns, parent_id, remembered=attempt == 0)
                staged: list[MessageLog] = []
                try:
                    step = functools.partial(self._stage, p, parent, attempt == 0)
                    (statements, refs), staged = await self._alogs(store, step)
                    await store._save_with([log.ctx for log in staged], statements)
                except (ConflictError, KeyError) as e:
                    with self._logs.lock:
                        self._logs.drop(staged)
                    if isinstance(e, KeyError) and attempt > 0:
                        raise
                    await asyncio.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
                    continue
                except BaseException:
                    with self._logs.lock:
                        self._logs.drop(staged)
                    raise
                with self._logs.lock:
                    self._remember((thread_id, ns, checkpoint_id), refs)
                return p.config
        raise ConflictError(f"thread {thread_id}: a checkpoint gave up after {_MAX_ATTEMPTS} attempts lost to "
                            "other writers")

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """``put_writes``, for async graphs."""
        io = await self._aio()
        if io is None:
            self._put_writes(config, writes, task_id, task_path)
            return
        conf = config["configurable"]
        rows = []
        for idx, (channel, value) in enumerate(writes):
            kind, data = self.serde.dumps_typed(value)
            rows.append((WRITES_IDX_MAP.get(channel, idx), channel, kind, data))
        await io[1].put_writes(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf["checkpoint_id"], task_id,
                               task_path, rows, replace=all(w[0] in WRITES_IDX_MAP for w in writes))

    # The maintenance calls (rare, and reading or writing many rows) run the blocking code on
    # the saver's worker thread.

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread``, for async graphs."""
        await self._off(self._delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """``delete_for_runs``, for async graphs."""
        await self._off(self._delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """``copy_thread``, for async graphs."""
        await self._off(self._copy_thread, source_thread_id, target_thread_id)

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        """``get_delta_channel_history``, for async graphs."""
        return await self._off(self._delta_history, config, channels)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune``, for async graphs."""
        await self._off(self._prune, thread_ids, strategy)

    def __repr__(self) -> str:
        return f"ContextSaver({'memory' if self.store is None else self.store.url})"
