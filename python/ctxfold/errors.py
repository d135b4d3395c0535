"""ctxfold's exceptions. The Rust binding raises these (it imports them from here)."""

from __future__ import annotations

__all__ = ["ConflictError", "ContextError", "DecodeError", "FormatError", "StoreError", "UnknownAnchorError"]


class ContextError(Exception):
    """Base class of every ctxfold error."""


class DecodeError(ContextError, ValueError):
    """Input that cannot be read into a context; the message says where."""


class FormatError(ContextError, ValueError):
    """A provider message or request that cannot be converted (the message says where), or,
    with ``strict=True``, a request that would need repairs (the message lists them)."""


class UnknownAnchorError(ContextError, KeyError):
    """An anchor name the context does not have."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ConflictError(ContextError):
    """A store holds a newer version of the context than the one being saved (another writer
    saved first), or the id is taken by a context that did not come from this store. Nothing
    was written: reload, redo the turn, save again."""


class StoreError(ContextError):
    """A store cannot be used: its schema is newer than this ctxfold, a table is missing, or
    the database failed. The driver's exception is the ``__cause__``."""
