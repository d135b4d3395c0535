"""Compaction with the OpenAI Agents SDK: ``ContextSession(compaction=Compactor(...))``
summarizes after ``add_items`` when over budget, keeping the log; the SDK's own
``OpenAIResponsesCompactionSession`` on top of a ContextSession (a real ``AsyncOpenAI`` client
on a mocked transport) replaces the history without destroying it."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from _agents_support import exact, run
from agents.memory import OpenAIResponsesCompactionSession
from ctxfold import CompactionPlan, Compactor, Store
from ctxfold.adapters.openai_agents import ContextSession
from openai import AsyncOpenAI

pytestmark = pytest.mark.frameworks


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def turn(i: int) -> list[dict[str, Any]]:
    return [
        user(f"question {i} " + "word " * 30),
        {"type": "function_call", "call_id": f"call_{i}", "name": "lookup", "arguments": "{}", "id": f"fc_{i}"},
        {"type": "function_call_output", "call_id": f"call_{i}", "output": "result " * 20},
        {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{i}",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"answer {i}", "annotations": []}],
        },
    ]


@pytest.mark.parametrize("where", ["memory", "sqlite", "postgres"])
def test_a_session_compacts_after_add_items_and_keeps_the_log(where, tmp_path, request):
    plans: list[CompactionPlan] = []

    async def summarize(plan: CompactionPlan) -> str:
        plans.append(plan)
        request = plan.to("openai_responses")
        return f"summary of {len(request['input']) - 1} items"

    urls = {"sqlite": lambda: str(tmp_path / "s.db"), "postgres": lambda: request.getfixturevalue("pg_url")}
    store = Store(urls[where]()) if where in urls else None
    session = ContextSession("s1", store, compaction=Compactor(summarize, 400, keep_last=4))

    async def main() -> list[Any]:
        added: list[Any] = []
        for i in range(6):
            await session.add_items(turn(i))
            added += turn(i)
        return added

    added = run(main())
    ctx = session.context
    assert plans, "the history went over budget"
    assert ctx.total_token_count() <= 400
    items = run(session.get_items())
    # A summary, then the items kept exactly as added, with no call cut from its output.
    assert items[0]["role"] == "assistant" and "summary of" in json.dumps(items[0])
    assert exact(items[1:]) == exact(added[len(added) - len(items) + 1 :])
    assert items[1]["role"] == "user"
    records = ctx.compactions()
    assert len(records) == len(plans)
    # Every item ever added is still in the log.
    first = records[0]
    assert len(ctx.messages_at(first.seq)) > first.last
    if store is not None:
        reloaded = ContextSession("s1", store)
        assert exact(run(reloaded.get_items())) == exact(items)
        assert store.load("s1").compactions() == records
        store.close()


def test_a_failing_summarizer_leaves_the_session_as_it_is(caplog):
    def summarize(plan: CompactionPlan) -> str:
        raise RuntimeError("model down")

    session = ContextSession("s2", compaction=Compactor(summarize, 60))
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        run(session.add_items(turn(0)))
    assert exact(run(session.get_items())) == exact(turn(0))
    assert session.context.compactions() == []
    assert "summarizer failed" in caplog.text
    with pytest.raises(TypeError, match="Compactor"):
        ContextSession("s3", compaction=summarize)  # type: ignore[arg-type]


def test_the_sdks_compaction_session_on_a_context_session_is_non_destructive():
    requests: list[dict[str, Any]] = []
    compacted = [user("question 0"), {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB-compacted=="}]

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/responses/compact")
        requests.append(json.loads(request.content))
        body = {
            "id": "resp_cmp",
            "created_at": 0,
            "object": "response.compaction",
            "output": compacted,
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 15,
            },
        }
        return httpx.Response(200, json=body)

    client = AsyncOpenAI(api_key="test", http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    inner = ContextSession("s4")
    session = OpenAIResponsesCompactionSession("s4", underlying_session=inner, client=client)

    async def main() -> None:
        for i in range(3):
            await session.add_items(turn(i))
        await session.run_compaction({"force": True, "compaction_mode": "input"})

    run(main())
    assert len(requests) == 1 and len(requests[0]["input"]) == 12
    assert exact(run(session.get_items())) == exact(compacted)
    ctx = inner.context
    removals = [e for e in ctx.events() if e.type == "remove"]
    assert len(removals) == 1
    # The history before the clear is still there, item for item.
    before = ctx.messages_at(removals[0].seq)
    assert len(before) == 12
    assert before[0].text.startswith("question 0")
