"""`ctxfold show`: what it prints (tokens, positions, origins, compactions, windows, the log)
against the library's own answers, as JSON and as text; colors only on a terminal; one-line
errors."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys

import pytest
from _viewer import HOSTILE, origins, sample_context, with_compaction_record
from ctxfold import Context, Message, Store
from ctxfold._cli import main
from ctxfold.formats import from_openai_chat, to_openai_chat
from ctxfold.viewer import ContextView

ANSI = re.compile(r"\x1b\[")
MESSAGE_KEYS = set(Message.user("x").to_dict()) | {"position", "text", "parts", "tokens", "seq", "compaction"}


@pytest.fixture
def saved(tmp_path):
    ctx = sample_context()
    return ctx, ctx.save(tmp_path)


def show_json(capsys, *args: str) -> dict:
    assert main(["show", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tokens_are_each_messages_count(saved, capsys, encoding):
    ctx, path = saved
    out = show_json(capsys, path, "--encoding", encoding)
    shown = ctx.messages
    assert [m["tokens"] for m in out["messages"]] == [m.count_tokens(encoding) for m in shown]
    assert out["total_tokens"] == ctx.total_token_count(encoding) == sum(m["tokens"] for m in out["messages"])
    assert main(["show", path, "--encoding", encoding]) == 0
    text = capsys.readouterr().out
    for m in shown:
        assert f"{m.count_tokens(encoding):,} tok" in text


def test_json_has_the_api_keys_and_every_field(saved, capsys):
    ctx, path = saved
    out = show_json(capsys, path)
    assert set(out) == {"id", "next_seq", "seq", "message_count", "total_tokens", "messages"}
    assert (out["id"], out["next_seq"], out["seq"], out["message_count"]) == (ctx.id, ctx.next_seq, ctx.next_seq, len(ctx))
    seqs = origins(ctx)
    for i, (row, m) in enumerate(zip(out["messages"], ctx.messages, strict=True)):
        assert set(row) == MESSAGE_KEYS
        assert {k: row[k] for k in m.to_dict()} == m.to_dict()
        assert row["position"] == i and row["seq"] == seqs[i]
        assert row["text"] == m.text and row["parts"] == [p.to_dict() for p in m.parts]
    summary = next(r for r in out["messages"] if r["text"].startswith("summary:"))
    shadowed = ctx.messages_at(summary["seq"])[2:6]
    assert summary["compaction"] == {"seq": summary["seq"], "messages": 4,
                                     "tokens": sum(m.count_tokens() for m in shadowed)}
    assert [r["compaction"] for r in out["messages"] if r is not summary] == [None] * (len(ctx) - 1)


def test_seq_is_messages_at(saved, capsys):
    ctx, path = saved
    for seq in range(ctx.next_seq + 1):
        out = show_json(capsys, path, "--seq", str(seq))
        at = ctx.messages_at(seq) if seq < ctx.next_seq else ctx.messages
        assert [m["id"] for m in out["messages"]] == [m.id for m in at]
        assert [m["text"] for m in out["messages"]] == [m.text for m in at]
        assert [m["position"] for m in out["messages"]] == list(range(len(at)))
        assert [m["seq"] for m in out["messages"]] == origins(ctx, seq)
        assert (out["seq"], out["message_count"]) == (seq, len(at))
        assert out["total_tokens"] == sum(m.count_tokens() for m in at)


def test_window_marks_where_rolling_token_window_starts(saved, capsys):
    ctx, path = saved
    total = ctx.total_token_count()
    seen = set()
    for budget in range(0, total + 20, 7):
        out = show_json(capsys, path, "--window", str(budget))
        w = out["window"]
        child = ctx.rolling_token_window(budget)
        if child is None:
            assert not w["window"] and w["start"] == 0
            continue
        kept = child.messages
        suffix = ctx.messages[w["start"]:]
        # What the window keeps after its special messages is exactly the shown suffix from start.
        assert kept[len(kept) - len(suffix):] == suffix
        assert w["kept"] == len(kept) and w["tokens"] == child.total_token_count()
        seen.add(w["start"])
        assert main(["show", path, "--window", str(budget)]) == 0
        text = capsys.readouterr().out
        assert text.count(f"token window of {budget:,}") == 1
        if w["start"] < len(ctx):
            before_marker = text.split("token window of")[0]
            assert f"#{w['start']} " not in before_marker and f"#{w['start'] - 1} " in before_marker
    assert len(seen) > 2  # the budgets moved the start around


def test_events_list_the_log(saved, capsys):
    ctx, path = saved
    out = show_json(capsys, path, "--events")
    assert out == {"events": ctx.serialize()["events"]}
    assert main(["show", path, "--events"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == ctx.next_seq
    assert any("replace 2-5: assistant summary" in line for line in lines)
    assert any("remove " in line for line in lines) and any("materialize" in line for line in lines)


def test_text_blocks_show_parts_calls_media_and_the_summary(saved, capsys):
    ctx, path = saved
    assert main(["show", path]) == 0
    text = capsys.readouterr().out
    assert HOSTILE in text  # printed as it is
    summary = next(m for m in ctx.messages if m.text.startswith("summary:"))
    assert "stands for 4 messages" in text and summary.text in text
    assert "You are careful.\n" in text or "You are careful." in text
    assert "The user prefers short answers." in text  # the dynamic message as resolved
    # At the seq before the summary: the thinking, the call with its arguments, the result, the image.
    seq = next(e.seq for e in ctx.events() if e.message is summary)
    assert main(["show", path, "--seq", str(seq)]) == 0
    text = capsys.readouterr().out
    for piece in ("thinking", "look at the cache key", 'search({"q":"cache key"})', "call_1",
                  "cache miss for key", "[image] https://example.com/s.png", "answers call_1"):
        assert piece in text, piece


def test_compaction_record_is_shown_when_present(tmp_path, capsys):
    ctx = with_compaction_record(sample_context())
    path = ctx.save(tmp_path)
    assert main(["show", path]) == 0
    text = capsys.readouterr().out
    assert "compaction: based_on 9, tokens_before 123, tokens_after 9, encoding cl100k_base" in text


def run_cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxfold._cli", *args], capture_output=True, text=True,
                          encoding="utf-8", **kw)


def test_plain_when_piped(saved):
    ctx, path = saved
    piped = run_cli("show", path)
    assert piped.returncode == 0 and "stands for 4 messages" in piped.stdout
    assert not ANSI.search(piped.stdout)
    assert not ANSI.search(run_cli("show", path, "--events").stdout)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_colored_on_a_terminal(saved):
    import pty

    ctx, path = saved
    # The same command on a terminal (a pseudo-terminal as its stdout) is colored.
    main_fd, child_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"TERM": "xterm-256color"}
    p = subprocess.Popen([sys.executable, "-m", "ctxfold._cli", "show", path], stdout=child_fd, stderr=subprocess.PIPE,
                         env=env)
    os.close(child_fd)
    chunks = []
    while True:
        try:
            b = os.read(main_fd, 65536)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=60) == 0, err
    os.close(main_fd)
    out = b"".join(chunks).decode("utf-8", "replace")
    assert ANSI.search(out) and "stands for 4 messages" in out


def one_line_error(*args: str) -> str:
    r = run_cli(*args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    # `serve` says what it is doing first ("ctxfold serve: reading …"); the error is one line.
    lines = [line for line in r.stderr.splitlines() if not line.startswith("ctxfold serve: ")]
    assert len(lines) == 1 and lines[0].startswith("ctxfold: error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def test_bad_input_is_one_line(tmp_path, saved):
    ctx, path = saved
    assert "no such file" in one_line_error("show", str(tmp_path / "missing.json")).lower()
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 2, "events": [')
    assert "broken.json" in one_line_error("show", str(broken))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 2, "events": [{"seq": 0, "type": "user_message", "time": "x", "data": {}}]}))
    assert "bad.json" in one_line_error("show", str(bad))
    assert "seq 99 is outside" in one_line_error("show", path, "--seq", "99")
    assert "seq -1 is outside" in one_line_error("show", path, "--seq", "-1")
    assert "unknown encoding" in one_line_error("show", path, "--encoding", "nope")
    assert "--window" in one_line_error("show", path, "--window", "10", "--seq", "1")
    assert "no context 'nope'" in one_line_error("show", path, "nope")
    assert "folder" in one_line_error("show", str(tmp_path))
    req = tmp_path / "req.json"
    req.write_text("{not json")
    assert "not JSON" in one_line_error("show", str(req), "--from", "openai_chat")
    req.write_text(json.dumps({"messages": [{"role": "robot", "content": "x"}]}))
    one_line_error("show", str(req), "--from", "openai_chat")


def test_a_provider_request(tmp_path, capsys):
    ctx = sample_context()
    req = tmp_path / "req.json"
    body = to_openai_chat(ctx.messages_at(9))  # before the summary: calls, results, an image
    req.write_text(json.dumps(body))
    out = show_json(capsys, str(req), "--from", "openai_chat")
    expected = from_openai_chat(body["messages"])
    assert [(m["role"], m["text"], m["tokens"]) for m in out["messages"]] == \
        [(m.role, m.text, m.count_tokens()) for m in expected]
    assert any("cache miss" in m["text"] for m in out["messages"])


def test_a_store(store_url, capsys, tmp_path):
    a, b = sample_context(), Context(messages=[Message.user("other")])
    with Store(store_url) as store:
        store.save(a)
        out = None
        assert main(["show", store_url]) == 0  # one context: no id needed
        capsys.readouterr()
        store.save(b)
    out = show_json(capsys, store_url, a.id)
    assert [m["id"] for m in out["messages"]] == [m.id for m in a.messages]
    assert [m["seq"] for m in out["messages"]] == origins(a)
    assert main(["show", store_url]) == 1
    err = capsys.readouterr().err
    assert "holds 2 contexts" in err and len(err.splitlines()) == 1
    assert main(["show", store_url, "nope"]) == 1
    assert "no context 'nope'" in capsys.readouterr().err
    if store_url.startswith("sqlite://"):  # the database file itself is a SOURCE too
        out = show_json(capsys, store_url[len("sqlite://"):], b.id)
        assert out["messages"][0]["text"] == "other"


def test_plain_text_without_rich(monkeypatch):
    """Without the viewer extra a terminal still gets every line, uncolored."""
    import io

    from ctxfold.viewer._terminal import transcript_lines, write

    ctx = sample_context()
    view = ContextView(ctx)
    t = view.transcript()
    colored, plain = io.StringIO(), io.StringIO()
    write(transcript_lines(t, None, colored), colored, color=True)
    assert ANSI.search(colored.getvalue())
    monkeypatch.setitem(sys.modules, "rich.console", None)  # what `import rich.console` sees when not installed
    write(transcript_lines(t, None, plain), plain, color=True)
    assert not ANSI.search(plain.getvalue())
    assert ANSI.sub("", re.sub(r"\x1b\[[0-9;]*m", "", colored.getvalue())).splitlines() == plain.getvalue().splitlines()


def test_serve_errors_are_one_line(saved, tmp_path):
    ctx, path = saved
    assert "no such file" in one_line_error("serve", str(tmp_path / "missing.json")).lower()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert f"cannot listen on 127.0.0.1:{port}" in one_line_error("serve", path, "--port", str(port))
