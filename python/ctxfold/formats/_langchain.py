"""LangChain (``langchain-core``) messages ↔ ctxfold messages. Needs ``ctxfold[langchain]``.

``to_langchain(src)`` gives the ``BaseMessage`` list a LangChain chat model is invoked with;
``from_langchain(messages)`` reads one back. ``docs/formats-frameworks.md`` has the table.

What ctxfold has no field for is kept on the imported message as ``metadata["interop"] =
{"format": "langchain", "extra": {...constructor fields...}, ...}``, and content blocks keep
every key in place (a block whose LangChain shape is not the canonical one of its ctxfold part
carries a ``"langchain"`` marker naming that shape), so that ``to_langchain(from_langchain(m))
== m``. Reasoning blocks become ``thinking`` parts marked ``"provider": "langchain"``: they go
back to LangChain only (where the chat model that made them replays them), never to another
format and never as text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        FunctionMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("ctxfold.formats.to_langchain/from_langchain need LangChain: pip install 'ctxfold[langchain]'") from e

from .. import _core
from .._core import INTERRUPTED, Message, Part, interop_metadata, is_json
from ..errors import FormatError
from ._plan import Answer, View, walk

__all__ = ["from_langchain", "to_langchain"]

logger = logging.getLogger("ctxfold")

FORMAT = "langchain"
MARK = "langchain"  # part key naming a block's LangChain shape when it is not the canonical one
# ctxfold's own part types: a LangChain block of one of these types whose shape is not the one
# ctxfold gives that type is wrapped ({"type": "langchain", "block": ...}) so that nothing reads
# it as a ctxfold part of that type.
CTXFOLD_TYPES = frozenset({"text", "thinking", "image", "audio", "video", "file", "pdf", "tool_use", "tool_result", "tool"})
MEDIA = frozenset({"image", "audio", "video", "file"})
# The keys of a v1 standard data block that ctxfold's `source` stands for.
SOURCE_KEYS = ("url", "base64", "file_id")

_CHAT_ROLES = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
}
# Constructor fields ctxfold has no field for, with their defaults (only other values are kept).
_EXTRA_FIELDS: dict[str, tuple[tuple[str, Any], ...]] = {
    "base": (("additional_kwargs", {}), ("response_metadata", {})),
    "ai": (("additional_kwargs", {}), ("response_metadata", {}), ("usage_metadata", None)),
    "tool": (("additional_kwargs", {}), ("response_metadata", {}), ("status", "success")),
}


# ---- import: LangChain → ctxfold ---------------------------------------------------------------


def from_langchain(messages: Iterable[Any]) -> list[Message]:
    """LangChain messages as ctxfold messages, one each. Malformed input → ``FormatError``
    naming the place (``messages[3].tool_calls[0]: ...``), and no partial result."""
    if isinstance(messages, BaseMessage):
        raise FormatError("messages: expected a list of LangChain messages, got one message")
    out = []
    for i, lc in enumerate(messages):
        try:
            out.append(_message_in(lc, f"messages[{i}]"))
        except FormatError:
            raise
        except (TypeError, ValueError) as e:  # the core refused the message: placed as its own errors are
            raise _core.located(e, "messages", i, cls=FormatError) from None
    return out


def _message_in(lc: Any, where: str) -> Message:
    if not isinstance(lc, BaseMessage):
        raise FormatError(f"{where}: expected a LangChain BaseMessage, got {type(lc).__name__}")
    cls = type(lc)
    kept: dict[str, Any] = {}  # what has no ctxfold field, for metadata["interop"]
    kw: dict[str, Any] = {}
    if isinstance(lc, AIMessage):
        role = "assistant"
        kind = "ai"
        kw["tool_calls"] = _calls_in(lc, where)
    elif isinstance(lc, ToolMessage):
        role = "tool"
        kind = "tool"
        if not isinstance(lc.tool_call_id, str):
            raise FormatError(f"{where}.tool_call_id: must be a string")
        kw["tool_call_id"] = lc.tool_call_id
        artifact = lc.artifact
        if artifact is not None:
            if is_json(artifact):
                kept["artifact"] = artifact
            else:  # not sent to the model; ctxfold keeps JSON only
                logger.warning("%s.artifact: not JSON-compatible (%s); dropped", where, type(artifact).__name__)
    elif isinstance(lc, SystemMessage):
        kind = "base"
        role = "developer" if lc.additional_kwargs.get("__openai_role__") == "developer" else "system"
    elif isinstance(lc, HumanMessage):
        kind = "base"
        role = "user"
    elif isinstance(lc, ChatMessage):
        kind = "base"
        mapped = _CHAT_ROLES.get(lc.role)
        if mapped is None:
            raise FormatError(
                f"{where}.role: ChatMessage role {lc.role!r} has no ctxfold role (system, developer, user, assistant, tool)"
            )
        role = mapped
        kept["class"] = "ChatMessage"
        kept["role"] = lc.role
    elif isinstance(lc, FunctionMessage):
        kind = "base"
        role = "tool"
        kept["class"] = "FunctionMessage"
    else:
        raise FormatError(f"{where}: unsupported message class {cls.__name__}")

    extra = {}
    d = lc.__dict__
    for key, default in _EXTRA_FIELDS[kind]:
        v = d[key]
        if v != default:
            extra[key] = v
    if lc.__pydantic_extra__:
        extra.update(lc.__pydantic_extra__)
    if extra:
        kept["extra"] = extra
    if lc.id is None:
        kept["id"] = None
    else:
        kw["id"] = lc.id
        if not isinstance(lc.id, str):
            raise FormatError(f"{where}.id: must be a string or None")

    content = lc.content
    if isinstance(content, list):
        content = [_block_in(b, f"{where}.content[{k}]") for k, b in enumerate(content)]
    elif not isinstance(content, str):
        raise FormatError(f"{where}.content: expected a str or a list, got {type(content).__name__}")
    return Message(role, content, name=lc.name, metadata=interop_metadata(FORMAT, kept), **kw)


def _calls_in(lc: Any, where: str) -> list[dict[str, Any]]:
    """AIMessage ``tool_calls`` then ``invalid_tool_calls`` as ctxfold ``tool_calls`` entries.
    A call's ``arguments`` is the exact string the model sent when ``additional_kwargs`` has it
    (OpenAI's raw ``tool_calls``) and it still parses to ``args``; else the ``args`` dict."""
    raw: dict[str, str] = {}
    akw_calls = lc.additional_kwargs.get("tool_calls") if isinstance(lc.additional_kwargs, dict) else None
    if isinstance(akw_calls, list):
        for c in akw_calls:
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                fn = c.get("function")
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    raw[c["id"]] = fn["arguments"]
    out: list[dict[str, Any]] = []
    for k, tc in enumerate(lc.tool_calls):
        at = f"{where}.tool_calls[{k}]"
        cid, name, args = tc.get("id"), tc.get("name"), tc.get("args")
        if not isinstance(cid, str):
            raise FormatError(f"{at}: a tool call needs a string id (its answer is matched by it)")
        if not isinstance(name, str):
            raise FormatError(f'{at}: missing "name"')
        arguments: Any = args
        s = raw.get(cid)
        if s is not None:
            try:
                if json.loads(s) == args:
                    arguments = s
            except ValueError:
                pass
        out.append({"id": cid, "name": name, "arguments": arguments})
    for k, tc in enumerate(lc.invalid_tool_calls):
        at = f"{where}.invalid_tool_calls[{k}]"
        cid, name = tc.get("id"), tc.get("name")
        if not isinstance(cid, str):
            raise FormatError(f"{at}: a tool call needs a string id (its answer is matched by it)")
        # name may be None for a call the model garbled; ctxfold needs a string.
        out.append(
            {
                "id": cid,
                "name": name if isinstance(name, str) else "",
                "arguments": tc.get("args"),
                "invalid": True,
                "error": tc.get("error"),
            }
            | ({"name_none": True} if name is None else {})
        )
    return out


def _renamed(
    b: Mapping[str, Any], ty: str, renames: Mapping[str, str], mark: str | None, provider: bool
) -> dict[str, Any] | None:
    """``b`` with its type (and renamed keys) changed in place; ``None`` when a key it would
    add is already there (such a block is wrapped instead)."""
    p: dict[str, Any] = {}
    for k, v in b.items():
        if k == "type":
            p["type"] = ty
        else:
            k2 = renames.get(k, k)
            if k2 in p or (k2 != k and k2 in b) or k2 == MARK or (provider and k2 == "provider"):
                return None
            p[k2] = v
    if mark is not None:
        p[MARK] = mark
    if provider:
        p["provider"] = FORMAT
    return p


def _block_in(b: Any, where: str) -> Any:
    if isinstance(b, str):
        return {"type": "text", "text": b, MARK: "str"}
    if not isinstance(b, dict):
        raise FormatError(f"{where}: expected a str or a dict, got {type(b).__name__}")
    t = b.get("type")
    p: dict[str, Any] | None = None
    if t == "text":
        if isinstance(b.get("text"), str) and MARK not in b:
            return b
    elif t == "reasoning":
        if isinstance(b.get("reasoning"), str):  # v1 standard
            p = _renamed(b, "thinking", {"reasoning": "text"}, None, True)
        elif "text" not in b:  # OpenAI Responses' own reasoning item (summary, encrypted_content)
            p = _renamed(b, "thinking", {}, "reasoning", True)
    elif t == "thinking":  # Anthropic's
        if isinstance(b.get("thinking"), str) and "text" not in b:
            p = _renamed(b, "thinking", {"thinking": "text"}, "thinking", True)
    elif t == "redacted_thinking":  # Anthropic's: `redacted: true` as the core's anthropic format has it
        if "redacted" not in b:
            p = _renamed(b, "thinking", {}, "redacted_thinking", True)
            if p is not None:
                p["redacted"] = True
    elif t in MEDIA:
        p = _media_in(b, t)
    elif t == "tool_call":  # v1 standard call block
        p = _renamed(b, "tool_use", {"id": "call_id", "args": "arguments"}, "tool_call", False)
    elif t == "tool_use":  # Anthropic's call block
        if "id" in b and "input" in b:
            p = _renamed(b, "tool_use", {"id": "call_id", "input": "arguments"}, "tool_use", False)
    elif isinstance(t, str) and t not in CTXFOLD_TYPES and t != "langchain":
        return b  # a block type ctxfold does not know: kept as it is
    if p is None:
        return {"type": "langchain", "block": b}
    return p


def _media_in(b: Mapping[str, Any], t: str) -> dict[str, Any] | None:
    """A v1 standard data block (exactly one of url / base64 / file_id) as a ctxfold media part
    with a ``source``, its other keys in place."""
    present = [k for k in SOURCE_KEYS if k in b]
    if len(present) != 1 or "source" in b or MARK in b:
        return None
    key = present[0]
    v = b[key]
    if not isinstance(v, str):
        return None
    if key == "base64":
        mt = b.get("mime_type")
        if not isinstance(mt, str):
            return None
        source: dict[str, Any] = {"type": "base64", "media_type": mt, "data": v}
    elif key == "url":
        source = {"type": "url", "url": v}
    else:
        source = {"type": "file", "file_id": v}
    p: dict[str, Any] = {}
    for k, val in b.items():
        if k == key:
            p["source"] = source
        elif k == "mime_type" and key == "base64":
            continue
        else:
            p[k] = val
    return p


# ---- export: ctxfold → LangChain ---------------------------------------------------------------


# Messages LangChain has a class of its own for: sent as that class wherever they stand.
_OWN_CLASSES = ("ChatMessage", "FunctionMessage")


def to_langchain(src: Any, *, strict: bool = False) -> list[BaseMessage]:
    """The transcript as LangChain messages, paired as the chat models want them: every call's
    answer (a ``ToolMessage``) right after the ``AIMessage`` that made it; a call never answered
    gets the interrupted result, an answer whose call is not there is left out. ``strict=True``:
    a ``FormatError`` listing every such repair instead. The tool definitions message is not a
    message of the request (LangChain binds tools to the model). The pairing is the core's
    (``_plan``); this builds the objects."""
    out: list[BaseMessage] = []
    append = out.append

    def keep(lc: BaseMessage | None) -> None:
        if lc is not None:
            append(lc)

    walk(FORMAT, src, strict, lambda v: keep(_message_out(v)), lambda v: keep(_ai_out(v)), lambda a: append(_answer_out(a)))
    return out


def _extra_of(i: dict[str, Any]) -> dict[str, Any]:
    e = i.get("extra")
    return dict(e) if isinstance(e, dict) else {}


def _id_kw(m: Message, i: dict[str, Any]) -> str | None:
    if "id" in i and i["id"] is None:
        return None
    return m.id


def _message_out(v: View) -> BaseMessage | None:
    """A system, developer, user or unpaired legacy tool message."""
    m, i, role = v.msg, v.interop, v.role
    content = _content_out(v.content, i, role)
    if i is not None:
        kw = _extra_of(i)
        cls_name = i.get("class")
        if cls_name == "ChatMessage":
            return ChatMessage(content=content, role=i.get("role", role), name=m.name, id=_id_kw(m, i), **kw)
        if cls_name == "FunctionMessage":
            return FunctionMessage(content=content, name=m.name or "", id=_id_kw(m, i), **kw)
        cls = HumanMessage if role == "user" else SystemMessage
        return cls(content=content, name=m.name, id=_id_kw(m, i), **kw)
    if role == "user":
        if isinstance(content, list) and not content:
            return None  # only tool results (sent with their calls) or parts LangChain has no block for
        return HumanMessage(content=content, name=m.name, id=m.id)
    if role == "developer":
        return SystemMessage(content=content, name=m.name, id=m.id, additional_kwargs={"__openai_role__": "developer"})
    return SystemMessage(content=content, name=m.name, id=m.id)


def _ai_out(v: View) -> BaseMessage | None:
    m, i = v.msg, v.interop
    if i is not None and i.get("class") in _OWN_CLASSES:
        return _message_out(v)
    content = _content_out(v.content, i, "assistant")
    tool_calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    # The message's calls are the core's (the plan's, in its order), each written once: from
    # its tool_calls entry (which keeps what LangChain gave: an invalid call, its error), or,
    # for a call made by a tool_use part alone, from what the core read of the part.
    entries: list[dict[str, Any]] = []
    used: set[int] = set()
    for call in v.calls:
        if call.entry is not None and call.entry not in used:
            used.add(call.entry)
            entries.append(v.tool_calls[call.entry])
        else:
            entries.append({"id": call.sent, "name": call.name, "arguments": call.arguments})
    for c in entries:
        args = c.get("arguments")
        cid, name = c["id"], c.get("name") or ""
        if i is not None and c.get("invalid") is True:
            invalid.append(
                {
                    "name": None if c.get("name_none") else name,
                    "args": args,
                    "id": cid,
                    "error": c.get("error"),
                    "type": "invalid_tool_call",
                }
            )
            continue
        if args is None:
            args = {}
        elif isinstance(args, str):
            s = args
            try:
                args = json.loads(s)
            except ValueError as e:
                args = None
                err = f"arguments are not valid JSON: {e}"
            else:
                err = "arguments are not a JSON object"
            if not isinstance(args, dict):
                invalid.append({"name": name, "args": s, "id": cid, "error": err, "type": "invalid_tool_call"})
                continue
            raw.append({"id": cid, "type": "function", "function": {"name": name, "arguments": s}})
        tool_calls.append({"name": name, "args": args, "id": cid, "type": "tool_call"})
    if i is not None:
        return AIMessage(
            content=content, tool_calls=tool_calls, invalid_tool_calls=invalid, name=m.name, id=_id_kw(m, i), **_extra_of(i)
        )
    if (content == "" or content == []) and not tool_calls and not invalid:
        return None  # nothing left to send (foreign reasoning only)
    if raw:
        return AIMessage(
            content=content,
            tool_calls=tool_calls,
            invalid_tool_calls=invalid,
            name=m.name,
            id=m.id,
            additional_kwargs={"tool_calls": raw},
        )
    return AIMessage(content=content, tool_calls=tool_calls, invalid_tool_calls=invalid, name=m.name, id=m.id)


def _answer_out(a: Answer) -> ToolMessage:
    v = a.message
    if v is None:
        return ToolMessage(
            content=INTERRUPTED,
            tool_call_id=a.sent,
            name=a.call.name or None,
            status="error",
            id=f"ctxfold-interrupted-{a.sent}",
        )
    m, i = v.msg, v.interop
    if a.part is not None:  # a tool_result part of a user message
        part = a.part
        return ToolMessage(
            content=_result_content_out(part.get("content")),
            tool_call_id=a.sent,
            status="error" if part.get("is_error") is True else "success",
            id=f"{m.id}-{a.sent}",
        )
    content = _content_out(v.content, i, "tool")
    if i is not None:
        kw = _extra_of(i)
        if "artifact" in i:
            kw["artifact"] = i["artifact"]
        return ToolMessage(content=content, tool_call_id=v.tool_call_id, name=m.name, id=_id_kw(m, i), **kw)
    return ToolMessage(content=content, tool_call_id=v.tool_call_id, name=m.name, id=m.id)


def _result_content_out(c: Any) -> Any:
    if isinstance(c, str):
        return c
    if c is None:
        return ""
    if isinstance(c, list) and all(isinstance(x, (dict, Part)) for x in c):
        blocks = [_foreign_block(x if isinstance(x, Part) else Part.from_dict(x), "tool") for x in c]
        return [b for b in blocks if b is not None]
    return json.dumps(c, ensure_ascii=False, separators=(",", ":"))


def _content_out(content: Any, i: dict[str, Any] | None, role: str) -> Any:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out = []
    if i is not None:
        for p in content:
            b = _native_block(p)
            if b is not None:
                out.append(b)
        return out
    for p in content:
        b = _foreign_block(p, role)
        if b is not None:
            out.append(b)
    return out


def _native_block(p: Part) -> Any:
    """A part of a message that came from LangChain, as the block it was."""
    t = p.type
    if t == "text" and p.get(MARK) is None:
        return p.to_dict()
    d = p.to_dict()
    mark = d.pop(MARK, None)
    if t == "text":
        return d["text"] if mark == "str" else d
    if t == "langchain" and "block" in d:
        return d["block"]
    if t == "thinking":
        if d.pop("provider", None) != FORMAT:
            return None  # another maker's reasoning
        if mark is None:
            return _rename(d, "reasoning", {"text": "reasoning"})
        if mark == "thinking":
            return _rename(d, "thinking", {"text": "thinking"})
        if mark == "redacted_thinking":
            d.pop("redacted", None)
        return _rename(d, mark, {})
    if t == "tool_use":
        if mark == "tool_call":
            return _rename(d, "tool_call", {"call_id": "id", "arguments": "args"})
        if mark == "tool_use":
            return _rename(d, "tool_use", {"call_id": "id", "arguments": "input"})
        return None  # a call ctxfold added: it is in tool_calls
    if t in MEDIA and isinstance(d.get("source"), dict):
        return _media_out(d, t)
    if t in CTXFOLD_TYPES:
        return _foreign_block(p, "")
    return d


def _rename(d: dict[str, Any], ty: str, renames: Mapping[str, str]) -> dict[str, Any]:
    return {("type" if k == "type" else renames.get(k, k)): (ty if k == "type" else v) for k, v in d.items()}


def _media_out(d: Mapping[str, Any], t: str) -> dict[str, Any] | None:
    s = d["source"]
    st = s.get("type")
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k == "type":
            out["type"] = t
        elif k == "source":
            if st == "base64" and isinstance(s.get("data"), str) and isinstance(s.get("media_type"), str):
                out["base64"] = s["data"]
                out["mime_type"] = s["media_type"]
            elif st == "url" and isinstance(s.get("url"), str):
                out["url"] = s["url"]
            elif st == "file" and isinstance(s.get("file_id"), str):
                out["file_id"] = s["file_id"]
            else:
                return None
        else:
            out[k] = v
    return out


def _foreign_block(p: Part, role: str) -> Any:
    """A part of a message from elsewhere as a v1 standard block: text and media only; reasoning
    (another maker's), tool calls (sent as ``tool_calls``), tool results (sent as
    ``ToolMessage``s) and parts LangChain has no block for are left out."""
    t = p.type
    if t == "thinking":  # LangChain's own reasoning, in a message rebuilt elsewhere; any other: dropped
        return _native_block(p) if p.get("provider") == FORMAT else None
    if t == "text":
        text = p.get("text")
        if not isinstance(text, str):
            return None
        b: dict[str, Any] = {"type": "text", "text": text}
    elif t in MEDIA or t == "pdf":
        source = p.get("source")
        if isinstance(source, str):
            source = {"type": "url", "url": source}
            if source["url"].startswith("data:") and ";base64," in source["url"]:
                mt, data = source["url"][5:].split(";base64,", 1)
                source = {"type": "base64", "media_type": mt, "data": data}
        if not isinstance(source, dict):
            return None
        b_ = _media_out({"type": "file" if t == "pdf" else t, "source": source}, "file" if t == "pdf" else t)
        if b_ is None:
            return None
        b = b_
    else:
        return None
    cc = p.get("cache_control")
    if cc is not None:
        b["cache_control"] = cc
    return b
