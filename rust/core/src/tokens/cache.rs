//! A message's token counts, one per encoding, filled on first use. It depends on nothing but
//! the encodings, so a message can hold one without the message module knowing how to count.

use super::encoding::{Encoding, ENCODINGS};
use std::sync::atomic::{AtomicU32, Ordering};

pub(super) const UNCOUNTED: u32 = u32::MAX;

/// One count per encoding; `u32::MAX` means not counted yet. Atomic so that counting can
/// fill it from several threads, through shared references, without a lock.
#[derive(Debug)]
pub struct TokenCache([AtomicU32; ENCODINGS.len()]);

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache(std::array::from_fn(|_| AtomicU32::new(UNCOUNTED)))
    }
}

impl TokenCache {
    pub fn get(&self, enc: Encoding) -> Option<u32> {
        match self.0[enc.slot()].load(Ordering::Relaxed) {
            UNCOUNTED => None,
            n => Some(n),
        }
    }
    pub(super) fn set(&self, enc: Encoding, n: u32) {
        self.0[enc.slot()].store(n.min(UNCOUNTED - 1), Ordering::Relaxed);
    }
}
