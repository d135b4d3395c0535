from __future__ import annotations

import pytest
from _oracle import load_oracle
from _stores import pg_url, sql, sqlite_url, store_url  # noqa: F401  (the store fixtures)


@pytest.fixture(scope="session")
def tiktoken_oracle():
    """Python tiktoken, offline. Fails (never skips) when it cannot be set up."""
    return load_oracle()
