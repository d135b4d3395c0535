"""The viewer's model against the log: where each shown message came from, what a summary
stands for, and the difference between two seqs, over random histories."""

from __future__ import annotations

from _viewer import origins
from ctxfold import Context, Message
from ctxfold.viewer import ContextView
from hypothesis import given, settings
from hypothesis import strategies as st


def test_one_object_in_two_events_is_replayed():
    m = Message.user("same object")
    ctx = Context(messages=[m, Message.user("x"), m])
    ctx.replace_message(1, Message.user("y"))
    view = ContextView(ctx)
    for seq in range(ctx.next_seq + 1):
        assert [r.seq for r in view.transcript(seq).rows] == origins(ctx, seq)


ops = st.lists(st.tuples(st.sampled_from(["add", "insert", "replace", "remove", "bookkeeping"]),
                         st.integers(0, 50), st.integers(0, 3)), max_size=25)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_origins_positions_and_compactions_follow_the_log(steps):
    ctx = Context()
    for i, (op, at, width) in enumerate(steps):
        n = len(ctx)
        if op == "add" or n == 0:
            ctx.add_message(Message.user(f"m{i} " + "word " * at))
        elif op == "insert":
            ctx.add_anchor(f"a{i}", at % (n + 1))
            ctx.append(Message.assistant(f"inserted {i}"), f"a{i}")
        elif op == "replace":
            first = at % n
            ctx.replace_message_range(first, min(n - 1, first + width), Message.assistant(f"summary {i}"))
        elif op == "remove":
            first = at % n
            ctx.remove_message_range(first, min(n - 1, first + width))
        else:
            ctx.log_event("turn_start", {"i": i})
    loaded = Context.deserialize(ctx.serialize())
    for c in (ctx, loaded):
        view = ContextView(c)
        events = c.serialize()["events"]
        for seq in range(c.next_seq + 1):
            t = view.transcript(seq)
            at = c.messages_at(seq)
            assert [r.message for r in t.rows] == at
            assert [r.position for r in t.rows] == list(range(len(at)))
            assert [r.seq for r in t.rows] == origins(c, seq)
            for r in t.rows:
                d = events[r.seq]["data"]
                if d["op"] == "replace":
                    shadowed = c.messages_at(r.seq)[d["first"]:d["last"] + 1]
                    assert r.compaction is not None and r.compaction.messages == len(shadowed)
                    assert r.compaction.tokens == sum(m.count_tokens() for m in shadowed)
                else:
                    assert r.compaction is None
        for a in range(c.next_seq + 1):
            assert view.diff(a).unchanged == c.changed_since(a)


def test_a_message_shown_but_not_in_the_fold_has_no_position():
    ctx = Context(messages=[Message.user("hi"), Message.assistant("hello")])
    ctx.put_system_prompt_overlay("Today is Monday.")  # no leading system message: a new one is shown
    view = ContextView(ctx)
    rows = view.transcript().rows
    assert [r.position for r in rows] == [None, 0, 1] and [r.seq for r in rows] == [None, 0, 1]
    assert rows[0].message.text == "Today is Monday." and rows[0].to_json()["position"] is None
    assert view.transcript().total_tokens == ctx.total_token_count() == sum(r.tokens for r in rows)
    assert [r.position for r in view.transcript(seq=1).rows] == [0]  # the past has no overlay
    # On a leading system message the overlay changes its text, not its position or origin.
    ctx2 = Context(messages=[Message.system("Be brief."), Message.user("hi")])
    ctx2.put_system_prompt_overlay("Today is Monday.")
    rows = ContextView(ctx2).transcript().rows
    assert [r.position for r in rows] == [0, 1] and [r.seq for r in rows] == [0, 1]
    assert rows[0].message.text == "Be brief.\n\nToday is Monday."
