//! Reading documents from JSON text with typed serde, in one pass over the input: the small
//! top-level fields become JSON values, `messages` (the v1 projection) stays a raw slice that
//! is parsed only by the layouts that need it, and each event is read with its `data` as a raw
//! slice. The events' data and messages are then checked and built in parallel, and replayed
//! in order.

use super::legacy;
use super::message_in::MessageIn;
use super::Loaded;
use crate::context::{Context, MessageHandle};
use crate::error::{decode, Error, Result};
use crate::event::{EventType, Op};
use crate::message::Message;
use crate::time;
use rayon::prelude::*;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use serde_path_to_error::{Path, Segment};
use std::borrow::Cow;
use std::fmt;

/// The top level of any layout: small fields as values, events read, messages raw.
pub(super) struct Top<'a> {
    pub fields: Map<String, Value>,
    events: Option<Vec<EventIn<'a>>>,
    pub messages: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object at the top level")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Top<'de>, A::Error> {
                let mut top = Top {
                    fields: Map::new(),
                    events: None,
                    messages: None,
                };
                while let Some(k) = m.next_key::<Key<'de>>()? {
                    match k.0.as_ref() {
                        "events" => top.events = Some(m.next_value()?),
                        "messages" => top.messages = Some(m.next_value()?),
                        _ => {
                            top.fields.insert(k.0.into_owned(), m.next_value()?);
                        }
                    }
                }
                Ok(top)
            }
        }
        d.deserialize_map(V)
    }
}

impl Top<'_> {
    /// The messages list as a value, for the layouts that read it (v1, versionless).
    pub fn fields_with_messages(&self) -> Result<Map<String, Value>> {
        let mut fields = self.fields.clone();
        if let Some(raw) = self.messages {
            let v: Value = serde_json::from_str(raw.get())
                .map_err(|e| Error::undecodable(e.to_string()).at_key("messages"))?;
            fields.insert("messages".into(), v);
        }
        Ok(fields)
    }
}

/// Parse JSON text and dispatch on its layout.
pub(super) fn load_str<H: MessageHandle>(text: &str, require_version: bool) -> Result<Loaded<H>> {
    let top: Top = located(text)?;
    let version = top.fields.get("version").cloned();
    let context = match &version {
        None if require_version => return decode("missing or invalid version field"),
        None => legacy::versionless(&top.fields_with_messages()?)?,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => match n.as_i64() {
            Some(1) => legacy::v1(&top.fields_with_messages()?)?,
            Some(2) if top.events.is_none() => legacy::v1_fallback(&top.fields_with_messages()?)?,
            Some(2) => v2(&top)?,
            _ => return decode(format!("unsupported version: {n}")),
        },
        Some(_) => return decode("missing or invalid version field"),
    };
    Ok(Loaded {
        context,
        runtime: super::runtime::runtime_fields(&top.fields, version.is_some())?,
        versioned: version.is_some(),
    })
}

// ---- version 2 ----------------------------------------------------------------------------

#[derive(Deserialize)]
pub(super) struct EventIn<'a> {
    seq: u64,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    time: Cow<'a, str>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
}

/// An event checked on its own, before it is replayed.
pub(super) struct Checked {
    pub kind: EventType,
    pub time: time::Micros,
    pub data: Map<String, Value>,
    pub op: Option<Op>,
    pub message: Option<Message>,
}

/// Deserialize a whole JSON text; a data error says where by its path (under the caller's,
/// which it adds as the error unwinds), a syntax error by line and column.
pub(super) fn located<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().clone();
        let inner = e.into_inner();
        if !inner.is_data() {
            return Error::undecodable(format!("not a valid JSON document: {inner}"));
        }
        at_path(
            Error::undecodable(strip_position(&inner.to_string())),
            &path,
        )
    })?;
    de.end()
        .map_err(|e| Error::undecodable(format!("not a valid JSON document: {e}")))?;
    Ok(value)
}

/// `err` found at the path serde reports.
pub(super) fn at_path(err: Error, path: &Path) -> Error {
    path.iter().rev().fold(err, |err, seg| match seg {
        Segment::Seq { index } => err.at_index(*index),
        Segment::Map { key } => err.at_key(key.as_str()),
        Segment::Enum { variant } => err.at_key(variant.as_str()),
        Segment::Unknown => err.at_key("?"),
    })
}

/// serde_json ends a data error with the line and column within the text being read, which
/// for an inner slice misleads; the path says where.
fn strip_position(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

fn v2<H: MessageHandle>(top: &Top) -> Result<Context<H>> {
    let mut ctx = legacy::header::<H>(&top.fields)?;
    let events = top.events.as_deref().unwrap_or_default();
    // Each event is checked and its message built on its own, on every core; only the replay
    // below depends on order. The first error by position is the one reported.
    let checked: Vec<Result<Checked>> = events
        .par_iter()
        .enumerate()
        .map(|(i, e)| check_event(i, e).map_err(|err| err.in_input().at_index(i).at_key("events")))
        .collect();
    for (i, c) in checked.into_iter().enumerate() {
        replay(&mut ctx, c?).map_err(|err| err.in_input().at_index(i).at_key("events"))?;
    }
    let len = ctx.len();
    ctx.set_anchors(legacy::anchors_or_default(
        top.fields.get("anchors"),
        "anchors",
        len,
    )?);
    ctx.set_bindings(legacy::string_map(&top.fields, "hook_bindings")?);
    Ok(ctx)
}

pub(super) fn check_event(i: usize, e: &EventIn) -> Result<Checked> {
    if e.seq != i as u64 {
        return Err(Error::undecodable(format!(
            "expected {i}, found {} (seqs must be 0, 1, 2, …)",
            e.seq
        ))
        .at_key("seq"));
    }
    let kind = EventType::parse(&e.kind).ok_or_else(|| {
        Error::undecodable(format!("unknown event type {:?}", e.kind)).at_key("type")
    })?;
    let time = time::parse_iso(&e.time).map_err(|err| err.at_key("time"))?;
    let raw = e.data.map_or("{}", RawValue::get);
    if !kind.is_surface() && kind != EventType::Remove {
        let data: Option<Map<String, Value>> = located(raw).map_err(|e| e.at_key("data"))?;
        let data = data.unwrap_or_default();
        if kind == EventType::Materialize {
            match data.get("bindings") {
                Some(Value::Object(b)) if b.values().all(Value::is_string) => {}
                _ => {
                    return Err(Error::undecodable("expected an object of hook name → hash")
                        .at_keys(&["data", "bindings"]))
                }
            }
        }
        return Ok(Checked {
            kind,
            time,
            data,
            op: None,
            message: None,
        });
    }
    let SurfaceIn {
        op,
        position,
        first,
        last,
        message,
        rest,
    } = located(raw).map_err(|e| e.at_key("data"))?;
    let range = || -> Result<(usize, usize)> {
        let (a, b) = (index(first, "first")?, index(last, "last")?);
        if a > b {
            return Err(Error::undecodable(format!("range {a}..{b} is descending")).at_key("data"));
        }
        Ok((a, b))
    };
    let op = match (kind, op.as_deref()) {
        (EventType::Remove, Some("remove")) => {
            let (a, b) = range()?;
            if message.is_some() {
                return Err(Error::undecodable("a remove event carries no message")
                    .at_keys(&["data", "message"]));
            }
            return Ok(Checked {
                kind,
                time,
                data: rest,
                op: Some(Op::Remove(a, b)),
                message: None,
            });
        }
        (EventType::Remove, _) => {
            return Err(Error::undecodable("must be \"remove\"").at_keys(&["data", "op"]))
        }
        (_, Some("insert")) => Op::Insert(index(position, "position")?),
        (_, Some("replace")) => {
            let (a, b) = range()?;
            Op::Replace(a, b)
        }
        _ => {
            return Err(
                Error::undecodable("must be \"insert\" or \"replace\"").at_keys(&["data", "op"])
            )
        }
    };
    let msg = message
        .ok_or_else(|| Error::undecodable("missing"))
        .and_then(MessageIn::build)
        .map_err(|err| err.in_input().at_keys(&["data", "message"]))?;
    if EventType::for_role(msg.role) != kind {
        return Err(Error::undecodable(format!(
            "{} does not match a {} message",
            kind.name(),
            msg.role.as_str()
        ))
        .at_key("type"));
    }
    if msg.created_at != time {
        return Err(Error::undecodable(format!(
            "{} differs from its message's created_at {}",
            time::to_iso(time),
            time::to_iso(msg.created_at)
        ))
        .at_key("time"));
    }
    Ok(Checked {
        kind,
        time,
        data: rest,
        op: Some(op),
        message: Some(msg),
    })
}

fn index(v: Option<u64>, key: &str) -> Result<usize> {
    v.map(|x| x as usize)
        .ok_or_else(|| Error::undecodable("must be a non-negative integer").at_keys(&["data", key]))
}

fn replay<H: MessageHandle>(ctx: &mut Context<H>, c: Checked) -> Result<()> {
    let message = c.message.map(H::wrap);
    ctx.apply(c.kind, c.time, c.data, c.op, message)
        .map_err(crate::log::replay_error)?;
    Ok(())
}

/// A surface or `remove` event's data: what it does, the message, and the other keys.
struct SurfaceIn<'a> {
    op: Option<Cow<'a, str>>,
    position: Option<u64>,
    first: Option<u64>,
    last: Option<u64>,
    message: Option<MessageIn<'a>>,
    rest: Map<String, Value>,
}

impl<'de> Deserialize<'de> for SurfaceIn<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SurfaceIn<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<SurfaceIn<'de>, A::Error> {
                let mut s = SurfaceIn {
                    op: None,
                    position: None,
                    first: None,
                    last: None,
                    message: None,
                    rest: Map::new(),
                };
                while let Some(k) = m.next_key::<Key<'de>>()? {
                    match k.0.as_ref() {
                        "op" => s.op = Some(m.next_value()?),
                        "position" => s.position = Some(m.next_value()?),
                        "first" => s.first = Some(m.next_value()?),
                        "last" => s.last = Some(m.next_value()?),
                        "message" => s.message = Some(m.next_value()?),
                        _ => {
                            s.rest.insert(k.0.into_owned(), m.next_value()?);
                        }
                    }
                }
                Ok(s)
            }
        }
        d.deserialize_map(V)
    }
}

/// An object key, borrowed from the input unless it holds escapes.
pub(crate) struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(
                self,
                s: &'de str,
            ) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}
