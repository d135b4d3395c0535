"""Compaction as a safe cycle: plan what to summarize, summarize it (while the agent goes on),
apply the summary as a compare-and-swap. The rules (where a range starts and ends, call groups,
pins, the conflict check, the record) are decided in the Rust core; this module holds the
plan and record values, the cycle around a summarizer, and ``Compactor``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import ContextCore, Event, Message

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["CompactionMixin", "CompactionPlan", "CompactionRecord", "Compactor", "SUMMARY_PROMPT"]

SUMMARY_PROMPT = (
    "Summarize the conversation above so that it can stand in for it: keep every fact, decision, "
    "open question, file, identifier and number the rest of the conversation may need, and say "
    "what was being worked on. Answer with the summary only."
)
"""What ``CompactionPlan.to`` asks a model, after the messages to summarize."""

Summary = str | Message
Summarizer = Callable[["CompactionPlan"], Summary | Awaitable[Summary]]


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction will summarize, as planned at ``based_on`` (the context's ``next_seq``
    then). ``ranges``: inclusive position ranges, oldest first (several when pinned messages
    fall inside); ``first``/``last`` span them. ``messages``: the logged messages of the ranges;
    ``tokens_before``: their tokens as shown, in ``encoding``."""

    first: int
    """The first position summarized."""
    last: int
    """The last position summarized."""
    ranges: tuple[tuple[int, int], ...]
    """The inclusive position ranges summarized, oldest first."""
    messages: tuple[Message, ...]
    """The logged messages of the ranges."""
    based_on: int
    """The context's ``next_seq`` when planned: applying checks it still is."""
    tokens_before: int
    """The ranges' tokens as shown, in ``encoding``."""
    encoding: str
    """The encoding tokens are counted in."""
    shown: tuple[Message, ...] = field(repr=False)
    """The same messages as ``messages`` shows them (dynamic messages resolved)."""
    context_id: str = field(repr=False)
    """The id of the context planned: a plan applies to it alone."""

    def to(self, format: str, *, prompt: str | None = SUMMARY_PROMPT, strict: bool = False) -> Any:
        """The range as a request for a model to summarize: the messages as shown, then a user
        message asking for the summary (``prompt``; ``None`` leaves it out). ``format`` is one
        of ``ctxfold.formats``: ``"openai_chat"``, ``"openai_responses"``, ``"anthropic"``
        (the keyword arguments of the SDK's create call), ``"langchain"``, ``"pydantic_ai"``
        (a list of the framework's messages)."""
        from . import formats

        exporters: dict[str, Callable[..., Any]] = {
            "openai_chat": formats.to_openai_chat,
            "openai_responses": formats.to_openai_responses,
            "anthropic": formats.to_anthropic,
            "langchain": formats.to_langchain,
            "pydantic_ai": formats.to_pydantic_ai,
        }
        export = exporters.get(format)
        if export is None:
            raise ValueError(f"unknown format {format!r}; expected one of {', '.join(exporters)}")
        messages = list(self.shown)
        if prompt is not None:
            messages.append(Message.user(prompt))
        return export(messages, strict=strict)


@dataclass(frozen=True)
class CompactionRecord:
    """An applied compaction: ``seq`` is its replace event; ``first``/``last`` the positions it
    stood for then (``ctx.messages_at(seq)`` holds the originals); ``record`` the dict its event
    recorded (``based_on``, ``first``, ``last``, ``tokens_before``, ``tokens_after``,
    ``encoding``, and ``ranges`` when pinned messages split it)."""

    seq: int
    """The seq of the replace event the compaction wrote."""
    first: int
    """The first position it replaced."""
    last: int
    """The last position it replaced."""
    record: dict[str, Any]
    """What the event records of the compaction (tokens before and after, …)."""


def _plan(
    core: ContextCore,
    max_tokens: int,
    keep_tokens: int | None,
    keep_last: int | None,
    encoding: str,
    pinned: Iterable[int],
) -> CompactionPlan | None:
    got = _core.compaction_plan(core, max_tokens, keep_tokens, keep_last, encoding, list(pinned))
    if got is None:
        return None
    context_id, ranges, logged, shown, based_on, tokens_before = got
    messages = tuple(logged)
    return CompactionPlan(
        first=ranges[0][0],
        last=ranges[-1][1],
        ranges=tuple((a, b) for a, b in ranges),
        messages=messages,
        based_on=based_on,
        tokens_before=tokens_before,
        encoding=encoding,
        shown=messages if shown is None else tuple(shown),
        context_id=context_id,
    )


def _checked(summary: object) -> Summary:
    if isinstance(summary, (str, Message)):
        return summary
    raise TypeError(f"a summarizer must return a str or a Message, got {type(summary).__name__}")


class CompactionMixin:
    """``Context``'s compaction methods."""

    _core: ContextCore

    if TYPE_CHECKING:

        def _publish(self, event: Event) -> None: ...

    def plan_compaction(
        self,
        max_tokens: int,
        *,
        keep_tokens: int | None = None,
        keep_last: int | None = None,
        encoding: str = "cl100k_base",
        pinned: Iterable[int] = (),
    ) -> CompactionPlan | None:
        """What to summarize so that the context as shown fits ``max_tokens``; ``None`` when it
        already fits or nothing can be summarized. The range starts after the special messages,
        the leading system messages and the summary right after them, and ends where the kept
        suffix begins: the longest suffix within ``keep_tokens`` (default ``max_tokens // 2``)
        or the last ``keep_last`` messages, grown back so that no call is cut from its answers.
        ``pinned`` positions, and messages whose metadata has ``"pinned": True``, stay out with
        their call groups."""
        return _plan(self._core, max_tokens, keep_tokens, keep_last, encoding, pinned)

    def apply_compaction(self, plan: CompactionPlan, summary: Summary) -> None:
        """Write ``summary`` in place of the plan's range: one replace event recording the
        compaction (and one removal per further range of a pinned plan), all or nothing. A str
        becomes an assistant message marked ``metadata={"compaction": ...}``. Messages appended
        since the plan stay after it; if an event since ``plan.based_on`` touched the range or
        anything before it: ``ConflictError``, and nothing is written."""
        self._apply(plan, summary)

    def _apply(self, plan: CompactionPlan, summary: Summary) -> Message:
        if not isinstance(plan, CompactionPlan):
            raise TypeError(f"expected a CompactionPlan, got {type(plan).__name__}")
        events = _core.compaction_apply(
            self._core, plan.context_id, plan.ranges, plan.based_on, plan.tokens_before, plan.encoding, _checked(summary)
        )
        for e in events:
            self._publish(e)
        written = events[0].message
        assert written is not None  # a replace event carries its message
        return written

    def compact(self, summarize: Callable[[CompactionPlan], Summary], max_tokens: int, **plan_options: Any) -> Message | None:
        """Plan, call ``summarize(plan)`` (a str or Message back; ``plan.to(format)`` gives the
        range as a request), apply. Returns the summary message, or ``None`` when nothing was to
        be compacted. What the summarizer raises propagates, and nothing is written."""
        plan = self.plan_compaction(max_tokens, **plan_options)
        if plan is None:
            return None
        summary = summarize(plan)
        if inspect.isawaitable(summary):
            close = getattr(summary, "close", None)
            if close is not None:
                close()
            raise TypeError("the summarizer is async: use await ctx.acompact(...)")
        return self._apply(plan, summary)

    async def acompact(self, summarize: Summarizer, max_tokens: int, **plan_options: Any) -> Message | None:
        """``compact`` with an async summarizer (a sync one works too). No lock is held while it
        runs: turns may be appended meanwhile, and stay after the summary. A ``ConflictError``
        when the range was touched meanwhile; what the summarizer raises propagates; either way
        nothing is written."""
        plan = self.plan_compaction(max_tokens, **plan_options)
        if plan is None:
            return None
        summary = summarize(plan)
        if inspect.isawaitable(summary):
            summary = await summary
        return self._apply(plan, summary)

    def clear_tool_results(
        self,
        *,
        keep_last: int = 3,
        min_tokens: int = 0,
        exclude_tools: Iterable[str] = (),
        placeholder: str = "[tool result cleared]",
        encoding: str = "cl100k_base",
    ) -> None:
        """Replace each tool result but the last ``keep_last`` by ``placeholder``, answering the
        same call: a ``tool`` message's content, or a ``tool_result`` part alone (the rest of its
        message kept). Results under ``min_tokens`` tokens stay, and so do results of calls to
        ``exclude_tools`` (which do not count toward ``keep_last``). One replace event each; the
        originals stay in the log."""
        if isinstance(exclude_tools, str):
            raise TypeError("exclude_tools must be an iterable of tool names, not a str")
        if not isinstance(placeholder, str):
            raise TypeError("placeholder must be a str")
        events = _core.compaction_clear_tool_results(
            self._core, keep_last, min_tokens, list(exclude_tools), placeholder, encoding
        )
        for e in events:
            self._publish(e)

    def compactions(self) -> list[CompactionRecord]:
        """Every applied compaction, oldest first."""
        return [CompactionRecord(s, f, la, r) for s, f, la, r in _core.compaction_records(self._core)]


class Compactor:
    """A summarizer (sync or async) and the plan options, for whoever compacts on a schedule:
    ``compactor.compact(ctx)`` / ``await compactor.acompact(ctx)`` compact ``ctx`` when it is over
    ``max_tokens`` and return the summary message, else ``None``."""

    def __init__(self, summarize: Summarizer, max_tokens: int, **plan_options: Any) -> None:
        if not callable(summarize):
            raise TypeError("summarize must be callable")
        unknown = set(plan_options) - {"keep_tokens", "keep_last", "encoding", "pinned"}
        if unknown:
            raise TypeError(f"unknown plan options: {', '.join(sorted(unknown))}")
        self.summarize = summarize
        """The summarizer: messages in, the summary out (sync or async)."""
        self.max_tokens = max_tokens
        """The budget over which ``compact`` compacts."""
        self.plan_options: dict[str, Any] = dict(plan_options)
        """``keep_tokens``, ``keep_last``, ``encoding``, ``pinned``, as ``Context.compact`` takes them."""

    @property
    def encoding(self) -> str:
        """The encoding the plan counts in (``cl100k_base`` unless given)."""
        return str(self.plan_options.get("encoding", "cl100k_base"))

    def over_budget(self, ctx: Context) -> bool:
        """Whether ``ctx`` as shown exceeds ``max_tokens``."""
        return ctx.total_token_count(self.encoding) > self.max_tokens

    def compact(self, ctx: Context) -> Message | None:
        """``ctx.compact(...)`` with this summarizer and these options."""
        return ctx.compact(self.summarize, self.max_tokens, **self.plan_options)  # type: ignore[arg-type]

    async def acompact(self, ctx: Context) -> Message | None:
        """``await ctx.acompact(...)`` with this summarizer and these options."""
        return await ctx.acompact(self.summarize, self.max_tokens, **self.plan_options)

    def __repr__(self) -> str:
        options: Sequence[str] = [f"{k}={v!r}" for k, v in self.plan_options.items()]
        return f"Compactor({self.summarize!r}, max_tokens={self.max_tokens}{''.join(', ' + o for o in options)})"
