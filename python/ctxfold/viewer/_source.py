"""Where the viewer reads contexts from: a saved file, a provider request, or a store. Each
opened context is loaded once and kept (a ``ContextView``), so paging through a large one costs
only the page; a store's contexts are caught up with what was saved since (``Store.refresh``)."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from datetime import datetime, timezone

from .._context import Context
from ..errors import ConflictError
from ..stores import Store, StoredContext
from ._model import ContextView

__all__ = ["Source", "open_source", "summary_json"]

REQUEST_FORMATS = ("openai_chat", "openai_responses", "anthropic")
_STORE_PREFIXES = ("sqlite:", "postgresql://", "postgres://")
_SQLITE_MAGIC = b"SQLite format 3\x00"


def summary_json(s: StoredContext) -> dict[str, object]:
    """One listed context as the viewer's page reads it."""
    return {"id": s.id, "created_at": _iso(s.created_at), "updated_at": _iso(s.updated_at),
            "next_seq": s.next_seq, "message_count": s.message_count, "agent_name": s.agent_name,
            "origin_context_id": s.origin_context_id}


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _matches(s: StoredContext, q: str) -> bool:
    q = q.casefold()
    return q in s.id.casefold() or (s.agent_name is not None and q in s.agent_name.casefold())


class Source(ABC):
    """The contexts one SOURCE holds. ``contexts`` lists them newest first; ``view(id)`` gives
    the loaded context (``KeyError`` for an unknown id)."""

    name: str
    """What the source is, as the page names it (a file, a folder or a store)."""

    @abstractmethod
    def contexts(self, limit: int, offset: int, q: str | None) -> tuple[list[StoredContext], int]:
        """A page of the contexts (matching ``q`` in the id or agent name), and how many match."""

    @abstractmethod
    def view(self, context_id: str) -> ContextView:
        """The context ``context_id``, loaded (``KeyError`` when the source has no such id)."""

    def default_id(self) -> str:
        """The context shown when none is named: the only one; else a ``ValueError``."""
        found, total = self.contexts(2, 0, None)
        if total == 1:
            return found[0].id
        if total == 0:
            raise ValueError(f"{self.name} holds no contexts")
        raise ValueError(f"{self.name} holds {total} contexts: name one (`ctxfold store {self.name}` lists them)")

    def warm(self, encoding: str = "cl100k_base") -> None:  # noqa: B027 - a store loads on demand
        """Count what a first look needs now (the tokens of a loaded context), not on the first
        request."""

    def close(self) -> None:  # noqa: B027 - most sources hold nothing open
        """Release what the source holds open."""


class OneContext(Source):
    """A file (or a provider request) holds one context, loaded when the source is opened."""

    def __init__(self, name: str, ctx: Context, updated_at: datetime) -> None:
        self.name = name
        self._view = ContextView(ctx)
        self._updated_at = updated_at

    def contexts(self, limit: int, offset: int, q: str | None) -> tuple[list[StoredContext], int]:
        ctx = self._view.ctx
        row = StoredContext(ctx.id, ctx.created_at, self._updated_at, ctx.next_seq, len(ctx), ctx.agent_name,
                            ctx.origin_context_id)
        rows = [row] if q is None or _matches(row, q) else []
        return rows[offset:offset + limit], len(rows)

    def warm(self, encoding: str = "cl100k_base") -> None:
        self._view.total_tokens(self._view.next_seq, encoding)

    def view(self, context_id: str) -> ContextView:
        if context_id != self._view.ctx.id:
            raise KeyError(context_id)
        return self._view


class StoreSource(Source):
    """A store's contexts, listed by the store, each loaded on first use and kept (the most
    recently used few), caught up with the store on every later use."""

    KEEP = 8  # loaded contexts kept; each can be large

    def __init__(self, url: str) -> None:
        self._store = Store(url)
        self.name = self._store.url
        self._views: OrderedDict[str, ContextView] = OrderedDict()
        self._lock = threading.Lock()

    def contexts(self, limit: int, offset: int, q: str | None) -> tuple[list[StoredContext], int]:
        rows = self._all()
        if q:
            rows = [r for r in rows if _matches(r, q)]
        return rows[offset:offset + limit], len(rows)

    def _all(self) -> list[StoredContext]:
        out: list[StoredContext] = []
        page = 1000
        while True:
            got = self._store.list(limit=page, offset=len(out))
            out.extend(got)
            if len(got) < page:
                return out

    def view(self, context_id: str) -> ContextView:
        with self._lock:
            v = self._views.get(context_id)
            if v is not None:
                self._views.move_to_end(context_id)
        if v is None:
            v = ContextView(self._store.load(context_id))  # KeyError when unknown
        else:
            try:
                v.catch_up(self._store.refresh)
            except ConflictError:  # deleted, or saved anew under the same id
                v = ContextView(self._store.load(context_id))
        with self._lock:
            self._views[context_id] = v
            while len(self._views) > self.KEEP:
                self._views.popitem(last=False)
        return v

    def close(self) -> None:
        self._store.close()


def _is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def open_source(source: str, request_format: str | None = None) -> Source:
    """SOURCE as the commands take it: a store URL (``sqlite:///…``, ``postgresql://…``), a
    SQLite store file, a saved context file, or with ``request_format`` a provider request."""
    if request_format is not None:
        if request_format not in REQUEST_FORMATS:
            raise ValueError(f"unknown request format {request_format!r}: one of {', '.join(REQUEST_FORMATS)}")
        from ..formats._cli import request_context

        ctx = request_context(request_format, source)
        return OneContext(source, ctx, datetime.fromtimestamp(os.path.getmtime(source), timezone.utc))
    if source.startswith(_STORE_PREFIXES) or _is_sqlite(source):
        return StoreSource(source)
    if os.path.isdir(source):
        raise IsADirectoryError(f"{source} is a folder: give one context file, or a store")
    ctx = Context.load(source)
    return OneContext(source, ctx, datetime.fromtimestamp(os.path.getmtime(source), timezone.utc))
