"""What a request is made of is kept for the next one (docs/formats.md, "Speed"): a message's
strings are shared by every request; the dicts and lists a message exported to are given again
only when no request still alive holds them and nobody changed them. Seen from outside, every
request has dicts and lists of its own, exactly as if made anew."""

from __future__ import annotations

import copy
import threading

from _transcripts import sources
from ctxfold import Context, Message, Part, formats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXPORTERS = (formats.to_openai_chat, formats.to_anthropic, formats.to_openai_responses)


def _agent_turns() -> Context:
    ctx = Context()
    ctx.add_messages([
        Message.user("find the failing test"),
        Message.assistant(
            [Part.text("searching")],
            tool_calls=[
                {"id": "call_1", "name": "search", "arguments": {"q": "flaky"}},
                {"id": "x" * 70, "name": "grep", "arguments": '{"pattern": "é"}'},
            ],
        ),
        Message.tool("call_1", "test_cache.py::test_key"),
        Message.assistant("found it"),
    ])
    return ctx


def _strings(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _strings(x, out)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out)
    return out


def _containers(v, out):
    if isinstance(v, (dict, list)):
        out.append(v)
        for x in v.values() if isinstance(v, dict) else v:
            _containers(x, out)
    return out


def test_the_messages_strings_are_shared_between_requests():
    ctx = _agent_turns()
    for export in EXPORTERS:
        a, b = export(ctx), export(ctx)
        assert a == b
        sa, sb = _strings(a, []), _strings(b, [])
        # Every text, id and argument string of a message is the same object both times.
        for text in ("find the failing test", "searching", "call_1", '{"q":"flaky"}', "test_cache.py::test_key"):
            if text in sa:
                i = sa.index(text)
                assert sa[i] is sb[i], (export.__name__, text)


def test_every_request_has_containers_of_its_own():
    ctx = _agent_turns()
    for export in EXPORTERS:
        first = export(ctx)
        before = export(ctx)
        ids = {id(c) for c in _containers(first, [])}
        assert not ids & {id(c) for c in _containers(before, [])}
        for c in _containers(first, []):
            if isinstance(c, dict):
                c["changed"] = True
            else:
                c.append("changed")
        assert export(ctx) == before


def _ids(request) -> set[int]:
    return {id(c) for c in _containers(request, [])}


def test_requests_alive_together_share_no_dict_or_list():
    ctx = _agent_turns()
    for export in EXPORTERS:
        held = [export(ctx) for _ in range(4)]
        for i, a in enumerate(held):
            assert a == held[0]
            for b in held[i + 1 :]:
                assert not _ids(a) & _ids(b), export.__name__


def test_a_released_request_is_given_again_only_as_made():
    """The saving is real (a request let go gives its dicts to the next one) and invisible
    (what it gives is what a fresh export makes)."""
    ctx = _agent_turns()
    for export in EXPORTERS:
        fresh = copy.deepcopy(export(ctx))
        ids = _ids(export(ctx))  # made, then let go
        again = export(ctx)
        assert again == fresh
        assert _ids(again) & ids, export.__name__


def test_a_part_kept_aside_is_never_given_again():
    ctx = _agent_turns()
    for export in EXPORTERS:
        fresh = copy.deepcopy(export(ctx))
        first = export(ctx)
        kept = [c for c in _containers(first, []) if isinstance(c, list)][-1]
        del first
        second = export(ctx)
        assert all(c is not kept for c in _containers(second, []))
        kept.append("changed later")
        assert second == fresh and export(ctx) == fresh


def test_the_same_message_twice_is_two_objects():
    ctx = _agent_turns()
    messages = [ctx.messages[0], ctx.messages[0], ctx.messages[3], ctx.messages[3]]
    for export in EXPORTERS:
        export(messages)
        request = export(messages)
        items = request.get("messages", request.get("input"))
        assert items[0] == items[1] and items[0] is not items[1]
        assert not _ids(items[0]) & _ids(items[1])


# What a caller may do to a request it was given, before it lets it go.
def _change(request, how: int, where: int) -> None:
    containers = _containers(request, [])
    c = containers[where % len(containers)]
    if isinstance(c, dict):
        keys = list(c)
        k = keys[where % len(keys)] if keys else None
        match how % 6:
            case 0:
                c["cache_control"] = {"type": "ephemeral"}
            case 1 if k is not None:
                del c[k]
            case 2 if k is not None:
                c[k] = c.pop(k)  # the same keys, in another order
            case 3 if k is not None and isinstance(c[k], str):
                c[k] = c[k] + "!"
            case 4 if k is not None and isinstance(c[k], bool | type(None)):
                c[k] = 1 if c[k] else 0  # equal to the old value, but not the same JSON
            case _:
                c.clear()
    else:
        match how % 4:
            case 0:
                c.append({"type": "text", "text": "added"})
            case 1 if c:
                c.pop()
            case 2:
                c.reverse()
            case _:
                c[:] = [copy.deepcopy(x) for x in c]  # equal items, new objects: still right


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources(), st.lists(st.tuples(st.integers(0, 50), st.integers(0, 10_000), st.booleans()), max_size=6))
def test_no_change_to_a_request_reaches_a_later_one(src_secrets, changes):
    """Requests changed in every way a caller can, kept or let go: every later request still
    equals the export of copies of the messages that were never exported."""
    src, _ = src_secrets
    messages = list(src.messages) if isinstance(src, Context) else list(src)
    cold = [Message.from_dict(m.to_dict()) for m in messages]
    for export in EXPORTERS:
        want = export(cold)
        held = []
        for how, where, keep in changes:
            request = export(messages)
            assert request == want
            _change(request, how, where)
            if keep:
                held.append(request)
            del request  # freed here: a request holds no cycle
        assert export(messages) == want


def test_threads_changing_their_requests_never_see_each_others():
    ctx = _agent_turns()
    for m in _agent_turns().messages:
        ctx.add_message(Message.from_dict({**m.to_dict(), "id": None}))
    wants = {export: copy.deepcopy(export(ctx)) for export in EXPORTERS}
    errors: list[str] = []

    def work(seed: int) -> None:
        for i in range(300):
            export = EXPORTERS[(seed + i) % len(EXPORTERS)]
            request = export(ctx)
            if request != wants[export]:
                errors.append(f"{export.__name__} differs in thread {seed}, turn {i}")
            _change(request, seed + i, i * 7 + seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_strings_not_the_messages_own_are_right():
    """A remapped id, the interrupted result and a dangling call's answer are made fresh:
    never taken for one of a message's strings."""
    ctx = _agent_turns()
    chat = formats.to_openai_chat(ctx)["messages"]
    calls = chat[1]["tool_calls"]
    assert calls[0]["id"] == "call_1" and len(calls[1]["id"]) <= 40
    answers = {m["tool_call_id"]: m["content"] for m in chat if m["role"] == "tool"}
    assert answers["call_1"] == "test_cache.py::test_key"
    assert answers[calls[1]["id"]].startswith("Tool call was interrupted")
    assert formats.to_openai_chat(ctx)["messages"] == chat


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_a_warm_request_equals_a_cold_one(src_secrets):
    """The second export (strings shared from the first) equals the export of copies of the
    messages that were never exported."""
    src, _ = src_secrets
    messages = list(src.messages) if isinstance(src, Context) else list(src)
    for export in EXPORTERS:
        export(messages)
        warm = export(messages)
        cold = export([Message.from_dict(m.to_dict()) for m in messages])
        assert warm == cold
