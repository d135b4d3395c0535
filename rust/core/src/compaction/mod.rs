//! Compaction as a safe cycle: `plan` names what to summarize (never the head of the
//! transcript, never a pinned message, never half of a call group), `apply` writes the summary
//! as one replace event — a compare-and-swap on the `next_seq` the plan was made at — and
//! `records` reads the compactions back. `clear` is the cheaper tier: tool results replaced by a
//! placeholder, each answering the same call.
//!
//! Nothing here rewrites history: a summary shadows its range and the log keeps the originals
//! (`messages_at`).

mod apply;
mod clear;
mod groups;
mod plan;
mod records;

pub use apply::Summary;
pub use clear::ClearOptions;
pub use plan::{Plan, PlanOptions};

/// The metadata and event data key a compaction is recorded under.
pub const KEY: &str = "compaction";
