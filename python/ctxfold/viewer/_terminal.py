"""``ctxfold show``'s text: one block per message (position, role, time, exact tokens and a bar,
the text, the parts, the compaction marker), the window marker, or the log. Built as styled
segments once, then written with ``rich`` on a terminal (colors) or as plain text when piped
or when ``rich`` (the ``viewer`` extra) is not installed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from .._core import Message, Part
from ._model import Row, Transcript, Window

__all__ = ["Line", "event_lines", "rich_text", "transcript_lines", "write"]

# A line is a list of (text, style) segments; styles are rich style names, ignored when plain.
Segment = tuple[str, str]
Line = list[Segment]

ROLE_STYLE = {"system": "bold magenta", "developer": "bold magenta", "user": "bold green",
              "assistant": "bold cyan", "tool": "bold yellow"}
BAR_CELLS = 12


def _compact(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _glyphs(stream: TextIO) -> dict[str, str]:
    """Box and bar characters where the stream's encoding has them, else ASCII."""
    fancy = {"full": "█", "empty": "░", "call": "→", "result": "←", "summary": "≡", "rule": "─", "dot": "·"}
    try:
        "".join(fancy.values()).encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return {"full": "#", "empty": ".", "call": "->", "result": "<-", "summary": "==", "rule": "-", "dot": "|"}
    return fancy


def _bar(tokens: int, largest: int, g: dict[str, str]) -> str:
    filled = 0 if largest <= 0 or tokens <= 0 else max(1, round(BAR_CELLS * tokens / largest))
    return g["full"] * filled + g["empty"] * (BAR_CELLS - filled)


def _indent(text: str, style: str, prefix: str = "    ") -> Iterator[Line]:
    for line in text.split("\n"):
        yield [(prefix, ""), (line, style)]


def _media(p: Part) -> str:
    src = p.get("source")
    if isinstance(src, dict):
        if isinstance(src.get("url"), str):
            return str(src["url"])
        data = src.get("data")
        kind = src.get("media_type") or src.get("mime_type") or ""
        return f"{kind} data, {len(data):,} characters".strip() if isinstance(data, str) else _compact(src)
    return _compact(src) if src is not None else ""


def _part_lines(p: Part, g: dict[str, str]) -> Iterator[Line]:
    t = p.type
    if t == "text":
        yield from _indent(str(p.get("text") or ""), "")
    elif t == "thinking":
        yield [("    ", ""), ("thinking", "italic dim")]
        yield from _indent(str(p.get("text") or ""), "dim", "      ")
    elif t == "tool_use":
        args = p.get("arguments", p.get("input"))
        yield [("    ", ""), (f"{g['call']} {p.get('name')}", "bold yellow"),
               (f"({_compact(args if args is not None else {})})", ""), (f"  {p.get('call_id') or p.get('id') or ''}", "dim")]
    elif t == "tool_result":
        yield [("    ", ""), (f"{g['result']} result", "bold yellow"), (f"  {p.get('call_id') or ''}", "dim")]
        yield from _indent(_compact(p.get("content")), "", "      ")
    elif t in ("image", "audio", "video", "file", "pdf"):
        yield [("    ", ""), (f"[{t}] ", "bold blue"), (_media(p), "blue")]
    elif t == "tool":
        yield [("    ", ""), ("tool ", "bold blue"), (str(p.get("name")), "bold"), (f"  {p.get('description') or ''}", "dim")]
    else:
        yield [("    ", ""), (f"[{t}] ", "bold blue"), (_compact(p.to_dict()), "")]


def _message_lines(m: Message, g: dict[str, str]) -> Iterator[Line]:
    if isinstance(m.content, str):
        yield from _indent(m.content, "")
    else:
        for p in m.parts:
            yield from _part_lines(p, g)
    for call in m.tool_calls:
        args = call.get("arguments")
        yield [("    ", ""), (f"{g['call']} {call.get('name')}", "bold yellow"),
               (f"({_compact(args if args is not None else {})})", ""), (f"  {call.get('id')}", "dim")]


def _header(r: Row, largest: int, g: dict[str, str]) -> Line:
    m = r.message
    pos = "#" + str(r.position) if r.position is not None else "(shown)"
    head: Line = [(f"{pos:>7} ", "bold"), (f"{m.role:<10}", ROLE_STYLE.get(m.role, "bold")),
                  (m.created_at.strftime("%Y-%m-%d %H:%M:%S") + "Z  ", "dim"),
                  (_bar(r.tokens, largest, g), "green"), (f" {r.tokens:>7,} tok", "bold")]
    extra = []
    if m.name:
        extra.append(f"name {m.name}")
    if m.tool_call_id:
        extra.append(f"answers {m.tool_call_id}")
    if r.seq is not None:
        extra.append(f"seq {r.seq}")
    if extra:
        head.append((f"  {g['dot']} " + f" {g['dot']} ".join(extra), "dim"))
    return head


def _compaction_line(r: Row, g: dict[str, str]) -> Line | None:
    c = r.compaction
    if c is None:
        return None
    n = "message" if c.messages == 1 else "messages"
    line: Line = [("    ", ""), (f"{g['summary']} stands for {c.messages:,} {n} ({c.tokens:,} tokens), "
                                 f"positions {c.first}-{c.last} before seq {c.seq}", "bold magenta")]
    rec = c.record
    if rec:
        bits = [f"{k} {rec[k]}" for k in ("based_on", "tokens_before", "tokens_after", "encoding") if k in rec]
        line.append((f"  {g['dot']} compaction: " + ", ".join(bits), "magenta"))
    return line


def _window_line(w: Window, g: dict[str, str]) -> Line:
    also = f" (and the {len(w.specials)} special messages above)" if w.specials else ""
    text = (f" token window of {w.budget:,} ({w.encoding}) starts here{also}: keeps {w.kept:,} of {w.rows:,} "
            f"messages, {w.tokens:,} tokens ")
    return [(g["rule"] * 4 + text + g["rule"] * 4, "bold red")]


def transcript_lines(t: Transcript, window: Window | None, stream: TextIO) -> Iterator[Line]:
    """The blocks of ``t``'s rows, with the window marker where the window starts."""
    g = _glyphs(stream)
    largest = max((r.tokens for r in t.rows), default=0)
    at = "now" if t.seq == t.next_seq else f"at seq {t.seq} of {t.next_seq}"
    yield [(f"context {t.context_id}", "bold"), (f"  {at}: {t.message_count:,} messages, {t.total_tokens:,} tokens", "")]
    if window is not None and not window.window:
        yield [(f"{g['rule'] * 4} the whole transcript fits a token window of {window.budget:,} "
                f"({window.tokens:,} tokens) {g['rule'] * 4}", "bold red")]
    for i, r in enumerate(t.rows):
        if window is not None and window.window and i == window.start:
            yield _window_line(window, g)
        yield []
        yield _header(r, largest, g)
        marker = _compaction_line(r, g)
        if marker is not None:
            yield marker
        yield from _message_lines(r.message, g)
    if window is not None and window.window and window.start >= len(t.rows):
        yield _window_line(window, g)


def _event_summary(e: dict[str, Any]) -> str:
    data = dict(e["data"])
    msg = data.pop("message", None)
    if isinstance(msg, dict):
        m = Message.from_dict(msg)
        text = m.text.replace("\n", " ")
        where = (f"insert at {data.pop('position')}" if data.get("op") == "insert"
                 else f"replace {data.pop('first')}-{data.pop('last')}")
        data.pop("op", None)
        rest = f"  {_compact(data)}" if data else ""
        return f"{where}: {m.role} {text[:100]}{'…' if len(text) > 100 else ''}{rest}"
    if data.get("op") == "remove":
        return f"remove {data['first']}-{data['last']}"
    return _compact(data)


def event_lines(events: Iterable[dict[str, Any]]) -> Iterator[Line]:
    """The log, one line per event."""
    for e in events:
        yield [(f"{e['seq']:>7} ", "bold"), (e["time"] + "  ", "dim"), (f"{e['type']:<17} ", "cyan"),
               (_event_summary(e), "")]


def rich_text(line: Line) -> Any:
    """One line as a ``rich.text.Text`` (styles applied; nothing in the text is read as markup)."""
    from rich.text import Text

    return Text.assemble(*[(text, style) if style else text for text, style in line])


def write(lines: Iterable[Line], stream: TextIO | None = None, color: bool | None = None) -> None:
    """Write ``lines``: with rich's colors when the stream is a terminal (or ``color``), plain
    text otherwise or when rich is not installed."""
    out = sys.stdout if stream is None else stream
    if color is None:
        color = out.isatty()
    console = None
    if color:
        try:
            from rich.console import Console
        except ImportError:
            console = None
        else:
            console = Console(file=out, force_terminal=True, highlight=False, soft_wrap=True)
    if console is None:
        for line in lines:
            out.write("".join(text for text, _ in line) + "\n")
        return
    for line in lines:
        console.print(rich_text(line))
