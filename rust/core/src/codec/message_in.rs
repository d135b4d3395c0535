//! The one reader of message dicts: what `Message.to_dict()` writes, or any subset of it with
//! a `role`. Files, `Message.from_dict` and the older layouts all read messages here, with one
//! set of checks (`Message::validate`) and one wording per rule.

use super::read::at_path;
use crate::error::{Error, ErrorKind, Result};
use crate::message::{Content, Kind, Message, Role};
use crate::time;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// A message as files hold it (`Message.to_dict()` or any subset with a role).
#[derive(Deserialize)]
pub(crate) struct MessageIn<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(default)]
    content: ContentIn,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Map<String, Value>>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default, borrow)]
    created_at: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    hook_ids: Option<Vec<String>>,
    #[serde(default, rename = "_type", borrow)]
    kind: Option<Cow<'a, str>>,
}

impl MessageIn<'_> {
    pub fn build(self) -> Result<Message> {
        let created_at = match self.created_at {
            Some(t) => time::parse_iso(&t).map_err(|e| e.at_key("created_at"))?,
            None => time::now(),
        };
        let mut m = Message::new_with(
            Role::parse(&self.role).map_err(|e| e.at_key("role"))?,
            self.content.0,
            self.id,
            created_at,
        );
        m.name = self.name;
        m.tool_calls = self.tool_calls.unwrap_or_default();
        m.tool_call_id = self.tool_call_id;
        m.metadata = self.metadata.unwrap_or_default();
        m.hook_ids = self.hook_ids.unwrap_or_default();
        m.kind = self.kind.map_or(Kind::Plain, |k| Kind::from_type_name(&k));
        m.validate()?;
        Ok(m)
    }
}

#[derive(Default)]
struct ContentIn(Content);

impl<'de> Deserialize<'de> for ContentIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ContentIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, a list of parts or null")
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<ContentIn, E> {
                Ok(ContentIn(Content::None))
            }
            fn visit_none<E: de::Error>(self) -> std::result::Result<ContentIn, E> {
                Ok(ContentIn(Content::None))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<ContentIn, E> {
                Ok(ContentIn(Content::Text(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> std::result::Result<ContentIn, E> {
                Ok(ContentIn(Content::Text(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<ContentIn, A::Error> {
                let mut parts = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(p) = a.next_element::<Map<String, Value>>()? {
                    parts.push(p);
                }
                Ok(ContentIn(Content::Parts(parts)))
            }
        }
        d.deserialize_any(V)
    }
}

impl Message {
    /// Read a message dict given as a JSON value (`Message.from_dict`, the older layouts).
    /// A wrong type is a `WrongKind` error and a missing role or a bad value a `BadArgument`
    /// error, each at its key; decoders make them undecodable input where they read them.
    pub fn from_json(v: &Value) -> Result<Message> {
        if !v.is_object() {
            return Err(Error::wrong_kind("a message must be an object"));
        }
        let m: MessageIn = serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().clone();
            let inner = e.into_inner().to_string();
            let err = if inner.starts_with("missing field") {
                Error::bad_argument(inner)
            } else {
                Error::wrong_kind(inner)
            };
            at_path(err, &path)
        })?;
        m.build().map_err(|e| match e.kind() {
            // A bad time is a bad argument here, as every other bad value.
            ErrorKind::Undecodable => e.with_kind(ErrorKind::BadArgument),
            _ => e,
        })
    }
}

/// A content value alone (the versionless layout keeps it apart from the message).
pub(crate) fn content_from_json(v: &Value) -> Result<Content> {
    let content = ContentIn::deserialize(v)
        .map_err(|e| Error::wrong_kind(e.to_string()).at_key("content"))?
        .0;
    crate::message::check_parts(&content)?;
    Ok(content)
}
