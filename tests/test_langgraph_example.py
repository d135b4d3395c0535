"""The example runs as documented (``python examples/langgraph_chat.py``): a real ToolNode graph
on a ContextSaver over SQLite with a scripted chat model, no network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

pytestmark = pytest.mark.frameworks

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "langgraph_chat.py"


def test_example_runs(tmp_path) -> None:
    db = tmp_path / "threads.db"
    out = subprocess.run([sys.executable, str(EXAMPLE), str(db)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "6 messages in the thread:" in out.stdout
    assert "its message log: 6 events for 8 checkpoints" in out.stdout
    assert "branch: ['And in Rome?', 'In Rome too, probably sunny.']" in out.stdout
    assert "another saver sees 6 messages at the latest checkpoint" in out.stdout
    assert db.exists()
