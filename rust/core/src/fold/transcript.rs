//! The fold, kept live: transcript positions → the seq of the surface event whose message sits
//! there. Stored as a list of chunks so that inserting anywhere and replacing any range never
//! rebuild the transcript. Two kinds of Fenwick trees index the chunks: one over their lengths
//! (position → chunk in O(log n)) and one per encoding over their token sums (a token window is
//! a search over suffix sums, O(log n), then a scan of one chunk).

use super::fenwick::Fenwick;
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
}

/// The token sums of every chunk for one encoding, as a Fenwick tree. Valid only while the
/// chunk list keeps its shape; chunks whose sums changed since are listed in `dirty` and
/// folded in by `refresh`.
#[derive(Debug, Clone, Default)]
struct SumIndex {
    tree: Option<Fenwick>,
    /// The sum each chunk has in `tree`.
    values: Vec<u64>,
    dirty: Vec<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct Transcript {
    chunks: Vec<Chunk>,
    len: usize,
    lengths: Fenwick,
    sums: [SumIndex; ENCODINGS.len()],
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
        let Some(last) = self.chunks.last() else {
            return (0, 0);
        };
        // Fast path: the end, where nearly every append lands.
        let start_of_last = self.len - last.seqs.len();
        if i >= start_of_last {
            return (self.chunks.len() - 1, i - start_of_last);
        }
        let (c, start) = self.lengths.last_prefix_at_most(i as u64);
        (c, i - start as usize)
    }

    /// Position of the first message of chunk `c`.
    pub fn chunk_start(&self, c: usize) -> usize {
        self.lengths.prefix(c) as usize
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        let (c, o) = self.locate(i);
        Some(self.chunks[c].seqs[o])
    }

    /// Chunk `c` changed in place (same place in the chunk list).
    fn touched(&mut self, c: usize) {
        self.chunks[c].sums = [None; ENCODINGS.len()];
        for index in &mut self.sums {
            if index.tree.is_some() {
                index.dirty.push(c);
            }
        }
    }

    /// The chunk list changed shape: rebuild the length index, drop the sum indexes.
    fn reshaped(&mut self) {
        self.lengths = Fenwick::build(self.chunks.iter().map(|c| c.seqs.len() as u64));
        for index in &mut self.sums {
            *index = SumIndex::default();
        }
    }

    pub fn insert(&mut self, i: usize, seq: u32) {
        debug_assert!(i <= self.len);
        if self.chunks.is_empty() {
            self.chunks.push(Chunk::new(Vec::with_capacity(CHUNK)));
            self.reshaped();
        }
        let (c, o) = self.locate(i);
        self.chunks[c].seqs.insert(o, seq);
        self.lengths.add(c, 1);
        self.touched(c);
        self.len += 1;
        if self.chunks[c].seqs.len() >= 2 * CHUNK {
            let tail = self.chunks[c].seqs.split_off(CHUNK);
            self.chunks.insert(c + 1, Chunk::new(tail));
            self.chunks[c].sums = [None; ENCODINGS.len()];
            self.reshaped();
        }
    }

    /// Remove positions `first..=last` and put `seq` at `first`. Chunks wholly inside the range
    /// are dropped as blocks: no per-message work for them.
    pub fn replace(&mut self, first: usize, last: usize, seq: u32) {
        debug_assert!(first <= last && last < self.len);
        let (c1, o1) = self.locate(first);
        let (c2, o2) = self.locate(last);
        self.len -= last - first;
        if c1 == c2 {
            self.chunks[c1].seqs.splice(o1..=o2, std::iter::once(seq));
            self.lengths.add(c1, ((o2 - o1) as u64).wrapping_neg());
            self.touched(c1);
            return;
        }
        self.chunks[c1].seqs.truncate(o1);
        self.chunks[c1].seqs.push(seq);
        self.chunks[c1].sums = [None; ENCODINGS.len()];
        self.chunks[c2].seqs.drain(..=o2);
        self.chunks[c2].sums = [None; ENCODINGS.len()];
        self.chunks.drain(c1 + 1..c2);
        if self.chunks[c1 + 1].seqs.is_empty() {
            self.chunks.remove(c1 + 1);
        }
        self.reshaped();
    }

    /// Remove positions `first..=last`. Chunks wholly inside the range are dropped as blocks,
    /// and a chunk left empty goes too (`locate` expects none).
    pub fn remove(&mut self, first: usize, last: usize) {
        debug_assert!(first <= last && last < self.len);
        let (c1, o1) = self.locate(first);
        let (c2, o2) = self.locate(last);
        self.len -= last - first + 1;
        if c1 == c2 {
            self.chunks[c1].seqs.drain(o1..=o2);
            if self.chunks[c1].seqs.is_empty() {
                self.chunks.remove(c1);
                self.reshaped();
            } else {
                self.lengths.add(c1, ((o2 - o1 + 1) as u64).wrapping_neg());
                self.touched(c1);
            }
            return;
        }
        self.chunks[c1].seqs.truncate(o1);
        self.chunks[c1].sums = [None; ENCODINGS.len()];
        self.chunks[c2].seqs.drain(..=o2);
        self.chunks[c2].sums = [None; ENCODINGS.len()];
        self.chunks.drain(c1 + 1..c2);
        self.chunks.retain(|c| !c.seqs.is_empty());
        self.reshaped();
    }

    /// A transcript holding `seqs` in order, built in one pass.
    pub fn from_seqs(seqs: &[u32]) -> Transcript {
        let mut t = Transcript {
            chunks: seqs.chunks(CHUNK).map(|c| Chunk::new(c.to_vec())).collect(),
            len: seqs.len(),
            ..Transcript::default()
        };
        t.reshaped();
        t
    }

    /// The seqs from position `start` on: O(log n) to find the start, then sequential.
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = u32> + '_ {
        let (c, o) = if start >= self.len {
            (self.chunks.len(), 0)
        } else {
            self.locate(start)
        };
        self.chunks
            .get(c..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .flat_map(move |(k, chunk)| chunk.seqs[if k == 0 { o } else { 0 }..].iter().copied())
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
        self.chunks.iter().flat_map(|c| c.seqs.iter().copied())
    }

    /// Forget every cached token sum (the shown messages changed, e.g. by `materialize`).
    pub fn forget_sums(&mut self) {
        for c in &mut self.chunks {
            c.sums = [None; ENCODINGS.len()];
        }
        for index in &mut self.sums {
            *index = SumIndex::default();
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    pub fn chunk_seqs(&self, c: usize) -> &[u32] {
        &self.chunks[c].seqs
    }

    /// Chunks without a token sum for `slot`: only the changed ones while the index stands.
    pub fn chunks_missing_sum(&self, slot: usize) -> Vec<usize> {
        let index = &self.sums[slot];
        let mut missing: Vec<usize> = if index.tree.is_some() {
            index.dirty.clone()
        } else {
            (0..self.chunks.len()).collect()
        };
        missing.sort_unstable();
        missing.dedup();
        missing.retain(|&c| self.chunks[c].sums[slot].is_none());
        missing
    }

    pub fn set_chunk_sum(&mut self, c: usize, slot: usize, sum: u64) {
        self.chunks[c].sums[slot] = Some(sum);
    }

    /// Bring the sum index of `slot` up to date; every chunk must have its sum by now.
    pub fn refresh_sums(&mut self, slot: usize) {
        let chunks = &self.chunks;
        let index = &mut self.sums[slot];
        let sum_of = |c: usize| chunks[c].sums[slot].unwrap_or(0);
        match &mut index.tree {
            Some(tree) => {
                for c in index.dirty.drain(..) {
                    let new = sum_of(c);
                    tree.add(c, new.wrapping_sub(index.values[c]));
                    index.values[c] = new;
                }
            }
            None => {
                index.values = (0..chunks.len()).map(sum_of).collect();
                index.tree = Some(Fenwick::build(index.values.iter().copied()));
                index.dirty.clear();
            }
        }
    }

    /// Tokens of the chunks before `c` (after `refresh_sums`).
    pub fn tokens_before_chunk(&self, c: usize, slot: usize) -> u64 {
        self.sums[slot].tree.as_ref().map_or(0, |t| t.prefix(c))
    }

    /// Tokens of the whole transcript (after `refresh_sums`).
    pub fn total_tokens(&self, slot: usize) -> u64 {
        self.tokens_before_chunk(self.chunks.len(), slot)
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
        for c in 0..t.chunk_count() {
            let before: usize = (0..c).map(|k| t.chunk_seqs(k).len()).sum();
            assert_eq!(t.chunk_start(c), before);
        }
    }

    /// Sums are each seq's value, so the index can be checked against the model.
    fn check_sums(t: &mut Transcript, model: &[u32]) {
        for c in t.chunks_missing_sum(0) {
            let s = t.chunk_seqs(c).iter().map(|&q| u64::from(q)).sum();
            t.set_chunk_sum(c, 0, s);
        }
        t.refresh_sums(0);
        assert_eq!(
            t.total_tokens(0),
            model.iter().map(|&q| u64::from(q)).sum::<u64>()
        );
        for c in 0..t.chunk_count() {
            let start = t.chunk_start(c);
            let want: u64 = model[..start].iter().map(|&q| u64::from(q)).sum();
            assert_eq!(t.tokens_before_chunk(c, 0), want);
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
            if !model.is_empty() && r.is_multiple_of(11) {
                let a = r % model.len();
                let b = a + (r / 13) % (model.len() - a).min(1500);
                t.remove(a, b);
                model.drain(a..=b);
            } else if model.is_empty() || !r.is_multiple_of(5) {
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
            if seq % 97 == 0 {
                check_sums(&mut t, &model);
            }
        }
        check(&t, &model);
        check_sums(&mut t, &model);
        for start in [
            0,
            1,
            511,
            512,
            513,
            model.len() / 2,
            model.len() - 1,
            model.len(),
            model.len() + 3,
        ] {
            let tail: Vec<u32> = t.iter_from(start).collect();
            assert_eq!(tail, model[start.min(model.len())..]);
        }
        let rebuilt = Transcript::from_seqs(&model);
        check(&rebuilt, &model);
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

    #[test]
    fn remove_everything_then_grow_again() {
        let mut t = Transcript::default();
        for i in 0..3000 {
            t.insert(i, i as u32);
        }
        t.remove(0, 2999);
        check(&t, &[]);
        t.insert(0, 7);
        t.insert(1, 8);
        check(&t, &[7, 8]);
        t.remove(0, 0);
        t.remove(0, 0);
        check(&t, &[]);
    }
}
