//! The one reader of message dicts: what `Message.to_dict()` writes, or any subset of it with
//! a `role`. Files, `Message.from_dict` and the older layouts all read messages here, with one
//! set of checks (`Message::validate`) and one wording per rule.

use crate::error::{Error, Result};
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
            Some(t) => time::parse_iso(&t).map_err(|e| e.at("created_at"))?,
            None => time::now(),
        };
        let mut m = Message::new_with(
            Role::parse(&self.role).map_err(|e| e.at("role"))?,
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
    /// A wrong type is a `Type` error and a missing role a `Value` error, each naming its key;
    /// decoders turn them into located `Decode` errors.
    pub fn from_json(v: &Value) -> Result<Message> {
        if !v.is_object() {
            return Err(Error::Type("a message must be an object".into()));
        }
        let m: MessageIn = serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            let text = if path == "." {
                inner.clone()
            } else {
                format!("{path}: {inner}")
            };
            if inner.starts_with("missing field") {
                Error::Value(text)
            } else {
                Error::Type(text)
            }
        })?;
        m.build().map_err(|e| match e {
            // `build` locates its errors as decode errors; here they keep their kind.
            Error::Decode(m) => Error::Value(m),
            other => other,
        })
    }
}

/// A content value alone (the versionless layout keeps it apart from the message).
pub(crate) fn content_from_json(v: &Value) -> Result<Content> {
    let content = ContentIn::deserialize(v)
        .map_err(|e| Error::Type(e.to_string()))?
        .0;
    crate::message::check_parts(&content)?;
    Ok(content)
}
