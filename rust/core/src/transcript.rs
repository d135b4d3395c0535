//! The fold, kept live: transcript positions → the seq of the surface event whose message sits
//! there. Stored as a list of chunks so that inserting anywhere and replacing any range cost
//! O(n/CHUNK + CHUNK), never a rebuild; each chunk caches its token sum per encoding, so a
//! token window is a walk over chunk sums plus one chunk, not a pass over every message.

use crate::tokens::ENCODINGS;

const CHUNK: usize = 512;

#[derive(Debug, Clone, Default)]
struct Chunk {
    seqs: Vec<u32>,
    /// Sum of the shown token counts of `seqs`, per encoding; `None` until computed and
    /// after any change to the chunk.
    sums: [Option<u64>; ENCODINGS.len()],
}

impl Chunk {
    fn new(seqs: Vec<u32>) -> Chunk {
        Chunk {
            seqs,
            sums: [None; ENCODINGS.len()],
        }
    }
    fn touched(&mut self) {
        self.sums = [None; ENCODINGS.len()];
    }
}

#[derive(Debug, Clone, Default)]
pub struct Transcript {
    chunks: Vec<Chunk>,
    len: usize,
}

impl Transcript {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// (chunk index, offset) of position `i`; for `i == len` the end of the last chunk.
    fn locate(&self, i: usize) -> (usize, usize) {
        if let Some(last) = self.chunks.last() {
            // Fast path: the end, where nearly every append lands.
            let start_of_last = self.len - last.seqs.len();
            if i >= start_of_last {
                return (self.chunks.len() - 1, i - start_of_last);
            }
        }
        let mut start = 0;
        for (c, chunk) in self.chunks.iter().enumerate() {
            if i < start + chunk.seqs.len() {
                return (c, i - start);
            }
            start += chunk.seqs.len();
        }
        (self.chunks.len().saturating_sub(1), 0)
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        let (c, o) = self.locate(i);
        Some(self.chunks[c].seqs[o])
    }

    pub fn insert(&mut self, i: usize, seq: u32) {
        debug_assert!(i <= self.len);
        if self.chunks.is_empty() {
            self.chunks.push(Chunk::new(Vec::with_capacity(CHUNK)));
        }
        let (c, o) = self.locate(i);
        let chunk = &mut self.chunks[c];
        chunk.seqs.insert(o, seq);
        chunk.touched();
        self.len += 1;
        if chunk.seqs.len() >= 2 * CHUNK {
            let tail = chunk.seqs.split_off(CHUNK);
            self.chunks.insert(c + 1, Chunk::new(tail));
        }
    }

    /// Remove positions `first..=last` and put `seq` at `first`. Chunks wholly inside the range
    /// are dropped as blocks: no per-message work for them.
    pub fn replace(&mut self, first: usize, last: usize, seq: u32) {
        debug_assert!(first <= last && last < self.len);
        let (c1, o1) = self.locate(first);
        let (c2, o2) = self.locate(last);
        if c1 == c2 {
            let chunk = &mut self.chunks[c1];
            chunk.seqs.splice(o1..=o2, std::iter::once(seq));
            chunk.touched();
        } else {
            {
                let head = &mut self.chunks[c1];
                head.seqs.truncate(o1);
                head.seqs.push(seq);
                head.touched();
            }
            {
                let tail = &mut self.chunks[c2];
                tail.seqs.drain(..=o2);
                tail.touched();
            }
            self.chunks.drain(c1 + 1..c2);
            if self.chunks[c1 + 1].seqs.is_empty() {
                self.chunks.remove(c1 + 1);
            }
        }
        self.len -= last - first;
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
        self.chunks.iter().flat_map(|c| c.seqs.iter().copied())
    }

    /// Forget every cached token sum (the shown messages changed, e.g. by `materialize`).
    pub fn forget_sums(&mut self) {
        for c in &mut self.chunks {
            c.touched();
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    pub fn chunk_seqs(&self, c: usize) -> &[u32] {
        &self.chunks[c].seqs
    }

    pub fn chunk_sum(&self, c: usize, slot: usize) -> Option<u64> {
        self.chunks[c].sums[slot]
    }

    pub fn set_chunk_sum(&mut self, c: usize, slot: usize, sum: u64) {
        self.chunks[c].sums[slot] = Some(sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(t: &Transcript, model: &[u32]) {
        assert_eq!(t.len(), model.len());
        assert_eq!(t.iter().collect::<Vec<_>>(), model);
        for (i, s) in model.iter().enumerate() {
            assert_eq!(t.get(i), Some(*s));
        }
    }

    #[test]
    fn inserts_and_replaces_match_a_vec() {
        let mut t = Transcript::default();
        let mut model = Vec::new();
        let mut x: u64 = 12345;
        for seq in 0..6000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as usize;
            if model.is_empty() || !r.is_multiple_of(5) {
                let i = if r.is_multiple_of(3) {
                    model.len()
                } else {
                    r % (model.len() + 1)
                };
                t.insert(i, seq);
                model.insert(i, seq);
            } else {
                let a = r % model.len();
                let b = a + (r / 7) % (model.len() - a).min(1500);
                t.replace(a, b, seq);
                model.splice(a..=b, std::iter::once(seq));
            }
        }
        check(&t, &model);
    }

    #[test]
    fn replace_everything() {
        let mut t = Transcript::default();
        for i in 0..3000 {
            t.insert(i, i as u32);
        }
        t.replace(0, 2999, 9999);
        check(&t, &[9999]);
        t.insert(0, 1);
        check(&t, &[1, 9999]);
    }
}
