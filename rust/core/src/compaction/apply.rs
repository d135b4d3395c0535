//! Applying a plan: a compare-and-swap on the `next_seq` it was made at. Everything is checked
//! before the first event is written, so a refused plan writes nothing.

use super::plan::Plan;
use super::KEY;
use crate::context::{Context, MessageHandle};
use crate::error::{Error, Result};
use crate::message::{Content, Message, Role};
use crate::tokens::{message_tokens, Encoding};
use serde_json::{json, Map, Value};

/// What stands for the summarized messages.
pub enum Summary<H> {
    /// Text: an assistant message holding it, marked with the compaction record.
    Text(String),
    /// A message of the caller's, as it is.
    Message(H),
}

impl<H: MessageHandle> Context<H> {
    /// Write the summary in place of the oldest range of a plan made for this context (one replace event carrying the
    /// record under `"compaction"`) and remove each further range (one `remove` event each).
    /// `ConflictError` when an event since `based_on` touched the ranges or anything before
    /// them; then nothing is written. Returns the new events' seqs, the replace's first.
    pub fn apply_compaction(
        &mut self,
        context: &str,
        ranges: &[(usize, usize)],
        based_on: u64,
        tokens_before: u64,
        enc: Encoding,
        summary: Summary<H>,
    ) -> Result<Vec<u64>> {
        if context != self.id() {
            return Err(Error::bad_argument(format!(
                "the plan was made for context {context}, not {}",
                self.id()
            )));
        }
        check_ranges(ranges)?;
        if based_on > self.next_seq() {
            return Err(Error::bad_argument(format!(
                "the plan is based on seq {based_on}, past this context's {}",
                self.next_seq()
            )));
        }
        let (first, last) = (ranges[0].0, ranges[ranges.len() - 1].1);
        let untouched = self.changed_since(based_on as i64)?;
        if untouched <= last {
            return Err(Error::conflict(format!(
                "the compaction of {first}..{last} planned at seq {based_on} is stale: position \
                 {untouched} has changed since; plan again"
            )));
        }
        let mut record = Map::new();
        record.insert("based_on".into(), json!(based_on));
        record.insert("first".into(), json!(first));
        record.insert("last".into(), json!(last));
        record.insert("tokens_before".into(), json!(tokens_before));
        let h = match summary {
            Summary::Text(text) => {
                if text.trim().is_empty() {
                    return Err(Error::bad_argument("the summary is empty"));
                }
                let m = Message::new(Role::Assistant, Content::Text(text));
                let tokens_after = message_tokens(&m, enc)?;
                let mut marked = m.clone();
                marked.metadata.insert(
                    KEY.into(),
                    Value::Object(finish(&record, tokens_after, enc, ranges)),
                );
                H::wrap(marked)
            }
            Summary::Message(h) => h,
        };
        let tokens_after = message_tokens(h.message(), enc)?;
        let record = finish(&record, tokens_after, enc, ranges);
        let mut data = Map::new();
        data.insert(KEY.into(), Value::Object(record));
        let seq = self.replace_with(ranges[0].0, ranges[0].1, h, data)?.seq;
        let mut seqs = vec![seq];
        let mut shift = ranges[0].1 - ranges[0].0;
        for &(a, b) in &ranges[1..] {
            let mut data = Map::new();
            data.insert("compacted_by".into(), json!(seq));
            seqs.push(self.remove_with(a - shift, b - shift, data)?.seq);
            shift += b - a + 1;
        }
        Ok(seqs)
    }

    /// `apply_compaction` with a plan made here.
    pub fn apply_plan(&mut self, plan: &Plan<H>, summary: Summary<H>) -> Result<Vec<u64>> {
        self.apply_compaction(
            &plan.context,
            &plan.ranges,
            plan.based_on,
            plan.tokens_before,
            plan.encoding,
            summary,
        )
    }
}

/// The record, complete: what was planned, the summary's own tokens, the encoding, and the
/// ranges when there are several.
fn finish(
    planned: &Map<String, Value>,
    tokens_after: u64,
    enc: Encoding,
    ranges: &[(usize, usize)],
) -> Map<String, Value> {
    let mut r = planned.clone();
    r.insert("tokens_after".into(), json!(tokens_after));
    r.insert("encoding".into(), json!(enc.name()));
    if ranges.len() > 1 {
        r.insert(
            "ranges".into(),
            Value::Array(ranges.iter().map(|&(a, b)| json!([a, b])).collect()),
        );
    }
    r
}

/// A plan's ranges: at least one, each ascending, in order, disjoint.
fn check_ranges(ranges: &[(usize, usize)]) -> Result<()> {
    if ranges.is_empty() {
        return Err(Error::bad_argument("a compaction needs at least one range"));
    }
    for (i, &(a, b)) in ranges.iter().enumerate() {
        if a > b {
            return Err(Error::bad_argument(format!("range {a}..{b} is descending")));
        }
        if i > 0 && a <= ranges[i - 1].1 {
            return Err(Error::bad_argument(format!(
                "ranges must ascend without overlapping: {a}..{b} after {}..{}",
                ranges[i - 1].0,
                ranges[i - 1].1
            )));
        }
    }
    Ok(())
}
