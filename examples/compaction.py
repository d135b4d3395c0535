"""Compaction through a real OpenAI client: an agent's history grows past its budget, a model
summarizes the oldest turns, and the summary shadows them while the log keeps them.

    pip install ctxfold openai
    python examples/compaction.py

No network: the ``openai.OpenAI`` client is the real one, on an ``httpx.MockTransport`` that
answers the summarization request the way the API does. Give it a real transport (drop
``http_client``, set ``OPENAI_API_KEY``) and nothing else changes.
"""

from __future__ import annotations

import json

import httpx
from ctxfold import CompactionPlan, Context, Message, SystemPromptMessage
from openai import OpenAI


def fake_api(request: httpx.Request) -> httpx.Response:
    """Chat Completions, answered with a summary of what the request holds."""
    body = json.loads(request.content)
    asked = body["messages"][-1]["content"]
    text = f"The user asked about {len(body['messages']) - 1} earlier messages' worth of weather; Paris was 21°C."
    assert asked.startswith("Summarize")
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
    )


client = OpenAI(api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(fake_api)))


def summarize(plan: CompactionPlan) -> str:
    """Ask a model for the summary: ``plan.to`` renders the range as the request."""
    reply = client.chat.completions.create(model="gpt-4o-mini", **plan.to("openai_chat"))
    return reply.choices[0].message.content or ""


def main() -> None:
    ctx = Context.create(system_prompt_message=SystemPromptMessage.create("You answer weather questions."))
    for day in range(12):
        ctx.add_message(Message.user(f"What was the weather on day {day}? " + "Tell me everything. " * 10))
        ctx.add_message(
            Message.assistant(None, tool_calls=[{"id": f"call_{day}", "name": "weather", "arguments": json.dumps({"day": day})}])
        )
        ctx.add_message(Message.tool(f"call_{day}", {"city": "Paris", "celsius": 21, "sky": "clear"}, name="weather"))
        ctx.add_message(Message.assistant(f"Day {day}: 21°C and clear in Paris."))
    print(f"before: {len(ctx)} messages, {ctx.total_token_count()} tokens")

    summary = ctx.compact(summarize, max_tokens=800)
    assert summary is not None
    print(f"after: {len(ctx)} messages, {ctx.total_token_count()} tokens")
    print(f"summary: {summary.text}")

    record = ctx.compactions()[0]
    originals = ctx.messages_at(record.seq)[record.first : record.last + 1]
    print(f"compaction at seq {record.seq}: {len(originals)} messages kept in the log, "
          f"{record.record['tokens_before']} tokens -> {record.record['tokens_after']}")
    kept = ctx.messages[2:]
    print(f"kept after the summary: {len(kept)} messages, from an {kept[0].role} message "
          f"({'calling ' + kept[0].tool_calls[0]['name'] if kept[0].tool_calls else kept[0].text[:30]})")

    # The cheaper tier: old tool results become placeholders that still answer their calls.
    ctx.clear_tool_results(keep_last=1)
    print(f"tool results now: {[m.text for m in ctx.messages if m.role == 'tool']}")


if __name__ == "__main__":
    main()
