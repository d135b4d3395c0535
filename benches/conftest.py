"""Side-by-side benchmarks: ctxfold vs a pure-Python implementation vs LangChain, printing
medians and ratios at the end. Sizes from CTXFOLD_BENCH_SIZES (default 1000,10000,100000)."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _oracle import load_oracle  # noqa: E402  (the tests' oracle, one copy)

SIZES = [int(s) for s in os.environ.get("CTXFOLD_BENCH_SIZES", "1000,10000,100000").split(",")]
RESULTS: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)


@pytest.fixture
def record(benchmark, request):
    """Time ``fn``: ctxfold through pytest-benchmark (one use per test), the others by hand
    the same way (median of ``rounds``, ``setup`` outside the timing). Under pytest-codspeed
    (``--codspeed``, or CodSpeed's runner) only ctxfold runs, measured and tracked by CodSpeed;
    the side-by-side table comes from a plain run."""
    codspeed = bool(request.config.getoption("codspeed", default=False)) or "CODSPEED_ENV" in os.environ

    def run(op: str, n: int, impl: str, fn, setup=None, rounds: int = 5):
        if impl == "ctxfold":
            benchmark.group = f"{op} n={n}"
            if setup is None:
                benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)
            else:
                benchmark.pedantic(fn, setup=setup, rounds=rounds, iterations=1)
            if not codspeed:
                RESULTS[(op, n)][impl] = benchmark.stats.stats.median
            return
        if codspeed:
            return
        times = []
        for _ in range(rounds):
            if setup is not None:
                setup()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        RESULTS[(op, n)][impl] = statistics.median(times)
    return run


@pytest.fixture(scope="session")
def tiktoken_oracle():
    return load_oracle()


def _rows():
    """(operation, n, ctxfold median, other implementation, its median, ratio text)."""
    for (op, n), impls in sorted(RESULTS.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ours = impls.get("ctxfold")
        for impl, t in impls.items():
            if impl != "ctxfold":
                yield op, n, ours or 0.0, impl, t, (f"{t / ours:.1f}x" if ours else "n/a")


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    w = terminalreporter
    w.section("ctxfold side by side (median seconds; ratio = other / ctxfold)")
    w.line(f"{'operation':<34}{'n':>8}  {'ctxfold':>11}  {'other':<24}{'median':>11}  {'ratio':>9}")
    for op, n, ours, impl, t, ratio in _rows():
        w.line(f"{op:<34}{n:>8}  {ours:>11.6f}  {impl:<24}{t:>11.6f}  {ratio:>9}")
    # In a GitHub Actions job, the same table goes into the job's summary page.
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write("### ctxfold side by side (median seconds; ratio = other / ctxfold)\n\n")
            f.write("| operation | n | ctxfold | other | median | ratio |\n|---|---:|---:|---|---:|---:|\n")
            for op, n, ours, impl, t, ratio in _rows():
                f.write(f"| {op} | {n:,} | {ours:.6f} | {impl} | {t:.6f} | {ratio} |\n")
