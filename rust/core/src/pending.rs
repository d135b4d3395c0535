//! The tool calls an agent still has to run: every call an assistant message makes (as
//! `message::calls` finds them) that no later message answers, oldest first.
//!
//! A loop asks this after every model turn, so it reads back from the end only as far as it
//! must: to the last turn (a run of consecutive assistant messages, as the Responses format
//! writes one turn) that left nothing unanswered. Calls before it are settled — the model has
//! moved on from them — so the cost is the messages since that turn, not the transcript.

use crate::context::{Context, MessageHandle};
use crate::message::Role;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// One call still to run.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    pub id: String,
    pub name: String,
    /// The arguments decoded: a dict as given, a JSON string's object, `{}` when none were
    /// given; `None` when the string is not a JSON object (the model wrote bad JSON).
    pub arguments: Option<Map<String, Value>>,
    /// The arguments exactly as given (a string or a dict), `None` when none were.
    pub raw_arguments: Option<Value>,
    /// The position of the message that made the call.
    pub message_index: usize,
}

impl<H: MessageHandle> Context<H> {
    pub fn pending_tool_calls(&self) -> Vec<PendingCall> {
        let mut answered: HashSet<String> = HashSet::new();
        // Newest turn first; each turn's calls in message order.
        let mut turns: Vec<Vec<PendingCall>> = Vec::new();
        let mut p = self.len();
        while p > 0 {
            let m = self.raw_at(p - 1).expect("in range").message();
            if m.role != Role::Assistant {
                answered.extend(m.answers());
                p -= 1;
                continue;
            }
            let mut start = p - 1;
            while start > 0
                && self.raw_at(start - 1).expect("in range").message().role == Role::Assistant
            {
                start -= 1;
            }
            let mut pending = Vec::new();
            for i in start..p {
                let m = self.raw_at(i).expect("in range").message();
                for f in m.found_calls() {
                    if answered.contains(&*f.id) {
                        continue;
                    }
                    let raw = m.call_arguments(f.at).filter(|v| !v.is_null()).cloned();
                    pending.push(PendingCall {
                        id: f.id.to_string(),
                        name: m.call_name(f.at).to_string(),
                        arguments: decode(raw.as_ref()),
                        raw_arguments: raw,
                        message_index: i,
                    });
                }
            }
            if pending.is_empty() {
                break;
            }
            turns.push(pending);
            p = start;
        }
        let mut seen = HashSet::new();
        turns
            .into_iter()
            .rev()
            .flatten()
            .filter(|c| seen.insert(c.id.clone()))
            .collect()
    }
}

fn decode(raw: Option<&Value>) -> Option<Map<String, Value>> {
    match raw {
        None => Some(Map::new()),
        Some(Value::Object(o)) => Some(o.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::context::Context;
    use crate::message::Message;
    use serde_json::{json, Map, Value};
    use std::sync::Arc;

    fn msg(v: Value) -> Arc<Message> {
        Arc::new(Message::from_json(&v).unwrap())
    }

    #[test]
    fn unanswered_calls_oldest_first_and_no_further_back_than_needed() {
        let mut c: Context<Arc<Message>> = Context::default();
        let old = json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "old", "name": "f", "arguments": "{}"}]});
        c.append(msg(old), "messages", None).unwrap();
        c.append(
            msg(json!({"role": "user", "content": "never mind"})),
            "messages",
            None,
        )
        .unwrap();
        // answered by nothing, but a later turn completed: settled
        c.append(
            msg(json!({"role": "assistant", "content": "done"})),
            "messages",
            None,
        )
        .unwrap();
        c.append(
            msg(json!({"role": "user", "content": "go"})),
            "messages",
            None,
        )
        .unwrap();
        c.append(
            msg(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "name": "f", "arguments": "{\"x\": 1}"},
            {"id": "b", "name": "g", "arguments": {"y": 2}}]})),
            "messages",
            None,
        )
        .unwrap();
        c.append(
            msg(json!({"role": "tool", "tool_call_id": "a", "content": "ok"})),
            "messages",
            None,
        )
        .unwrap();
        let p = c.pending_tool_calls();
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].id.as_str(), p[0].name.as_str(), p[0].message_index),
            ("b", "g", 4)
        );
        let mut y = Map::new();
        y.insert("y".into(), json!(2));
        assert_eq!(p[0].arguments, Some(y));
    }
}
