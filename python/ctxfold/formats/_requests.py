"""The shapes the exporters return, as ``TypedDict``s a type checker follows: the keys of each
request, which of them are always there, and their types.

The items inside (messages, input items, tools) are the provider's own JSON and typed ``Any``,
so ``client.chat.completions.create(model=m, **to_openai_chat(ctx))`` type-checks against each
SDK's own parameter types without ctxfold restating them."""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["AnthropicRequest", "OpenAIChatRequest", "OpenAIResponsesRequest"]


class _OpenAIChatMessages(TypedDict):
    messages: list[Any]
    """The Chat Completions messages."""


class OpenAIChatRequest(_OpenAIChatMessages, total=False):
    """What ``to_openai_chat`` returns: ``messages`` always, ``tools`` when the source has tool
    definitions."""

    tools: list[Any]
    """The tool definitions, in Chat Completions' shape."""


class _OpenAIResponsesInput(TypedDict):
    input: list[Any]
    """The Responses input items."""


class OpenAIResponsesRequest(_OpenAIResponsesInput, total=False):
    """What ``to_openai_responses`` returns: ``input`` always, ``tools`` when the source has tool
    definitions, ``instructions`` when asked for and there is leading system text."""

    tools: list[Any]
    """The tool definitions, in the Responses API's shape."""
    instructions: str
    """The leading system and developer text, with ``instructions=True``."""


class _AnthropicMessages(TypedDict):
    messages: list[Any]
    """The Messages API messages."""


class AnthropicRequest(_AnthropicMessages, total=False):
    """What ``to_anthropic`` returns: ``messages`` always, ``system`` (a str, or text blocks when
    they carry more than text, such as ``cache_control``) and ``tools`` when there are some."""

    system: str | list[Any]
    """The leading system and developer text: a str, or text blocks."""
    tools: list[Any]
    """The tool definitions, in the Messages API's shape."""
