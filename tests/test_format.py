"""The version 2 format: every saved document validates against docs/format.schema.json, the
CLI's convert and stats work on real files, and encoding is deterministic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from ctxfold import Context, Message
from ctxfold._cli import main
from ctxfold.demo_transcript import build_transcript
from test_persistence import rich_context

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "format.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def contexts() -> list[Context]:
    empty = Context()
    agent = Context()
    agent.add_messages(build_transcript(400))
    agent.replace_message_range(10, 200, Message.system("summary of 10..200"))
    agent.log_event("turn_start", {"turn": 7, "note": None})
    agent.add_message(Message.assistant("calls", tool_calls=[{"id": "c9", "name": "f", "arguments": {"x": 1}}]))
    agent.patch_dangling_tool_calls()
    agent.remove_message_range(3, 5)
    child = agent.rolling_sequence_window(50)
    assert child is not None
    return [empty, rich_context(), agent, child, agent.strip_thinking()]


@pytest.mark.parametrize("k", range(5))
def test_saved_documents_match_the_schema(tmp_path, k):
    ctx = contexts()[k]
    valid(ctx.serialize())
    path = ctx.save(tmp_path)
    with open(path, encoding="utf-8") as f:
        on_disk = json.load(f)
    valid(on_disk)
    # The file is the serialized dict, byte for byte in meaning.
    assert on_disk == json.loads(json.dumps(ctx.serialize()))


def test_schema_is_not_vacuous():
    doc = rich_context().serialize()
    for broken in (
        {k: v for k, v in doc.items() if k != "events"},
        {**doc, "version": 3},
        {**doc, "events": [{**doc["events"][0], "data": {"op": "insert"}}]},
        {**doc, "events": [{**doc["events"][0], "time": "yesterday"}]},
        {**doc, "messages": [{"role": "robot", "content": None}]},
    ):
        assert list(VALIDATOR.iter_errors(broken)), broken


def test_saving_twice_gives_identical_bytes(tmp_path):
    ctx = rich_context()
    first = Path(ctx.save(tmp_path / "a")).read_bytes()
    again = Path(Context.load(ctx.save(tmp_path / "b")).save(tmp_path / "c")).read_bytes()
    assert first == again


def test_convert_v1_and_versionless_to_v2(tmp_path, capsys):
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps({"version": 1, "id": "old", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}))
    out = tmp_path / "v2.json"
    assert main(["convert", str(v1), str(out)]) == 0
    doc = json.loads(out.read_text())
    valid(doc)
    assert [m["content"] for m in doc["messages"]] == ["hi", "yo"] and doc["id"] == "old"
    assert "version 2, 2 messages" in capsys.readouterr().out

    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}],
                                "anchor_points": [["system_prompt", 0], ["tools", 0], ["messages", 1]]}))
    assert main(["convert", str(seed), str(out)]) == 0
    back = Context.load(out)
    assert back.messages[0].content == [{"type": "text", "text": "a"}] or back.messages[0].text == "a"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


def test_convert_and_stats_refuse_bad_files_cleanly(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rich_context().serialize())[:-40])
    assert main(["convert", str(bad), str(tmp_path / "out.json")]) == 1
    assert main(["stats", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err
    assert "ctxfold: error:" in err and "not a valid JSON document" in err and "no such file" in err
    assert not (tmp_path / "out.json").exists()


def test_stats(tmp_path, capsys):
    ctx = Context()
    ctx.add_messages(build_transcript(120))
    ctx.log_event("turn_end", {})
    path = ctx.save(tmp_path)
    assert main(["stats", path]) == 0
    out = capsys.readouterr().out
    roles: dict[str, int] = {}
    for m in ctx.messages:
        roles[m.role] = roles.get(m.role, 0) + 1
    assert f"{len(ctx):,} messages, {ctx.next_seq:,} events" in out
    assert str(roles) in out and "'turn_end': 1" in out
    assert f"tokens cl100k_base: {ctx.total_token_count('cl100k_base'):,}" in out
    assert f"tokens o200k_base: {ctx.total_token_count('o200k_base'):,}" in out
