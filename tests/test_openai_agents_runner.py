"""Real runs through the OpenAI Agents SDK's ``Runner`` with its scripted model (``agents.testing.
ScriptedModel``: no network), each done twice — once with ContextSession, once with the SDK's
own file-backed ``SQLiteSession`` — and the two sessions must then hold the same items, byte for
byte, and the model must have been sent the same input on every call."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from _agents_support import BACKENDS, backends, exact, run
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.run_internal.session_persistence import rewind_session_items
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseFunctionWebSearch, ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    b = backends(request.param, request, tmp_path)
    yield b
    b.close()


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21°C and clear in {city}"


@function_tool(needs_approval=True)
def transfer(amount: int, to: str) -> str:
    """Move money (asks a human first)."""
    return f"sent {amount} to {to}"


def reasoning(n: int) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=f"rs_{n}",
        type="reasoning",
        summary=[Summary(text=f"thinking {n}", type="summary_text")],
        encrypted_content=f"gAAAAB-opaque-{n}==",
    )


Scenario = Callable[[Any, ScriptedModel], Awaitable[Any]]


def both(scenario: Scenario, session: Any, tmp_path) -> tuple[list[Any], list[Any]]:
    """Run ``scenario`` on ``session`` and on a fresh SQLiteSession; return both sessions'
    items after it, having checked the model was sent the same input on every call."""

    async def go(s: Any) -> tuple[list[Any], list[Any]]:
        model = ScriptedModel()
        await scenario(s, model)
        model.assert_complete()
        return await s.get_items(), [copy.deepcopy(c.input) for c in model.calls]

    ours, our_calls = run(go(session))
    reference = SQLiteSession(session.session_id, tmp_path / "reference.sqlite3")
    try:
        theirs, their_calls = run(go(reference))
    finally:
        reference.close()
    assert our_calls == their_calls
    return ours, theirs


async def tool_turns(session: Any, model: ScriptedModel) -> None:
    agent = Agent(name="weather", instructions="Be brief.", model=model, tools=[get_weather])
    model.extend(
        [
            [reasoning(1), function_call("get_weather", {"city": "Paris"}, call_id="call_1")],
            [assistant_message("Paris: 21°C ☀", item_id="msg_1")],
            [
                ResponseFunctionWebSearch(
                    id="ws_1", type="web_search_call", status="completed", action={"type": "search", "query": "Lyon"}
                ),
                function_call("get_weather", '{"city": "Lyon"}', call_id="call_2"),
                function_call("get_weather", '{"city":"Nice"}', call_id="call_3"),
            ],
            [assistant_message("Lyon and Nice: clear too.", item_id="msg_2")],
        ]
    )
    r1 = await Runner.run(agent, "Weather in Paris?", session=session)
    assert r1.final_output == "Paris: 21°C ☀"
    r2 = await Runner.run(agent, "And Lyon, Nice?", session=session)
    assert r2.final_output == "Lyon and Nice: clear too."


async def streamed_turns(session: Any, model: ScriptedModel) -> None:
    agent = Agent(name="weather", model=model, tools=[get_weather])
    model.extend(
        [
            [reasoning(1), function_call("get_weather", {"city": "Oslo"}, call_id="call_s1")],
            [assistant_message("Oslo is clear.", item_id="msg_s1")],
            [assistant_message("Bye!", item_id="msg_s2")],
        ]
    )
    for prompt in ("Weather in Oslo?", "Thanks"):
        result = Runner.run_streamed(agent, prompt, session=session)
        events = [e async for e in result.stream_events()]
        assert events


async def approval_turn(session: Any, model: ScriptedModel) -> None:
    agent = Agent(name="bank", model=model, tools=[transfer])
    model.extend(
        [
            [function_call("transfer", {"amount": 5, "to": "Ana"}, call_id="call_t1")],
            [assistant_message("Done: 5 sent to Ana.", item_id="msg_t1")],
        ]
    )
    first = await Runner.run(agent, "Send 5 to Ana", session=session)
    assert first.interruptions, "the tool needs approval: the run stops there"
    # While the run waits, the session holds the call without its output.
    pending = await session.get_items()
    assert pending[-1]["type"] == "function_call"
    state = first.to_state()
    for interruption in first.interruptions:
        state.approve(interruption)
    resumed = await Runner.run(agent, state, session=session)
    assert resumed.final_output == "Done: 5 sent to Ana."


async def windowed_turns(session: Any, model: ScriptedModel) -> None:
    """The history limited by the run's session settings (the model sees the last 3 items)."""
    agent = Agent(name="chat", model=model)
    model.extend([[assistant_message(f"answer {i}", item_id=f"msg_w{i}")] for i in range(4)])
    config = RunConfig(session_settings={"limit": 3})
    for i in range(4):
        await Runner.run(agent, f"question {i}", session=session, run_config=config)


@pytest.mark.parametrize(
    "scenario", [tool_turns, streamed_turns, approval_turn, windowed_turns], ids=lambda f: f.__name__
)
def test_same_items_as_sqlite_session(backend, tmp_path, scenario):
    ours, theirs = both(scenario, backend.session("run"), tmp_path)
    assert exact(ours) == exact(theirs)
    assert ours


def test_tool_turn_items(backend, tmp_path):
    """What a tool-calling turn leaves, type by type, and the reasoning bytes untouched."""
    ours, _ = both(tool_turns, backend.session("run"), tmp_path)
    assert [i.get("type", "message") for i in ours] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "web_search_call",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "message",
    ]
    assert ours[1]["encrypted_content"] == "gAAAAB-opaque-1=="
    assert ours[7]["arguments"] == '{"city": "Lyon"}'


def test_sync_run(backend):
    """``Runner.run_sync`` (its own event loop) with a stored session."""
    session = backend.session("sync")
    model = ScriptedModel([[assistant_message("hi", item_id="msg_sync")]])
    loop = asyncio.new_event_loop()  # run_sync runs on the thread's loop; closed here after it
    asyncio.set_event_loop(loop)
    try:
        result = Runner.run_sync(Agent(name="a", model=model), "hello", session=session)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    assert result.final_output == "hi"
    assert [i["role"] for i in run(session.get_items())] == ["user", "assistant"]


def test_retried_turn_rewinds_with_pop_item(backend, tmp_path):
    """The SDK's rewind of a retried turn (``rewind_session_items``: compares the tail by
    ``json.dumps(item, sort_keys=True)``, then pops it item by item) removes exactly the turn,
    as it does on SQLiteSession; a tail that does not match is left alone."""

    async def scenario(session: Any, model: ScriptedModel) -> None:
        await tool_turns(session, model)
        items = await session.get_items()
        turn = items[5:]  # the second turn: "And Lyon, Nice?" and all it produced
        await rewind_session_items(session, copy.deepcopy(turn))
        assert exact(await session.get_items()) == exact(items[:5])
        # a rewind whose target is not the tail changes nothing
        await rewind_session_items(session, copy.deepcopy(items[:1]))
        assert exact(await session.get_items()) == exact(items[:5])

    ours, theirs = both(scenario, backend.session("rewind"), tmp_path)
    assert exact(ours) == exact(theirs)
    assert len(ours) == 5


def test_rewind_restores_a_half_popped_tail(backend):
    """``rewind_session_items`` pops the tail from the end and, when an item differs from
    what it expected, puts back what it popped: the session ends as it began."""
    session = backend.session("restore")
    items = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    run(session.add_items(copy.deepcopy(items)))

    async def go() -> list[Any]:
        # get_items(limit=2) matches the two targets, but the pops are checked one by one:
        # change the tail in between (as another writer could) so the second pop mismatches.
        original_pop = session.pop_item
        calls = 0

        async def pop_then_interfere() -> Any:
            nonlocal calls
            calls += 1
            got = await original_pop()
            if calls == 1:
                await session.pop_item()
                await session.add_items([{"role": "user", "content": "someone else"}])
            return got

        session.pop_item = pop_then_interfere  # type: ignore[method-assign]
        await rewind_session_items(session, copy.deepcopy(items[2:]))
        del session.pop_item
        return await session.get_items()

    after = run(go())
    # popped m3, then found "someone else" where m2 was expected: both put back, in order
    assert exact(after) == exact([items[0], items[1], {"role": "user", "content": "someone else"}, items[3]])
