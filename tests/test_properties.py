"""The fold invariant under any sequence of operations, and threads sharing one context."""

from __future__ import annotations

import threading

from ctxfold import Context, Message
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


def test_threads_lose_nothing():
    ctx = Context.new()

    def work(t):
        for i in range(2000):
            ctx.add_message(Message.user(f"{t}:{i}"))
            if i % 500 == 0:
                ctx.total_token_count()
                ctx.messages

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    contents = [m.content for m in ctx.messages]
    assert len(contents) == 16000
    for t in range(8):
        mine = [int(c.split(":")[1]) for c in contents if c.startswith(f"{t}:")]
        assert mine == list(range(2000))
