"""The example runs as documented (``python examples/google_adk_runner.py``): a real ADK Runner
on a stored ContextSessionService with a scripted model, no network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.frameworks

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "google_adk_runner.py"


def test_example_runs(tmp_path):
    db = tmp_path / "sessions.db"
    out = subprocess.run([sys.executable, str(EXAMPLE), str(db)], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "turn 1: It's 21°C and clear in Paris." in lines
    assert "turn 2: It's 14°C and clear in Oslo." in lines
    assert "8 events in the session" in lines
    assert "after compaction: 5 messages shown, 9 events in the log" in lines
    assert "first message now: Alice asked about Paris: 21°C, clear." in lines
    assert "stale writer refused: reload the session and append again" in lines
    assert db.exists()
