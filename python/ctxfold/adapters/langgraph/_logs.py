"""Where the message logs live: a ``ctxfold.Store`` (shared with other processes) or this
process's memory. One Context per thread, namespace and message channel, its id the JSON text
``["langgraph", thread_id, checkpoint_ns, channel]`` (``ctxfold store URL`` lists them)."""

from __future__ import annotations

import json
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from ..._context import Context
from ...errors import ConflictError
from ._messages import MessageLog

if TYPE_CHECKING:
    from ...stores import Store

__all__ = ["Logs", "log_id"]

# A put that keeps losing the race to other writers gives up after this many attempts; each
# loss means another writer's checkpoint landed, so the store is progressing.
_MAX_ATTEMPTS = 1000


def log_id(thread_id: str, ns: str, channel: str) -> str:
    return json.dumps(["langgraph", thread_id, ns, channel], ensure_ascii=False)


class Logs:
    """The open message logs, each caught up with the store before it is read or written."""

    def __init__(self, store: Store | None, serde: Any) -> None:
        self.store = store
        self._serde = serde
        self._open: dict[str, MessageLog] = {}
        self._lock = threading.RLock()

    def _log(self, cid: str, create: bool) -> MessageLog | None:
        log = self._open.get(cid)
        store = self.store
        if log is not None:
            if store is not None:
                try:
                    if store.refresh(log.ctx):
                        log.forget_head()
                except (ConflictError, KeyError):
                    del self._open[cid]
                    return self._log(cid, create)
            return log
        ctx: Context | None = None
        if store is not None:
            try:
                ctx = store.load(cid)
            except KeyError:
                ctx = None
        if ctx is None:
            if not create:
                return None
            ctx = Context.deserialize({"version": 2, "id": cid})
        log = self._open[cid] = MessageLog(ctx, self._serde)
        return log

    def exists(self, cid: str) -> bool:
        with self._lock:
            return cid in self._open or (self.store is not None and cid in self.store)

    def put(self, cid: str, messages: list[BaseMessage]) -> int:
        """Append what makes the log's fold ``messages``; the seq it then stands at."""
        with self._lock:
            for attempt in range(_MAX_ATTEMPTS):
                log = self._log(cid, True)
                assert log is not None
                seq = log.put(messages)
                if self.store is None:
                    return seq
                try:
                    self.store.save(log.ctx)
                    return seq
                except ConflictError:
                    # Another process wrote first: drop the unsaved events, read the log again.
                    del self._open[cid]
                    time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
            raise ConflictError(f"{cid}: gave up after {_MAX_ATTEMPTS} attempts lost to other writers")

    def read(self, cid: str, seq: int) -> list[BaseMessage]:
        with self._lock:
            log = self._log(cid, False)
            if log is None:
                raise KeyError(f"message log {cid} is missing: the checkpoint refers to a deleted thread")
            return log.at(seq)

    def delete(self, cid: str) -> None:
        with self._lock:
            self._open.pop(cid, None)
            if self.store is not None:
                try:
                    self.store.delete(cid)
                except KeyError:
                    pass

    def copy(self, source: str, target: str) -> None:
        """``target`` as a fork of ``source`` that keeps its whole log, so that every seq a
        copied checkpoint records reads the same list (its ``origin_context_id`` is the source)."""
        with self._lock:
            log = self._log(source, False)
            if log is None:
                return
            data = log.ctx.serialize()
            data["id"] = target
            data["origin_context_id"] = source
            data["children"] = []
            self._open.pop(target, None)
            if self.store is not None and target in self.store:
                self.store.delete(target)
            ctx = Context.deserialize(data)
            if self.store is not None:
                self.store.save(ctx)
            self._open[target] = MessageLog(ctx, self._serde)
