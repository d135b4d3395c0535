"""Compaction bookkeeping, ctxfold against LangChain's ``SummarizationMiddleware``.

    python benches/compaction.py [--sizes 1000,10000,100000] [--repeat 3]

The same flat transcript (user and assistant messages of about 60 tokens) at each size, over
a budget of a quarter of it. ctxfold: ``plan_compaction`` + ``apply_compaction`` (exact BPE
counts; "warm": counts cached, as in an agent loop that counts every turn; "cold": the first
count of every message included). LangChain 1.x: ``SummarizationMiddleware.before_model``
with ``trigger``/``keep`` in tokens (its default approximate counter) choosing its cut and
building its state update. Both summarizers return at once, so only the bookkeeping is timed.
Prints the median of ``--repeat`` runs and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ctxfold import Context, Message

TEXT = "The quick brown fox jumps over the lazy dog while the agent keeps notes. " * 4


def texts(n: int) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", f"{i}: {TEXT}") for i in range(n)]


def ctxfold_context(rows: list[tuple[str, str]], warm: bool) -> Context:
    ctx = Context(messages=[Message(role, text) for role, text in rows])
    if warm:
        ctx.total_token_count()
    return ctx


def ctxfold_run(ctx: Context, budget: int) -> int:
    plan = ctx.plan_compaction(budget)
    assert plan is not None
    ctx.apply_compaction(plan, "summary")
    return len(plan.messages)


def langchain_setup(rows: list[tuple[str, str]], budget: int) -> tuple[Any, list[Any]]:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    middleware = SummarizationMiddleware(
        FakeListChatModel(responses=["unused"]),
        trigger=("tokens", budget),
        keep=("tokens", budget // 2),
        summarizer=lambda messages: "summary",
    )
    msgs = [
        (HumanMessage if role == "user" else AIMessage)(content=text, id=f"m{i}")
        for i, (role, text) in enumerate(rows)
    ]
    return middleware, msgs


def langchain_run(middleware: Any, msgs: list[Any]) -> int:
    update = middleware.before_model({"messages": msgs}, None)
    assert update is not None
    return len(msgs) - (len(update["messages"]) - 2)


def median_of(repeat: int, setup: Callable[[], Any], run: Callable[[Any], int]) -> tuple[float, int]:
    times, summarized = [], 0
    for _ in range(repeat):
        state = setup()
        t = time.perf_counter()
        summarized = run(state)
        times.append(time.perf_counter() - t)
    return statistics.median(times), summarized


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(
        f"{'messages':>9} {'ctxfold warm':>13} {'ctxfold cold':>13} {'LangChain':>11} {'warm ×':>8} {'cold ×':>8}"
        "  summarized (ctxfold/LangChain)"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        rows = texts(n)
        budget = ctxfold_context(rows, True).total_token_count() // 4
        warm, ours = median_of(args.repeat, partial(ctxfold_context, rows, True), partial(ctxfold_run, budget=budget))
        cold, _ = median_of(args.repeat, partial(ctxfold_context, rows, False), partial(ctxfold_run, budget=budget))
        lc, theirs = median_of(args.repeat, partial(langchain_setup, rows, budget), lambda s: langchain_run(*s))
        print(
            f"{n:>9} {warm * 1e3:>10.2f} ms {cold * 1e3:>10.2f} ms {lc * 1e3:>8.2f} ms "
            f"{lc / warm:>7.1f}× {lc / cold:>7.1f}×  {ours}/{theirs}"
        )


if __name__ == "__main__":
    main()
