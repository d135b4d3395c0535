//! Forks: a new context holding a subsequence of this one's transcript (the same message
//! handles), with a fresh log, the anchor layout kept, and lineage recorded.

use crate::context::{Context, MessageHandle, Seed};
use crate::error::{Error, Result};
use crate::message::{part_type, Content, Kind};
use crate::time;

impl<H: MessageHandle> Context<H> {
    fn first_of_kind(&self, anchor: &str, kind: Kind) -> Option<usize> {
        let (start, end) = self.anchors.partition(anchor)?;
        (start..end.min(self.len()))
            .find(|&p| self.raw_at(p).is_some_and(|h| h.message().kind == kind))
    }

    /// Positions of the special messages: the first `SystemPromptMessage` in the
    /// `system_prompt` partition and the first `ToolDefinitionsMessage` in `tools`.
    pub fn special_positions(&self) -> (Option<usize>, Option<usize>) {
        (
            self.first_of_kind("system_prompt", Kind::SystemPrompt),
            self.first_of_kind("tools", Kind::ToolDefinitions),
        )
    }

    pub fn system_prompt_message(&self) -> Option<H> {
        self.special_positions()
            .0
            .and_then(|p| self.raw_at(p).cloned())
    }

    pub fn tool_definitions_message(&self) -> Option<H> {
        self.special_positions()
            .1
            .and_then(|p| self.raw_at(p).cloned())
    }

    /// A child made of `messages` (in order) with `anchors` already laid out for them.
    fn child_of(&mut self, seeds: Vec<Seed<H>>, anchors: crate::anchors::Anchors) -> Context<H> {
        let mut child = Context::new(crate::message::new_id(), time::now());
        child.seed_in_order(seeds);
        child.anchors = anchors;
        child.content_map = self.content_map.clone();
        child.bindings = self.bindings.clone();
        child.overlay = self.overlay.clone();
        child.origin_context_id = Some(self.id.clone());
        self.children.push(child.id.clone());
        child
    }

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
        for (p, seq) in (first..).zip(self.transcript.iter_from(first)) {
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
        let anchors = self.anchors.project(&sel);
        let mut child = self.child_of(seeds, anchors);
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
            .transcript
            .iter()
            .enumerate()
            .filter(|(_, s)| (lo..hi).contains(s))
            .map(|(p, _)| p)
            .collect();
        self.fork(&kept, sp, td)
    }

    /// Drop tool results at the start of a kept suffix: a window never begins with one.
    pub(crate) fn drop_leading_tool_results(&self, kept: &mut Vec<usize>) {
        let n = kept
            .iter()
            .take_while(|&&p| self.raw_at(p).is_some_and(|h| h.message().is_tool_result()))
            .count();
        kept.drain(..n);
    }

    /// The last `count` non-special messages; `None` when that is all of them.
    pub fn rolling_sequence_window(&mut self, count: i64) -> Result<Option<Context<H>>> {
        let count = usize::try_from(count)
            .map_err(|_| Error::Value(format!("count must be non-negative, got {count}")))?;
        let (sp, td) = self.special_positions();
        let specials = [sp, td].iter().flatten().count();
        if count >= self.len() - specials {
            return Ok(None);
        }
        let mut kept: Vec<usize> = (0..self.len())
            .rev()
            .filter(|p| Some(*p) != sp && Some(*p) != td)
            .take(count)
            .collect();
        kept.reverse();
        self.drop_leading_tool_results(&mut kept);
        Ok(Some(self.fork(&kept, None, None)))
    }

    /// Every `thinking` part removed; a message left with no parts and no tool calls is skipped.
    pub fn strip_thinking(&mut self) -> Context<H> {
        let mut kept = Vec::new();
        let mut seeds = Vec::new();
        for (p, seq) in self.transcript.iter().enumerate() {
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
        let anchors = self.anchors.project(&kept);
        self.child_of(seeds, anchors)
    }
}
