//! The keyword fields a message is built or changed with (`Message(role, content, name=…)`,
//! `Message.user(text, id=…)`, `m.replace(**changes)`): each given field replaces the
//! message's, then the result is validated once, so every way of making a message obeys the
//! same rules with the same words.

use super::{Content, Kind, Message, Role};
use crate::error::Result;
use crate::json::compact_json;
use crate::time::Micros;
use serde_json::{Map, Value};

/// What a caller gave; `None` leaves the field as it is.
#[derive(Debug, Default)]
pub struct Fields {
    pub role: Option<Role>,
    pub content: Option<Content>,
    pub name: Option<Option<String>>,
    pub tool_calls: Option<Vec<Map<String, Value>>>,
    pub tool_call_id: Option<Option<String>>,
    pub metadata: Option<Map<String, Value>>,
    pub created_at: Option<Micros>,
    pub id: Option<String>,
    pub hook_ids: Option<Vec<String>>,
}

impl Fields {
    fn apply(self, m: &mut Message) {
        let Fields {
            role,
            content,
            name,
            tool_calls,
            tool_call_id,
            metadata,
            created_at,
            id,
            hook_ids,
        } = self;
        set(&mut m.role, role);
        set(&mut m.content, content);
        set(&mut m.name, name);
        set(&mut m.tool_calls, tool_calls);
        set(&mut m.tool_call_id, tool_call_id);
        set(&mut m.metadata, metadata);
        set(&mut m.created_at, created_at);
        set(&mut m.id, id);
        set(&mut m.hook_ids, hook_ids);
    }
}

fn set<T>(field: &mut T, given: Option<T>) {
    if let Some(v) = given {
        *field = v;
    }
}

impl Message {
    /// A new message of `kind` (fresh id, now) with the given fields, validated.
    pub fn build(role: Role, content: Content, kind: Kind, fields: Fields) -> Result<Message> {
        let mut m = Message::new(role, content);
        m.kind = kind;
        fields.apply(&mut m);
        m.validate()?;
        Ok(m)
    }

    /// A copy with some fields changed (`Message.replace`), validated.
    pub fn with(&self, fields: Fields) -> Result<Message> {
        let mut m = self.clone();
        fields.apply(&mut m);
        m.validate()?;
        Ok(m)
    }

    /// A tool result (`Message.tool`): a str result is the content as it is; any other JSON
    /// value is stored as its compact JSON, the text a model is shown.
    pub fn tool_result(tool_call_id: String, result: Value, fields: Fields) -> Result<Message> {
        let text = match result {
            Value::String(s) => s,
            other => compact_json(&other),
        };
        let mut m = Message::build(Role::Tool, Content::Text(text), Kind::Plain, fields)?;
        m.tool_call_id = Some(tool_call_id);
        Ok(m)
    }
}
