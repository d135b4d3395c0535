//! What every exporter must get right before it writes a byte: which call each answer meets,
//! where answers go, what to do with calls never answered and answers whose call is not in
//! the request, and the ids the target accepts.
//!
//! A *turn* is a run of consecutive assistant messages; the answers to its calls are sent
//! right after it, in the order the source has them, then an interrupted result (`patch_dangling_tool_calls`'s
//! text) for each call the source never answers. An answer whose call is not before it is an
//! orphan and is left out; so is a second answer to the same call.

mod answers;
mod outline;

pub use outline::{OutlineStep, Target};

use crate::error::{Error, ErrorKind, Result};
pub use crate::message::CallSrc;
use crate::message::{part_type, Content, Kind, Message, Part, Role, INTERRUPTED};
use answers::Given;
use rustc_hash::FxHashSet as HashSet;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::ops::Range;

/// The ids a target accepts.
#[derive(Debug, Clone, Copy)]
pub enum Grammar {
    /// Any string of 1 to N characters (OpenAI: Chat 40, Responses 64).
    MaxLen(usize),
    /// `^[a-zA-Z0-9_-]+$` (Anthropic).
    Word,
    /// Any id, made once or more: a framework's objects carry ids as they are (LangChain,
    /// Pydantic AI), and the model behind them gets whatever its own client makes of them.
    Any,
}

impl Grammar {
    pub fn accepts(self, id: &str) -> bool {
        match self {
            Grammar::MaxLen(n) => !id.is_empty() && id.chars().count() <= n,
            Grammar::Any => true,
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
            Grammar::Word | Grammar::Any => 48,
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

#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub id: &'a str,
    /// The id sent: `id`, or its mapping into the target's grammar.
    pub target: Cow<'a, str>,
    pub src: CallSrc<'a>,
}

impl<'a> Call<'a> {
    /// The id as sent: a kept id as the message's own string (so that every request shares
    /// one Python string for it), else its mapping.
    pub fn sent(&self) -> Cow<'a, str> {
        match &self.target {
            Cow::Borrowed(_) => Cow::Borrowed(self.src.id()),
            Cow::Owned(t) => Cow::Owned(t.clone()),
        }
    }

    /// The tool's name ("" when the call has none).
    pub fn name(&self) -> &'a str {
        self.src.name()
    }

    pub fn arguments(&self) -> Option<&'a Value> {
        self.src.arguments()
    }
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
    /// The call it answers (index into the plan's calls, see [`Plan::call`]).
    pub call: u32,
    pub src: AnswerSrc<'a>,
    /// The message (index into `Plan::msgs`) it came from.
    pub at: Option<usize>,
}

impl Answer<'_> {
    pub fn interrupted_text() -> &'static str {
        INTERRUPTED
    }

    /// Sent with the answering message's own call id (kept, not mapped): what a piece of
    /// that message alone would write (`out::Piece`).
    pub fn id_kept(&self) -> bool {
        matches!(self.target, Cow::Borrowed(_))
    }
}

/// The call id a tool message answers, as it is (a piece's, where the id is kept).
pub fn answered(m: &Message) -> &str {
    m.tool_call_id.as_deref().unwrap_or("")
}

#[derive(Debug, Clone)]
pub enum Step {
    /// A message other than an assistant's or a tool's (its `tool_result` parts are sent
    /// with their calls, never here).
    Msg(usize),
    /// A run of assistant messages (indices into `Plan::msgs`), then the answers to their
    /// calls (indices into `Plan::answers`). `absorb`: the user message right after the run
    /// that held some of the answers (Anthropic sends its other content in the same user
    /// turn, after the results).
    Turn {
        msgs: Range<usize>,
        answers: Range<usize>,
        absorb: Option<usize>,
    },
}

/// What the plan and the exporters read of a message to decide how it is sent, gathered in
/// one pass (so that a message a piece is kept for is not read again, `out::Piece`).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub role: Role,
    /// A tool message without a `tool_call_id`.
    unanswering: bool,
    /// A tool message whose content holds more than text.
    pub media: bool,
    /// A message that only answers calls: a tool message, or a user message of nothing but
    /// `tool_result` parts. A run of them after a turn is where that turn's answers belong.
    answers_only: bool,
}

pub struct Plan<'a> {
    /// The messages, without the tool definitions message.
    pub msgs: Vec<&'a Message>,
    /// What is read of each of `msgs` (same index).
    pub rows: Vec<Row>,
    /// The calls of every message, in order; `spans[i]` are message `i`'s.
    calls: Vec<Call<'a>>,
    spans: Vec<Range<u32>>,
    /// The answers of every turn, in order (each turn's range is in its step).
    pub answers: Vec<Answer<'a>>,
    pub steps: Vec<Step>,
    /// The first tool definitions message: the request's `tools`.
    pub tools: Option<&'a Message>,
    /// Every repair made, in words.
    pub problems: Vec<String>,
}

impl<'a> Plan<'a> {
    /// The `g`-th call of the request (an [`Answer::call`]).
    pub fn call(&self, g: u32) -> &Call<'a> {
        &self.calls[g as usize]
    }

    /// The calls message `i` makes (assistant messages only).
    pub fn calls(&self, i: usize) -> &[Call<'a>] {
        let r = &self.spans[i];
        &self.calls[r.start as usize..r.end as usize]
    }

    /// Whether message `i` makes its calls under their own ids (none mapped): then it is
    /// written as it would be alone (`out::Piece`).
    pub fn ids_kept(&self, i: usize) -> bool {
        self.calls(i)
            .iter()
            .all(|c| matches!(c.target, Cow::Borrowed(_)))
    }

    /// Refuse when `strict` and anything was repaired.
    pub fn check(&self, strict: bool) -> Result<()> {
        refuse(&self.problems, strict)
    }
}

/// With `strict`, a `FormatError` listing every repair (none: `Ok`).
fn refuse(problems: &[String], strict: bool) -> Result<()> {
    if strict && !problems.is_empty() {
        return Err(Error::new(
            ErrorKind::NeedsRepair,
            format!(
                "the request would need {} repair{}: {}",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                problems.join("; ")
            ),
        ));
    }
    Ok(())
}

/// The calls an assistant message makes (`Message::calls`: found once), onto `out`, with
/// their ids as the plan reads them (kept with the message's calls).
fn calls_of<'a>(m: &'a Message, out: &mut Vec<Call<'a>>) {
    for f in m.found_calls() {
        let src = m.call_at(f.at);
        out.push(Call {
            id: &f.id,
            target: Cow::Borrowed(&f.id),
            src,
        });
    }
}

/// The calls an assistant message makes, with their ids as they are — the message's own
/// strings, which a request shares with every other (no plan, no mapping).
pub fn own_calls(m: &Message) -> Vec<Call<'_>> {
    m.found_calls()
        .iter()
        .map(|f| {
            let src = m.call_at(f.at);
            Call {
                id: src.id(),
                target: Cow::Borrowed(src.id()),
                src,
            }
        })
        .collect()
}

/// A tool message that answers no call but is sent where it is (a framework's message kind
/// for it: LangChain's `FunctionMessage`), instead of being left out.
pub type SentUnanswering = fn(&Message) -> bool;

pub fn plan_with<'a>(
    messages: &[&'a Message],
    grammar: Grammar,
    target: &str,
    sent_unanswering: Option<SentUnanswering>,
) -> Plan<'a> {
    // One pass over the messages gathers all the plan reads of them: at 100k messages each
    // is memory of its own, and every later step works on what is gathered here.
    let mut tools = None;
    let mut msgs: Vec<&'a Message> = Vec::with_capacity(messages.len());
    let mut rows: Vec<Row> = Vec::with_capacity(messages.len());
    let mut calls: Vec<Call<'a>> = Vec::new();
    let mut spans: Vec<Range<u32>> = Vec::with_capacity(messages.len());
    let mut given = Given::default();
    for (k, &m) in messages.iter().enumerate() {
        if let Some(ahead) = messages.get(k + AHEAD) {
            // The fields the plan reads are the first of a message (`Message`).
            crate::memory::prefetch(*ahead, 2);
        }
        if m.kind == Kind::ToolDefinitions {
            tools.get_or_insert(m);
            continue;
        }
        let i = msgs.len();
        msgs.push(m);
        let start = calls.len() as u32;
        if m.role == Role::Assistant {
            calls_of(m, &mut calls);
        }
        spans.push(start..calls.len() as u32);
        given.gather(m, i);
        rows.push(Row {
            role: m.role,
            unanswering: m.role == Role::Tool && m.tool_call_id.is_none(),
            media: m.role == Role::Tool && has_media(&m.content),
            answers_only: m.role == Role::Tool
                || (m.role == Role::User && only_results(&m.content)),
        });
    }
    let n = msgs.len();
    let mut problems = Vec::new();

    // Each call keeps its id when the target accepts it and no earlier call has it, else gets
    // one mapped into the grammar (one that no kept call has).
    let mut kept: HashSet<&str> =
        HashSet::with_capacity_and_hasher(calls.len(), Default::default());
    let keep: Vec<bool> = calls
        .iter()
        .map(|c| grammar.accepts(c.id) && (matches!(grammar, Grammar::Any) || kept.insert(c.id)))
        .collect();
    if keep.iter().any(|k| !k) {
        let mut used: HashSet<String> = HashSet::default();
        let mut seen: HashSet<&str> = HashSet::default();
        for (c, keep) in calls.iter_mut().zip(keep) {
            if keep {
                seen.insert(c.id);
                continue;
            }
            let id = c.id;
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
            c.target = Cow::Owned(mapped);
        }
    }

    let mut answers: Vec<Answer<'a>> = Vec::new();
    let mut steps = Vec::with_capacity(n);
    let mut found: Vec<(u32, Answer<'a>)> = Vec::new();
    let mut dangling: Vec<Answer<'a>> = Vec::new();
    let mut absorbed: Option<usize> = None;
    let mut i = 0;
    while i < n {
        let role = rows[i].role;
        if role == Role::Assistant {
            let mut j = i;
            while j < n && rows[j].role == Role::Assistant {
                j += 1;
            }
            found.clear();
            dangling.clear();
            let first = spans[i].start;
            for (ci, c) in (first..).zip(&calls[first as usize..spans[j - 1].end as usize]) {
                // The first answer to this id after the run (earlier ones are orphans).
                let hit = given.meet(c.id, j);
                match hit {
                    Some(g) => {
                        let a = given.at(g);
                        if !in_place(&rows, j, a.at) {
                            problems.push(format!(
                                "the answer to call {:?} is not right after its call; moved there",
                                c.id
                            ));
                        }
                        found.push((
                            g,
                            Answer {
                                // A kept id is sent as the answer's own string (equal to the
                                // call's): each message's strings stay its own.
                                target: match c.target {
                                    Cow::Borrowed(_) => Cow::Borrowed(a.id),
                                    Cow::Owned(_) => c.target.clone(),
                                },
                                call: ci,
                                src: a.src,
                                at: Some(a.at),
                            },
                        ));
                    }
                    None => {
                        problems.push(format!(
                            "call {:?} ({}) is never answered; sent with the interrupted result",
                            c.id,
                            c.name()
                        ));
                        dangling.push(Answer {
                            target: c.target.clone(),
                            call: ci,
                            src: AnswerSrc::Interrupted,
                            at: None,
                        });
                    }
                }
            }
            // In source order (answers are numbered in it), then the interrupted ones.
            found.sort_by_key(|(g, _)| *g);
            let start = answers.len();
            answers.extend(found.drain(..).map(|(_, a)| a));
            answers.append(&mut dangling);
            let absorb = (j < n
                && rows[j].role == Role::User
                && answers[start..].iter().any(|a| a.at == Some(j)))
            .then_some(j);
            absorbed = absorb;
            steps.push(Step::Turn {
                msgs: i..j,
                answers: start..answers.len(),
                absorb,
            });
            i = j;
            continue;
        }
        for g in given.unmet_in(i) {
            problems.push(format!(
                "the answer to call {:?} has no call before it in the request; left out",
                g.id
            ));
        }
        let sent_here = rows[i].unanswering && sent_unanswering.is_some_and(|f| f(msgs[i]));
        if rows[i].unanswering && !sent_here {
            problems.push("a tool message without a tool_call_id; left out".to_string());
        }
        if (role != Role::Tool || sent_here) && absorbed != Some(i) {
            steps.push(Step::Msg(i));
        }
        i += 1;
    }
    Plan {
        msgs,
        rows,
        calls,
        spans,
        answers,
        steps,
        tools,
        problems,
    }
}

/// How many messages ahead the gathering pass asks for a message's memory.
const AHEAD: usize = 8;

/// An answer is in place when only tool messages (and, last, the user message holding it)
/// stand between the end of its turn and it.
fn in_place(rows: &[Row], turn_end: usize, at: usize) -> bool {
    rows[turn_end..at].iter().all(|r| r.answers_only)
}

/// Whether content is a non-empty list of `tool_result` parts and nothing else.
fn only_results(c: &Content) -> bool {
    matches!(c, Content::Parts(parts) if !parts.is_empty()
        && parts.iter().all(|p| part_type(p) == Some("tool_result")))
}

/// Whether a message's content holds more than text (what a Chat `tool` message cannot take).
fn has_media(c: &Content) -> bool {
    matches!(c, Content::Parts(parts) if parts.iter().any(|p| part_type(p) != Some("text")))
}
