"""Which answer meets which call, for the exporters written in Python (LangChain, Pydantic AI).

The same rules as the core's ``formats/plan.rs`` (docs/formats.md, "Pairing"): a *turn* is a run
of consecutive assistant messages; the answers to its calls follow it, in source order, wherever
they were; a call never answered gets the interrupted result of `patch_dangling_tool_calls` (in the request only); an
answer with no call before it, or a second answer to the same call, is left out. Every repair is
written down, so ``strict=True`` can refuse with the whole list.

The frameworks' exporters then walk :attr:`Plan.steps` and build their own objects; this module
knows nothing of LangChain or Pydantic AI.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core import Message, Part
from ..errors import FormatError

__all__ = ["INTERRUPTED", "Answer", "Call", "Plan", "View", "plan", "views"]

INTERRUPTED = "Tool call was interrupted and not executed. Please retry if needed."


class View:
    """A message's fields, each read once (every read of a field builds its Python value)."""

    __slots__ = ("msg", "role", "content", "tool_calls", "tool_call_id", "interop")

    def __init__(self, msg: Message, fmt: str) -> None:
        self.msg = msg
        self.role = role = msg.role
        self.content: Any = msg.content
        self.tool_calls: list[dict[str, Any]] = msg.tool_calls if role == "assistant" else []
        self.tool_call_id = msg.tool_call_id if role == "tool" else None
        i = msg.metadata.get("interop")
        # what an importer of `fmt` kept on the message (None for a message from elsewhere)
        self.interop: dict[str, Any] | None = i if isinstance(i, dict) and i.get("format") == fmt else None


def views(messages: Sequence[Message], fmt: str) -> list[View]:
    return [View(m, fmt) for m in messages]


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer to ``call``: a tool message (``part is None``), a ``tool_result`` part of a user
    message (``part``), or, when ``message is None``, the interrupted result."""

    call: Call
    message: View | None
    part: Part | None = None


@dataclass(slots=True)
class Plan:
    # Each step is ("msg", view, None) for a message sent where it is (a user message without its
    # tool_result parts, which go with their turn), or ("turn", [assistant views], [answers]).
    steps: list[tuple[str, Any, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def walk(
        self,
        message: Callable[[View], None],
        assistant: Callable[[View], None],
        answer: Callable[[Answer], None],
    ) -> None:
        """The request in order: ``message`` for each message sent where it is; for each turn,
        ``assistant`` for each of its messages, then ``answer`` for each of its answers."""
        for kind, a, b in self.steps:
            if kind == "msg":
                message(a)
                continue
            for v in a:
                assistant(v)
            for ans in b:
                answer(ans)

    def check(self, strict: bool) -> None:
        if strict and self.problems:
            n = len(self.problems)
            raise FormatError(f"the request would need {n} repair{'' if n == 1 else 's'}: " + "; ".join(self.problems))


CallsOf = Callable[[View], Sequence[Call]]


def _answers_of(m: View) -> list[tuple[str, Part | None]]:
    role = m.role
    if role == "tool":
        tid = m.tool_call_id
        return [] if tid is None else [(tid, None)]
    if role == "user":
        content = m.content
        if isinstance(content, list):
            return [(p.get("call_id"), p) for p in content if p.type == "tool_result" and isinstance(p.get("call_id"), str)]
    return []


def plan(messages: Sequence[View], calls_of: CallsOf, keep_unpaired: Callable[[View], bool] | None = None) -> Plan:
    """The steps of the request for ``messages`` (tool definitions already left out).
    ``calls_of`` gives an assistant message's calls; ``keep_unpaired`` says which tool messages
    without a ``tool_call_id`` are sent where they are (LangChain's legacy ``FunctionMessage``)."""
    out = Plan()
    n = len(messages)
    roles = [m.role for m in messages]
    # Answers by call id, in source order: (position, index in message, message, part).
    index: dict[str, deque[tuple[int, int, View, Part | None]]] = {}
    has_results: set[int] = set()
    for i, m in enumerate(messages):
        r = roles[i]
        if r == "tool" or r == "user":
            for k, (cid, part) in enumerate(_answers_of(m)):
                index.setdefault(cid, deque()).append((i, k, m, part))
                if part is not None:
                    has_results.add(i)
    consumed: set[tuple[int, int]] = set()
    i = 0
    while i < n:
        m = messages[i]
        r = roles[i]
        if r == "assistant":
            j = i
            while j < n and roles[j] == "assistant":
                j += 1
            found: list[tuple[tuple[int, int], Answer]] = []
            dangling: list[Answer] = []
            for a in messages[i:j]:
                for c in calls_of(a):
                    q = index.get(c.id)
                    hit = None
                    if q is not None:
                        while q and q[0][0] < j:
                            q.popleft()
                        if q:
                            hit = q.popleft()
                    if hit is None:
                        out.problems.append(f"call {c.id!r} ({c.name}) is never answered; sent with the interrupted result")
                        dangling.append(Answer(c, None))
                        continue
                    at, k, am, part = hit
                    consumed.add((at, k))
                    if not all(roles[x] == "tool" for x in range(j, at)):
                        out.problems.append(f"the answer to call {c.id!r} is not right after its call; moved there")
                    found.append(((at, k), Answer(c, am, part)))
            found.sort(key=lambda e: e[0])
            out.steps.append(("turn", messages[i:j], [a for _, a in found] + dangling))
            i = j
            continue
        if r == "tool":
            if m.tool_call_id is None:
                if keep_unpaired is not None and keep_unpaired(m):
                    out.steps.append(("msg", m, None))
                else:
                    out.problems.append("a tool message without a tool_call_id; left out")
            elif (i, 0) not in consumed:
                out.problems.append(f"the answer to call {m.tool_call_id!r} has no call before it in the request; left out")
            i += 1
            continue
        if i in has_results:
            for k, (cid, _) in enumerate(_answers_of(m)):
                if (i, k) not in consumed:
                    out.problems.append(f"the answer to call {cid!r} has no call before it in the request; left out")
        out.steps.append(("msg", m, None))
        i += 1
    return out
