//! ctxfold's core: an append-only event log whose fold is the transcript an LLM is sent,
//! with anchors, non-destructive compaction, forks, token windows and a versioned codec.
//! Knows nothing of Python; `rust/python` is the thin binding.
//!
//! The modules are private; what the binding, the tests and the examples use is re-exported
//! here, named once: the context and its messages, the codec's output shapes, the provider
//! formats, tokens, compaction and the small helpers the binding shares with the core.

mod anchors;
mod codec;
mod compaction;
mod context;
mod dynamic;
mod error;
mod event;
mod fold;
mod fork;
mod formats;
mod history;
mod json;
mod log;
mod memory;
mod message;
mod pending;
mod redact;
mod savepoint;
mod time;
mod tokens;
mod window;

// The context, its events and its messages.
pub use context::{Context, MessageHandle};
pub use error::{Error, ErrorKind, LocItem, Location, Place, Result, Trail};
pub use event::{Event, EventType, Op, EVENT_TYPES};
pub use message::{
    new_id, new_part, part_from_map, Content, Fields, Kind, Message, Part, Role, INTERRUPTED,
};
pub use savepoint::Savepoint;

// Persistence: the document's shapes, files, and the runtime fields it carries.
pub use codec::out::write_file_with;
pub use codec::runtime::{Absent, Carried, ForkCopy, RuntimeField, RUNTIME_FIELDS};
pub use codec::write::{DataOut, MessageOut, Shape};

// Provider formats.
pub use formats::interop::{
    metadata as interop_metadata, of as interop_of, request_header, INTEROP,
};
pub use formats::out::{Key as PieceKey, Piece, J};
pub use formats::plan::{OutlineStep, Target};
pub use formats::response::response as import_response;
pub use formats::tools::tool_list;
pub use formats::{export, import, ExportOptions, Format};

// Tokens, windows and compaction.
pub use compaction::{ClearOptions, Plan, PlanOptions, Summary};
pub use tokens::{count_text, counted_text, message_tokens, Encoding, ENCODINGS};
pub use window::budget;

// Helpers the binding shares with the core.
pub use dynamic::{add_tool_hooks, hook_id, system_prompt, tool_definitions};
pub use json::{compact_json, MAX_DEPTH};
pub use redact::is_secret_key;
pub use time::{now, parse_iso, to_iso, Micros};
