"""What is kept with each message for later requests costs in memory (docs/formats.md, "Speed").

    python benches/memory_exports.py [N]        (default 100000 messages)

Builds the demo transcript of N messages in a Context, then exports it to each format twice,
holding the first request while the second is made (as an agent loop does), and drops both:
what stays is what is kept with the messages — the Python strings of their requests (shared by
every later one) and the two copies of each message's dicts and lists (one for the request
still held, one for the next). Prints, per format, the Python memory that stays (``tracemalloc``:
every object made through the interpreter's allocator), how many strings the second export
shared with the first, and an estimate of the binding's own records in Rust (at most 32 bytes a
kept string; 16 bytes an object for each copy's record), next to the size of the messages' text.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc

from ctxfold import Context, formats
from ctxfold.demo_transcript import build_transcript


def _strings(v, out: list[str]) -> list[str]:
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _strings(x, out)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out)
    return out


def _count(v) -> int:
    if isinstance(v, dict):
        return 1 + sum(1 + _count(x) for x in v.values())
    if isinstance(v, list):
        return 1 + sum(_count(x) for x in v)
    return 1


def main(n: int) -> None:
    ctx = Context()
    ctx.add_messages(build_transcript(n))
    text = sum(len(m.text.encode()) for m in ctx.messages)
    print(f"context of {n:,} messages, {text / 1e6:.1f} MB of message text")
    gc.collect()
    tracemalloc.start()
    for fmt in ("openai_chat", "anthropic", "openai_responses"):
        export = getattr(formats, f"to_{fmt}")
        before = tracemalloc.get_traced_memory()[0]
        t = time.perf_counter()
        req = export(ctx)
        first = time.perf_counter() - t
        with_request = tracemalloc.get_traced_memory()[0]
        t = time.perf_counter()
        again = export(ctx)
        second = time.perf_counter() - t
        shared = sum(a is b for a, b in zip(_strings(req, []), _strings(again, [])))
        objects = _count(again)
        del req, again
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
        print(f"to_{fmt:<17} first {first * 1e3:7.1f} ms, again {second * 1e3:7.1f} ms; "
              f"request {(with_request - before) / 1e6:6.1f} MB, kept after both {(kept - before) / 1e6:6.1f} MB "
              f"in Python + ~{(shared * 32 + 2 * objects * 16) / 1e6:4.1f} MB in Rust ({shared:,} strings shared)")
    tracemalloc.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
