//! A context as the rows of a store: each event as the JSON text the file's
//! `events` list holds, the small state of the context (the file's document without its
//! events, its content map and its v1 projection), and the content map as one row per entry.
//!
//! Saving asks for what the store lacks: the events from the stored head on, the content
//! entries those events introduced, and the state; nothing here walks the whole log, so a
//! save costs O(turn). Loading splices the rows back into one version 2 document and reads it
//! with the file reader, so a row passes every check a file does.

use super::write::{header, EventOut};
use super::{Loaded, VERSION};
use crate::context::{Context, MessageHandle};
use crate::error::{Error, ErrorKind, LocItem, Result};
use crate::event::EventType;
use rayon::prelude::*;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One content-map entry: its place in the map's order, its hash, and its text as a JSON
/// string literal (escaped as in files, so that a NUL stays `\u0000`, which PostgreSQL's
/// `text` can hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentRow {
    pub ord: usize,
    pub hash: String,
    pub text: String,
}

/// What a save writes: the new head, the fold's length (for listings), the state, the
/// events from the stored head on (seq, JSON text), and the content entries the store lacks.
#[derive(Debug, Clone)]
pub struct Rows {
    pub next_seq: u64,
    pub message_count: usize,
    pub state: String,
    pub events: Vec<(u64, String)>,
    pub content: Vec<ContentRow>,
}

/// The state: the document's header fields, the runtime fields, anchors and bindings.
struct StateOut<'a, H> {
    ctx: &'a Context<H>,
    runtime: &'a Map<String, Value>,
}

impl<H: MessageHandle> Serialize for StateOut<'_, H> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let c = self.ctx;
        let mut o = s.serialize_map(None)?;
        header(&mut o, c, self.runtime)?;
        o.serialize_entry("hook_bindings", &c.bindings())?;
        o.end()
    }
}

fn encode<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v)
        .map_err(|e| Error::new(ErrorKind::Io { errno: None }, format!("cannot encode: {e}")))
}

impl<H: MessageHandle> Context<H> {
    /// The rows a store lacks when it holds this context up to `stored` (its `next_seq` at
    /// the last save or load; `None` when the store holds none of it).
    pub fn rows_since(&self, stored: Option<u64>, runtime: &Map<String, Value>) -> Result<Rows> {
        let next = self.next_seq();
        let from = stored.unwrap_or(0);
        if from > next {
            return Err(Error::bad_argument(format!(
                "stored_seq {from} is past this context's next_seq {next}"
            )));
        }
        let events = self.events()[from as usize..]
            .iter()
            .map(|e| Ok((e.seq, encode(&EventOut(e))?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Rows {
            next_seq: next,
            message_count: self.len(),
            state: encode(&StateOut { ctx: self, runtime })?,
            events,
            content: self.content_since(stored)?,
        })
    }

    /// The content entries a store lacks. Entries are only ever added, and after creation
    /// (a fork's or `create`'s copy of its parent's map) only by `materialize`, whose event
    /// names the hashes it bound: so a store holding up to `stored` lacks exactly the hashes
    /// of the materialize events since. An entry already held is written again and ignored
    /// by the store (its key is the hash).
    fn content_since(&self, stored: Option<u64>) -> Result<Vec<ContentRow>> {
        let row = |ord: usize| -> Option<Result<ContentRow>> {
            self.content_map().get_index(ord).map(|(h, t)| {
                Ok(ContentRow {
                    ord,
                    hash: h.clone(),
                    text: encode(t)?,
                })
            })
        };
        let Some(from) = stored else {
            return (0..self.content_map().len()).filter_map(row).collect();
        };
        let mut ords: Vec<usize> = self.events()[from as usize..]
            .iter()
            .filter(|e| e.kind == EventType::Materialize)
            .filter_map(|e| e.data.get("bindings").and_then(Value::as_object))
            .flat_map(|b| b.values().filter_map(Value::as_str))
            .filter_map(|hash| self.content_map().get_index_of(hash))
            .collect();
        ords.sort_unstable();
        ords.dedup();
        ords.into_iter().filter_map(row).collect()
    }

    /// A context from its rows: `state` as [`Context::rows_since`] wrote it, the content
    /// entries (hash, JSON string) in their order, and the event rows (seq, JSON text) in seq order,
    /// of which the store's head says there are `head`. Every error is a decode error naming
    /// the context and, for an event, its seq.
    pub fn from_rows(
        id: &str,
        head: u64,
        state: &[u8],
        content: &[(&[u8], &[u8])],
        events: &[(u64, &[u8])],
    ) -> Result<Loaded<H>> {
        let named = |e: Error| e.within(format!("context {id}"));
        if events.len() as u64 != head {
            return Err(named(Error::undecodable(format!(
                "the store's head is {head} but it holds {} event rows",
                events.len()
            ))));
        }
        if let Some((i, (seq, _))) = events
            .iter()
            .enumerate()
            .find(|(i, (seq, _))| *seq != *i as u64)
        {
            return Err(named(Error::undecodable(format!(
                "event rows skip from seq {i} to seq {seq}"
            ))));
        }
        let doc = splice(id, state, content, events).map_err(named)?;
        // Rows are spliced unchecked, which saves a pass over every byte. A row that is not
        // one JSON value may change the shape of the document around it: then either the
        // reader fails or the events read are not the rows, and the rows are checked one by
        // one to name the culprit (only a failing load pays for that).
        let culprit = || {
            events
                .par_iter()
                .find_first(|(_, row)| serde_json::from_slice::<&RawValue>(row).is_err())
                .map(|(seq, row)| {
                    let err = serde_json::from_slice::<&RawValue>(row)
                        .err()
                        .map_or_else(String::new, |e| e.to_string());
                    named(
                        Error::undecodable(format!("not a JSON value: {err}"))
                            .within(format!("seq {seq}")),
                    )
                })
        };
        match Context::load_bytes(&doc) {
            Ok(l) if l.context.next_seq() == head => Ok(l),
            Ok(l) => Err(culprit().unwrap_or_else(|| {
                named(Error::undecodable(format!(
                    "{head} event rows read as {} events",
                    l.context.next_seq()
                )))
            })),
            Err(e) if e.kind() == ErrorKind::Undecodable => {
                Err(culprit().unwrap_or_else(|| named(name_event(e))))
            }
            Err(other) => Err(other),
        }
    }
}

/// The version 2 document of the rows: the state's object with `content_map` and `events`
/// added. The state and the content entries are checked first (they are small).
fn splice(
    id: &str,
    state: &[u8],
    content: &[(&[u8], &[u8])],
    events: &[(u64, &[u8])],
) -> Result<Vec<u8>> {
    let not_object = |why: String| Error::undecodable(why).within("state");
    let fields: Map<String, Value> =
        serde_json::from_slice(state).map_err(|e| not_object(format!("not a JSON object: {e}")))?;
    companion(id, &fields)?;
    let body: usize = events.iter().map(|(_, r)| r.len() + 1).sum();
    let extra: usize = content.iter().map(|(h, t)| h.len() + t.len() + 8).sum();
    let mut doc = Vec::with_capacity(state.len() + body + extra + 64);
    let end = state
        .iter()
        .rposition(|&b| b == b'}')
        .ok_or_else(|| not_object("not a JSON object".into()))?;
    doc.extend_from_slice(&state[..end]);
    if !fields.is_empty() {
        doc.push(b',');
    }
    doc.extend_from_slice(b"\"content_map\":{");
    for (i, (hash, text)) in content.iter().enumerate() {
        let hash = std::str::from_utf8(hash)
            .map_err(|_| Error::undecodable("a hash is not UTF-8").within("content"))?;
        if serde_json::from_slice::<String>(text).is_err() {
            return Err(Error::undecodable("not a JSON string").within(format!("content {hash:?}")));
        }
        if i > 0 {
            doc.push(b',');
        }
        serde_json::to_writer(&mut doc, hash).map_err(|e| Error::undecodable(e.to_string()))?;
        doc.push(b':');
        doc.extend_from_slice(text);
    }
    doc.extend_from_slice(b"},\"events\":[");
    for (i, (_, row)) in events.iter().enumerate() {
        if i > 0 {
            doc.push(b',');
        }
        doc.extend_from_slice(row);
    }
    doc.extend_from_slice(b"]}");
    Ok(doc)
}

/// Whether a state is the companion of the event rows stored under `id`: a version 2 state
/// of that very context. Another version would be read without the rows (a version 1
/// document carries its messages in itself), another id would load another context.
pub(super) fn companion(id: &str, fields: &Map<String, Value>) -> Result<()> {
    let bad = |why: String| Err(Error::undecodable(why).within("state"));
    match fields.get("version") {
        Some(Value::Number(n)) if n.as_i64() == Some(VERSION) => {}
        Some(v) => return bad(format!("version {v}, expected {VERSION}")),
        None => return bad("missing version field".into()),
    }
    match fields.get("id") {
        Some(Value::String(own)) if own == id => Ok(()),
        Some(Value::String(own)) => bad(format!("holds context {own:?}, not {id:?}")),
        Some(v) => bad(format!("id {v} is not a string")),
        None => bad("missing id field".into()),
    }
}

/// The reader places an event by its index in the document (`events[17].data: …`); rows are
/// contiguous from 0, so that index is the seq, and the row it came from is named by it.
fn name_event(mut e: Error) -> Error {
    let seq = {
        let mut outer = e.loc().items();
        match (outer.next(), outer.next()) {
            (Some(LocItem::Key(k)), Some(LocItem::Index(seq))) if k == "events" => Some(*seq),
            _ => None,
        }
    };
    let Some(seq) = seq else { return e };
    e.drop_outer(2);
    e.within(format!("seq {seq}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Content, Message, Role};
    use std::sync::Arc;

    type Ctx = Context<Arc<Message>>;

    fn msg(role: Role, text: &str) -> Arc<Message> {
        Arc::new(Message::new_with(
            role,
            Content::Text(text.into()),
            None,
            crate::time::now(),
        ))
    }

    fn as_rows(r: &Rows) -> Vec<(u64, Vec<u8>)> {
        r.events
            .iter()
            .map(|(s, t)| (*s, t.as_bytes().to_vec()))
            .collect()
    }

    fn load(
        ctx_id: &str,
        state: &str,
        content: &[ContentRow],
        events: &[(u64, Vec<u8>)],
    ) -> Result<Ctx> {
        let c: Vec<(&[u8], &[u8])> = content
            .iter()
            .map(|r| (r.hash.as_bytes(), r.text.as_bytes()))
            .collect();
        let e: Vec<(u64, &[u8])> = events.iter().map(|(s, t)| (*s, t.as_slice())).collect();
        Ctx::from_rows(ctx_id, e.len() as u64, state.as_bytes(), &c, &e).map(|l| l.context)
    }

    fn sample() -> Ctx {
        let mut c = Ctx::new("c1".into(), crate::time::now());
        c.append(msg(Role::User, "a\u{0}b 𝄞"), "messages", None)
            .unwrap();
        c.append(msg(Role::Assistant, "x"), "messages", None)
            .unwrap();
        c.materialize(&[("mem".into(), "remember".into())]).unwrap();
        c
    }

    #[test]
    fn rows_load_back_to_the_same_document() {
        let mut c = sample();
        let rt = Map::new();
        let rows = c.rows_since(None, &rt).unwrap();
        assert_eq!(rows.events.len(), 3);
        assert_eq!(rows.content.len(), 1);
        let mut back = load("c1", &rows.state, &rows.content, &as_rows(&rows)).unwrap();
        assert_eq!(
            back.to_json_bytes(&rt).unwrap(),
            c.to_json_bytes(&rt).unwrap()
        );
    }

    #[test]
    fn a_save_after_the_first_carries_only_what_is_new() {
        let mut c = sample();
        let rt = Map::new();
        let first = c.rows_since(None, &rt).unwrap();
        c.append(msg(Role::User, "next"), "messages", None).unwrap();
        let next = c.rows_since(Some(first.next_seq), &rt).unwrap();
        assert_eq!(next.events.len(), 1);
        assert_eq!(next.events[0].0, 3);
        assert!(next.content.is_empty());
        c.materialize(&[("mem".into(), "other".into())]).unwrap();
        let third = c.rows_since(Some(next.next_seq), &rt).unwrap();
        assert_eq!(third.content.len(), 1);
        assert_eq!(third.content[0].ord, 1);
        assert_eq!(third.content[0].text, "\"other\"");
    }

    #[test]
    fn corrupt_rows_name_the_context_and_seq() {
        let c = sample();
        let rows = c.rows_since(None, &Map::new()).unwrap();
        let mut ev = as_rows(&rows);
        ev[1].1 = b"{\"seq\":1,".to_vec();
        let e = load("c1", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: seq 1: not a JSON value")),
            "{e}"
        );
        let mut ev = as_rows(&rows);
        ev[1].1 = b"1],\"x\":[2".to_vec();
        let e = load("c1", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: seq 1: not a JSON value")),
            "{e}"
        );
        let mut ev = as_rows(&rows);
        ev[2].1 = String::from_utf8(ev[2].1.clone())
            .unwrap()
            .replace("materialize", "nope")
            .into_bytes();
        let e = load("c1", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: seq 2: type: unknown event type")),
            "{e}"
        );
        let mut ev = as_rows(&rows);
        let two = [ev[1].1.clone(), b",".to_vec(), ev[2].1.clone()].concat();
        ev[1].1 = two; // one row holding two events: it reads, but not as the rows
        ev.pop();
        let e = load("c1", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: seq 1: not a JSON value")),
            "{e}"
        );
        let mut ev = as_rows(&rows);
        ev.remove(1);
        ev[1].0 = 2;
        let e = load("c1", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.contains("skip from seq 1 to seq 2")),
            "{e}"
        );
        let e = load("c1", "[1]", &rows.content, &as_rows(&rows))
            .err()
            .unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: state:")),
            "{e}"
        );
    }

    #[test]
    fn a_state_of_another_context_or_version_is_refused() {
        let c = sample();
        let rows = c.rows_since(None, &Map::new()).unwrap();
        let ev = as_rows(&rows);
        let e = load("c2", &rows.state, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c2: state: holds context \"c1\"")),
            "{e}"
        );
        let v1 = rows.state.replacen("\"version\":2", "\"version\":1", 1);
        let e = load("c1", &v1, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: state: version 1")),
            "{e}"
        );
        let no_id = rows.state.replacen("\"id\":\"c1\",", "", 1);
        let e = load("c1", &no_id, &rows.content, &ev).err().unwrap();
        assert!(
            matches!((e.kind(), e.to_string()), (ErrorKind::Undecodable, m) if m.starts_with("context c1: state: missing id")),
            "{e}"
        );
    }

    #[test]
    fn a_stored_seq_past_the_log_is_refused() {
        let c = sample();
        assert!(c.rows_since(Some(99), &Map::new()).is_err());
    }
}
