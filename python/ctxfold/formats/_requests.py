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


class OpenAIChatRequest(_OpenAIChatMessages, total=False):
    """What ``to_openai_chat`` returns: ``messages`` always, ``tools`` when the source has tool
    definitions."""

    tools: list[Any]


class _OpenAIResponsesInput(TypedDict):
    input: list[Any]


class OpenAIResponsesRequest(_OpenAIResponsesInput, total=False):
    """What ``to_openai_responses`` returns: ``input`` always, ``tools`` when the source has tool
    definitions, ``instructions`` when asked for and there is leading system text."""

    tools: list[Any]
    instructions: str


class _AnthropicMessages(TypedDict):
    messages: list[Any]


class AnthropicRequest(_AnthropicMessages, total=False):
    """What ``to_anthropic`` returns: ``messages`` always, ``system`` (a str, or text blocks when
    they carry more than text, such as ``cache_control``) and ``tools`` when there are some."""

    system: str | list[Any]
    tools: list[Any]
