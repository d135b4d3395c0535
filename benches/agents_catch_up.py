"""A ContextSession's read right after another writer's turn: the reader catches up
with ``Store.refresh`` (only the new events) instead of reloading its history.

    python benches/agents_catch_up.py [N ...]        # default 1000 10000 100000

For each history length N: one session adds a turn of 5 items, then a second session on the
same SQLite store reads ``get_items(limit=50)``; the median of that read over 20 turns (the
writer's turn is not timed), next to the same read with nothing new."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ctxfold
from ctxfold.adapters.openai_agents import ContextSession
from test_agents_session import history, turn


async def measure(n: int, folder: Path) -> tuple[float, float]:
    with ctxfold.Store(f"sqlite:///{folder / f'catch-up-{n}.db'}") as store:
        writer, reader = ContextSession("s", store), ContextSession("s", store)
        await writer.add_items(history(n))
        await reader.get_items(limit=50)  # the reader's first read loads the history
        after_turn, nothing_new = [], []
        for _ in range(20):
            await writer.add_items(turn())
            t0 = time.perf_counter()
            got = await reader.get_items(limit=50)
            after_turn.append(time.perf_counter() - t0)
            assert got == await writer.get_items(limit=50)
            t0 = time.perf_counter()
            await reader.get_items(limit=50)
            nothing_new.append(time.perf_counter() - t0)
        return statistics.median(after_turn), statistics.median(nothing_new)


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'n':>8}  {'after a turn':>14}  {'nothing new':>12}   (get_items(limit=50), median ms)")
        for n in sizes:
            a, b = asyncio.run(measure(n, Path(tmp)))
            print(f"{n:>8}  {a * 1e3:>11.3f} ms  {b * 1e3:>9.3f} ms")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000, 100000])
