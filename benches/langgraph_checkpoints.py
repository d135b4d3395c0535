"""LangGraph checkpointers side by side: the same N-turn chat graph on SqliteSaver, PostgresSaver
and ctxfold's ContextSaver (on SQLite and on PostgreSQL).

    python benches/langgraph_checkpoints.py [--turns 100,1000] [--url URL] [--read 1000,10000] [--rounds 1]
                                            [--threads 1] [--replay THREADS] [--aio TURNS] [--encrypted]

Each turn is one `graph.invoke` of a `StateGraph(MessagesState)` whose node calls a scripted chat
model: a user message and an answer of about 400 characters each. Printed per saver and length:
- the database's bytes at the end (SQLite: the file after a WAL checkpoint; PostgreSQL: the
  total relation size of the saver's tables);
- bytes added per turn over the first and the last tenth of the turns;
- the median checkpoint work per turn (the time inside the saver's put and put_writes calls
  of one turn) over the first and the last tenth;
and ContextSaver's ratios to the stock savers. ``ContextSaver/SQLite/shared`` is ContextSaver on
SQLite with ``share_messages=True``: its puts find the unchanged messages by identity, where by
default they compare every message by value (a caller may have changed one in place). With
``--rounds N`` each saver runs N times, the savers taking turns, and the timings printed are
the medians of the rounds (each round's listed below): on a noisy machine one run can land on
a slow spell that another does not. With ``--threads N`` each run puts N threads of that many
turns, one after another, on one saver: the first turns of a thread in a process that has
served others (its connections open, its statements prepared), where one thread shows a new
process's first turns.

With ``--replay N``, a turn's checkpoint work outside a graph: the put and put_writes calls a
10-turn thread of the graph made, replayed one after another on one thread into N new threads
of each saver (wall and CPU time a turn). Inside a graph the same calls run on LangGraph's
background threads beside the graph's own, and wait for the interpreter whenever they let go of
it; replayed, they show what the saver's own work costs.

With ``--aio TURNS``, the same graph run with ``ainvoke`` on the async savers: AsyncSqliteSaver,
AsyncPostgresSaver and ContextSaver's async methods (made with ``async with``, as the stock
ones are), each of the first turns of a thread printed with the median over the thread, ms of
work inside ``aput`` and ``aput_writes`` (median of the rounds).

With ``--encrypted``, every saver has LangGraph's ``EncryptedSerializer`` (AES): the stock
savers' checkpoints and writes are encrypted, and ContextSaver keeps every message through it.

Then what a full `get_tuple` costs on a thread of 1k / 10k messages (LangGraph needs the list as
LangChain objects): ContextSaver warm (the saver that wrote it holds every message's object: a
read copies them), an older checkpoint, cold (the first read of a fresh saver: every message
rebuilt from its log; opening the saver is not counted), and warm with ``share_messages=True``
(no copy), against SqliteSaver (every checkpoint unpickles the whole list).

The PostgreSQL URL defaults to CTXFOLD_TEST_POSTGRES_URL; each saver gets a schema of its own,
dropped afterwards. Without a URL the PostgreSQL columns are left out."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import quote

from ctxfold.adapters.langgraph import ContextSaver
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.graph import START, MessagesState, StateGraph

_WORDS = ("the quick brown fox jumps over lazy dog while committee reviews quarterly numbers nobody expected "
          "forecast to hold yet here we are again reading same report budget margin revenue churn cohort pricing "
          "launch roadmap customer support ticket latency region deploy rollback incident review").split()


def _text(n: int, who: str) -> str:
    """About 400 characters of words in an order of their own (not a repeated phrase, which
    the databases' compression would fold away)."""
    rng = random.Random(f"{who}{n}")
    words = [f"{who} {n}:"]
    while sum(len(w) + 1 for w in words) < 400:
        words.append(rng.choice(_WORDS))
    return " ".join(words)[:400]


def _answers(turns: int) -> Iterator[AIMessage]:
    for n in range(turns):
        yield AIMessage(_text(n, "answer"), id=f"ai-{n}",
                        response_metadata={"model_name": "scripted", "finish_reason": "stop"},
                        usage_metadata={"input_tokens": 100 + n, "output_tokens": 90, "total_tokens": 190 + n})


def _graph(saver: BaseCheckpointSaver, turns: int) -> Any:
    model = GenericFakeChatModel(messages=_answers(turns))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    return g.compile(checkpointer=saver)


class _Timed:
    """Adds the time spent in a saver's put and put_writes (from any thread) to ``spent``."""

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        self.spent = 0.0
        for name in ("put", "put_writes"):
            inner = getattr(saver, name)
            setattr(saver, name, self._wrap(inner))

    def _wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.spent += time.perf_counter() - t0

        return timed


# ---- the savers ------------------------------------------------------------------------------

# Every saver's serializer: the default, or with --encrypted LangGraph's EncryptedSerializer.
_SERDE: Any = None


def _pg_schema_url(server: str) -> tuple[str, str]:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    import psycopg

    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in server else "?"
    return schema, f"{server}{sep}options={quote(f'-csearch_path={schema}')}"


def _pg_drop(server: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f"DROP SCHEMA {schema} CASCADE")


def _pg_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        row = con.execute("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                          "WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace").fetchone()
        return int(row[0]) if row else 0


def _sqlite_bytes(path: str) -> int:
    """The file's bytes once its write-ahead log is copied back and emptied: the checkpoint is
    tried again while another one (a store's checkpoint thread) keeps it busy."""
    con = sqlite3.connect(path)
    while con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
        time.sleep(0.001)
    con.close()
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


@contextmanager
def _saver(kind: str, folder: str, server: str | None) -> Iterator[tuple[BaseCheckpointSaver, Callable[[], int]]]:
    if kind == "SqliteSaver":
        from langgraph.checkpoint.sqlite import SqliteSaver

        path = os.path.join(folder, f"stock-{uuid.uuid4().hex[:6]}.db")
        con = sqlite3.connect(path, check_same_thread=False)
        # The settings ContextSaver's SQLite store uses: WAL, a commit survives a crash of the
        # process (synchronous=NORMAL); the same fsync cost on both sides.
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        yield SqliteSaver(con, serde=_SERDE), lambda: _sqlite_bytes(path)
        con.close()
    elif kind in ("ContextSaver/SQLite", _SHARED):
        path = os.path.join(folder, f"ctxfold-{uuid.uuid4().hex[:6]}.db")
        saver = ContextSaver(f"sqlite://{path}", share_messages=kind == _SHARED, serde=_SERDE)
        yield saver, lambda: _sqlite_bytes(path)
        saver.close()
    else:
        assert server is not None
        schema, url = _pg_schema_url(server)
        try:
            if kind == "PostgresSaver":
                from langgraph.checkpoint.postgres import PostgresSaver

                with PostgresSaver.from_conn_string(url) as stock:
                    stock.setup()
                    if _SERDE is not None:
                        stock.serde = _SERDE
                    yield stock, lambda: _pg_bytes(url)
            else:
                ctx_saver = ContextSaver(url, serde=_SERDE)
                yield ctx_saver, lambda: _pg_bytes(url)
                ctx_saver.close()
        finally:
            _pg_drop(server, schema)


# ---- a run -----------------------------------------------------------------------------------


def _run(kind: str, turns: int, folder: str, server: str | None, threads: int = 1) -> dict[str, float]:
    """One saver: ``threads`` threads of ``turns`` turns, one after another. The bytes are the
    first thread's; the times, every thread's (the first and last tenth of each)."""
    tenth = max(turns // 10, 1)
    with _saver(kind, folder, server) as (saver, size):
        timed = _Timed(saver)
        graph = _graph(saver, turns * threads)
        sizes = {0: size()}
        early: list[float] = []
        late: list[float] = []
        t0 = time.perf_counter()
        for t in range(threads):
            config = {"configurable": {"thread_id": f"bench-{t}"}}
            work = []
            for n in range(turns):
                before = timed.spent
                graph.invoke({"messages": [HumanMessage(_text(n, "question"), id=f"human-{t}-{n}")]}, config,
                             durability="sync")
                work.append(timed.spent - before)
                done = n + 1
                if t == 0 and done in (tenth, turns - tenth, turns):
                    sizes[done] = size()
            early += work[:tenth]
            late += work[-tenth:]
            if t == 0:
                first = work[:_FIRST_TURNS]
            assert len(graph.get_state(config).values["messages"]) == 2 * turns
        wall = (time.perf_counter() - t0) / threads
    return {
        "bytes": sizes[turns],
        "early_bpt": (sizes[tenth] - sizes[0]) / tenth,
        "late_bpt": (sizes[turns] - sizes[turns - tenth]) / tenth,
        "early_ms": statistics.median(early) * 1e3,
        "late_ms": statistics.median(late) * 1e3,
        "wall_s": wall,
        **{f"turn{n}_ms": ms * 1e3 for n, ms in enumerate(first)},
    }


# The first turns of a thread, each shown on its own (a cold start would hide in a median).
_FIRST_TURNS = 10


# ---- async graphs ----------------------------------------------------------------------------

_ASYNC = {"SqliteSaver": "AsyncSqliteSaver", "PostgresSaver": "AsyncPostgresSaver"}
# ContextSaver with share_messages=True (in the turns table only): a put compares by identity
_SHARED = "ContextSaver/SQLite/shared"


@asynccontextmanager
async def _asaver(kind: str, folder: str, server: str | None) -> AsyncIterator[BaseCheckpointSaver]:
    if kind == "AsyncSqliteSaver":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(os.path.join(folder, f"astock-{uuid.uuid4().hex[:6]}.db")) as s:
            await s.conn.execute("PRAGMA journal_mode=WAL")  # as the sync stock saver above
            await s.conn.execute("PRAGMA synchronous=NORMAL")
            await s.setup()
            if _SERDE is not None:
                s.serde = _SERDE
            yield s
    elif kind == "ContextSaver/SQLite":
        async with ContextSaver(f"sqlite://{os.path.join(folder, f'actxfold-{uuid.uuid4().hex[:6]}.db')}",
                                serde=_SERDE) as saver:
            yield saver
    else:
        assert server is not None
        schema, url = _pg_schema_url(server)
        try:
            if kind == "AsyncPostgresSaver":
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async with AsyncPostgresSaver.from_conn_string(url) as stock:
                    await stock.setup()
                    if _SERDE is not None:
                        stock.serde = _SERDE
                    yield stock
            else:
                async with ContextSaver(url, serde=_SERDE) as saver:
                    yield saver
        finally:
            _pg_drop(server, schema)


async def _arun(kind: str, turns: int, folder: str, server: str | None) -> list[float]:
    """ms of work inside aput and aput_writes in each turn of one thread run with ainvoke."""
    spent = [0.0]
    async with _asaver(kind, folder, server) as saver:
        for name in ("aput", "aput_writes"):
            inner = getattr(saver, name)

            async def timed(*a: Any, _fn: Callable[..., Any] = inner, **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return await _fn(*a, **kw)
                finally:
                    spent[0] += time.perf_counter() - t0

            setattr(saver, name, timed)
        graph = _graph(saver, turns)
        out = []
        for n in range(turns):
            before = spent[0]
            await graph.ainvoke({"messages": [HumanMessage(_text(n, "question"), id=f"human-{n}")]},
                                {"configurable": {"thread_id": "bench"}}, durability="sync")
            out.append((spent[0] - before) * 1e3)
    return out


def _aruns(kinds: list[str], turns: int, rounds: int, folder: str, server: str | None) -> None:
    kinds = [_ASYNC.get(k, k) for k in kinds]
    print(f"\nAsync graphs (ainvoke), {turns} turns, {rounds} rounds: ms of checkpoint work in each of the first "
          f"{min(turns, _FIRST_TURNS)} turns, and the median turn (median of the rounds)")
    runs: dict[str, list[list[float]]] = {kind: [] for kind in kinds}
    for _ in range(rounds):
        for kind in kinds:
            runs[kind].append(asyncio.run(_arun(kind, turns, folder, server)))
    for kind, rs in runs.items():
        each = [statistics.median(r[n] for r in rs) for n in range(min(turns, _FIRST_TURNS))]
        typical = statistics.median(statistics.median(r) for r in rs)
        print(f"  {kind:<24} " + " ".join(f"{ms:5.1f}" for ms in each) + f"   | median turn {typical:.2f}")


def _median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """One row for several rounds of a saver: each figure's median (the bytes barely move
    between rounds; the times do)."""
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _mb(b: float) -> str:
    return f"{b / 1e6:,.2f} MB" if b >= 1e5 else f"{b / 1e3:,.1f} kB"


# ---- a turn's checkpoint work outside a graph --------------------------------------------------


def _recorded_turns(turns: int) -> list[tuple[str, tuple[Any, ...]]]:
    """The put and put_writes calls of a ``turns``-turn thread of the chat graph, as LangGraph
    made them (recorded on an InMemorySaver), in order: (method name, arguments)."""
    from langgraph.checkpoint.memory import InMemorySaver

    calls: list[tuple[str, tuple[Any, ...]]] = []
    recorder = InMemorySaver()

    def recording(name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def record(*a: Any) -> Any:
            calls.append((name, a))
            return inner(*a)

        return record

    for name in ("put", "put_writes"):
        setattr(recorder, name, recording(name, getattr(recorder, name)))
    graph = _graph(recorder, turns)
    for n in range(turns):
        graph.invoke({"messages": [HumanMessage(_text(n, "question"), id=f"human-{n}")]},
                     {"configurable": {"thread_id": "recorded"}}, durability="sync")
    return calls


def _replay(kind: str, threads: int, folder: str, server: str | None) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of a turn's put and put_writes calls, replayed one after another
    on the caller's thread into ``threads`` new threads of 10 turns (the first turn of each,
    which opens the thread's log, left out)."""
    import copy

    recorded = _recorded_turns(10)
    wall: dict[tuple[int, int], float] = {}
    cpu: dict[tuple[int, int], float] = {}
    with _saver(kind, folder, server) as (saver, _):
        for t in range(threads):
            turn = -1
            for name, args in copy.deepcopy(recorded):  # (the very objects within a thread, as a graph passes them)
                config = {**args[0], "configurable": {**args[0]["configurable"], "thread_id": f"replay-{t}"}}
                if name == "put" and args[2].get("source") == "input":
                    turn += 1
                w0, c0 = time.perf_counter(), time.thread_time()
                getattr(saver, name)(config, *args[1:])
                key = (t, turn)
                wall[key] = wall.get(key, 0.0) + time.perf_counter() - w0
                cpu[key] = cpu.get(key, 0.0) + time.thread_time() - c0
    kept = [k for k in wall if k[1] > 0]
    return statistics.median(wall[k] for k in kept) * 1e3, statistics.median(cpu[k] for k in kept) * 1e3


def _replays(kinds: list[str], threads: int, folder: str, server: str | None) -> None:
    print(f"\nA turn's put and put_writes replayed outside a graph, on one thread ({threads} threads of 10 turns; "
          "median ms a turn)")
    print(f"{'saver':<24} | {'wall':>6} | {'CPU':>6}")
    for kind in kinds:
        w, c = _replay(kind, threads, folder, server)
        print(f"{kind:<24} | {w:>6.2f} | {c:>6.2f}")


# ---- get_tuple at 1k / 10k messages ------------------------------------------------------------


def _put_thread(saver: BaseCheckpointSaver, messages: list[Any], steps: int) -> list[dict[str, Any]]:
    """The list put as ``steps`` checkpoints growing to ``messages``; their configs."""
    configs = []
    parent: dict[str, Any] = {"configurable": {"thread_id": "read", "checkpoint_ns": ""}}
    for k in range(1, steps + 1):
        upto = len(messages) * k // steps
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": messages[:upto]}
        cp["channel_versions"] = {"messages": f"{k:032}.0"}
        parent = saver.put(parent, cp, {"step": k}, {"messages": cp["channel_versions"]["messages"]})
        configs.append(parent)
    return configs


def _median_ms(fn: Callable[[], Any], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _read_row(n: int, folder: str) -> str:
    from langgraph.checkpoint.sqlite import SqliteSaver

    msgs = [HumanMessage(_text(i, "q"), id=f"h{i}") if i % 2 == 0 else
            AIMessage(_text(i, "a"), id=f"a{i}", usage_metadata={"input_tokens": i, "output_tokens": 9,
                                                                   "total_tokens": i + 9})
            for i in range(n)]
    latest: dict[str, Any] = {"configurable": {"thread_id": "read", "checkpoint_ns": ""}}
    path = os.path.join(folder, f"read-{n}.db")
    saver = ContextSaver(f"sqlite://{path}")
    configs = _put_thread(saver, msgs, 4)
    warm = _median_ms(lambda: saver.get_tuple(latest))
    older = _median_ms(lambda: saver.get_tuple(configs[1]))
    saver.close()
    with ContextSaver(f"sqlite://{path}", share_messages=True) as sharing:
        sharing.get_tuple(latest)  # its first read builds the objects; later ones share them
        shared = _median_ms(lambda: sharing.get_tuple(latest))

    def cold() -> float:
        # the first read of a saver that has never seen the thread (opening the saver, its
        # connections and schema check, is not counted: the stock saver's is not either)
        with ContextSaver(f"sqlite://{path}") as fresh:
            t0 = time.perf_counter()
            fresh.get_tuple(latest)
            return time.perf_counter() - t0

    cold_ms = statistics.median(cold() for _ in range(3)) * 1e3
    con = sqlite3.connect(os.path.join(folder, f"read-stock-{n}.db"), check_same_thread=False)
    stock = SqliteSaver(con)
    _put_thread(stock, msgs, 4)
    stock_ms = _median_ms(lambda: stock.get_tuple(latest))
    con.close()
    return f"{n:>9,} | {stock_ms:>11.1f} | {warm:>17.2f} | {older:>16.2f} | {cold_ms:>16.1f} | {shared:>12.2f}"


def _reads(sizes: list[int], folder: str) -> None:
    print("\nget_tuple of a thread's latest checkpoint, the whole list rebuilt as LangChain objects (median ms)")
    print(f"{'messages':>9} | {'SqliteSaver':>11} | {'ContextSaver warm':>17} | {'older checkpoint':>16} | "
          f"{'cold (new saver)':>16} | {'warm, shared':>12}")
    for n in sizes:
        print(_read_row(n, folder))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", default="100", help="comma-separated thread lengths in turns (default 100; '' to skip; the "
                    "full comparison: 100,1000)")
    ap.add_argument("--url", default=os.environ.get("CTXFOLD_TEST_POSTGRES_URL"), help="a PostgreSQL server")
    ap.add_argument("--read", default="1000,10000", help="message counts for the get_tuple measure ('' to skip)")
    ap.add_argument("--savers", default="", help="comma-separated subset of the savers")
    ap.add_argument("--threads", type=int, default=1, help="threads of --turns turns each, one after another on one "
                    "saver; the times are over every thread's turns, the bytes the first thread's (default 1)")
    ap.add_argument("--replay", type=int, default=0, help="also replay the calls of 10-turn threads outside a graph, "
                    "this many threads per saver (default 0: not)")
    ap.add_argument("--aio", type=int, default=0, help="also run the graph with ainvoke on the async savers, one "
                    "thread of this many turns per round (default 0: not)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each saver, interleaved; the timings printed are "
                    "their medians, each round's listed below (default 1)")
    ap.add_argument("--encrypted", action="store_true", help="every saver with LangGraph's EncryptedSerializer "
                    "(AES, pycryptodome): checkpoints, writes and ContextSaver's messages encrypted")
    args = ap.parse_args()
    if args.encrypted:
        global _SERDE
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

        _SERDE = EncryptedSerializer.from_pycryptodome_aes(key=b"ctxfold-bench-16")
    every = ["SqliteSaver", "ContextSaver/SQLite"] + (["PostgresSaver", "ContextSaver/PostgreSQL"] if args.url else [])
    every.append(_SHARED)
    if args.savers:
        every = [k for k in every if k in args.savers.split(",")]
    kinds = [k for k in every if k != _SHARED]  # (the replay, async and read measures)
    with tempfile.TemporaryDirectory() as folder:
        for turns in (int(t) for t in args.turns.split(",") if t):
            tenth = max(turns // 10, 1)
            each = f" of each of {args.threads} threads" if args.threads > 1 else ""
            print(f"\n{turns:,} turns (2 messages of ~400 chars each); early = first {tenth} turns{each}, late = last "
                  f"{tenth}")
            print(f"{'saver':<26} | {'database':>11} | {'B/turn early':>12} | {'B/turn late':>11} | "
                  f"{'ms/turn early':>13} | {'ms/turn late':>12} | {'wall s':>7}")
            # Rounds go saver after saver, so that a slow spell of the machine falls on all of them.
            runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in every}
            for _ in range(args.rounds):
                for kind in every:
                    runs[kind].append(_run(kind, turns, folder, args.url, args.threads))
            results = {kind: _median_run(rs) for kind, rs in runs.items()}
            for kind, r in results.items():
                print(f"{kind:<26} | {_mb(r['bytes']):>11} | {r['early_bpt']:>12,.0f} | {r['late_bpt']:>11,.0f} | "
                      f"{r['early_ms']:>13.2f} | {r['late_ms']:>12.2f} | {r['wall_s']:>7.1f}")
                if args.rounds > 1:
                    print(f"{'':<26}   rounds: ms/turn early " + ", ".join(f"{x['early_ms']:.2f}" for x in runs[kind])
                          + "; late " + ", ".join(f"{x['late_ms']:.2f}" for x in runs[kind]))
            shown = min(turns, _FIRST_TURNS)
            print(f"  each of the first {shown} turns of a thread, ms of checkpoint work (median of the rounds):")
            for kind, r in results.items():
                print(f"  {kind:<26} " + " ".join(f"{r[f'turn{n}_ms']:5.1f}" for n in range(shown)))
            for ours, stock in (("ContextSaver/SQLite", "SqliteSaver"), ("ContextSaver/PostgreSQL", "PostgresSaver"),
                                ("ContextSaver/SQLite", "PostgresSaver"), (_SHARED, "SqliteSaver")):
                if ours in results and stock in results:
                    o, s = results[ours], results[stock]
                    print(f"  {ours} vs {stock}: database 1/{s['bytes'] / o['bytes']:,.0f}; checkpoint work per "
                          f"turn {s['early_ms'] / o['early_ms']:,.1f}x less early, {s['late_ms'] / o['late_ms']:,.1f}x "
                          "less late")
        if args.replay:
            _replays(kinds, args.replay, folder, args.url)
        if args.aio:
            _aruns(kinds, args.aio, args.rounds, folder, args.url)
        if args.read:
            _reads([int(n) for n in args.read.split(",")], folder)


if __name__ == "__main__":
    main()
