"""Make the README's pictures of the viewer from the demo data: the terminal view of
`ctxfold show` (rich's own SVG export of its output, drawn by Chromium) and the page of
`ctxfold serve` (the real server, in headless Chromium). Needs ctxfold[viewer], playwright and a
Chromium (CTXFOLD_TEST_CHROMIUM or `chromium` on PATH); with Pillow installed the PNGs are
written with a 256-color palette, to keep the repository small.

    python docs/screenshots.py            # writes docs/images/show.png, serve.png, serve-compaction.png
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import uvicorn
from ctxfold import Context, Message, Store, SystemPromptMessage, ToolDefinitionsMessage
from ctxfold.demo_transcript import build_transcript
from ctxfold.viewer import ContextView, open_source
from ctxfold.viewer._app import make_app
from ctxfold.viewer._terminal import rich_text, transcript_lines
from playwright.sync_api import sync_playwright
from rich.console import Console

OUT = Path(__file__).resolve().parent / "images"


def demo_context(n: int, summarize: int, agent: str) -> Context:
    """The demo transcript behind a system prompt and tools, its first turns compacted."""
    ctx = Context.create(SystemPromptMessage.create("You are a careful build engineer."), ToolDefinitionsMessage.create())
    ctx.agent_name = agent
    ctx.add_messages(build_transcript(n))
    ctx.replace_message_range(2, 1 + summarize, Message.assistant(
        f"[summary of the first {summarize} messages] The build failed because the cache key changed after the "
        "lockfile update; a clean checkout and a rerun of the tests confirmed it."))
    return ctx


def terminal_png(ctx: Context, browser, path: Path) -> None:
    view = ContextView(ctx)
    t = view.transcript(limit=7)
    # A budget whose window starts inside the rows shown: the special messages and row 6 on.
    shown = ctx.messages
    window = view.window(sum(m.count_tokens() for m in (*shown[:2], *shown[6:])))
    console = Console(record=True, width=112, force_terminal=True, color_system="truecolor", file=io.StringIO())
    for line in transcript_lines(t, window, console.file):
        console.print(rich_text(line))
    svg = console.export_svg(title=f"ctxfold show sessions.db {ctx.id[:8]}… --window {window.budget}")
    page = browser.new_page(viewport={"width": 1000, "height": 400}, device_scale_factor=1)
    page.set_content(f"<html><body style='margin:0;background:#fff'>{svg}</body></html>")
    page.locator("svg").screenshot(path=str(path))
    page.close()


def serve_pngs(url: str, first_id: str, browser) -> None:
    source = open_source(url)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(source), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(base + "/api/contexts", timeout=5).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 720}, device_scale_factor=1)
        page.goto(f"{base}/#{first_id}")
        page.locator("#transcript .row.msg").first.wait_for()
        page.fill("#budget", "6000")
        page.press("#budget", "Enter")
        page.locator(".note.window").wait_for()
        page.locator(".note.window button").click()
        page.wait_for_timeout(400)
        page.screenshot(path=str(OUT / "serve.png"))
        page.locator("#transcript").evaluate("e => { e.scrollTop = 0; }")
        page.locator("#transcript .row.compaction .badge").click()
        page.locator("#detail .originals .message").first.wait_for()
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "serve-compaction.png"))
        page.close()
    finally:
        server.should_exit = True
        thread.join(10)
        source.close()


def shrink(path: Path) -> None:
    """A palette of 256 colors when Pillow is installed: a third of the bytes, the same look."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    chromium = os.environ.get("CTXFOLD_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium: set CTXFOLD_TEST_CHROMIUM or install chromium")
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite://{d}/sessions.db"
        contexts = [demo_context(n, k, agent) for n, k, agent in
                    ((60, 8, "triage"), (400, 40, "reviewer"), (2_000, 120, "build-engineer"))]
        with Store(url) as store:
            for ctx in contexts:
                store.save(ctx)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
            terminal_png(contexts[0], browser, OUT / "show.png")
            serve_pngs(url, contexts[-1].id, browser)
            browser.close()
    for f in sorted(OUT.glob("*.png")):
        shrink(f)
        print(f"{f.relative_to(OUT.parent.parent)}: {f.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
