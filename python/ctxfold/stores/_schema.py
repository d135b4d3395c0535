"""The schema's version and tables, and the checks of a schema found in a database: what the
two backends share, whatever SQL each spells its schema with (``docs/store.md``)."""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

from ..errors import StoreError

__all__ = ["SCHEMA_VERSION", "TABLES", "check_existing"]

SCHEMA_VERSION = 1
TABLES = ("ctxfold_schema", "ctxfold_contexts", "ctxfold_events", "ctxfold_content")


def check_existing(name: str, have: Set[str], version_row: Callable[[], Any]) -> None:
    """Refuse a schema this ctxfold cannot use: ``have`` are the ctxfold tables found (some),
    ``version_row`` reads ``SELECT max(version) FROM ctxfold_schema``."""
    if "ctxfold_schema" not in have:
        raise StoreError(f"{name}: ctxfold tables without ctxfold_schema: not a store this ctxfold made, "
                         "or damaged")
    row = version_row()
    version = row[0] if row else None
    if isinstance(version, bool) or not isinstance(version, int):
        raise StoreError(f"{name}: ctxfold_schema holds no version")
    if version < 1:  # versions count from 1
        raise StoreError(f"{name}: ctxfold_schema holds version {version}, which no ctxfold wrote: damaged")
    if version > SCHEMA_VERSION:
        raise StoreError(f"{name}: the store's schema is version {version}, this ctxfold knows versions up "
                         f"to {SCHEMA_VERSION}: upgrade ctxfold")
    missing = [t for t in TABLES if t not in have]
    if missing:
        raise StoreError(f"{name}: schema version {version} but table {', '.join(missing)} is missing")
