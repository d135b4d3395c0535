"""What the strings kept with each message for requests cost in memory (docs/formats.md, "Speed").

    python benches/memory_exports.py [N]        (default 100000 messages)

Builds the demo transcript of N messages in a Context, then exports it to each format in turn
and drops the request: what stays is the Python strings kept with the messages (made on the
first request that sends them, shared by every later one). Prints the resident memory each
first export left behind, next to the context itself and the size of one request.
"""

from __future__ import annotations

import gc
import sys
import time

from ctxfold import Context, formats
from ctxfold.demo_transcript import build_transcript


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def main(n: int) -> None:
    base = _rss()
    ctx = Context()
    ctx.add_messages(build_transcript(n))
    gc.collect()
    held = _rss()
    print(f"context of {n:,} messages: resident +{(held - base) / 1e6:6.1f} MB")
    for fmt in ("openai_chat", "anthropic", "openai_responses"):
        export = getattr(formats, f"to_{fmt}")
        before = _rss()
        t = time.perf_counter()
        req = export(ctx)
        first = time.perf_counter() - t
        with_request = _rss()
        del req
        gc.collect()
        kept = _rss()
        t = time.perf_counter()
        export(ctx)
        again = time.perf_counter() - t
        print(f"to_{fmt:<17} first {first * 1e3:7.1f} ms, again {again * 1e3:7.1f} ms; "
              f"request +{(with_request - before) / 1e6:6.1f} MB, kept after it +{(kept - before) / 1e6:6.1f} MB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
