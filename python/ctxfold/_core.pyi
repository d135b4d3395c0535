"""Types of the Rust extension (hand-written; checked with ``python -m mypy.stubtest ctxfold._core``)."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, TypeVar, final, overload

from typing_extensions import disjoint_base

__all__ = [
    "__version__",
    "Message",
    "SystemPromptMessage",
    "ToolDefinitionsMessage",
    "Part",
    "Event",
    "ContextCore",
    "hook_id",
    "encodings",
    "count_text",
    "parse_time",
    "located",
    "json_clean",
    "EVENT_TYPES",
    "RUNTIME_FIELDS",
    "RuntimeField",
    "BOOKKEEPING_EVENT_TYPES",
    "store_rows",
    "store_load",
    "Savepoint",
    "store_refresh",
    "context_savepoint",
    "context_rewind",
    "shown_tail",
    "shown_range",
    "write_file",
    "compaction_plan",
    "compaction_apply",
    "compaction_clear_tool_results",
    "compaction_records",
    "format_export",
    "format_import",
    "format_response",
    "format_tool_list",
    "format_plan",
    "interop_metadata",
    "request_header",
    "FormatPlan",
    "PlanCall",
    "PlanAnswer",
    "INTERRUPTED",
    "is_json",
    "export_cache_mode",
    "export_cache_usage",
    "export_cache_clear",
    "_rank_file",
]

__version__: str

# A JSON-compatible value: None, bool, int, float, str, list or dict of those.
_JSON: TypeAlias = Any
_T = TypeVar("_T")
_E = TypeVar("_E", bound=BaseException)
_Content: TypeAlias = "str | Sequence[Part | Mapping[str, _JSON]] | None"

def hook_id(name: str) -> str:
    """sha256 hex of a hook's name: the id messages carry in ``hook_ids``."""

def encodings() -> list[str]:
    """The token encodings counting knows (``cl100k_base``, ``o200k_base``, …)."""

def format_export(
    format: str, src: ContextCore | list[Message], strict: bool, instructions: bool, pair: bool = True
) -> dict[str, Any]:
    """The request's keyword arguments for ``format``; ``pair=False``
    (``openai_responses`` only): the items as they are, with no pairing plan."""

def format_import(format: str, data: Iterable[Any], system: Any = None) -> list[Message]:
    """Messages from a provider's messages or items."""

def format_response(response: Any) -> tuple[list[Message], dict[str, int]]:
    """A provider's answer as (messages, usage to add)."""

def format_tool_list(tools: Iterable[Any]) -> str:
    """Any API's ``tools`` as the text of the ``tool_list`` hook."""

def format_plan(format: str, src: ContextCore | list[Message], strict: bool = False) -> FormatPlan:
    """The core's plan of the request for ``src`` in ``format`` (any of the five targets);
    ``strict``: a ``FormatError`` listing every repair instead."""

def interop_metadata(format: str, kept: dict[str, _JSON]) -> dict[str, _JSON]:
    """``{"interop": {"format": format, **kept}}``: a message's metadata as the importer of
    ``format`` (any of the five targets) keeps what has no ctxfold field; a value of ``kept``
    that is not JSON is refused as a message's metadata is."""

def request_header(format: str, request: dict[str, _JSON]) -> dict[str, _JSON]:
    """``{"format": format, "request": request}``: the data of the ``request_header`` event of
    a whole request of ``format``; values that are not JSON are left out."""

@final
class RuntimeField:
    """A runtime field of a context, as the core's table has it."""
    @property
    def name(self) -> str: ...
    @property
    def carried(self) -> bool: ...
    @property
    def fork_copies(self) -> bool: ...

@final
class PlanCall:
    """A call of an assistant message, as the request makes it."""
    @property
    def id(self) -> str: ...
    @property
    def sent(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> _JSON: ...
    @property
    def entry(self) -> int | None: ...
    @property
    def part(self) -> int | None: ...

@final
class PlanAnswer:
    """An answer placed right after its call's turn (``message is None``: the interrupted result)."""
    @property
    def call(self) -> PlanCall: ...
    @property
    def message(self) -> int | None: ...
    @property
    def part(self) -> int | None: ...
    @property
    def sent(self) -> str: ...

@final
class FormatPlan:
    """Which messages a request sends where, which answer meets which call, the repairs, the ids."""
    @property
    def messages(self) -> list[Message]: ...
    @property
    def steps(self) -> list[tuple[Literal["message"], int] | tuple[Literal["turn"], range, list[PlanAnswer]]]: ...
    @property
    def calls(self) -> list[tuple[PlanCall, ...]]: ...
    @property
    def interop(self) -> list[dict[str, _JSON] | None]: ...
    @property
    def problems(self) -> list[str]: ...
    @property
    def ids(self) -> dict[str, str]: ...

INTERRUPTED: str
"""The result a call never answered gets (the log's patch and every request's)."""

def is_json(value: object) -> bool:
    """Whether ``value`` is JSON as ctxfold takes it everywhere (str keys, 64-bit ints, finite floats, no lone surrogates)."""

def export_cache_mode(mode: Literal["all", "strings", "off"] | None = None) -> Literal["all", "strings", "off"]:
    """The export cache's mode: ``"all"`` (a message's strings and the dicts and lists it
    exported to are kept and given again; the default), ``"strings"`` (its strings only) or
    ``"off"`` (nothing kept or given; what is held stays until :func:`export_cache_clear`).
    Given a mode, sets it for every later request; returns the mode in force before the call."""

def export_cache_usage() -> dict[str, int]:
    """What the export cache holds now: ``{"messages": n, "strings": n, "pieces": n}``."""

def export_cache_clear() -> None:
    """Drop everything the export cache holds; later requests make their objects anew."""

@overload
def located(e: _E, *path: str | int, within: str | None = None, cls: None = None) -> _E: ...
@overload
def located(e: BaseException, *path: str | int, within: str | None = None, cls: type[_E]) -> _E:
    """A copy of ``e`` found at a place outside its own: under ``path`` (keys and indices,
    outermost first) and in what ``within`` names (a file, a stored context). Of ``e``'s class,
    or ``cls``. Its text reads as the core's (``within: a.b[3].c: message``) and ``loc`` is the
    whole path. An exception without a place of its own is taken as its text."""

def count_text(text: str, encoding: str = "cl100k_base") -> int:
    """BPE tokens of ``text``; special-token text counts as ordinary text."""

def _rank_file(name: str) -> bytes:
    """The BPE rank file of an encoding in tiktoken's format, byte for byte (for the tests' oracle)."""

# ---- the store's rows (ctxfold/stores) ----------------------------------------

def store_rows(
    core: ContextCore, stored_seq: int | None, runtime: dict[str, _JSON]
) -> tuple[int, int, str, list[tuple[int, str]], list[tuple[int, str, str]]]:
    """(next_seq, message count, state JSON, events since ``stored_seq`` as (seq, JSON),
    content entries the store lacks as (ord, hash, JSON string))."""

def store_load(
    id: str,
    head: int,
    state: bytes | str,
    content: Iterable[Sequence[bytes | str]],
    events: Iterable[Sequence[int | bytes | str]],
) -> tuple[ContextCore, dict[str, _JSON], bool]:
    """(core, runtime fields, versioned) from a store's rows; ``DecodeError`` names the
    context and seq of a bad row."""

def store_refresh(
    core: ContextCore,
    expected: int,
    head: int,
    state: bytes | str,
    content: Iterable[Sequence[bytes | str]],
    events: Iterable[Sequence[int | bytes | str]],
    check: Callable[[dict[str, _JSON]], _T],
) -> tuple[int, _T]:
    """Catch ``core``, stored at ``expected``, up with rows read from seq ``expected - 1`` on,
    in one step under its lock: ``check`` reads the state's runtime fields before anything is
    applied: (events appended, what ``check`` returned). ``ConflictError`` when the store
    cannot catch it up (unsaved events, another history). ``DecodeError`` names the context and seq of a bad row."""

@final
class Savepoint:
    """A savepoint of a context's log, to rewind unsaved events to. Not public API."""

    @property
    def seq(self) -> int: ...

def context_savepoint(core: ContextCore) -> Savepoint: ...
def context_rewind(core: ContextCore, point: Savepoint) -> None:
    """Drop the events since ``point`` and restore the context as it was then."""

def shown_tail(core: ContextCore, k: int) -> list[Message]:
    """The last ``k`` messages of ``messages``, the same objects."""

def compaction_plan(
    core: ContextCore,
    max_tokens: int,
    keep_tokens: int | None,
    keep_last: int | None,
    encoding: str,
    pinned: Sequence[int],
) -> tuple[str, list[tuple[int, int]], list[Message], list[Message] | None, int, int] | None:
    """``(context id, ranges, messages, shown, based_on, tokens_before)`` (``shown`` ``None``:
    the same as ``messages``), or ``None``: nothing to do."""

def compaction_apply(
    core: ContextCore,
    context: str,
    ranges: Sequence[tuple[int, int]],
    based_on: int,
    tokens_before: int,
    encoding: str,
    summary: str | Message,
) -> list[Event]:
    """Write the compaction (a compare-and-swap on ``based_on``); the events written."""

def compaction_clear_tool_results(
    core: ContextCore,
    keep_last: int,
    min_tokens: int,
    exclude_tools: Sequence[str],
    placeholder: str,
    encoding: str,
) -> list[Event]:
    """Replace old tool results by the placeholder; the events written."""

def compaction_records(core: ContextCore) -> list[tuple[int, int, int, dict[str, _JSON]]]:
    """``(seq, first, last, record)`` of each applied compaction, oldest first."""
def write_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` by the one rule of writing a file (``Context.save``'s): a
    regular or new file atomically (a replaced one keeps its mode), a symlink, FIFO or device
    written through; a missing folder is a ``FileNotFoundError`` naming it."""

def shown_range(core: ContextCore, start: int, stop: int) -> list[Message]:
    """``messages[start:stop]`` (clamped), the same objects."""

class _TextFactory(Protocol):
    def __call__(self, text: str, **extra: _JSON) -> Part: ...

class _TextFactoryOrField(Protocol):
    """``Part.text``: on the class the factory (``Part.text("hi")``), on a part its text.

    At run time a descriptor (``ctxfold._part``) whose class access gives the factory, so the
    type also has the factory's ``__call__``: what stubtest sees on the class."""

    def __call__(self, text: str, **extra: _JSON) -> Part: ...

    @overload
    def __get__(self, obj: None, owner: type[Part] | None = None, /) -> _TextFactory: ...
    @overload
    def __get__(self, obj: Part, owner: type[Part] | None = None, /) -> str: ...

@final
class Part:
    """One part of a message's content: an immutable mapping with a string ``type``."""

    def __new__(cls, type: str, **fields: _JSON) -> Part: ...
    # ``Part.text`` is the factory on the class and the ``text`` field on a part: see _part.py.
    text: _TextFactoryOrField
    """``Part.text(t, **extra)`` makes a text part; on a part, its text (``None`` if it has none)."""
    @staticmethod
    def thinking(text: str, **extra: _JSON) -> Part:
        """A ``thinking`` part; ``extra`` keeps provider fields such as ``signature``."""
    @staticmethod
    def image(source: _JSON, **extra: _JSON) -> Part:
        """An ``image`` part: ``source`` a URL string, ``{"url": …}`` or a base64 source."""
    @staticmethod
    def audio(source: _JSON, **extra: _JSON) -> Part:
        """An ``audio`` part."""
    @staticmethod
    def video(source: _JSON, **extra: _JSON) -> Part:
        """A ``video`` part."""
    @staticmethod
    def file(source: _JSON, **extra: _JSON) -> Part:
        """A ``file`` part (a document)."""
    @staticmethod
    def pdf(source: _JSON, **extra: _JSON) -> Part:
        """A ``file`` part holding a PDF."""
    @staticmethod
    def tool_use(call_id: str, name: str, arguments: _JSON = None, **extra: _JSON) -> Part:
        """A call the model made; ``arguments`` a dict or the exact JSON string."""
    @staticmethod
    def tool_result(call_id: str, content: _JSON, **extra: _JSON) -> Part:
        """The answer to call ``call_id``."""
    @staticmethod
    def tool(name: str, description: str | None = None, parameters: _JSON = None, **extra: _JSON) -> Part:
        """A tool definition: name, description and JSON Schema parameters."""
    @staticmethod
    def from_dict(d: Mapping[str, _JSON]) -> Part:
        """A part from its dict (a ``type`` and that type's fields)."""
    def to_dict(self) -> dict[str, _JSON]:
        """The part as a dict: every key it was given, in order."""
    @property
    def type(self) -> str:
        """The part's type: ``text``, ``thinking``, ``image``, ``tool_use``, …"""
    def get(self, key: str, default: _JSON = None) -> _JSON:
        """A field's value, or ``default``."""
    def __getitem__(self, key: str, /) -> _JSON: ...
    def __contains__(self, key: str, /) -> bool: ...
    # Any other field, or None (implemented as tp_getattro, which stubtest cannot see).
    def __getattr__(self, name: str) -> _JSON: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[dict[str, _JSON]]]: ...

@disjoint_base
class Message:
    """An immutable chat message, compared by value. Role is system, developer, user,
    assistant or tool; content is a str, a list of parts, or None."""

    def __new__(
        cls,
        role: str,
        content: _Content = None,
        *,
        name: str | None = None,
        tool_calls: Sequence[Mapping[str, _JSON]] | None = None,
        tool_call_id: str | None = None,
        metadata: Mapping[str, _JSON] | None = None,
        created_at: datetime | str | None = None,
        id: str | None = None,
        hook_ids: Iterable[str] | None = None,
    ) -> Message: ...
    @classmethod
    def system(cls, content: _Content, **kw: Any) -> Message:
        """A system message; ``kw`` are the constructor's keyword fields."""
    @classmethod
    def developer(cls, content: _Content, **kw: Any) -> Message:
        """A developer message: the application's instructions (OpenAI weighs them above the
        user's; other providers take them as system text)."""
    @classmethod
    def user(cls, content: _Content, **kw: Any) -> Message:
        """A user message; ``kw`` are the constructor's keyword fields."""
    @classmethod
    def assistant(cls, content: _Content = None, **kw: Any) -> Message:
        """An assistant message, with ``tool_calls=[...]`` when it calls tools."""
    @classmethod
    def tool(cls, tool_call_id: str, result: _JSON, **kw: Any) -> Message:
        """The result of call ``tool_call_id``; a non-str result is kept as compact JSON."""
    @classmethod
    def create(
        cls, role: str, content_parts: Sequence[Part | Mapping[str, _JSON]], metadata: Mapping[str, _JSON] | None = None
    ) -> Message:
        """A message of ``role`` whose content is the given parts."""
    @classmethod
    def from_dict(cls, d: Mapping[str, _JSON]) -> Message:
        """Read what ``to_dict`` writes, or any subset of it (``role`` required)."""
    def to_dict(self) -> dict[str, _JSON]:
        """Every field as JSON-compatible values; ``Message.from_dict`` reads it back exactly."""
    def replace(self, **changes: Any) -> Message:
        """A copy with the given fields changed (messages are immutable)."""
    def count_tokens(self, encoding: str = "cl100k_base") -> int:
        """This message's tokens in ``encoding``, counted once and cached."""
    @property
    def role(self) -> str:
        """``system``, ``developer``, ``user``, ``assistant`` or ``tool``."""
    @property
    def content(self) -> str | list[Part] | None:
        """Exactly what was given: a str, a list of parts, or ``None``."""
    @property
    def parts(self) -> list[Part]:
        """The content as parts: a str is one text part, ``None`` none."""
    @property
    def text(self) -> str:
        """The text parts joined with no separator; ``""`` when there are none."""
    @property
    def name(self) -> str | None:
        """The author's or the tool's name, if given."""
    @property
    def tool_calls(self) -> list[dict[str, _JSON]]:
        """The calls an assistant message makes: dicts with ``id``, ``name``, ``arguments``."""
    @property
    def tool_call_id(self) -> str | None:
        """For a tool message, the call it answers."""
    @property
    def metadata(self) -> dict[str, _JSON]:
        """JSON-compatible data carried with the message (a copy)."""
    @property
    def created_at(self) -> datetime:
        """When the message was made (aware UTC, microseconds kept)."""
    @property
    def id(self) -> str:
        """The message's id (a uuid4 string unless given)."""
    @property
    def hook_ids(self) -> tuple[str, ...]:
        """The ids (``hook_id(name)``) of the hooks whose outputs this message shows."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __lt__(self, value: object, /) -> bool: ...
    def __le__(self, value: object, /) -> bool: ...
    def __gt__(self, value: object, /) -> bool: ...
    def __ge__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[dict[str, _JSON]]]: ...
    def __copy__(self) -> Message: ...
    def __deepcopy__(self, memo: Any, /) -> Message: ...

@final
class SystemPromptMessage(Message):
    """The system prompt: static text plus the outputs of its hooks, resolved on read."""

    def __new__(cls, role: str = "system", content: _Content = None, **kw: Any) -> SystemPromptMessage: ...
    @classmethod
    def create(cls, static_text: str | None = None, hooks: Iterable[str] | None = None) -> Message:  # type: ignore[override]
        """The system prompt: ``static_text`` plus the outputs bound to ``hooks``, resolved on read."""

@final
class ToolDefinitionsMessage(Message):
    """The tool definitions, filled from the ``tool_list`` and ``tool_filter`` hooks."""

    def __new__(cls, role: str = "tool", content: _Content = None, **kw: Any) -> ToolDefinitionsMessage: ...
    @classmethod
    def create(cls, hooks: Iterable[str] | None = None) -> Message:  # type: ignore[override]
        """The tool definitions, filled from ``tool_list`` (and ``tool_filter``) when materialized."""

@final
class Event:
    """One entry of the log: ``seq``, ``type``, ``time``, ``data``; ``message`` for surface events."""

    @property
    def seq(self) -> int:
        """The event's place in the log: 0, 1, 2, … never reused."""
    @property
    def type(self) -> str:
        """``user_message``, ``assistant_message``, ``tool_result``, ``system_message``, ``remove``, …"""
    @property
    def time(self) -> datetime:
        """When it happened (aware UTC); a surface event's is its message's ``created_at``."""
    @property
    def data(self) -> dict[str, _JSON]:
        """The event's data: the op and positions, the message's dict, a ``source``."""
    @property
    def message(self) -> Message | None:
        """The message of a surface event, else ``None``."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __lt__(self, value: object, /) -> bool: ...
    def __le__(self, value: object, /) -> bool: ...
    def __gt__(self, value: object, /) -> bool: ...
    def __ge__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

EVENT_TYPES: tuple[str, ...]
RUNTIME_FIELDS: tuple[RuntimeField, ...]
BOOKKEEPING_EVENT_TYPES: frozenset[str]

def parse_time(text: str) -> datetime: ...
def json_clean(value: Any, redact: bool = False) -> Any: ...
@final
class ContextCore:
    """The Rust context behind ``ctxfold.Context``: the log, the fold, anchors, windows, codec.
    Not meant to be used directly."""

    def __new__(cls, id: str | None = None, created_at: datetime | str | None = None) -> ContextCore: ...
    @property
    def id(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def origin_context_id(self) -> str | None: ...
    @property
    def children(self) -> list[str]: ...
    @property
    def next_seq(self) -> int: ...
    def inherit(self, parent: ContextCore) -> None: ...
    def append(
        self, message: Message, anchor_point: str = "messages", source: str | None = None, want_event: bool = True
    ) -> tuple[Event | None, bool | None]: ...
    def extend(
        self, messages: Iterable[Message], anchor_point: str = "messages", want_events: bool = True
    ) -> tuple[list[Event], bool | None]: ...
    def add_anchor(self, name: str, msg_index: int, after_existing: bool = True) -> None: ...
    def replace_range(self, first: int, last: int, message: Message) -> Event | None: ...
    def remove_range(self, first: int, last: int) -> Event | None: ...
    def clear(self) -> Event | None: ...
    def messages_at(self, seq: int) -> list[Message]: ...
    def changed_since(self, seq: int) -> int: ...
    def log_event(self, kind: str, data: Mapping[str, _JSON]) -> Event: ...
    def patch_dangling_tool_calls(self) -> list[Event]: ...
    def pending_tool_calls(self) -> list[tuple[str, str, dict[str, Any] | None, int, str | dict[str, Any] | None]]: ...
    def materialize(self, outputs: Mapping[str, str]) -> Event | None: ...
    def set_overlay(self, text: str | None) -> None: ...
    def set_system_prompt(self, text: str | None) -> None: ...
    def system_prompt(self) -> str | None: ...
    @property
    def overlay(self) -> str | None: ...
    def messages(self) -> list[Message]: ...
    def messages_with_role(self, role: str) -> list[Message]: ...
    def shown_len(self) -> int: ...
    def __len__(self) -> int: ...
    def last_message(self) -> Message | None: ...
    def events(self) -> list[Event]: ...
    @property
    def anchor_points(self) -> list[tuple[str, int]]: ...
    @property
    def content_map(self) -> dict[str, str]: ...
    @property
    def hook_index(self) -> dict[str, list[Message]]: ...
    @property
    def system_prompt_message(self) -> Message | None: ...
    @property
    def tool_definitions_message(self) -> Message | None: ...
    def total_token_count(self, encoding: str = "cl100k_base") -> int: ...
    def message_token_counts(self, encoding: str = "cl100k_base") -> list[int]: ...
    def fork_insert_sequence(
        self,
        system_prompt_message: Message | None = None,
        tool_definitions_message: Message | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> ContextCore: ...
    def rolling_sequence_window(self, count: int) -> ContextCore | None: ...
    def rolling_token_window(self, max_tokens: int, encoding: str = "cl100k_base") -> ContextCore | None: ...
    def strip_thinking(self) -> ContextCore: ...
    def serialize(self, runtime: dict[str, _JSON]) -> dict[str, _JSON]: ...
    def save(self, session_dir: str, runtime: dict[str, _JSON]) -> Path: ...
    def file_name(self) -> str: ...
    @staticmethod
    def load_file(path: str) -> tuple[ContextCore, dict[str, _JSON], bool]: ...
    @staticmethod
    def load_dict(d: Mapping[str, _JSON], require_version: bool) -> tuple[ContextCore, dict[str, _JSON], bool]: ...
