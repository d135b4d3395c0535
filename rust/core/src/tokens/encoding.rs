//! The encodings counting knows: every one `tiktoken-rs` ships, each with its fast counter.

use super::pretokenize::{Counter, Split};
use crate::error::{Error, Result};
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// Every encoding `tiktoken-rs` ships. The index is the slot in a `TokenCache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Cl100kBase,
    O200kBase,
    O200kHarmony,
    P50kBase,
    P50kEdit,
    R50kBase,
}

pub const ENCODINGS: [Encoding; 6] = [
    Encoding::Cl100kBase,
    Encoding::O200kBase,
    Encoding::O200kHarmony,
    Encoding::P50kBase,
    Encoding::P50kEdit,
    Encoding::R50kBase,
];

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
            Encoding::O200kHarmony => "o200k_harmony",
            Encoding::P50kBase => "p50k_base",
            Encoding::P50kEdit => "p50k_edit",
            Encoding::R50kBase => "r50k_base",
        }
    }

    pub fn parse(name: &str) -> Result<Encoding> {
        ENCODINGS
            .iter()
            .copied()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = ENCODINGS.iter().map(|e| e.name()).collect();
                Error::bad_argument(format!(
                    "unknown encoding {name:?}; known encodings: {}",
                    known.join(", ")
                ))
            })
    }

    pub fn slot(self) -> usize {
        self as usize
    }

    /// The fast counter of this encoding (built once, on first use).
    pub(crate) fn counter(self) -> Option<&'static Counter> {
        static COUNTERS: [OnceLock<Option<Counter>>; ENCODINGS.len()] =
            [const { OnceLock::new() }; ENCODINGS.len()];
        COUNTERS[self.slot()]
            .get_or_init(|| {
                let (split, max_rank) = match self {
                    Encoding::Cl100kBase => (Split::Cl100k, 100_300),
                    Encoding::O200kBase | Encoding::O200kHarmony => (Split::O200k, 202_000),
                    Encoding::P50kBase | Encoding::P50kEdit | Encoding::R50kBase => {
                        (Split::Gpt2, 50_300)
                    }
                };
                Counter::new(self.bpe(), split, max_rank)
            })
            .as_ref()
    }

    /// tiktoken-rs's BPE of this encoding (the binding rebuilds rank files from it).
    pub fn bpe(self) -> &'static CoreBPE {
        match self {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
            Encoding::P50kBase => tiktoken_rs::p50k_base_singleton(),
            Encoding::P50kEdit => tiktoken_rs::p50k_edit_singleton(),
            Encoding::R50kBase => tiktoken_rs::r50k_base_singleton(),
        }
    }
}
