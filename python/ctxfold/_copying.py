"""``copy.copy``, ``copy.deepcopy`` and ``pickle`` of a ``Context``: through the version 2
document (``serialize``/``deserialize``), with every runtime field carried as the Python object
it is — deps unredacted, callbacks, ``notify``, the overlay — which a file never holds.

A copy is a new, independent Context with the same id, log, anchors and fields; its messages are
equal to the original's, not the same objects. Pickling a context whose runtime fields hold
something pickle cannot take (a lambda as ``notify``) fails as pickle does for that object."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import _runtime
from ._core import ContextCore

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["reduce", "shallow_copy"]

_EXTRA = ("stored_seq", "_stored_state")


def _state(ctx: Context) -> tuple[str, dict[str, Any]]:
    with ctx._lock:
        doc = json.dumps(ctx.serialize(), ensure_ascii=False, separators=(",", ":"))
        fields = {f.name: getattr(ctx, f.name) for f in _runtime.FIELDS}
        fields.update((name, getattr(ctx, name)) for name in _EXTRA)
    fields["overlay"] = ctx._core.overlay
    return doc, fields


def restore(cls: type[Context], doc: str, fields: dict[str, Any]) -> Context:
    """The inverse of ``reduce``: the context the document holds, its fields set as given."""
    core, _, _ = ContextCore.load_dict(json.loads(doc), True)
    ctx = cls(_core_ctx=core)
    fields = dict(fields)
    overlay = fields.pop("overlay", None)
    if overlay is not None:
        ctx._core.set_overlay(overlay)
    ctx.__dict__.update(fields)
    return ctx


def reduce(ctx: Context) -> tuple[Any, ...]:
    """``__reduce__``: ``pickle`` and ``copy.deepcopy`` rebuild from the document, and copy (or
    pickle) the runtime fields as the objects they are."""
    doc, fields = _state(ctx)
    return restore, (type(ctx), doc, fields)


def shallow_copy(ctx: Context) -> Context:
    """``copy.copy``: a new context from the document, its runtime fields copied as a fork
    copies them (``deps`` and ``callbacks`` are new dicts holding the same values)."""
    doc, fields = _state(ctx)
    out = restore(type(ctx), doc, {"overlay": fields["overlay"], **{n: fields[n] for n in _EXTRA}})
    with ctx._lock:
        _runtime.copy(ctx, out)
    return out
