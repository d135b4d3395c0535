from __future__ import annotations

import sys

import pytest
from _oracle import load_oracle
from _stores import pg_url, sql, sqlite_url, store_url  # noqa: F401  (the store fixtures)


@pytest.fixture(scope="session")
def tiktoken_oracle():
    """Python tiktoken, offline. Fails (never skips) when it cannot be set up."""
    return load_oracle()


# google-adk supports CPython >= 3.11 only (its extra installs nothing on 3.10), so the ADK
# adapter's tests are not collected there; CI runs them on the newest interpreter.
collect_ignore_glob = ["test_google_adk_*.py"] if sys.version_info < (3, 11) else []
