"""The runtime fields come from one table, the core's: a document carries those it names, in
its order; the core checks their types and fills in absent ones when a document loads; a fork
copies each as the table says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ctxfold import Context, DecodeError, Message, Usage, _core

CARRIED = [f.name for f in _core.RUNTIME_FIELDS if f.carried]


def test_a_document_carries_the_tables_fields_in_its_order():
    doc = Context(messages=[Message.user("a")]).serialize()
    assert [k for k in doc if k in {f.name for f in _core.RUNTIME_FIELDS}] == CARRIED
    assert not {f.name for f in _core.RUNTIME_FIELDS if not f.carried} & doc.keys()


def test_absent_fields_read_as_the_core_says():
    doc = Context().serialize()
    for name in CARRIED:
        del doc[name]
    ctx = Context.deserialize(doc)
    assert (ctx.system_prompt, ctx.deps, ctx.usage, ctx.tool_calls) == (None, {}, Usage(), [])
    assert (ctx.iteration, ctx.max_iterations, ctx.started_at, ctx.agent_name) == (0, 10, None, None)
    # A versioned document without it: no turn owed; the versionless layout: one owed.
    assert ctx.needs_response is False
    assert Context.load_from_dict({"messages": []}).needs_response is True


@pytest.mark.parametrize(("name", "value", "message"), [
    ("iteration", "zero", "iteration: wrong type str"),
    ("iteration", True, "iteration: expected int, got bool"),
    ("max_iterations", 2.5, "max_iterations: wrong type float"),
    ("deps", [], "deps: wrong type list"),
    ("tool_calls", {}, "tool_calls: wrong type dict"),
    ("needs_response", 1, "needs_response: wrong type int"),
    ("agent_name", 7, "agent_name: wrong type int"),
    ("started_at", "yesterday", "started_at"),
    ("usage", {"requests": "many"}, "usage: usage field requests must be an int, got str"),
    ("usage", [], "usage: wrong type list"),
])
def test_a_field_of_the_wrong_type_is_refused_by_name(tmp_path, name, value, message):
    doc = Context().serialize()
    doc[name] = value
    with pytest.raises(DecodeError, match=message):
        Context.deserialize(doc)
    path = Path(Context().save(tmp_path))
    bad = json.loads(path.read_text(encoding="utf-8"))
    bad[name] = value
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(DecodeError, match=f"{re.escape(str(path))}: {message}"):
        Context.load(path)


def test_a_fork_copies_each_field_as_the_table_says():
    parent = Context(messages=[Message.user("a"), Message.user("b")], deps={"k": 1}, callbacks={"c": print})
    parent.tool_calls.append({"id": "1"})
    child = parent.fork_insert_sequence()
    for f in _core.RUNTIME_FIELDS:
        mine, theirs = getattr(child, f.name), getattr(parent, f.name)
        assert mine == theirs, f.name
        if f.fork_copies:
            assert mine is not theirs, f.name
        elif f.name != "system_prompt":
            assert mine is theirs, f.name
