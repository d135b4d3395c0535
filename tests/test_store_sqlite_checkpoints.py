"""A SQLite store checkpoints its write-ahead log on a thread of its own: commits no longer copy
the log back into the file themselves (below the bound), the thread does, every so many writes;
a store that only reads starts no thread; closing the store, or dropping it, stops the thread."""

from __future__ import annotations

import gc
import sqlite3
import time

from ctxfold import Context, Message, Store
from ctxfold.stores._sqlite_wal import BOUND, EVERY


def _runs_reach(store: Store, runs: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store._db._wal.runs >= runs:
            return True
        time.sleep(0.01)
    return False


def _save_turns(store: Store, turns: int, ctx: Context | None = None) -> Context:
    """``turns`` saves of ``ctx`` (a new context by default) in ``store``, a message each."""
    ctx = Context() if ctx is None else ctx
    for n in range(turns):
        ctx.add_message(Message.user(f"turn {n} " + "x" * 400))
        store.save(ctx)
    return ctx


def test_commits_leave_the_log_to_the_thread(tmp_path) -> None:
    path = tmp_path / "s.db"
    with Store(str(path)) as store:
        con = store._db._acquire()
        try:
            assert con.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == BOUND
        finally:
            store._db._release(con)
        ctx = _save_turns(store, 3)
        assert store._db._wal.state.thread is None  # fewer writes than EVERY: no thread yet
        size = path.stat().st_size
        _save_turns(store, 2 * EVERY, ctx)
        assert _runs_reach(store, 1)
        thread = store._db._wal.state.thread
        assert thread is not None and thread.name == "ctxfold-sqlite-checkpoint" and thread.is_alive()
        # the thread copied the log's pages into the file, which no commit did (BOUND not reached)
        assert path.stat().st_size > size
        assert len(store.load(ctx.id).messages) == 2 * EVERY + 3
    assert not thread.is_alive()  # closing the store stopped it


def test_a_store_that_only_reads_starts_no_thread(tmp_path) -> None:
    url = f"sqlite://{tmp_path}/s.db"
    with Store(url) as store:
        ctx = _save_turns(store, 5)
    with Store(url) as store:
        for _ in range(3 * EVERY):
            store.load(ctx.id)
            store.list()
        assert store._db._wal.state.thread is None


def test_a_store_nobody_closed_stops_its_thread(tmp_path) -> None:
    store = Store(f"sqlite://{tmp_path}/s.db")
    _save_turns(store, EVERY + 1)
    assert _runs_reach(store, 1)
    thread = store._db._wal.state.thread
    assert thread is not None
    del store
    gc.collect()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_writers_go_on_while_a_reader_keeps_the_thread_from_finishing(tmp_path) -> None:
    # A reader holding an old snapshot keeps a passive checkpoint from finishing; the writers
    # still go on, and every row is there once the reader lets go.
    path = tmp_path / "s.db"
    with Store(str(path)) as store:
        ctx = _save_turns(store, 2)
        reader = sqlite3.connect(str(path), isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM ctxfold_events").fetchone()
            _save_turns(store, 3 * EVERY, ctx)
            assert _runs_reach(store, 3)
        finally:
            reader.execute("COMMIT")
            reader.close()
        assert len(store.load(ctx.id).messages) == 3 * EVERY + 2
