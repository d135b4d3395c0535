//! The cheaper tier: old tool results replaced by a placeholder that answers the same call, so
//! the pairing stays whole and the originals stay in the log.

use crate::context::{Context, MessageHandle};
use crate::error::Result;
use crate::formats::plan::own_calls;
use crate::message::{part_call_id, part_type, Content, Kind, Role};
use crate::tokens::{count_text, message_tokens, value_text, Encoding};
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct ClearOptions {
    /// The latest results kept as they are.
    pub keep_last: usize,
    /// Results smaller than this are kept.
    pub min_tokens: u64,
    /// Results of calls to these tools are kept, and not counted in `keep_last`.
    pub exclude_tools: Vec<String>,
    pub placeholder: String,
    pub encoding: Encoding,
}

/// A tool result: a `tool` message, or one `tool_result` part of a message.
struct Found {
    position: usize,
    part: Option<usize>,
}

impl<H: MessageHandle> Context<H> {
    /// Replace each tool result but the last `keep_last` by the placeholder (one replace event
    /// each: a tool message's content, or the `tool_result` part alone). Returns the seqs.
    pub fn clear_tool_results(&mut self, o: &ClearOptions) -> Result<Vec<u64>> {
        let raw = self.raw_messages();
        // The tool each call id names (the latest call with the id).
        let mut tool_of: HashMap<&str, &str> = HashMap::new();
        let mut results: Vec<Found> = Vec::new();
        for (position, h) in raw.iter().enumerate() {
            let m = h.message();
            if m.role == Role::Assistant {
                for c in own_calls(m) {
                    tool_of.insert(c.id, c.name());
                }
                continue;
            }
            let excluded = |id: Option<&str>, name: Option<&str>| {
                let name = name.or_else(|| id.and_then(|id| tool_of.get(id).copied()));
                name.is_some_and(|n| o.exclude_tools.iter().any(|t| t == n))
            };
            if m.kind == Kind::ToolDefinitions {
                continue;
            }
            if m.role == Role::Tool {
                if !excluded(m.tool_call_id.as_deref(), m.name.as_deref()) {
                    results.push(Found {
                        position,
                        part: None,
                    });
                }
                continue;
            }
            if let Content::Parts(parts) = &m.content {
                for (i, p) in parts.iter().enumerate() {
                    if part_type(p) != Some("tool_result") {
                        continue;
                    }
                    let name = p.get("name").and_then(Value::as_str);
                    if !excluded(part_call_id(p), name) {
                        results.push(Found {
                            position,
                            part: Some(i),
                        });
                    }
                }
            }
        }
        let cleared = results.len().saturating_sub(o.keep_last);
        let mut seqs = Vec::new();
        for f in &results[..cleared] {
            let h = self.resolved(self.transcript().get(f.position).expect("in range"));
            let m = h.message();
            let mut new = m.clone();
            match f.part {
                None => {
                    if matches!(&m.content, Content::Text(t) if *t == o.placeholder)
                        || message_tokens(m, o.encoding)? < o.min_tokens
                    {
                        continue;
                    }
                    new.content = Content::Text(o.placeholder.clone());
                }
                Some(i) => {
                    let Content::Parts(parts) = &mut new.content else {
                        unreachable!("found among the parts")
                    };
                    let text = value_text(parts[i].get("content")).unwrap_or_default();
                    if text == o.placeholder
                        || (count_text(&text, o.encoding)? as u64) < o.min_tokens
                    {
                        continue;
                    }
                    parts[i].insert("content".into(), Value::String(o.placeholder.clone()));
                }
            }
            let seq = self
                .replace_with(f.position, f.position, H::wrap(new), Default::default())?
                .seq;
            seqs.push(seq);
        }
        Ok(seqs)
    }
}
