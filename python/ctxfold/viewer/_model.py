"""What both views show, computed once per context: the transcript at any ``seq`` with each
message's position, the event that put it there, its tokens and, for a message that stands for
others (a replace), what it shadows; the log a page at a time; the token window for a budget;
and the difference between two seqs.

Where a shown message came from is found by identity: the fold's messages are the logged
Message objects (``messages_at`` returns the objects the events hold), so
the event of a message is the one whose message *is* it. A context whose log holds one object
in two events (possible in memory, never after a load) is replayed from its events instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timezone
from typing import Any

from .._context import Context
from .._core import Event, Message, encodings

__all__ = ["Compaction", "ContextView", "Diff", "Row", "Transcript", "Window", "check_encoding", "event_json"]

SURFACE = frozenset({"system_message", "user_message", "assistant_message", "tool_result"})
# Keys a file leaves out of a logged message when they hold their defaults (the file format).
_MESSAGE_DEFAULTS: dict[str, Any] = {"name": None, "tool_call_id": None, "tool_calls": [], "hook_ids": [],
                                     "metadata": {}, "_type": "Message"}


def check_encoding(encoding: str) -> str:
    if encoding not in encodings():
        raise ValueError(f"unknown encoding {encoding!r}: one of {', '.join(encodings())}")
    return encoding


def event_json(e: Event) -> dict[str, Any]:
    """An event as a saved file holds it: ``{seq, type, time, data}``, the message in ``data``
    without the keys that hold their defaults."""
    data = e.data
    msg = data.get("message")
    if isinstance(msg, dict):
        data["message"] = {k: v for k, v in msg.items() if not (k in _MESSAGE_DEFAULTS and v == _MESSAGE_DEFAULTS[k])}
    return {"seq": e.seq, "type": e.type, "time": _iso(e.time), "data": data}


def _iso(t: Any) -> str:
    return str(t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


@dataclass(frozen=True)
class Compaction:
    """A message that stands for others: the replace event ``seq`` shadowed ``messages``
    messages of ``tokens`` tokens (``first``..``last`` then). ``record`` is the compaction
    record the event carries when it was written by a compaction, else ``None``."""

    seq: int
    """The replace event's seq."""
    first: int
    """The first position it shadowed, then."""
    last: int
    """The last position it shadowed, then."""
    messages: int
    """How many messages it stands for."""
    tokens: int
    """Their tokens."""
    record: dict[str, Any] | None
    """The compaction record the event carries, else ``None``."""

    def to_json(self) -> dict[str, int]:
        """The JSON the viewer's page reads."""
        return {"seq": self.seq, "messages": self.messages, "tokens": self.tokens}


@dataclass(frozen=True)
class Row:
    """One shown message. ``position`` is ``None`` for a message shown but not in the fold
    (the configured system prompt, or a leading system message the overlay adds)."""

    position: int | None
    """The message's position in the fold, or ``None`` (shown, not in the fold)."""
    message: Message
    """The message as shown."""
    seq: int | None
    """The seq of the event that put it there, if any."""
    tokens: int
    """Its tokens."""
    compaction: Compaction | None
    """What it stands for, when it is a compaction's summary."""

    def to_json(self) -> dict[str, Any]:
        """The JSON the viewer's page reads."""
        m = self.message
        out = m.to_dict()
        out.update(position=self.position, text=m.text, parts=[p.to_dict() for p in m.parts], tokens=self.tokens,
                   seq=self.seq, compaction=None if self.compaction is None else self.compaction.to_json())
        return out


@dataclass(frozen=True)
class Transcript:
    """The transcript as shown at ``seq`` (a page of it in ``rows``)."""

    context_id: str
    """The context's id."""
    seq: int
    """The seq it is shown at."""
    next_seq: int
    """The context's ``next_seq``."""
    message_count: int
    """How many messages are shown at ``seq``."""
    total_tokens: int
    """Their tokens."""
    offset: int
    """The position of the first row of this page."""
    rows: list[Row]
    """The page's rows."""

    def to_json(self) -> dict[str, Any]:
        """The JSON the viewer's page reads."""
        return {"id": self.context_id, "next_seq": self.next_seq, "seq": self.seq, "message_count": self.message_count,
                "total_tokens": self.total_tokens, "messages": [r.to_json() for r in self.rows]}


@dataclass(frozen=True)
class Window:
    """Where ``rolling_token_window(budget)`` would start: the first kept row (an index into
    the shown messages; ``rows`` when only the special messages are kept), the rows before it
    that it keeps all the same (the special messages), how many messages it keeps and their
    tokens (``window`` is ``False`` when everything fits)."""

    budget: int
    """The token budget."""
    encoding: str
    """The encoding tokens are counted in."""
    window: bool
    """``False`` when everything fits."""
    start: int
    """The first kept row."""
    specials: list[int]
    """The rows before ``start`` kept all the same (the special messages)."""
    kept: int
    """How many messages the window keeps."""
    tokens: int
    """Their tokens."""
    rows: int
    """How many rows are shown."""

    def to_json(self) -> dict[str, Any]:
        """The JSON the viewer's page reads."""
        return {"budget": self.budget, "encoding": self.encoding, "window": self.window, "start": self.start,
                "specials": self.specials, "kept": self.kept, "tokens": self.tokens, "message_count": self.rows}


@dataclass(frozen=True)
class Diff:
    """From ``a`` to ``b``: the first ``unchanged`` messages of the transcript at ``a`` are
    still there, the same objects, at ``b``; the rest of each side is what changed."""

    a: int
    """The earlier seq."""
    b: int
    """The later seq."""
    unchanged: int
    """How many leading messages are the same objects."""
    a_count: int
    """Messages shown at ``a``."""
    b_count: int
    """Messages shown at ``b``."""

    def to_json(self) -> dict[str, int]:
        """The JSON the viewer's page reads."""
        return {"from": self.a, "to": self.b, "unchanged": self.unchanged, "from_count": self.a_count,
                "to_count": self.b_count}


class _Shown:
    """The messages shown at one seq, and what is summed over all of them, per encoding."""

    def __init__(self, messages: list[Message], lead: int) -> None:
        self.messages = messages
        self.lead = lead  # 1 when messages[0] is shown but not a position
        self.totals: dict[str, int] = {}
        self.seqs: list[int] | None = None  # by position, when the log had to be replayed


class ContextView:
    """A loaded context as the viewer reads it. Thread-safe; what is expensive is computed
    once and kept: the shown transcript of the last few seqs, each replace's originals."""

    KEEP_SEQS = 6
    """How many seqs' shown transcripts are kept."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        """The context viewed."""
        self._lock = threading.RLock()
        self._events: list[Event] = []
        self._origin: dict[int, int] = {}  # id(logged message) -> its event's seq
        self._by_message_id: dict[str, list[int]] = {}
        self._shared = False  # one object in two events: replay instead of identity
        self._shown: OrderedDict[int, _Shown] = OrderedDict()
        self._compactions: dict[tuple[int, str], Compaction | None] = {}
        self._index(ctx.events())

    # ---- the index ---------------------------------------------------------------------

    def _index(self, events: list[Event]) -> None:
        for e in events:
            m = e.message
            if m is not None:
                if id(m) in self._origin:
                    self._shared = True
                self._origin[id(m)] = e.seq
                self._by_message_id.setdefault(m.id, []).append(e.seq)
        self._events.extend(events)

    def catch_up(self, refresh: Callable[[Context], int]) -> None:
        """Apply what a store saved since (``refresh`` is ``Store.refresh``); the log only
        grows, so what was computed at earlier seqs stays true."""
        with self._lock:
            before = self.ctx.next_seq
            if refresh(self.ctx):
                self._index(self.ctx.events()[before:])
                self._shown.pop(before, None)  # "as shown" at the old head is now messages_at

    # ---- reading -----------------------------------------------------------------------

    @property
    def next_seq(self) -> int:
        """The context's ``next_seq``."""
        return self.ctx.next_seq

    def check_seq(self, seq: int | None) -> int:
        """``seq`` checked against the log (``None``: the head); ``IndexError`` outside it."""
        head = self.ctx.next_seq
        if seq is None:
            return head
        if not 0 <= seq <= head:
            raise ValueError(f"seq {seq} is outside the log: 0 to next_seq ({head})")
        return seq

    def _at(self, seq: int) -> _Shown:
        """The transcript shown at ``seq``: at the head, ``messages`` as shown (the configured
        system prompt and the overlay included); before it, ``messages_at(seq)``."""
        with self._lock:
            s = self._shown.get(seq)
            if s is not None:
                self._shown.move_to_end(seq)
                return s
            if seq == self.ctx.next_seq:
                shown = self.ctx.messages
                lead = len(shown) - len(self.ctx.messages_at(seq))
            else:
                shown, lead = self.ctx.messages_at(seq), 0
            s = _Shown(shown, lead)
            self._shown[seq] = s
            while len(self._shown) > self.KEEP_SEQS:
                self._shown.popitem(last=False)
            return s

    def messages(self, seq: int | None = None) -> list[Message]:
        """The shown messages at ``seq`` (default: now)."""
        return list(self._at(self.check_seq(seq)).messages)

    def total_tokens(self, seq: int, encoding: str) -> int:
        """Tokens of the transcript shown at ``seq``."""
        s = self._at(seq)
        total = s.totals.get(encoding)
        if total is None:
            if seq == self.ctx.next_seq:
                total = self.ctx.total_token_count(encoding)
            else:
                total = sum(m.count_tokens(encoding) for m in s.messages)
            s.totals[encoding] = total
        return total

    def transcript(self, seq: int | None = None, offset: int = 0, limit: int | None = None,
                   encoding: str = "cl100k_base") -> Transcript:
        """A page of the transcript at ``seq`` (default: now)."""
        seq = self.check_seq(seq)
        check_encoding(encoding)
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError("offset and limit must not be negative")
        s = self._at(seq)
        total = self.total_tokens(seq, encoding)  # first: it counts every message in one call
        end = len(s.messages) if limit is None else min(len(s.messages), offset + limit)
        rows = [self._row(s, seq, i, encoding) for i in range(offset, end)]
        return Transcript(self.ctx.id, seq, self.ctx.next_seq, len(s.messages), total, offset, rows)

    def _row(self, s: _Shown, seq: int, i: int, encoding: str) -> Row:
        m = s.messages[i]
        position = i - s.lead if i >= s.lead else None
        origin = None if position is None else self._origin_of(s, seq, position, m)
        comp = None if origin is None else self.compaction(origin, encoding)
        return Row(position, m, origin, m.count_tokens(encoding), comp)

    def _origin_of(self, s: _Shown, seq: int, position: int, m: Message) -> int | None:
        """The seq of the event that put the message at ``position`` there."""
        if self._shared:
            if s.seqs is None:
                s.seqs = self._replay(seq)
            return s.seqs[position]
        found = self._origin.get(id(m))
        if found is not None and found < seq:
            return found
        # A derived message (a dynamic message resolved, the overlay on a system message) is a
        # new object with the logged one's id: the latest event before seq that logged that id.
        earlier = [q for q in self._by_message_id.get(m.id, ()) if q < seq]
        return max(earlier) if earlier else None

    def _replay(self, seq: int) -> list[int]:
        """The seq of each position at ``seq``, from the events' ranges (the file format's
        fold): only for a log that holds one message object in two events."""
        out: list[int] = []
        for e in self._events[:seq]:
            if e.type in SURFACE or e.type == "remove":
                d = e.data
                op = d.get("op")
                if op == "insert":
                    out.insert(int(d["position"]), e.seq)
                elif op == "replace":
                    out[int(d["first"]):int(d["last"]) + 1] = [e.seq]
                elif op == "remove":
                    del out[int(d["first"]):int(d["last"]) + 1]
        return out

    def compaction(self, seq: int, encoding: str) -> Compaction | None:
        """What the replace event ``seq`` shadows (``None`` for an insert): counted in the
        transcript just before it."""
        key = (seq, encoding)
        with self._lock:
            if key in self._compactions:
                return self._compactions[key]
        data = self._events[seq].data
        out = None
        if data.get("op") == "replace":
            first, last = int(data["first"]), int(data["last"])
            originals = self.ctx.messages_at(seq)[first:last + 1]
            record = data.get("compaction")
            out = Compaction(seq, first, last, len(originals), sum(m.count_tokens(encoding) for m in originals),
                             record if isinstance(record, dict) else None)
        with self._lock:
            self._compactions[key] = out
        return out

    def compactions(self, encoding: str = "cl100k_base") -> list[Compaction]:
        """Every replace event of the log, oldest first (reads every surface event's data)."""
        return [c for e in self._events if e.type in SURFACE
                for c in [self.compaction(e.seq, encoding)] if c is not None]

    # ---- the log, windows, differences --------------------------------------------------

    def events(self, after: int = -1, limit: int = 100) -> list[dict[str, Any]]:
        """The events with seqs above ``after``, at most ``limit``, as a file holds them."""
        if after < -1 or limit < 0:
            raise ValueError("after must be -1 or more, limit not negative")
        with self._lock:
            page = self._events[after + 1:after + 1 + limit]
        return [event_json(e) for e in page]

    def window(self, budget: int, encoding: str = "cl100k_base") -> Window:
        """Where ``rolling_token_window(budget, encoding)`` starts in the transcript as shown."""
        check_encoding(encoding)
        if budget < 0:
            raise ValueError("a token budget must not be negative")
        shown = self._at(self.ctx.next_seq).messages
        child = self.ctx.rolling_token_window(budget, encoding)
        if child is None:
            return Window(budget, encoding, False, 0, [], len(shown), self.total_tokens(self.ctx.next_seq, encoding),
                          len(shown))
        kept = child.messages
        # The kept suffix is the parent's own objects; the specials before it may be derived.
        k = 0
        while k < len(kept) and k < len(shown) and kept[-1 - k] is shown[-1 - k]:
            k += 1
        start = len(shown) - k
        special = [m for m in (self.ctx.system_prompt_message, self.ctx.tool_definitions_message) if m is not None]
        specials = [i for i, m in enumerate(shown[:start]) if any(m is x for x in special)]
        return Window(budget, encoding, True, start, specials, len(kept), child.total_token_count(encoding), len(shown))

    def diff(self, a: int, b: int | None = None) -> Diff:
        """How much of the transcript at ``a`` is unchanged at ``b`` (default: now, which is
        ``changed_since(a)``); ``a`` must not be after ``b``."""
        a, b = self.check_seq(a), self.check_seq(b)
        if a > b:
            raise ValueError(f"from ({a}) must not be after to ({b})")
        ma = self.ctx.messages_at(a)
        if b == self.ctx.next_seq:
            return Diff(a, b, self.ctx.changed_since(a), len(ma), len(self.ctx.messages_at(b)))
        mb = self.ctx.messages_at(b)
        n = 0
        for x, y in zip(ma, mb):
            if x is not y and x != y:
                break
            n += 1
        return Diff(a, b, n, len(ma), len(mb))
