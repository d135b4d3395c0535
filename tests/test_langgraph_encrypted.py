"""With a serde that encrypts (LangGraph's ``EncryptedSerializer``), ContextSaver stores nothing
of a message's content unencrypted: each message of a log is kept through that serde, and its
ctxfold message carries only its role and ids. Graphs give the same results as on
InMemorySaver, every checkpoint reads back exactly, and the database's bytes hold none of the
conversation's text (which they do with the default serde: the check can fail)."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timezone
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("Crypto")  # (pycryptodome: LangGraph's AES cipher)

from _langgraph_graphs import Ids, Recording, chat_graph, reply, snapshot, tool_graph  # noqa: E402
from ctxfold.adapters.langgraph import ContextSaver  # noqa: E402
from ctxfold.adapters.langgraph._messages import encrypts  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

pytestmark = pytest.mark.frameworks

CFG = {"configurable": {"thread_id": "t1"}}
SECRET = "zebra-umbrella"  # in every message of the scenario: none of it may be stored as is


def _sealed() -> EncryptedSerializer:
    return EncryptedSerializer.from_pycryptodome_aes(key=b"0123456789abcdef")


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: Any) -> str:
    return str(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"))


def _scenario(saver: Any, ids: Ids) -> Any:
    """A ToolNode loop, then a branch from an old checkpoint, then a removal: every message
    holds the secret (questions, tool calls, tool results, answers)."""
    calls = [{"name": "weather", "args": {"city": f"Paris {SECRET}"}, "id": "call-1", "type": "tool_call"}]
    answers = [reply(0, "", tool_calls=calls), reply(1, f"sunny, {SECRET}"), reply(2, f"more {SECRET}"),
               reply(3, f"branch {SECRET}")]
    graph = tool_graph(answers, saver)
    outs = [ids(graph.invoke({"messages": [HumanMessage(f"weather? {SECRET}", id="human-1")]}, CFG)),
            ids(graph.invoke({"messages": [HumanMessage(f"again {SECRET}", id="human-2")]}, CFG))]
    history = list(graph.get_state_history(CFG))
    old = next(h for h in history if len(h.values.get("messages", [])) == 4 and not h.next)
    fork = graph.update_state(old.config, {"messages": [HumanMessage(f"edited {SECRET}", id="human-2b")]})
    outs.append(ids(graph.invoke(None, fork)))
    first = graph.get_state(CFG).values["messages"][0].id
    graph.update_state(CFG, {"messages": [RemoveMessage(id=first)]})
    return outs, snapshot(graph, CFG, ids)


def _stored_bytes(url: str) -> bytes:
    """Everything the database holds: the SQLite files as they are on disk (the log and its
    write-ahead file), or every row of ctxfold's PostgreSQL tables, each value as its bytes."""
    if url.startswith("sqlite://"):
        path = url[len("sqlite://"):]
        out = b""
        for p in (path, path + "-wal"):
            if os.path.exists(p):
                with open(p, "rb") as f:
                    out += f.read()
        return out
    import psycopg

    out = []
    with psycopg.connect(url) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = current_schema() AND table_name LIKE 'ctxfold%%'")]
        assert "ctxfold_events" in tables
        for table in tables:
            for row in con.execute(f"SELECT * FROM {table}"):
                out += [v if isinstance(v, bytes) else str(v).encode() for v in row]
    return b"\n".join(out)


def test_graphs_are_exact_and_store_no_message_text(url: str) -> None:
    ours = Recording(url, serde=_sealed())
    try:
        assert _scenario(ours, Ids()) == _scenario(InMemorySaver(serde=_sealed()), Ids())
        assert ours.check_exact() > 0
        seen = snapshot(chat_graph([], ours), CFG, Ids())
        assert ours.store is not None
        logs = [ours.store.load(cid) for cid, _ in ours.store.scan('["langgraph"')]
        assert len(logs) >= 2  # the main log and the branch's fork
        for ctx in logs:
            for m in ctx.messages:  # role and ids only; the message itself, encrypted
                assert m.content is None and m.role in ("user", "assistant", "tool")
                kind, _ = m.metadata["langgraph"]["serde"]
                assert kind.endswith("+aes")
    finally:
        ours.close()
    assert SECRET.encode() not in _stored_bytes(url)
    with ContextSaver(url, serde=_sealed()) as again:  # nothing cached: every message decrypted anew
        assert snapshot(chat_graph([], again), CFG, Ids()) == seen


def test_the_default_serde_stores_the_text(url: str) -> None:
    """The control: the same conversation under the default serde leaves its text in the
    database (the log's messages are plain ctxfold messages)."""
    with ContextSaver(url) as ours:
        _scenario(ours, Ids())
    assert SECRET.encode() in _stored_bytes(url)


RARE = [
    AIMessageChunk(f"chunk {SECRET}", id="a1"),
    ChatMessage(f"critic {SECRET}", role="critic", id="c1"),
    ToolMessage(f"bytes {SECRET}", tool_call_id="call-9", id="t1", artifact=b"\x00" + SECRET.encode()),
    AIMessage(f"dated {SECRET}", id="a2", additional_kwargs={"at": datetime(2025, 1, 2, tzinfo=timezone.utc)}),
    HumanMessage(f"no id {SECRET}"),
    AIMessage([{"type": "text", "text": SECRET}], id="a3", tool_calls=[
        {"name": "f", "args": {"q": SECRET}, "id": "call-8", "type": "tool_call"}]),
]


def test_every_kind_of_message_reads_back_exactly(url: str) -> None:
    """Messages the plain mapping keeps and those it falls back to the serde for, alike."""
    ids = []
    with ContextSaver(url, serde=_sealed()) as ours:
        for n in range(len(RARE)):
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": RARE[: n + 1]}
            cp["channel_versions"] = {"messages": f"{n + 1:032}.0"}
            conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
            if ids:
                conf["checkpoint_id"] = ids[-1]
            ours.put({"configurable": conf}, cp, {"step": n}, dict(cp["channel_versions"]))
            ids.append(cp["id"])
    with ContextSaver(url, serde=_sealed()) as again:
        for n, cid in enumerate(ids):
            t = again.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": cid}})
            assert t is not None
            got = t.checkpoint["channel_values"]["messages"]
            assert got == RARE[: n + 1]
            assert [type(m) for m in got] == [type(m) for m in RARE[: n + 1]]
    assert SECRET.encode() not in _stored_bytes(url)


class _Rot13Serde(JsonPlusSerializer):
    """A serializer of one's own that marks its types as LangGraph's EncryptedSerializer does."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        return f"{kind}+rot", bytes(b ^ 0x55 for b in data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, raw = data
        if "+" not in kind:
            return super().loads_typed(data)
        return super().loads_typed((kind.split("+", 1)[0], bytes(b ^ 0x55 for b in raw)))


def test_which_serializers_encrypt() -> None:
    assert encrypts(_sealed())
    assert encrypts(_Rot13Serde())
    assert not encrypts(JsonPlusSerializer())
    assert not encrypts(ContextSaver().serde)


def test_a_serializer_of_ones_own_that_encrypts_is_used_for_every_message(sqlite_url: str) -> None:
    with ContextSaver(sqlite_url, serde=_Rot13Serde()) as ours:
        graph = chat_graph([reply(0, f"fine {SECRET}")], ours)
        graph.invoke({"messages": [HumanMessage(f"hello {SECRET}", id="human-1")]}, CFG)
        got = graph.get_state(CFG).values["messages"]
    assert [m.content for m in got] == [f"hello {SECRET}", f"fine {SECRET}"]
    assert SECRET.encode() not in _stored_bytes(sqlite_url)


def test_a_thread_goes_on_encrypted_after_the_serde_is_switched(sqlite_url: str) -> None:
    """What a log held before stays as it was stored and reads back; what follows is sealed."""
    with ContextSaver(sqlite_url) as plain:
        chat_graph([reply(0, "plain answer")], plain).invoke(
            {"messages": [HumanMessage("plain-question-text", id="human-1")]}, CFG)
    with ContextSaver(sqlite_url, serde=_sealed()) as ours:
        graph = chat_graph([reply(1, f"sealed {SECRET}")], ours)
        graph.invoke({"messages": [HumanMessage(f"later {SECRET}", id="human-2")]}, CFG)
        got = [m.content for m in graph.get_state(CFG).values["messages"]]
    assert got == ["plain-question-text", "plain answer", f"later {SECRET}", f"sealed {SECRET}"]
    stored = _stored_bytes(sqlite_url)
    assert b"plain-question-text" in stored and SECRET.encode() not in stored


def test_async_graphs_store_no_message_text_either(url: str) -> None:
    async def run() -> list[str]:
        async with ContextSaver(url, serde=_sealed()) as ours:
            graph = chat_graph([reply(0, f"async answer {SECRET}")], ours)
            await graph.ainvoke({"messages": [HumanMessage(f"async question {SECRET}", id="human-1")]}, CFG)
            return [m.content for m in (await graph.aget_state(CFG)).values["messages"]]

    assert asyncio.run(run()) == [f"async question {SECRET}", f"async answer {SECRET}"]
    assert SECRET.encode() not in _stored_bytes(url)
