"""The store on both backends: round trips after every kind of operation, byte-exact
rows, O(turn) saves counted in rows, conflicts, listing, schema checks and corrupt rows."""

from __future__ import annotations

import json
import os
import threading

import pytest
from _stores import Sql
from ctxfold import (
    ConflictError,
    Context,
    ContextError,
    DecodeError,
    Message,
    Part,
    Store,
    StoredContext,
    StoreError,
    SystemPromptMessage,
    ToolDefinitionsMessage,
    Usage,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ODD = "nul \x00 astral 𝄞 😀 combining e\u0301 rtl \u202e quote \" backslash \\ line\u2028sep"


def as_reloaded(ctx: Context) -> dict:
    """What a store must give back: what a round trip through the file format gives."""
    return Context.deserialize(ctx.serialize()).serialize()


def check_round_trip(store: Store, ctx: Context) -> Context:
    store.save(ctx)
    assert ctx.stored_seq == ctx.next_seq
    back = store.load(ctx.id)
    assert back.serialize() == as_reloaded(ctx)
    assert back.events() == ctx.events()
    assert back.anchor_points == ctx.anchor_points and back.content_map == ctx.content_map
    assert back.stored_seq == ctx.next_seq
    return back


# Every kind of operation the file tests save (tests/test_persistence.py), one at a time.
OPERATIONS = [
    ("add_messages", lambda c: c.add_messages([
        Message.user(ODD, metadata={"k": ODD, "n": [1, 2.5, None, True]}),
        Message.assistant([Part.thinking("t " + ODD, signature="sig\x00"), Part.text("a")],
                          tool_calls=[{"id": "1", "name": "f", "arguments": "{ \"raw\" :1 }"}])])),
    ("add_message with source", lambda c: c.add_message(Message.tool("1", {"r": ODD}), source="memory")),
    ("log_event", lambda c: c.log_event("turn_end", {"turn": 1, "note": ODD})),
    ("replace_message_range", lambda c: c.replace_message_range(2, 3, Message.system("summary " + ODD))),
    ("add_anchor", lambda c: c.add_anchor("pin", 3)),
    ("append at an anchor", lambda c: c.append(Message.user("pinned"), "pin")),
    ("materialize", lambda c: c.materialize({"mem": "remember " + ODD, "tool_list": '[{"name":"a"}]'})),
    ("materialize again", lambda c: c.materialize({"mem": "other", "tool_filter": '["a"]'})),
    ("materialize the first text again", lambda c: c.materialize({"mem": "remember " + ODD})),
    ("patch_dangling_tool_calls", lambda c: (c.add_message(Message.assistant("x", tool_calls=[{"id": "d", "name": "g"}])),
                                             c.patch_dangling_tool_calls())),
    ("runtime fields", lambda c: (c.add_usage(Usage(requests=1, total_tokens=5)), c.add_tool_call({"id": "t", "x": ODD}),
                                  c.increment_iteration(), c.set_needs_response(False))),
    ("deps, redacted", lambda c: c.merge_deps({"api_key": "k", "AUTH_TOKEN": "t", "max_tokens": 5,
                                               "nested": {"secret": 1, "ok": ODD}, "fn": print})),
    ("system_prompt and agent_name", lambda c: (setattr(c, "system_prompt", ODD), setattr(c, "agent_name", ODD))),
    ("remove_message", lambda c: c.remove_message(3)),
    ("remove_message_range", lambda c: c.remove_message_range(2, 3)),
    ("add after removals", lambda c: c.add_message(Message.user("after " + ODD))),
    ("overlay (never saved)", lambda c: c.put_system_prompt_overlay("never saved")),
    ("clear", lambda c: c.clear()),
    ("add after clear", lambda c: c.add_message(Message.user("fresh"))),
]


def test_round_trip_after_every_kind_of_operation(store_url):
    with Store(store_url) as store:
        ctx = Context.create(SystemPromptMessage.create("s " + ODD, hooks=["mem"]), ToolDefinitionsMessage.create())
        check_round_trip(store, ctx)
        for name, op in OPERATIONS:
            op(ctx)
            back = check_round_trip(store, ctx)
            assert "never saved" not in json.dumps(back.serialize()), name
        assert back.events()[2].message.content == ODD and back.deps == {"max_tokens": 5, "nested": {"ok": ODD}}
        assert back.usage == ctx.usage and back.agent_name == ODD and back.needs_response is ctx.needs_response


def test_forks_and_windows_round_trip(store_url):
    with Store(store_url) as store:
        parent = Context.create(SystemPromptMessage.create("s", hooks=["mem"]))
        parent.add_messages([Message.user(f"m{i} {ODD}") for i in range(20)])
        parent.materialize({"mem": ODD})
        children = [parent.fork_insert_sequence(start=5), parent.rolling_sequence_window(3),
                    parent.rolling_token_window(60), parent.strip_thinking(),
                    Context.create(parent_context=parent)]
        check_round_trip(store, parent)
        for child in children:
            assert child is not None
            back = check_round_trip(store, child)
            assert back.origin_context_id == parent.id
        assert store.load(parent.id).children == parent.children


def test_stored_rows_are_the_file_format_byte_for_byte(store_url, tmp_path):
    with Store(store_url) as store:
        ctx = Context()
        OPERATIONS[0][1](ctx)
        OPERATIONS[6][1](ctx)
        store.save(ctx)
    with open(ctx.save(tmp_path), encoding="utf-8") as f:
        doc = json.load(f)
    s = Sql(store_url)
    rows = s.run("SELECT seq, data FROM ctxfold_events WHERE context_id = %s ORDER BY seq", ctx.id)
    assert [json.loads(d) for _, d in rows] == doc["events"]
    for _, d in rows:  # compact, escaped as the file writes it: \u0000 stays an escape
        assert d == json.dumps(json.loads(d), ensure_ascii=False, separators=(",", ":"))
    assert any("\\u0000" in d and "𝄞" in d for _, d in rows)
    content = s.run("SELECT hash, text FROM ctxfold_content WHERE context_id = %s ORDER BY ord", ctx.id)
    assert {h: json.loads(t) for h, t in content} == doc["content_map"]
    state = json.loads(s.run("SELECT state FROM ctxfold_contexts WHERE id = %s", ctx.id)[0][0])
    assert state == {k: v for k, v in doc.items() if k not in ("events", "messages", "content_map")}
    s.close()


# ---- O(turn) ------------------------------------------------------------------------------


def turn(i: int) -> list[Message]:
    return [Message.user(f"question {i}"),
            Message.assistant("calling", tool_calls=[{"id": f"c{i}", "name": "search", "arguments": "{}"}]),
            Message.tool(f"c{i}", f"result {i}"), Message.assistant(f"answer {i}")]


@pytest.mark.parametrize("history", [10, 3000])
def test_a_turn_writes_its_events_and_one_head_row(store_url, sql, history):
    with Store(store_url) as store:
        ctx = Context.create(SystemPromptMessage.create("s", hooks=["mem"]))
        ctx.add_messages([m for i in range(history // 4) for m in turn(i)])
        ctx.materialize({"mem": "x" * 10_000})
        store.save(ctx)
        sql.count_writes()
        ctx.add_messages(turn(-1))
        store.save(ctx)
        assert sql.writes() == {"ctxfold_events": 4, "ctxfold_contexts": 1}
        ctx.materialize({"mem": "new memory"})  # a changed content map writes its new entry only
        store.save(ctx)
        assert sql.writes() == {"ctxfold_events": 1, "ctxfold_contexts": 1, "ctxfold_content": 1}
        store.save(ctx)  # nothing new
        assert sql.writes() == {}
        back = store.load(ctx.id)
        store.save(back)  # nothing new since the load either
        assert sql.writes() == {}
        ctx.add_usage({"requests": 1})  # only state changed: the head row alone
        store.save(ctx)
        assert sql.writes() == {"ctxfold_contexts": 1}
        state = sql.run("SELECT length(state) FROM ctxfold_contexts WHERE id = %s", ctx.id)[0][0]
        assert state < 1000  # the state does not hold the transcript


# ---- conflicts ----------------------------------------------------------------------------


def test_two_writers_from_the_same_head_one_wins(store_url, sql):
    with Store(store_url) as store:
        ctx = Context.new(messages=[Message.user("start")])
        store.save(ctx)
        a, b = store.load(ctx.id), store.load(ctx.id)
        a.add_message(Message.user("from a"))
        b.add_message(Message.user("from b"))
        store.save(a)
        sql.count_writes()
        with pytest.raises(ConflictError, match="another writer saved first") as e:
            store.save(b)
        assert isinstance(e.value, ContextError) and sql.writes() == {}  # nothing written
        assert b.stored_seq == 1
        assert [m.content for m in store.load(ctx.id).messages] == ["start", "from a"]
        # Reload, redo the turn, save again.
        b = store.load(ctx.id)
        b.add_message(Message.user("from b"))
        store.save(b)
        assert [m.content for m in store.load(ctx.id).messages] == ["start", "from a", "from b"]
        with pytest.raises(ConflictError):  # a is stale now, even with nothing else new
            a.add_anchor("late", 0)
            store.save(a)


def test_a_context_not_from_the_store_cannot_take_a_stored_id(store_url):
    with Store(store_url) as store:
        ctx = Context.new(messages=[Message.user("x")])
        store.save(ctx)
        twin = Context.deserialize(ctx.serialize())  # same id, never stored
        assert twin.stored_seq is None
        with pytest.raises(ConflictError, match="already in the store"):
            store.save(twin)
        store.delete(ctx.id)
        ctx.add_message(Message.user("y"))
        with pytest.raises(ConflictError, match="not in the store"):  # deleted: not brought back
            store.save(ctx)
        ctx.stored_seq = None
        store.save(ctx)
        assert len(store.load(ctx.id)) == 2


def test_threads_share_a_store(store_url):
    with Store(store_url) as store:
        shared = Context()
        store.save(shared)
        errors: list[BaseException] = []

        def work(t: int) -> None:
            try:
                own = Context()
                for i in range(20):
                    own.add_message(Message.user(f"{t}-{i}"))
                    store.save(own)
                    while True:  # the shared context: load, add, save, retry on conflict
                        c = store.load(shared.id)
                        c.add_message(Message.user(f"{t}-{i}"))
                        try:
                            store.save(c)
                            break
                        except ConflictError:
                            pass
                assert len(store.load(own.id)) == 20
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        got = sorted(m.content for m in store.load(shared.id).messages)
        assert got == sorted(f"{t}-{i}" for t in range(6) for i in range(20))
        assert len(store.list(limit=1000)) == 7


def test_one_context_saved_from_two_threads_is_two_saves(store_url):
    with Store(store_url) as store:
        ctx = Context()
        store.save(ctx)

        def work() -> None:
            for i in range(30):
                ctx.add_message(Message.user(str(i)))
                store.save(ctx)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        store.save(ctx)
        assert store.load(ctx.id).serialize() == as_reloaded(ctx)


# ---- reading: list, in, delete ------------------------------------------------------------


def test_list_contains_delete(store_url):
    with Store(store_url) as store:
        assert store.list() == []
        ctxs = []
        for i in range(5):
            c = Context(agent_name=f"agent{i}")
            c.add_messages([Message.user("a"), Message.user("b")][: i % 3])
            store.save(c)
            ctxs.append(c)
        child = ctxs[0].rolling_sequence_window(0) or ctxs[0].fork_insert_sequence()
        store.save(child)
        ctxs[2].add_message(Message.user("latest"))
        store.save(ctxs[2])
        listed = store.list()
        assert all(isinstance(s, StoredContext) for s in listed)
        assert [s.id for s in listed][:2] == [ctxs[2].id, child.id]
        assert [s.updated_at for s in listed] == sorted((s.updated_at for s in listed), reverse=True)
        s2 = listed[0]
        assert (s2.next_seq, s2.message_count, s2.agent_name, s2.origin_context_id) == (3, 3, "agent2", None)
        assert s2.created_at == ctxs[2].created_at and s2.updated_at.tzinfo is not None
        assert next(s for s in listed if s.id == child.id).origin_context_id == ctxs[0].id
        assert [s.id for s in store.list(limit=2, offset=1)] == [s.id for s in listed[1:3]]
        assert store.list(limit=0) == []
        assert ctxs[3].id in store and "nope" not in store and 3 not in store
        store.delete(ctxs[3].id)
        assert ctxs[3].id not in store and len(store.list()) == 5
        with pytest.raises(KeyError):
            store.delete(ctxs[3].id)
        with pytest.raises(KeyError):
            store.load("nope")
        with pytest.raises(ValueError):
            store.list(limit=-1)
        with pytest.raises(TypeError):
            store.save("not a context")  # type: ignore[arg-type]


def test_urls(tmp_path):
    for url in (tmp_path / "a.db", str(tmp_path / "b.db"), f"sqlite://{tmp_path}/c.db",
                f"sqlite://{tmp_path}/new/folder/d.db"):
        with Store(url) as s:
            s.save(Context())
            assert len(s.list()) == 1 and s.url.startswith("sqlite:///")
    with pytest.raises(ValueError, match="unknown store URL"):
        Store("mysql://x/y")
    for driver in ("sqlite+aiosqlite:///./x.db", "postgresql+psycopg://h/db"):
        with pytest.raises(ValueError, match="unknown store URL"):
            Store(driver)
    with pytest.raises(ValueError):
        Store(":memory:")
    with pytest.raises(TypeError):
        Store(42)  # type: ignore[arg-type]


def test_sqlalchemys_relative_sqlite_urls_stay_relative(tmp_path, monkeypatch):
    # sqlite:///./x.db is ./x.db, as SQLAlchemy reads it; sqlite:///x.db is /x.db, as a file: URL
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    for url, path in (("sqlite:///./here.db", tmp_path / "work" / "here.db"),
                      ("sqlite:///../up.db", tmp_path / "up.db"),
                      ("sqlite://plain.db", tmp_path / "work" / "plain.db"),
                      (f"sqlite://{tmp_path}/abs.db", tmp_path / "abs.db")):
        with Store(url) as s:
            s.save(Context())
            assert s.url == f"sqlite://{path}"
        assert path.exists()


def test_sqlite_is_wal_and_durable_is_full(tmp_path):
    for durable, level in ((False, 1), (True, 2)):
        with Store(tmp_path / f"{durable}.db", durable=durable) as s:
            run = s._backend._run  # type: ignore[attr-defined]
            assert run(lambda con: con.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
            assert run(lambda con: con.execute("PRAGMA synchronous").fetchone()[0]) == level


# ---- schema -------------------------------------------------------------------------------


def test_a_schema_from_the_future_is_refused(store_url):
    Store(store_url).close()
    s = Sql(store_url)
    s.run("UPDATE ctxfold_schema SET version = 99")
    with pytest.raises(StoreError, match="version 99.*upgrade ctxfold"):
        Store(store_url)
    s.close()


def test_a_missing_table_is_a_clear_error(store_url):
    with Store(store_url) as store:
        ctx = Context.new(messages=[Message.user("x")])
        store.save(ctx)
        s = Sql(store_url)
        s.run("DROP TABLE ctxfold_content")
        with pytest.raises(StoreError, match="ctxfold_content"):
            store.load(ctx.id)
        with pytest.raises(StoreError, match="table ctxfold_content is missing"):
            Store(store_url)
        s.run("DROP TABLE ctxfold_schema")
        with pytest.raises(StoreError, match="without ctxfold_schema"):
            Store(store_url)
        s.close()


def test_a_closed_store_says_so(store_url):
    store = Store(store_url)
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.list()


# ---- corrupt rows -------------------------------------------------------------------------


def _stored(store_url) -> Context:
    with Store(store_url) as store:
        ctx = Context.create(SystemPromptMessage.create("s", hooks=["mem"]))
        ctx.add_messages([Message.user(f"u{i}") for i in range(5)])
        ctx.materialize({"mem": "m"})
        store.save(ctx)
    return ctx


@pytest.mark.parametrize(("sql_text", "message"), [
    ("UPDATE ctxfold_events SET data = 'garbage' WHERE seq = 3", r"seq 3: not a JSON value"),
    ("UPDATE ctxfold_events SET data = substr(data, 1, 20) WHERE seq = 2", r"seq 2: not a JSON value"),
    ("UPDATE ctxfold_events SET data = '1],\"x\":[2' WHERE seq = 2", r"seq 2: not a JSON value"),
    ("UPDATE ctxfold_events SET data = '\"x\"' WHERE seq = 4", r"seq 4: invalid type: string"),
    ("UPDATE ctxfold_events SET data = replace(data, 'user_message', 'nope') WHERE seq = 1",
     r"seq 1: type: unknown event type"),
    ("UPDATE ctxfold_events SET data = replace(data, '\"seq\":5', '\"seq\":6') WHERE seq = 5", r"seq 5: seq: expected 5"),
    ("UPDATE ctxfold_events SET data = replace(data, '\"role\":\"user\"', '\"role\":\"boss\"') WHERE seq = 2",
     r"seq 2: data\.message\.role"),
    ("DELETE FROM ctxfold_events WHERE seq = 3", r"the store's head is 7 but it holds 6 event rows"),
    ("UPDATE ctxfold_contexts SET next_seq = 9", r"the store's head is 9 but it holds 7 event rows"),
    ("UPDATE ctxfold_events SET seq = seq + 10 WHERE seq = 6", r"event rows skip from seq 6 to seq 16"),
    ("UPDATE ctxfold_contexts SET state = '{\"version\": 2, '", r"state: not a JSON object"),
    ("UPDATE ctxfold_contexts SET state = replace(state, '\"anchors\":[', '\"anchors\":[[\"x\",99],')",
     r"anchors"),
    ("UPDATE ctxfold_content SET text = 'not json'", r"content .*not a JSON string"),
])
def test_corrupt_rows_name_the_context_and_seq(store_url, sql_text, message):
    ctx = _stored(store_url)
    s = Sql(store_url)
    s.run(sql_text)
    s.close()
    with Store(store_url) as store, pytest.raises(DecodeError, match=f"context {ctx.id}: {message}"):
        store.load(ctx.id)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_corrupt_event_row_is_a_decode_error_or_loads_whole(sqlite_url, data):
    """Any change to any row's bytes: a DecodeError that names the context, or a context that
    is whole (it serializes, saves and loads again)."""
    if not os.path.exists(sqlite_url[len("sqlite://"):]):
        _stored(sqlite_url)
    s = Sql(sqlite_url)
    cid = s.run("SELECT id FROM ctxfold_contexts")[0][0]
    rows = s.run("SELECT seq, data FROM ctxfold_events WHERE context_id = %s ORDER BY seq", cid)
    seq, text = data.draw(st.sampled_from(rows))
    i = data.draw(st.integers(0, len(text)))
    new = data.draw(st.one_of(st.just(text[:i]), st.text(max_size=3).map(lambda t: text[:i] + t + text[i + 1:])))
    s.run("UPDATE ctxfold_events SET data = %s WHERE context_id = %s AND seq = %s", new, cid, seq)
    try:
        with Store(sqlite_url) as store:
            try:
                back = store.load(cid)
            except DecodeError as e:
                assert f"context {cid}" in str(e)
            else:
                again = Context.deserialize(back.serialize())
                assert again.serialize() == back.serialize()
    finally:
        s.run("UPDATE ctxfold_events SET data = %s WHERE context_id = %s AND seq = %s", text, cid, seq)
        s.close()


# ---- property: random histories, saved at random points -----------------------------------


def _op_strategy():
    msg = st.builds(lambda role, text: getattr(Message, role)(text),
                    st.sampled_from(["user", "assistant", "system"]), st.text(max_size=12))
    return st.one_of(
        st.tuples(st.just("add"), msg),
        st.tuples(st.just("extend"), st.lists(msg, max_size=5)),
        st.tuples(st.just("replace"), st.integers(0, 10), st.integers(0, 10), msg),
        st.tuples(st.just("remove"), st.integers(0, 10), st.integers(0, 10)),
        st.tuples(st.just("materialize"), st.text(max_size=8)),
        st.tuples(st.just("log"), st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=2)),
        st.tuples(st.just("usage"), st.integers(0, 100)),
        st.tuples(st.just("save")),
    )


def _apply(ctx: Context, op: tuple) -> None:
    kind = op[0]
    if kind == "add":
        ctx.add_message(op[1])
    elif kind == "extend":
        ctx.add_messages(op[1])
    elif kind == "replace" and len(ctx) and op[1] <= op[2]:
        ctx.replace_message_range(min(op[1], len(ctx) - 1), min(op[2], len(ctx) - 1), op[3])
    elif kind == "remove" and len(ctx) and op[1] <= op[2]:
        ctx.remove_message_range(min(op[1], len(ctx) - 1), min(op[2], len(ctx) - 1))
    elif kind == "materialize":
        ctx.materialize({"mem": op[1]})
    elif kind == "log":
        ctx.log_event("step_end", op[1])
    elif kind == "usage":
        ctx.add_usage({"input_tokens": op[1]})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op_strategy(), max_size=25))
def test_random_histories_round_trip(store_url, ops):
    with Store(store_url) as store:
        ctx = Context.create(SystemPromptMessage.create("s", hooks=["mem"]))
        for op in ops:
            if op[0] == "save":
                store.save(ctx)
            else:
                _apply(ctx, op)
        check_round_trip(store, ctx)
        # A loaded copy carries on where it was saved: more history, saved again.
        back = store.load(ctx.id)
        for op in ops[:5]:
            if op[0] != "save":
                _apply(back, op)
        check_round_trip(store, back)
