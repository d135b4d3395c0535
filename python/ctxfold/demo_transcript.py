"""A realistic agent transcript for the demo, the benchmarks and the tests: user turns,
assistant turns with thinking and tool calls, tool results of varied size and kind."""

from __future__ import annotations

import random

from ._core import Message, Part

__all__ = ["build_transcript"]


def build_transcript(n: int, seed: int = 7) -> list[Message]:
    """A realistic agent transcript of ``n`` messages: user turns, assistant turns with thinking
    and tool calls, tool results of varied size."""
    rng = random.Random(seed)
    words = ("the build failed because the cache key changed after the lockfile update so we "
             "reran tests with a clean checkout and compared logs between runs").split()

    # What tools return besides prose: code, JSON, log lines, other languages. They also make
    # the encodings disagree, as they do on real transcripts.
    snippets = (
        "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n"
        "        except TimeoutError:\n            time.sleep(2 ** i)\n",
        '{"status": 502, "path": "/api/v2/builds/8841/logs", "elapsed_ms": 1873.4, "retry": true}',
        "ERROR 2026-11-30T10:42:17Z cache miss for key sha256:9f8e7d6c5b4a3210 (lockfile changed)",
        "Die Tests sind fehlgeschlagen, weil sich der Cache-Schlüssel geändert hat. 测试失败是因为缓存键已更改。",
    )

    def prose(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    out: list[Message] = []
    call = 0
    while len(out) < n:
        out.append(Message.user(prose(rng.randint(5, 40))))
        if len(out) >= n:
            break
        call += 1
        cid = f"call_{call}"
        out.append(Message.assistant(
            [Part.thinking(prose(rng.randint(10, 60)), signature=f"sig{call}"), Part.text(prose(8))],
            tool_calls=[{"id": cid, "name": "search", "arguments": {"q": prose(3)}}],
        ))
        if len(out) >= n:
            break
        result = prose(rng.choice((5, 20, 80, 300)))
        if rng.random() < 0.5:
            result += "\n" + rng.choice(snippets)
        out.append(Message.tool(cid, result, name="search"))
        if len(out) >= n:
            break
        out.append(Message.assistant(prose(rng.randint(10, 50))))
    return out[:n]
