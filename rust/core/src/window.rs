//! Token totals and the token window. Counts come from each message's cache and each
//! transcript chunk's cached sum, indexed by a Fenwick tree per encoding: a warm total is
//! O(log n), and a warm window is a binary search over suffix sums plus a scan of one chunk.

use crate::context::{Context, MessageHandle};
use crate::error::Result;
use crate::tokens::{message_tokens, warm, Encoding};

impl<H: MessageHandle> Context<H> {
    /// Fill every missing chunk sum, counting uncounted messages in parallel.
    fn ensure_sums(&mut self, enc: Encoding) -> Result<()> {
        let slot = enc.slot();
        let missing = self.transcript.chunks_missing_sum(slot);
        let mut per_chunk: Vec<Vec<H>> = Vec::with_capacity(missing.len());
        for &c in &missing {
            let seqs: Vec<u32> = self.transcript.chunk_seqs(c).to_vec();
            per_chunk.push(seqs.into_iter().map(|s| self.resolved(s)).collect());
        }
        warm(per_chunk.iter().flatten().map(|h| h.message()), enc)?;
        for (c, hs) in missing.into_iter().zip(per_chunk) {
            let mut sum = 0;
            for h in &hs {
                sum += message_tokens(h.message(), enc)?;
            }
            self.transcript.set_chunk_sum(c, slot, sum);
        }
        self.transcript.refresh_sums(slot);
        Ok(())
    }

    fn resolved_tokens(&mut self, p: usize, enc: Encoding) -> Result<u64> {
        let s = self.transcript.get(p).expect("in range");
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
        let sum = self.transcript.total_tokens(enc.slot());
        let (head_delta, prepended) = self.overlay_cost(enc)?;
        Ok((sum as i64 + head_delta) as u64 + prepended)
    }

    /// Tokens of position `p` as shown.
    fn shown_tokens(&mut self, p: usize, enc: Encoding, head_delta: i64) -> Result<u64> {
        let t = self.resolved_tokens(p, enc)? as i64;
        Ok((t + if p == 0 { head_delta } else { 0 }) as u64)
    }

    /// The non-special positions the token window keeps; `None` when nothing has to go.
    pub fn token_window_positions(
        &mut self,
        max_tokens: u64,
        enc: Encoding,
    ) -> Result<Option<Vec<usize>>> {
        self.ensure_sums(enc)?;
        let (sp, td) = self.special_positions();
        let specials: Vec<usize> = [sp, td].into_iter().flatten().collect();
        if self.len() == specials.len() {
            return Ok(None);
        }
        let (head_delta, prepended) = self.overlay_cost(enc)?;
        let mut fixed = prepended;
        for &p in &specials {
            fixed += self.shown_tokens(p, enc, head_delta)?;
        }
        let total = self.total_tokens(enc)?;
        if total <= max_tokens {
            return Ok(None);
        }
        let remaining = max_tokens.saturating_sub(fixed);
        let slot = enc.slot();
        let mut special_tokens = Vec::with_capacity(specials.len());
        for &p in &specials {
            special_tokens.push((p, self.resolved_tokens(p, enc)?));
        }
        let raw_total = self.transcript.total_tokens(slot);
        let t = &self.transcript;
        // What keeping everything from the start of chunk `c` costs: its suffix sum without
        // the specials (paid for in `fixed`), with the overlay's change to position 0.
        // Non-increasing in `c`, so the first chunk that fits is found by binary search.
        let kept_from_chunk = |c: usize| -> u64 {
            let start = t.chunk_start(c);
            let mut cost = (raw_total - t.tokens_before_chunk(c, slot)) as i64;
            for &(p, tok) in &special_tokens {
                if p >= start {
                    cost -= tok as i64;
                }
            }
            if start == 0 && !specials.contains(&0) {
                cost += head_delta;
            }
            cost.max(0) as u64
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
                if specials.contains(&p) {
                    continue;
                }
                let tok = self.shown_tokens(p, enc, head_delta)?;
                if used + tok > remaining {
                    break;
                }
                used += tok;
                start = p;
            }
        }
        let mut kept: Vec<usize> = (start..self.len())
            .filter(|p| !specials.contains(p))
            .collect();
        self.drop_leading_tool_results(&mut kept);
        Ok(Some(kept))
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
