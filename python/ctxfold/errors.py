"""ctxfold's exceptions. The Rust binding raises these (it imports them from here).

An error that knows where it was found says so twice: in its text (``events[17].data.message.role:
invalid role 'bot'``, led by the file or the stored context that held the input) and as data, in
``loc``: the path of keys (``str``) and list indices (``int``) from the outside in, here
``("events", 17, "data", "message", "role")``. ``loc`` is ``()`` when the error has no path.
"""

from __future__ import annotations

__all__ = ["ConflictError", "ContextError", "DecodeError", "FormatError", "StoreError", "UnknownAnchorError"]


class ContextError(Exception):
    """Base class of every ctxfold error.

    ``loc``: where in the input the error was found, as a tuple of keys and indices (outermost
    first); ``()`` when there is no path. A plain ``ValueError``, ``TypeError`` or ``IndexError``
    raised by the core for a value with a place (``Message(tool_calls=[...])``) carries ``loc`` too.
    """

    loc: tuple[str | int, ...] = ()
    """Where in the input the error was found: keys (``str``) and list indices (``int``), outermost
    first; ``()`` when there is no path."""


class DecodeError(ContextError, ValueError):
    """Input that cannot be read into a context (a document, a dict, a store's rows); the message
    says where, and ``loc`` holds the path inside the document (``("events", 3, "data", "op")``)."""


class FormatError(ContextError, ValueError):
    """A provider message or request that cannot be converted (the message says where, ``loc``
    holds the path: ``("messages", 0, "content", 2)``), or, with ``strict=True``, a request that
    would need repairs (the message lists them)."""


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
