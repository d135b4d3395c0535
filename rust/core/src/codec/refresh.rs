//! Catching a context up with its store (docs/store.md): the
//! rows another writer saved since this context's stored head — the new events, the state, the
//! new content entries — checked as a load checks them, then applied through the log's one
//! `apply`. Two steps, [`Context::prepare_rows`] (reads, checks, builds every message, changes
//! nothing) and [`Context::apply_prepared`] (cannot fail on rows that were checked), so that
//! the caller can check what it owns (the runtime fields) in between and a bad row leaves the
//! context exactly as it was.

use super::read::{check_event, located, Checked, EventIn};
use super::runtime::runtime_fields;
use super::{legacy, VERSION};
use crate::anchors::Anchors;
use crate::context::{Context, MessageHandle};
use crate::error::{Error, Result};
use crate::event::EventType;
use crate::log::misfit;
use indexmap::IndexMap;
use serde_json::{Map, Value};

/// Rows checked against a context, ready to apply.
pub struct Prepared {
    /// The `next_seq` and transcript length the rows were checked against.
    from: u64,
    len: usize,
    events: Vec<Checked>,
    anchors: Anchors,
    bindings: IndexMap<String, String>,
    content: Vec<(String, String)>,
    origin_context_id: Option<String>,
    children: Vec<String>,
    /// The runtime fields of the state, for the caller (the Python layer owns them).
    pub runtime: Map<String, Value>,
}

impl Prepared {
    /// How many events applying these rows appends.
    pub fn event_count(&self) -> usize {
        self.events.len()
    }
}

/// Why rows cannot be applied to a context.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The rows are another context's history: the stored context was deleted and made anew,
    /// or this context never came from there.
    OtherLineage(String),
    /// The context holds events the store lacks (appended since its last save or load), and
    /// the store moved on: catching up would have to drop them.
    Unsaved(String),
    /// A row is corrupt (undecodable, naming the context and seq) or another failure.
    Bad(Error),
}

/// A refusal as the error a caller gets: another lineage is a conflict (`ConflictError`:
/// load the context again), the rest as they are.
impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        match r {
            Refusal::OtherLineage(why) | Refusal::Unsaved(why) => Error::conflict(why),
            Refusal::Bad(e) => e,
        }
    }
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Bad(e)
    }
}

impl<H: MessageHandle> Context<H> {
    /// Check the rows a store holds for a context stored at `expected` (its `next_seq` at its
    /// last save or load), read from seq `expected - 1` on: that last event both share comes
    /// first, the test of lineage. Refused when the context has moved past `expected` itself
    /// (unsaved events) or the store holds another history; else as [`Context::prepare_rows`].
    /// The caller holds the context from this check until [`Context::apply_prepared`], so that
    /// both see one state.
    pub fn prepare_refresh(
        &self,
        expected: u64,
        head: u64,
        state: &[u8],
        content: &[(&[u8], &[u8])],
        events: &[(u64, &[u8])],
    ) -> std::result::Result<Prepared, Refusal> {
        if self.next_seq() != expected {
            return Err(Refusal::Unsaved(format!(
                "holds unsaved events from seq {expected} on, and the store moved on (to seq \
                 {head}): reload and redo them, or rewind them"
            )));
        }
        let events = match (expected.checked_sub(1), events.split_first()) {
            (None, _) => events,
            (Some(last), Some(((seq, row), rest)))
                if head >= expected && *seq == last && self.holds_event_row(last, row) =>
            {
                rest
            }
            (Some(last), _) => {
                return Err(Refusal::OtherLineage(format!(
                    "the store holds another history under this id (its seq {last} is not this \
                     context's): it was deleted and saved anew; load it again"
                )))
            }
        };
        self.prepare_rows(head, state, content, events)
    }

    /// Check the rows a store holds from this context's `next_seq` on, without changing
    /// anything: `state` as [`Context::rows_since`] writes it, the content entries (hash, JSON
    /// string) the context may lack, and the event rows (seq, JSON text) from `next_seq` up to
    /// the store's `head`. `id` names the context in errors.
    pub fn prepare_rows(
        &self,
        head: u64,
        state: &[u8],
        content: &[(&[u8], &[u8])],
        events: &[(u64, &[u8])],
    ) -> std::result::Result<Prepared, Refusal> {
        let id = self.id();
        let named = |e: Error| e.within(format!("context {id}"));
        let from = self.next_seq();
        if head < from || events.len() as u64 != head - from {
            return Err(named(Error::undecodable(format!(
                "the store's head is {head} but it holds {} event rows from seq {from}",
                events.len()
            )))
            .into());
        }
        if let Some((i, (seq, _))) = events
            .iter()
            .enumerate()
            .find(|(i, (seq, _))| *seq != from + *i as u64)
        {
            return Err(named(Error::undecodable(format!(
                "event rows skip from seq {} to seq {seq}",
                from + i as u64
            )))
            .into());
        }
        let state_err = |e: Error| named(e.in_input().within("state"));
        let fields: Map<String, Value> = serde_json::from_slice(state)
            .map_err(|e| state_err(Error::undecodable(format!("not a JSON object: {e}"))))?;
        if fields.get("version").and_then(Value::as_i64) != Some(VERSION) {
            return Err(state_err(Error::undecodable("missing or invalid version field")).into());
        }
        let header = legacy::header::<H>(&fields).map_err(|e| named(e.in_input()))?;
        if header.id() != self.id() || header.created_at() != self.created_at() {
            return Err(Refusal::OtherLineage(format!(
                "context {id}: the store holds another context under this id: the store's context {} created at {} is not this one (created at {})",
                header.id(),
                crate::time::to_iso(header.created_at()),
                crate::time::to_iso(self.created_at())
            )));
        }
        // Each row is read and checked on its own (the same checks as a load), and the ops
        // are fitted to the transcript as it will grow, so that applying cannot fail.
        let mut len = self.len();
        let mut checked = Vec::with_capacity(events.len());
        for (seq, row) in events {
            let at = |e: Error| named(e.in_input().within(format!("seq {seq}")));
            let text = std::str::from_utf8(row).map_err(|_| at(Error::undecodable("not UTF-8")))?;
            let e: EventIn = located(text).map_err(at)?;
            let c = check_event(*seq as usize, &e).map_err(at)?;
            if let Some(op) = c.op {
                if let Some(why) = misfit(op, len) {
                    return Err(at(Error::undecodable(why).at_key("data")).into());
                }
                len = len.wrapping_add_signed(op.growth());
            }
            checked.push(c);
        }
        let anchors =
            legacy::anchors_or_default(fields.get("anchors"), "anchors", len).map_err(state_err)?;
        let bindings = legacy::string_map(&fields, "hook_bindings").map_err(state_err)?;
        let runtime = runtime_fields(&fields, true).map_err(state_err)?;
        let mut new_content = Vec::new();
        for (hash, text) in content {
            let hash = std::str::from_utf8(hash)
                .map_err(|_| named(Error::undecodable("a hash is not UTF-8").within("content")))?;
            let text: String = serde_json::from_slice(text).map_err(|_| {
                named(Error::undecodable("not a JSON string").within(format!("content {hash:?}")))
            })?;
            if !self.content_map().contains_key(hash) {
                new_content.push((hash.to_string(), text));
            }
        }
        Ok(Prepared {
            from,
            len: self.len(),
            events: checked,
            anchors,
            bindings,
            content: new_content,
            origin_context_id: header.origin_context_id().map(str::to_string),
            children: header.children().to_vec(),
            runtime,
        })
    }

    /// Apply rows [`Context::prepare_rows`] checked against this context as it still is;
    /// returns how many events were appended. A context changed since is refused
    /// (a bad argument) and left alone.
    pub fn apply_prepared(&mut self, p: Prepared) -> Result<usize> {
        if self.next_seq() != p.from || self.len() != p.len {
            return Err(Error::bad_argument(format!(
                "context {} changed since its rows were checked",
                self.id()
            )));
        }
        let n = p.events.len();
        let rebinds = p.bindings != *self.bindings()
            || p.events.iter().any(|c| c.kind == EventType::Materialize);
        for c in p.events {
            // Fitted in `prepare_rows`: `apply` refuses nothing here.
            self.apply(c.kind, c.time, c.data, c.op, c.message.map(H::wrap))?;
        }
        for (hash, text) in p.content {
            self.keep_content(hash, text);
        }
        self.set_anchors(p.anchors);
        self.set_bindings(p.bindings);
        self.set_lineage(p.origin_context_id, p.children);
        if rebinds {
            self.forget_derived();
        }
        Ok(n)
    }

    /// Whether `row` (an event as the JSON text of a file's `events` entry) is this context's
    /// event `seq`: the test that a store still holds this context's history up to there.
    pub fn holds_event_row(&self, seq: u64, row: &[u8]) -> bool {
        let Some(e) = self.event(seq) else {
            return false;
        };
        let Ok(stored) = serde_json::from_slice::<Value>(row) else {
            return false;
        };
        serde_json::to_value(super::write::EventOut(e)).is_ok_and(|own| own == stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::message::{Content, Message, Role};
    use std::sync::Arc;

    type Ctx = Context<Arc<Message>>;

    fn msg(role: Role, text: &str) -> Arc<Message> {
        Arc::new(Message::new(role, Content::Text(text.into())))
    }

    /// `reader` caught up with `writer` from the rows a store would hand it.
    fn catch_up(reader: &mut Ctx, writer: &Ctx) -> std::result::Result<usize, Refusal> {
        let rt = Map::new();
        let rows = writer.rows_since(Some(reader.next_seq()), &rt)?;
        let events: Vec<(u64, &[u8])> = rows
            .events
            .iter()
            .map(|(s, t)| (*s, t.as_bytes()))
            .collect();
        let content: Vec<(&[u8], &[u8])> = rows
            .content
            .iter()
            .map(|r| (r.hash.as_bytes(), r.text.as_bytes()))
            .collect();
        let p = reader.prepare_rows(rows.next_seq, rows.state.as_bytes(), &content, &events)?;
        Ok(reader.apply_prepared(p)?)
    }

    fn doc(c: &mut Ctx) -> Vec<u8> {
        c.to_json_bytes(&Map::new()).unwrap()
    }

    #[test]
    fn catching_up_equals_loading() {
        let mut w = Ctx::new("c".into(), crate::time::now());
        let mut r = w.clone();
        for t in ["a", "b", "c", "d"] {
            w.append(msg(Role::User, t), "messages", None).unwrap();
        }
        assert_eq!(catch_up(&mut r, &w).unwrap(), 4);
        w.remove_range(1, 1).unwrap();
        w.replace_range(0, 1, msg(Role::Assistant, "summary"))
            .unwrap();
        let mut hooked = Message::new(Role::System, Content::Text("own".into()));
        hooked.hook_ids = vec![crate::dynamic::hook_id("mem")];
        w.append(Arc::new(hooked), "system_prompt", None).unwrap();
        w.materialize(&[("mem".into(), "remembered".into())])
            .unwrap();
        w.add_anchor("later", 2, true).unwrap();
        let before = r.messages();
        assert_eq!(catch_up(&mut r, &w).unwrap(), 4);
        assert_eq!(doc(&mut r), doc(&mut w));
        assert_ne!(before.len(), r.messages().len());
        let shown: Vec<String> = r.messages().iter().map(|m| m.text()).collect();
        assert_eq!(shown[0], "own\n\nremembered");
        assert_eq!(catch_up(&mut r, &w).unwrap(), 0);
    }

    #[test]
    fn a_bad_row_changes_nothing() {
        let mut w = Ctx::new("c".into(), crate::time::now());
        w.append(msg(Role::User, "a"), "messages", None).unwrap();
        let mut r = w.clone();
        w.append(msg(Role::User, "b"), "messages", None).unwrap();
        w.remove_range(0, 1).unwrap();
        let rows = w.rows_since(Some(1), &Map::new()).unwrap();
        let before = doc(&mut r);
        let state = rows.state.as_bytes();
        let good: Vec<(u64, Vec<u8>)> = rows
            .events
            .iter()
            .map(|(s, t)| (*s, t.clone().into_bytes()))
            .collect();
        let undecodable = |r: Refusal| match r {
            Refusal::Bad(e) if e.kind() == ErrorKind::Undecodable => e.to_string(),
            other => panic!("{other:?}"),
        };
        let try_rows = |r: &Ctx, ev: &[(u64, Vec<u8>)], head: u64| {
            let ev: Vec<(u64, &[u8])> = ev.iter().map(|(s, t)| (*s, t.as_slice())).collect();
            r.prepare_rows(head, state, &[], &ev).err().unwrap()
        };
        let mut ev = good.clone();
        ev[1].1 = b"{\"seq\":2,".to_vec();
        let m = undecodable(try_rows(&r, &ev, 3));
        assert!(m.starts_with("context c: seq 2: not a valid JSON"), "{m}");
        let mut ev = good.clone();
        ev[1].1 = String::from_utf8(ev[1].1.clone())
            .unwrap()
            .replace("\"last\":1", "\"last\":5")
            .into_bytes();
        let m = undecodable(try_rows(&r, &ev, 3));
        assert!(
            m.starts_with("context c: seq 2: data: range 0..5 does not fit"),
            "{m}"
        );
        let m = undecodable(try_rows(&r, &good[..1], 3));
        assert!(
            m.contains("head is 3 but it holds 1 event rows from seq 1"),
            "{m}"
        );
        let other = Ctx::new("c".into(), crate::time::now() + 1);
        let ev: Vec<(u64, &[u8])> = good.iter().map(|(s, t)| (*s, t.as_slice())).collect();
        let other_state = other.rows_since(None, &Map::new()).unwrap().state;
        assert!(matches!(
            r.prepare_rows(3, other_state.as_bytes(), &[], &ev),
            Err(Refusal::OtherLineage(_))
        ));
        assert_eq!(doc(&mut r), before);
        // A context changed between the check and the apply is refused.
        let p = r.prepare_rows(3, state, &[], &ev).ok().unwrap();
        r.append(msg(Role::User, "local"), "messages", None)
            .unwrap();
        assert!(r.apply_prepared(p).is_err());
    }

    #[test]
    fn an_event_row_is_recognised() {
        let mut w = Ctx::new("c".into(), crate::time::now());
        w.append(msg(Role::User, "a"), "messages", None).unwrap();
        let rows = w.rows_since(None, &Map::new()).unwrap();
        assert!(w.holds_event_row(0, rows.events[0].1.as_bytes()));
        assert!(!w.holds_event_row(1, rows.events[0].1.as_bytes()));
        let other = Ctx::new("c".into(), crate::time::now());
        let mut other = other;
        other
            .append(msg(Role::User, "a"), "messages", None)
            .unwrap();
        assert!(!w.holds_event_row(
            0,
            other.rows_since(None, &Map::new()).unwrap().events[0]
                .1
                .as_bytes()
        ));
    }
}
