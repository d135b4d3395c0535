"""The fold invariant under any sequence of operations, and threads sharing one context."""

from __future__ import annotations

import threading

from ctxfold import Context, Message, SystemPromptMessage, ToolDefinitionsMessage
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from test_context import replay


class Fold(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.ctx = Context.new()
        self.n = 0

    def msg(self):
        self.n += 1
        return Message.user(f"m{self.n}")

    @rule()
    def add(self):
        self.ctx.add_message(self.msg())

    @rule(name=st.sampled_from(["system_prompt", "tools", "messages", "a", "b"]))
    def append(self, name):
        if name in dict(self.ctx.anchor_points):
            self.ctx.append(self.msg(), name)

    @rule(name=st.sampled_from(["a", "b"]), frac=st.floats(0, 1), after=st.booleans())
    def anchor(self, name, frac, after):
        if name not in dict(self.ctx.anchor_points):
            self.ctx.add_anchor(name, int(frac * len(self.ctx.events() and self.ctx.messages)), after)

    @rule(a=st.floats(0, 1), b=st.floats(0, 1))
    def replace(self, a, b):
        n = len(self.ctx.messages)
        if n:
            first, last = sorted((int(a * (n - 1)), int(b * (n - 1))))
            self.ctx.replace_message_range(first, last, Message.system(f"r{self.n}"))

    @rule(a=st.floats(0, 1), b=st.floats(0, 1))
    def remove(self, a, b):
        n = len(self.ctx.messages)
        if n:
            first, last = sorted((int(a * (n - 1)), int(b * (n - 1))))
            self.ctx.remove_message_range(first, last)

    @rule()
    def tool_call(self):
        self.n += 1
        self.ctx.add_message(Message.assistant("c", tool_calls=[{"id": f"c{self.n}", "name": "f"}]))

    @rule()
    def patch(self):
        self.ctx.patch_dangling_tool_calls()

    @rule()
    def bookkeeping(self):
        self.ctx.log_event("step_start", {"n": self.n})

    @invariant()
    def fold_holds(self):
        ev = self.ctx.events()
        assert [e.seq for e in ev] == list(range(len(ev)))
        assert replay(self.ctx) == self.ctx.messages
        idx = [i for _, i in self.ctx.anchor_points]
        assert idx == sorted(idx) and all(0 <= i <= len(self.ctx.messages) for i in idx)
        back = Context.deserialize(self.ctx.serialize())
        assert back.messages == self.ctx.messages and back.anchor_points == self.ctx.anchor_points


TestFold = Fold.TestCase
TestFold.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


class FoldWithEverything(RuleBasedStateMachine):
    """Large batches (transcripts span several 512-message chunks), dynamic messages, the
    overlay, token totals and windows, all mixed: the fold, the totals and the windows stay
    exactly what their definitions say."""

    def __init__(self):
        super().__init__()
        self.ctx = Context.create(SystemPromptMessage.create("sys", hooks=["mem"]), ToolDefinitionsMessage.create())
        self.n = 0
        self.overlay = None

    def msg(self, role="user"):
        self.n += 1
        return Message(role, f"{role} {self.n} " + "word " * (self.n % 9))

    @rule(k=st.integers(1, 700))
    def bulk(self, k):
        self.ctx.add_messages(self.msg(["user", "assistant", "tool"][i % 3]) if i % 3 != 2
                              else Message.tool(f"c{i}", f"result {i}") for i in range(k))

    @rule(a=st.floats(0, 1), b=st.floats(0, 1))
    def replace(self, a, b):
        n = len(self.ctx.events() and replay(self.ctx))
        if n > 2:
            first, last = sorted((2 + int(a * (n - 3)), 2 + int(b * (n - 3))))
            self.ctx.replace_message_range(first, last, Message.system(f"summary {self.n}"))

    @rule(a=st.floats(0, 1), b=st.floats(0, 1))
    def remove(self, a, b):
        n = len(replay(self.ctx))
        if n > 2:
            first, last = sorted((2 + int(a * (n - 3)), 2 + int(b * (n - 3))))
            self.ctx.remove_message_range(first, last)

    @rule(name=st.sampled_from(["system_prompt", "tools", "messages"]))
    def append(self, name):
        self.ctx.append(self.msg(), name)

    @rule(text=st.sampled_from(["remember this", "", "a much longer memory " * 20]))
    def materialize(self, text):
        self.ctx.materialize({"mem": text, "tool_list": '[{"name": "search"}, {"name": "fetch"}]'})

    @rule(text=st.sampled_from([None, "be brief", "overlay " * 30]))
    def overlay_(self, text):
        self.ctx.put_system_prompt_overlay(text)
        self.overlay = text

    @rule(frac=st.floats(0, 1.1), enc=st.sampled_from(["cl100k_base", "o200k_base"]))
    def window(self, frac, enc):
        total = self.ctx.total_token_count(enc)
        budget = int(frac * total)
        w = self.ctx.rolling_token_window(budget, enc)
        shown = self.ctx.messages
        special_ids = {m.id for m in (self.ctx.system_prompt_message, self.ctx.tool_definitions_message) if m}
        if w is None:
            assert total <= budget or all(m.id in special_ids for m in shown)
            return
        kept = w.messages
        assert [m for m in kept if m.id in special_ids] == [m for m in shown if m.id in special_ids]
        tail = [m for m in kept if m.id not in special_ids]
        others = [m for m in shown if m.id not in special_ids]
        assert tail == (others[len(others) - len(tail):] if tail else [])
        assert not tail or tail[0].role != "tool"
        if tail:
            assert w.total_token_count(enc) <= budget
        # The longest such suffix: one more message (and the tool results it would then
        # have to drop, none) would not fit.
        if len(tail) < len(others):
            longer = others[len(others) - len(tail) - 1:]
            cost = sum(m.count_tokens(enc) for m in shown if m.id in special_ids)
            assert cost + sum(m.count_tokens(enc) for m in longer) > budget or longer[0].role == "tool"

    @invariant()
    def fold_and_totals_hold(self):
        raw = replay(self.ctx)
        shown = self.ctx.messages
        # Resolution and the overlay derive new values but keep ids and positions.
        assert [m.id for m in raw] == [m.id for m in shown]
        for r, m in zip(raw, shown):
            if not r.hook_ids and not (self.overlay and r is raw[0]):
                assert r is m
        for enc in ("cl100k_base", "o200k_base"):
            assert self.ctx.total_token_count(enc) == sum(m.count_tokens(enc) for m in shown)


TestFoldWithEverything = FoldWithEverything.TestCase
TestFoldWithEverything.settings = settings(max_examples=25, stateful_step_count=20, deadline=None)


def test_threads_lose_nothing(tmp_path):
    ctx = Context.new()
    errors: list[BaseException] = []

    def work(t):
        try:
            for i in range(2000):
                ctx.add_message(Message.user(f"{t}:{i}"))
                if i % 500 == 0:
                    # Readers, a window, a save and a load, all while the others append.
                    ctx.total_token_count()
                    ctx.messages
                    ctx.rolling_token_window(50)
                    Context.load(ctx.save(tmp_path / str(t)))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    contents = [m.content for m in ctx.messages]
    assert len(contents) == 16000
    for t in range(8):
        mine = [int(c.split(":")[1]) for c in contents if c.startswith(f"{t}:")]
        assert mine == list(range(2000))
