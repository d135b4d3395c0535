"""``delete_for_runs``'s index holds only checkpoints with a run id: a checkpoint put without
one (a graph run outside LangGraph's server) writes no entry. A store made with the index of
every row gets the partial one when a saver opens it, and ``delete_for_runs`` finds its
checkpoints through it, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")

from _langgraph_graphs import chat_graph, reply  # noqa: E402
from _stores import Sql  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402

pytestmark = pytest.mark.frameworks

_OLD = "CREATE INDEX ctxfold_lg_checkpoints_by_run ON ctxfold_lg_checkpoints (run_id)"


def _indexes(sql: Sql) -> dict[str, str]:
    """The secondary indexes of the checkpoints table: name → definition."""
    if sql.postgres:
        rows = sql.run("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
                       "AND tablename = 'ctxfold_lg_checkpoints' "
                       "AND indexname <> 'ctxfold_lg_checkpoints_pkey'")
    else:
        rows = sql.run("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                       "AND tbl_name = 'ctxfold_lg_checkpoints' AND sql IS NOT NULL")
    return {str(n): str(d) for n, d in rows}


def _turns(saver: ContextSaver, thread: str, runs: list[str | None]) -> None:
    graph = chat_graph([reply(n) for n in range(len(runs))], saver)
    for n, run in enumerate(runs):
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
        if run is not None:
            config["metadata"] = {"run_id": run}
        graph.invoke({"messages": [HumanMessage(f"q{n}", id=f"{thread}-h{n}")]}, config)


def _entries(sql: Sql) -> int:
    """How many entries the run index holds (SQLite: its b-tree read alone, through
    ``INDEXED BY``; PostgreSQL: the rows its definition admits, which is what it indexes)."""
    if sql.postgres:
        return int(sql.run("SELECT count(*) FROM ctxfold_lg_checkpoints WHERE run_id IS NOT NULL")[0][0])
    return int(sql.run("SELECT count(*) FROM ctxfold_lg_checkpoints INDEXED BY ctxfold_lg_checkpoints_by_run_id "
                       "WHERE run_id IS NOT NULL")[0][0])


def test_a_new_store_indexes_only_checkpoints_with_a_run_id(store_url) -> None:
    with ContextSaver(store_url) as saver:
        _turns(saver, "plain", [None, None])
        _turns(saver, "runs", ["run-a", "run-b"])
        plain = len(list(saver.list({"configurable": {"thread_id": "plain"}})))
        runs = len(list(saver.list({"configurable": {"thread_id": "runs"}})))
        sql = Sql(store_url)
        try:
            (definition,) = _indexes(sql).values()
            assert "WHERE" in definition.upper() and "IS NOT NULL" in definition.upper(), definition
            assert len(sql.run("SELECT 1 FROM ctxfold_lg_checkpoints")) == plain + runs
            assert _entries(sql) == runs  # the plain thread's checkpoints are not in it
        finally:
            sql.close()
        saver.delete_for_runs(["run-a"])
        assert {t.metadata.get("run_id") for t in saver.list({"configurable": {"thread_id": "runs"}})} == {"run-b"}
        assert len(list(saver.list({"configurable": {"thread_id": "plain"}}))) == plain


def test_a_store_with_the_old_index_gets_the_partial_one(store_url) -> None:
    with ContextSaver(store_url) as saver:
        _turns(saver, "t", ["run-0", None, "run-2"])
    sql = Sql(store_url)
    try:
        sql.run("DROP INDEX ctxfold_lg_checkpoints_by_run_id")
        sql.run(_OLD)
        assert list(_indexes(sql)) == ["ctxfold_lg_checkpoints_by_run"]
        with ContextSaver(store_url) as saver:
            assert list(_indexes(sql)) == ["ctxfold_lg_checkpoints_by_run_id"]
            before = len(list(saver.list({"configurable": {"thread_id": "t"}})))
            saver.delete_for_runs(["run-2"])
            left = list(saver.list({"configurable": {"thread_id": "t"}}))
            assert 0 < len(left) < before and all(t.metadata.get("run_id") != "run-2" for t in left)
    finally:
        sql.close()
