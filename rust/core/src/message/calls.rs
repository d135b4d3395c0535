//! Where a message's calls are and what their ids are, found once.
//!
//! Every export plans the whole request (`formats::plan`), and finding a message's calls
//! means reading each of its parts and tool call entries — memory of their own, read again on
//! every turn for the same answer. So what the plan needs of them (where each call is, its
//! id) is found on the first export and kept with the message, like its token counts. It is
//! not part of the value: a clone starts without it.
//!
//! This is the one definition of a message's calls: the exporters' plan, the framework
//! builders (through the plan the binding exposes) and `patch_dangling_tool_calls` all read
//! them here.

use super::{part_type, small_get, Content, Message, Part, Role};
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// Where a call is written in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The `i`-th part, a `tool_use` part.
    Part(u32),
    /// The `i`-th `tool_calls` entry.
    Entry(u32),
}

/// A call of a message: where it is, and its id ("" when the entry has none).
#[derive(Debug)]
pub struct Found {
    pub at: At,
    pub id: Box<str>,
}

/// The result a call never answered gets: written into the log by
/// `patch_dangling_tool_calls`, and into a request only by the exporters.
pub const INTERRUPTED: &str = "Tool call was interrupted and not executed. Please retry if needed.";

/// Where a call is written in its message.
#[derive(Debug, Clone, Copy)]
pub enum CallSrc<'a> {
    /// A `tool_calls` entry.
    Entry(&'a Map<String, Value>),
    /// A `tool_use` part.
    Part(&'a Part),
}

impl<'a> CallSrc<'a> {
    /// The call's id, as the message's own string.
    pub fn id(self) -> &'a str {
        match self {
            CallSrc::Part(p) => part_call_id(p).unwrap_or(""),
            CallSrc::Entry(c) => entry_call_id(c),
        }
    }

    /// The tool's name ("" when the call has none).
    pub fn name(self) -> &'a str {
        let v = match self {
            CallSrc::Part(p) => p.get("name"),
            CallSrc::Entry(c) => small_get(c, "name"),
        };
        v.and_then(Value::as_str).unwrap_or("")
    }

    pub fn arguments(self) -> Option<&'a Value> {
        match self {
            CallSrc::Part(p) => p.get("arguments"),
            CallSrc::Entry(c) => small_get(c, "arguments"),
        }
    }
}

/// Found on first use; like the token counts, it assumes what every message of a context
/// is: a value no longer changed (the fields are public for building one).
#[derive(Debug, Default)]
pub struct CallsCache(OnceLock<Box<[Found]>>);

impl Message {
    /// The calls an assistant message makes (none for other roles): `tool_use` parts with a
    /// `call_id`, in order, then `tool_calls` entries not already made by a part (the same
    /// call written both ways is one call).
    pub fn found_calls(&self) -> &[Found] {
        self.calls.0.get_or_init(|| find(self).into_boxed_slice())
    }

    /// What is written where a call of [`Message::found_calls`] is.
    pub fn call_at(&self, at: At) -> CallSrc<'_> {
        match (at, &self.content) {
            (At::Part(i), Content::Parts(parts)) => CallSrc::Part(&parts[i as usize]),
            (At::Entry(i), _) => CallSrc::Entry(&self.tool_calls[i as usize]),
            (At::Part(_), _) => unreachable!("a tool_use part is found in parts"),
        }
    }

    /// The `tool_calls` entry with the id of a call found at a part (the same call written
    /// both ways), if there is one; for a call found at an entry, that entry.
    pub fn call_entry(&self, f: &Found) -> Option<u32> {
        match f.at {
            At::Entry(i) => Some(i),
            At::Part(_) => self
                .tool_calls
                .iter()
                .position(|c| entry_call_id(c) == &*f.id)
                .map(|i| i as u32),
        }
    }

    /// The tool name of the call written at `at` ("" when it has none).
    pub fn call_name(&self, at: At) -> &str {
        self.call_at(at).name()
    }

    /// The arguments of the call written at `at`, as given: a dict, a JSON string, or none.
    pub fn call_arguments(&self, at: At) -> Option<&Value> {
        self.call_at(at).arguments()
    }
}

/// The call id of a `tool_use` part (`None`: it makes no call), or the one a `tool_result`
/// part answers.
pub fn part_call_id(p: &Part) -> Option<&str> {
    p.get("call_id").and_then(Value::as_str)
}

/// The id of a `tool_calls` entry ("" when it has none).
pub fn entry_call_id(c: &Map<String, Value>) -> &str {
    small_get(c, "id").and_then(Value::as_str).unwrap_or("")
}

fn find(m: &Message) -> Vec<Found> {
    let mut out = Vec::new();
    if m.role != Role::Assistant {
        return out;
    }
    if let Content::Parts(parts) = &m.content {
        for (i, p) in parts.iter().enumerate() {
            if part_type(p) == Some("tool_use") {
                if let Some(id) = part_call_id(p) {
                    out.push(Found {
                        at: At::Part(i as u32),
                        id: id.into(),
                    });
                }
            }
        }
    }
    let from_parts = out.len();
    for (i, c) in m.tool_calls.iter().enumerate() {
        let id = entry_call_id(c);
        if out[..from_parts].iter().any(|f| &*f.id == id) {
            continue;
        }
        out.push(Found {
            at: At::Entry(i as u32),
            id: id.into(),
        });
    }
    out
}
