"""Checkpointing a SQLite store's write-ahead log on a thread of its own, off the writers' path.

In WAL mode a commit appends its pages to the log; a *checkpoint* copies them back into the
database file and syncs it, so that the log can start over. By default SQLite runs one inside
whichever commit takes the log past 1,000 pages, and that commit waits for the copy and the
syncs (``docs/store.md`` has what moving them off the writers' path measured).

So a store's connections leave checkpoints to a ``WalCheckpointer``: every ``EVERY`` writes
its thread runs a passive checkpoint (which never waits for, nor blocks, readers and writers)
on a connection of its own. The connections still checkpoint by themselves past ``BOUND``
pages, SQLite's way: should this thread fall behind (a reader holding an old snapshot keeps a
passive checkpoint from finishing), the log stays bounded.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

__all__ = ["BOUND", "EVERY", "WalCheckpointer"]

# Writes between two checkpoints of the thread: a LangGraph checkpoint commit adds about ten
# pages to the log, a pending write two or three; so the log stays near SQLite's own 1,000.
EVERY = 100
# Pages past which a connection checkpoints in its own commit (SQLite's default is 1,000).
BOUND = 10_000


class _State:
    """What the thread shares with its owner (not the owner itself, so that a store nobody
    closed can still be collected while the thread waits)."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.stopped = False
        self.thread: threading.Thread | None = None
        self.runs = 0  # checkpoints the thread has run (tests read it)


class WalCheckpointer:
    """Passive checkpoints of one database file, on a daemon thread started at the first
    ``EVERY`` writes (a store that only reads starts none). ``connect`` opens a connection to
    the file; ``close`` stops the thread and waits for it."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self.state = _State()
        self._writes = 0
        self._lock = threading.Lock()

    @property
    def runs(self) -> int:
        return self.state.runs

    def wrote(self) -> None:
        """One write committed: every ``EVERY``, wake the thread."""
        self._writes += 1  # (a count lost to a race between two threads only delays a checkpoint)
        if self._writes >= EVERY:
            self._writes = 0
            self.checkpoint_soon()

    def checkpoint_soon(self) -> None:
        """Wake the thread (started now on first use)."""
        state = self.state
        if state.thread is None:
            with self._lock:
                if state.stopped:
                    return
                if state.thread is None:
                    state.thread = threading.Thread(target=_run, args=(self._connect, state), daemon=True,
                                                    name="ctxfold-sqlite-checkpoint")
                    state.thread.start()
        state.wake.set()

    def close(self) -> None:
        stop(self.state)


def stop(state: _State) -> None:
    """Stop the thread and wait for it (also the finalizer of a store nobody closed)."""
    state.stopped = True
    state.wake.set()
    thread = state.thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _run(connect: Callable[[], sqlite3.Connection], state: _State) -> None:
    con: sqlite3.Connection | None = None
    try:
        while True:
            state.wake.wait()
            state.wake.clear()
            if state.stopped:
                return
            try:
                if con is None:
                    con = connect()
                con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                state.runs += 1
            except sqlite3.Error:
                # A checkpoint that cannot run now (the file gone, the disk full) is the next
                # one's to do, or the writers' own past BOUND pages: nothing is lost by it.
                if con is not None:
                    con.close()
                    con = None
    finally:
        if con is not None:
            con.close()
