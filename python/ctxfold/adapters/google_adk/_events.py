"""ADK events as ctxfold messages, and a compaction event as a non-destructive compaction.

Each ADK ``Event`` becomes one message of the session's Context: its text, thoughts, function
calls and responses as parts (so the Context reads as the conversation: windows, token counts,
the viewer), and in ``metadata["adk_event"]`` the event itself as the JSON text ADK's own SQL
services store (``model_dump_json(exclude_none=True)``), from which it comes back equal. The
text, not a parsed dict, is kept so that any value ADK can write (integers of any size, floats
bit for bit) round-trips exactly.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..._context import Context
from ..._core import Message, Part

if TYPE_CHECKING:
    from google.adk.events.event import Event

__all__ = ["EVENT_KEY", "add_event", "event_text_of_row", "timestamp_of_row"]

EVENT_KEY = "adk_event"  # metadata: the ADK event's JSON text
TIMESTAMP_KEY = "adk_timestamp"  # metadata: the event's timestamp (a float, as ADK has it)
AT_KEY = "adk_at"  # metadata of a compaction summary: where it stands (the range's end)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _parts(event: Event) -> list[Part]:
    parts: list[Part] = []
    content = event.content
    for p in (content.parts or []) if content is not None else []:
        if p.text is not None:
            parts.append(Part.thinking(p.text) if p.thought else Part.text(p.text))
        if p.function_call is not None:
            call = p.function_call
            parts.append(Part.tool_use(call.id or call.name or "", call.name or "", _json(call.args or {})))
        if p.function_response is not None:
            r = p.function_response
            parts.append(Part.tool_result(r.id or r.name or "", _json(r.response)))
    return parts


def _time(ts: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(ts, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def to_message(event: Event, text: str, *, content: Any = None, at: float | None = None) -> Message:
    """The message standing for ``event`` (its JSON ``text``). ``content``: the ADK content
    to show instead of the event's (a compaction's summary); ``at``: its place in time."""
    source = event if content is None else None
    role = "user" if (event.content is not None and event.content.role == "user") or (
        event.content is None and event.author == "user") else "assistant"
    metadata: dict[str, Any] = {EVENT_KEY: text, TIMESTAMP_KEY: event.timestamp}
    if at is not None:
        metadata[AT_KEY] = at
        role = "assistant"  # ADK's request builder attributes the summary to the agent
    try:
        parts = _parts(source) if source is not None else _summary_parts(content)
        return Message(role, parts or None, metadata=metadata, created_at=_time(event.timestamp if at is None else at))
    except (TypeError, ValueError):
        # The parts are a view; the event's JSON in metadata is what matters. A value the
        # view cannot hold (a time out of range) leaves a message without them.
        return Message(role, None, metadata=metadata)


def _summary_parts(content: Any) -> list[Part]:
    return [Part.text(p.text) for p in (content.parts or []) if p.text is not None]


def _standing(m: Message) -> float | None:
    """Where a message stands in time for ADK's compaction: a summary at its range's end, an
    event at its timestamp."""
    md = m.metadata
    at = md.get(AT_KEY, md.get(TIMESTAMP_KEY))
    return at if isinstance(at, (int, float)) else None


def add_event(ctx: Context, event: Event, text: str) -> None:
    """Append ``event`` to the Context. A compaction event (``actions.compaction``) replaces the
    messages its range covers — shown messages whose time lies in ``[start_timestamp,
    end_timestamp]``, earlier summaries inside it included — by its summary, where ADK's request
    builder puts it; the covered messages stay in the log. Covered messages that are not one run
    (timestamps out of order) become one replace (the last run) and removals (the others).
    Nothing covered: the summary is appended."""
    compaction = event.actions.compaction if event.actions is not None else None
    if compaction is None or compaction.compacted_content is None:
        ctx.add_message(to_message(event, text))
        return
    start, end = compaction.start_timestamp, compaction.end_timestamp
    summary = to_message(event, text, content=compaction.compacted_content, at=end)
    covered = [i for i, m in enumerate(ctx.messages) if (t := _standing(m)) is not None and start <= t <= end]
    if not covered:
        ctx.add_message(summary)
        return
    runs: list[list[int]] = []
    for i in covered:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    last = runs.pop()
    ctx.replace_message_range(last[0], last[1], summary)
    for first, final in reversed(runs):
        ctx.remove_message_range(first, final)


def event_text_of_row(row: dict[str, Any]) -> str | None:
    """The ADK event JSON a stored ctxfold event carries (its message's metadata), or None for
    an event that carries none (a removal, bookkeeping)."""
    md = _metadata(row)
    text = md.get(EVENT_KEY) if md is not None else None
    return text if isinstance(text, str) else None


def timestamp_of_row(row: dict[str, Any]) -> float:
    md = _metadata(row)
    ts = md.get(TIMESTAMP_KEY) if md is not None else None
    return float(ts) if isinstance(ts, (int, float)) else 0.0


def _metadata(row: dict[str, Any]) -> dict[str, Any] | None:
    data = row.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    md = message.get("metadata") if isinstance(message, dict) else None
    return md if isinstance(md, dict) else None
