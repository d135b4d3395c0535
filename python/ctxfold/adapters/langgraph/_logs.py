"""Where the message logs live: a ``ctxfold.Store`` (shared with other processes) or this
process's memory, and how a checkpoint's list is found in them.

A message channel of a thread and namespace is a *main* log, the Context with id
``["langgraph", thread_id, checkpoint_ns, channel]`` (JSON text), plus one *fork* per branch,
id ``["langgraph", thread_id, checkpoint_ns, channel, key]``, ``key`` the id of the checkpoint
that started the branch (``origin_context_id``: the log it branched from). A checkpoint
records its list as *segments* ``[[key, token, seq, count], …]``: the list is, segment after
segment, the first ``count`` messages of that log's fold at ``seq`` (``key`` ``""`` is the main
log; ``token``, the log's ``created_at``, tells a log from one deleted and made anew under the
same id). A main-line checkpoint is one segment. A branch's list starts with the part of its
parent's list it keeps — read where the parent's list is, never copied — and ends with its own
log, which holds only what the branch changed after that prefix.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from ..._context import Context
from ...errors import ConflictError, DecodeError
from ._messages import MessageLog, common_prefix, encrypts

if TYPE_CHECKING:
    from ...stores import Store

__all__ = ["Logs", "NeedIO", "Segment", "decode", "encode", "log_id"]

# (key, token, seq, count)
Segment = tuple[str, str, int, int]


@functools.lru_cache(maxsize=4096)
def log_id(thread_id: str, ns: str, channel: str, key: str = "") -> str:
    """The id of a channel's main log (``key`` ``""``) or of one of its forks; every put asks
    for its log's, hence the cache."""
    parts = ["langgraph", thread_id, ns, channel] + ([key] if key else [])
    return json.dumps(parts, ensure_ascii=False)


# (one encoder for every put: json.dumps with arguments of its own makes one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode(segments: Sequence[Segment]) -> bytes:
    return _ENCODER.encode([list(s) for s in segments]).encode()


def decode(data: bytes) -> list[Segment]:
    try:
        raw = json.loads(data)
        out = [(str(k), str(t), int(s), int(c)) for k, t, s, c in raw]
    except (ValueError, TypeError):
        raise DecodeError(f"a message channel's checkpoint record is not segments: {data[:80]!r}") from None
    if any(s < 0 or c < 0 for _, _, s, c in out):
        raise DecodeError(f"a message channel's checkpoint record has a negative seq or count: {data[:80]!r}")
    return out


class NeedIO(Exception):
    """A step of the logs needs the store's answer to ``op`` on ``cid`` (an async caller
    fetches it from its AsyncStore, then runs the step again)."""

    def __init__(self, op: str, cid: str, ctx: Context | None) -> None:
        super().__init__(op, cid)
        self.op, self.cid, self.ctx = op, cid, ctx


class Logs:
    """The open message logs of one saver. ``lock`` is held by the saver across a put (stage,
    then commit) and by every read, so the open logs change one call at a time."""

    def __init__(self, store: Store | None, serde: Any, share: bool = False) -> None:
        self.store = store
        self._serde = serde
        self._share = share  # MessageLog's ``share``
        self._sealed = encrypts(serde)  # MessageLog's ``sealed``
        self._open: dict[str, MessageLog] = {}
        self.lock = threading.RLock()
        # set by an async caller for one step: the AsyncStore's answers (see _ask)
        self.answers: dict[tuple[str, str], Any] | None = None
        # the last prefix read (segments → objects): a branch's puts read the same one each time
        self._prefix: tuple[tuple[str, tuple[Segment, ...]], tuple[BaseMessage, ...]] | None = None

    # ---- opening -------------------------------------------------------------------------

    # ---- the store's answers: asked of the Store, or (async callers) handed in ------------

    def _ask(self, op: str, cid: str, ctx: Context | None = None) -> Any:
        """What the store says to ``op`` (``load``: the Context or ``None``; ``refresh``: the
        events applied to ``ctx``, or the error it raised; ``contains``: a bool). With
        ``answers`` set (an async caller), the answer it holds, else ``NeedIO``: the caller
        asks the AsyncStore and runs the step again (every step asks before it changes a log)."""
        if self.answers is not None:
            key = (op, cid)
            if key not in self.answers:
                raise NeedIO(op, cid, ctx)
            answer = self.answers[key]
            if isinstance(answer, Exception):
                raise answer
            return answer
        assert self.store is not None
        if op == "load":
            try:
                return self.store.load(cid)
            except KeyError:
                return None
        if op == "refresh":
            assert ctx is not None
            return self.store.refresh(ctx)
        return cid in self.store

    def _load(self, cid: str) -> MessageLog | None:
        """The log as the store holds it now; ``None`` when absent."""
        self._open.pop(cid, None)
        if self.store is None and self.answers is None:
            return None
        ctx = self._ask("load", cid)
        if ctx is None:
            return None
        log = self._open[cid] = MessageLog(ctx, self._serde, self._share, self._sealed)
        return log

    def _caught_up(self, cid: str) -> MessageLog | None:
        """The open log brought up to what the store holds (one indexed read when nothing is
        new), or loaded; ``None`` when there is no such log."""
        log = self._open.get(cid)
        if log is None or (self.store is None and self.answers is None):
            return log if log is not None else self._load(cid)
        try:
            if self._ask("refresh", cid, log.ctx):
                log.forget_head()
            return log
        except (ConflictError, KeyError):
            return self._load(cid)

    def _new(self, cid: str, origin: str | None) -> MessageLog:
        data: dict[str, Any] = {"version": 2, "id": cid}
        if origin is not None:
            data["origin_context_id"] = origin
        log = self._open[cid] = MessageLog(Context.deserialize(data), self._serde, self._share, self._sealed)
        return log

    def _exists(self, cid: str) -> bool:
        return cid in self._open or ((self.store is not None or self.answers is not None) and self._ask("contains", cid))

    def _holding(self, cid: str, token: str, seq: int) -> MessageLog:
        """The log ``cid`` made at ``token``, holding ``seq``: the open one when it does,
        else caught up with the store; ``KeyError`` when it is gone."""
        log = self._open.get(cid)
        if log is None or log.token != token or seq > log.ctx.next_seq:
            log = self._caught_up(cid)
            if log is not None and log.token != token:
                log = self._load(cid)
        if log is None or log.token != token or seq > log.ctx.next_seq:
            raise KeyError(f"message log {cid} no longer holds this checkpoint's messages (seq {seq}): "
                           "its thread was deleted")
        return log

    # ---- reading -------------------------------------------------------------------------

    def read(self, thread_id: str, ns: str, channel: str, segments: Sequence[Segment]) -> list[BaseMessage]:
        """The list ``segments`` record, as new objects: the caller's to change (see
        ``MessageLog``). The saver's own objects of the part before a branch's own log are kept
        for the branch's next put."""
        with self.lock:
            prefix: list[BaseMessage] = []  # the saver's own objects before the last segment
            out: list[BaseMessage] = []
            last = len(segments) - 1
            for n, (key, token, seq, count) in enumerate(segments):
                if n and n == last:
                    self._prefix = ((log_id(thread_id, ns, channel), tuple(segments[:-1])), tuple(prefix))
                log = self._holding(log_id(thread_id, ns, channel, key), token, seq)
                part, given = log.read(seq, count)
                if n < last:
                    prefix += part
                out += given
            return out

    def _prefix_of(self, thread_id: str, ns: str, channel: str, segments: Sequence[Segment]) -> Sequence[BaseMessage]:
        """The saver's own objects of the list ``segments`` record (those of the last read of
        them, kept; shared, they are the objects the caller was given)."""
        if not segments:
            return ()
        key = (log_id(thread_id, ns, channel), tuple(segments))
        if self._prefix is not None and self._prefix[0] == key:
            return self._prefix[1]
        out: list[BaseMessage] = []
        for s_key, token, seq, count in segments:
            out += self._holding(log_id(thread_id, ns, channel, s_key), token, seq).own_at(seq)[:count]
        self._prefix = (key, tuple(out))
        return self._prefix[1]

    # ---- writing -------------------------------------------------------------------------

    def known(self, thread_id: str, ns: str, channel: str, parent: Sequence[Segment] | None) -> Sequence[BaseMessage]:
        """Messages of the channel already checked: the list the caller holds at the head of
        the open log the parent's list ends in (empty when there is none), for ``is_messages``."""
        if not parent:
            return ()
        log = self._open.get(log_id(thread_id, ns, channel, parent[-1][0]))
        return log.seen() if log is not None else ()

    def stage(self, thread_id: str, ns: str, channel: str, parent: Sequence[Segment] | None,
              target: list[BaseMessage], checkpoint_id: str, trust_open: bool) -> tuple[MessageLog | None, list[Segment]]:
        """Append to a log what makes ``target`` from the parent checkpoint's list
        (``parent``: its segments; ``None`` when it had none for this channel), unsaved;
        return that log (``None``: nothing to append) and the new checkpoint's segments.

        The parent's own log, when the parent is its latest list, goes on (``target`` minus
        the parent's prefix appended to it). Anything else is a branch: a new fork holding
        ``target`` from where it parts from the parent's list, the part before read through
        the parent's segments. ``trust_open``: take an open log as the store's, and a main log
        not open as absent (a save finds out otherwise: ``ConflictError``; the saver then
        stages again from the store's)."""
        if not parent:
            main = log_id(thread_id, ns, channel)
            # Trusting the open logs, a main log this saver has not opened is taken as new: a
            # thread's first list costs no read. Should the store hold one already, the save
            # refuses it (ConflictError) and the retry stages again from the store's (a fork).
            log = self._open.get(main) if trust_open else self._caught_up(main)
            if log is None:  # the channel's first list: the main log starts
                log = self._new(main, None)
                return log, [("", log.token, log.put(target), len(target))]
            return self._fork(thread_id, ns, channel, [], target, checkpoint_id, None)
        *prefix, (key, token, seq, count) = parent
        cid = log_id(thread_id, ns, channel, key)
        log = self._open.get(cid) if trust_open else None
        if log is None or log.token != token or seq > log.ctx.next_seq:
            log = self._holding(cid, token, seq)
        prefix_list = self._prefix_of(thread_id, ns, channel, prefix)
        k = len(prefix_list)
        if log.ctx.next_seq == seq and count == len(log.ctx) and common_prefix(prefix_list, target, self._share) == k:
            new_seq = log.put(target[k:])
            return log, [*prefix, (key, log.token, new_seq, len(target) - k)]
        # a branch: parts from the parent's list after the messages both start with
        own = log.own_at(seq)[:count]
        k = common_prefix([*prefix_list, *own], target, self._share)
        kept: list[Segment] = []
        taken = 0
        for (s_key, s_token, s_seq, _), length in zip(parent, [*(c for *_, c in prefix), len(own)]):
            if taken >= k:
                break
            take = min(length, k - taken)
            kept.append((s_key, s_token, s_seq, take))
            taken += take
        if k == len(target) and kept:  # nothing of its own: the parent's logs hold it all
            return None, kept
        return self._fork(thread_id, ns, channel, kept, target[k:], checkpoint_id, cid)

    def _fork(self, thread_id: str, ns: str, channel: str, kept: list[Segment], rest: list[BaseMessage],
              checkpoint_id: str, origin: str | None) -> tuple[MessageLog, list[Segment]]:
        key, n = checkpoint_id, 0
        while self._exists(log_id(thread_id, ns, channel, key)):  # the same checkpoint put again
            n += 1
            key = f"{checkpoint_id}.{n}"
        log = self._new(log_id(thread_id, ns, channel, key), origin)
        return log, [*kept, (key, log.token, log.put(rest), len(rest))]

    def drop(self, logs: Iterable[MessageLog]) -> None:
        """Forget open logs whose staged events were not saved: the store's are the truth."""
        for log in logs:
            if self._open.get(log.ctx.id) is log:
                del self._open[log.ctx.id]
        self._prefix = None

    # ---- deleting and copying --------------------------------------------------------------

    def delete(self, cid: str) -> None:
        with self.lock:
            self._open.pop(cid, None)
            self._prefix = None
            if self.store is not None:
                try:
                    self.store.delete(cid)
                except KeyError:
                    pass

    def copy(self, source: str, target: str) -> None:
        """``target`` as a fork of ``source`` that keeps its whole log (and its ``created_at``,
        the token), so that every segment a copied checkpoint records reads the same list
        (its ``origin_context_id`` is the source)."""
        with self.lock:
            log = self._caught_up(source)
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
            self._open[target] = MessageLog(ctx, self._serde, self._share, self._sealed)
