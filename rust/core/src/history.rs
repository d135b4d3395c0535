//! History: the transcript as of any seq, and how much of it a later transcript
//! still shares. Both read the log; neither changes the context.

use crate::context::{Context, MessageHandle};
use crate::dynamic::hook_id;
use crate::error::{Error, Result};
use crate::event::Op;
use crate::fold::Transcript;
use indexmap::IndexMap;
use serde_json::Value;
use std::collections::HashSet;

impl<H: MessageHandle> Context<H> {
    fn check_seq(&self, seq: i64) -> Result<usize> {
        match u64::try_from(seq) {
            Ok(s) if s <= self.next_seq() => Ok(s as usize),
            _ => Err(Error::out_of_range(format!(
                "seq {seq} is outside [0, {}]",
                self.next_seq()
            ))),
        }
    }

    /// Hook id → content hash as bound when `next_seq` was `seq`, replayed from the
    /// `materialize` events before it. At `next_seq` these are the live bindings (which, for a
    /// context loaded from a layout without events, need not come from events).
    pub(crate) fn bindings_at(&self, seq: u64) -> IndexMap<String, String> {
        if seq == self.next_seq() {
            return self.bindings().clone();
        }
        let mut bound = IndexMap::new();
        let before = self.materialized().partition_point(|&s| u64::from(s) < seq);
        for &s in &self.materialized()[..before] {
            for (hook, hash) in materialized_bindings(self, s) {
                bound.insert(hook, hash);
            }
        }
        bound
    }

    /// The transcript as it was when `next_seq` was `seq`: the fold of events `[0, seq)`,
    /// dynamic messages resolved with the bindings then in force, no overlay.
    pub fn messages_at(&mut self, seq: i64) -> Result<Vec<H>> {
        let n = self.check_seq(seq)?;
        let bindings = self.bindings_at(n as u64);
        let fold = if n == self.events().len() {
            None
        } else {
            let mut t = Transcript::default();
            for e in &self.events()[..n] {
                match e.op {
                    Some(Op::Insert(p)) => t.insert(p, e.seq as u32),
                    Some(Op::Replace(a, b)) => t.replace(a, b, e.seq as u32),
                    Some(Op::Remove(a, b)) => t.remove(a, b),
                    None => {}
                }
            }
            Some(t)
        };
        let seqs: Vec<u32> = fold.as_ref().unwrap_or(self.transcript()).iter().collect();
        Ok(seqs
            .into_iter()
            .map(|s| {
                let h = self.handle(s);
                if !self.hooked().contains(s) {
                    return h.clone();
                }
                // Resolved as now (its hooks bound to the same texts): the very object
                // `messages` shows, so a prefix `changed_since` vouches for is `is`-identical.
                if h.message()
                    .hook_ids
                    .iter()
                    .all(|k| bindings.get(k) == self.bindings().get(k))
                {
                    return self.resolved(s);
                }
                self.resolve_with(&bindings, h.message())
                    .map_or_else(|| h.clone(), H::wrap)
            })
            .collect())
    }

    /// How many leading messages of `messages_at(seq)` the transcript still holds, the same
    /// objects resolved the same way: the smallest position any event since `seq` touched,
    /// at most the length then. O(events since `seq`), plus a scan of that prefix when a
    /// `materialize` since rebound a hook some message carries.
    pub fn changed_since(&self, seq: i64) -> Result<usize> {
        let n = self.check_seq(seq)?;
        let mut untouched = usize::MAX;
        let mut growth = 0isize;
        for e in &self.events()[n..] {
            if let Some(op) = e.op {
                untouched = untouched.min(op.first());
                growth += op.growth();
            }
        }
        let len_then = (self.len() as isize - growth) as usize;
        untouched = untouched.min(len_then);
        // Positions before `untouched` hold the same messages at every time since `seq`,
        // now included; a rebinding changes the first of them that carries its hook.
        let since = self.materialized().partition_point(|&s| (s as usize) < n);
        if since == self.materialized().len() || !self.hooked().any() {
            return Ok(untouched);
        }
        let mut bound = self.bindings_at(n as u64);
        let mut rebound = HashSet::new();
        for &s in &self.materialized()[since..] {
            for (hook, hash) in materialized_bindings(self, s) {
                if bound.get(&hook) != Some(&hash) {
                    rebound.insert(hook.clone());
                }
                bound.insert(hook, hash);
            }
        }
        if rebound.is_empty() {
            return Ok(untouched);
        }
        for (p, s) in self.transcript().iter().take(untouched).enumerate() {
            if self.hooked().contains(s)
                && self
                    .handle(s)
                    .message()
                    .hook_ids
                    .iter()
                    .any(|h| rebound.contains(h))
            {
                return Ok(p);
            }
        }
        Ok(untouched)
    }
}

/// (hook id, content hash) pairs a `materialize` event bound, in its order.
fn materialized_bindings<H: MessageHandle>(
    ctx: &Context<H>,
    seq: u32,
) -> impl Iterator<Item = (String, String)> + '_ {
    ctx.events()[seq as usize]
        .data
        .get("bindings")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|b| b.iter())
        .filter_map(|(name, hash)| Some((hook_id(name), hash.as_str()?.to_string())))
}
