"""``ctxfold store URL [ID] [--import FILE…] [--export ID FILE]``, and the demo's store turns."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

from ._console import error, note, print_stats, reported, timed
from ._context import Context
from ._files import report, write_json
from .errors import ContextError
from .stores import Store
from .stores._store import where

__all__ = ["add_store_parser", "demo_turns", "run_store"]


def add_store_parser(sub: Any) -> None:
    s = sub.add_parser("store", help="list a store's contexts, show one, import files, export one",
                       description="With only URL: list the contexts, the most recently saved first. With ID: "
                                   "that context, as the stats command shows a file. URL: sqlite:///path, a "
                                   "path, or postgresql://…. Only --import creates a SQLite store that is not "
                                   "there yet.")
    s.add_argument("url", metavar="URL")
    s.add_argument("id", nargs="?", metavar="ID")
    s.add_argument("--import", dest="imports", nargs="+", metavar="FILE", help="save context files into the store")
    s.add_argument("--export", nargs=2, metavar=("ID", "FILE"),
                   help="write one context as a version 2 file (into FILE if it is a folder; - for standard output)")
    s.add_argument("--pretty", action="store_true", help="indent the JSON --export writes (2 spaces)")
    s.add_argument("--limit", type=int, default=100)
    s.add_argument("--offset", type=int, default=0)
    s.add_argument("--progress", action="store_true", help="show the import progress bar even when not on a terminal")


def run_store(a: argparse.Namespace) -> int:
    if sum(x is not None for x in (a.id, a.imports, a.export)) > 1:
        error("give one of ID, --import, --export")
        return 2
    absent = None if a.imports else _absent_sqlite(a.url)
    if absent is not None:
        # Reading a store that is not there finds nothing, and leaves no file or folder behind.
        if a.id is None and a.export is None:
            print(f"0 contexts: no store at {absent}")
            return 0
        return error(f"no store at {absent}")
    return reported(lambda: _run(a), holder="the store")


def _run(a: argparse.Namespace) -> int:
    with Store(a.url) as store:
        if a.imports:
            return _import(store, a.imports, a.progress or sys.stderr.isatty())
        if a.export:
            context_id, dst = a.export
            _export(store, context_id, dst, pretty=a.pretty)
        elif a.id is not None:
            _show(store, a.id)
        else:
            _list(store, a.limit, a.offset)
    return 0


def _absent_sqlite(url: str) -> str | None:
    """The file of a SQLite store URL or path when it does not exist; ``None`` for anything
    else, which ``Store`` itself judges."""
    try:
        _, kind, target = where(url)
    except ValueError:
        return None
    return target if kind == "sqlite" and not os.path.exists(target) else None


def _list(store: Store, limit: int, offset: int) -> None:
    rows = store.list(limit=limit, offset=offset)
    print(f"{'id':<38} {'updated (UTC)':<20} {'messages':>9} {'events':>9}  agent / origin")
    for r in rows:
        extra = " ".join(x for x in (r.agent_name or "", f"(fork of {r.origin_context_id})"
                                     if r.origin_context_id else "") if x)
        print(f"{r.id:<38} {r.updated_at:%Y-%m-%d %H:%M:%S} {r.message_count:>9,} {r.next_seq:>9,}  {extra}")
    more = " (--limit, --offset for more)" if len(rows) == limit else ""
    print(f"{len(rows)} context{'s' if len(rows) != 1 else ''} from {offset}{more}")


def _show(store: Store, context_id: str) -> None:

    ctx = store.load(context_id)
    print_stats(ctx)
    print(f"stored at seq {ctx.stored_seq:,} in {store.url}")


def _export(store: Store, context_id: str, dst: str, pretty: bool = False) -> None:
    """Write the context as a version 2 file by the rule every command writes by (``_files``);
    into a folder, under the name ``ctx.save`` gives it."""
    ctx = store.load(context_id)
    if os.path.isdir(dst):
        path = ctx.save(dst)
    else:
        path = write_json(dst, ctx.serialize(), pretty=pretty)
    report(dst, f"wrote {path}: {len(ctx):,} messages, {ctx.next_seq:,} events")


class _Bar:
    """A one-line progress bar on stderr, by bytes of the files read."""

    def __init__(self, total: int, files: int, shown: bool) -> None:
        self.total, self.files, self.shown = max(total, 1), files, shown
        self.start = time.monotonic()

    def show(self, done: int, files_done: int, current: str) -> None:
        if not self.shown:
            return
        k = int(30 * done / self.total)
        name = os.path.basename(current)
        name = name if len(name) <= 40 else "…" + name[-39:]
        print(f"\rimporting [{'#' * k}{'.' * (30 - k)}] {files_done}/{self.files} files, "
              f"{done / 1e6:.1f}/{self.total / 1e6:.1f} MB, {time.monotonic() - self.start:.1f} s  {name:<40}",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def _import(store: Store, files: list[str], progress: bool) -> int:
    sizes = [os.path.getsize(f) if os.path.isfile(f) else 0 for f in files]
    bar = _Bar(sum(sizes), len(files), progress)
    done = events = 0
    failed: list[str] = []
    for i, (f, size) in enumerate(zip(files, sizes)):
        bar.show(done, i, f)
        try:
            ctx = Context.load(f)
            store.save(ctx)
            events += ctx.next_seq
        except (ContextError, OSError, ValueError) as e:
            # Most errors already name the file (a decode error's place, "no such file: …").
            failed.append(str(e) if f in str(e) else f"{f}: {e}")
        done += size
    bar.show(done, len(files), "")
    bar.close()
    for line in failed:
        error(line)
    print(f"imported {len(files) - len(failed)} of {len(files)} files ({events:,} events) into {store.url}")
    return 1 if failed else 0


def demo_turns(ctx: Context, folder: str, turns: int = 5) -> None:
    """The demo's last act: the context saved to a SQLite store, then turns of 4 messages, each
    saved with ``store.save`` (what the turn adds) and with ``ctx.save`` (the whole file)."""
    from .demo_transcript import build_transcript

    with Store(os.path.join(folder, "sessions.db")) as store:
        timed(f"store.save (first save: all {ctx.next_seq:,} events)", lambda: store.save(ctx))
        per_store, per_file = [], []
        for i in range(turns):
            ctx.add_messages(build_transcript(4, seed=100 + i))
            t = time.perf_counter()
            store.save(ctx)
            per_store.append(time.perf_counter() - t)
            t = time.perf_counter()
            ctx.save(folder)  # the same turn saved the other way
            per_file.append(time.perf_counter() - t)
        s, f = statistics.median(per_store), statistics.median(per_file)
        print(f"  {'one turn (4 messages): store.save':<52} {s * 1e3:10.2f} ms")
        print(f"  {'the same turn: ctx.save (rewrites the whole file)':<52} {f * 1e3:10.2f} ms")
        note(f"median of {turns} turns: the store is {f / s:,.0f}× faster per turn")
        back = timed("store.load", lambda: store.load(ctx.id))
        note(f"loaded {len(back):,} messages, {back.next_seq:,} events; equal to the context's: "
              f"{back.events() == ctx.events()}")
