//! The context core: the event log, the live fold, anchors, the content map and the overlay.
//! Every mutation appends events; the fold is maintained by applying each event as it is
//! written, so reading never re-folds.

use crate::anchors::Anchors;
use crate::error::{Error, Result};
use crate::event::{Event, EventData, EventType, Op};
use crate::message::{Content, Message, Role};
use crate::time::{self, Micros};
use crate::transcript::Transcript;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// How the core holds a message. The core keeps handles, never copies: the binding's handle
/// is the Python object itself, so what was appended is what is read back.
pub trait MessageHandle: Clone + Send + Sync + 'static {
    fn message(&self) -> &Message;
    /// Wrap a message the core derived itself (a patch, a resolution, an overlay).
    fn wrap(m: Message) -> Self;
}

impl MessageHandle for Arc<Message> {
    fn message(&self) -> &Message {
        self
    }
    fn wrap(m: Message) -> Self {
        Arc::new(m)
    }
}

pub const INTERRUPTED: &str = "Tool call was interrupted and not executed. Please retry if needed.";

#[derive(Debug, Clone)]
pub struct Context<H> {
    pub id: String,
    pub created_at: Micros,
    pub origin_context_id: Option<String>,
    pub children: Vec<String>,
    pub(crate) events: Vec<Event<H>>,
    pub(crate) transcript: Transcript,
    pub anchors: Anchors,
    /// sha256 hex → text.
    pub content_map: IndexMap<String, String>,
    /// hook id → sha256 hex of its current text.
    pub bindings: IndexMap<String, String>,
    pub(crate) overlay: Option<String>,
    /// Resolved dynamic messages by seq, and the overlaid leading message; cleared whenever
    /// what they derive from changes.
    pub(crate) resolved: HashMap<u32, H>,
    pub(crate) shown_head: Option<(u32, H)>,
    /// The seqs of surface events whose message carries hooks: reads resolve only those, and
    /// skip resolution entirely when there are none.
    pub(crate) hooked: HookedSeqs,
}

/// A message to seed a child log with, and what its insert event needs.
pub(crate) struct Seed<H> {
    pub kind: EventType,
    pub time: Micros,
    pub hooked: bool,
    pub handle: H,
}

impl<H: MessageHandle> Seed<H> {
    /// For a message this log has no event of (a replacement special, a derived message).
    pub(crate) fn of(handle: H) -> Seed<H> {
        let m = handle.message();
        Seed {
            kind: EventType::for_role(m.role),
            time: m.created_at,
            hooked: !m.hook_ids.is_empty(),
            handle,
        }
    }
}

/// A bit per seq: whether that surface event's message carries hooks.
#[derive(Debug, Clone, Default)]
pub(crate) struct HookedSeqs {
    bits: Vec<u64>,
    count: usize,
}

impl HookedSeqs {
    fn mark(&mut self, seq: u32) {
        let (w, b) = (seq as usize / 64, seq % 64);
        if self.bits.len() <= w {
            self.bits.resize(w + 1, 0);
        }
        if self.bits[w] & (1 << b) == 0 {
            self.bits[w] |= 1 << b;
            self.count += 1;
        }
    }

    pub(crate) fn contains(&self, seq: u32) -> bool {
        self.bits
            .get(seq as usize / 64)
            .is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    pub(crate) fn any(&self) -> bool {
        self.count > 0
    }
}

impl<H: MessageHandle> Default for Context<H> {
    fn default() -> Self {
        Context::new(crate::message::new_id(), time::now())
    }
}

impl<H: MessageHandle> Context<H> {
    /// An empty context with the default anchors `system_prompt`, `tools`, `messages` at 0.
    pub fn new(id: String, created_at: Micros) -> Self {
        Context {
            id,
            created_at,
            origin_context_id: None,
            children: Vec::new(),
            events: Vec::new(),
            transcript: Transcript::default(),
            anchors: Anchors::default_set(),
            content_map: IndexMap::new(),
            bindings: IndexMap::new(),
            overlay: None,
            resolved: HashMap::new(),
            shown_head: None,
            hooked: HookedSeqs::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.transcript.len()
    }

    pub fn is_empty(&self) -> bool {
        self.transcript.is_empty()
    }

    pub fn next_seq(&self) -> u64 {
        self.events.len() as u64
    }

    pub fn events(&self) -> &[Event<H>] {
        &self.events
    }

    pub fn event(&self, seq: u64) -> Option<&Event<H>> {
        self.events.get(seq as usize)
    }

    /// The message of the surface event with this seq (the fold stores seqs).
    pub(crate) fn handle(&self, seq: u32) -> &H {
        match &self.events[seq as usize].surface {
            Some((_, h)) => h,
            None => unreachable!("the transcript only holds surface events"),
        }
    }

    /// The fold at position `i`, without resolution or overlay.
    pub fn raw_at(&self, i: usize) -> Option<&H> {
        self.transcript.get(i).map(|s| self.handle(s))
    }

    /// The fold, without resolution or overlay.
    pub fn raw_messages(&self) -> Vec<H> {
        self.transcript
            .iter()
            .map(|s| self.handle(s).clone())
            .collect()
    }

    pub fn overlay(&self) -> Option<&str> {
        self.overlay.as_deref()
    }

    pub fn set_overlay(&mut self, overlay: Option<String>) {
        self.overlay = overlay;
        self.shown_head = None;
    }

    // ---- writing -------------------------------------------------------------------------

    /// Every event enters the log here (or through `seed_in_order`).
    pub(crate) fn push(
        &mut self,
        kind: EventType,
        time: Micros,
        data: Map<String, Value>,
        surface: Option<(Op, H)>,
    ) -> &Event<H> {
        let hooked = surface
            .as_ref()
            .is_some_and(|(_, h)| !h.message().hook_ids.is_empty());
        self.push_known(kind, time, data, surface, hooked)
    }

    /// `push` when the caller already knows whether the message carries hooks.
    fn push_known(
        &mut self,
        kind: EventType,
        time: Micros,
        data: Map<String, Value>,
        surface: Option<(Op, H)>,
        hooked: bool,
    ) -> &Event<H> {
        let seq = self.events.len() as u64;
        if hooked {
            self.hooked.mark(seq as u32);
        }
        self.events.push(Event {
            seq,
            kind,
            time,
            data: EventData::new(data),
            surface,
        });
        self.events.last().expect("just pushed")
    }

    fn push_surface(&mut self, op: Op, h: H, source: Option<String>) -> &Event<H> {
        let seq = self.events.len() as u32;
        match op {
            Op::Insert(p) => self.transcript.insert(p, seq),
            Op::Replace(a, b) => self.transcript.replace(a, b, seq),
        }
        if matches!(op, Op::Replace(..))
            || self
                .shown_head
                .as_ref()
                .is_some_and(|_| self.transcript.get(0) == Some(seq))
        {
            self.shown_head = None;
        }
        let m = h.message();
        let (kind, time) = (EventType::for_role(m.role), m.created_at);
        let mut data = Map::new();
        if let Some(s) = source {
            data.insert("source".into(), Value::String(s));
        }
        self.push(kind, time, data, Some((op, h)))
    }

    /// Fill an empty context with `seeds` in order, one insert event each, in one pass
    /// (forks, windows, the versionless layout). Anchors are the caller's to set.
    pub(crate) fn seed_in_order(&mut self, seeds: Vec<Seed<H>>) {
        debug_assert!(self.events.is_empty());
        let n = seeds.len();
        self.events.reserve(n);
        for (i, s) in seeds.into_iter().enumerate() {
            self.push_known(
                s.kind,
                s.time,
                Map::new(),
                Some((Op::Insert(i), s.handle)),
                s.hooked,
            );
        }
        let seqs: Vec<u32> = (0..n as u32).collect();
        self.transcript = crate::transcript::Transcript::from_seqs(&seqs);
    }

    /// What a child's insert event needs of the message at fold seq `seq`, read from this
    /// log's event rather than from the message (which would cost a pointer chase each).
    pub(crate) fn seed_of(&self, seq: u32) -> Seed<H> {
        let e = &self.events[seq as usize];
        Seed {
            kind: e.kind,
            time: e.time,
            hooked: self.hooked.contains(seq),
            handle: self.handle(seq).clone(),
        }
    }

    /// Insert at an anchor's index, then move that anchor and every later one up by 1.
    pub fn append(&mut self, h: H, anchor: &str, source: Option<String>) -> Result<&Event<H>> {
        let k = self.anchors.position(anchor)?;
        let at = self.anchors.index_at(k);
        self.anchors.shift_from(k);
        Ok(self.push_surface(Op::Insert(at), h, source))
    }

    /// Insert at a position that is not an anchor (patching): anchors at `p` or later move up.
    pub fn insert_at(&mut self, p: usize, h: H) -> Result<&Event<H>> {
        if p > self.len() {
            return Err(Error::Index(format!(
                "position {p} is outside the {}-message transcript",
                self.len()
            )));
        }
        self.anchors.shift_at_or_after(p);
        Ok(self.push_surface(Op::Insert(p), h, None))
    }

    /// Replace `first..=last` by one message that inherits the first shadowed `created_at`.
    /// `Ok(None)` when the range is outside the transcript (the caller warns).
    pub fn replace_range(&mut self, first: usize, last: usize, h: H) -> Result<Option<&Event<H>>> {
        if first > last {
            return Err(Error::Value(format!(
                "replace range {first}..{last} is descending"
            )));
        }
        if last >= self.len() {
            return Ok(None);
        }
        let inherited = self.raw_at(first).expect("in range").message().created_at;
        let h = if h.message().created_at == inherited {
            h
        } else {
            let mut m = h.message().clone();
            m.created_at = inherited;
            H::wrap(m)
        };
        self.anchors.collapse(first, last);
        Ok(Some(self.push_surface(Op::Replace(first, last), h, None)))
    }

    /// A bookkeeping event. The caller has checked the type (refusals are warnings there).
    pub fn log_event(&mut self, kind: EventType, data: Map<String, Value>) -> Result<&Event<H>> {
        if !kind.is_bookkeeping() {
            return Err(Error::Value(format!(
                "{} is not a bookkeeping event type",
                kind.name()
            )));
        }
        Ok(self.push(kind, time::now(), data, None))
    }

    pub(crate) fn push_materialize(&mut self, data: Map<String, Value>) -> &Event<H> {
        self.push(EventType::Materialize, time::now(), data, None)
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
            for (id, name) in m.calls() {
                if answered.contains(&id) || !seen.insert(id.clone()) {
                    continue;
                }
                let mut t = Message::new(Role::Tool, Content::Text(INTERRUPTED.into()));
                t.tool_call_id = Some(id);
                t.name = name;
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

    /// Seed messages as inserts at the `messages` anchor (construction, v1 loading).
    pub fn seed(&mut self, messages: impl IntoIterator<Item = H>) -> Result<()> {
        for h in messages {
            self.append(h, "messages", None)?;
        }
        Ok(())
    }

    /// Hook id → the transcript messages carrying it, in transcript order.
    pub fn hook_index(&self) -> IndexMap<String, Vec<H>> {
        let mut idx: IndexMap<String, Vec<H>> = IndexMap::new();
        for s in self.transcript.iter() {
            let h = self.handle(s);
            for id in &h.message().hook_ids {
                idx.entry(id.clone()).or_default().push(h.clone());
            }
        }
        idx
    }
}
