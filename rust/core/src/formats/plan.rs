//! What every exporter must get right before it writes a byte: which call each answer meets,
//! where answers go, what to do with calls never answered and answers whose call is not in
//! the request, and the ids the target accepts.
//!
//! A *turn* is a run of consecutive assistant messages; the answers to its calls are sent
//! right after it, in the order the source has them, then an interrupted result (SPEC §4.4's
//! text) for each call the source never answers. An answer whose call is not before it is an
//! orphan and is left out; so is a second answer to the same call.

use super::interop::INTERRUPTED;
use crate::error::{Error, Result};
use crate::message::{part_type, small_get, Kind, Message, Part, Role};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::VecDeque;

/// The ids a target accepts.
#[derive(Debug, Clone, Copy)]
pub enum Grammar {
    /// Any string of 1 to N characters (OpenAI: Chat 40, Responses 64).
    MaxLen(usize),
    /// `^[a-zA-Z0-9_-]+$` (Anthropic).
    Word,
}

impl Grammar {
    pub fn accepts(self, id: &str) -> bool {
        match self {
            Grammar::MaxLen(n) => !id.is_empty() && id.chars().count() <= n,
            Grammar::Word => {
                !id.is_empty()
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            }
        }
    }

    /// A deterministic id in the grammar for `id` (its `salt`-th try): the id's word
    /// characters, shortened, then 12 hex digits of a hash of the whole id.
    fn map(self, id: &str, salt: u32) -> String {
        let keep = match self {
            Grammar::MaxLen(n) => n.saturating_sub(13).min(48),
            Grammar::Word => 48,
        };
        let base: String = id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .take(keep)
            .collect();
        let mut h = Sha256::new();
        h.update(id.as_bytes());
        h.update(salt.to_le_bytes());
        let digest = h.finalize();
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        if base.is_empty() {
            format!("call_{hex}")
        } else {
            format!("{base}_{hex}")
        }
    }
}

/// Where a call is written in its message.
#[derive(Debug, Clone, Copy)]
pub enum CallSrc<'a> {
    /// A `tool_calls` entry.
    Entry(&'a Map<String, Value>),
    /// A `tool_use` part.
    Part(&'a Part),
}

#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub arguments: Option<&'a Value>,
    /// The id sent: `id`, or its mapping into the target's grammar.
    pub target: Cow<'a, str>,
    pub src: CallSrc<'a>,
}

#[derive(Debug, Clone, Copy)]
pub enum AnswerSrc<'a> {
    /// A `tool` message.
    Tool(&'a Message),
    /// A `tool_result` part of a user message.
    Part(&'a Part),
    /// The call was never answered: the interrupted result, in the request only.
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct Answer<'a> {
    pub target: Cow<'a, str>,
    pub name: &'a str,
    pub src: AnswerSrc<'a>,
    /// The message (index into `Plan::msgs`) it came from.
    pub at: Option<usize>,
}

impl Answer<'_> {
    pub fn interrupted_text() -> &'static str {
        INTERRUPTED
    }
}

#[derive(Debug, Clone)]
pub enum Step<'a> {
    /// A message other than an assistant's or a tool's (its `tool_result` parts are sent
    /// with their calls, never here).
    Msg(usize),
    /// A run of assistant messages, then the answers to their calls. `absorb`: the user
    /// message right after the run that held some of the answers (Anthropic sends its other
    /// content in the same user turn, after the results).
    Turn {
        msgs: Vec<usize>,
        answers: Vec<Answer<'a>>,
        absorb: Option<usize>,
    },
}

pub struct Plan<'a> {
    /// The messages, without the tool definitions message.
    pub msgs: Vec<&'a Message>,
    /// The calls of each message (assistant messages only).
    pub calls: Vec<Vec<Call<'a>>>,
    pub steps: Vec<Step<'a>>,
    /// The first tool definitions message: the request's `tools`.
    pub tools: Option<&'a Message>,
    /// Every repair made, in words.
    pub problems: Vec<String>,
}

impl<'a> Plan<'a> {
    /// Refuse when `strict` and anything was repaired.
    pub fn check(&self, strict: bool) -> Result<()> {
        if strict && !self.problems.is_empty() {
            return Err(Error::Format(format!(
                "the request would need {} repair{}: {}",
                self.problems.len(),
                if self.problems.len() == 1 { "" } else { "s" },
                self.problems.join("; ")
            )));
        }
        Ok(())
    }
}

/// The calls an assistant message makes: `tool_use` parts in order, then `tool_calls`
/// entries not already made by a part (the same call written both ways is one call).
fn calls_of(m: &Message) -> Vec<(CallSrc<'_>, &str, &str, Option<&Value>)> {
    let mut out = Vec::new();
    if let crate::message::Content::Parts(parts) = &m.content {
        for p in parts.iter().filter(|p| part_type(p) == Some("tool_use")) {
            if let Some(id) = p.get("call_id").and_then(Value::as_str) {
                let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                out.push((CallSrc::Part(p), id, name, p.get("arguments")));
            }
        }
    }
    let from_parts = out.len();
    for c in &m.tool_calls {
        let id = small_get(c, "id").and_then(Value::as_str).unwrap_or("");
        if out[..from_parts].iter().any(|(_, pid, _, _)| *pid == id) {
            continue;
        }
        let name = small_get(c, "name").and_then(Value::as_str).unwrap_or("");
        out.push((CallSrc::Entry(c), id, name, small_get(c, "arguments")));
    }
    out
}

/// The calls an assistant message makes, with their ids as they are (no plan, no mapping).
pub fn own_calls(m: &Message) -> Vec<Call<'_>> {
    calls_of(m)
        .into_iter()
        .map(|(src, id, name, arguments)| Call {
            id,
            name,
            arguments,
            target: Cow::Borrowed(id),
            src,
        })
        .collect()
}

/// The answers a message gives, with their call ids: a tool message's `tool_call_id`, or a
/// user message's `tool_result` parts. (An iterator: asked of every message, twice.)
fn answers_of(m: &Message) -> impl Iterator<Item = (&str, AnswerSrc<'_>)> {
    let tool = match m.role {
        Role::Tool => m.tool_call_id.as_deref().map(|id| (id, AnswerSrc::Tool(m))),
        _ => None,
    };
    let parts: &[Part] = match (m.role, &m.content) {
        (Role::User, crate::message::Content::Parts(parts)) => parts,
        _ => &[],
    };
    tool.into_iter().chain(
        parts
            .iter()
            .filter(|p| part_type(p) == Some("tool_result"))
            .filter_map(|p| {
                p.get("call_id")
                    .and_then(Value::as_str)
                    .map(|id| (id, AnswerSrc::Part(p)))
            }),
    )
}

pub fn plan<'a>(messages: &[&'a Message], grammar: Grammar, target: &str) -> Plan<'a> {
    let tools = messages
        .iter()
        .copied()
        .find(|m| m.kind == Kind::ToolDefinitions);
    let msgs: Vec<&'a Message> = messages
        .iter()
        .copied()
        .filter(|m| m.kind != Kind::ToolDefinitions)
        .collect();
    let mut problems = Vec::new();

    // Ids: a call keeps its id when the target accepts it and no earlier call has it.
    let raw: Vec<Vec<_>> = msgs
        .iter()
        .map(|m| {
            if m.role == Role::Assistant {
                calls_of(m)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut kept: HashSet<&str> = HashSet::default();
    let mut keeps: Vec<Vec<bool>> = Vec::with_capacity(raw.len());
    for cs in &raw {
        keeps.push(
            cs.iter()
                .map(|(_, id, _, _)| grammar.accepts(id) && kept.insert(*id))
                .collect(),
        );
    }
    let mut used: HashSet<String> = HashSet::default();
    let mut seen: HashSet<&str> = HashSet::default();
    let mut calls: Vec<Vec<Call<'a>>> = Vec::with_capacity(raw.len());
    for (cs, ks) in raw.into_iter().zip(keeps) {
        let mut out = Vec::with_capacity(cs.len());
        for ((src, id, name, arguments), keep) in cs.into_iter().zip(ks) {
            let target = if keep {
                seen.insert(id);
                Cow::Borrowed(id)
            } else {
                let mut salt = 0;
                let mapped = loop {
                    let t = grammar.map(id, salt);
                    if !kept.contains(t.as_str()) && !used.contains(&t) {
                        break t;
                    }
                    salt += 1;
                };
                used.insert(mapped.clone());
                problems.push(if seen.contains(id) {
                    format!("call id {id:?} is made more than once; sent as {mapped:?}")
                } else {
                    format!("call id {id:?} does not fit {target}'s ids; sent as {mapped:?}")
                });
                seen.insert(id);
                Cow::Owned(mapped)
            };
            out.push(Call {
                id,
                name,
                arguments,
                target,
                src,
            });
        }
        calls.push(out);
    }

    // Answers by call id, in source order: (message, position in it, answer).
    let mut index: HashMap<&'a str, VecDeque<(usize, usize, AnswerSrc<'a>, &'a str)>> =
        HashMap::default();
    for (i, m) in msgs.iter().enumerate() {
        for (k, (id, src)) in answers_of(m).enumerate() {
            index.entry(id).or_default().push_back((i, k, src, id));
        }
    }
    let mut consumed: HashSet<(usize, usize)> = HashSet::default();
    let mut absorbed: HashSet<usize> = HashSet::default();
    let mut steps = Vec::new();
    let n = msgs.len();
    let mut i = 0;
    while i < n {
        let m = msgs[i];
        if m.role == Role::Assistant {
            let mut j = i;
            while j < n && msgs[j].role == Role::Assistant {
                j += 1;
            }
            let mut found: Vec<((usize, usize), Answer<'a>)> = Vec::new();
            let mut dangling: Vec<Answer<'a>> = Vec::new();
            for cs in &calls[i..j] {
                for c in cs {
                    let q = index.get_mut(c.id);
                    let hit = q.and_then(|q| {
                        while q.front().is_some_and(|(at, _, _, _)| *at < j) {
                            q.pop_front();
                        }
                        q.pop_front()
                    });
                    match hit {
                        Some((at, k, src, own_id)) => {
                            consumed.insert((at, k));
                            if !in_place(&msgs, j, at) {
                                problems.push(format!(
                                    "the answer to call {:?} is not right after its call; moved there",
                                    c.id
                                ));
                            }
                            found.push((
                                (at, k),
                                Answer {
                                    // A kept id is sent as the answer's own string (equal to
                                    // the call's): each message's strings stay its own.
                                    target: match c.target {
                                        Cow::Borrowed(_) => Cow::Borrowed(own_id),
                                        Cow::Owned(_) => c.target.clone(),
                                    },
                                    name: c.name,
                                    src,
                                    at: Some(at),
                                },
                            ));
                        }
                        None => {
                            problems.push(format!(
                                "call {:?} ({}) is never answered; sent with the interrupted result",
                                c.id, c.name
                            ));
                            dangling.push(Answer {
                                target: c.target.clone(),
                                name: c.name,
                                src: AnswerSrc::Interrupted,
                                at: None,
                            });
                        }
                    }
                }
            }
            found.sort_by_key(|(k, _)| *k);
            let mut answers: Vec<Answer<'a>> = found.into_iter().map(|(_, a)| a).collect();
            answers.extend(dangling);
            let absorb =
                (j < n && msgs[j].role == Role::User && answers.iter().any(|a| a.at == Some(j)))
                    .then_some(j);
            if let Some(a) = absorb {
                absorbed.insert(a);
            }
            steps.push(Step::Turn {
                msgs: (i..j).collect(),
                answers,
                absorb,
            });
            i = j;
            continue;
        }
        for (k, (id, _)) in answers_of(m).enumerate() {
            if !consumed.contains(&(i, k)) {
                problems.push(format!(
                    "the answer to call {id:?} has no call before it in the request; left out"
                ));
            }
        }
        if m.role == Role::Tool && m.tool_call_id.is_none() {
            problems.push("a tool message without a tool_call_id; left out".to_string());
        }
        if m.role != Role::Tool && !absorbed.contains(&i) {
            steps.push(Step::Msg(i));
        }
        i += 1;
    }
    Plan {
        msgs,
        calls,
        steps,
        tools,
        problems,
    }
}

/// An answer is in place when only tool messages (and, last, the user message holding it)
/// stand between the end of its turn and it.
fn in_place(msgs: &[&Message], turn_end: usize, at: usize) -> bool {
    msgs[turn_end..at].iter().all(|m| m.role == Role::Tool)
}
