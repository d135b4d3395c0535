"""The export cache: what a message's requests keep with it (its strings, the dicts and lists it
exported to), its off switch, and what it holds. Exports are equal whatever it holds."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import ctxfold
import pytest
from ctxfold import Context, Message, formats
from ctxfold.demo_transcript import build_transcript

EXPORTERS = (formats.to_openai_chat, formats.to_anthropic, formats.to_openai_responses)


@pytest.fixture(autouse=True)
def _restore_mode() -> Iterator[None]:
    before = ctxfold.export_cache_mode()
    ctxfold.export_cache_clear()
    yield
    ctxfold.export_cache_mode(before)
    ctxfold.export_cache_clear()


def _context(n: int = 200) -> Context:
    ctx = Context()
    ctx.add_messages(build_transcript(n))
    return ctx


@pytest.mark.parametrize("mode", ["all", "strings", "off"])
def test_exports_are_equal_in_every_mode(mode: str) -> None:
    ctx = _context()
    ctxfold.export_cache_mode("off")
    want = [f(ctx) for f in EXPORTERS]
    ctxfold.export_cache_mode(mode)
    for _ in range(3):  # the first request keeps, the later ones are given what was kept
        got = [f(ctx) for f in EXPORTERS]
        assert got == want


def test_a_changed_request_is_never_given_again() -> None:
    ctx = _context(20)
    first = formats.to_openai_chat(ctx)
    want = formats.to_openai_chat(ctx)
    first["messages"][3]["content"] = "changed"
    del first
    assert formats.to_openai_chat(ctx) == want


def test_usage_counts_what_is_held() -> None:
    assert ctxfold.export_cache_usage() == {"messages": 0, "strings": 0, "pieces": 0}
    ctx = _context(50)
    n = len(ctx.messages)
    formats.to_openai_chat(ctx)
    u = ctxfold.export_cache_usage()
    assert 0 < u["messages"] <= n and u["strings"] >= u["messages"] and u["pieces"] > 0
    # a second format keeps its own pieces; the same strings serve it
    formats.to_anthropic(ctx)
    v = ctxfold.export_cache_usage()
    assert v["pieces"] > u["pieces"] and v["messages"] >= u["messages"]
    # at most two copies of a message's pieces per format are kept, however many requests
    for _ in range(5):
        formats.to_anthropic(ctx)
    assert ctxfold.export_cache_usage()["pieces"] <= 2 * (u["pieces"] + v["pieces"])
    # it goes with the messages
    del ctx
    gc.collect()
    assert ctxfold.export_cache_usage() == {"messages": 0, "strings": 0, "pieces": 0}


def test_clear_empties_it() -> None:
    ctx = _context(50)
    want = formats.to_openai_chat(ctx)
    assert ctxfold.export_cache_usage()["strings"] > 0
    ctxfold.export_cache_clear()
    assert ctxfold.export_cache_usage() == {"messages": 0, "strings": 0, "pieces": 0}
    assert formats.to_openai_chat(ctx) == want  # and the next request keeps again
    assert ctxfold.export_cache_usage()["pieces"] > 0


def test_modes_keep_what_they_say() -> None:
    ctx = _context(50)
    assert ctxfold.export_cache_mode("strings") == "all"
    formats.to_openai_chat(ctx)
    u = ctxfold.export_cache_usage()
    assert u["strings"] > 0 and u["pieces"] == 0
    assert ctxfold.export_cache_mode("off") == "strings"
    ctxfold.export_cache_clear()
    formats.to_openai_chat(ctx)
    assert ctxfold.export_cache_usage() == {"messages": 0, "strings": 0, "pieces": 0}
    assert ctxfold.export_cache_mode() == "off"


def test_a_message_not_in_a_context_keeps_too() -> None:
    msgs = [Message.user("hi"), Message.assistant("hello")]
    want = formats.to_openai_chat(msgs)
    assert ctxfold.export_cache_usage()["messages"] == 2
    assert formats.to_openai_chat(msgs) == want


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="expected"):
        ctxfold.export_cache_mode("none")  # type: ignore[arg-type]
    assert ctxfold.export_cache_mode() == "all"
