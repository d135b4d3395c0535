"""Store.tail (the last k events of a context, read without loading it) and Store.scan /
Store.scan_deps (a family of contexts by id prefix), on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from _stores import stored_context
from ctxfold import Store


def test_tail_reads_the_last_events_below_a_seq(store_url):
    with Store(store_url) as store:
        ctx = stored_context(store, "a/1", 10, note="x")
        ctx.remove_message(0)
        store.save(ctx)
        t = store.tail("a/1", 3)
        assert t.head == 11 and t.state["deps"] == {"note": "x"}
        assert [e["seq"] for e in t.events] == [8, 9, 10] and t.events[-1]["type"] == "remove"
        assert [e["data"]["message"]["content"] for e in store.tail("a/1", 2, before=3).events] == ["m1", "m2"]
        assert store.tail("a/1", 0).events == [] and store.tail("a/1", 50).events[0]["seq"] == 0
        # What tail gives is what the context's serialization holds.
        assert store.tail("a/1", 11).events == json.loads(json.dumps(ctx.serialize()["events"]))
        with pytest.raises(KeyError):
            store.tail("nope", 1)
        with pytest.raises(ValueError):
            store.tail("a/1", -1)
        with pytest.raises(TypeError):
            store.tail("a/1", True)


def test_scan_finds_exactly_the_ids_under_a_prefix(store_url):
    with Store(store_url) as store:
        for cid in ("fam/1", "fam/2", "fam0", "fa", "other/fam/3", "fam/%2F/x"):
            stored_context(store, cid, 1, tag=cid)
        assert sorted(cid for cid, _ in store.scan("fam/")) == ["fam/%2F/x", "fam/1", "fam/2"]
        assert dict(store.scan("fam/"))["fam/1"]["deps"] == {"tag": "fam/1"}
        assert sorted(store.scan_deps("fam/", "tag")) == [("fam/%2F/x", "fam/%2F/x"), ("fam/1", "fam/1"),
                                                          ("fam/2", "fam/2")]
        assert store.scan_deps("fam/", "missing") == [(cid, None) for cid, _ in store.scan_deps("fam/", "missing")]
        assert len(store.scan("")) == 6
        with pytest.raises(ValueError):
            store.scan_deps("fam/", "a.b")


def test_scan_deps_gives_strings_only(store_url):
    with Store(store_url) as store:
        stored_context(store, "k/1", 0, text='{"a": [1, "é"]}', number=3)
        assert store.scan_deps("k/", "text") == [("k/1", '{"a": [1, "é"]}')]
        assert store.scan_deps("k/", "number") == [("k/1", None)]
