//! Readers for the layouts that hold a flat message list: version 1, a version 2 document
//! without events, and the Python seed's versionless layout. These are rare and small next to
//! version 2 files, so they work on JSON values. Also the header fields every layout shares.

use super::message_in::content_from_json;
use crate::anchors::Anchors;
use crate::context::{Context, MessageHandle, Seed};
use crate::error::{Error, Result};
use crate::message::{Content, Kind, Message};
use crate::time;
use serde_json::{Map, Value};

fn get_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::undecodable("expected a string").at_key(key)),
    }
}

pub(super) fn string_map(
    obj: &Map<String, Value>,
    key: &str,
) -> Result<indexmap::IndexMap<String, String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Default::default()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(Error::undecodable("expected a string").at_keys(&[key, k])),
            })
            .collect(),
        Some(_) => Err(Error::undecodable("expected an object").at_key(key)),
    }
}

pub(super) fn header<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let id = get_str(obj, "id")?.map_or_else(crate::message::new_id, str::to_string);
    let created_at = match get_str(obj, "created_at")? {
        Some(t) => time::parse_iso(t).map_err(|e| e.at_key("created_at"))?,
        None => time::now(),
    };
    let mut ctx = Context::new(id, created_at);
    let origin = get_str(obj, "origin_context_id")?.map(str::to_string);
    let children = match obj.get("children") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, c)| {
                c.as_str().map(str::to_string).ok_or_else(|| {
                    Error::undecodable("expected a string")
                        .at_index(i)
                        .at_key("children")
                })
            })
            .collect::<Result<_>>()?,
        Some(_) => return Err(Error::undecodable("expected a list").at_key("children")),
    };
    ctx.set_lineage(origin, children);
    ctx.set_content_map(string_map(obj, "content_map")?);
    Ok(ctx)
}

fn anchors_from(v: Option<&Value>, key: &str, len: usize) -> Result<Option<Anchors>> {
    let arr = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(Error::undecodable("expected a list").at_key(key)),
    };
    let mut list = Vec::with_capacity(arr.len());
    for (i, a) in arr.iter().enumerate() {
        match a.as_array().map(Vec::as_slice) {
            Some([Value::String(n), Value::Number(x)]) if x.as_u64().is_some() => {
                list.push((n.clone(), x.as_u64().unwrap_or(0) as usize))
            }
            _ => {
                return Err(Error::undecodable("expected [name, non-negative index]")
                    .at_index(i)
                    .at_key(key))
            }
        }
    }
    let anchors = Anchors::from_list(list);
    anchors
        .validate(len)
        .map_err(|e| e.in_input().at_key(key))?;
    Ok(Some(anchors))
}

/// The anchors found under `key`, or the defaults: everything is a message.
/// The anchors a document names, or the defaults. A document without the `messages` anchor
/// gets it back at the end of the transcript, so that what loads can always be appended to.
pub(super) fn anchors_or_default(v: Option<&Value>, key: &str, len: usize) -> Result<Anchors> {
    let mut anchors = anchors_from(v, key, len)?.unwrap_or_else(|| {
        Anchors::from_list(vec![
            ("system_prompt".into(), 0),
            ("tools".into(), 0),
            ("messages".into(), len),
        ])
    });
    if anchors.get("messages").is_none() {
        anchors.add("messages", len, len, true)?;
    }
    Ok(anchors)
}

/// Each entry of `messages` read by `read`; an error says which entry.
fn read_messages(
    obj: &Map<String, Value>,
    read: impl Fn(&Value) -> Result<Message>,
) -> Result<Vec<Message>> {
    let list: &[Value] = match obj.get("messages") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(_) => return Err(Error::undecodable("expected a list").at_key("messages")),
    };
    list.iter()
        .enumerate()
        .map(|(i, m)| read(m).map_err(|e| e.in_input().at_index(i).at_key("messages")))
        .collect()
}

/// Seed a log from flat messages, as `append` at `messages` would.
fn seeded<H: MessageHandle>(
    obj: &Map<String, Value>,
    messages: Vec<Message>,
) -> Result<Context<H>> {
    let mut ctx = header::<H>(obj)?;
    for m in messages {
        ctx.append(H::wrap(m), "messages", None)?;
    }
    Ok(ctx)
}

/// Version 1: role, content, tool_calls, tool_call_id, name and metadata. v1 has no times and
/// no ids of its own worth trusting: each message gets the restore time and a fresh id.
pub(super) fn v1<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let restored = time::now();
    let messages = read_messages(obj, |m| {
        let o = m
            .as_object()
            .ok_or_else(|| Error::undecodable("expected an object"))?;
        let only: Map<String, Value> = [
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
            "metadata",
        ]
        .into_iter()
        .filter_map(|k| o.get(k).map(|v| (k.to_string(), v.clone())))
        .collect();
        let mut msg = Message::from_json(&Value::Object(only))?;
        msg.created_at = restored;
        Ok(msg)
    })?;
    seeded(obj, messages)
}

/// A version 2 document without events: seed from its messages, keeping their times.
pub(super) fn v1_fallback<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    seeded(obj, read_messages(obj, Message::from_json)?)
}

/// The Python seed's layout: part lists, `_type`, `_hook_ids`, `creation_timestamp`, …
pub(super) fn versionless<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let messages = read_messages(obj, seed_message)?;
    let mut ctx = header::<H>(obj)?;
    ctx.seed_in_order(messages.into_iter().map(|m| Seed::of(H::wrap(m))).collect());
    ctx.set_anchors(anchors_or_default(
        obj.get("anchor_points"),
        "anchor_points",
        ctx.len(),
    )?);
    Ok(ctx)
}

fn seed_message(v: &Value) -> Result<Message> {
    let o = v
        .as_object()
        .ok_or_else(|| Error::undecodable("expected an object"))?;
    let mut std_form = Map::new();
    for k in [
        "role",
        "name",
        "tool_calls",
        "tool_call_id",
        "metadata",
        "id",
        "_type",
    ] {
        if let Some(x) = o.get(k) {
            std_form.insert(k.into(), x.clone());
        }
    }
    if let Some(h) = o.get("_hook_ids") {
        std_form.insert("hook_ids".into(), h.clone());
    }
    let mut m = Message::from_json(&Value::Object(std_form))?;
    m.content =
        content_from_json(o.get("content").unwrap_or(&Value::Null)).map_err(Error::in_input)?;
    if m.kind == Kind::SystemPrompt && !m.hook_ids.is_empty() {
        // Its content holds an old resolution; the base text is `_static_text`.
        m.content = match o.get("_static_text") {
            Some(Value::String(t)) => Content::Text(t.clone()),
            _ => Content::None,
        };
    } else if let (Content::None, Some(Value::String(t))) = (&m.content, o.get("_static_text")) {
        m.content = Content::Text(t.clone());
    }
    if let Some(t) = o.get("creation_timestamp") {
        match t {
            Value::String(t) => {
                m.created_at = time::parse_iso(t).map_err(|e| e.at_key("creation_timestamp"))?
            }
            Value::Null => {}
            _ => return Err(Error::undecodable("expected a string").at_key("creation_timestamp")),
        }
    }
    Ok(m)
}
