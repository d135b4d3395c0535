"""The compaction example runs as documented (``python examples/compaction.py``): a real
``openai.OpenAI`` client on a mocked transport summarizes, no network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "compaction.py"


def test_example_runs():
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("before: 49 messages")
    after = int(lines[1].split(", ")[1].split()[0])
    assert after <= 800
    assert "summary: The user asked about" in out.stdout
    # The cut fell inside a turn: the kept suffix grew back to the call that opens it.
    assert "kept after the summary: 15 messages, from an assistant message (calling weather)" in out.stdout
    assert "tool results now: ['[tool result cleared]'" in out.stdout
