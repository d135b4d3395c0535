"""Run the OpenAI Agents SDK's own session and runner tests with ContextSession in place of
``SQLiteSession``.

    python tests/sdk_suite/run.py [PYTEST ARGS...]

The tests come from the SDK's source distribution for the installed version (fetched with
``pip download``, the package registry being the one place this can reach); they need
``pytest-asyncio``, ``pytest-mock`` and ``inline-snapshot`` (the SDK's dev group). The test
files below are the ones that construct ``SQLiteSession`` and drive runs through it; tests of
SQLite internals (table names, raw SQL, connections) are deselected by name in ``DESELECT``,
each with the reason it cannot apply to a store that is not the SDK's SQLite schema. The SDK
tests' in-memory list session (``tests.utils.simple_session.SimpleListSession``, which
``tests/deferred_session_writes/`` and the compaction tests construct) is a ContextSession too.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _sdist import unpacked  # noqa: E402

FILES = [
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_soft_cancel.py",
    "tests/test_max_turns.py",
    # The SDK's session wrappers on top of the session: EncryptedSession's envelopes are items
    # that are not Responses items, kept opaque.
    "tests/memory/test_openai_responses_compaction_session.py",
    "tests/deferred_session_writes/",
]

# test name -> why it does not apply to ContextSession: each reaches into SQLiteSession's own
# implementation (its connection pool, locks, private methods, or its tables by raw SQL).
_POOL = "SQLiteSession's per-thread connection pool (_connections, _connections_lock, _get_connection)"
DESELECT: dict[str, str] = {
    "test_sqlite_session_close_closes_worker_thread_connections": _POOL,
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": _POOL,
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": _POOL,
    "test_sqlite_session_keeps_connections_of_live_worker_threads": _POOL,
    "test_sqlite_session_rollback_failure_evicts_connection": _POOL,
    "test_sqlite_session_close_retries_quarantined_connection": _POOL,
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": _POOL + " with a pausing "
    "sqlite3.Connection subclass",
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": "corrupts rows through _locked_connection() and "
    "raw SQL on agent_messages",
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": "corrupts rows through "
    "_locked_connection() and raw SQL on agent_messages",
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": "corrupts rows through "
    "_locked_connection() and raw SQL on agent_messages",
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": "corrupts rows through "
    "_locked_connection() and raw SQL on agent_messages",
    "test_sqlite_session_file_lock_is_shared_across_instances": "SQLiteSession._lock, its per-file lock object",
    "test_sqlite_session_failed_add_items_releases_write_lock": "probes SQLite's write lock with raw SQL on "
    "agent_sessions (and wants TypeError for a non-JSON item, where ctxfold raises FormatError, a ValueError)",
    "test_sqlite_session_failed_clear_session_rolls_back": "raw SQL on agent_sessions / agent_messages",
    "test_sqlite_session_failed_pop_item_releases_write_lock": "raw SQL on agent_sessions / agent_messages",
    "test_handoff_resume_after_cancelled_compaction_commits": "patches SQLiteSession._insert_items to cancel "
    "inside its write",
}


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = unpacked("openai-agents", tmp)
        deselect = [f"not {k}" for k in DESELECT]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "ctxfold_sqlite_swap", *FILES]
        if deselect:
            cmd += ["-k", " and ".join(deselect)]
        env = {**__import__("os").environ, "PYTHONPATH": str(HERE)}
        return subprocess.run([*cmd, *argv], cwd=root, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
