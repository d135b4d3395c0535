"""The README's quickstart runs as written: the real OpenAI client (its transport replaced by
``httpx.MockTransport`` playing the API), a tool call and its answer, a store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ctxfold
import httpx
import openai
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def quickstart() -> str:
    text = README.read_text()
    section = text[text.index("## Quickstart"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def completion(message: dict, n: int) -> dict:
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"refusal": None, **message}, "logprobs": None,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 50 + n, "completion_tokens": 10, "total_tokens": 60 + n}}


class FakeOpenAI:
    """Chat Completions as the API answers: first a tool call, then the answer using its result."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        body = json.loads(request.content)
        self.requests.append(body)
        if len(self.requests) == 1:
            msg = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
        else:
            result = body["messages"][-1]
            assert result == {"role": "tool", "tool_call_id": "call_1", "content": "18°C and sunny in Paris"}
            msg = {"role": "assistant", "content": "It is 18°C and sunny in Paris."}
        return httpx.Response(200, json=completion(msg, len(self.requests)))


def test_the_readme_quickstart_runs_as_written(tmp_path, monkeypatch):
    api = FakeOpenAI()
    real = openai.OpenAI

    def client(**kw):  # the real client, its HTTP served by the fake API
        return real(api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(api)), **kw)

    monkeypatch.setattr(openai, "OpenAI", client)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(quickstart(), str(README), "exec"), scope)

    first, second = api.requests
    assert first["model"] == "gpt-4o-mini"
    assert first["messages"][0] == {"role": "system", "content": "You answer questions about the weather, briefly."}
    assert first["messages"][1] == {"role": "user", "content": "What's the weather in Paris?"}
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'

    ctx = scope["ctx"]
    assert ctx.messages[-1].text == "It is 18°C and sunny in Paris."
    assert ctx.pending_tool_calls() == [] and ctx.needs_response is False
    assert ctx.usage.requests == 2 and ctx.usage.total_tokens == 61 + 62
    with ctxfold.Store(tmp_path / "sessions.db") as store:
        assert store.load(ctx.id).messages == ctx.messages


def test_the_quickstart_is_the_first_example():
    text = README.read_text()
    assert text.index("## Quickstart") < text.index("```python")


@pytest.mark.parametrize("needle", ["ToolDefinitionsMessage", "formats.tool_list", "rolling_token_window",
                                    "formats.to_openai_chat", "add_response", "pending_tool_calls", "store.save"])
def test_the_quickstart_shows(needle):
    assert needle in quickstart()
