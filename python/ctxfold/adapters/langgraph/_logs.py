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

    def _load(self, cid: str, create: bool) -> MessageLog | None:
        """The log as the store holds it now (or a new one); ``None`` when absent and not
        ``create``."""
        self._open.pop(cid, None)
        ctx: Context | None = None
        if self.store is not None:
            try:
                ctx = self.store.load(cid)
            except KeyError:
                ctx = None
        if ctx is None:
            if not create:
                return None
            ctx = Context.deserialize({"version": 2, "id": cid})
        log = self._open[cid] = MessageLog(ctx, self._serde)
        return log

    def _caught_up(self, cid: str, create: bool) -> MessageLog | None:
        """The open log brought up to what the store holds (one indexed read when nothing is
        new), or loaded."""
        log = self._open.get(cid)
        if log is None or self.store is None:
            return log if log is not None else self._load(cid, create)
        try:
            if self.store.refresh(log.ctx):
                log.forget_head()
            return log
        except (ConflictError, KeyError):
            return self._load(cid, create)

    def exists(self, cid: str) -> bool:
        with self._lock:
            return cid in self._open or (self.store is not None and cid in self.store)

    def put(self, cid: str, messages: list[BaseMessage], parent: str | None, checkpoint: str) -> str:
        """Append what makes the log's fold ``messages``; the reference to record for it:
        ``"<seq> <token>"``, the token naming this log (its ``created_at``), so that a log
        deleted and made anew under the same id is never read at a seq of the old one.

        A put whose parent is the checkpoint this saver last put on the log skips asking the
        store what is new: the log is as this saver left it, unless another process raced
        it, which the save then finds (``ConflictError``: read the log again, redo)."""
        with self._lock:
            for attempt in range(_MAX_ATTEMPTS):
                log = self._open.get(cid)
                if log is None or log.last_checkpoint is None or log.last_checkpoint != parent:
                    log = self._caught_up(cid, True)
                assert log is not None
                seq = log.put(messages)
                if self.store is not None:
                    try:
                        self.store.save(log.ctx)
                    except ConflictError:
                        # Another process wrote first: drop the unsaved events, read the log again.
                        self._open.pop(cid, None)
                        time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
                        continue
                    except BaseException:
                        self._open.pop(cid, None)  # unsaved events: the store's log is the truth
                        raise
                log.last_checkpoint = checkpoint
                return f"{seq} {log.token}"
            raise ConflictError(f"{cid}: gave up after {_MAX_ATTEMPTS} attempts lost to other writers")

    def read(self, cid: str, ref: str) -> list[BaseMessage]:
        """The list a ``put`` recorded as ``ref``."""
        seq_text, _, token = ref.partition(" ")
        seq = int(seq_text)
        with self._lock:
            log = self._open.get(cid)
            if log is None or log.token != token or seq > log.ctx.next_seq:
                log = self._caught_up(cid, False)
                if log is not None and log.token != token:
                    log = self._load(cid, False)
            if log is None or log.token != token or seq > log.ctx.next_seq:
                raise KeyError(f"message log {cid} no longer holds this checkpoint's messages (seq {seq}): "
                               "its thread was deleted")
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
            log = self._caught_up(source, False)
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
