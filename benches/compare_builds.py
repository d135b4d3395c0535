"""The operations of ``test_bench.py`` and the exporters of ``test_bench_formats.py`` (a turn:
after the first request) timed in two builds side by side, for a before/after comparison on a
machine other work shares.

    python benches/compare_builds.py NAME=PYTHON NAME=PYTHON [...] [--sizes 1000,10000,100000] [--rounds 5]

(the first build is the reference: each other column is its time and its ratio to the first).

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
try:
    from ctxfold import formats
except ImportError:  # builds before the provider formats
    formats = None
if formats is not None:
    for name in ("to_openai_chat", "to_anthropic", "to_openai_responses"):
        export = getattr(formats, name)
        export(ctx)  # the first request makes what every later turn gets again
        res[name + " (a turn)"] = best(lambda _: export(ctx), repeat=7)
print(json.dumps(res))
'''


def run(python: str, n: int) -> dict[str, float]:
    out = subprocess.run([python, "-c", WORKER, str(n)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("builds", nargs="+", help="NAME=PYTHON, the first the reference")
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    builds = [tuple(b.split("=", 1)) for b in a.builds]
    best: dict[tuple[str, int, str], float] = {}
    for _ in range(a.rounds):
        for n in sizes:
            for name, py in builds:
                for op, t in run(py, n).items():
                    k = (op, n, name)
                    best[k] = min(best.get(k, t), t)
    ref = builds[0][0]
    head = f"{'operation':<22}{'n':>8}{ref + ' ms':>16}"
    head += "".join(f"{name + ' ms':>16}{'/' + ref:>12}" for name, _ in builds[1:])
    print(head)
    for op in dict.fromkeys(k[0] for k in best):
        for n in sizes:
            r = best[(op, n, ref)]
            row = f"{op:<22}{n:>8}{r * 1e3:>16.3f}"
            for name, _ in builds[1:]:
                t = best[(op, n, name)]
                row += f"{t * 1e3:>16.3f}{(t / r if r else 0):>12.2f}"
            print(row)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
