//! The plan as data, for a request built outside the core: the binding hands it to the
//! Python builders of LangChain and Pydantic AI objects, which then decide nothing of
//! pairing — which messages are sent where, which answer meets which call, what was
//! repaired and which ids were changed all come from here.

use super::{plan_with, refuse, AnswerSrc, Grammar, Plan, SentUnanswering, Step};
use crate::error::{Error, Result};
use crate::formats::interop;
use crate::message::{At, Content, Message};
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

/// What a request is built for: a provider's JSON (the core's exporters) or a framework's
/// objects (built in Python over an [`Outline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    OpenAiChat,
    OpenAiResponses,
    Anthropic,
    LangChain,
    PydanticAi,
}

impl Target {
    pub fn parse(s: &str) -> Result<Target> {
        Ok(match s {
            "openai_chat" => Target::OpenAiChat,
            "openai_responses" => Target::OpenAiResponses,
            "anthropic" => Target::Anthropic,
            "langchain" => Target::LangChain,
            "pydantic_ai" => Target::PydanticAi,
            _ => {
                return Err(Error::bad_argument(format!(
                    "unknown format {s:?}: expected openai_chat, openai_responses, anthropic, langchain or pydantic_ai"
                )))
            }
        })
    }

    /// The name its importer writes on what it makes (`metadata.interop.format`).
    pub fn name(self) -> &'static str {
        match self {
            Target::OpenAiChat => "openai_chat",
            Target::OpenAiResponses => "openai_responses",
            Target::Anthropic => "anthropic",
            Target::LangChain => "langchain",
            Target::PydanticAi => "pydantic_ai",
        }
    }

    /// The name the repairs are written with.
    fn title(self) -> &'static str {
        match self {
            Target::OpenAiChat => "OpenAI Chat",
            Target::OpenAiResponses => "OpenAI Responses",
            Target::Anthropic => "Anthropic",
            Target::LangChain => "LangChain",
            Target::PydanticAi => "Pydantic AI",
        }
    }

    /// The call ids it accepts.
    pub fn grammar(self) -> Grammar {
        match self {
            Target::OpenAiChat => Grammar::MaxLen(40),
            Target::OpenAiResponses => Grammar::MaxLen(64),
            Target::Anthropic => Grammar::Word,
            Target::LangChain | Target::PydanticAi => Grammar::Any,
        }
    }

    /// Which tool messages that answer no call it still sends where they are: LangChain's
    /// `FunctionMessage` and a `ChatMessage` of role tool, imported from LangChain, have a
    /// class of their own there; every other such message is left out.
    fn sent_unanswering(self) -> Option<SentUnanswering> {
        fn langchain_own(m: &Message) -> bool {
            matches!(
                interop::named_field(m, Target::LangChain.name(), "class").and_then(Value::as_str),
                Some("ChatMessage" | "FunctionMessage")
            )
        }
        match self {
            Target::LangChain => Some(langchain_own),
            _ => None,
        }
    }

    /// The plan of a request for `messages` (as shown, tool definitions included).
    pub fn plan<'a>(self, messages: &[&'a Message]) -> Plan<'a> {
        plan_with(
            messages,
            self.grammar(),
            self.title(),
            self.sent_unanswering(),
        )
    }

    /// The plan as data ([`Outline`]); with `strict`, a `FormatError` listing every repair.
    pub fn outline<'a>(self, messages: &[&'a Message], strict: bool) -> Result<Outline<'a>> {
        let p = self.plan(messages);
        p.check(strict)?;
        Ok(Outline::of(p, messages))
    }
}

/// A call, as a builder writes it.
#[derive(Debug)]
pub struct OutlineCall<'a> {
    pub id: &'a str,
    /// The id sent (`id`, or its mapping into the target's grammar).
    pub sent: Cow<'a, str>,
    pub name: &'a str,
    pub arguments: Option<&'a Value>,
    /// The `tool_calls` entry that makes it, and the `tool_use` part (index in the content);
    /// both when the same call is written both ways.
    pub entry: Option<u32>,
    pub part: Option<u32>,
}

/// An answer placed after its call's turn.
#[derive(Debug)]
pub struct OutlineAnswer<'a> {
    /// The call answered (index into [`Outline::calls`]).
    pub call: u32,
    /// The message it is in (`None`: the interrupted result, in the request only), and the
    /// `tool_result` part of that user message that holds it (`None`: a tool message).
    pub message: Option<usize>,
    pub part: Option<u32>,
    pub sent: Cow<'a, str>,
}

#[derive(Debug, Clone)]
pub enum OutlineStep {
    /// A message sent where it is (a user message without the results it holds).
    Message(usize),
    /// A run of assistant messages, then the answers to their calls.
    Turn {
        msgs: Range<usize>,
        answers: Range<usize>,
    },
}

/// The plan of a request as plain data: indices into `msgs`, `calls` and `answers`.
#[derive(Debug)]
pub struct Outline<'a> {
    /// The messages of the request (the tool definitions message left out) ...
    pub msgs: Vec<&'a Message>,
    /// ... and where each stands in the messages the plan was made for.
    pub source: Vec<usize>,
    pub calls: Vec<OutlineCall<'a>>,
    spans: Vec<Range<u32>>,
    pub answers: Vec<OutlineAnswer<'a>>,
    pub steps: Vec<OutlineStep>,
    /// Every repair, in words (what `strict` refuses with).
    pub problems: Vec<String>,
    /// The calls sent under another id: (id, id sent).
    pub ids: Vec<(&'a str, String)>,
}

impl<'a> Outline<'a> {
    fn of(p: Plan<'a>, given: &[&'a Message]) -> Outline<'a> {
        let mut source = Vec::with_capacity(p.msgs.len());
        let mut k = 0;
        for m in &p.msgs {
            while !std::ptr::eq(given[k], *m) {
                k += 1;
            }
            source.push(k);
            k += 1;
        }
        let mut calls = Vec::new();
        let mut spans = Vec::with_capacity(p.msgs.len());
        let mut ids = Vec::new();
        for (i, m) in p.msgs.iter().enumerate() {
            let start = calls.len() as u32;
            for (f, c) in m.found_calls().iter().zip(p.calls(i)) {
                if let Cow::Owned(t) = &c.target {
                    ids.push((c.id, t.clone()));
                }
                calls.push(OutlineCall {
                    id: c.id,
                    sent: c.sent(),
                    name: c.name(),
                    arguments: c.arguments(),
                    entry: m.call_entry(f),
                    part: match f.at {
                        At::Part(k) => Some(k),
                        At::Entry(_) => None,
                    },
                });
            }
            spans.push(start..calls.len() as u32);
        }
        let answers = p
            .answers
            .iter()
            .map(|a| OutlineAnswer {
                call: a.call,
                message: a.at,
                part: match (a.src, a.at) {
                    (AnswerSrc::Part(part), Some(at)) => part_index(p.msgs[at], part),
                    _ => None,
                },
                sent: a.target.clone(),
            })
            .collect();
        let mut steps = Vec::with_capacity(p.steps.len());
        for s in &p.steps {
            match s {
                Step::Msg(i) => steps.push(OutlineStep::Message(*i)),
                Step::Turn {
                    msgs,
                    answers,
                    absorb,
                } => {
                    steps.push(OutlineStep::Turn {
                        msgs: msgs.clone(),
                        answers: answers.clone(),
                    });
                    // The user message that held some of the answers: the rest of it is
                    // sent right after them (as the JSON exporters send it in one turn).
                    if let Some(j) = absorb {
                        steps.push(OutlineStep::Message(*j));
                    }
                }
            }
        }
        Outline {
            msgs: p.msgs,
            source,
            calls,
            spans,
            answers,
            steps,
            problems: p.problems,
            ids,
        }
    }

    /// The calls message `i` makes, in the order of [`Message::found_calls`].
    pub fn calls_of(&self, i: usize) -> Range<usize> {
        let r = &self.spans[i];
        r.start as usize..r.end as usize
    }

    /// Refuse when `strict` and anything was repaired.
    pub fn check(&self, strict: bool) -> Result<()> {
        refuse(&self.problems, strict)
    }
}

fn part_index(m: &Message, part: &crate::message::Part) -> Option<u32> {
    match &m.content {
        Content::Parts(parts) => parts
            .iter()
            .position(|p| std::ptr::eq(p, part))
            .map(|k| k as u32),
        _ => None,
    }
}
