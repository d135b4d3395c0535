"""A PostgreSQL save with statements beside it (``Store._save_with``, what the LangGraph saver's
checkpoints use) goes to the server as one statement: the appends and the statements as parts
of one ``WITH``, in autocommit. What that statement writes and refuses, and the transaction it
falls back to when a statement cannot be a part of it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")

from _stores import moved_on_elsewhere, pg_url  # noqa: E402,F401
from ctxfold import AsyncStore, Context, Message, Store, SystemPromptMessage, ToolDefinitionsMessage  # noqa: E402
from ctxfold.errors import ConflictError  # noqa: E402
from ctxfold.stores._postgres_session import Connection  # noqa: E402

INSERT = "INSERT INTO probe (x) VALUES (%s)"


@pytest.fixture
def store(pg_url):  # noqa: F811
    with Store(pg_url) as s:
        s._db._run(lambda con: con.execute("CREATE TABLE probe (x text PRIMARY KEY)"))
        yield s


@pytest.fixture
def sent(monkeypatch) -> list[str]:
    """The SQL of every statement the store's connections send (the server runs them all)."""
    out: list[str] = []
    for name in ("run", "execute"):
        real = getattr(Connection, name)

        def spy(self: Any, query: Any, *a: Any, _real: Any = real, **kw: Any) -> Any:
            out.append(str(query))
            return _real(self, query, *a, **kw)

        monkeypatch.setattr(Connection, name, spy)
    return out


def _probe(store: Store) -> list[str]:
    return [r[0] for r in store._db._run(lambda con: con.execute("SELECT x FROM probe ORDER BY x").fetchall())]


def _with_content() -> Context:
    """A context whose save has content entries (materialized texts) as well as events."""
    ctx = Context.create(SystemPromptMessage.create("You are X", hooks=["memory"]), ToolDefinitionsMessage.create())
    ctx.materialize({"memory": "remember this"})
    ctx.add_message(Message.user("hi"))
    return ctx


def test_a_save_with_statements_is_one_statement(store, sent) -> None:
    new, old = _with_content(), Context()
    old.add_message(Message.user("first"))
    store.save(old)
    old.add_message(Message.user("second"))
    sent.clear()
    store._save_with([new, old], [(INSERT, ("a",)), (INSERT, ["b"])])
    assert len(sent) == 1 and sent[0].startswith("WITH head0 AS")
    assert "BEGIN" not in sent[0] and "new_content0" in sent[0] and "new_content1" not in sent[0]
    assert _probe(store) == ["a", "b"]
    assert store.load(new.id).messages == new.messages and store.load(new.id).content_map == new.content_map
    assert store.load(old.id).messages == old.messages

    # statements alone: the last one is the main statement
    sent.clear()
    store._save_with([], [(INSERT, ("c",)), (INSERT, ("d",))])
    assert len(sent) == 1 and sent[0].startswith("WITH s0 AS (INSERT")
    assert _probe(store) == ["a", "b", "c", "d"]


@pytest.mark.parametrize("statement", [
    ("WITH v (x) AS (VALUES (%s)) INSERT INTO probe (x) SELECT x FROM v", ("with",)),  # a WITH of its own
    ("INSERT INTO probe (x) VALUES (%(x)s)", {"x": "named"}),  # named parameters
    ("SELECT %s::text", ("a select",)),  # not data-modifying
])
def test_a_statement_that_cannot_be_a_part_runs_in_one_transaction(store, sent, pg_url, statement) -> None:  # noqa: F811
    ctx = Context()
    ctx.add_message(Message.user("one"))
    sent.clear()
    store._save_with([ctx], [statement, (INSERT, ("beside",))])
    assert "BEGIN" in sent and "COMMIT" in sent
    assert store.load(ctx.id).messages == ctx.messages and "beside" in _probe(store)
    # and refused whole when the head moved
    moved_on_elsewhere(pg_url, ctx.id)
    before = _probe(store)
    ctx.add_message(Message.user("lost"))
    with pytest.raises(ConflictError, match=ctx.id):
        store._save_with([ctx], [statement, (INSERT, ("refused",))])
    assert _probe(store) == before


def test_the_async_store_sends_one_statement_too(pg_url, sent) -> None:  # noqa: F811
    async def main() -> None:
        async with AsyncStore(pg_url) as a:
            with Store(pg_url) as b:
                b._db._run(lambda con: con.execute("CREATE TABLE probe (x text PRIMARY KEY)"))
                ctx = _with_content()
                await a._save_with([ctx], [(INSERT, ("a",)), (INSERT, ("b",))])
                assert _probe(b) == ["a", "b"] and b.load(ctx.id).messages == ctx.messages
                moved_on_elsewhere(pg_url, ctx.id)
                seq = ctx.stored_seq
                ctx.add_message(Message.user("lost"))
                with pytest.raises(ConflictError, match=ctx.id):
                    await a._save_with([ctx], [(INSERT, ("refused",))])
                assert _probe(b) == ["a", "b"] and ctx.stored_seq == seq

    asyncio.run(main())
