"""File size and memory of a loaded context against plain JSON, each load in a fresh process.

    python benches/memory.py [N]        (default 100000 messages)

Prints, for ctxfold's file loaded by ``Context.load``, the same file by ``json.load``, and the
pure-Python file (``{"messages": [...]}``, ``indent=2``) by ``json.load``: the file size, the
resident memory the load added, the process peak and the time.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def measure(what: str, path: str) -> None:
    if what == "ctxfold":
        from ctxfold import Context

        before = _rss()
        t = time.perf_counter()
        loaded = Context.load(path)
        n = len(loaded)
    else:
        before = _rss()
        t = time.perf_counter()
        with open(path) as f:
            loaded = json.load(f)
        n = len(loaded["messages"])
    dt = time.perf_counter() - t
    after = _rss()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"{what + ' ' + os.path.basename(path)[:12]:<28} {n:>8,} messages  file {os.path.getsize(path) / 1e6:7.1f} MB  "
          f"resident +{(after - before) / 1e6:6.1f} MB  peak {peak / 1e6:6.1f} MB  {dt:5.2f} s")


def make(n: int, folder: str) -> None:
    from ctxfold import Context
    from ctxfold.demo_transcript import build_transcript

    msgs = build_transcript(n)
    ctx = Context()
    ctx.add_messages(msgs)
    os.rename(ctx.save(folder), os.path.join(folder, "ctxfold.json"))
    with open(os.path.join(folder, "plain.json"), "w") as f:
        json.dump({"messages": [m.to_dict() for m in msgs]}, f, indent=2)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(int(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) == 3:
        measure(sys.argv[1], sys.argv[2])
        return
    n = sys.argv[1] if len(sys.argv) > 1 else "100000"
    # Every step in its own process: Linux carries a process's peak memory across fork and
    # exec, so the files are made elsewhere and each load starts from a small parent.
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, __file__, "make", n, d], check=True)
        ours, plain = os.path.join(d, "ctxfold.json"), os.path.join(d, "plain.json")
        for what, path in (("ctxfold", ours), ("json", ours), ("json", plain)):
            subprocess.run([sys.executable, __file__, what, path], check=True)


if __name__ == "__main__":
    main()
