//! Persistence: the version 2 JSON document, readers for version 1 and the Python seed's
//! versionless layout, and atomic files. Every decode error says where it was found and
//! nothing is built until the whole input has been checked.

use crate::anchors::Anchors;
use crate::context::{Context, MessageHandle};
use crate::error::{decode, Error, Result};
use crate::event::{EventType, Op};
use crate::message::{content_from_json, Content, Kind, Message};
use crate::time;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const VERSION: i64 = 2;

/// Top-level keys that belong to the runtime fields the Python layer owns.
pub const RUNTIME_KEYS: [&str; 9] = [
    "system_prompt",
    "deps",
    "usage",
    "tool_calls",
    "needs_response",
    "iteration",
    "max_iterations",
    "started_at",
    "agent_name",
];

/// A decoded document: the context, the runtime fields found at its top level (the caller
/// applies their defaults), and whether it carried a version (defaults differ).
pub struct Loaded<H> {
    pub context: Context<H>,
    pub runtime: Map<String, Value>,
    pub versioned: bool,
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

impl<H: MessageHandle> Context<H> {
    pub fn event_json(&self, i: usize) -> Value {
        let e = &self.events[i];
        let mut data = Map::new();
        if let Some((op, h)) = &e.surface {
            op.write(&mut data);
            data.insert(
                "message".into(),
                Value::Object(h.message().to_json_compact()),
            );
        }
        for (k, v) in &e.data {
            data.insert(k.clone(), v.clone());
        }
        let mut o = Map::new();
        o.insert("seq".into(), Value::from(e.seq));
        o.insert("type".into(), s(e.kind.name()));
        o.insert("time".into(), s(&time::to_iso(e.time)));
        o.insert("data".into(), Value::Object(data));
        Value::Object(o)
    }

    /// The version 2 document. `runtime` holds the runtime fields (already redacted).
    pub fn serialize(&mut self, runtime: Map<String, Value>) -> Value {
        let mut o = Map::new();
        o.insert("version".into(), Value::from(VERSION));
        o.insert("id".into(), s(&self.id));
        o.insert("created_at".into(), s(&time::to_iso(self.created_at)));
        o.insert(
            "origin_context_id".into(),
            self.origin_context_id.as_deref().map_or(Value::Null, s),
        );
        o.insert(
            "children".into(),
            Value::Array(self.children.iter().map(|c| s(c)).collect()),
        );
        for (k, v) in runtime {
            o.insert(k, v);
        }
        o.insert(
            "anchors".into(),
            Value::Array(
                self.anchors
                    .list()
                    .iter()
                    .map(|(n, i)| Value::Array(vec![s(n), Value::from(*i as u64)]))
                    .collect(),
            ),
        );
        o.insert(
            "content_map".into(),
            Value::Object(
                self.content_map
                    .iter()
                    .map(|(k, v)| (k.clone(), s(v)))
                    .collect(),
            ),
        );
        o.insert(
            "hook_bindings".into(),
            Value::Object(
                self.bindings
                    .iter()
                    .map(|(k, v)| (k.clone(), s(v)))
                    .collect(),
            ),
        );
        o.insert(
            "events".into(),
            Value::Array((0..self.events.len()).map(|i| self.event_json(i)).collect()),
        );
        // The projection for version 1 readers: resolved, without the overlay.
        let seqs: Vec<u32> = self.transcript.iter().collect();
        let projection: Vec<Value> = seqs
            .into_iter()
            .map(|q| Value::Object(self.resolved(q).message().to_json_v1()))
            .collect();
        o.insert("messages".into(), Value::Array(projection));
        Value::Object(o)
    }

    /// Read a document: version 2 or 1, or the versionless layout. Returns the context and
    /// the runtime fields found at the top level (the caller applies their defaults).
    pub fn load_value(v: &Value) -> Result<Loaded<H>> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::Decode("expected a JSON object at the top level".into()))?;
        let ctx = match obj.get("version") {
            None => versionless(obj)?,
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => match n.as_i64() {
                Some(1) => v1(obj)?,
                Some(2) => v2(obj)?,
                _ => return decode(format!("unsupported version: {n}")),
            },
            Some(_) => return decode("missing or invalid version field"),
        };
        let runtime = RUNTIME_KEYS
            .iter()
            .filter_map(|k| obj.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        Ok(Loaded {
            context: ctx,
            runtime,
            versioned: obj.contains_key("version"),
        })
    }

    /// Like `load_value`, but a version is required (`deserialize`).
    pub fn deserialize_value(v: &Value) -> Result<Loaded<H>> {
        match v.as_object().map(|o| o.get("version")) {
            Some(Some(_)) => Self::load_value(v),
            Some(None) => decode("missing or invalid version field"),
            None => decode("expected a JSON object at the top level"),
        }
    }

    pub fn load_file(path: &Path) -> Result<Loaded<H>> {
        let bytes = std::fs::read(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::NotFound(format!("no such file: {}", path.display()))
            }
            _ => Error::Io(format!("{}: {e}", path.display())),
        })?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::Decode(format!(
                "{}: not a valid JSON document: {e}",
                path.display()
            ))
        })?;
        Self::load_value(&v).map_err(|e| match e {
            Error::Decode(m) => Error::Decode(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    pub fn file_name(&self) -> Result<String> {
        check_file_id(&self.id)?;
        Ok(format!(
            "{}-{}.json",
            time::date_stamp(self.created_at),
            self.id
        ))
    }

    /// Write `<YYYYMMDD>-<id>.json` into `dir` atomically: a temporary file in the same folder,
    /// flushed and fsynced, renamed over the target, then the folder fsynced.
    pub fn save(&mut self, dir: &Path, runtime: Map<String, Value>) -> Result<PathBuf> {
        let name = self.file_name()?;
        let doc = self.serialize(runtime);
        let bytes =
            serde_json::to_vec(&doc).map_err(|e| Error::Io(format!("cannot encode: {e}")))?;
        write_atomic(dir, &name, &bytes)
    }
}

pub fn check_file_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 200
        && id != "."
        && id != ".."
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::Value(format!(
            "context id {id:?} is not a safe file name"
        )))
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{}: {e}", path.display()))
}

pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let target = dir.join(name);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        crate::message::new_id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)?;
        // Make the rename itself durable. Opening a folder is not possible everywhere
        // (Windows), where the rename is what we can do.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&target, e));
    }
    Ok(target)
}

// ---- readers ------------------------------------------------------------------------------

fn get_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => decode(format!("{key}: expected a string")),
    }
}

fn string_map(obj: &Map<String, Value>, key: &str) -> Result<indexmap::IndexMap<String, String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Default::default()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => decode(format!("{key}.{k}: expected a string")),
            })
            .collect(),
        Some(_) => decode(format!("{key}: expected an object")),
    }
}

fn header<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let id = get_str(obj, "id")?.map_or_else(crate::message::new_id, str::to_string);
    let created_at = match get_str(obj, "created_at")? {
        Some(t) => time::parse_iso(t).map_err(|e| e.at("created_at"))?,
        None => time::now(),
    };
    let mut ctx = Context::new(id, created_at);
    ctx.origin_context_id = get_str(obj, "origin_context_id")?.map(str::to_string);
    ctx.children = match obj.get("children") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, c)| {
                c.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::Decode(format!("children[{i}]: expected a string")))
            })
            .collect::<Result<_>>()?,
        Some(_) => return decode("children: expected a list"),
    };
    ctx.content_map = string_map(obj, "content_map")?;
    Ok(ctx)
}

fn anchors_from(v: Option<&Value>, key: &str, len: usize) -> Result<Option<Anchors>> {
    let arr = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => a,
        Some(_) => return decode(format!("{key}: expected a list")),
    };
    let mut list = Vec::with_capacity(arr.len());
    for (i, a) in arr.iter().enumerate() {
        match a.as_array().map(Vec::as_slice) {
            Some([Value::String(n), Value::Number(x)]) if x.as_u64().is_some() => {
                list.push((n.clone(), x.as_u64().unwrap_or(0) as usize))
            }
            _ => return decode(format!("{key}[{i}]: expected [name, non-negative index]")),
        }
    }
    let anchors = Anchors::from_list(list);
    anchors
        .validate(len)
        .map_err(|m| Error::Decode(format!("{key}{m}")))?;
    Ok(Some(anchors))
}

fn messages_list(obj: &Map<String, Value>) -> Result<&[Value]> {
    match obj.get("messages") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => decode("messages: expected a list"),
    }
}

fn seed_all<H: MessageHandle>(ctx: &mut Context<H>, messages: Vec<Message>) {
    for m in messages {
        // `seed` cannot fail: the default anchors are there.
        let _ = ctx.append(H::wrap(m), "messages", None);
    }
}

fn v1<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let mut ctx = header::<H>(obj)?;
    let restored = time::now();
    let mut messages = Vec::new();
    for (i, m) in messages_list(obj)?.iter().enumerate() {
        let o = m
            .as_object()
            .ok_or_else(|| Error::Decode(format!("messages[{i}]: expected an object")))?;
        // v1 has no times and no ids of its own worth trusting: restore time, fresh ids.
        let mut only = Map::new();
        for k in [
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
            "metadata",
        ] {
            if let Some(v) = o.get(k) {
                only.insert(k.into(), v.clone());
            }
        }
        let mut msg = Message::from_json(&Value::Object(only))
            .map_err(|e| e.at(&format!("messages[{i}]")))?;
        msg.created_at = restored;
        messages.push(msg);
    }
    seed_all(&mut ctx, messages);
    Ok(ctx)
}

fn v2<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let mut ctx = header::<H>(obj)?;
    let events = match obj.get("events") {
        None => return v1_fallback(obj, ctx),
        Some(Value::Array(a)) => a,
        Some(_) => return decode("events: expected a list"),
    };
    for (i, e) in events.iter().enumerate() {
        replay_event(&mut ctx, i, e).map_err(|err| err.at(&format!("events[{i}]")))?;
    }
    let len = ctx.len();
    if let Some(a) = anchors_from(obj.get("anchors"), "anchors", len)? {
        ctx.anchors = a;
    } else {
        ctx.anchors = Anchors::from_list(vec![
            ("system_prompt".into(), 0),
            ("tools".into(), 0),
            ("messages".into(), len),
        ]);
    }
    ctx.bindings = string_map(obj, "hook_bindings")?;
    Ok(ctx)
}

/// A version 2 document without events: seed from its messages, keeping their times.
fn v1_fallback<H: MessageHandle>(
    obj: &Map<String, Value>,
    mut ctx: Context<H>,
) -> Result<Context<H>> {
    let mut messages = Vec::new();
    for (i, m) in messages_list(obj)?.iter().enumerate() {
        messages.push(Message::from_json(m).map_err(|e| e.at(&format!("messages[{i}]")))?);
    }
    seed_all(&mut ctx, messages);
    Ok(ctx)
}

fn replay_event<H: MessageHandle>(ctx: &mut Context<H>, i: usize, e: &Value) -> Result<()> {
    let o = e
        .as_object()
        .ok_or_else(|| Error::Decode("expected an object".into()))?;
    match o.get("seq").and_then(Value::as_u64) {
        Some(s) if s == i as u64 => {}
        Some(s) => {
            return decode(format!(
                "seq: expected {i}, found {s} (seqs must be 0, 1, 2, …)"
            ))
        }
        None => return decode("seq: expected a non-negative integer"),
    }
    let kind = match o.get("type") {
        Some(Value::String(t)) => EventType::parse(t)
            .ok_or_else(|| Error::Decode(format!("type: unknown event type {t:?}")))?,
        _ => return decode("type: expected a string"),
    };
    let time = match o.get("time") {
        Some(Value::String(t)) => time::parse_iso(t).map_err(|e| e.at("time"))?,
        _ => return decode("time: expected an ISO-8601 string"),
    };
    let mut data = match o.get("data") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(d)) => d.clone(),
        Some(_) => return decode("data: expected an object"),
    };
    if kind.is_surface() {
        let op = Op::read(&data).map_err(|e| e.at("data"))?;
        let msg_v = data
            .remove("message")
            .ok_or_else(|| Error::Decode("data.message: missing".into()))?;
        let msg = Message::from_json(&msg_v).map_err(|e| e.at("data.message"))?;
        if EventType::for_role(msg.role) != kind {
            return decode(format!(
                "type: {} does not match a {} message",
                kind.name(),
                msg.role.as_str()
            ));
        }
        if msg.created_at != time {
            return decode(format!(
                "time: {} differs from its message's created_at {}",
                time::to_iso(time),
                time::to_iso(msg.created_at)
            ));
        }
        for k in ["op", "position", "first", "last"] {
            data.remove(k);
        }
        let len = ctx.len();
        ctx.hooked += usize::from(!msg.hook_ids.is_empty());
        let h = H::wrap(msg);
        let seq = ctx.events.len() as u32;
        match op {
            Op::Insert(p) if p <= len => ctx.transcript.insert(p, seq),
            Op::Replace(a, b) if b < len => ctx.transcript.replace(a, b, seq),
            Op::Insert(p) => {
                return decode(format!(
                    "data.position: {p} is outside the {len}-message transcript"
                ))
            }
            Op::Replace(a, b) => {
                return decode(format!(
                    "data: replace range {a}..{b} does not fit the {len}-message transcript"
                ))
            }
        }
        ctx.events.push(crate::event::Event {
            seq: seq as u64,
            kind,
            time,
            data,
            surface: Some((op, h)),
        });
    } else {
        if kind == EventType::Materialize {
            match data.get("bindings") {
                Some(Value::Object(b)) if b.values().all(Value::is_string) => {}
                _ => return decode("data.bindings: expected an object of hook name → hash"),
            }
        }
        ctx.events.push(crate::event::Event {
            seq: i as u64,
            kind,
            time,
            data,
            surface: None,
        });
    }
    Ok(())
}

/// The Python seed's layout: part lists, `_type`, `_hook_ids`, `creation_timestamp`, …
fn versionless<H: MessageHandle>(obj: &Map<String, Value>) -> Result<Context<H>> {
    let mut ctx = header::<H>(obj)?;
    let mut messages = Vec::new();
    for (i, m) in messages_list(obj)?.iter().enumerate() {
        messages.push(seed_message(m).map_err(|e| e.at(&format!("messages[{i}]")))?);
    }
    for (i, m) in messages.into_iter().enumerate() {
        ctx.push_insert_raw(i, H::wrap(m));
    }
    let len = ctx.len();
    ctx.anchors = match anchors_from(obj.get("anchor_points"), "anchor_points", len)? {
        Some(a) => a,
        None => Anchors::from_list(vec![
            ("system_prompt".into(), 0),
            ("tools".into(), 0),
            ("messages".into(), len),
        ]),
    };
    Ok(ctx)
}

fn seed_message(v: &Value) -> Result<Message> {
    let o = v
        .as_object()
        .ok_or_else(|| Error::Decode("expected an object".into()))?;
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
        content_from_json(o.get("content").unwrap_or(&Value::Null)).map_err(|e| e.at("content"))?;
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
                m.created_at = time::parse_iso(t).map_err(|e| e.at("creation_timestamp"))?
            }
            Value::Null => {}
            _ => return decode("creation_timestamp: expected a string"),
        }
    }
    Ok(m)
}
