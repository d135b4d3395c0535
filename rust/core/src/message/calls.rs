//! Where a message's calls are and what their ids are, found once.
//!
//! Every export plans the whole request (`formats::plan`), and finding a message's calls
//! means reading each of its parts and tool call entries — memory of their own, read again on
//! every turn for the same answer. So what the plan needs of them (where each call is, its
//! id) is found on the first export and kept with the message, like its token counts. It is
//! not part of the value: a clone starts without it.

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

    /// The tool name of the call written at `at` ("" when it has none).
    pub fn call_name(&self, at: At) -> &str {
        self.call_field(at, "name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The arguments of the call written at `at`, as given: a dict, a JSON string, or none.
    pub fn call_arguments(&self, at: At) -> Option<&Value> {
        self.call_field(at, "arguments")
    }

    fn call_field(&self, at: At, key: &str) -> Option<&Value> {
        match at {
            At::Part(i) => match &self.content {
                Content::Parts(parts) => parts.get(i as usize).and_then(|p| p.get(key)),
                _ => None,
            },
            At::Entry(i) => self
                .tool_calls
                .get(i as usize)
                .and_then(|c| small_get(c, key)),
        }
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
