"""What the viewer's page costs the server on a large context: each request the page makes,
side by side with answering the whole transcript at once (what a viewer that does not page
would send).

    python benches/viewer_requests.py [N]        (default 20000 messages of the demo transcript)

Prints the time to open the file (load, index, token counts), then the median of 5 of each
request through Starlette's TestClient, and the whole transcript's JSON against one page.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

from ctxfold import Context
from ctxfold.demo_transcript import build_transcript
from ctxfold.viewer import open_source
from ctxfold.viewer._app import make_app
from starlette.testclient import TestClient


def median_ms(f, turns: int = 5) -> float:
    times = []
    for _ in range(turns):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Context(messages=build_transcript(n)).save(d)
        t = time.perf_counter()
        source = open_source(path)
        source.warm()
        print(f"open {n:,} messages (load, index, token counts): {time.perf_counter() - t:8.2f} s")
        try:
            c = TestClient(make_app(source), base_url="http://127.0.0.1")
            cid = c.get("/api/contexts").json()["contexts"][0]["id"]
            base = f"/api/contexts/{cid}"
            mid = n // 2
            budget = source.view(cid).total_tokens(n, "cl100k_base") // 10
            rows = [
                ("contexts", "/api/contexts", {}),
                ("head (limit=0)", base, {"limit": 0}),
                ("page of 100, top", base, {"limit": 100}),
                ("page of 100, middle", base, {"offset": mid, "limit": 100}),
                ("log page of 100", base + "/events", {"after": mid, "limit": 100}),
                (f"page at seq {mid:,}", base, {"seq": mid, "limit": 100}),
                ("token window (10% budget)", base + "/window", {"budget": budget}),
                (f"diff from seq {mid:,}", base + "/diff", {"from": mid}),
            ]
            page = 0.0
            for label, url, params in rows:
                ms = median_ms(lambda u=url, p=params: c.get(u, params=p).raise_for_status())
                page = ms if label == "page of 100, middle" else page
                print(f"  {label:<32} {ms:10.2f} ms")
            view = source.view(cid)
            whole = median_ms(lambda: view.transcript().to_json(), turns=3)
            print(f"  {'whole transcript as JSON (no paging)':<32} {whole:10.2f} ms   ({whole / page:,.0f}x a page)")
        finally:
            source.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
