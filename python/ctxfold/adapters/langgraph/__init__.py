"""ctxfold as LangGraph's checkpointer (extra ``ctxfold[langgraph]``).

``ContextSaver(store=None, *, serde=None)`` is a ``BaseCheckpointSaver``, sync and async. A
message channel (a list of LangChain messages, found by value) lives as a ctxfold Context log
per thread, namespace and channel: a checkpoint appends only what changed (new messages, a
message replaced by id, removals) and records the seq its list stands at; reading a checkpoint
is the fold at that seq. Every other channel is stored once per version through ``serde``, and
pending writes as the stock savers store them.

    from langgraph.graph import StateGraph, MessagesState
    from ctxfold.adapters.langgraph import ContextSaver

    saver = ContextSaver("sqlite:///threads.db")      # or a ctxfold.Store, or None (memory)
    graph = builder.compile(checkpointer=saver)

See ``docs/adapters.md``.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        get_checkpoint_id,
        get_checkpoint_metadata,
        writes_sort_key,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("ctxfold.adapters.langgraph needs LangGraph: pip install 'ctxfold[langgraph]'") from exc

from ...stores import Store
from ._logs import Logs, log_id
from ._messages import is_messages
from ._tables import CheckpointRow, Tables

__all__ = ["ContextSaver"]

_T = TypeVar("_T")

# The blob type of a message channel's value: its data is "<seq> <token>", where the channel's
# log stands (the token tells that log from one made anew under the same id).
MESSAGES = "ctxfold.messages"


class ContextSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer whose message channels are ctxfold logs.

    ``store``: ``None`` (in memory, private to this saver), a ``ctxfold.Store``, or a store URL
    or path (opened here, closed by ``close()``). The checkpoint rows go into the store's
    database beside its contexts. ``serde``: LangGraph's serializer for every other channel
    and the pending writes (``JsonPlusSerializer`` by default)."""

    def __init__(self, store: Store | str | os.PathLike[str] | None = None, *,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._own_store = store is not None and not isinstance(store, Store)
        self.store: Store | None = Store(store) if store is not None and not isinstance(store, Store) else store
        """The store the checkpoints are kept in, or ``None`` (in memory)."""
        # The checkpoint rows go into the store's own database, on connections of their own.
        backend: Any = self.store._db if self.store is not None else None
        if backend is None:
            self._tables = Tables()
        elif hasattr(backend, "_url"):
            self._tables = Tables(postgres=backend._url)
        else:
            self._tables = Tables(path=backend._path)
        self._logs = Logs(self.store, self.serde)
        # Every call runs on this one thread: the database connections are this thread's (one
        # to the store, one to the checkpoint tables, however many threads LangGraph calls
        # from), and calls from many threads queue here instead of racing on the caches.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxfold-langgraph")
        self._closed = False
        # Open both connections now, on the thread that uses them, rather than in a first turn.
        self._call(self._open_connections)

    # ---- lifetime --------------------------------------------------------------------------

    def _open_connections(self) -> None:
        self._tables.checkpoint("", "", "")
        if self.store is not None:
            self.store.head("")

    def close(self) -> None:
        """Close the checkpoint tables' connections, and the store if this saver opened it;
        later calls raise ``RuntimeError``. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._worker.shutdown(wait=True)
        self._tables.close()
        if self._own_store and self.store is not None:
            self.store.close()

    def __enter__(self) -> ContextSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ContextSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # ---- writing ---------------------------------------------------------------------------

    def _put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Store a checkpoint: each message channel in ``new_versions`` appends what changed to
        its log, every other new channel version goes through ``serde``."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        c = checkpoint.copy()
        values: dict[str, Any] = c.pop("channel_values")  # type: ignore[misc]
        blobs: list[tuple[str, str, str, bytes]] = []
        for channel, version in new_versions.items():
            if channel not in values:
                blobs.append((channel, str(version), "empty", b""))
                continue
            value = values[channel]
            cid = log_id(thread_id, ns, channel)
            if is_messages(value) or (isinstance(value, list) and not value and self._logs.exists(cid)):
                ref = self._logs.put(cid, value, conf.get("checkpoint_id"), checkpoint["id"])
                blobs.append((channel, str(version), MESSAGES, ref.encode()))
            else:
                kind, data = self.serde.dumps_typed(value)
                blobs.append((channel, str(version), kind, data))
        kind, data = self.serde.dumps_typed(c)
        md = get_checkpoint_metadata(config, metadata)
        md_kind, md_data = self.serde.dumps_typed(md)
        run_id = md.get("run_id")
        row: CheckpointRow = (thread_id, ns, checkpoint["id"], conf.get("checkpoint_id"), kind, data, md_kind, md_data)
        self._tables.put_checkpoint(row, str(run_id) if run_id is not None else None, blobs)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Store a task's pending writes. Writes to LangGraph's special channels (error,
        interrupt, …) replace what the task wrote there before; other writes already stored
        are kept, as the stock savers do."""
        conf = config["configurable"]
        rows = []
        for idx, (channel, value) in enumerate(writes):
            kind, data = self.serde.dumps_typed(value)
            rows.append((WRITES_IDX_MAP.get(channel, idx), channel, kind, data))
        self._tables.put_writes(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf["checkpoint_id"], task_id,
                                task_path, rows, replace=all(w[0] in WRITES_IDX_MAP for w in writes))

    # ---- reading ---------------------------------------------------------------------------

    def _get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the thread's latest in
        the namespace), every message list read as the fold of its log at the recorded seq."""
        conf = config["configurable"]
        row = self._tables.checkpoint(str(conf["thread_id"]), conf.get("checkpoint_ns", ""), get_checkpoint_id(config))
        return None if row is None else self._tuple(row)

    def _list(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
              before: RunnableConfig | None, limit: int | None) -> list[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and namespace and id, when it
        names them), or of every thread when ``config`` is ``None``; ``filter`` matches metadata
        keys, ``before`` keeps older checkpoints, ``limit`` caps the count."""
        conf = config["configurable"] if config else {}
        thread_id = conf.get("thread_id")
        rows = self._tables.checkpoints(
            str(thread_id) if thread_id is not None else None, conf.get("checkpoint_ns"),
            get_checkpoint_id(config) if config else None, get_checkpoint_id(before) if before else None)
        out: list[CheckpointTuple] = []
        for row in rows:
            if limit is not None and len(out) >= limit:
                break
            if filter:
                md = self.serde.loads_typed((row[6], row[7]))
                if not all(md.get(k) == v for k, v in filter.items()):
                    continue
            out.append(self._tuple(row))
        return out

    def _tuple(self, row: CheckpointRow) -> CheckpointTuple:
        thread_id, ns, checkpoint_id, parent_id, kind, data, md_kind, md_data = row
        checkpoint: Checkpoint = self.serde.loads_typed((kind, data))
        values: dict[str, Any] = {}
        for channel, blob_kind, blob in self._tables.blobs(thread_id, ns, checkpoint["channel_versions"]):
            if blob_kind == MESSAGES:
                values[channel] = self._logs.read(log_id(thread_id, ns, channel), blob.decode())
            elif blob_kind != "empty":
                values[channel] = self.serde.loads_typed((blob_kind, blob))
        writes = sorted(self._tables.writes(thread_id, ns, checkpoint_id), key=lambda w: writes_sort_key(w[4], w[0], w[5]))

        def config_of(cp_id: str) -> RunnableConfig:
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cp_id}}

        return CheckpointTuple(
            config=config_of(checkpoint_id),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed((md_kind, md_data)),
            parent_config=config_of(parent_id) if parent_id else None,
            pending_writes=[(w[0], w[1], self.serde.loads_typed((w[2], w[3]))) for w in writes],
        )

    # ---- deleting and copying --------------------------------------------------------------

    def _delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, writes and message logs, in every namespace."""
        thread_id = str(thread_id)
        channels = self._tables.message_channels(thread_id, MESSAGES)
        self._tables.delete_thread(thread_id)
        for ns, channel in channels:
            self._logs.delete(log_id(thread_id, ns, channel))

    def _delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata ``run_id`` is one of ``run_ids``, and their
        writes. The message logs keep their events (other checkpoints read them)."""
        ids = [str(r) for r in run_ids]
        if ids:
            self._tables.delete_checkpoints(self._tables.run_checkpoints(ids))

    def _copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another; each message log becomes a
        fork (``origin_context_id`` = the source's log) holding the source's whole log, so the
        copied checkpoints read exactly what the source's read."""
        source, target = str(source_thread_id), str(target_thread_id)
        for ns, channel in self._tables.message_channels(source, MESSAGES):
            self._logs.copy(log_id(source, ns, channel), log_id(target, ns, channel))
        self._tables.copy_thread(source, target)

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> None:
        """``"keep_latest"``: keep only each namespace's latest checkpoint (with its writes and
        its channel versions) of each thread; ``"delete"``: delete the threads. The message
        logs keep their events, the history ``messages_at`` reads."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        for thread_id in map(str, thread_ids):
            if strategy == "delete":
                self._delete_thread(thread_id)
                continue
            for ns in self._tables.namespaces(thread_id):
                rows = self._tables.checkpoints(thread_id, ns, None, None)
                if not rows:
                    continue
                latest: Checkpoint = self.serde.loads_typed((rows[0][4], rows[0][5]))
                self._tables.delete_checkpoints([(thread_id, ns, r[2]) for r in rows[1:]])
                self._tables.delete_blobs_except(thread_id, ns, dict(latest["channel_versions"]))

    # ---- versions --------------------------------------------------------------------------

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Zero-padded counter plus a random tail, so that versions sort as text (as the stock
        savers make them)."""
        n = 0 if current is None else current if isinstance(current, int) else int(str(current).split(".")[0])
        return f"{n + 1:032}.{random.random():016}"

    # ---- the calls: sync and async, both on the saver's thread ---------------------------------

    def _submit(self, fn: Callable[..., _T], *args: Any, **kw: Any) -> Future[_T]:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        return self._worker.submit(fn, *args, **kw)

    def _call(self, fn: Callable[..., _T], *args: Any, **kw: Any) -> _T:
        return self._submit(fn, *args, **kw).result()

    async def _off(self, fn: Callable[..., _T], *args: Any, **kw: Any) -> _T:
        # The one place the async methods meet the store: its calls block, so they run on the
        # saver's thread and the event loop never waits on the database.
        return await asyncio.wrap_future(self._submit(fn, *args, **kw))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Store a checkpoint: each message channel in ``new_versions`` appends what changed to
        its log (the seq it then stands at is recorded), every other new channel version goes
        through ``serde``."""
        return self._call(self._put, config, checkpoint, metadata, new_versions)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Store a task's pending writes. Writes to LangGraph's special channels (error,
        interrupt, …) replace what the task wrote there before; other writes already stored
        are kept, as the stock savers do."""
        self._call(self._put_writes, config, writes, task_id, task_path)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the thread's latest in
        the namespace), every message list read as the fold of its log at the recorded seq."""
        return self._call(self._get_tuple, config)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and namespace and id, when it
        names them), or of every thread when ``config`` is ``None``; ``filter`` matches metadata
        keys, ``before`` keeps older checkpoints, ``limit`` caps the count."""
        return iter(self._call(self._list, config, filter, before, limit))

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, writes and message logs, in every namespace."""
        self._call(self._delete_thread, thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata ``run_id`` is one of ``run_ids``, and their
        writes. The message logs keep their events (other checkpoints read them)."""
        self._call(self._delete_for_runs, run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another; each message log becomes a
        fork (``origin_context_id`` = the source's log) holding the source's whole log, so the
        copied checkpoints read exactly what the source's read."""
        self._call(self._copy_thread, source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep only each namespace's latest checkpoint (with its writes and
        its channel versions) of each thread; ``"delete"``: delete the threads. The message
        logs keep their events, the history ``messages_at`` reads."""
        self._call(self._prune, thread_ids, strategy)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple``, for async graphs (the work runs on a worker thread)."""
        return await self._off(self._get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """``list``, for async graphs."""
        for t in await self._off(self._list, config, filter, before, limit):
            yield t

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """``put``, for async graphs."""
        return await self._off(self._put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """``put_writes``, for async graphs."""
        await self._off(self._put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread``, for async graphs."""
        await self._off(self._delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """``delete_for_runs``, for async graphs."""
        await self._off(self._delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """``copy_thread``, for async graphs."""
        await self._off(self._copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune``, for async graphs."""
        await self._off(self._prune, thread_ids, strategy)

    def __repr__(self) -> str:
        return f"ContextSaver({'memory' if self.store is None else self.store.url})"
