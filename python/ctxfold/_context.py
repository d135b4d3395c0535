"""The Python ``Context``: the Rust core (log, fold, anchors, tokens, windows, codec) plus the
runtime fields that hold arbitrary Python objects (deps, callbacks, handlers)."""

from __future__ import annotations

import logging
import operator
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any, SupportsIndex, overload

from . import _copying, _core, _runtime
from ._compaction import CompactionMixin
from ._core import (
    BOOKKEEPING_EVENT_TYPES,
    EVENT_TYPES,
    ContextCore,
    Event,
    Message,
    SystemPromptMessage,
    ToolDefinitionsMessage,
)
from ._redact import json_clean
from ._tool_call import ToolCall
from ._values import RunContext, SandboxPolicy, Usage
from .errors import DecodeError

__all__ = ["Context"]

logger = logging.getLogger("ctxfold")

_UNSET: Any = object()


def _as_message(m: Any) -> Message:
    if isinstance(m, Message):
        return m
    if isinstance(m, Mapping):
        return Message.from_dict(dict(m))
    raise TypeError(f"expected a Message, got {type(m).__name__}")


class Context(CompactionMixin):
    """An agent's conversation: an append-only event log whose fold is ``messages``.

    A context reads like the list it shows: ``len(ctx)``, ``for m in ctx``, ``ctx[i]`` and
    ``ctx[a:b]`` are those of ``ctx.messages`` (the same objects). ``copy.copy``,
    ``copy.deepcopy`` and ``pickle`` give an independent context with the same id, log,
    anchors and fields, rebuilt from ``serialize()``; the runtime fields a file never holds
    (``deps`` unredacted, callbacks, ``notify``, the overlay) come along as the objects they are
    (``copy.copy``: new ``deps`` and ``callbacks`` dicts holding the same values)."""

    def __init__(
        self,
        *,
        messages: Iterable[Message] = (),
        system_prompt: str | None = None,
        deps: Mapping[str, Any] | None = None,
        max_iterations: int = 10,
        iteration: int = 0,
        usage: Usage | Mapping[str, int] | None = None,
        needs_response: bool = True,
        callbacks: Mapping[str, Any] | None = None,
        notify: Callable[[Event], Any] | None = None,
        agent_name: str | None = None,
        cancellation_check: Callable[[], bool] | None = None,
        approval_handler: Callable[..., Any] | None = None,
        stream: bool = False,
        _core_ctx: ContextCore | None = None,
    ) -> None:
        self._core = _core_ctx if _core_ctx is not None else ContextCore()
        self._lock = threading.RLock()
        # Every runtime field (the table in _runtime says which), then what was given.
        if _core_ctx is None or system_prompt is not None:  # a fork's core holds its parent's
            self.system_prompt = system_prompt
        self.deps: dict[str, Any] = dict(deps or {})
        """Dependencies for tools; saved with credential-named keys and non-JSON values left out."""
        self.usage = usage if isinstance(usage, Usage) else Usage.from_mapping(usage or {})
        """Token and request counters, added to by ``add_usage`` and ``add_response``."""
        self.tool_calls: list[Any] = []
        """Tool calls recorded with ``add_tool_call``."""
        self.needs_response = needs_response
        """Whether the model is owed a turn: set by ``add_message`` as an agent loop needs."""
        self.iteration = iteration
        """The loop's iteration count (``increment_iteration``)."""
        self.max_iterations = max_iterations
        """The iteration limit ``max_iterations_reached`` compares against."""
        self.started_at: datetime | None = datetime.now(timezone.utc)
        """When the run started (aware UTC), or ``None`` when not known."""
        self.agent_name = agent_name
        """The agent's name, shown in store listings."""
        self.stream = stream
        """Whether the agent streams its answers (runtime only, never saved)."""
        self.callbacks: dict[str, Any] = dict(callbacks or {})
        """Named callbacks for the caller's own use (runtime only, never saved)."""
        self.notify = notify
        """Called with each committed ``Event``; what it raises is logged, never propagated."""
        self.cancellation_check = cancellation_check
        """A callable the agent loop may ask whether to stop (runtime only)."""
        self.approval_handler = approval_handler
        """A callable the agent loop may ask to approve a tool call (runtime only)."""
        # The next_seq at the last save to or load from a store; None before. The
        # store also remembers which store and what state text that was, to skip empty saves.
        self._stored_seq: int | None = None
        self._stored_state: tuple[str, str] | None = None
        seed = [_as_message(m) for m in messages]
        if seed and isinstance(seed[0], SystemPromptMessage):
            # An imported system prompt takes its slot, as ``create`` puts it, so windows keep it.
            self._core.append(seed.pop(0), "system_prompt", None, False)
        if seed:
            self._core.extend(seed, "messages")

    @property
    def stored_seq(self) -> int | None:
        """The ``next_seq`` at the last save to or load from a store; ``None`` before. Set it
        to ``None`` to save the context to a store anew; a value other than ``None`` or a
        non-negative int is refused when set (``TypeError``, ``ValueError``)."""
        return self._stored_seq

    @stored_seq.setter
    def stored_seq(self, value: int | None) -> None:
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"stored_seq must be an int or None, got {type(value).__name__}")
            if not 0 <= value < 2**64:
                raise ValueError(f"stored_seq must be a non-negative 64-bit seq, got {value}")
        self._stored_seq = value

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def new(cls, **opts: Any) -> Context:
        """``Context(**opts)``: the Elixir seed's spelling."""
        return cls(**opts)

    @classmethod
    def create(
        cls,
        system_prompt_message: Message | None = None,
        tool_definitions_message: Message | None = None,
        parent_context: Context | None = None,
    ) -> Context:
        """An empty context whose special messages take the first slots; with a parent, its
        content map is a copy of the parent's and ``origin_context_id`` the parent's id."""
        ctx = cls()
        if parent_context is not None:
            ctx._core.inherit(parent_context._core)
        if system_prompt_message is not None:
            ctx._core.append(system_prompt_message, "system_prompt")
        if tool_definitions_message is not None:
            ctx._core.append(tool_definitions_message, "tools")
        return ctx

    @classmethod
    def from_run_context(cls, run_ctx: RunContext, **opts: Any) -> Context:
        """``Context(**opts)`` whose ``deps`` are a copy of the run context's."""
        opts.setdefault("deps", dict(run_ctx.deps or {}))
        return cls(**opts)

    def _child(self, core: ContextCore) -> Context:
        """A fork: the new core, every runtime field copied."""
        child = Context(_core_ctx=core)
        with self._lock:
            _runtime.copy(self, child)
        return child

    # ---- reading -----------------------------------------------------------------------

    @property
    def system_prompt(self) -> str | None:
        """The agent's configured system prompt. It is sent: when the transcript has no
        leading system message, ``messages`` shows one holding it (the overlay appended), so
        token totals, windows and exporters see it; a transcript's own leading system message
        wins over it. Never logged and not a position (``messages_at`` does not show it)."""
        return self._core.system_prompt()

    @system_prompt.setter
    def system_prompt(self, text: str | None) -> None:
        if text is not None and not isinstance(text, str):
            raise TypeError(f"system_prompt must be a str or None, got {type(text).__name__}")
        self._core.set_system_prompt(text)

    @property
    def id(self) -> str:
        """The context's id (a uuid4 string unless given)."""
        return self._core.id

    @property
    def created_at(self) -> datetime:
        """When the context was made (aware UTC)."""
        return self._core.created_at

    @property
    def origin_context_id(self) -> str | None:
        """The id of the context this one was forked or windowed from, else ``None``."""
        return self._core.origin_context_id

    @property
    def children(self) -> list[str]:
        """The ids of the forks and windows made from this context, oldest first."""
        return self._core.children

    @property
    def messages(self) -> list[Message]:
        """The fold of the log with the overlay applied; a new list each call."""
        return self._core.messages()

    @property
    def message_count(self) -> int:
        """``len(messages)``."""
        return self._core.shown_len()

    def __len__(self) -> int:
        return self._core.shown_len()

    def __iter__(self) -> Iterator[Message]:
        return iter(self._core.messages())

    @overload
    def __getitem__(self, index: SupportsIndex) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Message | list[Message]:
        """``ctx[i]`` is ``ctx.messages[i]`` and ``ctx[a:b]`` is ``ctx.messages[a:b]`` (the
        same objects), without building the whole list: O(log n) plus what is returned."""
        if isinstance(index, slice):
            wanted = range(*index.indices(self._core.shown_len()))
            if not wanted:
                return []
            lo = min(wanted)
            got = _core.shown_range(self._core, lo, max(wanted) + 1)
            return [got[i - lo] for i in wanted if i - lo < len(got)]
        try:
            i = operator.index(index)
        except TypeError:
            raise TypeError(f"context indices must be integers or slices, not {type(index).__name__}") from None
        n = self._core.shown_len()
        if i < 0:
            i += n
        got = _core.shown_range(self._core, i, i + 1) if 0 <= i < n else []
        if not got:
            raise IndexError("context index out of range")
        return got[0]

    def events(self) -> list[Event]:
        """Every event, shadowed ones too, oldest first."""
        return self._core.events()

    def messages_at(self, seq: int) -> list[Message]:
        """The transcript as it was when ``next_seq`` was ``seq`` (no overlay)."""
        return self._core.messages_at(seq)

    def changed_since(self, seq: int) -> int:
        """How many leading messages of ``messages_at(seq)`` are still shown unchanged."""
        return self._core.changed_since(seq)

    @property
    def next_seq(self) -> int:
        """The seq the next event gets: how many events the log holds."""
        return self._core.next_seq

    @property
    def anchor_points(self) -> list[tuple[str, int]]:
        """``(name, index)`` of every anchor, in anchor order."""
        return self._core.anchor_points

    @property
    def content_map(self) -> dict[str, str]:
        """A copy of the content map: sha256 hex → the text materialized under it."""
        return self._core.content_map

    @property
    def hook_index(self) -> dict[str, list[Message]]:
        """Hook id → the transcript messages that carry it."""
        return self._core.hook_index

    @property
    def system_prompt_message(self) -> Message | None:
        """The special system prompt message as ``messages`` shows it, else ``None``."""
        return self._core.system_prompt_message

    @property
    def tool_definitions_message(self) -> Message | None:
        """The special tool definitions message as ``messages`` shows it, else ``None``."""
        return self._core.tool_definitions_message

    @property
    def raw_dict(self) -> dict[str, Any]:
        """``serialize()``: a snapshot, not a live view."""
        return self.serialize()

    def last_message(self) -> Message | None:
        """The last message shown, or ``None`` when there is none."""
        return self._core.last_message()

    def _tail(self, n: int) -> list[Message]:
        """``messages[-n:]`` (``[]`` for 0) without a list of all of them: O(log len + n)."""
        # A limit past the transcript is all of it, whatever its size (the core takes a usize).
        return _core.shown_tail(self._core, min(n, self.message_count))

    def _savepoint(self) -> _core.Savepoint:
        """A savepoint of the log, for ``_rewind`` (a store writer that lost a race)."""
        return _core.context_savepoint(self._core)

    def _rewind(self, point: _core.Savepoint) -> None:
        """Drop the events since ``point``, never saved, and restore the context as it was
        then (its runtime fields are the caller's to restore, e.g. by ``Store.refresh``)."""
        _core.context_rewind(self._core, point)

    def assistant_messages(self) -> list[Message]:
        """The assistant messages shown, in order."""
        return self._core.messages_with_role("assistant")

    def total_token_count(self, encoding: str = "cl100k_base") -> int:
        """Tokens of ``messages`` as shown, in ``encoding`` (counted once per message)."""
        return self._core.total_token_count(encoding)

    def max_iterations_reached(self) -> bool:
        """``iteration >= max_iterations``."""
        return self.iteration >= self.max_iterations

    # ---- anchors and the log -----------------------------------------------------------

    def _publish(self, event: Event) -> None:
        notify = self.notify
        if notify is None:
            return
        try:
            notify(event)
        except Exception:
            logger.exception("ctxfold: notify raised on event %s; ignored", event.seq)

    def append(self, message: Message, anchor_point: str = "messages") -> None:
        """Insert at the anchor's index; that anchor and every later one move up by 1."""
        event, _ = self._core.append(_as_message(message), anchor_point, None, self.notify is not None)
        if event is not None:
            self._publish(event)

    def add_anchor(self, name: str, msg_index: int, after_existing: bool = True) -> None:
        """A new anchor at ``msg_index``; after anchors at that index, or before them."""
        self._core.add_anchor(name, msg_index, after_existing)

    def add_message(self, message: Message, *, source: str | None = None) -> None:
        """One insert event at the ``messages`` anchor; updates ``needs_response``."""
        m = message if isinstance(message, Message) else _as_message(message)
        if source is not None and not isinstance(source, str):
            raise TypeError("source must be a str")
        # The hot path of every turn: the event is built only when someone listens.
        event, needs_response = self._core.append(m, "messages", source, self.notify is not None)
        if needs_response is not None:
            self.needs_response = needs_response
        if event is not None:
            self._publish(event)

    def add_messages(self, messages: Iterable[Message]) -> None:
        """One event per message, as a loop of ``add_message`` would append them. Listeners
        hear the events after the whole batch is in, with ``needs_response`` already final."""
        batch = [m if isinstance(m, Message) else _as_message(m) for m in messages]
        events, needs_response = self._core.extend(batch, "messages", self.notify is not None)
        if needs_response is not None:
            self.needs_response = needs_response
        for e in events:
            self._publish(e)

    def log_event(self, type: str, data: Mapping[str, Any] | None = None) -> None:
        """A bookkeeping event. A surface type is refused and an unknown type dropped, each
        with a warning on the ``ctxfold`` logger: never an exception, never a lost run."""
        name = getattr(type, "value", type)
        if not isinstance(name, str) or name not in EVENT_TYPES:
            logger.warning("ctxfold: log_event dropped unknown event type %r", name)
            return
        if name not in BOOKKEEPING_EVENT_TYPES:
            logger.warning("ctxfold: log_event refused type %r: the context writes it itself", name)
            return
        payload = json_clean(dict(data or {})) if isinstance(data, Mapping) or data is None else None
        if not isinstance(payload, dict):
            logger.warning("ctxfold: log_event dropped %r: data must be a mapping", name)
            return
        self._publish(self._core.log_event(name, payload))

    def replace_message(self, index: int, message: Message) -> None:
        """``replace_message_range(index, index, message)``."""
        self.replace_message_range(index, index, message)

    def replace_message_range(self, first: int, last: int, message: Message) -> None:
        """Non-destructive compaction: ``first..last`` (inclusive) shown as one message."""
        event = self._core.replace_range(first, last, _as_message(message))
        if event is None:
            self._warn_outside("replace", first, last)
            return
        self._publish(event)

    def add_response(self, response: Any) -> None:
        """Append what a provider answered — an OpenAI ``ChatCompletion`` (first choice), an
        OpenAI ``Response`` (its output items), an Anthropic ``Message``; the SDK object or its
        dict — and add its usage. Any other shape: ``FormatError``, nothing appended."""
        messages, usage = _core.format_response(response)
        self.add_messages(messages)
        self.add_usage(usage)
    def remove_message(self, index: int) -> None:
        """``remove_message_range(index, index)``."""
        self.remove_message_range(index, index)

    def remove_message_range(self, first: int, last: int) -> None:
        """One ``remove`` event: ``first..last`` (inclusive) leaves the transcript, not the log."""
        event = self._core.remove_range(first, last)
        if event is None:
            self._warn_outside("remove", first, last)
            return
        self._publish(event)

    def clear(self) -> None:
        """Remove the whole transcript (one ``remove`` event; none when already empty)."""
        event = self._core.clear()
        if event is not None:
            self._publish(event)

    def _warn_outside(self, what: str, first: int, last: int) -> None:
        logger.warning(
            "ctxfold: %s range %d..%d is outside the %d-message transcript; nothing done",
            what, first, last, len(self._core),
        )

    def patch_dangling_tool_calls(self) -> None:
        """Answer every call nothing answers with an interrupted result, after its turn."""
        for e in self._core.patch_dangling_tool_calls():
            self._publish(e)

    def pending_tool_calls(self) -> list[ToolCall]:
        """The calls still to run, oldest first: every call an assistant message made (a
        ``tool_calls`` entry or a ``tool_use`` part) that no later tool message or
        ``tool_result`` part answers, each a ``ToolCall`` with its arguments decoded. It reads
        back from the end only to the last turn that left nothing unanswered (calls before a
        turn the model completed are settled), so it costs the calls since then."""
        return [ToolCall(*c) for c in self._core.pending_tool_calls()]

    def put_system_prompt_overlay(self, text: str | None) -> None:
        """Show ``text`` after the leading system message (runtime, never logged); ``None`` clears it."""
        if text is not None and not isinstance(text, str):
            raise TypeError("the overlay must be a str or None")
        self._core.set_overlay(text)

    def materialize(self, outputs: Mapping[str, str]) -> None:
        """Bind hook outputs; messages carrying those hooks resolve on every read."""
        event = self._core.materialize(dict(outputs))
        if event is not None:
            self._publish(event)

    # ---- runtime fields ----------------------------------------------------------------

    def add_tool_call(self, call: Any) -> None:
        """Record a tool call in ``tool_calls``."""
        with self._lock:
            self.tool_calls.append(call)

    def add_usage(self, usage: Usage | Mapping[str, int]) -> None:
        """Add counters to ``usage`` (a ``Usage`` or a mapping; missing keys count 0)."""
        u = usage if isinstance(usage, Usage) else Usage.from_mapping(usage)
        with self._lock:
            self.usage = self.usage + u

    def merge_deps(self, deps: Mapping[str, Any]) -> None:
        """Merge into ``deps``; the new keys win."""
        with self._lock:
            self.deps = {**(self.deps or {}), **deps}

    def increment_iteration(self) -> None:
        """Add 1 to ``iteration``."""
        with self._lock:
            self.iteration += 1

    def set_needs_response(self, value: bool) -> None:
        """Set ``needs_response``."""
        if not isinstance(value, bool):
            raise TypeError("needs_response must be a bool")
        self.needs_response = value

    def to_run_context(self, sandbox: SandboxPolicy | None = None) -> RunContext:
        """A ``RunContext`` for tools: a copy of ``deps`` and the sandbox policy."""
        return RunContext(dict(self.deps), sandbox=sandbox)

    # ---- forks and windows -------------------------------------------------------------

    def fork_insert_sequence(
        self,
        system_prompt_message: SystemPromptMessage | None = None,
        tool_definitions_message: ToolDefinitionsMessage | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> Context:
        """A new context of the messages whose events fall in ``[start, end)`` of the log."""
        core = self._core.fork_insert_sequence(system_prompt_message, tool_definitions_message, start, end)
        return self._child(core)

    def rolling_sequence_window(self, count: int) -> Context | None:
        """A new context of the last ``count`` messages and the special ones; ``None`` if that is all."""
        core = self._core.rolling_sequence_window(count)
        return None if core is None else self._child(core)

    def rolling_token_window(self, max_tokens: int, encoding: str = "cl100k_base") -> Context | None:
        """The longest suffix that fits ``max_tokens`` with the special messages; ``None`` if all fits."""
        core = self._core.rolling_token_window(max_tokens, encoding)
        return None if core is None else self._child(core)

    def strip_thinking(self) -> Context:
        """A new context without ``thinking`` parts (messages of only thinking are left out)."""
        return self._child(self._core.strip_thinking())

    # ---- persistence -------------------------------------------------------------------

    def _runtime(self) -> dict[str, Any]:
        with self._lock:
            return _runtime.dump(self)

    def serialize(self) -> dict[str, Any]:
        """The version 2 document (JSON-encodable). Never callables, never the overlay."""
        return self._core.serialize(self._runtime())

    @classmethod
    def _from_loaded(cls, core: ContextCore, rt: dict[str, Any]) -> Context:
        ctx = cls(_core_ctx=core)
        _runtime.load(ctx, rt)
        return ctx

    @classmethod
    def deserialize(cls, data: Mapping[str, Any]) -> Context:
        """The context a ``serialize()`` document (version 2, or 1) holds."""
        core, rt, _ = ContextCore.load_dict(data, True)
        return cls._from_loaded(core, rt)

    @classmethod
    def load_from_dict(cls, data: Mapping[str, Any]) -> Context:
        """As ``deserialize``, and also the versionless layout of older files."""
        core, rt, _ = ContextCore.load_dict(data, False)
        return cls._from_loaded(core, rt)

    def save(self, session_dir: str | os.PathLike[str]) -> str:
        """Write ``<YYYYMMDD>-<id>.json`` into the folder atomically; return its path."""
        return os.fspath(self._core.save(os.fspath(session_dir), self._runtime()))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Context:
        """Read a file ``save`` wrote (or any layout ``load_from_dict`` reads)."""
        where = os.fspath(path)
        core, rt, _ = ContextCore.load_file(where)
        try:
            return cls._from_loaded(core, rt)
        except DecodeError as e:
            raise _core.located(e, within=where) from None

    def __repr__(self) -> str:
        return f"Context(id={self.id!r}, messages={len(self)}, events={self.next_seq})"

    # ---- copies ------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """``pickle`` and ``copy.deepcopy``: rebuilt from ``serialize()``, every runtime field
        (deps unredacted, callbacks, the overlay) carried as the object it is."""
        return _copying.reduce(self)

    def __copy__(self) -> Context:
        """``copy.copy``: an independent context with the same id, log and fields; ``deps`` and
        ``callbacks`` are new dicts holding the same values, as in a fork."""
        return _copying.shallow_copy(self)


_core_version = _core.__version__
