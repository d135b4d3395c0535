"""A Google ADK agent whose sessions are ctxfold Contexts, stored in SQLite.

    pip install 'ctxfold[google-adk]'
    python examples/google_adk_runner.py [sessions.db]

No network: the model is a scripted ``BaseLlm`` that calls a tool, then answers from its result;
swap in ``model="gemini-2.5-flash"`` and nothing else changes. The run shows two turns with a
tool call, the session's state by scope, a recent read (``GetSessionConfig``) that reads only the
end of the log, the Context behind the session, a compaction that keeps every event, and a stale
writer refused.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from ctxfold.adapters.google_adk import ContextSessionService
from google.adk.agents import LlmAgent
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools.tool_context import ToolContext
from google.genai import types


class ScriptedModel(BaseLlm):
    """Asks for the weather of the last word of the user's message, then reports it."""

    async def generate_content_async(self, llm_request, stream=False):
        last = llm_request.contents[-1]
        answer = next((p.function_response for p in last.parts or [] if p.function_response), None)
        if answer is None:
            city = (last.parts[0].text or "").rstrip("?").split()[-1]
            call = types.FunctionCall(name="get_weather", args={"city": city})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
        else:
            weather = answer.response
            text = f"It's {weather['celsius']}°C and {weather['sky']} in {weather['city']}."
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """The weather in a city."""
    tool_context.state["user:last_city"] = city  # the user's, in every session of this app
    tool_context.state["temp:raw"] = "never stored"  # this invocation only
    return {"city": city, "celsius": 21 if city == "Paris" else 14, "sky": "clear"}


async def main(db: str) -> None:
    service = ContextSessionService(db)
    agent = LlmAgent(name="forecaster", model=ScriptedModel(model="scripted"), tools=[get_weather],
                     instruction="Answer questions about the weather.", output_key="last_answer")
    runner = Runner(app_name="weather", agent=agent, session_service=service)
    await service.create_session(app_name="weather", user_id="alice", session_id="trip", state={"app:units": "metric"})

    for n, question in enumerate(["What's the weather in Paris?", "And in Oslo?"], 1):
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for event in runner.run_async(user_id="alice", session_id="trip", new_message=message):
            if event.is_final_response():
                print(f"turn {n}: {event.content.parts[0].text}")

    session = await service.get_session(app_name="weather", user_id="alice", session_id="trip")
    print(f"{len(session.events)} events in the session")
    print("state:", json.dumps(session.state, sort_keys=True, ensure_ascii=False))
    recent = await service.get_session(app_name="weather", user_id="alice", session_id="trip",
                                       config=GetSessionConfig(num_recent_events=2))
    print("last 2 events:", [e.author for e in recent.events])

    ctx = service.context("weather", "alice", "trip")
    print(f"the Context {ctx.id}: {[m.role for m in ctx.messages]}")

    # Compact the first turn: a summary in its place, the events kept.
    first, last = session.events[0].timestamp, session.events[3].timestamp
    summary = types.Content(role="model", parts=[types.Part(text="Alice asked about Paris: 21°C, clear.")])
    await service.append_event(session, Event(author="forecaster", invocation_id="compaction", actions=EventActions(
        compaction=EventCompaction(start_timestamp=first, end_timestamp=last, compacted_content=summary))))
    ctx = service.context("weather", "alice", "trip")
    print(f"after compaction: {ctx.message_count} messages shown, {len(ctx.events())} events in the log")
    print("first message now:", ctx.messages[0].text)

    # Another worker (a second service on the same file) appends; this copy is now stale.
    other = ContextSessionService(db)
    theirs = await other.get_session(app_name="weather", user_id="alice", session_id="trip")
    await other.append_event(theirs, Event(author="user", invocation_id="other", content=types.Content(
        role="user", parts=[types.Part(text="Thanks!")])))
    try:
        await service.append_event(session, Event(author="user", invocation_id="late"))
    except StaleSessionError:
        print("stale writer refused: reload the session and append again")
    await other.close()
    await service.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(str(Path(tmp) / "sessions.db")))
