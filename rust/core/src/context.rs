//! The context core: the event log, the live fold, anchors, the content map and the overlay.
//! Every mutation appends events; the fold is maintained by applying each event as it is
//! written, so reading never re-folds.

use crate::anchors::Anchors;
use crate::event::{Event, EventType};
use crate::fold::Transcript;
use crate::message::Message;
use crate::time::{self, Micros};
use indexmap::IndexMap;
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

#[derive(Debug, Clone)]
pub struct Context<H> {
    pub id: String,
    pub created_at: Micros,
    pub origin_context_id: Option<String>,
    pub children: Vec<String>,
    pub(crate) events: Vec<Event<H>>,
    pub(crate) transcript: Transcript,
    pub(crate) anchors: Anchors,
    /// sha256 hex → text.
    pub(crate) content_map: IndexMap<String, String>,
    /// hook id → sha256 hex of its current text.
    pub(crate) bindings: IndexMap<String, String>,
    pub(crate) overlay: Option<String>,
    /// The agent's configured system prompt (a runtime field): shown as a leading system
    /// message when the transcript has none. Never logged, not a position.
    pub(crate) system_prompt: Option<String>,
    /// Resolved dynamic messages by seq, and the overlaid leading message; cleared whenever
    /// what they derive from changes.
    pub(crate) resolved: HashMap<u32, H>,
    pub(crate) shown_head: Option<(u32, H)>,
    /// The seqs of surface events whose message carries hooks: reads resolve only those, and
    /// skip resolution entirely when there are none.
    pub(crate) hooked: HookedSeqs,
    /// Seqs of the `materialize` events, oldest first: history replays bindings from them.
    pub(crate) materialized: Vec<u32>,
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
    pub(crate) fn mark(&mut self, seq: u32) {
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
            system_prompt: None,
            resolved: HashMap::new(),
            shown_head: None,
            hooked: HookedSeqs::default(),
            materialized: Vec::new(),
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
        match &self.events[seq as usize].message {
            Some(h) => h,
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

    pub fn anchors(&self) -> &Anchors {
        &self.anchors
    }

    /// sha256 hex → text, every text ever materialized.
    pub fn content_map(&self) -> &IndexMap<String, String> {
        &self.content_map
    }

    /// Take over `parent`'s content map and bindings, and name it as origin (a child made by
    /// `create(parent_context=...)`, which the parent does not list among its children).
    pub fn inherit(&mut self, parent: &Context<H>) {
        self.origin_context_id = Some(parent.id.clone());
        self.content_map = parent.content_map.clone();
        self.bindings = parent.bindings.clone();
    }

    pub fn overlay(&self) -> Option<&str> {
        self.overlay.as_deref()
    }

    pub fn set_overlay(&mut self, overlay: Option<String>) {
        self.overlay = overlay;
        self.shown_head = None;
    }

    /// The configured system prompt, as set.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system_prompt.as_deref()
    }

    /// The configured system prompt when it is shown at all (set and not empty).
    pub(crate) fn shown_prompt(&self) -> Option<&str> {
        self.system_prompt.as_deref().filter(|t| !t.is_empty())
    }

    /// Set the configured system prompt, shown when the transcript does not lead with a
    /// system message of its own (`None` or `""`: nothing shown).
    pub fn set_system_prompt(&mut self, text: Option<String>) {
        self.system_prompt = text;
        self.shown_head = None;
    }

    /// Hook id → the transcript messages carrying it, in transcript order, as `messages`
    /// shows them.
    pub fn hook_index(&mut self) -> IndexMap<String, Vec<H>> {
        let mut idx: IndexMap<String, Vec<H>> = IndexMap::new();
        let hooked: Vec<(usize, u32)> = self
            .transcript
            .iter()
            .enumerate()
            .filter(|&(_, s)| self.hooked.contains(s))
            .collect();
        for (p, s) in hooked {
            let shown = self.shown_at(p);
            for id in &self.handle(s).message().hook_ids {
                idx.entry(id.clone()).or_default().push(shown.clone());
            }
        }
        idx
    }
}
