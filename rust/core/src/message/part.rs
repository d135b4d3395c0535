//! Content parts: a part is the JSON object it was given, `type` first, every key kept in order
//! (providers reject reasoning that comes back altered). One rule: a part has a string `type`.

use crate::error::{Error, Result};
use serde_json::{Map, Value};

pub type Part = Map<String, Value>;

/// Part types that carry media: they add a flat 85 tokens and no text. An image counts the
/// same however it is spelled: ctxfold's `image` (Anthropic's block too), Chat's `image_url`
/// and Responses' `input_image`, so a part imported as it came costs what its converted twin
/// costs.
pub const MEDIA_TYPES: [&str; 7] = [
    "image",
    "image_url",
    "input_image",
    "audio",
    "video",
    "file",
    "pdf",
];

/// Whether a part of type `t` carries media (and so costs a flat 85 tokens and no text).
pub fn is_media_type(t: &str) -> bool {
    MEDIA_TYPES.contains(&t)
}

const NEEDS_TYPE: &str = "a part needs a string \"type\"";

/// A part of type `kind`: the named fields that are given, in order, then the extra keys
/// (which may override them, as keyword arguments do in Python).
pub fn new_part<'a>(
    kind: &str,
    fields: impl IntoIterator<Item = (&'a str, Option<Value>)>,
    extra: Map<String, Value>,
) -> Part {
    let mut p = Map::new();
    p.insert("type".into(), Value::String(kind.into()));
    for (k, v) in fields {
        if let Some(v) = v {
            p.insert(k.into(), v);
        }
    }
    p.extend(extra);
    p
}

/// A part from a whole JSON object (`Part.from_dict`).
pub fn part_from_map(p: Map<String, Value>) -> Result<Part> {
    if part_type(&p).is_none() {
        return Err(Error::Value(NEEDS_TYPE.into()));
    }
    Ok(p)
}

/// Every part of a parts list has a string `type`.
pub fn check_parts(content: &super::Content) -> Result<()> {
    if let super::Content::Parts(parts) = content {
        if let Some(i) = parts.iter().position(|p| part_type(p).is_none()) {
            return Err(Error::Value(format!("content[{i}]: {NEEDS_TYPE}")));
        }
    }
    Ok(())
}

pub fn part_type(p: &Part) -> Option<&str> {
    small_get(p, "type").and_then(Value::as_str)
}

/// `o.get(key)` for the maps parts are (a handful of keys, `type` first): a scan of the keys
/// costs less than hashing the key, which exporters would do for every part they read.
pub fn small_get<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if o.len() > 4 {
        return o.get(key);
    }
    o.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

pub fn text_part(t: &str) -> Part {
    let mut p = Map::new();
    p.insert("type".into(), Value::String("text".into()));
    p.insert("text".into(), Value::String(t.into()));
    p
}
