"""ContextSession against the OpenAI Agents SDK's Session protocol: the protocol
behaviours, every item type the SDK stores coming back byte-exact, the Context behind it."""

from __future__ import annotations

import copy
import json
import sys

import ctxfold
import pytest
from _agents_items import CATALOGUE
from _agents_support import BACKENDS, backends, exact, run
from agents.memory import Session, SessionSettings
from ctxfold.adapters.openai_agents import ContextSession
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    b = backends(request.param, request, tmp_path)
    yield b
    b.close()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_catalogue_items_are_real_responses_items():
    adapter = TypeAdapter(ResponseInputItemParam)
    for name, item in CATALOGUE.items():
        adapter.validate_python(item), name


def test_is_an_sdk_session(backend):
    s = backend.session()
    assert isinstance(s, Session)
    assert s.session_id == "s1"
    assert s.session_settings == SessionSettings()


def test_import_does_not_pull_in_the_sdk_until_asked():
    code = "import sys, ctxfold, ctxfold.adapters; assert 'agents' not in sys.modules, 'agents imported'"
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True)


def test_empty_session(backend):
    s = backend.session()
    assert run(s.get_items()) == []
    assert run(s.get_items(limit=3)) == []
    assert run(s.pop_item()) is None
    run(s.clear_session())
    assert run(s.get_items()) == []


def test_add_get_pop_clear(backend):
    s = backend.session()
    items = [user(f"m{i}") for i in range(5)]
    run(s.add_items(items[:2]))
    run(s.add_items(items[2:]))
    run(s.add_items([]))
    assert run(s.get_items()) == items
    assert run(s.pop_item()) == items[-1]
    assert run(s.get_items()) == items[:-1]
    run(s.clear_session())
    assert run(s.get_items()) == []
    assert run(s.pop_item()) is None
    run(s.add_items([user("after")]))
    assert run(s.get_items()) == [user("after")]


@pytest.mark.parametrize("limit,expect", [(None, 5), (0, 0), (1, 1), (3, 3), (5, 5), (50, 5)])
def test_limit(backend, limit, expect):
    s = backend.session()
    items = [user(f"m{i}") for i in range(5)]
    run(s.add_items(items))
    got = run(s.get_items(limit=limit))
    assert got == items[len(items) - expect :]


def test_settings_limit_is_the_default(backend):
    s = backend.session(session_settings=SessionSettings(limit=2))
    items = [user(f"m{i}") for i in range(5)]
    run(s.add_items(items))
    assert run(s.get_items()) == items[-2:]
    assert run(s.get_items(limit=4)) == items[-4:]  # an explicit limit wins
    assert run(s.get_items(limit=0)) == []


def test_settings_as_dict(backend):
    s = backend.session(session_settings={"limit": 1})
    assert s.session_settings == SessionSettings(limit=1)
    run(s.add_items([user("a"), user("b")]))
    assert run(s.get_items()) == [user("b")]


def test_negative_limit_is_refused(backend):
    s = backend.session()
    with pytest.raises(ValueError, match="limit"):
        run(s.get_items(limit=-1))


def test_ids_are_isolated(backend):
    a, b = backend.session("a"), backend.session("b")
    run(a.add_items([user("for a")]))
    run(b.add_items([user("for b")]))
    assert run(a.get_items()) == [user("for a")]
    assert run(b.get_items()) == [user("for b")]
    run(a.clear_session())
    assert run(b.get_items()) == [user("for b")]


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_item_type_round_trips_exactly(backend, name):
    item = CATALOGUE[name]
    s = backend.session()
    run(s.add_items([copy.deepcopy(item)]))
    assert exact(run(s.get_items())) == exact([item])
    assert run(s.get_items()) == [item]


def test_a_whole_catalogue_in_one_session(backend):
    items = list(CATALOGUE.values())
    s = backend.session()
    run(s.add_items(copy.deepcopy(items)))
    assert exact(run(s.get_items())) == exact(items)
    for k in (1, 2, 7, len(items)):
        assert exact(run(s.get_items(limit=k))) == exact(items[-k:])
    popped = [run(s.pop_item()) for _ in items]
    assert exact(popped) == exact(items[::-1])


def test_items_come_back_as_new_objects(backend):
    s = backend.session()
    item = copy.deepcopy(CATALOGUE["assistant"])
    run(s.add_items([item]))
    got = run(s.get_items())[0]
    got["content"][0]["text"] = "changed by the caller"
    item["id"] = "changed too"
    assert run(s.get_items()) == [CATALOGUE["assistant"]]


def test_a_bad_item_adds_nothing(backend):
    s = backend.session()
    run(s.add_items([user("kept")]))
    with pytest.raises(ctxfold.FormatError):
        run(s.add_items([user("would be dropped"), {"type": "message", "role": "user", "content": 42}]))
    with pytest.raises(TypeError):
        run(s.add_items("not a list"))  # type: ignore[arg-type]
    assert run(s.get_items()) == [user("kept")]


@pytest.mark.parametrize("kind", ["sqlite-url", "postgres-url"])
def test_two_sessions_on_one_store_see_each_other(kind, request, tmp_path):
    b = backends(kind, request, tmp_path)
    try:
        one, two = b.session("shared"), b.session("shared")
        run(one.add_items([user("from one")]))
        run(two.add_items([user("from two")]))
        assert run(one.get_items()) == [user("from one"), user("from two")]
        assert run(two.get_items(limit=1)) == [user("from two")]
        assert run(one.pop_item()) == user("from two")
        assert run(two.get_items()) == [user("from one")]
        run(two.clear_session())
        assert run(one.get_items()) == []
        # a third, opened later, starts from what is stored
        run(one.add_items([user("again")]))
        assert run(b.session("shared").get_items()) == [user("again")]
    finally:
        b.close()


def test_store_keeps_items_across_reopen(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    s = ContextSession("persist", url)
    items = list(CATALOGUE.values())
    run(s.add_items(copy.deepcopy(items)))
    run(s.pop_item())
    s.close()
    s = ContextSession("persist", url)
    assert exact(run(s.get_items())) == exact(items[:-1])
    s.close()


def test_the_context_behind_the_session(backend):
    s = backend.session("ctx")
    items = [user("hello"), CATALOGUE["function_call"], CATALOGUE["function_output"], CATALOGUE["assistant"]]
    run(s.add_items(copy.deepcopy(items)))
    ctx = s.context
    assert isinstance(ctx, ctxfold.Context)
    assert ctx.id == "ctx"
    assert ctx.message_count == len(items)  # one message per item
    assert [m.role for m in ctx.messages] == ["user", "assistant", "tool", "assistant"]
    assert ctx.messages[0].text == "hello"
    assert ctxfold.formats.to_openai_responses(ctx)["input"] == items


def test_pop_and_clear_are_remove_events_the_log_keeps(backend):
    s = backend.session()
    run(s.add_items([user("a"), user("b"), user("c")]))
    run(s.pop_item())
    run(s.clear_session())
    ctx = s.context
    kinds = [e.type for e in ctx.events()]
    assert kinds == ["user_message"] * 3 + ["remove", "remove"]
    removes = [e.data for e in ctx.events() if e.type == "remove"]
    assert removes[0] == {"op": "remove", "first": 2, "last": 2}
    assert removes[1] == {"op": "remove", "first": 0, "last": 1}
    assert [m.text for m in ctx.messages_at(3)] == ["a", "b", "c"]
    assert ctx.messages == []
    run(s.clear_session())  # already empty: no event
    assert len(s.context.events()) == 5


def test_token_window_callback(backend):
    s = backend.session()
    long = [user(f"message {i} " + "word " * 40) for i in range(30)]
    run(s.add_items(long))
    new = [user("the question")]
    history = run(s.get_items())
    combine = s.token_window(300, "cl100k_base")
    out = combine(copy.deepcopy(history), copy.deepcopy(new))
    assert out[-1] == new[0]
    kept = out[:-1]
    assert 0 < len(kept) < len(history)
    assert kept == history[len(history) - len(kept) :]  # a suffix of the history, in order
    msgs = ctxfold.formats.from_openai_responses(out)
    assert sum(m.count_tokens("cl100k_base") for m in msgs) <= 300
    # one more message would not have fitted
    more = ctxfold.formats.from_openai_responses(history[len(history) - len(kept) - 1 :] + new)
    assert sum(m.count_tokens("cl100k_base") for m in more) > 300
    # everything fits: the whole history
    assert s.token_window(10**9)(copy.deepcopy(history), new) == history + new


def test_token_window_never_starts_on_a_tool_result(backend):
    s = backend.session()
    call, output = CATALOGUE["function_call"], CATALOGUE["function_output"]
    run(s.add_items([user("x " * 500), call, output, CATALOGUE["assistant"]]))
    history = run(s.get_items())
    tokens = [m.count_tokens("cl100k_base") for m in s.context.messages]
    budget = tokens[2] + tokens[3]  # exactly the output and the answer
    out = s.token_window(budget, "cl100k_base")(history, [])
    assert out == history[3:]


def test_a_closed_session_refuses_calls(backend):
    s = backend.session()
    run(s.add_items([user("a")]))
    s.close()
    s.close()
    for call in (s.get_items(), s.add_items([user("b")]), s.pop_item(), s.clear_session()):
        with pytest.raises(RuntimeError, match="closed"):
            run(call)
    assert run(backend.session().get_items()) == ([] if backend.kind == "memory" else [user("a")])


def test_repr_and_bad_arguments(tmp_path):
    assert "memory" in repr(ContextSession("r"))
    with pytest.raises(ValueError):
        ContextSession("")
    with pytest.raises(TypeError):
        ContextSession("x", 42)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.lists(st.sampled_from(sorted(CATALOGUE)), max_size=4)),
            st.tuples(st.just("pop"), st.none()),
            st.tuples(st.just("clear"), st.none()),
            st.tuples(st.just("get"), st.one_of(st.none(), st.integers(0, 8))),
        ),
        max_size=12,
    ),
    text=st.text(max_size=30),
)
def test_behaves_like_a_list(ops, text):
    """Any sequence of calls leaves the session equal to a plain list under the same calls."""
    s = ContextSession("prop")
    model: list[dict] = []
    for op, arg in ops:
        if op == "add":
            batch = [copy.deepcopy(CATALOGUE[n]) for n in arg] + [user(text)]
            run(s.add_items(copy.deepcopy(batch)))
            model.extend(batch)
        elif op == "pop":
            got = run(s.pop_item())
            assert got == (model.pop() if model else None)
        elif op == "clear":
            run(s.clear_session())
            model.clear()
        else:
            want = model if arg is None else model[max(0, len(model) - arg) :]  # the last `arg` (or all)
            assert exact(run(s.get_items(arg))) == exact(want)
    assert json.dumps(run(s.get_items()), sort_keys=True) == json.dumps(model, sort_keys=True)
