"""Pydantic AI messages ↔ ctxfold messages. Needs ``ctxfold[pydantic-ai]``.

``to_pydantic_ai(src)`` gives the ``list[ModelMessage]`` that ``agent.run(...,
message_history=...)`` takes; ``from_pydantic_ai(result.all_messages())`` reads a run back.
``docs/formats-frameworks.md`` has the table.

One ctxfold message per request part (system prompt, user prompt, tool return, retry prompt)
and one per ``ModelResponse``, whose parts (text, thinking, tool calls) become its content parts
in order. What ctxfold has no field for is kept in ``metadata["interop"] = {"format":
"pydantic_ai", ...}`` (the request's and response's fields, a part's other fields), so that
``to_pydantic_ai(from_pydantic_ai(m)) == m``. Those fields are kept as Pydantic AI's own
type adapters dump them (JSON, defaults left out) and the objects are built back by the same
adapters, so every field comes back with its declared type (datetimes, usage, tuples).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import warnings
from collections.abc import Iterable
from functools import cache
from typing import Any

try:
    import pydantic_ai.messages as pm
    from pydantic import TypeAdapter
    from pydantic_core import ErrorDetails, to_jsonable_python
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "ctxfold.formats.to_pydantic_ai/from_pydantic_ai need Pydantic AI: pip install 'ctxfold[pydantic-ai]'"
    ) from e

from .. import _core
from .._core import INTERRUPTED, Message, Part, interop_metadata, is_json
from ..errors import FormatError
from ._plan import Answer, View, walk

__all__ = ["from_pydantic_ai", "to_pydantic_ai"]

FORMAT = "pydantic_ai"
MARK = "pydantic_ai"  # part key: the other fields of the Pydantic AI object the part stands for

# Feedback for the model after a failed output (newer Pydantic AI); read by the model as a user prompt.
_FEEDBACK: Any = getattr(pm, "RetryFeedbackPart", None)
# The fields each part kind maps onto ctxfold fields (the rest go to interop / the part).
_MAPPED = {
    pm.SystemPromptPart: ("content", "timestamp", "part_kind"),
    pm.UserPromptPart: ("content", "timestamp", "part_kind"),
    pm.ToolReturnPart: ("tool_name", "content", "tool_call_id", "timestamp", "part_kind"),
    pm.RetryPromptPart: ("content", "tool_name", "tool_call_id", "timestamp", "part_kind"),
    pm.TextPart: ("content", "part_kind"),
    **({_FEEDBACK: ("content", "timestamp", "part_kind")} if _FEEDBACK is not None else {}),
    pm.ThinkingPart: ("content", "part_kind"),
    pm.ToolCallPart: ("tool_name", "args", "tool_call_id", "part_kind"),
    pm.ModelRequest: ("parts", "kind"),
    pm.ModelResponse: ("parts", "timestamp", "kind"),
}
_URLS = {"image": pm.ImageUrl, "audio": pm.AudioUrl, "video": pm.VideoUrl, "file": pm.DocumentUrl, "pdf": pm.DocumentUrl}
_URL_TYPE: dict[Any, str] = {pm.ImageUrl: "image", pm.AudioUrl: "audio", pm.VideoUrl: "video", pm.DocumentUrl: "file"}
_REQUEST_PART = TypeAdapter(pm.ModelRequestPart)
_RESPONSE_PART = TypeAdapter(pm.ModelResponsePart)
_USER_CONTENT = TypeAdapter(pm.UserContent)
_RETRY_CONTENT: TypeAdapter[Any] = TypeAdapter(list[ErrorDetails] | str)


# ---- kept fields, through Pydantic AI's own type adapters ---------------------------------------

@cache
def _adapter(cls: type) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


@cache
def _field_names(cls: type) -> frozenset[str]:
    """The fields its constructor takes."""
    return frozenset(f.name for f in dataclasses.fields(cls) if f.init)


# Pydantic AI's ``provider_name`` of a model whose signed thinking ctxfold sends as that
# provider's format (its ``provider`` mark): the maker, kept across frameworks.
_MAKERS = {"anthropic": "anthropic"}


def _maker(rest: dict[str, Any]) -> str | None:
    """The ctxfold format a Pydantic AI thinking part's fields (``_rest``) say made it: a
    known ``provider_name`` with a string ``signature`` and nothing else."""
    if set(rest) == {"signature", "provider_name"} and isinstance(rest["signature"], str):
        return _MAKERS.get(rest["provider_name"])
    return None


def _rest(obj: Any, mapped: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``obj`` not in ``mapped`` whose value is not the default, as JSON (as its
    type adapter dumps them; what the adapter computes from the fields, such as a media
    ``identifier``, is no field and is left out)."""
    cls: type = type(obj)
    dump = _adapter(cls).dump_python(obj, mode="json", exclude_defaults=True, exclude=set(mapped))
    names = _field_names(cls)
    return {k: v for k, v in dump.items() if k in names}


def _restore(cls: Any, values: dict[str, Any], stored: dict[str, Any] | None) -> Any:
    """An instance of ``cls`` made by its constructor with ``values`` (its mapped fields),
    ``stored`` (the rest, as :func:`_rest` gave them) and defaults for everything else. The
    stored JSON is read back into each field's declared type (datetimes, usage, tuples) by the
    class's type adapter; keys that are no field of ``cls`` (the media class name, the marks
    older versions wrote) are passed over."""
    names = _field_names(cls)
    rest = {k: v for k, v in (stored or {}).items() if k in names and k not in values}
    if rest:
        # parts are built already (and the adapter would read legacy ones as their successors)
        probe = _adapter(cls).validate_python({**values, **({"parts": []} if "parts" in values else {}), **rest})
        rest = {k: getattr(probe, k) for k in rest}
    return cls(**values, **rest)


# ---- import: Pydantic AI → ctxfold -------------------------------------------------------------


def from_pydantic_ai(messages: Iterable[Any]) -> list[Message]:
    """Pydantic AI messages (``ModelRequest`` / ``ModelResponse``, e.g. ``result.all_messages()``)
    as ctxfold messages. Anything else → ``FormatError`` naming the place; no partial result."""
    out: list[Message] = []
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        try:
            if isinstance(msg, pm.ModelRequest):
                out.extend(_request_in(msg, where))
            elif isinstance(msg, pm.ModelResponse):
                out.append(_response_in(msg, where))
            else:
                raise FormatError(f"{where}: expected a ModelRequest or a ModelResponse, got {type(msg).__name__}")
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            if isinstance(e, FormatError):
                raise
            raise _core.located(e, "messages", i, cls=FormatError) from None
    return out


def _request_in(req: Any, where: str) -> list[Message]:
    out = []
    # What has no ctxfold field, for metadata["interop"]: the request's own fields go with its
    # first part.
    head: dict[str, Any] = {"request": _rest(req, _MAPPED[pm.ModelRequest])}
    parts = req.parts
    if not parts:  # a request with no parts: kept as an empty user message
        head["empty"] = True
        return [Message("user", [], metadata=interop_metadata(FORMAT, head))]
    for k, part in enumerate(parts):
        out.append(_request_part_in(part, head if k == 0 else {}, f"{where}.parts[{k}]"))
    return out


def _request_part_in(part: Any, kept: dict[str, Any], where: str) -> Message:
    cls = type(part)
    mapped = _MAPPED.get(cls)
    if mapped is None:  # another request part kind: kept whole as an unknown part
        kept["kind"] = "other"
        dump = _REQUEST_PART.dump_python(part, mode="json")
        return Message("user", [{"type": "pydantic_ai", "part": dump}], metadata=interop_metadata(FORMAT, kept))
    rest = _rest(part, mapped)
    if rest:
        kept["part"] = rest
    ts = part.timestamp

    def made(role: str, content: Any, **kw: Any) -> Message:
        return Message(role, content, created_at=ts, metadata=interop_metadata(FORMAT, kept), **kw)

    if cls is pm.SystemPromptPart:
        return made("system", _text(part.content, f"{where}.content"))
    if cls is pm.UserPromptPart:
        return made("user", _user_content_in(part.content, f"{where}.content"))
    content = part.content
    if cls is _FEEDBACK:
        kept["kind"] = "feedback"
        if not isinstance(content, str):
            content = _json_text(content, f"{where}.content")
            kept["json"] = True
        return made("user", content)
    if cls is pm.RetryPromptPart:
        kept["kind"] = "retry"
    if isinstance(content, str):
        pass
    elif cls is pm.ToolReturnPart and _multimodal(content):  # images in a tool result: media parts
        kept["media"] = "list" if isinstance(content, (list, tuple)) else "one"
        content = _user_content_in(content if isinstance(content, (list, tuple)) else [content], f"{where}.content")
    else:
        content = _json_text(content, f"{where}.content")
        kept["json"] = True
    if cls is pm.RetryPromptPart and part.tool_name is None:  # a retry of the output: the model reads it as a user prompt
        kept["call_id"] = part.tool_call_id
        return made("user", content)
    if not isinstance(part.tool_call_id, str):
        raise FormatError(f"{where}.tool_call_id: must be a string")
    return made("tool", content, tool_call_id=part.tool_call_id, name=part.tool_name)


def _multimodal(content: Any) -> bool:
    media = (pm.BinaryContent, pm.ImageUrl, pm.AudioUrl, pm.VideoUrl, pm.DocumentUrl)
    if isinstance(content, media):
        return True
    return (
        isinstance(content, (list, tuple))
        and any(isinstance(x, media) for x in content)
        and all(isinstance(x, (str, *media)) for x in content)
    )


def _json_text(v: Any, where: str) -> str:
    try:
        return json.dumps(to_jsonable_python(v), ensure_ascii=False, separators=(",", ":"))
    except Exception as e:  # noqa: BLE001 - pydantic raises several kinds for what it cannot serialize
        raise FormatError(f"{where}: not JSON-serializable ({e})") from None


def _text(v: Any, where: str) -> str:
    if not isinstance(v, str):
        raise FormatError(f"{where}: expected a str, got {type(v).__name__}")
    return v


def _user_content_in(content: Any, where: str) -> Any:
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        raise FormatError(f"{where}: expected a str or a list, got {type(content).__name__}")
    parts: list[dict[str, Any]] = []
    for k, item in enumerate(content):
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        elif isinstance(item, pm.BinaryContent):
            mt = item.media_type
            p: dict[str, Any] = {
                "type": _media_type(mt),
                "source": {"type": "base64", "media_type": mt, "data": base64.b64encode(item.data).decode("ascii")},
            }
            rest = _rest(item, ("data", "media_type"))
            rest["class"] = type(item).__name__
            p[MARK] = rest
            parts.append(p)
        elif type(item) in _URL_TYPE:
            p = {"type": _URL_TYPE[type(item)], "source": {"type": "url", "url": item.url}}
            rest = _rest(item, ("url",))
            rest["class"] = type(item).__name__
            p[MARK] = rest
            parts.append(p)
        else:
            try:
                dump = _USER_CONTENT.dump_python(item, mode="json")
            except Exception:  # noqa: BLE001
                raise FormatError(f"{where}[{k}]: unsupported user content {type(item).__name__}") from None
            parts.append({"type": "pydantic_ai", "content": dump})
    return parts


def _media_type(mt: str) -> str:
    top = mt.split("/", 1)[0]
    if top in ("image", "audio", "video"):
        return top
    return "file"


def _response_in(resp: Any, where: str) -> Message:
    kept = {"response": _rest(resp, _MAPPED[pm.ModelResponse])}  # for metadata["interop"]
    parts: list[dict[str, Any]] = []
    for k, part in enumerate(resp.parts):
        cls = type(part)
        if cls is pm.TextPart:
            p: dict[str, Any] = {"type": "text", "text": _text(part.content, f"{where}.parts[{k}].content")}
        elif cls is pm.ThinkingPart:
            p = {"type": "thinking", "text": _text(part.content, f"{where}.parts[{k}].content")}
        elif cls is pm.ToolCallPart:
            if not isinstance(part.tool_call_id, str) or not isinstance(part.tool_name, str):
                raise FormatError(f"{where}.parts[{k}]: a tool call needs a string tool_name and tool_call_id")
            args = part.args
            if not (args is None or isinstance(args, str) or (isinstance(args, dict) and is_json(args))):
                raise FormatError(f"{where}.parts[{k}].args: expected a str, a JSON dict or None")
            p = {"type": "tool_use", "call_id": part.tool_call_id, "name": part.tool_name, "arguments": args}
        else:
            parts.append({"type": "pydantic_ai", "part": _RESPONSE_PART.dump_python(part, mode="json")})
            continue
        rest = _rest(part, _MAPPED[cls])
        if cls is pm.ThinkingPart and _maker(rest) is not None:
            # Anthropic's signed thinking, carried by Pydantic AI: marked as Anthropic's, in its
            # shape, so that it goes back to Anthropic (directly or through Pydantic AI) as is.
            p["signature"] = rest["signature"]
            p["provider"] = _maker(rest)
            parts.append(p)
            continue
        p.update(rest)  # id, signature, provider_name, provider_details, ... in place
        if cls is pm.ThinkingPart:
            p["provider"] = FORMAT
        parts.append(p)
    return Message("assistant", parts, created_at=resp.timestamp, metadata=interop_metadata(FORMAT, kept))


# ---- export: ctxfold → Pydantic AI -------------------------------------------------------------


def _text_of(v: View) -> str:
    c = v.content
    if isinstance(c, str):
        return c
    if not c:
        return ""
    return "".join(t for p in c if p.type == "text" and isinstance(t := p.get("text"), str))


class _Builder:
    """Groups request parts into ``ModelRequest``s: a part joins the open request unless it
    started a request of its own in the source."""

    def __init__(self) -> None:
        self.out: list[Any] = []
        self.parts: list[Any] | None = None
        self.head: dict[str, Any] | None = None

    def part(self, part: Any, head: dict[str, Any] | None) -> None:
        if head is not None or self.parts is None:
            self.close()
            self.parts = []
            self.head = head
        assert self.parts is not None
        self.parts.append(part)

    def close(self) -> None:
        if self.parts is not None:
            if self.head is None:
                self.out.append(pm.ModelRequest(parts=self.parts))
            else:
                self.out.append(_restore(pm.ModelRequest, {"parts": self.parts, "kind": "request"}, self.head))
            self.parts = None
            self.head = None

    def response(self, resp: Any) -> None:
        self.close()
        self.out.append(resp)


def to_pydantic_ai(src: Any, *, strict: bool = False) -> list[Any]:
    """The transcript as Pydantic AI messages for ``agent.run(..., message_history=...)``: every
    call answered in the request right after the response that made it (a call never answered
    gets the interrupted result, flagged as Pydantic AI flags the returns it synthesizes; an
    answer whose call is not there is left out). ``strict=True``: ``FormatError`` listing every
    such repair instead. The pairing is the core's (``_plan``); this builds the objects."""
    b = _Builder()

    def response(m: View) -> None:
        resp = _response_out(m)
        if resp is not None:
            b.response(resp)

    walk(FORMAT, src, strict, lambda m: _request_message_out(m, b), response, lambda a: _answer_out(a, b))
    b.close()
    return b.out


def _head(i: dict[str, Any] | None, m: View) -> dict[str, Any] | None:
    if i is None:
        return None
    r = i.get("request")
    return r if isinstance(r, dict) else None


def _request_message_out(m: View, b: _Builder) -> None:
    i = m.interop
    role = m.role
    if i is not None:
        head = _head(i, m)
        if i.get("empty"):
            b.close()
            b.out.append(_restore(pm.ModelRequest, {"parts": [], "kind": "request"}, head))
            return
        if i.get("kind") == "other" and isinstance(m.content, list) and m.content:
            b.part(_REQUEST_PART.validate_python(m.content[0]["part"]), head)
            return
        if i.get("kind") == "retry" and role == "user":
            b.part(_retry_out(m, i, None, i.get("call_id")), head)
            return
        if i.get("kind") == "feedback" and _FEEDBACK is not None:
            b.part(
                _restore(
                    _FEEDBACK,
                    {"content": _json_content(m, i), "timestamp": m.msg.created_at, "part_kind": "retry-feedback"},
                    i.get("part"),
                ),
                head,
            )
            return
        rest = i.get("part")
        if role == "system" or role == "developer":
            b.part(
                _restore(
                    pm.SystemPromptPart,
                    {
                        "content": _text_of(m) if m.content is not None else "",
                        "timestamp": m.msg.created_at,
                        "part_kind": "system-prompt",
                    },
                    rest,
                ),
                head,
            )
            return
        b.part(
            _restore(
                pm.UserPromptPart,
                {"content": _user_content_out(m), "timestamp": m.msg.created_at, "part_kind": "user-prompt"},
                rest,
            ),
            head,
        )
        return
    if role == "system" or role == "developer":
        b.part(pm.SystemPromptPart(content=_text_of(m), timestamp=m.msg.created_at), None)
        return
    content = _user_content_out(m)
    if isinstance(content, list) and not content:
        return  # only tool results (sent with their calls) or parts Pydantic AI has no content for
    b.part(pm.UserPromptPart(content=content, timestamp=m.msg.created_at), None)


def _user_content_out(m: View) -> Any:
    content = m.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for p in content:
        t = p.type
        if t == "text":
            text = p.get("text")
            if isinstance(text, str):
                out.append(text)
        elif t in _URLS:
            item = _media_out(p, t)
            if item is not None:
                out.append(item)
        elif t == "pydantic_ai" and isinstance(p.get("content"), dict):
            out.append(_USER_CONTENT.validate_python(p["content"]))
    return out


def _media_out(p: Part, t: str) -> Any:
    source = p.get("source")
    if isinstance(source, str):
        source = {"type": "url", "url": source}
    if not isinstance(source, dict):
        return None
    rest = p.get(MARK)
    cls_name = rest.get("class") if isinstance(rest, dict) else None
    st = source.get("type")
    if st == "base64" and isinstance(source.get("data"), str) and isinstance(source.get("media_type"), str):
        try:
            data = base64.b64decode(source["data"], validate=True)
        except (binascii.Error, ValueError):
            return None
        if cls_name is not None:
            return _restore(getattr(pm, cls_name), {"data": data, "media_type": source["media_type"]}, rest)
        return pm.BinaryContent(data=data, media_type=source["media_type"])
    if st == "url" and isinstance(source.get("url"), str):
        if source["url"].startswith("data:"):
            return pm.BinaryContent.from_data_uri(source["url"]) if hasattr(pm.BinaryContent, "from_data_uri") else None
        if cls_name is not None:
            return _restore(getattr(pm, cls_name), {"url": source["url"]}, rest)
        return _URLS[t](url=source["url"])
    return None


def _response_out(m: View) -> Any:
    i = m.interop
    content = m.content
    parts: list[Any] = []
    items = content if isinstance(content, list) else ([] if not content else [Part.text(content)])
    own = i is not None
    keys_of = _part_rest
    for p in items:
        t = p.type
        if t == "text":
            text = p.get("text")
            if not isinstance(text, str):
                continue
            if own:
                parts.append(_restore(pm.TextPart, {"content": text, "part_kind": "text"}, keys_of(p, ("type", "text"))))
            elif text:
                parts.append(pm.TextPart(content=text))
        elif t == "thinking" and own and p.get("provider") in _MAKERS.values() and isinstance(p.get("signature"), str):
            # A maker's signed reasoning that came through Pydantic AI: back the same way.
            text = p.get("text")
            name = next(k for k, v in _MAKERS.items() if v == p.get("provider"))
            parts.append(pm.ThinkingPart(content=text if isinstance(text, str) else "", signature=p.get("signature"),
                                         provider_name=name))
        elif t == "thinking":
            if p.get("provider") != FORMAT:
                continue  # another maker's reasoning (or nobody's): never sent, never as text
            text = p.get("text")
            parts.append(
                _restore(
                    pm.ThinkingPart,
                    {"content": text if isinstance(text, str) else "", "part_kind": "thinking"},
                    keys_of(p, ("type", "text", "provider")),
                )
            )
        elif t == "tool_use":
            cid = p.get("call_id")
            if not isinstance(cid, str):
                continue
            values = {"tool_name": p.get("name") or "", "args": p.get("arguments"), "tool_call_id": cid, "part_kind": "tool-call"}
            if own:
                parts.append(_restore(pm.ToolCallPart, values, keys_of(p, ("type", "call_id", "name", "arguments"))))
            else:
                parts.append(pm.ToolCallPart(tool_name=values["tool_name"], args=values["args"], tool_call_id=cid))
        elif t == "pydantic_ai" and isinstance(p.get("part"), dict):
            parts.append(_RESPONSE_PART.validate_python(p["part"]))
    for c in m.calls:  # the calls the core found at tool_calls entries only (the parts are above)
        if c.part is None:
            parts.append(pm.ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.sent))
    if own:
        assert i is not None
        stored = i.get("response")
        return _restore(
            pm.ModelResponse,
            {"parts": parts, "timestamp": m.msg.created_at, "kind": "response"},
            stored if isinstance(stored, dict) else None,
        )
    if not parts:
        return None  # nothing left to send (another maker's reasoning only)
    return pm.ModelResponse(parts=parts, timestamp=m.msg.created_at)


def _part_rest(p: Part, mapped: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in p.to_dict().items() if k not in mapped}


def _answer_out(a: Answer, b: _Builder) -> None:
    m = a.message
    if m is None:
        b.part(
            pm.ToolReturnPart(
                tool_name=a.call.name,
                content=INTERRUPTED,
                tool_call_id=a.sent,
                outcome="interrupted",
                metadata={pm.SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True},
            ),
            None,
        )
        return
    if a.part is not None:  # a tool_result part of a user message
        c = a.part.get("content")
        content: Any = c if isinstance(c, str) else json.dumps(c, ensure_ascii=False, separators=(",", ":"))
        b.part(
            pm.ToolReturnPart(
                tool_name=a.call.name,
                content=content,
                tool_call_id=a.sent,
                timestamp=m.msg.created_at,
                outcome="failed" if a.part.get("is_error") is True else "success",
            ),
            None,
        )
        return
    i = m.interop
    if i is not None:
        content = m.content if isinstance(m.content, str) else _text_of(m)
        media = i.get("media")
        if media is not None:
            items = _user_content_out(m)
            content = items[0] if media == "one" and isinstance(items, list) and len(items) == 1 else items
        elif i.get("json"):
            try:
                content = json.loads(content)
            except ValueError:
                pass
        if i.get("kind") == "retry":
            b.part(_retry_out(m, i, m.msg.name, m.tool_call_id, content), _head(i, m))
            return
        b.part(
            _restore(
                pm.ToolReturnPart,
                {
                    "tool_name": m.msg.name or a.call.name,
                    "content": content,
                    "tool_call_id": m.tool_call_id,
                    "timestamp": m.msg.created_at,
                    "part_kind": "tool-return",
                },
                i.get("part"),
            ),
            _head(i, m),
        )
        return
    text = m.content if isinstance(m.content, str) else _tool_content_out(m)
    b.part(
        pm.ToolReturnPart(tool_name=m.msg.name or a.call.name, content=text, tool_call_id=a.sent, timestamp=m.msg.created_at),
        None,
    )


def _tool_content_out(m: View) -> Any:
    """A foreign tool message's parts: its text, with its media as Pydantic AI content."""
    items = _user_content_out(m)
    if isinstance(items, list) and all(isinstance(x, str) for x in items):
        return "".join(items)
    return items


def _json_content(m: View, i: dict[str, Any]) -> Any:
    content = m.content if isinstance(m.content, str) else _text_of(m)
    if i.get("json"):
        try:
            return json.loads(content)
        except ValueError:
            pass
    return content


def _retry_out(m: View, i: dict[str, Any], tool_name: str | None, call_id: str | None, content: Any = None) -> Any:
    if content is None:
        content = _json_content(m, i)
    if i.get("json"):  # ErrorDetails: their `loc` is a tuple, which JSON holds as a list
        content = _RETRY_CONTENT.validate_python(content)
    values: dict[str, Any] = {"content": content, "tool_name": tool_name, "timestamp": m.msg.created_at}
    if call_id is not None:
        values["tool_call_id"] = call_id
    # Every field of the legacy part is one ctxfold maps, and its adapter now reads it as the
    # parts that replace it: so it is built by its constructor, as the history held it (its
    # deprecation was shown when it was first made).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pm.RetryPromptPart(**values)
