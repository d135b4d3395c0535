"""``ctxfold.ToolCall``: one call an agent still has to run (``Context.pending_tool_calls``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """A call an assistant message made that nothing answers yet.

    ``arguments`` is the decoded dict, whatever form the call came in (a dict, a JSON string
    as OpenAI sends it, Anthropic's ``input``); ``{}`` when the call has none, and ``None``
    when the string is not a JSON object (the model wrote bad JSON: answer it with an error).
    ``raw_arguments`` is exactly what was given (the string or the dict), ``None`` when
    nothing was. ``message_index`` is the position of the message that made the call."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    message_index: int
    raw_arguments: str | dict[str, Any] | None = None
