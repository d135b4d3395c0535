//! ctxfold's core: an append-only event log whose fold is the transcript an LLM is sent,
//! with anchors, non-destructive compaction, forks, token windows and a versioned codec.
//! Knows nothing of Python; `rust/python` is the thin binding.

pub mod anchors;
pub mod codec;
pub mod compaction;
pub mod context;
pub mod dynamic;
pub mod error;
pub mod event;
pub mod fold;
pub mod fork;
pub mod formats;
pub mod history;
pub mod json;
pub mod log;
pub mod memory;
pub mod message;
pub mod pending;
pub mod redact;
pub mod savepoint;
pub mod time;
pub mod tokens;
pub mod window;

pub use context::{Context, MessageHandle};
pub use error::{Error, ErrorKind, LocItem, Location, Place, Result, Trail};
pub use event::{Event, EventType, Op};
pub use message::{Content, Kind, Message, Part, Role};
pub use tokens::Encoding;
