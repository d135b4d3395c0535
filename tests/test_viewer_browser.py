"""The page of `ctxfold serve` in a real browser: headless Chromium (the system's, driven by
Playwright). The real server runs: uvicorn in a thread over a store, and the `ctxfold serve`
command itself over a 100,000-message file. In CI (CI=true) a missing browser fails these tests;
run by hand without one, they skip and say why."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest
import uvicorn
from _viewer import HOSTILE, sample_context, with_compaction_record
from ctxfold import Context, Message, Store
from ctxfold.demo_transcript import build_transcript
from ctxfold.viewer import open_source
from ctxfold.viewer._app import make_app
from playwright.sync_api import Page, expect, sync_playwright

pytestmark = pytest.mark.frameworks

CHROMIUM_ENV = "CTXFOLD_TEST_CHROMIUM"
BIG = 100_000


# Where Chrome is when it is not on PATH (hosted CI machines of macOS and Windows have it there).
_KNOWN = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
          r"C:\Program Files\Google\Chrome\Application\chrome.exe",
          r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe")


def chromium() -> str:
    path = os.environ.get(CHROMIUM_ENV) or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")) if p), None) \
        or next((p for p in _KNOWN if os.path.isfile(p)), None)
    if path:
        return path
    message = f"no Chromium: {CHROMIUM_ENV} is not set and none is on PATH (`apt-get install chromium`)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI runs the browser tests: {message}")
    pytest.skip(message)


def free_socket() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s


def wait_for(url: str, proc: subprocess.Popen | None = None, seconds: float = 300) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(url)


@pytest.fixture(scope="module")
def store_site(tmp_path_factory) -> Iterator[tuple[str, dict[str, Context]]]:
    """uvicorn in a thread over a SQLite store: the sample, a context named with markup, others."""
    url = f"sqlite://{tmp_path_factory.mktemp('store')}/sessions.db"
    sample = with_compaction_record(sample_context())
    marked = Context(messages=[Message.user("hi")], agent_name=HOSTILE)
    others = [Context(messages=[Message.user(f"other {i}")], agent_name=f"other-{i}") for i in range(3)]
    with Store(url) as store:
        for ctx in (*others, marked, sample):
            store.save(ctx)
    source = open_source(url)
    sock = free_socket()
    server = uvicorn.Server(uvicorn.Config(make_app(source), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    wait_for(base + "/api/contexts")
    yield base, {"sample": sample, "marked": marked, **{f"other{i}": c for i, c in enumerate(others)}}
    server.should_exit = True
    thread.join(30)
    sock.close()
    source.close()


@pytest.fixture(scope="module")
def big_site(tmp_path_factory) -> Iterator[tuple[str, Context]]:
    """`ctxfold serve FILE` as a user runs it, over a 100,000-message demo transcript."""
    ctx = Context(messages=build_transcript(BIG))
    path = ctx.save(tmp_path_factory.mktemp("big"))
    proc = subprocess.Popen([sys.executable, "-m", "ctxfold._cli", "serve", path, "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = ""
        while " on http://" not in line:  # the command says where it listens (port 0: a free one)
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError(f"`ctxfold serve` exited: {proc.wait(30)}")
        base = re.search(r"(http://127\.0\.0\.1:\d+)/", line).group(1)
        wait_for(base + "/api/contexts", proc)
        yield base, ctx
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stderr:
            proc.stderr.close()


@pytest.fixture(scope="module")
def browser():
    path = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser) -> Iterator[Page]:
    """A page whose console errors and uncaught exceptions fail the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 850})
    pg = context.new_page()
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("dialog", lambda d: problems.append(f"dialog: {d.message}"))
    yield pg
    pg.wait_for_timeout(200)  # let late errors arrive
    context.close()
    assert problems == []


def open_context(page: Page, base: str, ctx: Context) -> None:
    page.goto(f"{base}/#{ctx.id}")
    expect(page.locator("#context-title")).to_have_text(ctx.id)
    expect(page.locator("#transcript .row.msg").first).to_be_visible()


def test_list_and_transcript_render(page, store_site):
    base, ctxs = store_site
    page.goto(base + "/")
    items = page.locator("#contexts li")
    expect(items).to_have_count(5)
    newest_first = [c.id for c in (ctxs["sample"], ctxs["marked"], ctxs["other2"], ctxs["other1"], ctxs["other0"])]
    assert [items.nth(i).get_attribute("data-id") for i in range(5)] == newest_first
    page.fill("#search", "other-1")
    expect(items).to_have_count(1)
    expect(page.locator("#context-count")).to_have_text("1 matching context")
    page.fill("#search", "")
    expect(items).to_have_count(5)
    items.first.click()
    sample = ctxs["sample"]
    expect(page.locator("#context-title")).to_have_text(sample.id)
    rows = page.locator("#transcript .row.msg")
    expect(rows).to_have_count(len(sample))
    expect(page.locator("#context-stats")).to_contain_text(f"{len(sample)} messages · {sample.total_token_count():,} tokens")
    for i, m in enumerate(sample.messages):
        row = page.locator(f'#transcript .row[data-index="{i}"]')
        expect(row.locator(".role")).to_have_text(m.role)
        expect(row.locator(".tok")).to_have_text(f"{m.count_tokens():,} tok")
    # The log: one row per event.
    page.click('#tabs button[data-tab="log"]')
    expect(page.locator("#log .row.ev")).to_have_count(sample.next_seq)
    expect(page.locator("#log .row.ev").first).to_contain_text("insert at 0")


def test_markup_is_shown_as_text_and_runs_nothing(page, store_site):
    base, ctxs = store_site
    sample = ctxs["sample"]
    at = next(e.seq for e in sample.events() if e.message is not None and e.message.text.startswith("summary:"))
    page.goto(base + "/")
    # An agent name holding markup, in the list.
    expect(page.locator("#contexts li", has_text="<script>")).to_have_count(1)
    open_context(page, base, sample)
    # The transcript before the summary holds the hostile message; the slider goes there.
    page.locator("#seq").evaluate(f"(e) => {{ e.value = {at}; e.dispatchEvent(new Event('input')); }}")
    expect(page.locator("#context-stats")).to_contain_text(f"at seq {at}")
    row = page.locator("#transcript .row.msg", has_text="<script>window.__pwned")
    expect(row).to_have_count(1)
    expect(row.locator(".preview")).to_have_text(HOSTILE)
    row.click()
    expect(page.locator("#detail pre.text", has_text="onerror")).to_have_text(HOSTILE)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#transcript img, #detail img, #contexts img, #main script, #sidebar script").count() == 0


def test_a_compaction_expands_to_its_originals(page, store_site):
    base, ctxs = store_site
    sample = ctxs["sample"]
    open_context(page, base, sample)
    summary = page.locator("#transcript .row.compaction")
    expect(summary).to_have_count(1)
    seq = next(e.seq for e in sample.events() if e.message is not None and e.message.text.startswith("summary:"))
    originals = sample.messages_at(seq)[2:6]
    tokens = sum(m.count_tokens() for m in originals)
    expect(summary.locator(".badge")).to_have_text(f"≡ 4 msgs · {tokens:,} tok")
    summary.locator(".badge").click()
    shown = page.locator("#detail .originals > .message")
    expect(shown).to_have_count(4)
    for i, m in enumerate(originals):
        expect(shown.nth(i).locator(".role")).to_have_text(m.role)
        expect(shown.nth(i).locator(".tok")).to_have_text(f"{m.count_tokens():,} tok")
    expect(shown.nth(1)).to_contain_text("look at the cache key")  # the thinking part
    expect(shown.nth(2)).to_contain_text("cache miss for key")
    expect(page.locator("#detail .originals")).to_contain_text("tokens_before")  # the compaction record
    # Clicking again folds them.
    page.locator("#detail .message > .badge").first.click()
    expect(shown).to_have_count(0)


def test_window_diff_and_slider(page, store_site):
    base, ctxs = store_site
    sample = ctxs["sample"]
    open_context(page, base, sample)
    budget = 60
    child = sample.rolling_token_window(budget)
    assert child is not None
    page.fill("#budget", str(budget))
    page.press("#budget", "Enter")
    expect(page.locator(".note.window")).to_contain_text(f"keeps {len(child)} of {len(sample)} messages "
                                                         f"({child.total_token_count()} tokens)")
    start = len(sample) - (len(child) - 2)  # two special messages lead the window
    expect(page.locator(f'#transcript .row[data-index="{start}"]')).to_have_class(re.compile(r"\bwindow-start\b"))
    # Before it, all but the two special messages (which every window keeps) are left out.
    assert page.locator("#transcript .row.outside").count() == start - 2
    for i in (0, 1):
        expect(page.locator(f'#transcript .row[data-index="{i}"]')).not_to_have_class(re.compile(r"\boutside\b"))
    page.fill("#diff-from", "9")
    page.click("#diff-go")
    expect(page.locator(".note.diff")).to_contain_text(f"the first {sample.changed_since(9)} are unchanged")
    expect(page.locator("#transcript .row.changed")).to_have_count(len(sample) - sample.changed_since(9))
    for seq in (0, 3, 9):
        page.locator("#seq").evaluate(f"(e) => {{ e.value = {seq}; e.dispatchEvent(new Event('input')); }}")
        expect(page.locator("#context-stats")).to_contain_text(f"at seq {seq} of {sample.next_seq}")
        expect(page.locator("#transcript .row.msg")).to_have_count(len(sample.messages_at(seq)))


def test_a_100k_context_opens_paged(page, big_site):
    base, ctx = big_site
    t = time.perf_counter()
    page.goto(f"{base}/")
    first = page.locator('#transcript .row.msg[data-index="0"]')
    expect(first).to_be_visible(timeout=30_000)
    print(f"\n100k context: first rows shown {time.perf_counter() - t:.2f} s after navigation")
    expect(page.locator("#context-stats")).to_contain_text(f"{BIG:,} messages")
    expect(first.locator(".tok")).to_have_text(f"{ctx.messages[0].count_tokens():,} tok")
    rows = page.locator("#transcript .row")
    assert rows.count() < 80  # only what is on screen, not 100,000
    for target in (50_000, BIG - 1, 1234):
        page.locator("#transcript").evaluate(f"(e) => {{ e.scrollTop = {target} * 60; }}")
        row = page.locator(f'#transcript .row.msg[data-index="{target}"]')
        expect(row).to_be_visible()
        expect(row.locator(".pos")).to_have_text(f"#{target}")
        expect(row.locator(".tok")).to_have_text(f"{ctx.messages[target].count_tokens():,} tok")
        assert rows.count() < 80
    page.click('#tabs button[data-tab="log"]')
    expect(page.locator('#log .row.ev[data-index="0"]')).to_be_visible()
    assert page.locator("#log .row").count() < 120
