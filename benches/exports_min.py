"""The exporters against LangChain and the plain loop of ``test_bench_formats.py``, as the
fastest of many rounds (a shared machine's load only ever adds time: the minimum is the figure
that moves least between runs; the pytest-benchmark suite reports medians).

    python benches/exports_min.py [N ...]        (default 10000 100000)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ctxfold import formats  # noqa: E402
from langchain_core.messages import convert_to_openai_messages  # noqa: E402
from test_bench import filled  # noqa: E402
from test_bench_formats import anthropic_loop, chat_loop, langchain  # noqa: E402


def fastest(rounds: int, fn, *args) -> float:
    fn(*args)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def main(sizes: list[int]) -> None:
    print(f"{'operation':<24}{'n':>8}  {'ctxfold':>10}  {'python loop':>12}  {'langchain':>10}  {'loop/ours':>9}  {'lc/ours':>8}")
    for n in sizes:
        ctx = filled(n)
        lc = langchain(ctx.messages)
        rounds = 20 if n <= 10_000 else 7
        theirs = fastest(max(3, rounds // 3), convert_to_openai_messages, lc)
        for name, export, loop in (
            ("to_openai_chat", formats.to_openai_chat, chat_loop),
            ("to_anthropic", formats.to_anthropic, anthropic_loop),
            ("to_openai_responses", formats.to_openai_responses, None),
        ):
            ours = fastest(rounds, export, ctx)
            plain = fastest(rounds, lambda c, f: f(c.messages), ctx, loop) if loop else float("nan")
            print(f"{name:<24}{n:>8}  {ours * 1e3:>8.2f}ms  {plain * 1e3:>10.2f}ms  {theirs * 1e3:>8.2f}ms  "
                  f"{plain / ours:>8.1f}x  {theirs / ours:>7.1f}x")
        budget = ctx.total_token_count() // 10
        for fmt in ("openai_chat", "anthropic", "openai_responses"):
            export = getattr(formats, f"to_{fmt}")
            both = fastest(rounds * 2, lambda c, f, b: f(c.rolling_token_window(b)), ctx, export, budget)
            alone = fastest(rounds * 2, ctx.rolling_token_window, budget)
            print(f"{'10% window + ' + fmt:<32}{n:>8}  {both * 1e3:>8.2f}ms  (the window alone {alone * 1e3:.2f}ms)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
