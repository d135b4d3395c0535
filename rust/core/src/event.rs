//! Events: one durable fact each. Surface events insert or replace a message in the fold;
//! bookkeeping events project to nothing.

use crate::message::Role;
use crate::time::Micros;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolResult,
    ToolCall,
    TurnStart,
    TurnEnd,
    StepStart,
    StepEnd,
    RequestHeader,
    Materialize,
    Remove,
}

pub const EVENT_TYPES: [EventType; 12] = [
    EventType::SystemMessage,
    EventType::UserMessage,
    EventType::AssistantMessage,
    EventType::ToolResult,
    EventType::ToolCall,
    EventType::TurnStart,
    EventType::TurnEnd,
    EventType::StepStart,
    EventType::StepEnd,
    EventType::RequestHeader,
    EventType::Materialize,
    EventType::Remove,
];

impl EventType {
    pub fn name(self) -> &'static str {
        match self {
            EventType::SystemMessage => "system_message",
            EventType::UserMessage => "user_message",
            EventType::AssistantMessage => "assistant_message",
            EventType::ToolResult => "tool_result",
            EventType::ToolCall => "tool_call",
            EventType::TurnStart => "turn_start",
            EventType::TurnEnd => "turn_end",
            EventType::StepStart => "step_start",
            EventType::StepEnd => "step_end",
            EventType::RequestHeader => "request_header",
            EventType::Materialize => "materialize",
            EventType::Remove => "remove",
        }
    }

    pub fn parse(s: &str) -> Option<EventType> {
        EVENT_TYPES.iter().copied().find(|t| t.name() == s)
    }

    pub fn is_surface(self) -> bool {
        matches!(
            self,
            EventType::SystemMessage
                | EventType::UserMessage
                | EventType::AssistantMessage
                | EventType::ToolResult
        )
    }

    /// Types a caller may write with `log_event`: not the ones the context writes itself.
    pub fn is_bookkeeping(self) -> bool {
        !self.is_surface() && !matches!(self, EventType::Materialize | EventType::Remove)
    }

    pub fn for_role(role: Role) -> EventType {
        match role {
            Role::System | Role::Developer => EventType::SystemMessage,
            Role::User => EventType::UserMessage,
            Role::Assistant => EventType::AssistantMessage,
            Role::Tool => EventType::ToolResult,
        }
    }
}

/// What an event does to the transcript (positions at the time): a surface event inserts its
/// message or replaces an inclusive range with it; a `remove` event deletes a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Insert(usize),
    Replace(usize, usize),
    Remove(usize, usize),
}

impl Op {
    /// The first position the op touches: every position before it is left as it was.
    pub fn first(self) -> usize {
        match self {
            Op::Insert(p) | Op::Replace(p, _) | Op::Remove(p, _) => p,
        }
    }

    /// How the transcript's length changes.
    pub fn growth(self) -> isize {
        match self {
            Op::Insert(_) => 1,
            Op::Replace(a, b) => -((b - a) as isize),
            Op::Remove(a, b) => -((b - a + 1) as isize),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Event<H> {
    pub seq: u64,
    pub kind: EventType,
    pub time: Micros,
    /// Bookkeeping payload, or for a surface event its extra keys (`source`).
    pub data: EventData,
    /// What the event does to the transcript: surface and `remove` events only.
    pub op: Option<Op>,
    /// The message of a surface event (`op` is then an insert or a replace).
    pub message: Option<H>,
}

/// An event's own `data` keys. Most surface events have none, so an empty payload takes one
/// word instead of a map: the log of a 100k-message context is half the size, and a fork's
/// copy of it half the work.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventData(Option<Box<Map<String, Value>>>);

impl EventData {
    pub fn new(m: Map<String, Value>) -> EventData {
        EventData((!m.is_empty()).then(|| Box::new(m)))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().flat_map(|m| m.iter())
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref().and_then(|m| m.get(key))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_event_is_small() {
        // The log holds one per message ever added; keep it to a cache line.
        assert!(std::mem::size_of::<super::Event<std::sync::Arc<crate::Message>>>() <= 64);
    }
}
