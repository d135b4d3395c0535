"""``ctxfold serve``'s web app (Starlette): the JSON API the page reads, and the page's own
files. Read-only: every route is a GET; nothing in a request reaches the file system but the
name of one of the page's files, looked up in a fixed table."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._source import Source, summary_json

__all__ = ["make_app"]

MAX_LIMIT = 1000
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
# The page runs only its own script and style: no inline code, nothing from elsewhere, no frames.
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class BadRequest(ValueError):
    """A query parameter that is not what the route takes."""


def _static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files, read once: name -> (bytes, content type). Only these are served."""
    root = resources.files("ctxfold.viewer") / "static"
    out = {}
    for f in root.iterdir():
        kind = _TYPES.get(f.name[f.name.rfind("."):])
        if f.is_file() and kind is not None:
            out[f.name] = (f.read_bytes(), kind)
    return out


def _int(request: Request, name: str, default: int | None, low: int, high: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {raw!r}") from None
    if value < low or (high is not None and value > high):
        raise BadRequest(f"{name} must be {low} or more" + (f" and at most {high:,}" if high is not None else "")
                         + f", got {value}")
    return value


def _required(value: int | None, name: str) -> int:
    if value is None:
        raise BadRequest(f"{name} is required")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status)


def make_app(source: Source, *, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over ``source``. ``allowed_hosts``: the Host headers answered (default: this
    machine's names only, which keeps other sites' pages from reading it through DNS
    rebinding); ``["*"]`` for any."""
    files = _static_files()

    def api(handler: Callable[[Request], Any]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(handler(request))
            except KeyError as e:
                return _error(404, f"no context {e.args[0]!r}")
            except (BadRequest, ValueError, IndexError) as e:
                return _error(400, str(e))
        return endpoint

    def contexts(request: Request) -> dict[str, Any]:
        limit = _int(request, "limit", 100, 0, MAX_LIMIT)
        offset = _int(request, "offset", 0, 0)
        q = request.query_params.get("q") or None
        rows, total = source.contexts(_required(limit, "limit"), _required(offset, "offset"), q)
        return {"contexts": [summary_json(r) for r in rows], "total": total}

    def context(request: Request) -> dict[str, Any]:
        view = source.view(request.path_params["id"])
        seq = _int(request, "seq", None, 0)
        offset = _required(_int(request, "offset", 0, 0), "offset")
        limit = _required(_int(request, "limit", 100, 0, MAX_LIMIT), "limit")
        encoding = request.query_params.get("encoding") or "cl100k_base"
        return view.transcript(seq, offset, limit, encoding).to_json()

    def events(request: Request) -> dict[str, Any]:
        view = source.view(request.path_params["id"])
        after = _required(_int(request, "after", -1, -1), "after")
        limit = _required(_int(request, "limit", 100, 0, MAX_LIMIT), "limit")
        return {"events": view.events(after, limit)}

    def window(request: Request) -> dict[str, Any]:
        view = source.view(request.path_params["id"])
        budget = _required(_int(request, "budget", None, 0), "budget")
        return view.window(budget, request.query_params.get("encoding") or "cl100k_base").to_json()

    def diff(request: Request) -> dict[str, Any]:
        view = source.view(request.path_params["id"])
        a = _required(_int(request, "from", None, 0), "from")
        return view.diff(a, _int(request, "to", None, 0)).to_json()

    def static(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        found = files.get(name)
        if found is None:
            return _error(404, "not found")
        return Response(found[0], media_type=found[1])

    async def not_found(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            return _error(exc.status_code, str(exc.detail))
        return _error(500, "internal error")  # pragma: no cover - a bug; the log has the traceback

    routes = [
        Route("/", static),
        Route("/static/{name}", static),
        Route("/api/contexts", api(contexts)),
        Route("/api/contexts/{id}", api(context)),
        Route("/api/contexts/{id}/events", api(events)),
        Route("/api/contexts/{id}/window", api(window)),
        Route("/api/contexts/{id}/diff", api(diff)),
    ]
    hosts = allowed_hosts if allowed_hosts is not None else list(LOOPBACK)
    return Starlette(routes=routes, exception_handlers={HTTPException: not_found},
                     middleware=[Middleware(_SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=hosts,
                                                                          www_redirect=False)])


class _SecurityHeaders:
    """Adds the page's security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
