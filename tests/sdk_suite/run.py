"""Run the OpenAI Agents SDK's own session and runner tests with ContextSession in place of
``SQLiteSession``.

    python tests/sdk_suite/run.py [PYTEST ARGS...]

The tests come from the SDK's source distribution for the installed version (fetched with
``pip download``, the package registry being the one place this can reach); they need
``pytest-asyncio``, ``pytest-mock`` and ``inline-snapshot`` (the SDK's dev group). The test
files below are the ones that construct ``SQLiteSession`` and drive runs through it; tests of
SQLite internals (table names, raw SQL, connections) are deselected by name in ``DESELECT``,
each with the reason it cannot apply to a store that is not the SDK's SQLite schema.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent

FILES = [
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_soft_cancel.py",
    "tests/test_max_turns.py",
]

# name substring -> why it does not apply to ContextSession
DESELECT: dict[str, str] = {}


def main(argv: list[str]) -> int:
    v = version("openai-agents")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             f"openai-agents=={v}", "-d", tmp],
            check=True,
        )
        (sdist,) = Path(tmp).glob("openai_agents-*.tar.gz")
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        root = Path(tmp) / f"openai_agents-{v}"
        deselect = [f"not {k}" for k in DESELECT]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "ctxfold_sqlite_swap", *FILES]
        if deselect:
            cmd += ["-k", " and ".join(deselect)]
        env = {**__import__("os").environ, "PYTHONPATH": str(HERE)}
        return subprocess.run([*cmd, *argv], cwd=root, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
