"""`ctxfold serve`'s JSON API and file serving, through Starlette's TestClient: every field
against the library's answers, paging, search, 404/400 JSON, and only the page's own files."""

from __future__ import annotations

import re

import pytest
from _viewer import origins, sample_context, with_compaction_record
from ctxfold import Context, Message, Store
from ctxfold.viewer import open_source
from ctxfold.viewer._app import make_app
from starlette.testclient import TestClient

MESSAGE_KEYS = set(Message.user("x").to_dict()) | {"position", "text", "parts", "tokens", "seq", "compaction"}
LIST_KEYS = {"id", "created_at", "updated_at", "next_seq", "message_count", "agent_name", "origin_context_id"}


@pytest.fixture
def client_for():
    """Opens a SOURCE and gives a client of its app; the sources are closed afterwards."""
    opened = []

    def make(source_path: str) -> TestClient:
        source = open_source(source_path)
        opened.append(source)
        return TestClient(make_app(source), base_url="http://127.0.0.1")

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def file_ctx(tmp_path, client_for):
    ctx = with_compaction_record(sample_context())
    return ctx, client_for(ctx.save(tmp_path))


def test_contexts_of_a_file(file_ctx):
    ctx, c = file_ctx
    r = c.get("/api/contexts")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) == {"contexts", "total"} and body["total"] == 1
    (row,) = body["contexts"]
    assert set(row) == LIST_KEYS
    assert row["id"] == ctx.id and row["next_seq"] == ctx.next_seq and row["message_count"] == len(ctx)
    assert row["agent_name"] == "builder" and row["created_at"] == ctx.serialize()["created_at"]
    assert c.get("/api/contexts", params={"q": "BUILD"}).json()["total"] == 1  # case-insensitive, agent name
    assert c.get("/api/contexts", params={"q": ctx.id[:8]}).json()["total"] == 1
    assert c.get("/api/contexts", params={"q": "nothing-like-it"}).json() == {"contexts": [], "total": 0}


def test_transcript_every_field(file_ctx):
    ctx, c = file_ctx
    body = c.get(f"/api/contexts/{ctx.id}").json()
    assert set(body) == {"id", "next_seq", "seq", "message_count", "total_tokens", "messages"}
    assert body["id"] == ctx.id and body["seq"] == body["next_seq"] == ctx.next_seq
    assert body["message_count"] == len(ctx) and body["total_tokens"] == ctx.total_token_count()
    events = ctx.serialize()["events"]
    seqs = origins(ctx)
    for i, (row, m) in enumerate(zip(body["messages"], ctx.messages, strict=True)):
        assert set(row) == MESSAGE_KEYS
        assert {k: row[k] for k in m.to_dict()} == m.to_dict()
        assert row["position"] == i and row["seq"] == seqs[i]
        assert row["text"] == m.text and row["parts"] == [p.to_dict() for p in m.parts]
        assert row["tokens"] == m.count_tokens()
        d = events[row["seq"]]["data"]
        if d["op"] == "replace":
            shadowed = ctx.messages_at(row["seq"])[d["first"]:d["last"] + 1]
            assert row["compaction"] == {"seq": row["seq"], "messages": len(shadowed),
                                         "tokens": sum(x.count_tokens() for x in shadowed)}
        else:
            assert row["compaction"] is None
    assert sum(r["compaction"] is not None for r in body["messages"]) == 1
    o200k = c.get(f"/api/contexts/{ctx.id}", params={"encoding": "o200k_base"}).json()
    assert [r["tokens"] for r in o200k["messages"]] == [m.count_tokens("o200k_base") for m in ctx.messages]
    assert o200k["total_tokens"] == ctx.total_token_count("o200k_base")


def test_seq_and_originals(file_ctx):
    ctx, c = file_ctx
    for seq in range(ctx.next_seq + 1):
        body = c.get(f"/api/contexts/{ctx.id}", params={"seq": seq}).json()
        at = ctx.messages_at(seq) if seq < ctx.next_seq else ctx.messages
        assert body["seq"] == seq and body["next_seq"] == ctx.next_seq and body["message_count"] == len(at)
        assert [m["id"] for m in body["messages"]] == [m.id for m in at]
        assert [m["seq"] for m in body["messages"]] == origins(ctx, seq)
        assert body["total_tokens"] == sum(m.count_tokens() for m in at)
    # A summary's originals are the transcript just before its event, over its range.
    summary = next(r for r in c.get(f"/api/contexts/{ctx.id}").json()["messages"] if r["compaction"])
    ev = c.get(f"/api/contexts/{ctx.id}/events", params={"after": summary["seq"] - 1, "limit": 1}).json()["events"][0]
    first, last = ev["data"]["first"], ev["data"]["last"]
    assert ev["data"]["compaction"]["tokens_before"] == 123  # the record rides along
    originals = c.get(f"/api/contexts/{ctx.id}", params={"seq": summary["seq"], "offset": first,
                                                         "limit": last - first + 1}).json()["messages"]
    assert [m["id"] for m in originals] == [m.id for m in ctx.messages_at(summary["seq"])[first:last + 1]]
    assert len(originals) == summary["compaction"]["messages"]
    assert sum(m["tokens"] for m in originals) == summary["compaction"]["tokens"]


def big_file(tmp_path, n: int) -> tuple[Context, str]:
    ctx = Context(messages=[Message.user(f"message {i}") for i in range(n)])
    return ctx, ctx.save(tmp_path)


def test_paging(tmp_path, client_for):
    ctx, path = big_file(tmp_path, 2500)
    c = client_for(path)
    first = c.get(f"/api/contexts/{ctx.id}").json()
    assert len(first["messages"]) == 100 and first["message_count"] == 2500  # limit defaults to 100
    got = []
    for offset in range(0, 2600, 1000):
        page = c.get(f"/api/contexts/{ctx.id}", params={"offset": offset, "limit": 1000}).json()["messages"]
        got += page
    assert [m["text"] for m in got] == [f"message {i}" for i in range(2500)]
    assert [m["position"] for m in got] == list(range(2500))
    tail = c.get(f"/api/contexts/{ctx.id}", params={"offset": 2498, "limit": 10}).json()["messages"]
    assert [m["position"] for m in tail] == [2498, 2499]
    assert c.get(f"/api/contexts/{ctx.id}", params={"offset": 9999}).json()["messages"] == []
    assert c.get(f"/api/contexts/{ctx.id}", params={"limit": 0}).json()["messages"] == []
    events = c.get(f"/api/contexts/{ctx.id}/events").json()["events"]
    assert [e["seq"] for e in events] == list(range(100))
    later = c.get(f"/api/contexts/{ctx.id}/events", params={"after": 2400, "limit": 1000}).json()["events"]
    assert [e["seq"] for e in later] == list(range(2401, 2500))
    assert later == ctx.serialize()["events"][2401:]


def test_events_as_in_files(file_ctx):
    ctx, c = file_ctx
    body = c.get(f"/api/contexts/{ctx.id}/events", params={"limit": 1000}).json()
    assert body == {"events": ctx.serialize()["events"]}


@pytest.mark.parametrize(("path", "params", "needle"), [
    ("", {"seq": "999"}, "seq 999 is outside"),
    ("", {"seq": "-1"}, "seq must be 0 or more"),
    ("", {"seq": "x"}, "seq must be an integer"),
    ("", {"limit": "1001"}, "at most 1,000"),
    ("", {"limit": "-1"}, "limit must be 0 or more"),
    ("", {"offset": "-5"}, "offset must be 0 or more"),
    ("", {"encoding": "nope"}, "unknown encoding"),
    ("/events", {"after": "-2"}, "after must be -1 or more"),
    ("/events", {"limit": "5000"}, "at most 1,000"),
    ("/window", {}, "budget is required"),
    ("/window", {"budget": "-1"}, "budget must be 0 or more"),
    ("/diff", {"from": "5", "to": "2"}, "must not be after"),
    ("/diff", {"from": "99"}, "seq 99 is outside"),
])
def test_bad_parameters_are_400_json(file_ctx, path, params, needle):
    ctx, c = file_ctx
    r = c.get(f"/api/contexts/{ctx.id}{path}", params=params)
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    assert needle in r.json()["error"]
    assert c.get("/api/contexts", params={"limit": "lots"}).status_code == 400


def test_unknown_is_404_json(file_ctx):
    ctx, c = file_ctx
    for url in ("/api/contexts/nope", "/api/contexts/nope/events", "/api/contexts/nope/window?budget=5",
                "/api/nothing", "/nothing", "/static/nothing.js"):
        r = c.get(url)
        assert r.status_code == 404 and r.headers["content-type"] == "application/json", url
        assert "error" in r.json()


def test_window_and_diff(file_ctx):
    ctx, c = file_ctx
    for budget in (0, 30, 60, 100, 10_000):
        w = c.get(f"/api/contexts/{ctx.id}/window", params={"budget": budget}).json()
        child = ctx.rolling_token_window(budget)
        assert w["window"] == (child is not None) and w["budget"] == budget
        if child is not None:
            assert w["kept"] == len(child) and w["tokens"] == child.total_token_count()
            assert w["specials"] == [0, 1]  # the system prompt and tool definitions stay in every window
            suffix = ctx.messages[w["start"]:]
            assert child.messages[len(child) - len(suffix):] == suffix
    for a in range(ctx.next_seq + 1):
        d = c.get(f"/api/contexts/{ctx.id}/diff", params={"from": a}).json()
        assert d == {"from": a, "to": ctx.next_seq, "unchanged": ctx.changed_since(a),
                     "from_count": len(ctx.messages_at(a)), "to_count": len(ctx.messages_at(ctx.next_seq))}
    d = c.get(f"/api/contexts/{ctx.id}/diff", params={"from": 3, "to": 5}).json()
    assert d["unchanged"] == 3 and d["to_count"] == 5  # two appends since 3


def test_a_store_newest_first_searchable_and_live(store_url, client_for):
    with Store(store_url) as store:
        saved = []
        for i in range(5):
            ctx = Context(messages=[Message.user(f"hello {i}")], agent_name=f"agent-{i % 2}")
            store.save(ctx)
            saved.append(ctx)
        c = client_for(store_url)
        body = c.get("/api/contexts").json()
        assert body["total"] == 5 and [r["id"] for r in body["contexts"]] == [x.id for x in reversed(saved)]
        page = c.get("/api/contexts", params={"limit": 2, "offset": 2}).json()
        assert page["total"] == 5 and [r["id"] for r in page["contexts"]] == [saved[2].id, saved[1].id]
        found = c.get("/api/contexts", params={"q": "agent-1", "limit": 1}).json()
        assert found["total"] == 2 and found["contexts"][0]["id"] == saved[3].id
        one = saved[0]
        assert c.get(f"/api/contexts/{one.id}").json()["message_count"] == 1
        # Another process saves a turn: the next request sees it.
        one.add_message(Message.assistant("a new turn"))
        store.save(one)
        body = c.get(f"/api/contexts/{one.id}").json()
        assert body["message_count"] == 2 and body["next_seq"] == 2 and body["messages"][1]["seq"] == 1
        assert c.get(f"/api/contexts/{one.id}", params={"seq": 1}).json()["message_count"] == 1
        assert c.get("/api/contexts/missing").status_code == 404


def test_only_its_own_files(file_ctx):
    ctx, c = file_ctx
    index = c.get("/")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    csp = index.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe" not in csp
    assert index.headers["x-content-type-options"] == "nosniff"
    assert c.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    for url in ("/static/../_app.py", "/static/..%2f_app.py", "/static/%2e%2e/_model.py", "/static/..%2F..%2F__init__.py",
                "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/../../../../etc/passwd", "/static//etc/passwd",
                "/static/_app.py", "/static/", "/static/.", "/static/..", "/api/../_app.py"):
        r = c.get(url)
        # 404, or (where the client itself resolved the dots) the page's own index.
        assert r.status_code == 404 or (r.url.path == "/" and r.content == index.content), url
        assert b"starlette" not in r.content and b"root:" not in r.content, url


def test_read_only_and_loopback_names(file_ctx):
    ctx, c = file_ctx
    assert c.post("/api/contexts").status_code == 405
    assert c.delete(f"/api/contexts/{ctx.id}").status_code == 405
    # Another site's name pointed at this machine (DNS rebinding) is refused.
    assert c.get("/api/contexts", headers={"host": "evil.example"}).status_code == 400
    assert c.get("/api/contexts", headers={"host": "localhost:8765"}).status_code == 200


def test_the_page_never_parses_text_as_html(file_ctx):
    """The page's script puts content in with textContent only: none of the ways text becomes
    markup or code appears in it (the browser test checks the effect)."""
    ctx, c = file_ctx
    script = c.get("/static/app.js").text
    assert "textContent" in script
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                 "setTimeout('", 'setTimeout("', "createContextualFragment", "srcdoc"):
        assert sink not in script, sink
    page = c.get("/").text
    assert "<script>" not in page and not re.search(r"\son[a-z]+\s*=", page)  # no inline code or handlers
