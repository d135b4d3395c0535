//! Forks: a new context holding a subsequence of this one's transcript (the same message
//! handles), with a fresh log, the anchor layout kept, and lineage recorded.

use crate::context::{Context, MessageHandle, Seed};
use crate::message::{part_type, Content};

impl<H: MessageHandle> Context<H> {
    /// Fork keeping the non-special positions `kept` (sorted), always carrying the special
    /// messages, or the given replacements for them.
    pub fn fork(&mut self, kept: &[usize], sp: Option<H>, td: Option<H>) -> Context<H> {
        let (sp_pos, td_pos) = self.special_positions();
        let mut sel: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|p| Some(*p) != sp_pos && Some(*p) != td_pos)
            .collect();
        sel.extend(sp_pos);
        sel.extend(td_pos);
        sel.sort_unstable();
        sel.dedup();
        // One sequential walk from the first selected position: windows keep long runs.
        let first = sel.first().copied().unwrap_or(0);
        let mut wanted = sel.iter().peekable();
        let mut seeds: Vec<Seed<H>> = Vec::with_capacity(sel.len());
        for (p, seq) in (first..).zip(self.transcript().iter_from(first)) {
            if wanted.peek().is_none() {
                break;
            }
            if wanted.peek() != Some(&&p) {
                continue;
            }
            wanted.next();
            seeds.push(match (&sp, &td) {
                (Some(s), _) if Some(p) == sp_pos => Seed::of(s.clone()),
                (_, Some(t)) if Some(p) == td_pos => Seed::of(t.clone()),
                _ => self.seed_of(seq),
            });
        }
        let anchors = self.anchors().project(&sel);
        let mut child = self.child(seeds, anchors);
        // A replacement for a special the parent does not have goes at the end of its partition.
        if let (Some(s), None) = (sp, sp_pos) {
            child.append_or_front(s, "system_prompt");
        }
        if let (Some(t), None) = (td, td_pos) {
            child.append_or_front(t, "tools");
        }
        child
    }

    fn append_or_front(&mut self, h: H, anchor: &str) {
        if self.append(h.clone(), anchor, None).is_err() {
            let _ = self.insert_at(0, h);
        }
    }

    /// Python slice bounds over event seqs, relative to `next_seq`.
    pub fn fork_insert_sequence(
        &mut self,
        sp: Option<H>,
        td: Option<H>,
        start: Option<i64>,
        end: Option<i64>,
    ) -> Context<H> {
        let m = self.next_seq() as i64;
        let clamp = |v: Option<i64>, default: i64| match v {
            None => default,
            Some(v) if v < 0 => (m + v).max(0),
            Some(v) => v.min(m),
        };
        let (lo, hi) = (clamp(start, 0) as u32, clamp(end, m) as u32);
        let kept: Vec<usize> = self
            .transcript()
            .iter()
            .enumerate()
            .filter(|(_, s)| (lo..hi).contains(s))
            .map(|(p, _)| p)
            .collect();
        self.fork(&kept, sp, td)
    }

    /// Every `thinking` part removed; a message left with no parts and no tool calls is skipped.
    pub fn strip_thinking(&mut self) -> Context<H> {
        let mut kept = Vec::new();
        let mut seeds = Vec::new();
        for (p, seq) in self.transcript().iter().enumerate() {
            let h = self.handle(seq);
            let m = h.message();
            let derived = match &m.content {
                Content::Parts(parts) if parts.iter().any(|x| part_type(x) == Some("thinking")) => {
                    let rest: Vec<_> = parts
                        .iter()
                        .filter(|x| part_type(x) != Some("thinking"))
                        .cloned()
                        .collect();
                    if rest.is_empty() && m.tool_calls.is_empty() {
                        continue;
                    }
                    let mut d = m.clone();
                    d.content = Content::Parts(rest);
                    Seed::of(H::wrap(d))
                }
                _ => self.seed_of(seq),
            };
            kept.push(p);
            seeds.push(derived);
        }
        let anchors = self.anchors().project(&kept);
        self.child(seeds, anchors)
    }
}
