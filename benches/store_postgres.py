"""PostgreSQL store throughput with many worker processes.

    python benches/store_postgres.py [--url URL] [--workers 8] [--seconds 5] [--history 1000]

1. distinct: each worker adds turns (4 messages each, `store.save` per turn) to a context of its
   own that already holds --history messages: turns/s across all workers (target ≥ 1,000).
2. racing: every worker adds one-message turns to one shared context, each turn a load, an
   add and a save, redone after a ConflictError (with jittered backoff): turns/s, the conflict
   rate, and a check that every turn is there exactly once with contiguous seqs.
The URL defaults to CTXFOLD_TEST_POSTGRES_URL (`eval "$(.ci/postgres start)"` starts a server)."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
import uuid
from pathlib import Path

# The racing writer's turn is the store tests' own (tests/_racing.py): one home for both.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _distinct(url: str, history: int, seconds: float, start, out) -> None:
    from ctxfold import Context, Store
    from ctxfold.demo_transcript import build_transcript

    with Store(url) as store:
        ctx = Context()
        ctx.add_messages(build_transcript(history))
        store.save(ctx)
        turn = build_transcript(4, seed=3)
        start.wait()
        done, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            ctx.add_messages([m.replace(id=uuid.uuid4().hex) for m in turn])
            store.save(ctx)
            done += 1
        out.put((done, time.perf_counter() - t0))
        store.delete(ctx.id)


def _racing(url: str, cid: str, worker: int, seconds: float, start, out) -> None:
    from _racing import add_turn_racing
    from ctxfold import Store

    with Store(url) as store:
        start.wait()
        done = conflicts = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            conflicts += add_turn_racing(store, cid, f"w{worker} t{done}")
            done += 1
        out.put((worker, done, conflicts, time.perf_counter() - t0))


def _run(target, args_of, workers: int) -> list:
    ctx = mp.get_context("spawn")
    start, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args_of(w), start, out)) for w in range(workers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("CTXFOLD_TEST_POSTGRES_URL"))
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--history", type=int, default=1000)
    a = ap.parse_args()
    if not a.url:
        print("no PostgreSQL URL: pass --url or set CTXFOLD_TEST_POSTGRES_URL", file=sys.stderr)
        return 2
    from ctxfold import Context, Message, Store

    res = _run(_distinct, lambda w: (a.url, a.history, a.seconds), a.workers)
    turns = sum(r[0] for r in res)
    wall = max(r[1] for r in res)
    print(f"distinct contexts: {a.workers} workers, {turns:,} turns of 4 messages in {wall:.1f} s "
          f"= {turns / wall:,.0f} turns/s ({a.history:,} messages of history each)")

    with Store(a.url) as store:
        shared = Context.new(messages=[Message.system("shared")])
        store.save(shared)
    res = _run(_racing, lambda w: (a.url, shared.id, w, a.seconds), a.workers)
    turns = sum(r[1] for r in res)
    conflicts = sum(r[2] for r in res)
    wall = max(r[3] for r in res)
    with Store(a.url) as store:
        back = store.load(shared.id)
        store.delete(shared.id)
    got = sorted(m.content for m in back.messages[1:])
    want = sorted(f"w{w} t{t}" for w, done, _, _ in res for t in range(done))
    whole = got == want and [e.seq for e in back.events()] == list(range(back.next_seq))
    print(f"racing on one context: {a.workers} workers, {turns:,} turns in {wall:.1f} s = {turns / wall:,.0f} "
          f"turns/s; {conflicts:,} conflicts ({conflicts / max(conflicts + turns, 1):.0%} of saves); every turn "
          f"once, seqs contiguous: {whole}")
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())
