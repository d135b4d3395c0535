"""The cycle collector paused while many objects are built at once (a cold read of a long
log): it runs again afterwards exactly when it ran before, whatever the threads or errors; a
program that turned it off keeps it off; and what is built is the same."""

from __future__ import annotations

import gc
import threading

import pytest
from ctxfold import Context, Message, Store
from ctxfold._gc_pause import BULK, collector_paused


@pytest.fixture(autouse=True)
def _collector_back_on():
    yield
    gc.enable()


def test_paused_inside_and_back_on_after_even_on_error() -> None:
    gc.enable()
    with collector_paused(BULK):
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with collector_paused(BULK):
            1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_small_build_does_not_pause() -> None:
    gc.enable()
    with collector_paused(BULK - 1):
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_program_that_turned_it_off_keeps_it_off() -> None:
    gc.disable()
    with collector_paused(BULK):
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_threads_share_one_pause() -> None:
    gc.enable()
    inside = threading.Barrier(8)
    leave = threading.Event()
    seen: list[bool] = []

    def build() -> None:
        with collector_paused(BULK):
            inside.wait()
            leave.wait()
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    leave.set()
    for t in threads:
        t.join()
    assert seen == [False] * 8
    assert gc.isenabled()


def test_a_long_load_is_the_same_and_leaves_the_collector_on(tmp_path) -> None:
    gc.enable()
    ctx = Context()
    ctx.add_messages([Message("user" if i % 2 else "assistant", f"m{i}", id=f"m{i}") for i in range(BULK * 2)])
    with Store(tmp_path / "s.db") as store:
        store.save(ctx)
        assert store.load(ctx.id).messages == ctx.messages
    assert gc.isenabled()
