"""Seeing a transcript: ``ctxfold show`` prints one in the terminal, ``ctxfold serve`` serves a
local, read-only web page over a file or a store (``pip install ctxfold[viewer]``).

``ContextView`` is what both read: a loaded context's transcript at any seq, with positions,
origins, tokens and compactions, its log, token windows and the difference between two seqs."""

from ._model import Compaction, ContextView, Diff, Row, Transcript, Window
from ._source import Source, open_source

__all__ = ["Compaction", "ContextView", "Diff", "Row", "Source", "Transcript", "Window", "open_source"]
