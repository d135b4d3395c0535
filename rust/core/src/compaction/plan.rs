//! The plan: which messages a summary may stand for.
//!
//! The range starts after the head — the special messages, the leading system messages, and
//! the first summary right after them (an earlier compaction's, kept so summaries never pile
//! up: later ones are summarized again) — and ends where the kept suffix begins: the longest
//! suffix within `keep_tokens` (or the last `keep_last` messages), found by binary search over
//! the suffix sums the token window keeps. Where that cut would split a call group, the kept
//! suffix grows back to the group's start. Pinned messages, with their whole group, stay out
//! of it, leaving several ranges.

use super::groups::{clean_cut, Group};
use super::KEY;
use crate::context::{Context, MessageHandle};
use crate::error::{Error, Result};
use crate::message::Role;
use crate::tokens::Encoding;

#[derive(Debug, Clone)]
pub struct PlanOptions {
    pub max_tokens: u64,
    /// Default `max_tokens / 2` (when `keep_last` is not given).
    pub keep_tokens: Option<u64>,
    pub keep_last: Option<usize>,
    pub encoding: Encoding,
    /// Positions never summarized (nor their call groups).
    pub pinned: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Plan<H> {
    /// Inclusive position ranges, oldest first, disjoint and not adjacent.
    pub ranges: Vec<(usize, usize)>,
    /// The logged messages of the ranges, in order.
    pub messages: Vec<H>,
    /// The same messages as `messages` shows them (dynamic ones resolved); `None` when that
    /// is `messages` itself (none of them is dynamic).
    pub shown: Option<Vec<H>>,
    /// The id of the context planned.
    pub context: String,
    /// `next_seq` when planned.
    pub based_on: u64,
    /// Tokens of the summarized messages as shown.
    pub tokens_before: u64,
    pub encoding: Encoding,
}

impl<H> Plan<H> {
    pub fn first(&self) -> usize {
        self.ranges[0].0
    }

    pub fn last(&self) -> usize {
        self.ranges[self.ranges.len() - 1].1
    }
}

impl<H: MessageHandle> Context<H> {
    /// Whether the message at `p` is a summary: written by a compaction, or marked as one.
    pub(crate) fn is_summary(&self, p: usize) -> bool {
        let Some(seq) = self.transcript().get(p) else {
            return false;
        };
        self.events()[seq as usize].data.get(KEY).is_some()
            || self.handle(seq).message().metadata.contains_key(KEY)
    }

    /// The first position a compaction may summarize: after the special messages, the
    /// leading system messages and the summary right after them.
    pub(crate) fn compactable_start(&self) -> usize {
        let (sp, td) = self.special_positions();
        let mut start = [sp, td]
            .into_iter()
            .flatten()
            .map(|p| p + 1)
            .max()
            .unwrap_or(0);
        let is_head = |p: usize| {
            Some(p) == sp
                || Some(p) == td
                || self
                    .raw_at(p)
                    .is_some_and(|h| matches!(h.message().role, Role::System | Role::Developer))
        };
        let mut p = 0;
        while p < self.len() && is_head(p) {
            p += 1;
        }
        start = start.max(p);
        if start < self.len() && self.is_summary(start) {
            start += 1;
        }
        start
    }

    /// What to summarize so that the context fits `max_tokens`; `None` when it already fits,
    /// or nothing can be summarized.
    pub fn plan_compaction(&mut self, o: &PlanOptions) -> Result<Option<Plan<H>>> {
        let enc = o.encoding;
        if let Some(&p) = o.pinned.iter().find(|&&p| p >= self.len()) {
            return Err(Error::out_of_range(format!(
                "pinned position {p} is outside the {}-message transcript",
                self.len()
            )));
        }
        self.ensure_sums(enc)?;
        if self.total_tokens(enc)? <= o.max_tokens {
            return Ok(None);
        }
        let start = self.compactable_start();
        // The kept suffix meets every limit given: it begins at the latest of their starts.
        let mut cut = 0;
        if let Some(k) = o.keep_last {
            cut = self.len().saturating_sub(k);
        }
        if o.keep_tokens.is_some() || o.keep_last.is_none() {
            let keep = o.keep_tokens.unwrap_or(o.max_tokens / 2);
            let (sp, td) = self.special_positions();
            let mut specials = Vec::new();
            for p in [sp, td].into_iter().flatten() {
                specials.push((p, self.resolved_tokens(p, enc)?));
            }
            cut = cut.max(self.suffix_start(keep, &specials, enc)?.0);
        }
        if cut <= start {
            return Ok(None);
        }
        // A summary before the range (the leading one) may make calls too: its group starts
        // the scan, and stays out like a pinned one.
        let scan_from = if start > 0 && self.is_summary(start - 1) {
            start - 1
        } else {
            start
        };
        let (groups, marked) = self.call_groups(scan_from, cut);
        let cut = clean_cut(&groups, cut);
        if cut <= start {
            return Ok(None);
        }
        let pins: Vec<usize> = o
            .pinned
            .iter()
            .chain(&marked)
            .copied()
            .filter(|p| (start..cut).contains(p))
            .collect();
        let ranges = ranges_between(start, cut, &groups, &pins);
        if ranges.is_empty() {
            return Ok(None);
        }
        let count: usize = ranges.iter().map(|&(a, b)| b - a + 1).sum();
        let mut messages = Vec::with_capacity(count);
        let mut shown = Vec::with_capacity(count);
        let mut tokens_before = 0;
        let mut dynamic = false;
        for &(a, b) in &ranges {
            let seqs: Vec<u32> = self.transcript().iter_from(a).take(b - a + 1).collect();
            for s in seqs {
                messages.push(self.handle(s).clone());
                dynamic |= self.hooked().contains(s);
                let h = self.resolved(s);
                tokens_before += crate::tokens::message_tokens(h.message(), enc)?;
                shown.push(h);
            }
        }
        let shown = dynamic.then_some(shown);
        Ok(Some(Plan {
            ranges,
            messages,
            shown,
            context: self.id().to_string(),
            based_on: self.next_seq(),
            tokens_before,
            encoding: enc,
        }))
    }
}

/// `[start, cut)` without the pinned positions (`pins`, all inside it), the groups holding
/// them and any group begun before `start`, as inclusive runs.
fn ranges_between(
    start: usize,
    cut: usize,
    groups: &[Group],
    pins: &[usize],
) -> Vec<(usize, usize)> {
    let mut out_: Vec<bool> = vec![false; cut - start];
    let mut exclude = |p: usize| {
        if (start..cut).contains(&p) {
            out_[p - start] = true;
        }
    };
    for &p in pins {
        exclude(p);
    }
    for g in groups {
        if g.lo() < start || pins.iter().any(|&p| g.holds(p)) {
            g.members().for_each(&mut exclude);
        }
    }
    let mut ranges = Vec::new();
    let mut run: Option<usize> = None;
    for p in start..=cut {
        let kept_out = p == cut || out_[p - start];
        match (run, kept_out) {
            (None, false) => run = Some(p),
            (Some(a), true) => {
                ranges.push((a, p - 1));
                run = None;
            }
            _ => {}
        }
    }
    ranges
}
