"""An OpenAI Agents SDK agent whose history is a ctxfold session, stored in SQLite.

    pip install 'ctxfold[openai-agents]'
    python examples/openai_agents_session.py [sessions.db]

No network: the model is the SDK's own scripted test model (``agents.testing.ScriptedModel``),
which answers from a script; swap in a real model and nothing else changes. The run shows
two turns with a tool call, the items the session holds, the same session reopened (as
another worker would), a token window of the history for the next request, and the log
keeping what ``pop_item`` removed.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import ctxfold
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from ctxfold.adapters.openai_agents import ContextSession

set_tracing_disabled(True)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21°C and clear in {city}"


async def main(db: Path) -> None:
    model = ScriptedModel(
        [
            [function_call("get_weather", {"city": "Paris"}, call_id="call_1")],
            [assistant_message("It's 21°C and clear in Paris.", item_id="msg_1")],
            [assistant_message("Then a light jacket is enough.", item_id="msg_2")],
        ]
    )
    agent = Agent(name="weather", instructions="Answer briefly.", model=model, tools=[get_weather])

    session = ContextSession("user-42", str(db))
    result = await Runner.run(agent, "What's the weather in Paris?", session=session)
    print("turn 1:", result.final_output)

    # A token window of the history for the model (the session keeps everything).
    config = RunConfig(session_input_callback=session.token_window(4000))
    result = await Runner.run(agent, "Do I need a coat?", session=session, run_config=config)
    print("turn 2:", result.final_output)
    session.close()

    # Another worker opening the same session sees every item.
    again = ContextSession("user-42", str(db))
    items = await again.get_items()
    print(f"\n{len(items)} items in the session:")
    for item in items:
        what = item.get("content") or item.get("output") or item.get("arguments")
        print("  ", item.get("type", "message"), item.get("role", ""), str(what)[:60])

    ctx = again.context
    print(f"\nthe Context behind it: {ctx.message_count} messages, {ctx.total_token_count('o200k_base')} tokens (o200k_base)")
    print("as a Chat Completions request:", [m["role"] for m in ctxfold.formats.to_openai_chat(ctx)["messages"]])

    last = await again.pop_item()
    print("\npopped:", last["content"][0]["text"] if last else None)
    print(f"the log still has it: {len(ctx.events())} events, transcript {ctx.message_count} messages")
    again.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory() as d:
            asyncio.run(main(Path(d) / "sessions.db"))
