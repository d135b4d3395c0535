"""``ctxfold show SOURCE [ID]`` and ``ctxfold serve SOURCE``: their arguments and what they run."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Any

from .._console import reported
from ._model import check_encoding
from ._source import REQUEST_FORMATS, Source, open_source
from ._terminal import event_lines, transcript_lines, write

__all__ = ["add_viewer_parsers", "run_viewer"]

_SOURCE_HELP = "a saved context file, a provider request JSON (with --from), or a store (sqlite:///…, postgresql://…)"


def add_viewer_parsers(sub: Any) -> None:
    s = sub.add_parser("show", help="print a transcript: tokens, parts, compactions; --events for the log",
                       description="Print a context's transcript as shown (or at --seq): one block per message "
                                   "with its position, role, time, exact tokens and a bar, text and parts, and what "
                                   "a summary stands for. Colors on a terminal, plain text when piped.")
    _source_arguments(s)
    s.add_argument("id", nargs="?", help="the context, when SOURCE is a store holding more than one")
    s.add_argument("--seq", type=int, help="the transcript as it was when next_seq was SEQ")
    s.add_argument("--window", type=int, metavar="TOKENS", help="mark where a token window of this budget starts")
    s.add_argument("--encoding", default="cl100k_base", help="token encoding (default cl100k_base)")
    s.add_argument("--events", action="store_true", help="list the log instead")
    s.add_argument("--json", action="store_true", help="print the same as JSON (the keys of the web page's API)")
    v = sub.add_parser("serve", help="a local, read-only web page over a file or a store (ctxfold[viewer])",
                       description="Serve a read-only page over SOURCE: its contexts, transcripts with token bars, "
                                   "compactions with their originals, the log, the transcript at any seq, the "
                                   "difference between two seqs and token windows. Binds to loopback by default.")
    _source_arguments(v)
    v.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    v.add_argument("--port", type=int, default=8765)


def _source_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help=_SOURCE_HELP)
    p.add_argument("--from", dest="from_", choices=REQUEST_FORMATS, help="SOURCE is a request JSON of this API")


def run_viewer(a: argparse.Namespace) -> int:
    return reported(lambda: _run(a), holder=a.source)


def _run(a: argparse.Namespace) -> int:
    (_show if a.cmd == "show" else _serve)(a)
    return 0


def _show(a: argparse.Namespace) -> None:
    check_encoding(a.encoding)
    if a.window is not None and a.seq is not None:
        raise ValueError("--window applies to the transcript as shown now: leave out --seq")
    if a.window is not None and a.window < 0:
        raise ValueError("--window needs a token budget of 0 or more")
    source = open_source(a.source, a.from_)
    try:
        view = source.view(a.id if a.id is not None else source.default_id())
        if a.events:
            events = view.events(limit=view.next_seq)
            if a.json:
                _dump({"events": events})
            else:
                write(event_lines(events))
            return
        t = view.transcript(a.seq, encoding=a.encoding)
        window = view.window(a.window, a.encoding) if a.window is not None else None
        if a.json:
            out = t.to_json()
            if window is not None:
                out["window"] = window.to_json()
            _dump(out)
        else:
            write(transcript_lines(t, window, sys.stdout))
    finally:
        source.close()


def _dump(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a taken port is a one-line error."""
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        if os.name != "nt":  # on Windows it would let two servers share the port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


def _serve(a: argparse.Namespace) -> None:
    try:
        import uvicorn

        from ._app import LOOPBACK, make_app
    except ImportError as e:
        raise ImportError(f"`ctxfold serve` needs the viewer extra: pip install 'ctxfold[viewer]' ({e.name} is missing)") \
            from None
    print(f"ctxfold serve: reading {a.source}", file=sys.stderr)
    source: Source = open_source(a.source, a.from_)
    try:
        source.warm()
        sock = _listen(a.host, a.port)
        host, port = sock.getsockname()[:2]
        where = f"http://{host}:{port}/" if ":" not in host else f"http://[{host}]:{port}/"
        print(f"ctxfold serve: {source.name} on {where} (read-only; Ctrl-C stops)", file=sys.stderr)
        # On loopback only this machine's names are answered (no DNS rebinding); bound
        # elsewhere on purpose, any Host is.
        app = make_app(source, allowed_hosts=None if a.host in LOOPBACK else ["*"])
        with sock:
            uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        source.close()
