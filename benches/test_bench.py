from __future__ import annotations

import json
import os
import tempfile

import pytest
from conftest import SIZES
from ctxfold import Context, Message
from ctxfold.demo_transcript import build_transcript

# ---- the pure-Python way: a list of dicts, an event list, anchors shifted in a loop -----


class PyContext:
    def __init__(self):
        self.messages: list[dict] = []
        self.events: list[dict] = []
        self.anchors: list[list] = [["system_prompt", 0], ["tools", 0], ["messages", 0]]

    def append(self, msg: dict, anchor: str = "messages"):
        k = next(i for i, a in enumerate(self.anchors) if a[0] == anchor)
        pos = self.anchors[k][1]
        self.messages.insert(pos, msg)
        self.events.append({"seq": len(self.events), "op": "insert", "position": pos, "message": msg})
        for a in self.anchors[k:]:
            a[1] += 1

    def replace(self, first: int, last: int, msg: dict):
        self.messages[first:last + 1] = [msg]
        self.events.append({"seq": len(self.events), "op": "replace", "first": first, "last": last, "message": msg})
        for a in self.anchors:
            if a[1] > last:
                a[1] -= last - first
            elif a[1] > first:
                a[1] = first + 1

    def read(self):
        return list(self.messages)


_CACHE: dict[int, list[Message]] = {}


def transcript(n):
    if n not in _CACHE:
        _CACHE[n] = build_transcript(n)
    return _CACHE[n]


def dicts(n):
    return [m.to_dict() for m in transcript(n)]


def filled(n) -> Context:
    ctx = Context()
    ctx.add_messages(transcript(n))
    return ctx


def py_filled(n) -> PyContext:
    p = PyContext()
    for d in dicts(n):
        p.append(d)
    return p


@pytest.mark.parametrize("n", SIZES)
def test_append(record, n):
    msgs, ds = transcript(n), dicts(n)

    def ours():
        ctx = Context()
        for m in msgs:
            ctx.add_message(m)

    def pure():
        p = PyContext()
        for d in ds:
            p.append(d)

    record("append n messages", n, "ctxfold", ours, rounds=3)
    record("append n messages", n, "pure-python", pure, rounds=3)


@pytest.mark.parametrize("n", SIZES)
def test_insert_mid_anchor(record, n):
    ctx, p = filled(n), py_filled(n)
    ctx.add_anchor("mid", n // 2)
    p.anchors.insert(2, ["mid", n // 2])
    m, d = Message.user("x"), Message.user("x").to_dict()
    record("insert at mid anchor", n, "ctxfold", lambda: ctx.append(m, "mid"), rounds=50)
    record("insert at mid anchor", n, "pure-python", lambda: p.append(d, "mid"), rounds=50)


@pytest.mark.parametrize("n", SIZES)
def test_replace_half(record, n):
    m, d = Message.system("summary"), Message.system("summary").to_dict()
    state = {}

    def setup_ours():
        state["c"] = filled(n)
        return (), {}

    def setup_pure():
        state["p"] = py_filled(n)
        return (), {}

    first, last = n // 4, n // 4 + n // 2
    record("replace half the transcript", n, "ctxfold",
           lambda: state["c"].replace_message_range(first, last, m), setup=setup_ours)
    record("replace half the transcript", n, "pure-python",
           lambda: state["p"].replace(first, last, d), setup=setup_pure)


@pytest.mark.parametrize("n", SIZES)
def test_read_messages(record, n):
    ctx, p = filled(n), py_filled(n)
    record("read messages", n, "ctxfold", lambda: ctx.messages, rounds=20)
    record("read messages", n, "pure-python", p.read, rounds=20)


def counted_text(d):
    """The pure-Python way of the counted text (docs/guide.md, Counting tokens) (what a user would write)."""
    pieces = [d["role"]] + ([d["name"]] if d.get("name") else [])
    media = 0
    c = d["content"]
    if isinstance(c, str):
        pieces.append(c)
    elif c:
        for p in c:
            t = p["type"]
            if t in ("text", "thinking"):
                pieces.append(p["text"])
            elif t == "tool_use":
                a = p.get("arguments", {})
                pieces.append(f"{p['name']}({a if isinstance(a, str) else json.dumps(a, separators=(',', ':'))})")
            elif t == "tool_result":
                pieces.append(p["content"] if isinstance(p["content"], str) else json.dumps(p["content"]))
            elif t in ("image", "image_url", "input_image", "audio", "video", "file", "pdf"):
                media += 1
            else:
                pieces.append(json.dumps(p, separators=(",", ":")))
    for tc in d.get("tool_calls") or []:
        a = tc.get("arguments", {})
        pieces.append(f"{tc['name']}({a if isinstance(a, str) else json.dumps(a, separators=(',', ':'))})")
    return "\n".join(pieces), media


@pytest.mark.parametrize("n", SIZES)
def test_cold_count(record, tiktoken_oracle, n, tmp_path):
    enc = tiktoken_oracle["cl100k_base"]
    ds = dicts(n)
    # Cold for ctxfold means messages never counted: fresh Message objects each round.
    fresh = {}

    def setup_ours():
        ctx = Context()
        ctx.add_messages([Message.from_dict(d) for d in ds])
        fresh["c"] = ctx
        return (), {}

    def pure():
        total = 0
        for d in ds:
            text, media = counted_text(d)
            total += 3 + len(enc.encode_ordinary(text)) + 85 * media
        return total

    record("cold token count (cl100k)", n, "ctxfold", lambda: fresh["c"].total_token_count(), setup=setup_ours, rounds=3)
    record("cold token count (cl100k)", n, "python tiktoken loop", pure, rounds=3)
    assert fresh["c"].total_token_count() == pure()


@pytest.mark.parametrize("n", SIZES)
def test_warm_window(record, tiktoken_oracle, n):
    enc = tiktoken_oracle["cl100k_base"]
    ctx = filled(n)
    budget = ctx.total_token_count() // 10
    ds = dicts(n)
    counts = [3 + len(enc.encode_ordinary(counted_text(d)[0])) + 85 * counted_text(d)[1] for d in ds]

    def pure():
        # sort by seq, greedy suffix, copy into a new context (the Python seed's way)
        order = sorted(range(len(ds)))
        used, start = 0, len(order)
        for i in reversed(order):
            if used + counts[i] > budget:
                break
            used += counts[i]
            start = i
        child = PyContext()
        for i in order[start:]:
            child.append(dict(ds[i]))
        return child

    record("warm token window (~10%)", n, "ctxfold", lambda: ctx.rolling_token_window(budget), rounds=20)
    record("warm token window (~10%)", n, "pure-python", pure, rounds=5)
    try:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
        from langchain_core.messages.utils import count_tokens_approximately, trim_messages
    except ImportError:
        return
    lc = []
    for d in ds:
        text = counted_text(d)[0]
        lc.append({"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}.get(d["role"], HumanMessage)(text)
                  if d["role"] != "tool" else ToolMessage(text, tool_call_id=d["tool_call_id"] or "x"))

    def exact(msgs):
        return sum(3 + len(enc.encode_ordinary(str(m.content))) for m in msgs)

    # Exact LangChain trimming re-encodes as it goes: one round is seconds at 100k.
    record("warm token window (~10%)", n, "langchain trim (exact)",
           lambda: trim_messages(lc, max_tokens=budget, token_counter=exact, strategy="last"), rounds=1)
    record("warm token window (~10%)", n, "langchain trim (approx)",
           lambda: trim_messages(lc, max_tokens=budget, token_counter=count_tokens_approximately, strategy="last"), rounds=3)


def _py_files(n, d):
    pyfile = os.path.join(d, "py.json")
    ds = dicts(n)

    def py_save():
        with open(pyfile, "w") as f:
            json.dump({"messages": ds}, f, indent=2)

    def py_load():
        with open(pyfile) as f:
            return json.load(f)

    py_save()
    return pyfile, py_save, py_load


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["save", "load"])
def test_save_and_load(record, n, op):
    ctx = filled(n)
    with tempfile.TemporaryDirectory() as d:
        path = ctx.save(d)
        pyfile, py_save, py_load = _py_files(n, d)
        if op == "save":
            record("save", n, "ctxfold", lambda: ctx.save(d), rounds=3)
            record("save", n, "stdlib json indent=2", py_save, rounds=3)
            print(f"\nfile sizes n={n}: ctxfold {os.path.getsize(path):,} B, python {os.path.getsize(pyfile):,} B")
        else:
            record("load", n, "ctxfold", lambda: Context.load(path), rounds=3)
            record("load", n, "stdlib json", py_load, rounds=3)
