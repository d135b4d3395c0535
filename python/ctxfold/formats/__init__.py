"""Provider formats: a transcript as the request of the API an agent calls, and that
API's messages and answers back as ctxfold messages, so nobody writes the mapping by hand.

The JSON formats (``openai_chat``, ``openai_responses``, ``anthropic``) run in the Rust core;
LangChain and Pydantic AI need their frameworks' classes and live in ``_langchain`` and
``_pydantic_ai``, imported only when one of their functions is called (extras
``ctxfold[langchain]`` and ``ctxfold[pydantic-ai]``). What each mapping does is written down in
``docs/formats.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Union, cast

from .. import _core
from .._core import ContextCore, Message
from ..errors import FormatError
from ._requests import AnthropicRequest, OpenAIChatRequest, OpenAIResponsesRequest

if TYPE_CHECKING:
    from .._context import Context

__all__ = [
    "AnthropicRequest",
    "FormatError",
    "OpenAIChatRequest",
    "OpenAIResponsesRequest",
    "from_anthropic",
    "from_langchain",
    "from_openai_chat",
    "from_openai_responses",
    "from_pydantic_ai",
    "to_anthropic",
    "to_context",
    "to_langchain",
    "to_openai_chat",
    "to_openai_responses",
    "to_pydantic_ai",
    "tool_list",
]

Source = Union["Context", Iterable[Message]]


def _source(src: Source) -> ContextCore | list[Message]:
    """A Context's core (its messages as shown are read in Rust under one lock), or a list."""
    core = getattr(src, "_core", None)
    if isinstance(core, ContextCore):
        return core
    if isinstance(src, Message):
        raise TypeError("expected a Context or an iterable of Message, got one Message")
    out = list(src)
    for i, m in enumerate(out):
        if not isinstance(m, Message):
            raise TypeError(f"src[{i}]: expected a Message, got {type(m).__name__}")
    return out


# ---- OpenAI Chat Completions ---------------------------------------------------------------


def to_openai_chat(src: Source, *, strict: bool = False) -> OpenAIChatRequest:
    """``{"messages": [...], "tools": [...]}`` for ``client.chat.completions.create(**...)``;
    ``tools`` only when the source has tool definitions. ``strict=True``: a ``FormatError``
    listing every repair the request would need, instead of the repairs."""
    return cast(OpenAIChatRequest, _core.format_export("openai_chat", _source(src), strict, False))


def from_openai_chat(messages: Iterable[Any]) -> list[Message]:
    """Chat Completions messages (dicts or SDK objects) as ctxfold messages."""
    return _core.format_import("openai_chat", messages, None)


# ---- OpenAI Responses ----------------------------------------------------------------------


def to_openai_responses(
    src: Source, *, strict: bool = False, instructions: bool = False, pair: bool = True
) -> OpenAIResponsesRequest:
    """``{"input": [...], "tools": [...]}`` for ``client.responses.create(**...)``; with
    ``instructions=True`` the leading system and developer text goes to ``"instructions"``.

    ``pair=False``: no pairing plan (the request rules of docs/formats.md) — each message as the item(s)
    it exports to, in order, a call still waiting for its output and an output without its
    call included, nothing added, dropped or renamed: the items a store of items gives back
    (``to_openai_responses(from_openai_responses(items), pair=False)["input"] == items``)."""
    return cast(OpenAIResponsesRequest, _core.format_export("openai_responses", _source(src), strict, instructions, pair))


def from_openai_responses(items: Iterable[Any]) -> list[Message]:
    """Responses input or output items as ctxfold messages, one message per item."""
    return _core.format_import("openai_responses", items, None)


# ---- Anthropic Messages --------------------------------------------------------------------


def to_anthropic(src: Source, *, strict: bool = False) -> AnthropicRequest:
    """``{"system": ..., "messages": [...], "tools": [...]}`` for ``client.messages.create``;
    ``system`` and ``tools`` only when there are some."""
    return cast(AnthropicRequest, _core.format_export("anthropic", _source(src), strict, False))


def from_anthropic(messages: Iterable[Any], system: Any = None) -> list[Message]:
    """Anthropic messages (and the top-level ``system``, a str or text blocks) as ctxfold
    messages; the system prompt becomes a leading system message."""
    return _core.format_import("anthropic", messages, system)


# ---- a whole request ----------------------------------------------------------------------


def to_context(request: Any, format: str) -> Context:
    """A whole request (its keyword arguments) of ``format`` as a Context: messages, the
    system prompt in its slot, ``tools`` in a ``ToolDefinitionsMessage``, the other keyword
    arguments kept in a ``request_header`` event (``docs/formats.md``)."""
    from ._request_in import to_context as f

    return f(request, format)


# ---- tools ---------------------------------------------------------------------------------


def tool_list(tools: Iterable[Any]) -> str:
    """A ``tools`` list in any of the three APIs' shapes as the text of the ``tool_list``
    hook: a JSON list of ``{name, description, parameters}``."""
    return _core.format_tool_list(tools)


# ---- frameworks (optional extras, imported on first use) -----------------------------------


def to_langchain(src: Source, *, strict: bool = False) -> list[Any]:
    """The transcript as LangChain ``BaseMessage`` objects (needs ``ctxfold[langchain]``)."""
    from ._langchain import to_langchain as f

    return f(src, strict=strict)


def from_langchain(messages: Iterable[Any]) -> list[Message]:
    """LangChain messages as ctxfold messages (needs ``ctxfold[langchain]``)."""
    from ._langchain import from_langchain as f

    return f(messages)


def to_pydantic_ai(src: Source, *, strict: bool = False) -> list[Any]:
    """The transcript as Pydantic AI ``ModelMessage`` objects (needs ``ctxfold[pydantic-ai]``)."""
    from ._pydantic_ai import to_pydantic_ai as f

    return f(src, strict=strict)


def from_pydantic_ai(messages: Iterable[Any]) -> list[Message]:
    """Pydantic AI messages (e.g. ``result.all_messages()``) as ctxfold messages."""
    from ._pydantic_ai import from_pydantic_ai as f

    return f(messages)
