"""The example runs as documented (``python examples/openai_agents_session.py``): a real
``Runner`` over a stored ContextSession with the SDK's scripted model, no network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "openai_agents_session.py"


def test_example_runs(tmp_path):
    db = tmp_path / "sessions.db"
    out = subprocess.run([sys.executable, str(EXAMPLE), str(db)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "turn 1: It's 21°C and clear in Paris." in out.stdout
    assert "turn 2: Then a light jacket is enough." in out.stdout
    assert "6 items in the session" in out.stdout
    assert "popped: Then a light jacket is enough." in out.stdout
    assert db.exists()
