from __future__ import annotations

import pytest
from _oracle import load_oracle


@pytest.fixture(scope="session")
def tiktoken_oracle():
    """Python tiktoken, offline. Fails (never skips) when it cannot be set up."""
    return load_oracle()
