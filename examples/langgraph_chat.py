"""A LangGraph agent whose checkpoints are ctxfold logs, stored in SQLite.

    pip install 'ctxfold[langgraph]'
    python examples/langgraph_chat.py [threads.db]

No network: the chat model is LangChain's scripted fake (``GenericFakeChatModel``), which answers
from a list; swap in a real model and nothing else changes. The run shows three turns of a
ToolNode agent, the thread's state and history read back, the message log behind the thread (each
checkpoint appended only what changed), time travel from an old checkpoint (a branch that
continues the same log), and a second saver on the same file reading it all, as another worker
would.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from ctxfold.adapters.langgraph import ContextSaver
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


SCRIPT = [
    AIMessage("", id="ai-1", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"}]),
    AIMessage("Sunny in Paris: take sunglasses.", id="ai-2"),
    AIMessage("You're welcome!", id="ai-3"),
    AIMessage("In Rome too, probably sunny.", id="ai-4"),
]


def build(saver: ContextSaver) -> Any:
    model = GenericFakeChatModel(messages=iter(SCRIPT))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([get_weather]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=saver)


def main(path: str) -> None:
    url = f"sqlite://{Path(path).resolve()}"
    config = {"configurable": {"thread_id": "demo"}}
    with ContextSaver(url) as saver:
        graph = build(saver)
        graph.invoke({"messages": [HumanMessage("What's the weather in Paris?", id="user-1")]}, config)
        graph.invoke({"messages": [HumanMessage("Thanks!", id="user-2")]}, config)

        state = graph.get_state(config)
        print(f"{len(state.values['messages'])} messages in the thread:")
        for m in state.values["messages"]:
            print(f"  {type(m).__name__:<12} {m.content or m.tool_calls}")
        history = list(graph.get_state_history(config))
        print(f"{len(history)} checkpoints in its history")

        # The message channel is one ctxfold Context: one event per message, not a copy per checkpoint.
        log = saver.store.load('["langgraph", "demo", "", "messages"]')
        print(f"its message log: {log.next_seq} events for {len(history)} checkpoints")

        # Time travel: back to the checkpoint after the first answer, and ask something else.
        first_answer = next(h for h in history if len(h.values.get("messages", [])) == 4 and not h.next)
        branch = graph.invoke({"messages": [HumanMessage("And in Rome?", id="user-3")]}, first_answer.config)
        print("branch:", [m.content for m in branch["messages"][-2:]])
        log = saver.store.load('["langgraph", "demo", "", "messages"]')
        print(f"the log after the branch: {log.next_seq} events (it shares everything before the branch point)")

    # Another process (here: another saver) reads the same thread from the same file.
    with ContextSaver(url) as other:
        latest = other.get_tuple(config)
        assert latest is not None
        print("another saver sees", len(latest.checkpoint["channel_values"]["messages"]), "messages at the latest checkpoint")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(str(Path(folder) / "threads.db"))
