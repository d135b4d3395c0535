"""What the strings kept with each message for requests cost in memory (docs/formats.md, "Speed").

    python benches/memory_exports.py [N]        (default 100000 messages)

Builds the demo transcript of N messages in a Context, then exports it to each format in turn
and drops the request: what stays is the Python strings kept with the messages (made on the
first request that sends them, shared by every later one). Prints, per format, the Python
memory the first export left behind (``tracemalloc``: every str made through the interpreter's
allocator), how many strings a second export shared with the first, and the binding's index of
them (at most 32 bytes a string, in Rust: the count includes the interned constants, roles and
type names, which have no entry), next to the size of the context's messages' text.
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
        del req, again
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
        print(f"to_{fmt:<17} first {first * 1e3:7.1f} ms, again {second * 1e3:7.1f} ms; "
              f"request {(with_request - before) / 1e6:6.1f} MB, kept after it {(kept - before) / 1e6:6.1f} MB "
              f"in Python + {shared * 32 / 1e6:4.1f} MB of index ({shared:,} strings shared)")
    tracemalloc.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
