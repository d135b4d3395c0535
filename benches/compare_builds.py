"""The operations of ``test_bench.py`` timed in two builds side by side, for a before/after
comparison on a machine other work shares.

    python benches/compare_builds.py BEFORE_PYTHON AFTER_PYTHON [--sizes 1000,10000,100000] [--rounds 5]

Each round runs one process per build and size (alternating, so both see the same load); a
process builds the transcript once and times every operation by CPU time (``process_time``:
this process's own work, all its threads, not the wall clock that other work stretches), best
of a few repeats. The table is the best over rounds, with after/before."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

WORKER = r'''
import json, sys, tempfile, time
from ctxfold import Context, Message
try:
    from ctxfold.demo_transcript import build_transcript
except ImportError:  # builds before the demo transcript had its own module
    from ctxfold._cli import build_transcript

n = int(sys.argv[1])
msgs = build_transcript(n)

def best(f, setup=lambda: None, repeat=5):
    out = []
    for _ in range(repeat):
        arg = setup()
        t = time.process_time()
        f(arg)
        out.append(time.process_time() - t)
    return min(out)

ctx = Context()
ctx.add_messages(msgs)
ctx.add_anchor("mid", len(ctx) // 2)
budget = ctx.total_token_count() // 10
ctx.rolling_token_window(budget)
d = tempfile.mkdtemp()
path = ctx.save(d)
summary = Message.system("[summary]")
res = {
    "append": best(lambda _: Context().add_messages(msgs)),
    "insert at mid anchor": best(lambda _: ctx.append(Message.user("pinned"), "mid"), repeat=50),
    "replace half": best(lambda c: c.replace_message_range(0, len(c) // 2, summary), setup=lambda: Context.load(path)),
    "read messages": best(lambda _: ctx.messages, repeat=20),
    "cold token count": best(lambda c: c.total_token_count(), setup=lambda: Context.load(path), repeat=3),
    "warm token window": best(lambda _: ctx.rolling_token_window(budget), repeat=50),
    "save": best(lambda _: ctx.save(d), repeat=3),
    "load": best(lambda _: Context.load(path), repeat=3),
}
print(json.dumps(res))
'''


def run(python: str, n: int) -> dict[str, float]:
    out = subprocess.run([python, "-c", WORKER, str(n)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    best: dict[tuple[str, int, str], float] = {}
    for _ in range(a.rounds):
        for n in sizes:
            for side, py in (("before", a.before), ("after", a.after)):
                for op, t in run(py, n).items():
                    k = (op, n, side)
                    best[k] = min(best.get(k, t), t)
    print(f"{'operation':<22}{'n':>8}{'before (ms)':>14}{'after (ms)':>14}{'after/before':>14}")
    for op in dict.fromkeys(k[0] for k in best):
        for n in sizes:
            b, f = best[(op, n, "before")], best[(op, n, "after")]
            ratio = f"{f / b:.2f}" if b > 0 else "-"
            print(f"{op:<22}{n:>8}{b * 1e3:>14.3f}{f * 1e3:>14.3f}{ratio:>14}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
