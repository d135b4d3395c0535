"""Opening SQLite connections while other processes open and write the same file: setting the
journal mode can be refused at once ("database is locked", without the busy handler's wait)
while another process opens the file or recovers its WAL, so it is tried again."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest
from ctxfold import Context, Message, Store
from ctxfold.stores._sqlite import _retry_locked

OPENER = """
import sys
from ctxfold import Context, Message, Store
url, worker = sys.argv[1], sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # all start together
for n in range(25):
    with Store(url) as store:  # a new connection each time, to a file others are writing
        ctx = Context()
        ctx.add_message(Message.user(f"{worker} {n}"))
        store.save(ctx)
print("done", flush=True)
"""


def test_processes_opening_one_new_file_at_once_all_save(tmp_path) -> None:
    url = f"sqlite://{tmp_path}/new.db"
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, url, f"w{w}"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(8)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Store(url) as store:
        assert len(store.list(limit=1000)) == 200


def test_a_locked_database_is_tried_again() -> None:
    calls = []

    def op() -> None:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    _retry_locked(op)
    assert len(calls) == 3


def test_other_errors_and_a_lock_past_the_timeout_are_raised() -> None:
    def broken() -> None:
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _retry_locked(broken)

    def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    t0 = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _retry_locked(locked, timeout=0.05)
    assert time.monotonic() - t0 < 5


def test_a_store_on_an_open_file_still_works(tmp_path) -> None:
    url = f"sqlite://{tmp_path}/x.db"
    with Store(url) as a, Store(url) as b:
        ctx = Context()
        ctx.add_message(Message.user("hi"))
        a.save(ctx)
        assert b.load(ctx.id).messages == ctx.messages
