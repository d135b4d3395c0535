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
import math
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
RANGE_KEY = "adk_range"  # metadata of a compaction summary: [start, end] of its range


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


def to_message(
    event: Event, text: str, *, content: Any = None, at: float | None = None, span: tuple[float, float] | None = None
) -> Message:
    """The message standing for ``event`` (its JSON ``text``). ``content``: the ADK content
    to show instead of the event's (a compaction's summary); ``at``: its place in time."""
    source = event if content is None else None
    role = "user" if (event.content is not None and event.content.role == "user") or (
        event.content is None and event.author == "user") else "assistant"
    metadata: dict[str, Any] = {EVENT_KEY: text, TIMESTAMP_KEY: event.timestamp}
    if at is not None:
        metadata[AT_KEY] = at
        metadata[RANGE_KEY] = list(span) if span is not None else [at, at]
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


def _standing(m: Message) -> tuple[float | None, tuple[float, float] | None]:
    """Where a message stands in time for ADK's compaction (a summary at its range's end, an
    event at its timestamp), and a summary's range."""
    md = m.metadata
    at = md.get(AT_KEY, md.get(TIMESTAMP_KEY))
    span = md.get(RANGE_KEY)
    return (at if isinstance(at, (int, float)) else None,
            (float(span[0]), float(span[1])) if isinstance(span, list) and len(span) == 2 else None)


def add_event(ctx: Context, event: Event, text: str) -> None:
    """Append ``event`` to the Context; a compaction event (``actions.compaction``) becomes a
    non-destructive compaction, so that the transcript is what ADK's request builder makes of
    the session's events (``_process_compaction_events``):

    - a range inside the range of a summary already shown (not the same range) is superseded
      by it: its summary is logged and removed at once (the event is kept, nothing shown);
    - otherwise the summary takes the place of what its range covers — the events whose
      timestamp lies in ``[start_timestamp, end_timestamp]`` and the summaries of ranges inside
      it (a summary of a partly overlapping range stays) — standing at the range's end: one
      replace event where the covered messages end right there, else removals and an insert
      at that place. The covered messages stay in the log."""
    compaction = event.actions.compaction if event.actions is not None else None
    if compaction is None or compaction.compacted_content is None:
        ctx.add_message(to_message(event, text))
        return
    start, end = compaction.start_timestamp, compaction.end_timestamp
    summary = to_message(event, text, content=compaction.compacted_content, at=end, span=(start, end))
    if math.isnan(start) or math.isnan(end):
        ctx.add_message(summary)  # a range that contains nothing and stands nowhere
        return
    shown = [_standing(m) for m in ctx.messages]
    if any(r is not None and r[0] <= start and end <= r[1] and r != (start, end) for _, r in shown):
        ctx.add_message(summary)
        ctx.remove_message(ctx.message_count - 1)
        return
    covered = [i for i, (t, r) in enumerate(shown) if (
        r is None and t is not None and start <= t <= end) or (r is not None and start <= r[0] and r[1] <= end)]
    place = max((i + 1 for i, (t, _) in enumerate(shown) if t is not None and t <= end), default=0)
    runs: list[list[int]] = []
    for i in covered:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    if runs and runs[-1][1] == place - 1:
        first, last = runs.pop()
        ctx.replace_message_range(first, last, summary)
        for first, last in reversed(runs):
            ctx.remove_message_range(first, last)
        return
    for first, last in reversed(runs):
        ctx.remove_message_range(first, last)
    place -= sum(last - first + 1 for first, last in runs if last < place)
    if place >= ctx.message_count:
        ctx.add_message(summary)
        return
    # A place inside the transcript: an anchor there, the summary inserted at it.
    anchor = f"adk-compaction-{ctx.next_seq}"
    ctx.add_anchor(anchor, place, after_existing=False)
    ctx.append(summary, anchor_point=anchor)


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
