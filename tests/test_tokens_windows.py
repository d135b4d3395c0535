from __future__ import annotations

import json

import pytest
from ctxfold import Context, Message, Part, SystemPromptMessage, ToolDefinitionsMessage, count_text, encodings
from hypothesis import given, settings
from hypothesis import strategies as st

ENCS = ["cl100k_base", "o200k_base"]


def expected(enc, m: Message) -> int:
    """The token rule, written out independently with Python tiktoken."""
    def dumps(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    def call(name, args):
        a = "{}" if args is None else args if isinstance(args, str) else dumps(args)
        return f"{name}({a})"

    pieces = [m.role] + ([m.name] if m.name else [])
    media = 0
    c = m.content
    if isinstance(c, str):
        pieces.append(c)
    elif c is not None:
        for p in c:
            d = p.to_dict()
            t = d["type"]
            if t in ("text", "thinking"):
                pieces.append(d["text"] if isinstance(d["text"], str) else dumps(d["text"]))
            elif t == "tool_use":
                pieces.append(call(d.get("name"), d.get("arguments")))
            elif t == "tool_result":
                pieces.append(d["content"] if isinstance(d["content"], str) else dumps(d["content"]))
            elif t in ("image", "image_url", "input_image", "audio", "video", "file", "pdf"):
                media += 1
            else:
                pieces.append(dumps(d))
    for tc in m.tool_calls:
        pieces.append(call(tc["name"], tc.get("arguments")))
    return 3 + len(enc.encode_ordinary("\n".join(pieces))) + 85 * media


SAMPLES = [
    Message.user("Hello, world"),
    Message.user("日本語のテキスト 🎉🎉 émojis"),
    Message.user("special <|endoftext|> and <|im_start|> text"),
    Message.assistant([Part.thinking("let me think"), Part.text("answer")], name="bot"),
    Message.assistant("x", tool_calls=[{"id": "1", "name": "f", "arguments": {"q": "é", "n": [1, 2]}},
                                       {"id": "2", "name": "g", "arguments": '{"raw":  true}'},
                                       {"id": "3", "name": "h"}]),
    Message.assistant([Part.tool_use("c", "search", {"q": "x"}), Part.tool_use("d", "s", '{"a":1}')]),
    Message.user([Part.tool_result("c", "result text"), Part.tool_result("d", {"k": 1})]),
    Message.user([Part.image({"type": "url", "url": "u"}), Part.text("look"), Part.pdf({"data": "x"})]),
    Message.system([Part.tool("search", "find", {"type": "object"}), Part("mystery", x=1)]),
    Message.tool("call", "done", name="search"),
    Message.assistant(),
    Message.assistant("floats", tool_calls=[{"id": "f", "name": "set", "arguments": {"t": 1e-05, "big": 1e16, "x": 2.5,
                                                                                     "tab\t": "\u0007"}}]),
]


@pytest.mark.parametrize("name", ENCS)
def test_counts_equal_tiktoken(tiktoken_oracle, name):
    for m in SAMPLES:
        assert m.count_tokens(name) == expected(tiktoken_oracle[name], m), m


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_counts_equal_tiktoken_on_generated_text(tiktoken_oracle, text):
    for name in ENCS:
        m = Message.user(text)
        assert m.count_tokens(name) == expected(tiktoken_oracle[name], m)


# Pieces chosen to hit every branch of tiktoken's split: whitespace runs of each kind before
# letters, digits, punctuation and the end, contractions, line breaks, marks, wide spaces.
ATOMS = [" ", "  ", "\t", "\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2009", "\u0085", "\x0b", "a", "Ab", "ABC",
         "Hello", "'s", "'LL", "'re", "don't", "1", "1234567", "!", "?!", "/", "//", "<|endoftext|>", "é", "e\u0301",
         "日本語", "😀", "👍🏽", "Σσ", "Ⅻ", "٣", "\u200b", "-", "_"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ATOMS), max_size=40).map("".join))
def test_counts_equal_tiktoken_on_split_edge_cases(tiktoken_oracle, text):
    for name in ENCS:
        assert count_text(text, name) == len(tiktoken_oracle[name].encode_ordinary(text)), (name, text)


def test_long_runs_equal_tiktoken(tiktoken_oracle):
    for text in ("a" * 100_000, "^" * 100_000, "QUJD" * 25_000, " " * 100_000, "1" * 100_000, "\n" * 100_000,
                 "é" * 50_000, " \n" * 50_000, "ab " * 30_000):
        for name in ENCS:
            assert count_text(text, name) == len(tiktoken_oracle[name].encode_ordinary(text)), (name, text[:8])


def test_encodings_and_unknown():
    assert {"cl100k_base", "o200k_base"} <= set(encodings())
    with pytest.raises(ValueError, match="cl100k_base"):
        Message.user("x").count_tokens("nope")
    for e in encodings():
        assert Message.user("hello").count_tokens(e) > 3


def test_pathological_inputs_finish():
    for text in ("a" * 1_000_000, "^" * 300_000, "QUJD" * 250_000, " " * 1_000_000, "\n" * 1_000_000):
        for name in encodings():
            assert Message.user(text).count_tokens(name) > 1000


def test_totals_track_mutations():
    ctx = Context.new(messages=SAMPLES)
    assert ctx.total_token_count() == sum(m.count_tokens() for m in ctx.messages)
    ctx.replace_message_range(0, 3, Message.system("short"))
    ctx.put_system_prompt_overlay("overlay text")
    assert ctx.total_token_count() == sum(m.count_tokens() for m in ctx.messages)
    assert ctx.total_token_count("o200k_base") == sum(m.count_tokens("o200k_base") for m in ctx.messages)


def window_ctx(n=40):
    sp = SystemPromptMessage.create("system prompt text")
    ctx = Context.create(sp, ToolDefinitionsMessage.create())
    for i in range(n):
        ctx.append(Message.user(f"user {i} " + "word " * (i % 7)))
    return ctx


def test_token_window_exact_budget():
    ctx = window_ctx()
    msgs = ctx.messages
    specials = sum(m.count_tokens() for m in msgs[:2])
    suffix = sum(m.count_tokens() for m in msgs[-10:])
    w = ctx.rolling_token_window(specials + suffix)
    assert [m.content for m in w.messages[2:]] == [m.content for m in msgs[-10:]]
    assert w.messages[0] is msgs[0] and w.total_token_count() == specials + suffix
    w = ctx.rolling_token_window(specials + suffix - 1)
    assert len(w.messages) == 2 + 9
    assert ctx.rolling_token_window(ctx.total_token_count()) is None
    only = ctx.rolling_token_window(1)
    assert only.messages == msgs[:2]
    assert w.origin_context_id == ctx.id and w.id in ctx.children
    assert dict(w.anchor_points) == {"system_prompt": 1, "tools": 2, "messages": 11}


def test_windows_never_start_with_tool_results():
    msgs = []
    for i in range(10):
        msgs += [Message.assistant("a", tool_calls=[{"id": f"c{i}", "name": "f"}]), Message.tool(f"c{i}", "r" * 50),
                 Message.user([Part.tool_result(f"c{i}", "x")])]
    ctx = Context.new(messages=msgs)
    w = ctx.rolling_sequence_window(2)
    assert w.messages == []  # both kept messages were tool results
    w = ctx.rolling_sequence_window(3)
    assert [m.role for m in w.messages] == ["assistant", "tool", "user"]
    budget = sum(m.count_tokens() for m in msgs[-2:])
    w = ctx.rolling_token_window(budget)
    assert w is not None and all(not (m.role == "tool") for m in w.messages[:1])


def test_empty_and_only_specials():
    assert Context.new().rolling_token_window(10) is None
    ctx = Context.create(SystemPromptMessage.create("s"))
    assert ctx.rolling_token_window(0) is None and ctx.rolling_sequence_window(0) is None
    with pytest.raises(ValueError):
        window_ctx().rolling_sequence_window(-1)


def test_sequence_window_and_forks():
    ctx = window_ctx(10)
    w = ctx.rolling_sequence_window(3)
    assert [m.content for m in w.messages[2:]] == [m.content for m in ctx.messages[-3:]]
    assert ctx.rolling_sequence_window(10) is None
    f = ctx.fork_insert_sequence(start=-2)
    assert [m.content for m in f.messages[2:]] == ["user 8 " + "word " * 1, "user 9 " + "word " * 2]
    f = ctx.fork_insert_sequence(start=3, end=4)
    assert [m.content for m in f.messages[2:]] == ["user 1 word "]
    new_sp = SystemPromptMessage.create("replaced")
    f = ctx.fork_insert_sequence(system_prompt_message=new_sp, start=0, end=0)
    assert f.messages[0] is new_sp and f.system_prompt_message is new_sp
    assert len(f.events()) == 2 and all(e.type for e in f.events())
    assert ctx.fork_insert_sequence().messages == ctx.messages


def test_strip_thinking():
    ctx = Context.new(messages=[
        Message.assistant([Part.thinking("only thinking")]),
        Message.assistant([Part.thinking("t")], tool_calls=[{"id": "1", "name": "f"}]),
        Message.assistant([Part.thinking("t"), Part.text("kept")]),
        Message.user("plain"),
    ])
    s = ctx.strip_thinking()
    assert len(s.messages) == 3
    assert s.messages[1].text == "kept" and s.messages[2] is ctx.messages[3]
    assert all(p.type != "thinking" for m in s.messages for p in m.parts)


def reference_window(ctx: Context, budget: int, enc: str = "cl100k_base") -> list[Message] | None:
    """The pure-Python meaning of rolling_token_window when the specials sit at 0 and 1."""
    shown = ctx.messages
    counts = [m.count_tokens(enc) for m in shown]
    if sum(counts) <= budget or len(shown) == 2:
        return None
    remaining = max(0, budget - counts[0] - counts[1])
    used, start = 0, len(shown)
    for p in range(len(shown) - 1, 1, -1):
        if used + counts[p] > remaining:
            break
        used += counts[p]
        start = p
    kept = list(range(start, len(shown)))
    while kept and shown[kept[0]].role == "tool":
        kept.pop(0)
    return shown[:2] + [shown[p] for p in kept]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_token_window_matches_reference_across_chunks(data):
    """Transcripts of up to ~3,000 messages span several 512-message chunks; inserts and
    replaces reshape them between windows, so the Fenwick indexes are exercised warm."""
    rng = data.draw(st.randoms(use_true_random=False))
    ctx = Context.create(SystemPromptMessage.create("you are terse"), ToolDefinitionsMessage.create())
    n = data.draw(st.integers(0, 3000))

    def msg(i: int) -> Message:
        role = rng.choice(["user", "assistant", "tool"])
        text = "w" + " word" * rng.randrange(0, 40) + f" {i}"
        return Message.tool(f"c{i}", text) if role == "tool" else Message(role, text)

    ctx.add_messages(msg(i) for i in range(n))
    enc = data.draw(st.sampled_from(ENCS))
    for step in range(4):
        # The overlay rewrites the system prompt in place: its cost changes, the layout not.
        ctx.put_system_prompt_overlay(data.draw(st.sampled_from([None, "be brief", "word " * 50])))
        total = ctx.total_token_count(enc)
        budget = data.draw(st.integers(0, total + 5))
        got = ctx.rolling_token_window(budget, enc)
        want = reference_window(ctx, budget, enc)
        if want is None:
            assert got is None
        else:
            assert got is not None and got.messages == want
        # Reshape: a replace somewhere after the specials, then appends.
        if len(ctx) > 4:
            a = rng.randrange(2, len(ctx) - 1)
            b = rng.randrange(a, min(len(ctx), a + 1500))
            ctx.replace_message_range(a, b, Message.system(f"summary {step}"))
        ctx.add_messages(msg(10_000 + step * 1000 + i) for i in range(rng.randrange(0, 700)))
