"""One LangChain message ↔ one ctxfold message, exactly, and the log of a message channel.

The per-message mapping is ``ctxfold.formats``' LangChain one, without its request pairing (a
checkpoint holds the list as the graph had it, answered or not). Every new message is checked
on the way in: when the mapping would not give it back ``==`` (a class or field the mapping has
no place for), the message keeps its ``serde`` bytes in ``metadata["langgraph"]`` and comes
back from them; the ctxfold message still carries its role, text and id for everything else
that reads the log. With a ``serde`` that encrypts, every message is kept that way, and its
ctxfold message carries no text: nothing of a message's content is stored unencrypted.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Sequence
from itertools import compress, count, islice, repeat
from operator import is_not
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

from ..._context import Context
from ..._core import Message, is_json
from ..._gc_pause import collector_paused
from ...errors import FormatError
from ...formats._langchain import _OWN_CLASSES, FORMAT, _ai_out, _answer_out, _message_in, _message_out
from ...formats._plan import Answer, Unplanned, alone

__all__ = ["MessageLog", "as_put", "common_prefix", "encrypts", "first_change", "fresh", "same"]

_SERDE_KEY = "langgraph"


def first_change(known: Sequence[Any], target: Sequence[Any]) -> int:
    """How many items ``target`` starts with that are the very objects ``known`` starts with:
    one pass at C speed, no list made (a graph passes back the objects it read, so this is the
    unchanged part of a message list)."""
    return next(compress(count(), map(is_not, known, target)), min(len(known), len(target)))


def as_put(value: Any, known: Sequence[BaseMessage] = ()) -> list[BaseMessage] | None:
    """``value`` as the list a put records when it is a message channel's (a non-empty list of
    LangChain messages, found by value), else ``None``. ``known``: messages already checked (a
    log's cached list); the part of ``value`` that is those very objects is not tested again,
    so a put tests what it added, not the thread.

    A message without an id is copied here, and the list with it: LangGraph's ``add_messages``
    gives such a message its id in place, and can do so while the put is still under way (a
    graph's thread runs beside a blocking put, and an async put waits for its store), so the
    checkpoint takes the message as it is when the put is called, as the stock savers, which
    serialize it at once, do. ``known`` never holds such a message a caller holds (see
    ``MessageLog``), so a copy is needed only in what follows it."""
    if not isinstance(value, list) or not value:
        return None
    k = first_change(known, value) if known else 0
    rest = islice(value, k, None) if k else value
    # map over the builtin: the test of a long list runs at C speed
    if not all(map(isinstance, rest, repeat(BaseMessage))):
        return None
    idless = [i for i in range(k, len(value)) if value[i].id is None]
    if not idless:
        return value
    out = list(value)
    for i in idless:
        out[i] = fresh(out[i])
    return out


def _to_langchain(m: Message, serde: Any) -> BaseMessage:
    kept = m.metadata.get(_SERDE_KEY)
    if isinstance(kept, dict) and "serde" in kept:
        kind, data = kept["serde"]
        lc: BaseMessage = serde.loads_typed((kind, base64.b64decode(data)))
        return lc
    v = alone(m, FORMAT)
    if v.role == "assistant" and not (v.interop is not None and v.interop.get("class") in _OWN_CLASSES):
        out = _ai_out(v)
    elif v.role == "tool" and not (v.interop is not None and v.interop.get("class") in _OWN_CLASSES):
        call = v.tool_call_id or ""
        out = _answer_out(Answer(Unplanned(call), v, None, call))
    else:
        out = _message_out(v)
    if out is None:  # only for messages made elsewhere; a message from a checkpoint has its interop
        raise FormatError(f"message {m.id}: nothing to give LangChain")
    return out


def encrypts(serde: Any) -> bool:
    """Whether ``serde`` encrypts what it stores: LangGraph's ``EncryptedSerializer``, or a
    serializer of one's own that names its types as that one does (``"<type>+<cipher>"``, the
    mark its ``loads_typed`` decrypts by)."""
    if isinstance(serde, EncryptedSerializer):
        return True
    try:
        kind, _ = serde.dumps_typed(None)
    except Exception:  # (a serializer that refuses None says nothing either way)
        return False
    return isinstance(kind, str) and "+" in kind


def _to_ctxfold(lc: BaseMessage, serde: Any, sealed: bool = False) -> tuple[Message, BaseMessage, bool]:
    """``lc`` as a ctxfold message; the object a read of it gives back, sharing nothing with
    ``lc`` (what the mapping's check built, or ``serde``'s round trip for a message the mapping
    cannot hold); whether that object is ``==`` to ``lc`` (``serde`` can lose a value: a tuple
    comes back a list, a lone surrogate a ``?``, as it does with LangGraph's own savers).
    ``sealed`` (``serde`` encrypts): the message is kept through ``serde`` alone, and the
    ctxfold message carries its role and ids but no text, so that nothing of its content is
    stored unencrypted."""
    # (a ToolMessage artifact that is not JSON: the mapping would drop it, with a warning)
    if not sealed and not (isinstance(lc, ToolMessage) and not is_json(lc.artifact)):
        try:
            m = _message_in(lc, "message")
            back = _to_langchain(m, serde)
            if type(back) is type(lc) and back == lc:
                return m, back, True
        except (FormatError, TypeError, ValueError):
            pass
    kind, data = serde.dumps_typed(lc)
    # What a read decrypts is the inner serializer's bytes: their round trip gives the same
    # object without a second pass of the cipher (about 0.1 ms with LangGraph's AES).
    inner = serde.serde if isinstance(serde, EncryptedSerializer) else None
    back = inner.loads_typed(inner.dumps_typed(lc)) if inner is not None else serde.loads_typed((kind, data))
    role = "assistant" if isinstance(lc, AIMessage) else "user"
    text = lc.content if isinstance(lc.content, str) and not sealed else None
    kw: dict[str, Any] = {"id": lc.id} if isinstance(lc.id, str) else {}
    if isinstance(lc, ToolMessage) and isinstance(lc.tool_call_id, str):
        role, kw["tool_call_id"] = "tool", lc.tool_call_id
    meta = {_SERDE_KEY: {"serde": [kind, base64.b64encode(data).decode("ascii")], "class": type(lc).__name__}}
    exact = type(back) is type(lc) and back == lc
    try:
        return Message(role, text, metadata=meta, **kw), back, exact
    except ValueError:  # text ctxfold refuses (lone surrogates): the bytes above hold it
        return Message(role, None, metadata=meta, **kw), back, exact


# Field values shared rather than copied: nothing in them can change.
_IMMUTABLE = frozenset({str, int, float, bool, bytes, type(None)})
_set = object.__setattr__


def _copied(v: Any) -> Any:
    """A deep copy of a field's value: JSON-like containers copied here (``deepcopy``'s
    bookkeeping costs more than such a copy), anything else through ``deepcopy``."""
    t = type(v)
    if t in _IMMUTABLE:
        return v
    if t is dict:
        return {k: _copied(x) for k, x in v.items()}
    if t is list:
        return [_copied(x) for x in v]
    return copy.deepcopy(v)


def fresh(lc: BaseMessage) -> BaseMessage:
    """A copy of ``lc``, ``==`` to it and sharing nothing that can change: what pydantic's
    deep copy makes, at a third of its cost for a message (a read copies every message)."""
    if getattr(lc, "__pydantic_private__", None) is not None:
        return copy.deepcopy(lc)
    cls = type(lc)
    out = cls.__new__(cls)
    _set(out, "__dict__", {k: v if type(v) in _IMMUTABLE else _copied(v) for k, v in lc.__dict__.items()})
    extra = lc.__pydantic_extra__
    _set(out, "__pydantic_extra__", None if extra is None else _copied(extra))
    _set(out, "__pydantic_fields_set__", set(lc.__pydantic_fields_set__))
    _set(out, "__pydantic_private__", None)
    return out


def same(a: BaseMessage, b: BaseMessage) -> bool:
    """The same message: the very object, or one of its class ``==`` to it."""
    return a is b or (a.id == b.id and type(a) is type(b) and a == b)


def _differs(a: BaseMessage, b: BaseMessage) -> bool:
    """Not plainly the same message: neither the very object nor one of its class with equal
    fields (what pydantic's ``==`` finds first; where this says "differs" the caller asks
    ``same``). About 0.3 µs a message: the test of an unchanged list at every put."""
    return a is not b and (type(a) is not type(b) or a.__dict__ != b.__dict__
                           or a.__pydantic_extra__ != b.__pydantic_extra__)


def common_prefix(own: Sequence[BaseMessage], target: Sequence[BaseMessage], share: bool) -> int:
    """How many messages ``target`` starts with that are those of ``own`` (the saver's own
    objects). Shared, the very objects, at C speed: the caller promised never to change a
    message in place. Else each compared by value, so that a message the caller changed in
    place and passed back (a node's edit of its state) is seen; then by ``same``."""
    n = min(len(own), len(target))
    i = first_change(own, target) if share else next(compress(count(), map(_differs, own, target)), n)
    while i < n and same(own[i], target[i]):
        i += 1
    return i


class MessageLog:
    """A message channel of one thread and namespace: a Context whose fold at each recorded
    seq is the channel's list at a checkpoint.

    The saver's LangChain objects are its own: ``objects`` holds one per logged message seen
    (a copy of what a put was given, or built from the log), never handed out and never one a
    caller holds, so that a caller who changes a message it was given or gave (LangGraph's
    own tests edit a message read from ``get_state`` in place) changes no checkpoint. A read
    returns copies. A put compares the list with the saver's own objects by value (about
    0.3 µs a message), so that a message changed in place and passed back is recorded as
    changed; it converts only what changed. With ``share`` (the caller promises never to
    change a message in place) the objects are not copied either way, and a put finds the
    unchanged part by identity with the list the caller holds at the head (``seen``: the last
    one put, or the last one read there), at C speed: then it costs what changed.

    A message without an id is the exception: LangGraph's ``add_messages`` gives it its id in
    place, so the very object proves nothing. The saver's own object for one is never handed
    out, nor kept from a caller, even shared (a read copies it; ``idless`` says whether the log
    has any, so that a log without one costs nothing more), and where ``seen`` would hold one
    a caller holds it holds the saver's own instead: identity stops there."""

    def __init__(self, ctx: Context, serde: Any, share: bool = False, sealed: bool = False) -> None:
        self.ctx = ctx
        self.serde = serde
        self.share = share
        self.sealed = sealed  # ``serde`` encrypts: new messages are kept through it alone
        self.objects: dict[Message, BaseMessage] = {}
        self._head: list[BaseMessage] | None = None  # the saver's objects of the fold at ``_head_seq``
        self._head_seq = -1
        self._seen: tuple[BaseMessage, ...] = ()  # the list a caller holds for the fold at ``_seen_seq``
        self._seen_seq = -1
        self.token = ctx.created_at.isoformat()
        self.idless = False  # whether any of ``objects`` has no id (once set, stays set)

    # ---- reading -------------------------------------------------------------------------

    def _objects_of(self, messages: Sequence[Message]) -> list[BaseMessage]:
        objects = self.objects
        found = [objects.get(m) for m in messages]
        missing = found.count(None)
        if not missing:
            return found  # type: ignore[return-value]  # every one found: no None in it
        out: list[BaseMessage] = []
        # A first read of a long log builds every message: with the cycle collector paused (no
        # cycles are made, and its passes over a growing heap cost more than the build).
        with collector_paused(missing):
            for m, lc in zip(messages, found):
                if lc is None:
                    lc = objects[m] = _to_langchain(m, self.serde)
                    if lc.id is None:
                        self.idless = True
                out.append(lc)
        return out

    def seen(self) -> Sequence[BaseMessage]:
        """The list a caller holds for the fold at the head (messages, every one), without
        building one: empty when there is none."""
        return self._seen if self._seen_seq == self.ctx.next_seq else ()

    def own_at(self, seq: int) -> list[BaseMessage]:
        """The saver's own objects of the fold at ``seq`` (not for handing out)."""
        if seq != self.ctx.next_seq:
            return self._objects_of(self.ctx.messages_at(seq))
        if self._head is None or self._head_seq != seq:
            self._head = self._objects_of(self.ctx.messages)
            self._head_seq = seq
        return self._head

    def read(self, seq: int, count: int) -> tuple[list[BaseMessage], list[BaseMessage]]:
        """The first ``count`` messages of the fold at ``seq``: the saver's own objects (not
        for handing out), and new ones, the caller's to change. A read of the whole list at the
        head is what the caller then holds there."""
        own = self.own_at(seq)
        whole = count >= len(own)
        part = own if whole else own[:count]
        idless = self.idless
        if self.share and not idless:
            out = list(part)
        else:
            with collector_paused(len(part)):  # (as a build: many new objects, no cycles among them)
                if self.share:
                    out = [lc if lc.id is not None else fresh(lc) for lc in part]
                else:
                    out = [fresh(lc) for lc in part]
        if whole and seq == self.ctx.next_seq:
            self._seen = tuple(out) if not idless else tuple(
                given if lc.id is not None else lc for given, lc in zip(out, part))
            self._seen_seq = seq
        return part, out

    # ---- writing -------------------------------------------------------------------------

    def put(self, target: list[BaseMessage]) -> int:
        """Append what takes the fold at the head to ``target``; return the seq it stands at.

        One pass: the unchanged prefix is skipped (see ``common_prefix``); then, in order, a
        message with the same id is kept (or replaced where it changed), a message whose id is
        gone is removed (consecutive removals are one event), and what is new at the end is
        appended. A reorder or an insert before kept messages removes from there on and
        appends the rest again (LangGraph's reducers never do that)."""
        ctx = self.ctx
        seen = self.seen()
        n, m = len(ctx), len(target)
        # The edits, planned (and every message converted) before the log changes: a message
        # that cannot be stored leaves the log as it was.
        # ("remove", first, last, []) / ("replace", pos, 0, [new]) / ("add", 0, 0, [new, ...])
        ops: list[tuple[str, int, int, list[tuple[Message, BaseMessage]]]] = []
        # The unchanged prefix. Shared: the very objects the caller holds (LangGraph passes
        # the list it read back), found at C speed. Else compared by value with the saver's own
        # objects: the caller may have changed one in place.
        i = first_change(seen, target) if self.share and len(seen) == n else 0
        head: list[BaseMessage] | None = None
        if i < n:
            head = self.own_at(ctx.next_seq)
            i += common_prefix(head[i:], target[i:], self.share)
        j = i
        if i < n:
            assert head is not None  # (read above: i < n then too)
            wanted = {x.id for x in target[j:] if x.id is not None}
            pos = i  # the position of head[i] in the transcript as it is being edited
            removing = 0
            while i < n:
                h = head[i]
                t = target[j] if j < m else None
                if t is not None and (same(h, t) or (t.id is not None and t.id == h.id)):
                    if removing:
                        ops.append(("remove", pos, pos + removing - 1, []))
                        removing = 0
                    if not same(h, t):
                        ops.append(("replace", pos, 0, [self._converted(t)]))
                    pos += 1
                    i += 1
                    j += 1
                elif h.id is None or h.id not in wanted:
                    removing += 1
                    i += 1
                else:
                    break
            removing += n - i  # what is left after a reorder goes, and comes again below
            if removing:
                ops.append(("remove", pos, pos + removing - 1, []))
        if j < m:
            ops.append(("add", 0, 0, [self._converted(x) for x in target[j:]]))
        for kind, a, b, new in ops:
            if kind == "remove":
                ctx.remove_message_range(a, b)
            elif kind == "replace":
                ctx.replace_message(a, new[0][0])
            else:
                ctx.add_messages([x for x, _ in new])
            for x, lc in new:
                self.objects[x] = lc
        # The saver's objects of the new head, when those of the old one were at hand: the same
        # edits on a copy of that list, so that the next put finds them without a read of the
        # whole fold (a put compares the list with them).
        if head is not None:
            head = list(head)
            for kind, a, b, new in ops:
                if kind == "remove":
                    del head[a:b + 1]
                elif kind == "replace":
                    head[a] = new[0][1]
                else:
                    head += [lc for _, lc in new]
        self._head, self._head_seq = head, ctx.next_seq
        self._seen, self._seen_seq = tuple(target), ctx.next_seq
        return ctx.next_seq

    def _converted(self, lc: BaseMessage) -> tuple[Message, BaseMessage]:
        """``lc`` as a ctxfold message, with the saver's own object for it: what a read of the
        log gives back (so that a read is the same whether this saver put the message or
        another one built it from the log), ``lc`` itself when shared, equal to that and with an
        id (see the class)."""
        m, back, exact = _to_ctxfold(lc, self.serde, self.sealed)
        if lc.id is None:
            self.idless = True
            return m, back
        return m, lc if self.share and exact else back

    def forget_head(self) -> None:
        self._head = None
        self._seen_seq = -1
