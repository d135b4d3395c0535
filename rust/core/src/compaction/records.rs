//! Reading compactions back: each replace event that carries a compaction record.

use super::KEY;
use crate::context::{Context, MessageHandle};
use crate::event::Op;
use serde_json::{Map, Value};

/// An applied compaction: its event, the positions it stood for then (the span of its
/// ranges), and its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub seq: u64,
    pub first: usize,
    pub last: usize,
    pub record: Map<String, Value>,
}

impl<H: MessageHandle> Context<H> {
    /// Every applied compaction, oldest first. `messages_at(seq)` holds the originals.
    pub fn compactions(&self) -> Vec<Record> {
        self.events()
            .iter()
            .filter_map(|e| match (e.op, e.data.get(KEY)) {
                (Some(Op::Replace(first, last)), Some(Value::Object(r))) => {
                    // A pinned plan's span is recorded; its replace holds only the oldest range.
                    let at = |k: &str, op: usize| {
                        r.get(k).and_then(Value::as_u64).map_or(op, |p| p as usize)
                    };
                    Some(Record {
                        seq: e.seq,
                        first: at("first", first),
                        last: at("last", last),
                        record: r.clone(),
                    })
                }
                _ => None,
            })
            .collect()
    }
}
