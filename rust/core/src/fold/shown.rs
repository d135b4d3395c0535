//! The shown view: `messages` as a caller reads it — the fold with dynamic messages resolved
//! (cached until the bindings change) and the system-prompt overlay applied to its head.

use crate::context::{Context, MessageHandle};
use crate::message::{part_type, text_part, Content, Message, Role};
use serde_json::Value;

impl<H: MessageHandle> Context<H> {
    /// The message as shown: with its hooks resolved. Derived messages are cached until the
    /// bindings change.
    pub(crate) fn resolved(&mut self, seq: u32) -> H {
        let h = self.handle(seq);
        if !self.hooked().contains(seq) {
            return h.clone();
        }
        if let Some(r) = self.cached_resolution(seq) {
            return r.clone();
        }
        let r = match self.resolve(h.message()) {
            Some(m) => H::wrap(m),
            None => h.clone(),
        };
        self.cache_resolution(seq, r.clone());
        r
    }

    /// The leading message as shown, when it is not the transcript's own: the leading system
    /// message with the overlay appended, or — when the transcript does not lead with a
    /// system message — a new one holding the configured system prompt and the overlay. The
    /// flag says whether it stands for the transcript's head. `None` when neither applies.
    pub(crate) fn overlay_head(&mut self) -> Option<(bool, H)> {
        if self.overlay().is_none() && self.shown_prompt().is_none() {
            return None;
        }
        let head_seq = self.transcript().get(0);
        let key = head_seq.unwrap_or(u32::MAX);
        let head = head_seq.map(|s| self.resolved(s));
        let replaces_head = head
            .as_ref()
            .is_some_and(|h| h.message().role == Role::System);
        if let Some(h) = self.cached_head(key) {
            return Some((replaces_head, h.clone()));
        }
        let m = match &head {
            Some(h) if replaces_head => with_overlay(h.message(), self.overlay()?),
            _ => {
                let at = head
                    .as_ref()
                    .map_or(self.created_at(), |h| h.message().created_at);
                overlay_message(&self.lead_text()?, at, self.id())
            }
        };
        let h = H::wrap(m);
        self.cache_head(key, h.clone());
        Some((replaces_head, h))
    }

    /// The text of the system message shown before a transcript that does not lead with one:
    /// the configured system prompt, then the overlay, joined by a blank line.
    pub(crate) fn lead_text(&self) -> Option<String> {
        match (self.shown_prompt(), self.overlay()) {
            (Some(p), Some(o)) => Some(format!("{p}\n\n{o}")),
            (Some(t), None) | (None, Some(t)) => Some(t.to_string()),
            (None, None) => None,
        }
    }

    /// `messages`: the fold with dynamic messages resolved and the overlay applied.
    pub fn messages(&mut self) -> Vec<H> {
        let mut out = Vec::with_capacity(self.len() + 1);
        self.visit_messages(|h| out.push(h.clone()));
        out
    }

    /// Visit `messages` in order without collecting them (the binding builds its list
    /// straight from the handles).
    pub fn visit_messages(&mut self, mut f: impl FnMut(&H)) {
        let skip = match self.overlay_head() {
            Some((replaces, h)) => {
                f(&h);
                usize::from(replaces)
            }
            None => 0,
        };
        if self.hooked().any() {
            self.resolve_fold();
        }
        for s in self.transcript().iter().skip(skip) {
            f(self.shown(s));
        }
    }

    /// Resolve every dynamic message of the fold into the cache, so reads can borrow.
    pub(crate) fn resolve_fold(&mut self) {
        let pending: Vec<u32> = self
            .transcript()
            .iter()
            .filter(|&s| self.hooked().contains(s) && self.cached_resolution(s).is_none())
            .collect();
        for s in pending {
            self.resolved(s);
        }
    }

    /// The message at a fold seq as shown, after `resolve_fold`.
    pub(crate) fn shown(&self, seq: u32) -> &H {
        let h = self.handle(seq);
        if !self.hooked().contains(seq) {
            return h;
        }
        self.cached_resolution(seq).unwrap_or(h)
    }

    /// The message at transcript position `p` (< len) as `messages` shows it: the same
    /// object, resolved, with the overlay when it lands there.
    pub fn shown_at(&mut self, p: usize) -> H {
        if p == 0 {
            if let Some((true, h)) = self.overlay_head() {
                return h;
            }
        }
        let s = self.transcript().get(p).expect("in range");
        self.resolved(s)
    }

    /// The last `k` messages of `messages` (all of them when there are fewer), the same
    /// objects, without building the rest: O(log n) to find the start, then O(k).
    pub fn shown_tail(&mut self, k: usize) -> Vec<H> {
        let shown = self.shown_len();
        self.shown_range(shown.saturating_sub(k), shown)
    }

    /// `messages[start..stop]` (clamped to what is shown), the same objects, without building
    /// the rest: O(log n) to find the start, then O(stop - start).
    pub fn shown_range(&mut self, start: usize, stop: usize) -> Vec<H> {
        let head = self.overlay_head();
        let shown = self.len() + usize::from(matches!(head, Some((false, _))));
        let stop = stop.min(shown);
        if start >= stop {
            return Vec::new();
        }
        // (transcript position of the first kept message after the lead, the lead)
        let (first, lead) = match head {
            Some((false, h)) if start == 0 => (0, Some(h)),
            Some((false, _)) => (start - 1, None),
            Some((true, h)) if start == 0 => (1, Some(h)),
            _ => (start, None),
        };
        let take = stop - start - usize::from(lead.is_some());
        let seqs: Vec<u32> = self.transcript().iter_from(first).take(take).collect();
        let mut out = Vec::with_capacity(stop - start);
        out.extend(lead);
        for s in seqs {
            out.push(self.resolved(s));
        }
        out
    }

    pub fn shown_len(&mut self) -> usize {
        match self.overlay_head() {
            Some((false, _)) => self.len() + 1,
            _ => self.len(),
        }
    }

    pub fn last_shown(&mut self) -> Option<H> {
        match self.transcript().get(self.len().wrapping_sub(1)) {
            Some(s)
                if self.len() > 1
                    || (self.overlay().is_none() && self.shown_prompt().is_none()) =>
            {
                Some(self.resolved(s))
            }
            _ => self.messages().pop(),
        }
    }
}

/// A leading system message with the overlay appended: to its str content, or to the last
/// text part of its parts (a text part is added if it has none).
pub(crate) fn with_overlay(m: &Message, overlay: &str) -> Message {
    let mut m = m.clone();
    m.content = match &m.content {
        Content::None => Content::Text(format!("\n\n{overlay}")),
        Content::Text(t) => Content::Text(format!("{t}\n\n{overlay}")),
        Content::Parts(parts) => {
            let mut parts = parts.clone();
            match parts.iter().rposition(|p| part_type(p) == Some("text")) {
                Some(i) => {
                    let old = parts[i]
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    parts[i].insert("text".into(), Value::String(format!("{old}\n\n{overlay}")));
                }
                None => parts.push(text_part(overlay)),
            }
            Content::Parts(parts)
        }
    };
    m
}

/// The overlay as a message of its own, for a transcript that does not lead with a system
/// message. Its id is stable for as long as the head stays the same.
pub(crate) fn overlay_message(
    overlay: &str,
    created_at: crate::time::Micros,
    context_id: &str,
) -> Message {
    let mut m = Message::new(Role::System, Content::Text(overlay.to_string()));
    m.created_at = created_at;
    m.id = format!("overlay-{context_id}");
    m
}
