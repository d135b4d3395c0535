"""ContextSaver's message channels: every LangChain message comes back ``==`` (class, id,
content, tool_calls, additional_kwargs, response_metadata, usage_metadata, …), and any sequence
of lists put as checkpoints — appends, replaces by id, removals, reorders, inserts in the middle,
branches from old checkpoints — reads back exactly, each checkpoint costing log events for what
changed only."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

pytest.importorskip("langgraph")

from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402

pytestmark = pytest.mark.frameworks

CALL = {"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}
RICH: list[BaseMessage] = [
    SystemMessage("be brief", id="s1"),
    SystemMessage("dev", id="s2", additional_kwargs={"__openai_role__": "developer"}),
    HumanMessage("hi", id="h1", name="ann", additional_kwargs={"k": [1, {"a": None}]}, response_metadata={"r": 1}),
    HumanMessage("no id"),
    HumanMessage([{"type": "text", "text": "see"}, {"type": "image", "url": "https://x/y.png"},
                  {"type": "image", "base64": "AAAA", "mime_type": "image/png"}, "plain"], id="h2"),
    HumanMessage([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}], id="h3"),
    AIMessage("answer", id="a1", response_metadata={"model_name": "m", "finish_reason": "stop"},
              usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                              "input_token_details": {"cache_read": 1}, "output_token_details": {"reasoning": 2}}),
    AIMessage("", id="a2", tool_calls=[CALL, {**CALL, "id": "c2", "args": {}}],
              additional_kwargs={"tool_calls": [{"id": "c1", "type": "function",
                                                 "function": {"name": "f", "arguments": "{\"x\":  1}"}}]}),
    AIMessage("", id="a3", invalid_tool_calls=[{"name": None, "args": "{", "id": "c3", "error": "bad",
                                                "type": "invalid_tool_call"}]),
    AIMessage([{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "ok"},
               {"type": "tool_use", "id": "c4", "name": "f", "input": {"x": 1}}], id="a4",
              tool_calls=[{**CALL, "id": "c4"}]),
    AIMessage([{"type": "reasoning", "reasoning": "r", "id": "rs_1"}, {"type": "text", "text": "t",
                                                                       "annotations": []}], id="a5"),
    AIMessage("", id="a6", tool_calls=[{**CALL, "id": None}]),  # a call without an id
    AIMessage("t", id="a7", additional_kwargs={"at": datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)}),  # not JSON
    AIMessageChunk("chunk", id="a8"),
    ToolMessage("r", tool_call_id="c1", id="t1", name="f", artifact={"rows": [1, 2]}),
    ToolMessage([{"type": "text", "text": "r"}], tool_call_id="c2", id="t2", status="error"),
    ToolMessage("r", tool_call_id="c9", id="t3", artifact=b"\x00bytes"),
    ChatMessage("x", role="critic", id="x1"),
    ChatMessage("x", role="user", id="x2"),
    FunctionMessage("x", name="fn", id="x3"),
    HumanMessage("x", id="h5", example=True),
]


def _put(saver: ContextSaver, thread: str, messages: list[BaseMessage], parent: str | None, n: int) -> str:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages, "other": {"n": n}}
    cp["channel_versions"] = {"messages": f"{n:032}.0", "other": f"{n:032}.0"}
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if parent:
        conf["checkpoint_id"] = parent
    saver.put({"configurable": conf}, cp, {"step": n}, dict(cp["channel_versions"]))
    return cp["id"]


def _read(saver: ContextSaver, thread: str, checkpoint_id: str) -> list[BaseMessage]:
    t = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}})
    assert t is not None
    return t.checkpoint["channel_values"]["messages"]


def _exact(got: list[BaseMessage], want: list[BaseMessage]) -> None:
    assert got == want
    assert [type(m) for m in got] == [type(m) for m in want]
    for g, w in zip(got, want):
        assert g.model_dump() == w.model_dump()


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    s = ContextSaver() if request.param == "memory" else ContextSaver(f"sqlite://{tmp_path}/t.db")
    yield s
    s.close()


def test_every_message_kind_reads_back_exactly(saver, tmp_path) -> None:
    ids = [_put(saver, "t", RICH[: n + 1], None, n) for n in range(len(RICH))]
    for n, cid in enumerate(ids):
        _exact(_read(saver, "t", cid), RICH[: n + 1])
    if saver.store is not None:  # a fresh saver on the same file: nothing cached
        with ContextSaver(saver.store.url) as again:
            for n, cid in enumerate(ids):
                _exact(_read(again, "t", cid), RICH[: n + 1])


# ---- any sequence of lists ---------------------------------------------------------------------

_pool = [HumanMessage(f"m{i} " * 5, id=f"m{i}") for i in range(12)] + [AIMessage(f"v{i}", id=f"m{i}") for i in range(12)]
_edit = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 23)),
    st.tuples(st.just("replace"), st.integers(0, 23)),
    st.tuples(st.just("remove"), st.integers(0, 11)),
    st.tuples(st.just("clear"), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 23)),
    st.tuples(st.just("swap"), st.integers(0, 11)),
    st.tuples(st.just("branch"), st.integers(0, 20)),
    st.tuples(st.just("edit"), st.integers(0, 23)),
)


def _apply(cur: list[BaseMessage], op: str, k: int) -> list[BaseMessage]:
    out = list(cur)
    ids = [m.id for m in out]
    msg = _pool[k]
    if op == "append" and msg.id not in ids:
        out.append(msg)
    elif op == "replace" and msg.id in ids:
        out[ids.index(msg.id)] = msg
    elif op == "remove" and out:
        del out[k % len(out)]
    elif op == "clear":
        out = []
    elif op == "insert" and msg.id not in ids:
        out.insert(k % (len(out) + 1), msg)
    elif op == "swap" and len(out) > 1:
        i = k % (len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_edit, min_size=1, max_size=25))
def test_any_sequence_of_lists_reads_back_exactly(edits) -> None:
    saver = ContextSaver()
    thread = "t"
    puts: list[tuple[str, list[BaseMessage]]] = []
    cur: list[BaseMessage] = [_pool[0]]
    parent = _put(saver, thread, cur, None, 0)
    puts.append((parent, cur))
    for n, (op, k) in enumerate(edits, 1):
        if op == "branch":  # continue from an older checkpoint
            parent, cur = puts[k % len(puts)]
            continue
        if op == "edit":  # a message of the list read back, changed in place, put again
            cur = _read(saver, thread, parent)
            if cur:
                edited = cur[k % len(cur)]
                edited.content = f"{edited.content} edited {n}"
                edited.additional_kwargs.setdefault("edits", []).append(n)
        else:
            cur = _apply(cur, op, k)
        parent = _put(saver, thread, cur, parent, n)
        puts.append((parent, cur))
        _exact(_read(saver, thread, parent), cur)
    for cid, want in puts:
        _exact(_read(saver, thread, cid), want)
    log = saver._logs._open['["langgraph", "t", "", "messages"]'].ctx
    assert log.messages == log.messages_at(log.next_seq)


def test_a_checkpoint_logs_only_what_changed() -> None:
    saver = ContextSaver()
    msgs = [HumanMessage(f"q{i}", id=f"h{i}") for i in range(50)]
    cid = _put(saver, "t", msgs, None, 0)
    log = saver._logs._open['["langgraph", "t", "", "messages"]'].ctx
    assert log.next_seq == 50
    cid = _put(saver, "t", [*msgs, AIMessage("a", id="a")], cid, 1)  # one appended: one insert
    assert log.next_seq == 51
    edited = [*msgs[:10], HumanMessage("q10 edited", id="h10"), *msgs[11:], AIMessage("a", id="a")]
    cid = _put(saver, "t", edited, cid, 2)  # one replaced by id: one replace event
    assert log.next_seq == 52 and log.events()[-1].data.get("op") != "remove"
    cid = _put(saver, "t", edited[:5] + edited[25:], cid, 3)  # twenty removed: one remove event
    assert log.next_seq == 53 and log.events()[-1].type == "remove"
    _put(saver, "t", [], cid, 4)  # all removed: one remove event
    assert log.next_seq == 54


def test_a_list_that_stops_being_messages_is_stored_through_serde(saver) -> None:
    # The test of "a list of messages" skips what the log already holds: the same objects
    # with something else appended, or put in the middle, must still be seen as not messages.
    msgs = [HumanMessage(f"q{i}", id=f"h{i}") for i in range(5)]
    first = _put(saver, "t", msgs, None, 0)
    tail = _put(saver, "t", [*msgs, {"not": "a message"}], first, 1)  # type: ignore[list-item]
    middle = _put(saver, "t", [*msgs[:2], "text", *msgs[2:]], first, 2)  # type: ignore[list-item]
    assert _read(saver, "t", tail) == [*msgs, {"not": "a message"}]
    assert _read(saver, "t", middle) == [*msgs[:2], "text", *msgs[2:]]
    _exact(_read(saver, "t", first), msgs)
    again = _put(saver, "t", [*msgs, AIMessage("a", id="a")], middle, 3)  # messages again
    _exact(_read(saver, "t", again), [*msgs, AIMessage("a", id="a")])


def test_a_new_saver_builds_a_long_list_exactly(tmp_path) -> None:
    # A first read of a long log builds every message at once (the cycle collector paused
    # meanwhile, and on again after).
    import gc

    url = f"sqlite://{tmp_path}/t.db"
    msgs = [m for i in range(300) for m in (HumanMessage(f"q{i}", id=f"h{i}"),
                                            AIMessage(f"a{i}", id=f"a{i}", usage_metadata={
                                                "input_tokens": i, "output_tokens": 1, "total_tokens": i + 1}))]
    with ContextSaver(url) as writer:
        cid = _put(writer, "t", msgs, None, 0)
    gc.enable()
    with ContextSaver(url) as reader:
        _exact(_read(reader, "t", cid), msgs)
    assert gc.isenabled()


# ---- threads: copy, delete, prune, runs -------------------------------------------------------

LOG = '["langgraph", "{}", "", "messages"]'


def _thread(saver: ContextSaver, thread: str, turns: int, run: str = "r") -> list[tuple[str, list[BaseMessage]]]:
    out: list[tuple[str, list[BaseMessage]]] = []
    msgs: list[BaseMessage] = []
    parent = None
    for n in range(turns):
        msgs = [*msgs, HumanMessage(f"q{n}", id=f"{thread}-h{n}"), AIMessage(f"a{n}", id=f"{thread}-a{n}")]
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": msgs}
        cp["channel_versions"] = {"messages": f"{n:032}.0"}
        conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
        if parent:
            conf["checkpoint_id"] = parent
        saver.put({"configurable": conf}, cp, {"step": n, "run_id": f"{run}{n % 2}"}, dict(cp["channel_versions"]))
        parent = cp["id"]
        out.append((parent, msgs))
    return out


def test_copy_thread_forks_the_log(saver) -> None:
    src = _thread(saver, "src", 3)
    saver.copy_thread("src", "dst")
    for cid, want in src:
        _exact(_read(saver, "dst", cid), want)
    # the copy goes on by itself: the source does not see it
    more = [*src[-1][1], HumanMessage("only in dst", id="x")]
    new = _put(saver, "dst", more, src[-1][0], 9)
    _exact(_read(saver, "dst", new), more)
    for cid, want in src:
        _exact(_read(saver, "src", cid), want)
    if saver.store is not None:
        assert saver.store.load(LOG.format("dst")).origin_context_id == LOG.format("src")
        with ContextSaver(saver.store.url) as fresh:
            _exact(_read(fresh, "dst", new), more)


def test_delete_thread_deletes_its_logs(saver) -> None:
    _thread(saver, "gone", 2)
    kept = _thread(saver, "kept", 2)
    saver.delete_thread("gone")
    assert saver.get_tuple({"configurable": {"thread_id": "gone", "checkpoint_ns": ""}}) is None
    if saver.store is not None:
        assert LOG.format("gone") not in saver.store and LOG.format("kept") in saver.store
    _exact(_read(saver, "kept", kept[-1][0]), kept[-1][1])


def test_a_thread_made_anew_is_never_read_at_the_old_logs_seqs(tmp_path) -> None:
    url = f"sqlite://{tmp_path}/t.db"
    with ContextSaver(url) as a, ContextSaver(url) as b:
        first = _thread(a, "t", 3)
        _exact(_read(b, "t", first[-1][0]), first[-1][1])  # b now holds the log
        a.delete_thread("t")
        again = [HumanMessage("other", id="o1"), AIMessage("history", id="o2")]
        cid = _put(a, "t", again, None, 0)
        _exact(_read(b, "t", cid), again)


def test_a_list_without_parent_on_a_thread_another_saver_started_is_a_fork(tmp_path) -> None:
    # b has not opened the thread's main log: it takes it as new, the store refuses that save,
    # and the retry finds the log and forks from it; the main log is left as it was
    url = f"sqlite://{tmp_path}/t.db"
    with ContextSaver(url) as a, ContextSaver(url) as b:
        first = _thread(a, "t", 2)
        assert a.store is not None
        main_seq = a.store.load(LOG.format("t")).next_seq
        other = [HumanMessage("from b", id="b1"), AIMessage("its own", id="b2")]
        cid = _put(b, "t", other, None, 9)
        assert a.store.load(LOG.format("t")).next_seq == main_seq
        assert json.dumps(["langgraph", "t", "", "messages", cid]) in a.store
        for saver in (a, b):
            _exact(_read(saver, "t", cid), other)
            _exact(_read(saver, "t", first[-1][0]), first[-1][1])


def test_prune_and_delete_for_runs_keep_what_is_left_exact(saver) -> None:
    cps = _thread(saver, "p", 4, run="run")
    saver.delete_for_runs(["run0"])
    left = [c for c in saver.list({"configurable": {"thread_id": "p"}})]
    assert {t.metadata["run_id"] for t in left} == {"run1"}
    for t in left:
        want = dict(cps)[t.config["configurable"]["checkpoint_id"]]
        _exact(t.checkpoint["channel_values"]["messages"], want)
    saver.prune(["p"])
    (only,) = list(saver.list({"configurable": {"thread_id": "p"}}))
    assert only.config["configurable"]["checkpoint_id"] == cps[-1][0]
    _exact(only.checkpoint["channel_values"]["messages"], cps[-1][1])
    saver.prune(["p"], strategy="delete")
    assert list(saver.list({"configurable": {"thread_id": "p"}})) == []
    with pytest.raises(ValueError):
        saver.prune(["p"], strategy="everything")


def test_a_message_that_cannot_be_stored_leaves_the_thread_as_it_was(saver) -> None:
    first = [HumanMessage("q", id="h"), AIMessage("a", id="a")]
    cid = _put(saver, "t", first, None, 0)
    bad = [*first, HumanMessage("fine", id="h2"), ToolMessage("r", tool_call_id="c", id="t", artifact=object())]
    with pytest.raises(TypeError):  # the serializer refuses it, as it does for the stock savers
        _put(saver, "t", bad, cid, 1)
    log = saver._logs._open.get('["langgraph", "t", "", "messages"]')
    assert log is None or log.ctx.next_seq == 2
    good = [*first, HumanMessage("fine", id="h2")]
    cid2 = _put(saver, "t", good, cid, 2)
    _exact(_read(saver, "t", cid2), good)
    _exact(_read(saver, "t", cid), first)


def test_a_closed_saver_refuses_calls(tmp_path) -> None:
    saver = ContextSaver(f"sqlite://{tmp_path}/t.db")
    _put(saver, "t", [HumanMessage("q", id="h")], None, 0)
    saver.close()
    saver.close()
    with pytest.raises(RuntimeError, match="closed"):
        saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})


def _containers(v: Any) -> list[Any]:
    """Every dict and list inside ``v`` (a message's field values), depth first."""
    if isinstance(v, dict):
        return [v, *(c for x in v.values() for c in _containers(x))]
    if isinstance(v, list):
        return [v, *(c for x in v for c in _containers(x))]
    return []


@pytest.mark.parametrize("message", RICH, ids=lambda m: f"{type(m).__name__}-{m.id}")
def test_a_copy_is_equal_and_shares_nothing_that_changes(message) -> None:
    from ctxfold.adapters.langgraph._messages import fresh

    c = fresh(message)
    assert c is not message and type(c) is type(message)
    _exact([c], [message])
    assert c.__pydantic_fields_set__ == message.__pydantic_fields_set__
    mine = {id(x) for x in _containers(message.__dict__)}
    assert not mine & {id(x) for x in _containers(c.__dict__)}


def test_changing_what_a_put_was_given_or_a_read_gave_changes_no_checkpoint(saver) -> None:
    given = [HumanMessage("q", id="h1"), AIMessage("", id="a1", tool_calls=[{**CALL, "args": {"x": [1]}}])]
    want = [m.model_copy(deep=True) for m in given]
    first = _put(saver, "t", given, None, 1)
    given[1].tool_calls[0]["args"]["x"].append(2)
    given[0].content = "changed"
    read = _read(saver, "t", first)
    _exact(read, want)
    read[1].tool_calls[0]["args"]["x"].append(3)
    read[1].additional_kwargs["k"] = "v"
    again = _read(saver, "t", first)
    _exact(again, want)
    assert again[0] is not read[0]
    # the changed message written back is a change the log records
    second = _put(saver, "t", read, first, 2)
    _exact(_read(saver, "t", second), read)
    _exact(_read(saver, "t", first), want)


@pytest.mark.parametrize("share", [False, True])
def test_a_message_serde_cannot_keep_reads_as_langgraphs_savers_read_it_warm_or_cold(share, tmp_path) -> None:
    """A message the mapping cannot hold is stored through ``serde``, which loses what it
    cannot encode (a tuple comes back a list, a lone surrogate a ``?``): every read of it, by
    the saver that put it or by a new one, is that round trip, as with InMemorySaver."""
    from langgraph.checkpoint.memory import InMemorySaver

    lossy = [AIMessage("x", id="a1", additional_kwargs={"pair": (1, 2)}), HumanMessage("\ud800 lone", id="h1"),
             HumanMessage("kept", id="h2")]
    stock = InMemorySaver()
    want = _read(stock, "t", _put(stock, "t", lossy, None, 1))
    assert want[0].additional_kwargs == {"pair": [1, 2]} and want[1].content != lossy[1].content
    url = f"sqlite://{tmp_path}/lossy.db"
    with ContextSaver(url, share_messages=share) as saver:
        first = _put(saver, "t", lossy, None, 1)
        _exact(_read(saver, "t", first), want)
        second = _put(saver, "t", [*_read(saver, "t", first), AIMessage("more", id="a2")], first, 2)
        _exact(_read(saver, "t", second), [*want, AIMessage("more", id="a2")])
    with ContextSaver(url) as again:
        _exact(_read(again, "t", first), want)


def test_shared_messages_are_the_objects_put(tmp_path) -> None:
    """Shared, a read gives back the very objects put, but for a message without an id: a copy
    of it, each time (LangGraph gives such a message its id in place)."""
    with ContextSaver(f"sqlite://{tmp_path}/s.db", share_messages=True) as sharing:
        given = list(RICH[:4])
        assert [m.id for m in given].count(None) == 1
        first = _put(sharing, "t", given, None, 1)
        read = _read(sharing, "t", first)
        _exact(read, given)
        assert [a is b for a, b in zip(read, given)] == [m.id is not None for m in given]
        again = _read(sharing, "t", first)
        assert [a is b for a, b in zip(again, read)] == [m.id is not None for m in given]
    with ContextSaver(f"sqlite://{tmp_path}/s.db") as copying:  # the same log, read by a copying saver
        once, twice = _read(copying, "t", first), _read(copying, "t", first)
        _exact(once, given)
        assert not any(a is b for a, b in zip(once, twice))


# LangGraph's add_messages gives a message without an id its id in place (``m.id = uuid``): on
# the list a node returns, and on the channel's list it adds to. A checkpoint holds such a
# message as it was when it was put, as LangGraph's own savers do.


@pytest.mark.parametrize("share", [False, True])
def test_a_message_given_its_id_in_place_changes_no_checkpoint(tmp_path, share) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    def turns(saver: Any) -> list[list[BaseMessage]]:
        given = [HumanMessage("q", id="h1"), AIMessage("no id yet")]
        first = _put(saver, "t", given, None, 1)
        given[1].id = "given-later"  # what add_messages does to the caller's object
        read = _read(saver, "t", first)
        read[1].id = "given-to-a-read"  # and to the list a node was given
        second = _put(saver, "t", [*read, HumanMessage("more", id="h2")], first, 2)
        return [_read(saver, "t", first), _read(saver, "t", second)]

    want = turns(InMemorySaver())
    assert [[m.id for m in cp] for cp in want] == [["h1", None], ["h1", "given-to-a-read", "h2"]]
    url = f"sqlite://{tmp_path}/t.db"
    with ContextSaver(url, share_messages=share) as saver:
        for got, expected in zip(turns(saver), want):
            _exact(got, expected)
        warm = [m.id for m in _read(saver, "t", _latest(saver, "t"))]
    with ContextSaver(url) as again:  # what the log holds
        assert [m.id for m in _read(again, "t", _latest(again, "t"))] == warm == ["h1", "given-to-a-read", "h2"]


def _latest(saver: ContextSaver, thread: str) -> str:
    t = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    assert t is not None
    return str(t.checkpoint["id"])


@pytest.mark.parametrize("share", [False, True])
def test_a_put_takes_its_messages_as_they_are_when_it_is_called(tmp_path, share) -> None:
    """The graph's thread goes on beside a blocking put: a message given its id while the put
    waits for the store (here, as a branch asks whether its log exists) is recorded without it."""
    from ctxfold import Store

    late: list[BaseMessage] = []

    class Busy(Store):
        def __contains__(self, context_id: object) -> bool:
            for m in late:
                m.id = "given-meanwhile"
            return super().__contains__(context_id)

    with Busy(f"sqlite://{tmp_path}/t.db") as store, ContextSaver(store, share_messages=share) as saver:
        first = _put(saver, "t", [HumanMessage("q", id="h1")], None, 1)
        _put(saver, "t", [HumanMessage("q", id="h1"), AIMessage("a", id="a1")], first, 2)
        late.append(AIMessage("no id yet"))
        branch = _put(saver, "t", [HumanMessage("q", id="h1"), *late], first, 3)  # from an old checkpoint: a fork
        assert late[0].id == "given-meanwhile"
        _exact(_read(saver, "t", branch), [HumanMessage("q", id="h1"), AIMessage("no id yet")])
