//! The context core: the event log, the live fold, anchors, the content map and the overlay.
//! Every mutation appends events; the fold is maintained by applying each event as it is
//! written, so reading never re-folds.
//!
//! The state is private to this module. Events enter only through [`Context::apply`] (or its
//! bulk form for an empty log, [`Context::seed_in_order`]), which appends and folds by one
//! rule; the other modules read through accessors and change the rest (anchors, bindings,
//! content, lineage, the caches derived from the fold) through the methods named here.

use crate::anchors::Anchors;
use crate::error::{Error, Result};
use crate::event::{Event, EventData, EventType, Op};
use crate::fold::Transcript;
use crate::log::misfit;
use crate::message::Message;
use crate::time::{self, Micros};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
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
    id: String,
    created_at: Micros,
    origin_context_id: Option<String>,
    children: Vec<String>,
    events: Vec<Event<H>>,
    transcript: Transcript,
    anchors: Anchors,
    /// sha256 hex → text.
    content_map: IndexMap<String, String>,
    /// hook id → sha256 hex of its current text.
    bindings: IndexMap<String, String>,
    overlay: Option<String>,
    /// The agent's configured system prompt (a runtime field): shown as a leading system
    /// message when the transcript has none. Never logged, not a position.
    system_prompt: Option<String>,
    /// Resolved dynamic messages by seq, and the overlaid leading message; cleared whenever
    /// what they derive from changes.
    resolved: HashMap<u32, H>,
    shown_head: Option<(u32, H)>,
    /// The seqs of surface events whose message carries hooks: reads resolve only those, and
    /// skip resolution entirely when there are none.
    hooked: HookedSeqs,
    /// Seqs of the `materialize` events, oldest first: history replays bindings from them.
    materialized: Vec<u32>,
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

/// The log: the one way events enter a context.
impl<H: MessageHandle> Context<H> {
    /// The one way an event enters the log. `op` must fit the transcript (`OutOfRange`
    /// otherwise, and nothing changes); a surface event's `message` goes where `op` says.
    pub(crate) fn apply(
        &mut self,
        kind: EventType,
        time: Micros,
        data: Map<String, Value>,
        op: Option<Op>,
        message: Option<H>,
    ) -> Result<&Event<H>> {
        if let Some(op) = op {
            if let Some(why) = misfit(op, self.len()) {
                return Err(Error::out_of_range(why));
            }
        }
        let seq = self.events.len() as u32;
        if let Some(op) = op {
            match op {
                Op::Insert(p) => self.transcript.insert(p, seq),
                Op::Replace(a, b) => self.transcript.replace(a, b, seq),
                Op::Remove(a, b) => self.transcript.remove(a, b),
            }
            // The overlaid head is derived from position 0: anything there makes it stale.
            if op.first() == 0 || matches!(op, Op::Replace(..)) {
                self.shown_head = None;
            }
        }
        let hooked = message
            .as_ref()
            .is_some_and(|h| !h.message().hook_ids.is_empty());
        self.record(kind, time, EventData::new(data), op, message, hooked);
        Ok(self.events.last().expect("just recorded"))
    }

    /// Fill an empty log with `seeds` in order, one insert event each at the end of the
    /// transcript: `apply` in bulk (every such insert fits), with the fold built in one pass
    /// (forks, windows, the versionless layout). Anchors are the caller's to set.
    pub(crate) fn seed_in_order(&mut self, seeds: Vec<Seed<H>>) {
        debug_assert!(self.events.is_empty());
        let n = seeds.len();
        self.events.reserve(n);
        for (i, s) in seeds.into_iter().enumerate() {
            // `record` for a surface insert, which is never a `materialize`: a window is made
            // every turn, and this loop without that test is measurably faster.
            debug_assert!(s.kind.is_surface());
            if s.hooked {
                self.hooked.mark(i as u32);
            }
            self.events.push(Event {
                seq: i as u64,
                kind: s.kind,
                time: s.time,
                data: EventData::default(),
                op: Some(Op::Insert(i)),
                message: Some(s.handle),
            });
        }
        let seqs: Vec<u32> = (0..n as u32).collect();
        self.transcript = Transcript::from_seqs(&seqs);
        self.shown_head = None;
    }

    /// Append an event whose op is already folded (`hooked`: its message carries hooks):
    /// the indexes of hooked and `materialize` events follow the log.
    fn record(
        &mut self,
        kind: EventType,
        time: Micros,
        data: EventData,
        op: Option<Op>,
        message: Option<H>,
        hooked: bool,
    ) {
        let seq = self.events.len() as u32;
        if hooked {
            self.hooked.mark(seq);
        }
        if kind == EventType::Materialize {
            self.materialized.push(seq);
        }
        self.events.push(Event {
            seq: seq as u64,
            kind,
            time,
            data,
            op,
            message,
        });
    }
}

/// What the other modules read.
impl<H: MessageHandle> Context<H> {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn created_at(&self) -> Micros {
        self.created_at
    }

    /// The context this one was forked or created from, if any.
    pub fn origin_context_id(&self) -> Option<&str> {
        self.origin_context_id.as_deref()
    }

    /// The ids of the contexts forked from this one, oldest first.
    pub fn children(&self) -> &[String] {
        &self.children
    }

    /// The fold: transcript position → seq of the surface event holding the message.
    pub(crate) fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Which surface events carry hooks.
    pub(crate) fn hooked(&self) -> &HookedSeqs {
        &self.hooked
    }

    /// Seqs of the `materialize` events, oldest first.
    pub(crate) fn materialized(&self) -> &[u32] {
        &self.materialized
    }

    /// Hook id → sha256 hex of the text it is bound to now.
    pub(crate) fn bindings(&self) -> &IndexMap<String, String> {
        &self.bindings
    }

    /// The resolved form of the message at `seq`, when one is cached.
    pub(crate) fn cached_resolution(&self, seq: u32) -> Option<&H> {
        self.resolved.get(&seq)
    }

    /// The overlaid leading message cached for the head at `key`.
    pub(crate) fn cached_head(&self, key: u32) -> Option<&H> {
        self.shown_head
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, h)| h)
    }
}

/// The state besides the log, changed by name.
impl<H: MessageHandle> Context<H> {
    /// The anchor layout, for the log's anchor rules (`Anchors` keeps itself ordered).
    pub(crate) fn anchors_mut(&mut self) -> &mut Anchors {
        &mut self.anchors
    }

    /// Lay the anchors out anew (a loaded document's, a fork's projection).
    pub(crate) fn set_anchors(&mut self, anchors: Anchors) {
        self.anchors = anchors;
    }

    /// Where this context came from and what was forked from it, as a document records them.
    pub(crate) fn set_lineage(&mut self, origin: Option<String>, children: Vec<String>) {
        self.origin_context_id = origin;
        self.children = children;
    }

    /// Take over a content map (sha256 hex → text) read from a document.
    pub(crate) fn set_content_map(&mut self, content: IndexMap<String, String>) {
        self.content_map = content;
    }

    /// Remember a text under its hash (kept once: the first text stays).
    pub(crate) fn keep_content(&mut self, hash: String, text: String) {
        self.content_map.entry(hash).or_insert(text);
    }

    /// Bind `hook` to the text with hash `hash`; whether that changed what it was bound to.
    pub(crate) fn bind(&mut self, hook: String, hash: String) -> bool {
        self.bindings.insert(hook, hash.clone()).as_ref() != Some(&hash)
    }

    /// Take over the bindings a document or a store's state records.
    pub(crate) fn set_bindings(&mut self, bindings: IndexMap<String, String>) {
        self.bindings = bindings;
    }

    /// Take over `parent`'s content map and bindings, and name it as origin (a child made by
    /// `create(parent_context=...)`, which the parent does not list among its children).
    pub fn inherit(&mut self, parent: &Context<H>) {
        self.origin_context_id = Some(parent.id.clone());
        self.content_map = parent.content_map.clone();
        self.bindings = parent.bindings.clone();
    }

    /// A new context seeded with `seeds` and laid out by `anchors`, that shares this one's
    /// content map, bindings, overlay and system prompt, names it as origin, and is listed
    /// among its children.
    pub(crate) fn child(&mut self, seeds: Vec<Seed<H>>, anchors: Anchors) -> Context<H> {
        let mut child = Context::new(crate::message::new_id(), time::now());
        child.seed_in_order(seeds);
        child.anchors = anchors;
        child.content_map = self.content_map.clone();
        child.bindings = self.bindings.clone();
        child.overlay = self.overlay.clone();
        child.system_prompt = self.system_prompt.clone();
        child.origin_context_id = Some(self.id.clone());
        self.children.push(child.id.clone());
        child
    }
}

/// The caches derived from the fold: resolved dynamic messages, the overlaid head, and the
/// token sums the fold keeps per chunk.
impl<H: MessageHandle> Context<H> {
    pub(crate) fn cache_resolution(&mut self, seq: u32, h: H) {
        self.resolved.insert(seq, h);
    }

    pub(crate) fn cache_head(&mut self, key: u32, h: H) {
        self.shown_head = Some((key, h));
    }

    /// A chunk's token sum for the encoding in `slot`, counted; `refresh_token_sums` after.
    pub(crate) fn cache_chunk_tokens(&mut self, chunk: usize, slot: usize, sum: u64) {
        self.transcript.set_chunk_sum(chunk, slot, sum);
    }

    pub(crate) fn refresh_token_sums(&mut self, slot: usize) {
        self.transcript.refresh_sums(slot);
    }

    /// Forget what derives from a hook now bound to another text: the resolutions of the
    /// messages carrying one of `rebound`, the overlaid head and the token sums. The others
    /// keep their resolved objects, so a caller still holds what `messages` shows.
    pub(crate) fn forget_rebound(&mut self, rebound: &HashSet<String>) {
        let events = &self.events;
        self.resolved
            .retain(|&s, _| match &events[s as usize].message {
                Some(h) => !h.message().hook_ids.iter().any(|k| rebound.contains(k)),
                None => false,
            });
        self.shown_head = None;
        self.transcript.forget_sums();
    }

    /// Forget everything derived from the fold and the bindings.
    pub(crate) fn forget_derived(&mut self) {
        self.resolved.clear();
        self.shown_head = None;
        self.transcript.forget_sums();
    }
}

/// A mark in the log: what an event can change that cannot be read back from the events
/// themselves (the fold — a removal does not say what it removed —, the anchors, the
/// bindings, and the lengths of what only grows), to rewind to.
#[derive(Debug, Clone)]
pub(crate) struct LogMark {
    seq: u64,
    transcript: Transcript,
    anchors: Anchors,
    bindings: IndexMap<String, String>,
    content_len: usize,
    hooked: HookedSeqs,
    materialized: usize,
}

impl LogMark {
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }
}

impl<H: MessageHandle> Context<H> {
    pub(crate) fn mark(&self) -> LogMark {
        LogMark {
            seq: self.next_seq(),
            transcript: self.transcript.clone(),
            anchors: self.anchors.clone(),
            bindings: self.bindings.clone(),
            content_len: self.content_map.len(),
            hooked: self.hooked.clone(),
            materialized: self.materialized.len(),
        }
    }

    /// Whether `mark` is at or before this log's end.
    pub(crate) fn reaches(&self, mark: &LogMark) -> bool {
        mark.seq <= self.next_seq() && mark.materialized <= self.materialized.len()
    }

    /// Drop every event since `mark` and restore the state as it was then (the caller
    /// checked that `mark` is this log's and `reaches` it).
    pub(crate) fn rewind_to(&mut self, mark: &LogMark) {
        self.events.truncate(mark.seq as usize);
        self.transcript = mark.transcript.clone();
        self.anchors = mark.anchors.clone();
        self.bindings = mark.bindings.clone();
        self.content_map.truncate(mark.content_len);
        self.hooked = mark.hooked.clone();
        self.materialized.truncate(mark.materialized);
        self.forget_derived();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Content, Role};

    type Ctx = Context<Arc<Message>>;

    fn msg(text: &str, hooked: bool) -> Arc<Message> {
        let mut m = Message::new(Role::User, Content::Text(text.into()));
        if hooked {
            m.hook_ids = vec![crate::dynamic::hook_id("h")];
        }
        Arc::new(m)
    }

    #[test]
    fn seeding_in_bulk_is_applying_each_insert() {
        let handles: Vec<_> = (0..200).map(|i| msg(&i.to_string(), i % 7 == 0)).collect();
        let mut bulk = Ctx::new("c".into(), 0);
        bulk.seed_in_order(handles.iter().cloned().map(Seed::of).collect());
        let mut one_by_one = Ctx::new("c".into(), 0);
        for (i, h) in handles.iter().enumerate() {
            let (kind, time) = (EventType::for_role(h.role), h.created_at);
            let op = Some(Op::Insert(i));
            one_by_one
                .apply(kind, time, Map::new(), op, Some(h.clone()))
                .unwrap();
        }
        let seqs = |c: &Ctx| c.transcript().iter().collect::<Vec<_>>();
        assert_eq!(seqs(&bulk), seqs(&one_by_one));
        for s in 0..200 {
            assert_eq!(bulk.hooked().contains(s), one_by_one.hooked().contains(s));
        }
        let rt = Map::new();
        assert_eq!(
            bulk.to_json_bytes(&rt).unwrap(),
            one_by_one.to_json_bytes(&rt).unwrap()
        );
    }

    #[test]
    fn an_event_that_does_not_fit_changes_nothing() {
        let mut c = Ctx::new("c".into(), 0);
        c.append(msg("a", true), "messages", None).unwrap();
        let before = c.to_json_bytes(&Map::new()).unwrap();
        let user = EventType::UserMessage;
        for op in [Op::Insert(2), Op::Replace(0, 1), Op::Remove(1, 0)] {
            assert!(c
                .apply(user, 0, Map::new(), Some(op), Some(msg("b", true)))
                .is_err());
        }
        assert_eq!(c.next_seq(), 1);
        assert!(!c.hooked().contains(1));
        assert_eq!(c.to_json_bytes(&Map::new()).unwrap(), before);
        c.apply(EventType::Materialize, 0, Map::new(), None, None)
            .unwrap();
        assert_eq!(c.materialized(), &[1]);
    }

    #[test]
    fn a_rewind_to_a_mark_drops_what_came_after() {
        let mut c = Ctx::new("c".into(), 0);
        c.append(msg("a", false), "messages", None).unwrap();
        let mark = c.mark();
        c.append(msg("b", true), "messages", None).unwrap();
        c.materialize(&[("h".into(), "x".into())]).unwrap();
        assert!(c.reaches(&mark));
        c.rewind_to(&mark);
        assert_eq!((c.next_seq(), c.len()), (1, 1));
        assert!(c.materialized().is_empty() && !c.hooked().any());
        assert!(c.content_map().is_empty() && c.bindings().is_empty());
    }
}
