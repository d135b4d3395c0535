//! What an importer keeps so that the exporter of the same format gives the request back
//! byte-exact: `metadata["interop"] = {"format": F, "extra": {...}, "order": [...]}` on a
//! message — the wire keys ctxfold has no field for, and the wire key order when it is not
//! the exporter's own. Parts keep their unknown keys in place (see each format's part maps).
//! The frameworks' importers (LangChain, Pydantic AI) keep theirs in the same shape, built
//! here too ([`metadata`]); a whole request's other keyword arguments go into the data of a
//! `request_header` event ([`request_header`]).

use super::out::{Obj, J};
use super::{err, Format};
use crate::error::{Result, Trail};
use crate::message::{part_type, Message, Part};
use serde_json::{Map, Value};

pub const INTEROP: &str = "interop";
/// The key of `metadata["interop"]` naming the format the message came from.
const FORMAT: &str = "format";
/// The key of a `request_header` event's data holding the request's other keyword arguments.
const REQUEST: &str = "request";

/// `metadata` holding `{"interop": {"format": format, ...kept}}`: what the importer of the
/// format (or framework) named `format` kept of a message, `kept` in its order.
pub fn metadata(format: &str, kept: Map<String, Value>) -> Map<String, Value> {
    let mut i = Map::with_capacity(kept.len() + 1);
    i.insert(FORMAT.into(), Value::String(format.into()));
    i.extend(kept);
    let mut md = Map::new();
    md.insert(INTEROP.into(), Value::Object(i));
    md
}

/// The data of the `request_header` event a whole request of `f` becomes a context with:
/// `{"format": f, "request": request}`, `request` its keyword arguments besides the messages
/// and tools.
pub fn request_header(f: Format, request: Map<String, Value>) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert(FORMAT.into(), Value::String(f.name().into()));
    d.insert(REQUEST.into(), Value::Object(request));
    d
}

fn interop(m: &Message) -> Option<&Map<String, Value>> {
    m.metadata.get(INTEROP).and_then(Value::as_object)
}

/// The format a message was imported from.
pub fn origin(m: &Message) -> Option<&str> {
    interop(m)
        .and_then(|i| i.get(FORMAT))
        .and_then(Value::as_str)
}

pub fn from(m: &Message, f: Format) -> bool {
    origin(m) == Some(f.name())
}

/// An interop field of a message imported from `f` (`None` for any other message).
pub fn field<'a>(m: &'a Message, f: Format, key: &str) -> Option<&'a Value> {
    named_field(m, f.name(), key)
}

/// An interop field of a message imported from the format named `format` (the frameworks'
/// too: `"langchain"`, `"pydantic_ai"`).
pub fn named_field<'a>(m: &'a Message, format: &str, key: &str) -> Option<&'a Value> {
    of(m, format).and_then(|i| i.get(key))
}

/// What the importer of the format named `format` kept on a message (`None` for a message
/// from anywhere else).
pub fn of<'a>(m: &'a Message, format: &str) -> Option<&'a Map<String, Value>> {
    interop(m).filter(|i| i.get(FORMAT).and_then(Value::as_str) == Some(format))
}

/// The wire object of a message: `entries` as the exporter builds them, then — for a message
/// that came from this format — its extra keys, in the wire order it came in. Keys the wire
/// object did not have are left out when they are null.
pub fn finish<'a>(mut o: Obj<'a>, m: &'a Message, f: Format) -> J<'a> {
    if let Some(Value::Object(extra)) = field(m, f, "extra") {
        for (k, v) in extra {
            if !o.has(k) {
                o.push(k.as_str(), J::Val(v));
            }
        }
    }
    let o = match field(m, f, "order") {
        Some(Value::Array(order)) => reorder(o, order).of(m),
        _ => o.of(m),
    };
    match field(m, f, "shape") {
        Some(shape) => super::order::reorder_deep(o, shape),
        None => o,
    }
}

pub fn reorder<'a>(o: Obj<'a>, order: &[Value]) -> Obj<'a> {
    let mut rest: Vec<Option<(super::out::Key<'a>, J<'a>)>> = o.0.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rest.len());
    for k in order.iter().filter_map(Value::as_str) {
        if let Some(slot) = rest
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(|(key, _)| key == k))
        {
            out.extend(slot.take());
        }
    }
    out.extend(rest.into_iter().flatten().filter(|(_, v)| !v.is_null()));
    Obj(out)
}

/// Builds `metadata["interop"]` for an imported wire object.
pub struct Keep {
    format: Format,
    extra: Map<String, Value>,
    /// The wire keys, in order.
    keys: Vec<String>,
    more: Vec<(String, Value)>,
}

impl Keep {
    pub fn new(format: Format, wire: &Map<String, Value>) -> Keep {
        Keep {
            format,
            extra: Map::new(),
            keys: wire.keys().cloned().collect(),
            more: Vec::new(),
        }
    }
    pub fn extra(&mut self, k: &str, v: &Value) {
        self.extra.insert(k.to_string(), v.clone());
    }
    pub fn set(&mut self, k: &str, v: Value) {
        self.more.push((k.to_string(), v));
    }
    /// The metadata, given the keys the exporter writes for this message in its order
    /// (`written`, the wire keys it maps); the wire order is kept when it differs.
    pub fn metadata(self, written: &[&str]) -> Map<String, Value> {
        let expected: Vec<String> = written
            .iter()
            .map(|k| k.to_string())
            .chain(self.extra.keys().cloned())
            .collect();
        let mut kept: Map<String, Value> = self.more.into_iter().collect();
        if !self.extra.is_empty() {
            kept.insert("extra".into(), Value::Object(self.extra));
        }
        if expected != self.keys {
            kept.insert(
                "order".into(),
                Value::Array(self.keys.into_iter().map(Value::String).collect()),
            );
        }
        metadata(self.format.name(), kept)
    }
}

// ---- reading wire JSON ------------------------------------------------------------------

pub fn object<'v>(v: &'v Value, place: &Trail<'_>) -> Result<&'v Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| err(place, format!("expected an object, got {}", kind(v))))
}

pub fn array<'v>(v: &'v Value, place: &Trail<'_>) -> Result<&'v Vec<Value>> {
    v.as_array()
        .ok_or_else(|| err(place, format!("expected a list, got {}", kind(v))))
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A required string field.
pub fn req_str<'v>(o: &'v Map<String, Value>, key: &str, place: &Trail<'_>) -> Result<&'v str> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(err(place, format!("missing {key:?}"))),
        Some(v) => Err(err(
            place,
            format!("{key:?} must be a string, got {}", kind(v)),
        )),
    }
}

/// An optional string field (null reads as missing).
pub fn opt_str<'v>(
    o: &'v Map<String, Value>,
    key: &str,
    place: &Trail<'_>,
) -> Result<Option<&'v str>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(err(
            place,
            format!("{key:?} must be a string, got {}", kind(v)),
        )),
    }
}

/// A part as ctxfold keeps it: the wire block with its `type` (and renamed keys) changed in
/// place, every other key where it was.
pub fn renamed(wire: &Map<String, Value>, ty: &str, renames: &[(&str, &str)]) -> Part {
    let mut p = Map::with_capacity(wire.len());
    for (k, v) in wire {
        if k == "type" {
            p.insert("type".into(), Value::String(ty.into()));
        } else if let Some((_, to)) = renames.iter().find(|(from, _)| from == k) {
            p.insert((*to).into(), v.clone());
        } else {
            p.insert(k.clone(), v.clone());
        }
    }
    p
}

/// A ctxfold part as a wire block: `type` and renamed keys changed in place; keys in `drop`
/// and keys not in `keep` (unless `all`: the part came from this format) left out.
pub fn block<'a>(
    p: &'a Part,
    ty: &'a str,
    renames: &[(&str, &'static str)],
    keep: &[&str],
    all: bool,
) -> Obj<'a> {
    let mut o = Obj::default();
    for (k, v) in p {
        if k == "type" {
            o.push("type", type_name(ty));
        } else if k == "provider" {
            continue;
        } else if let Some((_, to)) = renames.iter().find(|(from, _)| from == k) {
            o.push(*to, J::Val(v));
        } else if all || keep.contains(&k.as_str()) {
            o.push(k.as_str(), J::Val(v));
        }
    }
    if !o.has("type") {
        o.0.insert(0, ("type".into(), type_name(ty)));
    }
    o
}

/// A block type as a constant when it is one the exporters write (shared in Python).
fn type_name(ty: &str) -> J<'_> {
    const NAMES: [&str; 12] = [
        "text",
        "input_text",
        "output_text",
        "image",
        "document",
        "thinking",
        "redacted_thinking",
        "reasoning",
        "refusal",
        "tool_result",
        "tool_use",
        "file",
    ];
    match NAMES.iter().find(|n| **n == ty) {
        Some(n) => J::Lit(n),
        None => J::Str(ty),
    }
}

/// Reasoning goes only back to its maker: a thinking part made by `f`'s importer.
pub fn own_reasoning(p: &Part, f: Format) -> bool {
    part_type(p) == Some("thinking") && p.get("provider").and_then(Value::as_str) == Some(f.name())
}

/// The text of a part, when it has a string one.
pub fn text_of(p: &Part) -> Option<&str> {
    crate::message::small_get(p, "text").and_then(Value::as_str)
}

/// A data URL `data:<media type>;base64,<data>` split, when it is exactly that.
pub fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mt, data) = rest.split_once(";base64,")?;
    if mt.is_empty() || mt.contains(';') || mt.contains(',') {
        return None;
    }
    Some((mt, data))
}

/// A media source (`{"type": "base64", "media_type", "data"}`, `{"type": "url", "url"}`) as
/// a URL string, data URLs included.
pub fn source_url(source: &Value) -> Option<String> {
    let s = source.as_object()?;
    match s.get("type").and_then(Value::as_str)? {
        "base64" => Some(format!(
            "data:{};base64,{}",
            s.get("media_type")?.as_str()?,
            s.get("data")?.as_str()?
        )),
        "url" => s.get("url")?.as_str().map(str::to_string),
        _ => None,
    }
}

/// A URL (data URL or not) as a ctxfold media source.
pub fn url_source(url: &str) -> Value {
    let mut s = Map::new();
    match split_data_url(url) {
        Some((mt, data)) => {
            s.insert("type".into(), Value::String("base64".into()));
            s.insert("media_type".into(), Value::String(mt.into()));
            s.insert("data".into(), Value::String(data.into()));
        }
        None => {
            s.insert("type".into(), Value::String("url".into()));
            s.insert("url".into(), Value::String(url.into()));
        }
    }
    Value::Object(s)
}

/// Arguments as the exact string they were given, or a dict as compact JSON (written out
/// from the value by whoever writes the tree: see [`J::Json`]).
pub fn arguments(v: Option<&Value>) -> J<'_> {
    match v {
        Some(s @ Value::String(_)) => J::Val(s),
        None | Some(Value::Null) => J::Lit("{}"),
        Some(other) => J::Json(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Content, Role};
    use serde_json::json;

    #[test]
    fn kept_fields_follow_the_format_and_are_read_back() {
        let kept = json!({"class": "ChatMessage", "role": "critic", "extra": {"k": 1}});
        let md = metadata("langchain", kept.as_object().unwrap().clone());
        assert_eq!(
            serde_json::to_string(&md).unwrap(),
            r#"{"interop":{"format":"langchain","class":"ChatMessage","role":"critic","extra":{"k":1}}}"#
        );
        let mut m = Message::new(Role::User, Content::Text("x".into()));
        m.metadata = md;
        assert_eq!(origin(&m), Some("langchain"));
        assert_eq!(named_field(&m, "langchain", "role"), Some(&json!("critic")));
        assert!(of(&m, "pydantic_ai").is_none());
    }

    #[test]
    fn a_request_header_names_its_format() {
        let req = json!({"model": "m", "temperature": 0.5});
        let d = request_header(Format::Anthropic, req.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(d),
            json!({"format": "anthropic", "request": {"model": "m", "temperature": 0.5}})
        );
    }
}
