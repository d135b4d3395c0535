//! The log's mutations: each event enters the context through `Context::apply` (in the
//! context module, which alone holds the state), whether a live mutation writes it or a file
//! replays it. `apply` checks the event's op against the transcript, folds it in, and appends
//! the event; the mutating methods here add the anchor rules around it.

use crate::context::{Context, MessageHandle, Seed};
use crate::error::{Error, ErrorKind, Result};
use crate::event::{Event, EventType, Op};
use crate::message::INTERRUPTED;
use crate::message::{Content, Message, Role};
use crate::time;
use serde_json::{Map, Value};

/// Why an op does not fit the transcript, in the words both a caller and a decoder use.
pub(crate) fn misfit(op: Op, len: usize) -> Option<String> {
    match op {
        Op::Insert(p) if p > len => Some(format!(
            "position {p} is outside the {len}-message transcript"
        )),
        Op::Replace(a, b) | Op::Remove(a, b) if a > b => {
            Some(format!("range {a}..{b} is descending"))
        }
        Op::Replace(a, b) | Op::Remove(a, b) if b >= len => Some(format!(
            "range {a}..{b} does not fit the {len}-message transcript"
        )),
        _ => None,
    }
}

impl<H: MessageHandle> Context<H> {
    fn place(&mut self, op: Op, h: H, source: Option<String>) -> Result<&Event<H>> {
        let m = h.message();
        let (kind, time) = (EventType::for_role(m.role), m.created_at);
        let mut data = Map::new();
        if let Some(s) = source {
            data.insert("source".into(), Value::String(s));
        }
        self.apply(kind, time, data, Some(op), Some(h))
    }

    /// What a child's insert event needs of the message at fold seq `seq`, read from this
    /// log's event rather than from the message (which would cost a pointer chase each).
    pub(crate) fn seed_of(&self, seq: u32) -> Seed<H> {
        let e = &self.events()[seq as usize];
        Seed {
            kind: e.kind,
            time: e.time,
            hooked: self.hooked().contains(seq),
            handle: self.handle(seq).clone(),
        }
    }

    /// A caller's inclusive range: negative or descending is a `ValueError`; `None` when it
    /// is outside the transcript (a no-op the caller warns about). Huge values arrive
    /// saturated, so they read as outside.
    fn caller_range(&self, first: i64, last: i64) -> Result<Option<(usize, usize)>> {
        if first < 0 || last < 0 {
            return Err(Error::bad_argument(format!(
                "negative index in range {first}..{last}"
            )));
        }
        if first > last {
            return Err(Error::bad_argument(format!(
                "range {first}..{last} is descending"
            )));
        }
        let (first, last) = (first as usize, last as usize);
        Ok((last < self.len()).then_some((first, last)))
    }

    /// A new anchor at `index`, after (or before) the anchors already there.
    pub fn add_anchor(&mut self, name: &str, index: i64, after_existing: bool) -> Result<()> {
        let len = self.len();
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        self.anchors_mut().add(name, index, len, after_existing)
    }

    /// Insert at an anchor's index, then move that anchor and every later one up by 1.
    pub fn append(&mut self, h: H, anchor: &str, source: Option<String>) -> Result<&Event<H>> {
        let k = self.anchors().position(anchor)?;
        let at = self.anchors().index_at(k);
        self.anchors_mut().shift_from(k);
        self.place(Op::Insert(at), h, source)
    }

    /// Insert at a position that is not an anchor (patching): anchors at `p` or later move up.
    pub fn insert_at(&mut self, p: usize, h: H) -> Result<&Event<H>> {
        if let Some(why) = misfit(Op::Insert(p), self.len()) {
            return Err(Error::out_of_range(why));
        }
        self.anchors_mut().shift_at_or_after(p);
        self.place(Op::Insert(p), h, None)
    }

    /// Replace `first..=last` by one message that inherits the first shadowed `created_at`.
    /// `Ok(None)` when the range is outside the transcript (the caller warns).
    pub fn replace_range(&mut self, first: i64, last: i64, h: H) -> Result<Option<&Event<H>>> {
        let Some((first, last)) = self.caller_range(first, last)? else {
            return Ok(None);
        };
        self.replace_with(first, last, h, Map::new()).map(Some)
    }

    /// Replace `first..=last` (in range) by `h`, which inherits the first shadowed
    /// `created_at`, with `data` as the event's own keys.
    pub(crate) fn replace_with(
        &mut self,
        first: usize,
        last: usize,
        h: H,
        data: Map<String, Value>,
    ) -> Result<&Event<H>> {
        if let Some(why) = misfit(Op::Replace(first, last), self.len()) {
            return Err(Error::out_of_range(why));
        }
        let inherited = self.raw_at(first).expect("in range").message().created_at;
        let h = if h.message().created_at == inherited {
            h
        } else {
            let mut m = h.message().clone();
            m.created_at = inherited;
            H::wrap(m)
        };
        self.anchors_mut().collapse(first, last);
        let kind = EventType::for_role(h.message().role);
        let time = h.message().created_at;
        self.apply(kind, time, data, Some(Op::Replace(first, last)), Some(h))
    }

    /// Remove `first..=last` with one `remove` event; the messages stay in the log.
    /// `Ok(None)` when the range is outside the transcript (the caller warns).
    pub fn remove_range(&mut self, first: i64, last: i64) -> Result<Option<&Event<H>>> {
        let Some((first, last)) = self.caller_range(first, last)? else {
            return Ok(None);
        };
        self.remove_with(first, last, Map::new()).map(Some)
    }

    /// Remove `first..=last` (in range) with `data` as the event's own keys.
    pub(crate) fn remove_with(
        &mut self,
        first: usize,
        last: usize,
        data: Map<String, Value>,
    ) -> Result<&Event<H>> {
        if let Some(why) = misfit(Op::Remove(first, last), self.len()) {
            return Err(Error::out_of_range(why));
        }
        self.anchors_mut().remove(first, last);
        let op = Some(Op::Remove(first, last));
        self.apply(EventType::Remove, time::now(), data, op, None)
    }

    /// Remove the whole transcript; no event when it is already empty.
    pub fn clear(&mut self) -> Result<Option<&Event<H>>> {
        match self.len() {
            0 => Ok(None),
            n => self.remove_range(0, n as i64 - 1),
        }
    }

    /// A bookkeeping event (the caller has turned refusals into warnings).
    pub fn log_event(&mut self, kind: EventType, data: Map<String, Value>) -> Result<&Event<H>> {
        if !kind.is_bookkeeping() {
            return Err(Error::bad_argument(format!(
                "{} events are written by the context itself, not by log_event",
                kind.name()
            )));
        }
        self.apply(kind, time::now(), data, None, None)
    }

    pub(crate) fn push_materialize(&mut self, data: Map<String, Value>) -> Result<&Event<H>> {
        self.apply(EventType::Materialize, time::now(), data, None, None)
    }

    /// Answer every call that nothing answers with an "interrupted" tool result, placed after
    /// the calling message and the run of tool results that follows it. Returns the new events.
    pub fn patch_dangling_tool_calls(&mut self) -> Result<Vec<u64>> {
        let raw = self.raw_messages();
        let answered: std::collections::HashSet<String> =
            raw.iter().flat_map(|h| h.message().answers()).collect();
        let mut seen = std::collections::HashSet::new();
        // (position after which to insert, patches in call order)
        let mut plan: Vec<(usize, Vec<Message>)> = Vec::new();
        for (i, h) in raw.iter().enumerate() {
            let m = h.message();
            if m.role != Role::Assistant {
                continue;
            }
            let mut patches = Vec::new();
            for f in m.found_calls() {
                let id = f.id.to_string();
                if answered.contains(&id) || !seen.insert(id.clone()) {
                    continue;
                }
                let name = m.call_at(f.at).name();
                let mut t = Message::new(Role::Tool, Content::Text(INTERRUPTED.into()));
                t.tool_call_id = Some(id);
                t.name = (!name.is_empty()).then(|| name.to_string());
                patches.push(t);
            }
            if patches.is_empty() {
                continue;
            }
            let mut end = i + 1;
            while end < raw.len() && raw[end].message().is_tool_result() {
                end += 1;
            }
            plan.push((end, patches));
        }
        let mut seqs = Vec::new();
        let mut shift = 0;
        for (end, patches) in plan {
            for (k, m) in patches.into_iter().enumerate() {
                let ev = self.insert_at(end + shift + k, H::wrap(m))?;
                seqs.push(ev.seq);
            }
            shift = seqs.len();
        }
        Ok(seqs)
    }
}

/// Replaying a file: an op that does not fit is the file's fault.
pub(crate) fn replay_error(e: Error) -> Error {
    match e.kind() {
        ErrorKind::OutOfRange => e.with_kind(ErrorKind::Undecodable).at_key("data"),
        _ => e,
    }
}
