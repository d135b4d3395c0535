"""ctxfold: an LLM agent's conversation as an append-only event log whose fold is the
transcript. Anchors, non-destructive compaction, forks, exact token windows and versioned
persistence, with the hot path in Rust."""

from ._compaction import CompactionPlan, CompactionRecord, Compactor
from ._context import Context
from ._core import (
    Event,
    Message,
    Part,
    SystemPromptMessage,
    ToolDefinitionsMessage,
    __version__,
    count_text,
    encodings,
    export_cache_clear,
    export_cache_mode,
    export_cache_usage,
    hook_id,
)
from ._part import install_text_descriptor as _install_text_descriptor
from ._tool_call import ToolCall
from ._values import RunContext, SandboxPolicy, Usage
from .errors import ConflictError, ContextError, DecodeError, FormatError, StoreError, UnknownAnchorError
from .stores import AsyncStore, Store, StoredContext

_install_text_descriptor(Part)

__all__ = [
    "AsyncStore",
    "CompactionPlan",
    "CompactionRecord",
    "Compactor",
    "ConflictError",
    "Context",
    "ContextError",
    "DecodeError",
    "Event",
    "FormatError",
    "Message",
    "Part",
    "RunContext",
    "SandboxPolicy",
    "Store",
    "StoreError",
    "StoredContext",
    "SystemPromptMessage",
    "ToolCall",
    "ToolDefinitionsMessage",
    "UnknownAnchorError",
    "Usage",
    "__version__",
    "count_text",
    "encodings",
    "export_cache_clear",
    "export_cache_mode",
    "export_cache_usage",
    "hook_id",
]
