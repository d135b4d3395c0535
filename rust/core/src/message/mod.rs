//! Messages and their parts: immutable values, compared by value.
//!
//! A part is kept as the JSON object it was given (every key, in order), because providers
//! reject reasoning that comes back altered: nothing here normalizes a part.

mod calls;
mod fields;
mod part;

pub use calls::{entry_call_id, part_call_id, At, CallSrc, Found, INTERRUPTED};

pub use fields::Fields;
pub use part::{
    check_parts, is_media_type, new_part, part_from_map, part_type, small_get, text_part, Part,
    MEDIA_TYPES,
};

use crate::error::{Error, Result};
use crate::time::{self, Micros};
use crate::tokens::cache::TokenCache;
use calls::CallsCache;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn parse(s: &str) -> Result<Role> {
        Ok(match s {
            "system" => Role::System,
            "developer" => Role::Developer,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => {
                return Err(Error::Value(format!(
                    "invalid role {s:?}: expected one of system, developer, user, assistant, tool"
                )))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Which class a message is: the two special kinds are treated specially by a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Plain,
    SystemPrompt,
    ToolDefinitions,
}

impl Kind {
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Plain => "Message",
            Kind::SystemPrompt => "SystemPromptMessage",
            Kind::ToolDefinitions => "ToolDefinitionsMessage",
        }
    }

    /// Any unknown class name reads as a plain message (as the Python seed's registry did).
    pub fn from_type_name(s: &str) -> Kind {
        match s {
            "SystemPromptMessage" => Kind::SystemPrompt,
            "ToolDefinitionsMessage" => Kind::ToolDefinitions,
            _ => Kind::Plain,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Content {
    #[default]
    None,
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug)]
// The fields every export reads of every message (role, kind, content, the call and answer
// fields, the calls found) come first and in this order, so that they share a cache line or
// two: at 100k messages a request's plan is bound by memory, not by work.
#[repr(C)]
pub struct Message {
    pub role: Role,
    pub kind: Kind,
    pub content: Content,
    pub tool_call_id: Option<String>,
    pub tool_calls: Vec<Map<String, Value>>,
    /// Its calls, found on first use (`calls.rs`). Not part of the value.
    pub(crate) calls: CallsCache,
    pub name: Option<String>,
    pub metadata: Map<String, Value>,
    pub created_at: Micros,
    pub id: String,
    pub hook_ids: Vec<String>,
    /// Token counts per encoding, filled on first use. Not part of the value.
    pub(crate) tokens: TokenCache,
}

impl PartialEq for Message {
    fn eq(&self, o: &Self) -> bool {
        self.role == o.role
            && self.content == o.content
            && self.name == o.name
            && self.tool_calls == o.tool_calls
            && self.tool_call_id == o.tool_call_id
            && self.metadata == o.metadata
            && self.created_at == o.created_at
            && self.id == o.id
            && self.hook_ids == o.hook_ids
            && self.kind == o.kind
    }
}

impl Clone for Message {
    /// A clone is usually about to be changed, so it starts with an empty token cache.
    fn clone(&self) -> Self {
        Message {
            role: self.role,
            content: self.content.clone(),
            name: self.name.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
            metadata: self.metadata.clone(),
            created_at: self.created_at,
            id: self.id.clone(),
            hook_ids: self.hook_ids.clone(),
            kind: self.kind,
            tokens: TokenCache::default(),
            calls: CallsCache::default(),
        }
    }
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl Message {
    /// A message with defaults for everything but role and content.
    pub fn new(role: Role, content: Content) -> Message {
        Message::new_with(role, content, None, time::now())
    }

    /// A message with the given id (a fresh one if `None`) and creation time.
    pub fn new_with(
        role: Role,
        content: Content,
        id: Option<String>,
        created_at: Micros,
    ) -> Message {
        Message {
            role,
            content,
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            metadata: Map::new(),
            created_at,
            id: id.unwrap_or_else(new_id),
            hook_ids: Vec::new(),
            kind: Kind::Plain,
            tokens: TokenCache::default(),
            calls: CallsCache::default(),
        }
    }

    /// Check what the constructor cannot express in types.
    pub fn validate(&self) -> Result<()> {
        for (i, call) in self.tool_calls.iter().enumerate() {
            validate_tool_call(call).map_err(|e| match e {
                Error::Value(m) => Error::Value(format!("tool_calls[{i}]: {m}")),
                other => other,
            })?;
        }
        check_parts(&self.content)
    }

    /// Content as parts: a str becomes one text part, `None` none.
    pub fn parts(&self) -> Vec<Part> {
        match &self.content {
            Content::None => Vec::new(),
            Content::Text(t) => vec![text_part(t)],
            Content::Parts(p) => p.clone(),
        }
    }

    /// The text parts joined with no separator.
    pub fn text(&self) -> String {
        match &self.content {
            Content::None => String::new(),
            Content::Text(t) => t.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter(|p| part_type(p) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        }
    }

    /// A tool result: role `tool`, or parts that include a `tool_result`.
    /// What adding this message does to a context's `needs_response`: an assistant message
    /// needs a response when it calls tools; user and tool messages always do; system and
    /// developer messages leave it alone (`None`).
    pub fn needs_response_after(&self) -> Option<bool> {
        match self.role {
            Role::Assistant => Some(!self.tool_calls.is_empty()),
            Role::User | Role::Tool => Some(true),
            Role::System | Role::Developer => None,
        }
    }

    /// What adding `messages` in order does to `needs_response`: the last message that
    /// changes it decides (`None`: none does).
    pub fn needs_response_after_all<'a>(
        messages: impl DoubleEndedIterator<Item = &'a Message>,
    ) -> Option<bool> {
        messages.rev().find_map(Message::needs_response_after)
    }

    pub fn is_tool_result(&self) -> bool {
        self.role == Role::Tool
            || matches!(&self.content, Content::Parts(p) if p.iter().any(|p| part_type(p) == Some("tool_result")))
    }

    /// Every call id this message answers: its `tool_call_id` (role tool) and `tool_result` parts.
    pub fn answers(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.role == Role::Tool {
            if let Some(id) = &self.tool_call_id {
                out.push(id.clone());
            }
        }
        if let Content::Parts(parts) = &self.content {
            for p in parts.iter().filter(|p| part_type(p) == Some("tool_result")) {
                if let Some(id) = p.get("call_id").and_then(Value::as_str) {
                    out.push(id.to_string());
                }
            }
        }
        out
    }
}

pub fn validate_tool_call(call: &Map<String, Value>) -> Result<()> {
    for key in ["id", "name"] {
        match call.get(key) {
            Some(Value::String(_)) => {}
            Some(_) => {
                return Err(Error::Value(format!(
                    "a tool call's {key} must be a string"
                )))
            }
            None => return Err(Error::Value(format!("a tool call needs {key:?}"))),
        }
    }
    match call.get("arguments") {
        None | Some(Value::Null) | Some(Value::String(_)) | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(Error::Value(
            "a tool call's arguments must be a dict or a JSON string".into(),
        )),
    }
}
