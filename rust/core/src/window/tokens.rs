//! Token totals and the token window. Counts come from each message's cache and each
//! transcript chunk's cached sum, indexed by a Fenwick tree per encoding: a warm total is
//! O(log n), and a warm window is a binary search over suffix sums plus a scan of one chunk.

use crate::context::{Context, MessageHandle};
use crate::error::Result;
use crate::fold::{overlay_message, with_overlay};
use crate::message::Role;
use crate::tokens::{message_tokens, warm, Encoding};

impl<H: MessageHandle> Context<H> {
    /// Fill every missing chunk sum, counting uncounted messages in parallel.
    pub(crate) fn ensure_sums(&mut self, enc: Encoding) -> Result<()> {
        let slot = enc.slot();
        let missing = self.transcript().chunks_missing_sum(slot);
        let mut per_chunk: Vec<Vec<H>> = Vec::with_capacity(missing.len());
        for &c in &missing {
            let seqs: Vec<u32> = self.transcript().chunk_seqs(c).to_vec();
            per_chunk.push(seqs.into_iter().map(|s| self.resolved(s)).collect());
        }
        warm(per_chunk.iter().flatten().map(|h| h.message()), enc)?;
        for (c, hs) in missing.into_iter().zip(per_chunk) {
            let mut sum = 0;
            for h in &hs {
                sum += message_tokens(h.message(), enc)?;
            }
            self.cache_chunk_tokens(c, slot, sum);
        }
        self.refresh_token_sums(slot);
        Ok(())
    }

    pub(crate) fn resolved_tokens(&mut self, p: usize, enc: Encoding) -> Result<u64> {
        let s = self.transcript().get(p).expect("in range");
        let h = self.resolved(s);
        message_tokens(h.message(), enc)
    }

    /// (tokens to add for position 0 when the overlay rewrites it, tokens of a prepended
    /// overlay message)
    fn overlay_cost(&mut self, enc: Encoding) -> Result<(i64, u64)> {
        match self.overlay_head() {
            None => Ok((0, 0)),
            Some((true, h)) => {
                let shown = message_tokens(h.message(), enc)? as i64;
                Ok((shown - self.resolved_tokens(0, enc)? as i64, 0))
            }
            Some((false, h)) => Ok((0, message_tokens(h.message(), enc)?)),
        }
    }

    /// Tokens of `messages` as shown (overlay and resolution included).
    pub fn total_tokens(&mut self, enc: Encoding) -> Result<u64> {
        self.ensure_sums(enc)?;
        let sum = self.transcript().total_tokens(enc.slot());
        let (head_delta, prepended) = self.overlay_cost(enc)?;
        Ok((sum as i64 + head_delta) as u64 + prepended)
    }

    /// What the overlay adds to a child whose leading message is the one at position
    /// `head` (`None`: the child is empty): appended to a leading system message, or a
    /// message of its own before anything else.
    fn child_overlay_cost(&mut self, head: Option<usize>, enc: Encoding) -> Result<u64> {
        if self.overlay().is_none() && self.shown_prompt().is_none() {
            return Ok(0);
        }
        if head == Some(0) {
            // The parent's own shown head: cached, and counted once.
            let (delta, prepended) = self.overlay_cost(enc)?;
            return Ok((delta + prepended as i64).max(0) as u64);
        }
        let shown = head.map(|p| self.resolved(self.transcript().get(p).expect("in range")));
        match shown {
            Some(h) if h.message().role == Role::System => match self.overlay().map(str::to_string)
            {
                Some(overlay) => {
                    let with = message_tokens(&with_overlay(h.message(), &overlay), enc)?;
                    Ok(with.saturating_sub(message_tokens(h.message(), enc)?))
                }
                None => Ok(0),
            },
            _ => match self.lead_text() {
                Some(text) => message_tokens(&overlay_message(&text, 0, ""), enc),
                None => Ok(0),
            },
        }
    }

    /// The smallest start whose non-special suffix costs at most `remaining` (no overlay),
    /// and what that suffix costs.
    pub(crate) fn suffix_start(
        &mut self,
        remaining: u64,
        specials: &[(usize, u64)],
        enc: Encoding,
    ) -> Result<(usize, u64)> {
        let slot = enc.slot();
        let raw_total = self.transcript().total_tokens(slot);
        let t = self.transcript();
        // What keeping everything from the start of chunk `c` costs, without the specials
        // (paid for apart). Non-increasing in `c`, so the first chunk that fits is found by
        // binary search.
        let kept_from_chunk = |c: usize| -> u64 {
            let start = t.chunk_start(c);
            let mut cost = raw_total - t.tokens_before_chunk(c, slot);
            for &(p, tok) in specials {
                if p >= start {
                    cost -= tok;
                }
            }
            cost
        };
        let (mut lo, mut hi) = (0, t.chunk_count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if kept_from_chunk(mid) <= remaining {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let first_chunk = lo;
        let mut used = kept_from_chunk(first_chunk);
        let mut start = if first_chunk == t.chunk_count() {
            self.len()
        } else {
            t.chunk_start(first_chunk)
        };
        if first_chunk > 0 {
            // Then message by message, from the end of the chunk before it.
            let before = t.chunk_start(first_chunk - 1);
            for p in (before..start).rev() {
                if specials.iter().any(|&(q, _)| q == p) {
                    continue;
                }
                let tok = self.resolved_tokens(p, enc)?;
                if used + tok > remaining {
                    break;
                }
                used += tok;
                start = p;
            }
        }
        Ok((start, used))
    }

    /// The non-special positions the token window keeps; `None` when nothing has to go.
    /// The budget is judged as the child shows it: wherever the overlay lands there (on a
    /// kept leading system message, or as a message of its own), its cost is counted.
    pub fn token_window_positions(
        &mut self,
        max_tokens: u64,
        enc: Encoding,
    ) -> Result<Option<Vec<usize>>> {
        self.ensure_sums(enc)?;
        let (sp, td) = self.special_positions();
        let mut specials: Vec<usize> = [sp, td].into_iter().flatten().collect();
        specials.sort_unstable();
        if self.len() == specials.len() || self.total_tokens(enc)? <= max_tokens {
            return Ok(None);
        }
        let mut special_tokens = Vec::with_capacity(specials.len());
        for &p in &specials {
            special_tokens.push((p, self.resolved_tokens(p, enc)?));
        }
        let fixed: u64 = special_tokens.iter().map(|&(_, t)| t).sum();
        // The overlay costs nothing or more, so the answer starts here or later; it is the
        // first start from here whose child, overlay included, fits. `used` stays the cost of
        // the non-special positions from `start` on.
        let (mut start, mut used) =
            self.suffix_start(max_tokens.saturating_sub(fixed), &special_tokens, enc)?;
        loop {
            let mut kept: Vec<usize> = (start..self.len())
                .filter(|p| specials.binary_search(p).is_err())
                .collect();
            self.drop_leading_tool_results(&mut kept);
            let Some(&first) = kept.first() else {
                return Ok(Some(kept));
            };
            for p in start..first {
                if specials.binary_search(&p).is_err() {
                    used -= self.resolved_tokens(p, enc)?;
                }
            }
            let head = specials.first().map_or(first, |&s| s.min(first));
            if fixed + used + self.child_overlay_cost(Some(head), enc)? <= max_tokens {
                return Ok(Some(kept));
            }
            used -= self.resolved_tokens(first, enc)?;
            start = first + 1;
        }
    }

    pub fn rolling_token_window(
        &mut self,
        max_tokens: u64,
        enc: Encoding,
    ) -> Result<Option<Context<H>>> {
        Ok(self
            .token_window_positions(max_tokens, enc)?
            .map(|kept| self.fork(&kept, None, None)))
    }

    /// Count every shown message in `enc` (used to warm caches ahead of time).
    pub fn message_token_counts(&mut self, enc: Encoding) -> Result<Vec<u64>> {
        let shown = self.messages();
        warm(shown.iter().map(|h| h.message()), enc)?;
        shown
            .iter()
            .map(|h| message_tokens(h.message(), enc))
            .collect()
    }
}
