"""``Store.head`` and ``Store.refresh`` (docs/store.md) on both
backends: a context caught up with what another Store instance saved equals a fresh load,
after every kind of operation; nothing new costs one query; a corrupt row or a bad state
leaves the context as it was; another lineage is a ConflictError."""

from __future__ import annotations

import pytest
from _stores import Sql
from ctxfold import ConflictError, Context, DecodeError, Message, Part, Store, SystemPromptMessage, Usage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def same_as_loaded(ctx: Context, store: Store) -> None:
    back = store.load(ctx.id)
    assert ctx.serialize() == back.serialize()
    assert ctx.events() == back.events()
    assert ctx.messages == back.messages
    assert ctx.anchor_points == back.anchor_points and ctx.content_map == back.content_map
    assert ctx.stored_seq == back.stored_seq


# Operations a writer makes between saves; each may be a no-op on a short transcript.
def _op(kind: str, n: int):
    def run(c: Context) -> None:
        size = c.message_count
        if kind == "add":
            c.add_messages([Message.user(f"u{n} \x00 𝄞"), Message.assistant([Part.text(f"a{n}")])])
        elif kind == "remove" and size:
            c.remove_message(n % size)
        elif kind == "replace" and size > 1:
            first = n % (size - 1)
            c.replace_message_range(first, first + 1, Message.system(f"summary {n}"))
        elif kind == "materialize":
            c.materialize({"mem": f"memory {n}"})
        elif kind == "clear":
            c.clear()
        elif kind == "log":
            c.log_event("turn_end", {"turn": n})
        elif kind == "anchor" and size:
            name = f"pin{n}"
            if name not in dict(c.anchor_points):
                c.add_anchor(name, n % (size + 1))
        elif kind == "runtime":
            c.add_usage(Usage(requests=1, total_tokens=n))
            c.increment_iteration()
        elif kind == "fork":
            c.rolling_sequence_window(1)  # the parent lists the child: a change of state only
    return run


OPS = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace", "materialize", "clear", "log", "anchor",
                                          "runtime", "fork"]), st.integers(0, 50)), max_size=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.tuples(OPS, st.booleans()), min_size=1, max_size=5))
def test_refresh_after_another_stores_saves_equals_load(store_url, turns):
    with Store(store_url) as writer_store, Store(store_url) as reader_store:
        writer = Context.create(SystemPromptMessage.create("s", hooks=["mem"]))
        writer_store.save(writer)
        reader = reader_store.load(writer.id)
        for ops, read_now in turns:
            for kind, n in ops:
                _op(kind, n)(writer)
            writer_store.save(writer)
            if read_now:
                before = reader.next_seq
                applied = reader_store.refresh(reader)
                assert applied == writer.next_seq - before
                same_as_loaded(reader, reader_store)
        reader_store.refresh(reader)
        same_as_loaded(reader, reader_store)
        assert reader_store.head(writer.id) == writer.next_seq
        # Caught up, it saves where the writer left off.
        reader.add_message(Message.user("from the reader"))
        reader_store.save(reader)
        with pytest.raises(ConflictError):
            writer.add_message(Message.user("stale"))
            writer_store.save(writer)


def test_head(store_url):
    with Store(store_url) as store:
        assert store.head("nope") is None
        ctx = Context()
        store.save(ctx)
        assert store.head(ctx.id) == 0
        ctx.add_messages([Message.user("a"), Message.user("b")])
        store.save(ctx)
        assert store.head(ctx.id) == 2
        with pytest.raises(TypeError):
            store.head(3)  # type: ignore[arg-type]


def test_nothing_new_is_one_query(sqlite_url):
    with Store(sqlite_url) as a, Store(sqlite_url) as b:
        ctx = Context(messages=[Message.user(str(i)) for i in range(100)])
        a.save(ctx)
        reader = b.load(ctx.id)
        statements: list[str] = []
        b._backend._run(lambda con: con.set_trace_callback(statements.append))  # type: ignore[attr-defined]
        assert b.refresh(reader) == 0
        assert len(statements) == 1 and statements[0].lstrip().upper().startswith("SELECT NEXT_SEQ, STATE")
        statements.clear()
        ctx.add_message(Message.user("new"))
        a.save(ctx)
        assert b.refresh(reader) == 1
        events_read = [s for s in statements if "ctxfold_events" in s]
        assert len(events_read) == 1 and "seq >= 99" in events_read[0]


def test_a_corrupt_row_leaves_the_context_as_it_was(store_url):
    with Store(store_url) as a, Store(store_url) as b:
        ctx = Context(messages=[Message.user("a")])
        a.save(ctx)
        reader = b.load(ctx.id)
        before = reader.serialize()
        ctx.add_messages([Message.user("b"), Message.user("c")])
        ctx.materialize({"mem": "x"})
        a.save(ctx)
        s = Sql(store_url)

        def refused(match: str) -> None:
            with pytest.raises(DecodeError, match=match):
                b.refresh(reader)
            assert reader.serialize() == before and reader.stored_seq == 1 and reader.iteration == 0

        def event_row(seq: int) -> str:
            return s.run("SELECT data FROM ctxfold_events WHERE context_id = %s AND seq = %s", ctx.id, seq)[0][0]

        def set_event_row(seq: int, data: str) -> None:
            s.run("UPDATE ctxfold_events SET data = %s WHERE context_id = %s AND seq = %s", data, ctx.id, seq)

        try:
            good, good3 = event_row(2), event_row(3)
            set_event_row(2, good.replace('"role":"user"', '"role":"boss"'))
            refused(f"context {ctx.id}: seq 2: .*role")
            set_event_row(2, good)
            set_event_row(3, '{"seq":3,')
            refused(f"context {ctx.id}: seq 3")
            s.run("DELETE FROM ctxfold_events WHERE context_id = %s AND seq = 3", ctx.id)
            refused("head is 4 but it holds 2 event rows from seq 1")
            s.run("INSERT INTO ctxfold_events (context_id, seq, data) VALUES (%s, 3, %s)", ctx.id, good3)
            # A runtime field of the wrong type in the state: refused, nothing changed.
            state = s.run("SELECT state FROM ctxfold_contexts WHERE id = %s", ctx.id)[0][0]
            s.run("UPDATE ctxfold_contexts SET state = %s WHERE id = %s",
                  state.replace('"iteration":0', '"iteration":"zero"'), ctx.id)
            refused(f"context {ctx.id}: state: iteration: wrong type str")
            s.run("UPDATE ctxfold_contexts SET state = %s WHERE id = %s", state, ctx.id)
            assert b.refresh(reader) == 3
            same_as_loaded(reader, b)
        finally:
            s.close()


def test_another_lineage_is_a_conflict(store_url, tmp_path):
    with Store(store_url) as a, Store(store_url) as b:
        ctx = Context(messages=[Message.user("a"), Message.user("b")])
        a.save(ctx)
        reader = b.load(ctx.id)
        # Never stored, or from another store.
        with pytest.raises(ConflictError, match="not saved to or loaded from"):
            b.refresh(Context())
        with Store(tmp_path / "other.db") as other:
            with pytest.raises(ConflictError, match="not saved to or loaded from"):
                other.refresh(reader)
        # Unsaved local events: fine while the store has not moved, a conflict once it has.
        reader.add_message(Message.user("local"))
        assert b.refresh(reader) == 0
        ctx.add_message(Message.user("remote"))
        a.save(ctx)
        with pytest.raises(ConflictError, match="unsaved events from seq 2"):
            b.refresh(reader)
        reader = b.load(ctx.id)
        # Deleted, then deleted and saved anew under the same id (same length, longer).
        a.delete(ctx.id)
        with pytest.raises(ConflictError, match="not in the store"):
            b.refresh(reader)
        for extra in (0, 2):
            anew = Context.deserialize({"version": 2, "id": ctx.id})
            anew.add_messages([Message.user(str(i)) for i in range(3 + extra)])
            a.save(anew)
            with pytest.raises(ConflictError, match="another"):
                b.refresh(reader)
            assert reader.next_seq == 3 and reader.stored_seq == 3
            a.delete(ctx.id)
        # Same id and created_at, another history: the shared event is compared.
        twin = Context.deserialize({"version": 2, "id": ctx.id, "created_at": reader.serialize()["created_at"]})
        twin.add_messages([Message.user(str(i)) for i in range(5)])
        a.save(twin)
        with pytest.raises(ConflictError, match="its seq 2 is not this context's"):
            b.refresh(reader)


def test_forks_and_their_parents(store_url):
    with Store(store_url) as a, Store(store_url) as b:
        parent = Context(messages=[Message.user(str(i)) for i in range(6)])
        a.save(parent)
        reader = b.load(parent.id)
        child = parent.rolling_sequence_window(2)
        assert child is not None
        a.save(parent)  # only the state changed: the parent lists the child
        a.save(child)
        assert b.refresh(reader) == 0
        assert reader.children == [child.id]
        same_as_loaded(reader, b)
        child_reader = b.load(child.id)
        child.add_message(Message.user("in the child"))
        a.save(child)
        assert b.refresh(child_reader) == 1
        same_as_loaded(child_reader, b)
        assert child_reader.origin_context_id == parent.id


def test_rewind_drops_unsaved_events(store_url):
    with Store(store_url) as store:
        ctx = Context(messages=[Message.user("a"), Message.user("b")])
        ctx.materialize({"mem": "x"})
        store.save(ctx)
        before = ctx.serialize()
        point = ctx._savepoint()
        ctx.add_message(Message.user("c"))
        ctx.remove_message_range(0, 1)
        ctx.materialize({"mem": "y"})
        ctx.add_anchor("late", 1)
        ctx.clear()
        ctx._rewind(point)
        after = ctx.serialize()
        for d in (before, after):
            d.pop("started_at", None)
        assert after == before
        same_as_loaded(ctx, store)
        with pytest.raises(ValueError):
            Context()._rewind(point)
