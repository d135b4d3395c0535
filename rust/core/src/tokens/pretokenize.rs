//! Counting BPE tokens faster than `CoreBPE::encode`, with the same result.
//!
//! tiktoken splits text with a regex before merging bytes, and that regex has one lookahead,
//! `\s+(?!\S)`, which forces the backtracking `fancy_regex` engine onto every byte: most of
//! the time of counting. Here the split uses the linear `regex` engine on the same pattern with
//! the lookahead branch replaced by `\s+`, and the lookahead's effect is restored by hand: a run
//! of two or more whitespace characters, matched by that branch and followed by more text,
//! gives back its last character (which then starts the next piece, as in tiktoken). Merging
//! uses tiktoken-rs's own `byte_pair_split` over the encoding's ranks; a long piece (a run of
//! one character class: a base64 blob, a megabyte of spaces) is merged here with a heap, in
//! O(n log n), by the same rule (lowest rank first, leftmost on ties). Only the count is kept.
//!
//! `tests` compares this with `CoreBPE::encode` on adversarial text for every encoding, and
//! the Python test suite compares both with Python tiktoken.

use rustc_hash::FxHashMap;
use std::collections::HashSet;
use tiktoken_rs::{CoreBPE, Rank};

/// The split patterns without lookarounds or possessive quantifiers (regex crate syntax).
const CL100K: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+";
const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+"
);
const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+";

/// Which split pattern an encoding uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Split {
    Cl100k,
    O200k,
    Gpt2,
}

impl Split {
    fn pattern(self) -> &'static str {
        match self {
            Split::Cl100k => CL100K,
            Split::O200k => O200K,
            Split::Gpt2 => GPT2,
        }
    }
    /// Patterns with a `\s*[\r\n]+` branch before `\s+`: a whitespace piece ending in a line
    /// break came from that branch and keeps its length.
    fn has_newline_branch(self) -> bool {
        self != Split::Gpt2
    }
}

/// Pieces this long are merged with a heap (`merge_count`), not tiktoken-rs's quadratic loop.
const LONG_PIECE: usize = 256;

pub struct Counter {
    split: Split,
    regex: regex::Regex,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

impl Counter {
    /// The ordinary ranks of `bpe` (special tokens left out: their text counts as ordinary).
    pub fn new(bpe: &CoreBPE, split: Split, max_rank: Rank) -> Option<Counter> {
        let specials: HashSet<&str> = bpe.special_tokens();
        let mut ranks = FxHashMap::default();
        for r in 0..=max_rank {
            if let Ok(bytes) = bpe.decode_bytes(&[r]) {
                if !std::str::from_utf8(&bytes).is_ok_and(|s| specials.contains(s)) {
                    ranks.insert(bytes, r);
                }
            }
        }
        let regex = regex::Regex::new(split.pattern()).ok()?;
        Some(Counter {
            split,
            regex,
            ranks,
        })
    }

    /// The regex for this thread: each clone has its own match cache, so threads never wait
    /// on one another's.
    fn with_regex<T>(&self, f: impl FnOnce(&regex::Regex) -> T) -> T {
        thread_local! {
            static CLONES: std::cell::RefCell<Vec<(usize, regex::Regex)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let key = self as *const Counter as usize;
        CLONES.with(|c| {
            let mut c = c.borrow_mut();
            let i = match c.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    c.push((key, self.regex.clone()));
                    c.len() - 1
                }
            };
            f(&c[i].1)
        })
    }

    /// Each piece tiktoken's split gives, in order.
    fn for_each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        self.with_regex(|re| {
            let mut at = 0;
            while at < text.len() {
                let Some(m) = re.find_at(text, at) else { break };
                let mut end = m.end();
                let piece = m.as_str();
                if end < text.len() && self.gives_back_last_char(piece) {
                    end -= piece.chars().next_back().map_or(0, char::len_utf8);
                }
                f(&text[m.start()..end]);
                at = end;
            }
        })
    }

    /// `\s+(?!\S)` in tiktoken's pattern: a whitespace run of two or more characters followed
    /// by text matches without its last character.
    fn gives_back_last_char(&self, piece: &str) -> bool {
        let mut chars = piece.chars();
        let (Some(_), Some(last)) = (chars.next(), chars.next_back()) else {
            return false;
        };
        piece.chars().all(char::is_whitespace)
            && !(self.split.has_newline_branch() && matches!(last, '\r' | '\n'))
    }

    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        self.for_each_piece(text, |p| {
            let bytes = p.as_bytes();
            n += if self.ranks.contains_key(bytes) {
                1
            } else if bytes.len() < LONG_PIECE {
                tiktoken_rs::byte_pair_split(bytes, &self.ranks).len()
            } else {
                merge_count(bytes, &self.ranks)
            };
        });
        n
    }
}

/// Tokens of one piece by byte-pair merging with a heap: O(n log n) for any piece. Merges the
/// adjacent pair of lowest rank, leftmost first, until no pair is a token, as tiktoken does.
fn merge_count(piece: &[u8], ranks: &FxHashMap<Vec<u8>, Rank>) -> usize {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = piece.len();
    if n < 2 {
        return n;
    }
    // Segment starting at byte `i` ends at `end[i]`; `prev[i]` is the start of the one before.
    // Every single byte is a token, so the merge starts from bytes.
    let mut end: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let rank_of = |a: usize, b: usize| ranks.get(&piece[a..b]).copied();
    let mut heap = BinaryHeap::new();
    for i in 0..n - 1 {
        if let Some(r) = rank_of(i, i + 2) {
            heap.push(Reverse((r, i, i + 2)));
        }
    }
    let mut segments = n;
    while let Some(Reverse((_, a, pair_end))) = heap.pop() {
        // Stale when `a` was merged away or its right neighbour is no longer the same.
        let mid = end[a];
        if !alive[a] || mid >= n || end[mid] != pair_end {
            continue;
        }
        alive[mid] = false;
        end[a] = pair_end;
        if pair_end < n {
            prev[pair_end] = a;
        }
        segments -= 1;
        if let Some(p) = prev.get(a).copied().filter(|&p| p < n) {
            if let Some(r) = rank_of(p, pair_end) {
                heap.push(Reverse((r, p, pair_end)));
            }
        }
        if pair_end < n {
            if let Some(r) = rank_of(a, end[pair_end]) {
                heap.push(Reverse((r, a, end[pair_end])));
            }
        }
    }
    segments
}

impl Counter {
    #[cfg(test)]
    fn ranks(&self) -> &FxHashMap<Vec<u8>, Rank> {
        &self.ranks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Encoding, ENCODINGS};

    /// Strings made to hit every branch: whitespace runs of every kind before letters, digits,
    /// punctuation and the end; contractions; line breaks; non-ASCII letters, marks and spaces.
    fn adversarial() -> Vec<String> {
        let atoms = [
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\r\n",
            " \n ",
            "\u{a0}",
            "\u{3000}",
            "\u{2009}",
            "a",
            "Ab",
            "ABC",
            "word",
            "Hello",
            "'s",
            "'LL",
            "'re",
            "'t",
            "don't",
            "1",
            "12",
            "1234567",
            "!",
            "?!",
            "...",
            "/",
            "//",
            "<|endoftext|>",
            "<|fim_prefix|>",
            "é",
            "ñu",
            "e\u{301}",
            "日本語",
            "😀",
            "👍🏽",
            "ß",
            "Σσ",
            "Ⅻ",
            "٣",
            "\u{200b}",
            "x\u{0308}",
            "-",
            "_",
            "\u{85}",
            "\u{b}",
            "\u{c}",
        ];
        let mut out: Vec<String> = atoms.iter().map(|s| s.to_string()).collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..6000 {
            let mut s = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(x % 12) {
                let y = x.rotate_left((k * 5) as u32);
                s.push_str(atoms[(y % atoms.len() as u64) as usize]);
            }
            out.push(s);
        }
        out.push("a".repeat(5000));
        out.push(" ".repeat(300) + "x" + &"\n".repeat(40) + "  ");
        out
    }

    #[test]
    fn counts_equal_tiktoken_rs_on_adversarial_text() {
        let empty = HashSet::new();
        for enc in ENCODINGS {
            let reference = enc.bpe();
            let fast = enc.counter().expect("every encoding has a counter");
            for s in adversarial() {
                let want = reference.encode(&s, &empty).unwrap().0.len();
                assert_eq!(fast.count(&s), want, "{enc:?} on {s:?}");
            }
        }
        assert!(Encoding::Cl100kBase.counter().is_some());
    }

    #[test]
    fn heap_merge_equals_tiktoken_merge() {
        let mut x: u64 = 7;
        for enc in [
            Encoding::Cl100kBase,
            Encoding::O200kBase,
            Encoding::R50kBase,
        ] {
            let ranks = enc.counter().unwrap().ranks();
            for len in 2..400usize {
                let mut s = Vec::with_capacity(len);
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    s.push(b"aab ==QUJD/+e\n"[(x % 14) as usize]);
                }
                let want = tiktoken_rs::byte_pair_split(&s, ranks).len();
                assert_eq!(
                    merge_count(&s, ranks),
                    want,
                    "{enc:?} {:?}",
                    String::from_utf8_lossy(&s)
                );
            }
        }
    }
}
