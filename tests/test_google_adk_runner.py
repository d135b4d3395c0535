"""A real ADK Runner with an LlmAgent on ContextSessionService: a scripted model (a BaseLlm of
our own, no network) that calls a tool, reads its result and answers, over several turns. The
resulting session (events, state, listing) and every request the model was sent are the same as
with ADK's InMemorySessionService."""

from __future__ import annotations

import json

import pytest
from _adk import Clock, close, make_service, run, session_form
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

pytestmark = pytest.mark.frameworks


class ScriptedModel(BaseLlm):
    """Calls ``get_weather`` for each user message; once the tool answered, says what it said.
    Records the contents of every request it is sent."""

    seen: list[list[dict]] = []

    async def generate_content_async(self, llm_request, stream=False):
        self.seen.append([c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents])
        last = llm_request.contents[-1]
        response = next((p.function_response for p in last.parts or [] if p.function_response), None)
        if response is None:
            city = (last.parts[0].text or "").split()[-1]
            part = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": city}))
            yield LlmResponse(content=types.Content(role="model", parts=[part]))
        else:
            text = f"The weather: {json.dumps(response.response, sort_keys=True)}"
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """The weather in a city."""
    tool_context.state["user:last_city"] = city
    tool_context.state["temp:scratch"] = city.upper()
    tool_context.state["lookups"] = tool_context.state.get("lookups", 0) + 1
    return {"city": city, "sky": "clear" if len(city) % 2 else "rain"}


async def converse(service) -> tuple:
    clock = Clock()
    clock.install()
    model = ScriptedModel(model="scripted")
    model.seen = []
    agent = LlmAgent(name="forecaster", model=model, instruction="Answer about the weather.", tools=[get_weather],
                     output_key="last_answer")
    runner = Runner(app_name="weather", agent=agent, session_service=service)
    await service.create_session(app_name="weather", user_id="alice", session_id="s1", state={"app:units": "metric"})
    replies = []
    for city in ("Paris", "Oslo", "Lima"):
        clock.tick()
        message = types.Content(role="user", parts=[types.Part(text=f"Weather in {city}")])
        async for event in runner.run_async(user_id="alice", session_id="s1", new_message=message):
            replies.append(event.model_dump(mode="json", exclude_none=True))
    session = await service.get_session(app_name="weather", user_id="alice", session_id="s1")
    listing = await service.list_sessions(app_name="weather", user_id="alice")
    user_state = await service.get_user_state(app_name="weather", user_id="alice")
    return (session_form(session), [session_form(s) for s in listing.sessions], user_state, model.seen, replies)


@pytest.mark.parametrize("name", ["ctxfold-memory", "ctxfold-sqlite", "ctxfold-postgres"])
def test_runner_gives_the_same_session_as_in_memory(name, request, tmp_path):
    async def go(service_name):
        service = make_service(service_name, request, tmp_path)
        try:
            return await converse(service)
        finally:
            await close(service)

    want = run(go("adk-memory"))
    have = run(go(name))
    session, listing, user_state, seen, replies = have
    assert len(session["events"]) == 12  # per turn: the user, the call, the response, the answer
    assert session["state"]["user:last_city"] == "Lima" and session["state"]["lookups"] == 3
    assert "temp:scratch" not in session["state"]
    assert len(seen) == 6 and len(seen[-1]) > len(seen[0])  # the model saw the history grow
    assert have == want


def test_the_context_reads_as_the_conversation(tmp_path, request):
    async def go():
        service = make_service("ctxfold-sqlite", request, tmp_path)
        try:
            await converse(service)
            return service.context("weather", "alice", "s1")
        finally:
            await close(service)

    ctx = run(go())
    assert ctx.id == "adk/weather/alice/s1"
    roles = [m.role for m in ctx.messages]
    assert roles == ["user", "assistant", "user", "assistant"] * 3
    calls = [p for m in ctx.messages for p in m.parts if p.type == "tool_use"]
    results = [p for m in ctx.messages for p in m.parts if p.type == "tool_result"]
    assert [c["name"] for c in calls] == ["get_weather"] * 3
    assert [r["call_id"] for r in results] == [c["call_id"] for c in calls]
    assert ctx.messages[-1].text.startswith("The weather: ")
