"""The core's plan of a request, walked by the exporters that build a framework's objects
(LangChain, Pydantic AI).

Which answer meets which call, where answers go, what a call never answered gets, which
answers are left out and what ``strict=True`` refuses are decided once, in the core (the same
plan the JSON exporters write from; docs/formats.md, "Pairing"): ``_core.format_plan`` hands
it over as indices. This module only turns those indices into the messages, parts and calls
they name, and calls the builder's functions in request order; it knows nothing of LangChain
or Pydantic AI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core import Message, Part, PlanCall, format_plan

if TYPE_CHECKING:
    from . import Source

__all__ = ["Answer", "Unplanned", "View", "alone", "walk"]


class View:
    """A message of the request, with each field read once (every read of a field builds its
    Python value), what the target's importer kept on it and the calls the core found in it."""

    __slots__ = ("msg", "role", "content", "tool_calls", "tool_call_id", "interop", "calls")

    def __init__(self, msg: Message, interop: dict[str, Any] | None, calls: tuple[PlanCall, ...]) -> None:
        self.msg = msg
        self.role = role = msg.role
        self.content: Any = msg.content
        self.tool_calls: list[dict[str, Any]] = msg.tool_calls if role == "assistant" else []
        self.tool_call_id = msg.tool_call_id if role == "tool" else None
        # what the importer of the target kept on the message (None for a message from elsewhere)
        self.interop = interop
        self.calls = calls


@dataclass(frozen=True)
class Unplanned:
    """A call known only by the id its answer names: a message mapped on its own, outside a
    request (a checkpoint holds a list as the graph had it, answered or not)."""

    id: str
    name: str = ""
    arguments: Any = None

    @property
    def sent(self) -> str:
        return self.id


@dataclass(frozen=True)
class Answer:
    """An answer to ``call``, sent with the call id ``sent``: a tool message (``part is None``),
    a ``tool_result`` part of a user message (``part``), or, when ``message is None``, the
    interrupted result (``_core.INTERRUPTED``)."""

    call: PlanCall | Unplanned
    message: View | None
    part: Part | None
    sent: str


def alone(msg: Message, target: str) -> View:
    """``msg`` as the core reads it for ``target`` (what its importer kept, its calls), with no
    request around it: for mappings of one message at a time."""
    plan = format_plan(target, [msg])
    if not plan.messages:  # the tool definitions message: no message of a request
        return View(msg, None, ())
    return View(plan.messages[0], plan.interop[0], plan.calls[0])


def walk(
    target: str,
    src: Source,
    strict: bool,
    message: Callable[[View], None],
    assistant: Callable[[View], None],
    answer: Callable[[Answer], None],
) -> None:
    """The request for ``src`` in order: ``message`` for each message sent where it is; for
    each turn, ``assistant`` for each of its messages, then ``answer`` for each of its answers.
    ``strict=True``: the core's ``FormatError`` listing every repair, before anything is built."""
    from . import _source

    plan = format_plan(target, _source(src), strict)
    views = [View(m, i, c) for m, i, c in zip(plan.messages, plan.interop, plan.calls)]
    for step in plan.steps:
        if step[0] == "message":
            message(views[step[1]])
            continue
        _, run, answers = step
        for k in run:
            assistant(views[k])
        for a in answers:
            v = None if a.message is None else views[a.message]
            part = None if v is None or a.part is None else v.content[a.part]
            answer(Answer(a.call, v, part, a.sent))
