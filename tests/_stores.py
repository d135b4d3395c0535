"""Store fixtures shared by the store tests: a fresh SQLite file, and a fresh PostgreSQL schema
on the server named by CTXFOLD_TEST_POSTGRES_URL (`.ci/postgres start` makes one). In CI
(CI=true) a missing server fails the PostgreSQL tests; run by hand without one, they skip and
say why."""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest

PG_ENV = "CTXFOLD_TEST_POSTGRES_URL"


def postgres_server() -> str:
    url = os.environ.get(PG_ENV)
    if url:
        return url
    message = f"no PostgreSQL server: {PG_ENV} is not set (`eval \"$(.ci/postgres start)\"` starts one)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI runs the PostgreSQL store tests: {message}")
    pytest.skip(message)


@contextmanager
def schema_on(server: str, prefix: str = "t") -> Iterator[str]:
    """A URL of ``server`` whose tables go into a new schema (``prefix`` and a random name),
    dropped afterwards. Named from ``secrets``, not ``uuid.uuid4``: some suites run here
    (LangGraph's) patch it to make their own ids predictable."""
    import psycopg

    schema = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    try:
        sep = "&" if "?" in server else "?"
        yield f"{server}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(server, autocommit=True) as con:
            con.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose tables go into a schema of their own, dropped afterwards."""
    with schema_on(postgres_server()) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite://{tmp_path}/sessions.db"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request) -> str:
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")


class Sql:
    """Plain SQL on a store's database, beside the store (to count, corrupt, drop)."""

    def __init__(self, url: str):
        self.url = url
        self.postgres = url.startswith("postgresql://")
        if self.postgres:
            import psycopg

            self.con = psycopg.connect(url, autocommit=True)
        else:
            self.con = sqlite3.connect(url[len("sqlite://"):], isolation_level=None)

    def run(self, sql: str, *params):
        if not self.postgres:
            sql = sql.replace("%s", "?")
        return self.con.execute(sql, params).fetchall() if sql.lstrip().upper().startswith(("SELECT", "WITH")) \
            else self.con.execute(sql, params)

    def count_writes(self) -> None:
        """From now on, every row inserted, updated or deleted in the store's tables adds one
        to ctxfold_test_writes (a trigger per table: the database's own count)."""
        self.run("CREATE TABLE ctxfold_test_writes (tbl TEXT NOT NULL)")
        for t in ("ctxfold_contexts", "ctxfold_events", "ctxfold_content"):
            if self.postgres:
                self.run(f"""CREATE FUNCTION count_{t}() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN INSERT INTO ctxfold_test_writes VALUES ('{t}'); RETURN NULL; END $$""")
                self.run(f"CREATE TRIGGER w_{t} AFTER INSERT OR UPDATE OR DELETE ON {t} "
                         f"FOR EACH ROW EXECUTE FUNCTION count_{t}()")
            else:
                for op in ("INSERT", "UPDATE", "DELETE"):
                    self.run(f"CREATE TRIGGER w_{t}_{op} AFTER {op} ON {t} FOR EACH ROW "
                             f"BEGIN INSERT INTO ctxfold_test_writes VALUES ('{t}'); END")

    def writes(self) -> dict[str, int]:
        """Rows written per table since the last call."""
        rows = self.run("SELECT tbl, count(*) FROM ctxfold_test_writes GROUP BY tbl")
        self.run("DELETE FROM ctxfold_test_writes")
        return {t: int(n) for t, n in rows}

    def close(self) -> None:
        self.con.close()


@pytest.fixture
def sql(store_url) -> Iterator[Sql]:
    s = Sql(store_url)
    yield s
    s.close()


def stored_context(store: Any, context_id: str, n: int, **deps: Any) -> Any:
    """A context of ``n`` user messages (and ``deps``), saved in ``store``."""
    from ctxfold import Context, Message

    ctx = Context.deserialize({"version": 2, "id": context_id})
    ctx.merge_deps(deps)
    for i in range(n):
        ctx.add_message(Message.user(f"m{i}"))
    store.save(ctx)
    return ctx


def moved_on_elsewhere(url: str, context_id: str) -> None:
    """Another writer (a store of its own on ``url``) saves one more message, "elsewhere", to
    the stored context: a save of it from what was loaded before is then a conflict."""
    from ctxfold import Message, Store

    with Store(url) as store:
        other = store.load(context_id)
        other.add_message(Message.user("elsewhere"))
        store.save(other)


def without_write_view(sqlite_url: str) -> None:
    """The SQLite database as a ctxfold made before the write view left it: no view
    ``ctxfold_write``, no triggers."""
    con = sqlite3.connect(sqlite_url.removeprefix("sqlite://"))
    try:
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            con.execute(f"DROP TRIGGER {name}")
        con.execute("DROP VIEW ctxfold_write")
        con.commit()
    finally:
        con.close()
