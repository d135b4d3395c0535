"""Small runtime values that are naturally Python: usage counters, the run context for tools."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

__all__ = ["Usage", "RunContext", "SandboxPolicy", "SANDBOX_MODES"]

SANDBOX_MODES = ("read_only", "workspace_write", "full_access")


@dataclass(frozen=True)
class Usage:
    """Token and request counters. ``+`` adds field-wise; ``total_tokens`` is never recomputed."""

    requests: int = 0
    """Model requests made."""
    tool_calls: int = 0
    """Tool calls made."""
    input_tokens: int = 0
    """Tokens sent to the model."""
    output_tokens: int = 0
    """Tokens the model produced."""
    total_tokens: int = 0
    """As the provider reported it (never recomputed)."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the provider's prompt cache."""
    cache_read_input_tokens: int = 0
    """Input tokens read from the provider's prompt cache."""

    def __add__(self, other: object) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any]) -> Usage:
        """Missing keys count 0; unknown keys are ignored."""
        values = {}
        for f in fields(cls):
            v = m.get(f.name, 0)
            if v is None:
                v = 0
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"usage field {f.name} must be an int, got {type(v).__name__}")
            values[f.name] = v
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        """Every counter by name."""
        # (every save of a context writes its usage: the names read once, not from fields())
        return dict(zip(_USAGE_NAMES, _usage_values(self)))


_USAGE_NAMES = tuple(f.name for f in fields(Usage))
_usage_values = attrgetter(*_USAGE_NAMES)


@dataclass(frozen=True)
class SandboxPolicy:
    """How much a tool may touch: ``read_only``, ``workspace_write`` or ``full_access``."""

    mode: str
    """``read_only``, ``workspace_write`` or ``full_access``."""

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise ValueError(f"invalid sandbox mode {self.mode!r}: expected one of {', '.join(SANDBOX_MODES)}")


@dataclass
class RunContext:
    """What a tool sees of a run: the dependencies and the sandbox policy."""

    deps: dict[str, Any] = field(default_factory=dict)
    """The run's dependencies (a copy of the context's ``deps``)."""
    sandbox: SandboxPolicy | None = None
    """What the tools may touch, or ``None`` for no policy."""

    def __init__(self, deps: Mapping[str, Any] | None = None, *, sandbox: SandboxPolicy | None = None) -> None:
        self.deps = dict(deps or {})
        self.sandbox = sandbox
