"""Building many objects at once with Python's cycle collector paused.

A cold read of a long transcript builds tens of thousands of objects (LangChain messages,
their dicts and lists) in one go. Every few hundred new container objects CPython runs its
cycle collector, and as the new objects survive, the older generations' collections walk
everything the process holds: in a read of 10,000 messages into LangChain objects that
walking took more than half the time (about 320 ms with the collector, 128 ms without, on a
2-core machine). The objects built hold no reference cycles, so pausing the collector for the
build loses nothing; it runs again right after, as before.

The pause is counted, so threads that build at once share one pause, and the collector is
re-enabled only if it was enabled when the first of them began (a program that turned it off
keeps it off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BULK", "collector_paused"]

# From how many objects built at once the collector is paused.
BULK = 256

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused(count: int) -> Iterator[None]:
    """The cycle collector off inside the block when it builds ``count`` objects or more
    (``BULK``); below that the pause would cost more than it saves (see the module's text)."""
    global _depth, _was_enabled
    if count < BULK:
        yield
        return
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
