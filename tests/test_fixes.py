"""What an independent check of the landed code found wrong, each pinned by a test."""

from __future__ import annotations

import errno
import gc
import json
import logging
import os
import threading

import pytest
from ctxfold import Context, DecodeError, Message, Part, SystemPromptMessage, ToolDefinitionsMessage
from hypothesis import given, settings
from hypothesis import strategies as st

# ---- a token window keeps its budget wherever the overlay lands in the child -----------------


def child_cost(kept: list[Message], overlay: str | None, enc: str) -> int:
    """What a context holding `kept` shows, counted from scratch."""
    probe = Context.new(messages=kept)
    probe.put_system_prompt_overlay(overlay)
    return probe.total_token_count(enc)


@settings(max_examples=150, deadline=None)
@given(
    roles=st.lists(st.sampled_from(["user", "assistant", "system", "tool"]), min_size=1, max_size=30),
    words=st.lists(st.integers(0, 12), min_size=30, max_size=30),
    overlay=st.sampled_from(["be brief", "overlay " * 7, "x"]),
    frac=st.floats(0, 1.05),
    specials=st.booleans(),
    enc=st.sampled_from(["cl100k_base", "o200k_base"]),
)
def test_token_window_budget_with_overlay(roles, words, overlay, frac, specials, enc):
    if specials:
        ctx = Context.create(SystemPromptMessage.create("You are terse."), ToolDefinitionsMessage.create())
    else:
        ctx = Context.new()
    for i, role in enumerate(roles):
        text = f"{role} {i} " + "word " * words[i]
        ctx.add_message(Message.tool(f"c{i}", text) if role == "tool" else Message(role, text))
    ctx.put_system_prompt_overlay(overlay)
    budget = int(frac * ctx.total_token_count(enc))
    w = ctx.rolling_token_window(budget, enc)
    if w is None:
        assert ctx.total_token_count(enc) <= budget
        return
    special_ids = {m.id for m in (ctx.system_prompt_message, ctx.tool_definitions_message) if m}
    raw = ctx.messages_at(ctx.next_seq)
    kept_raw = [m for m in w.messages_at(w.next_seq)]
    tail = [m for m in kept_raw if m.id not in special_ids]
    if tail:
        assert w.total_token_count(enc) <= budget
        assert w.total_token_count(enc) == child_cost(kept_raw, overlay, enc)
    # The longest such suffix: one more message does not fit as its child would show it.
    others = [m for m in raw if m.id not in special_ids]
    if len(tail) < len(others):
        longer = others[len(others) - len(tail) - 1:]
        while longer and longer[0].role == "tool":
            longer = longer[1:]
        if len(longer) > len(tail):
            keep = [m for m in raw if m.id in special_ids or m in longer]
            assert child_cost(keep, overlay, enc) > budget


def test_window_with_a_summary_head_and_an_overlay():
    ctx = Context.new()
    ctx.add_message(Message.user("start " * 20))
    ctx.add_message(Message.system("[summary of everything so far] " * 3))
    for i in range(10):
        ctx.add_message(Message.user(f"question {i} " + "word " * 5))
    ctx.put_system_prompt_overlay("Always answer in French. " * 4)
    for budget in range(20, ctx.total_token_count(), 7):
        w = ctx.rolling_token_window(budget)
        assert w is not None
        if w.messages_at(w.next_seq):
            assert w.total_token_count() <= budget, budget


# ---- the special readers return the object `messages` holds ----------------------------------


def test_special_readers_are_the_shown_objects():
    ctx = Context.create(SystemPromptMessage.create("sys", hooks=["mem"]), ToolDefinitionsMessage.create())
    ctx.materialize({"tool_list": json.dumps([{"name": "search", "description": "d", "parameters": {}}]),
                     "mem": "remember"})
    ctx.put_system_prompt_overlay("be brief")
    shown = ctx.messages
    assert ctx.system_prompt_message is shown[0]
    assert ctx.tool_definitions_message is shown[1]
    assert [p.type for p in ctx.tool_definitions_message.parts] == ["tool"]
    assert ctx.system_prompt_message.text == "sys\n\nremember\n\nbe brief"
    index = ctx.hook_index
    assert index[SystemPromptMessage.create("x", hooks=["mem"]).hook_ids[0]][0] is shown[0]


# ---- no Python code runs while a context's lock is held --------------------------------------


def test_a_finalizer_that_reads_the_context_does_not_deadlock():
    ctx = Context.new()
    ctx.add_messages([Message.user(f"m{i}") for i in range(20_000)])
    ctx.replace_message_range(0, 5, Message.system("s"))  # a derived message: built on read
    seen = []

    class Touch:
        def __init__(self):
            self.me = self  # a cycle: only the cyclic GC frees it

        def __del__(self):
            seen.append(len(ctx))

    def run():
        old = gc.get_threshold()
        gc.set_threshold(10)
        try:
            for _ in range(20):
                for _ in range(50):
                    Touch()
                ctx.messages
                ctx.events()
                ctx.serialize()
        finally:
            gc.set_threshold(*old)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), "a read deadlocked on a finalizer"
    assert seen


# ---- whatever loads saves again ---------------------------------------------------------------


def test_started_at_beyond_year_9999_in_utc_is_refused_at_load():
    doc = Context.new().serialize()
    doc["started_at"] = "9999-12-31T23:59:59-01:00"
    with pytest.raises(DecodeError, match="started_at"):
        Context.deserialize(doc)
    doc["started_at"] = "2024-01-01T00:00:00+01:00"
    ctx = Context.deserialize(doc)
    Context.deserialize(ctx.serialize())


def test_deep_deps_load_and_save_or_are_refused(tmp_path):
    def nested(k):
        v: object = 1
        for _ in range(k):
            v = {"a": v}
        return v

    for depth in (95, 101, 110, 127):
        doc = Context.new().serialize()
        doc["deps"] = {"x": nested(depth)}
        try:
            ctx = Context.deserialize(doc)
        except DecodeError:
            continue
        back = Context.load(ctx.save(tmp_path))  # whatever loads must save again
        assert back.deps == ctx.deps


# ---- exception kinds --------------------------------------------------------------------------


def test_huge_ints_are_out_of_range_not_overflow(caplog):
    ctx = Context.new()
    ctx.add_messages([Message.user(f"m{i}") for i in range(5)])
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        ctx.replace_message_range(0, 2**63, Message.system("s"))
    assert "outside" in caplog.text and len(ctx.messages) == 5
    with pytest.raises(IndexError):
        ctx.add_anchor("x", 2**63)
    with pytest.raises(IndexError):
        ctx.add_anchor("y", -1)
    assert ctx.rolling_sequence_window(2**63) is None
    assert ctx.rolling_sequence_window(2**100) is None
    assert ctx.rolling_token_window(2**63) is None
    assert ctx.rolling_token_window(2**100) is None
    with pytest.raises(ValueError):
        ctx.rolling_sequence_window(-(2**100))
    with pytest.raises(ValueError):
        ctx.replace_message_range(-(2**70), 2, Message.system("s"))
    with pytest.raises(TypeError):
        ctx.replace_message_range(True, 2, Message.system("s"))


def test_log_event_with_an_odd_type_is_dropped(caplog):
    ctx = Context.new()
    with caplog.at_level(logging.WARNING, logger="ctxfold"):
        ctx.log_event(["turn_start"])  # type: ignore[arg-type]
        ctx.log_event(None)  # type: ignore[arg-type]
        ctx.log_event("no_such_type")
    assert ctx.next_seq == 0 and caplog.text.count("dropped") == 3


def test_file_system_errors_keep_their_kind(tmp_path):
    ctx = Context.new()
    target = tmp_path / ctx._core.file_name()
    target.mkdir()  # where the file should go, a folder
    with pytest.raises(IsADirectoryError) as e:
        ctx.save(tmp_path)
    assert e.value.errno == errno.EISDIR
    f = tmp_path / "plain-file"
    f.write_text("x")
    with pytest.raises(FileExistsError) as e2:  # the folder to create is a file
        Context.new().save(f)
    assert e2.value.errno == errno.EEXIST
    with pytest.raises(NotADirectoryError) as e4:
        Context.new().save(f / "below")
    assert e4.value.errno == errno.ENOTDIR
    with pytest.raises(FileNotFoundError) as e3:
        Context.load(tmp_path / "missing.json")
    assert e3.value.errno == errno.ENOENT
    with pytest.raises(IsADirectoryError):
        Context.load(target)


# ---- a crash loop does not fill the disk ------------------------------------------------------


def test_the_next_save_removes_what_dead_writers_left(tmp_path):
    import subprocess
    import sys

    ctx = Context.new()
    ctx.add_messages([Message.user("x" * 100) for _ in range(10)])
    path = ctx.save(tmp_path)
    name = os.path.basename(path)
    # A dead writer's temporary file: named for a process that no longer exists.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    litter = tmp_path / f".{name}.{dead.pid}.0.tmp"
    litter.write_text("torn")
    # A live writer's (this process's pid, an unused counter) must stay.
    live = tmp_path / f".{name}.{os.getpid()}.999999.tmp"
    live.write_text("in progress")
    other = tmp_path / ".unrelated.tmp"
    other.write_text("not ours")
    ctx.save(tmp_path)
    assert not litter.exists()
    assert live.exists() and other.exists()


# ---- a file without the `messages` anchor -------------------------------------------------------


def test_a_file_without_the_messages_anchor_can_be_appended_to():
    ctx = Context.new()
    ctx.add_messages([Message.user("a"), Message.user("b")])
    doc = ctx.serialize()
    doc["anchors"] = [["system_prompt", 0], ["tools", 0]]
    back = Context.deserialize(doc)
    back.add_message(Message.user("c"))
    assert [m.text for m in back.messages] == ["a", "b", "c"]
    assert dict(back.anchor_points)["messages"] == 3


# ---- the stub and the code agree on created_at --------------------------------------------------


def test_created_at_takes_what_the_stub_says():
    m = Message.user("x", created_at="2024-05-06T07:08:09.123456+00:00")
    assert m.created_at.isoformat() == "2024-05-06T07:08:09.123456+00:00"
    with pytest.raises(ValueError):
        Message.user("x", created_at="not a time")
    with pytest.raises(TypeError):
        Message.user("x", created_at=12)  # type: ignore[arg-type]


# ---- a tool part counts as the compact JSON of the whole part dict ------------------------------


def test_a_tool_part_counts_as_its_compact_json(tiktoken_oracle):
    part = Part.tool("search", "Search the web", {"type": "object", "properties": {"q": {"type": "string"}}})
    m = Message("tool", [part])
    text = "\n".join(["tool", json.dumps(part.to_dict(), ensure_ascii=False, separators=(",", ":"))])
    assert m.count_tokens() == 3 + len(tiktoken_oracle["cl100k_base"].encode_ordinary(text))
