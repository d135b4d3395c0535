"""One turn of a writer racing others on one stored context, as the store's process tests
(tests/test_store_processes.py) and its PostgreSQL bench (benches/store_postgres.py) both run
it: load, add the turn, save; after a ConflictError, reload and redo it."""

from __future__ import annotations

import random
import time

from ctxfold import ConflictError, Message, Store


def add_turn_racing(store: Store, context_id: str, text: str) -> int:
    """Add one user message to the stored context, whatever the other writers do; returns how
    many conflicts it took."""
    lost = 0
    while True:
        ctx = store.load(context_id)
        ctx.add_message(Message.user(text))
        try:
            store.save(ctx)
            return lost
        except ConflictError:
            lost += 1
            # Jittered backoff, as any client retrying optimistic writes does: the losers of
            # a round do not all come back at once.
            time.sleep(random.uniform(0, 0.001 * min(lost, 8)))
