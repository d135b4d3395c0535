"""What a Python user expects of any container and value: indexing and slicing a Context,
``Message.developer``, ``copy``/``deepcopy``/``pickle`` of a Context with its runtime fields, types a
checker follows (``Part.text`` on a part is a ``str``; the exporters' requests are TypedDicts that
pass into the SDKs' own calls), and error messages that name only public API."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
from ctxfold import ConflictError, Context, Message, Part, Store, SystemPromptMessage, ToolDefinitionsMessage
from hypothesis import given, settings
from hypothesis import strategies as st


def notify_sink(event) -> None:  # module level, so pickle can name it
    notify_sink.seen.append(event.seq)  # type: ignore[attr-defined]


notify_sink.seen = []  # type: ignore[attr-defined]


def built(n: int, *, lead_system: bool, overlay: str | None, dynamic: bool) -> Context:
    ctx = Context.create(SystemPromptMessage.create("base", hooks=["mem"]) if dynamic else None)
    if lead_system and not dynamic:
        ctx.add_message(Message.system("be brief"))
    ctx.add_messages([Message.user(f"u{i}") if i % 2 else Message.assistant(f"a{i}") for i in range(n)])
    if dynamic:
        ctx.materialize({"mem": "remembered"})
    ctx.put_system_prompt_overlay(overlay)
    return ctx


# ---- ctx[i] and slices ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 1200),
    lead_system=st.booleans(),
    overlay=st.sampled_from([None, "today is Monday"]),
    dynamic=st.booleans(),
    bounds=st.tuples(st.none() | st.integers(-1300, 1300), st.none() | st.integers(-1300, 1300),
                     st.none() | st.integers(-7, 7).filter(bool)),
    index=st.integers(-1300, 1300),
)
def test_indexing_and_slicing_are_those_of_messages(n, lead_system, overlay, dynamic, bounds, index):
    ctx = built(n, lead_system=lead_system, overlay=overlay, dynamic=dynamic)
    shown = ctx.messages
    s = slice(*bounds)
    got = ctx[s]
    assert len(got) == len(shown[s]) and all(a is b for a, b in zip(got, shown[s]))
    if -len(shown) <= index < len(shown):
        assert ctx[index] is shown[index]
    else:
        with pytest.raises(IndexError, match="context index out of range"):
            ctx[index]


def test_indexing_refuses_what_a_list_refuses():
    ctx = built(3, lead_system=False, overlay=None, dynamic=False)
    with pytest.raises(TypeError, match="context indices must be integers or slices, not str"):
        ctx["0"]  # type: ignore[call-overload]
    assert ctx[True] is ctx.messages[1]  # an index, as for a list
    with pytest.raises(ValueError):
        ctx[::0]


# ---- Message.developer ----------------------------------------------------------------------


def test_message_developer():
    m = Message.developer("Answer in French.", name="policy", metadata={"k": 1})
    assert (m.role, m.content, m.name, m.metadata) == ("developer", "Answer in French.", "policy", {"k": 1})
    assert m == Message("developer", "Answer in French.", name="policy", metadata={"k": 1},
                        created_at=m.created_at, id=m.id)
    assert Message.developer([Part.text("x")]).parts == [Part.text("x")]
    with pytest.raises(ValueError):
        Message.developer("\ud800")


# ---- copy, deepcopy, pickle -----------------------------------------------------------------


def rich() -> Context:
    ctx = Context.create(SystemPromptMessage.create("You help.", hooks=["mem"]), ToolDefinitionsMessage.create())
    ctx.add_messages([Message.user("hi", metadata={"n": [1, 2.5, None]}),
                      Message.assistant("calling", tool_calls=[{"id": "c1", "name": "f", "arguments": '{"a":1}'}]),
                      Message.tool("c1", {"ok": True})])
    ctx.materialize({"mem": "likes tea", "tool_list": '[{"name": "f", "description": "d", "parameters": {}}]'})
    ctx.replace_message_range(3, 4, Message.system("[summary]"))
    ctx.add_anchor("pinned", 2)
    ctx.put_system_prompt_overlay("Today is Monday.")
    ctx.system_prompt = "configured"
    ctx.deps = {"api_key": "sk-secret", "handle": object, "n": 1}  # a file would drop the first two
    ctx.callbacks = {"on_step": notify_sink}
    ctx.notify = notify_sink
    ctx.stream = True
    ctx.add_usage({"input_tokens": 7, "requests": 1})
    ctx.iteration = 3
    ctx.agent_name = "helper"
    ctx.stored_seq = ctx.next_seq
    return ctx


RUNTIME = ("system_prompt", "deps", "usage", "tool_calls", "needs_response", "iteration", "max_iterations",
           "started_at", "agent_name", "stream", "callbacks", "notify", "cancellation_check", "approval_handler",
           "stored_seq")


def same_context(a: Context, b: Context) -> None:
    assert a is not b and a._core is not b._core
    assert (a.id, a.created_at, a.next_seq) == (b.id, b.created_at, b.next_seq)
    assert a.events() == b.events() and a.messages == b.messages
    assert a.anchor_points == b.anchor_points and a.content_map == b.content_map
    assert a.serialize() == b.serialize()
    for name in RUNTIME:
        assert getattr(a, name) == getattr(b, name), name
    assert a.messages[0].text.endswith("Today is Monday.") and b.messages[0].text == a.messages[0].text


@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_copies_keep_the_log_and_every_runtime_field(how):
    ctx = rich()
    dup = {"deepcopy": copy.deepcopy, "copy": copy.copy,
           "pickle": lambda c: pickle.loads(pickle.dumps(c))}[how](ctx)
    same_context(ctx, dup)
    assert dup.deps["api_key"] == "sk-secret" and dup.deps["handle"] is object  # runtime, not the file's
    assert dup.notify is notify_sink and dup.callbacks["on_step"] is notify_sink
    assert dup.deps is not ctx.deps and dup.callbacks is not ctx.callbacks
    # Independent: what one does the other does not see.
    dup.add_message(Message.user("only in the copy"))
    dup.put_system_prompt_overlay(None)
    dup.deps["n"] = 2
    assert ctx.next_seq == dup.next_seq - 1 and ctx.messages[-1].text != "only in the copy"
    assert ctx.messages[0].text.endswith("Today is Monday.") and ctx.deps["n"] == 1


def test_deepcopy_copies_the_runtime_values_and_a_subclass_stays_one():
    class Mine(Context):
        pass

    ctx = Mine(messages=[Message.user("x")], deps={"nested": {"k": [1]}})
    dup = copy.deepcopy(ctx)
    assert type(dup) is Mine and dup.deps == ctx.deps and dup.deps["nested"] is not ctx.deps["nested"]
    shallow = copy.copy(ctx)
    assert shallow.deps["nested"] is ctx.deps["nested"]  # a new dict holding the same values


def test_pickle_of_an_unpicklable_runtime_field_fails_as_pickle_does():
    ctx = Context(messages=[Message.user("x")], notify=lambda e: None)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(ctx)


# ---- types a checker follows ----------------------------------------------------------------

TYPED = """
import anthropic
import openai
from ctxfold import Context, Message, Part, formats

part = Part.text("x", cache_control={"type": "ephemeral"})
reveal_type(part.text)
reveal_type(Part.text)
part.text.upper()
ctx = Context(messages=[Message.developer("be terse"), Message.user("hi")])
chat = formats.to_openai_chat(ctx)
reveal_type(chat["messages"])
responses = formats.to_openai_responses(ctx, instructions=True)
reveal_type(responses.get("instructions"))
claude = formats.to_anthropic(ctx)
reveal_type(claude.get("system"))
openai.OpenAI(api_key="k").chat.completions.create(model="m", **chat)
openai.OpenAI(api_key="k").responses.create(model="m", **responses)
anthropic.Anthropic(api_key="k").messages.create(model="m", max_tokens=9, **claude)
reveal_type(ctx[0])
reveal_type(ctx[1:])
chat["tool"]
"""


@pytest.mark.frameworks
def test_a_type_checker_follows_parts_requests_and_indexing(tmp_path):
    (tmp_path / "use.py").write_text(textwrap.dedent(TYPED))
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir",
                          str(tmp_path / "cache"), "use.py"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "MYPYPATH": ""})
    # (mypy versions differ in spelling builtins, and in the hints they add to an error.)
    lines = [line.split(": ", 1)[1].replace("builtins.", "") for line in run.stdout.splitlines()
             if "Did you mean" not in line]
    assert lines == [
        'note: Revealed type is "str"',
        'note: Revealed type is "ctxfold._core._TextFactory"',
        'note: Revealed type is "list[Any]"',
        'note: Revealed type is "str | None"',
        'note: Revealed type is "str | list[Any] | None"',
        'note: Revealed type is "ctxfold._core.Message"',
        'note: Revealed type is "list[ctxfold._core.Message]"',
        'error: TypedDict "OpenAIChatRequest" has no key "tool"  [typeddict-item]',
    ], run.stdout + run.stderr


# ---- errors that name public API only -------------------------------------------------------


def test_conflict_on_refresh_names_only_public_api(sqlite_url):
    with Store(sqlite_url) as store, Store(sqlite_url) as other:
        ctx = Context(messages=[Message.user("a")])
        store.save(ctx)
        theirs = other.load(ctx.id)
        theirs.add_message(Message.user("theirs"))
        other.save(theirs)
        ctx.add_message(Message.user("mine, unsaved"))
        with pytest.raises(ConflictError) as e:
            store.refresh(ctx)
        text = str(e.value)
        assert "store.load" in text and "rewind" not in text and "_" + "rewind" not in text
