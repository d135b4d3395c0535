"""What the CLI prints, shared by its commands: console-safe text, timed steps, notes, stats."""

from __future__ import annotations

import io
import os
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._context import Context

T = TypeVar("T")


def safe_console() -> None:
    """Never fail on a character the console cannot show (Windows' cp1252, ``PYTHONIOENCODING``,
    an ASCII pipe): it is written as a backslash escape instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _glyph(preferred: str, plain: str) -> str:
    """``preferred`` where stdout's encoding has it, else the ASCII ``plain``."""
    try:
        preferred.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return plain
    return preferred


def note(text: str) -> None:
    print(f"    {_glyph('→', '->')} {text}")


def _show(label: str, dt: float) -> None:
    unit, scale = ("ms", 1e3) if dt >= 1e-3 else (_glyph("µs", "us"), 1e6)
    print(f"  {label:<52} {dt * scale:10.2f} {unit}")


def timed(label: str, f: Callable[[], T]) -> T:
    t = time.perf_counter()
    out = f()
    _show(label, time.perf_counter() - t)
    return out


def timed_turns(label: str, f: Callable[[], object], turns: int = 5) -> None:
    """The median time of ``f`` over ``turns`` calls made as an agent loop makes them: each
    result is kept until the next one is back (``req = export(ctx)`` every turn)."""
    times = []
    out = None
    for _ in range(turns):
        t = time.perf_counter()
        out = f()  # the last turn's result is still bound while this one is made
        times.append(time.perf_counter() - t)
    del out
    _show(label, statistics.median(times))


def print_stats(ctx: Context) -> None:
    msgs = ctx.messages
    print(f"context {ctx.id}: {len(msgs):,} messages, {ctx.next_seq:,} events")
    print("messages by role:", dict(Counter(m.role for m in msgs)))
    print("events by type:  ", dict(Counter(e.type for e in ctx.events())))
    print("anchors:         ", ctx.anchor_points)
    for enc in ("cl100k_base", "o200k_base"):
        print(f"tokens {enc}: {ctx.total_token_count(enc):,}")


def error(text: str) -> int:
    """``ctxfold: error: TEXT`` on stderr, and the exit status 1."""
    print(f"ctxfold: error: {text}", file=sys.stderr)
    return 1


def failed(e: BaseException) -> int:
    """One line on stderr saying what went wrong (no traceback: bad input is the user's to fix),
    and the exit status 1. The line is the message's first (a decode error names its place
    there)."""
    if isinstance(e, RecursionError):
        return error("the input is nested too deeply to read")
    text = str(e)
    return error(text.splitlines()[0] if text else type(e).__name__)


def reported(command: Callable[[], int], *, holder: str | None = None) -> int:
    """The exit status of ``command()``, with what a user can get wrong reported as one line
    and status 1 instead of a traceback: bad files, rows and arguments, a missing extra, and
    when ``holder`` names where contexts are looked up, an unknown context id (``KeyError``).
    A reader that went away (``ctxfold demo | head``) stops the command quietly."""
    from .errors import ContextError

    try:
        code = command()
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at exit
        return code
    except BrokenPipeError:
        # Output still buffered goes to devnull, so the flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyError as e:
        if holder is None:
            raise
        return error(f"no context {e.args[0]!r} in {holder}")
    except (ContextError, OSError, ValueError, ImportError, RecursionError) as e:
        return failed(e)


def interruptible(f: Callable[[], T]) -> T:
    """``f()``, run so that Ctrl-C stops the command at once with one line: a long load runs in
    Rust with the interpreter released, where Python's signal handler would only run after it.
    So ``f`` runs on a worker thread and the main thread waits, where Ctrl-C is seen; the
    process then ends without waiting for the worker (a write it was doing leaves its
    temporary file, which the next write of that file removes)."""
    if threading.current_thread() is not threading.main_thread():
        return f()  # only the main thread is told of Ctrl-C
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["out"] = f()
        except BaseException as e:  # handed to the main thread, which reports it
            box["err"] = e

    worker = threading.Thread(target=work, name="ctxfold-command", daemon=True)
    try:
        worker.start()  # (which waits for the worker to run: it may be in the load already)
        while worker.is_alive():
            worker.join(0.25)  # a bounded wait, so Ctrl-C is seen on every platform
    except KeyboardInterrupt:
        print("\nctxfold: interrupted", file=sys.stderr, flush=True)
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(130)  # the worker may be inside Rust; the interpreter cannot wait for it
    if "err" in box:
        raise box["err"]  # type: ignore[misc]
    return box["out"]  # type: ignore[return-value]
