//! The version 2 document written straight from the live context: `Serialize` impls over
//! borrowed views, so saving streams bytes without building a JSON tree first.

use crate::context::{Context, MessageHandle};
use crate::event::{Event, Op};
use crate::message::{Content, Kind, Message};
use crate::time::{self, Micros};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

/// A time as ISO-8601 with a `Z`, formatted without allocating in the common case.
pub struct Iso(pub Micros);

impl Serialize for Iso {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match time::iso_bytes(self.0) {
            Some(b) => s.serialize_str(std::str::from_utf8(&b).unwrap_or_default()),
            None => s.serialize_str(&time::to_iso(self.0)),
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::None => s.serialize_unit(),
            Content::Text(t) => s.serialize_str(t),
            Content::Parts(parts) => parts.serialize(s),
        }
    }
}

/// Which keys of a message are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Every key, as `Message.to_dict()` gives it.
    Full,
    /// Without the keys that hold their defaults: what events carry in files.
    Compact,
    /// What a version 1 reader reads: role, content, name, tool_calls, tool_call_id, metadata.
    V1,
}

pub struct MessageOut<'a>(pub &'a Message, pub Shape);

impl Serialize for MessageOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (m, shape) = (self.0, self.1);
        let full = shape == Shape::Full;
        let v1 = shape == Shape::V1;
        let mut o = s.serialize_map(None)?;
        if !v1 {
            o.serialize_entry("id", &m.id)?;
        }
        o.serialize_entry("role", m.role.as_str())?;
        o.serialize_entry("content", &m.content)?;
        if full || v1 || m.name.is_some() {
            o.serialize_entry("name", &m.name)?;
        }
        if full || v1 || !m.tool_calls.is_empty() {
            o.serialize_entry("tool_calls", &m.tool_calls)?;
        }
        if full || v1 || m.tool_call_id.is_some() {
            o.serialize_entry("tool_call_id", &m.tool_call_id)?;
        }
        if full || v1 || !m.metadata.is_empty() {
            o.serialize_entry("metadata", &m.metadata)?;
        }
        if !v1 {
            o.serialize_entry("created_at", &Iso(m.created_at))?;
            if full || !m.hook_ids.is_empty() {
                o.serialize_entry("hook_ids", &m.hook_ids)?;
            }
            if full || m.kind != Kind::Plain {
                o.serialize_entry("_type", m.kind.type_name())?;
            }
        }
        o.end()
    }
}

/// An event's `data`: what it does to the transcript, its message, then the rest.
pub struct DataOut<'a, H>(pub &'a Event<H>, pub Shape);

impl<H: MessageHandle> Serialize for DataOut<'_, H> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut o = s.serialize_map(None)?;
        match e.op {
            Some(Op::Insert(p)) => {
                o.serialize_entry("op", "insert")?;
                o.serialize_entry("position", &p)?;
            }
            Some(Op::Replace(a, b)) | Some(Op::Remove(a, b)) => {
                let name = if matches!(e.op, Some(Op::Remove(..))) {
                    "remove"
                } else {
                    "replace"
                };
                o.serialize_entry("op", name)?;
                o.serialize_entry("first", &a)?;
                o.serialize_entry("last", &b)?;
            }
            None => {}
        }
        if let Some(h) = &e.message {
            o.serialize_entry("message", &MessageOut(h.message(), self.1))?;
        }
        for (k, v) in e.data.iter() {
            o.serialize_entry(k, v)?;
        }
        o.end()
    }
}

/// One event as the file's `events` list holds it (a store's rows hold the same text).
pub struct EventOut<'a, H>(pub &'a Event<H>);

impl<H: MessageHandle> Serialize for EventOut<'_, H> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut o = s.serialize_map(Some(4))?;
        o.serialize_entry("seq", &e.seq)?;
        o.serialize_entry("type", e.kind.name())?;
        o.serialize_entry("time", &Iso(e.time))?;
        o.serialize_entry("data", &DataOut(e, Shape::Compact))?;
        o.end()
    }
}

/// Serializes a sequence from an iterator made on demand (the document is borrowed).
struct SeqOf<F>(F);

impl<F, I, T> Serialize for SeqOf<F>
where
    F: Fn() -> I,
    I: Iterator<Item = T>,
    T: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for x in (self.0)() {
            seq.serialize_element(&x)?;
        }
        seq.end()
    }
}

/// The head of a context's document and of its stored state, in this order: the version,
/// the context's own fields, the runtime fields (`runtime`, already redacted) and anchors.
pub(super) fn header<M: SerializeMap, H: MessageHandle>(
    o: &mut M,
    c: &Context<H>,
    runtime: &Map<String, Value>,
) -> Result<(), M::Error> {
    o.serialize_entry("version", &super::VERSION)?;
    o.serialize_entry("id", c.id())?;
    o.serialize_entry("created_at", &Iso(c.created_at()))?;
    o.serialize_entry("origin_context_id", &c.origin_context_id())?;
    o.serialize_entry("children", &c.children())?;
    for (k, v) in runtime {
        o.serialize_entry(k, v)?;
    }
    o.serialize_entry("anchors", c.anchors().list())
}

/// The version 2 document of a context; `runtime` holds the Python-owned fields, already
/// redacted. Build it with [`Context::document`], which resolves dynamic messages first.
pub struct Document<'a, H> {
    ctx: &'a Context<H>,
    runtime: &'a Map<String, Value>,
}

impl<H: MessageHandle> Context<H> {
    /// The version 2 document, ready to be written by any serde serializer.
    pub fn document<'a>(&'a mut self, runtime: &'a Map<String, Value>) -> Document<'a, H> {
        // The projection shows resolved dynamic messages: fill the cache, then only borrow.
        if self.hooked().any() {
            self.resolve_fold();
        }
        Document { ctx: self, runtime }
    }
}

impl<H: MessageHandle> Serialize for Document<'_, H> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.ctx;
        let mut o = s.serialize_map(None)?;
        header(&mut o, c, self.runtime)?;
        o.serialize_entry("content_map", &c.content_map())?;
        o.serialize_entry("hook_bindings", &c.bindings())?;
        o.serialize_entry("events", &SeqOf(|| c.events().iter().map(EventOut)))?;
        // The projection for version 1 readers: resolved, without the overlay.
        o.serialize_entry(
            "messages",
            &SeqOf(|| {
                c.transcript()
                    .iter()
                    .map(|q| MessageOut(c.shown(q).message(), Shape::V1))
            }),
        )?;
        o.end()
    }
}
