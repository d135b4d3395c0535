"""The store under many processes: writers racing on one context lose and duplicate
nothing, and a writer killed with SIGKILL at any point of a save leaves whole turns only."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _stores import Sql
from ctxfold import Context, Message, Store

TESTS = str(Path(__file__).resolve().parent)

RACER = """
import sys
sys.path.insert(0, sys.argv[5])
from _racing import add_turn_racing
from ctxfold import Store
url, cid, worker, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
conflicts = 0
with Store(url) as store:
    print("ready", flush=True)
    sys.stdin.readline()  # all start together
    for t in range(turns):
        conflicts += add_turn_racing(store, cid, f"w{worker} t{t}")
print(conflicts, flush=True)
"""


def race(url: str, workers: int, turns: int) -> int:
    """``workers`` processes each add ``turns`` turns to one context; the conflicts they met."""
    with Store(url) as store:
        ctx = Context.new(messages=[Message.system("shared")])
        store.save(ctx)
    procs = [subprocess.Popen([sys.executable, "-c", RACER, url, ctx.id, str(w), str(turns), TESTS],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for w in range(workers)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    conflicts = 0
    for p in procs:
        out, _ = p.communicate(timeout=240)
        assert p.returncode == 0
        conflicts += int(out.split()[-1])
    with Store(url) as store:
        back = store.load(ctx.id)
    got = [m.content for m in back.messages[1:]]
    expected = [f"w{w} t{t}" for w in range(workers) for t in range(turns)]
    assert sorted(got) == sorted(expected)  # every turn, exactly once
    for w in range(workers):  # each writer's turns in its order
        mine = [c for c in got if c.startswith(f"w{w} ")]
        assert mine == [f"w{w} t{t}" for t in range(turns)]
    assert [e.seq for e in back.events()] == list(range(1 + workers * turns))
    s = Sql(url)
    assert s.run("SELECT count(*), min(seq), max(seq) FROM ctxfold_events WHERE context_id = %s", ctx.id)[0] == \
        (1 + workers * turns, 0, workers * turns)
    s.close()
    return conflicts


def test_eight_processes_race_on_one_context_on_postgres(pg_url):
    conflicts = race(pg_url, workers=8, turns=200)
    print(f"8 writers x 200 turns on PostgreSQL: {conflicts} conflicts, each reloaded and redone")


def test_four_processes_race_on_one_context_on_sqlite(sqlite_url):
    conflicts = race(sqlite_url, workers=4, turns=200)
    print(f"4 writers x 200 turns on SQLite: {conflicts} conflicts, each reloaded and redone")


SAVER = """
import sys
from ctxfold import Message, Store
url, cid = sys.argv[1], sys.argv[2]
store = Store(url)
ctx = store.load(cid)
big = "x" * 40_000  # a save that takes a while, so that kills land inside one
print("ready", flush=True)
while True:
    n = len(ctx) // 4
    ctx.add_messages([Message.user(f"t{n} m{k} {big}") for k in range(4)])
    store.save(ctx)
"""


def check_whole_turns(url: str, cid: str) -> int:
    with Store(url) as store:
        ctx = store.load(cid)
    texts = [m.content.split(" ", 2)[:2] for m in ctx.messages]
    assert len(texts) % 4 == 0
    assert texts == [[f"t{i // 4}", f"m{i % 4}"] for i in range(len(texts))]
    assert ctx.next_seq == len(texts) and ctx.stored_seq == len(texts)
    return len(texts) // 4


@pytest.mark.parametrize("backend", ["sqlite_url", "pg_url"])
def test_sigkill_mid_save_leaves_whole_turns(request, backend):
    url = request.getfixturevalue(backend)
    with Store(url) as store:
        ctx = Context()
        store.save(ctx)
    rng = random.Random(10)
    turns = 0
    for _ in range(6):
        p = subprocess.Popen([sys.executable, "-c", SAVER, url, ctx.id], stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.05, 0.4))
        p.kill()  # SIGKILL: wherever the save is
        p.wait()
        p.stdout.close()
        now = check_whole_turns(url, ctx.id)
        assert now >= turns
        turns = now
    assert turns > 0
