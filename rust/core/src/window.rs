//! Token totals and the token window. Counts come from each message's cache and each
//! transcript chunk's cached sum, so a warm window walks chunk sums from the end and scans
//! one chunk: no pass over the whole transcript.

use crate::context::{Context, MessageHandle};
use crate::error::Result;
use crate::tokens::{message_tokens, warm, Encoding};

impl<H: MessageHandle> Context<H> {
    /// Fill every missing chunk sum, counting uncounted messages in parallel.
    fn ensure_sums(&mut self, enc: Encoding) -> Result<()> {
        let slot = enc.slot();
        let missing: Vec<usize> = (0..self.transcript.chunk_count())
            .filter(|&c| self.transcript.chunk_sum(c, slot).is_none())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
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
        let slot = enc.slot();
        let sum: u64 = (0..self.transcript.chunk_count())
            .map(|c| self.transcript.chunk_sum(c, slot).unwrap_or(0))
            .sum();
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
        let mut used = 0u64;
        let mut start = self.len();
        let mut chunk_end = self.len();
        for c in (0..self.transcript.chunk_count()).rev() {
            let chunk_len = self.transcript.chunk_seqs(c).len();
            let chunk_start = chunk_end - chunk_len;
            let mut cost = self.transcript.chunk_sum(c, slot).unwrap_or(0) as i64;
            for &p in &specials {
                if (chunk_start..chunk_end).contains(&p) {
                    cost -= self.resolved_tokens(p, enc)? as i64;
                }
            }
            if chunk_start == 0 && !specials.contains(&0) {
                cost += head_delta;
            }
            if used + cost as u64 <= remaining {
                used += cost as u64;
                start = chunk_start;
                chunk_end = chunk_start;
                continue;
            }
            for p in (chunk_start..chunk_end).rev() {
                if specials.contains(&p) {
                    continue;
                }
                let t = self.shown_tokens(p, enc, head_delta)?;
                if used + t > remaining {
                    break;
                }
                used += t;
                start = p;
            }
            break;
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
