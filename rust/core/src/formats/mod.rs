//! Provider formats: a transcript as the request of OpenAI Chat Completions, OpenAI
//! Responses or Anthropic Messages, and their messages and answers back as [`Message`]s.
//!
//! Exporters read the messages as shown and build a [`J`] tree that borrows from them; the
//! binding serializes it straight into Python objects, the CLI into JSON text. Importers read
//! JSON values. The rules every exporter shares — pairing calls with their answers, answers
//! for dangling calls, dropping orphans, id grammars — live in [`plan`]; what is kept where so
//! that a request comes back byte-exact lives in [`interop`]. `docs/formats.md` has the tables.

pub mod anthropic;
pub mod interop;
pub mod media;
pub mod openai_chat;
pub mod openai_responses;
pub mod order;
pub mod out;
pub mod plan;
pub mod response;
pub mod shapes;
pub mod tools;

use crate::error::{Error, Result, Trail};
use crate::message::{Kind, Message, Role};
pub use out::J;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAiChat,
    OpenAiResponses,
    Anthropic,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        Ok(match s {
            "openai_chat" => Format::OpenAiChat,
            "openai_responses" => Format::OpenAiResponses,
            "anthropic" => Format::Anthropic,
            _ => {
                return Err(Error::bad_argument(format!(
                    "unknown format {s:?}: expected openai_chat, openai_responses or anthropic"
                )))
            }
        })
    }

    /// What the list an importer takes is called (in the places its errors name).
    pub fn input_name(self) -> &'static str {
        match self {
            Format::OpenAiResponses => "items",
            Format::OpenAiChat | Format::Anthropic => "messages",
        }
    }

    /// The name importers write on what they make (`"provider"` on reasoning parts,
    /// `metadata.interop.format` on messages).
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai_chat",
            Format::OpenAiResponses => "openai_responses",
            Format::Anthropic => "anthropic",
        }
    }
}

/// Options of an export.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// Refuse (with every problem listed) instead of repairing.
    pub strict: bool,
    /// Responses: the leading system and developer text as `instructions`.
    pub instructions: bool,
    /// Make a request: pair calls with their answers (the [`plan`]). `false` (Responses
    /// only): every message as the item(s) it exports to, in transcript order, with nothing
    /// added, dropped, moved or renamed — what a store of items (the Agents SDK session)
    /// gives back, a `function_call` still waiting for its output included.
    pub pair: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            strict: false,
            instructions: false,
            pair: true,
        }
    }
}

/// The keyword arguments of the request for `messages` (as shown) in `format`.
pub fn export<'a>(format: Format, messages: &[&'a Message], opts: ExportOptions) -> Result<J<'a>> {
    if !opts.pair && format != Format::OpenAiResponses {
        return Err(Error::bad_argument(format!(
            "pair=false (items as they are) is for openai_responses only, not {}",
            format.name()
        )));
    }
    match format {
        Format::OpenAiChat => openai_chat::export(messages, opts),
        Format::OpenAiResponses => openai_responses::export(messages, opts),
        Format::Anthropic => anthropic::export(messages, opts),
    }
}

/// Messages from a request's messages (`system`: Anthropic's top-level system prompt).
/// A leading system or developer message (Anthropic's `system`) is the request's system
/// prompt: a `SystemPromptMessage`, which a Context seeded with it keeps in its
/// `system_prompt` slot, so windows carry it.
pub fn import(format: Format, data: &Value, system: Option<&Value>) -> Result<Vec<Message>> {
    let mut messages = match format {
        Format::OpenAiChat => openai_chat::import(data),
        Format::OpenAiResponses => openai_responses::import(data),
        Format::Anthropic => anthropic::import(data, system),
    }?;
    // Anthropic's `system` adds a leading message, and one user turn may hold several
    // answers: its messages are one per wire turn only when the counts agree (`keep_shapes`
    // checks).
    if let Value::Array(wire) = data {
        let lead = messages.len().saturating_sub(wire.len()).min(1);
        if system.is_some() || lead == 0 {
            order::keep_shapes(format, &mut messages[lead..], wire);
        }
    }
    if let Some(first) = messages.first_mut() {
        if matches!(first.role, Role::System | Role::Developer) {
            first.kind = Kind::SystemPrompt;
        }
    }
    Ok(messages)
}

/// The messages of the list an importer of `f` takes, each read by `one` with its place
/// (`messages[3]`, `items[3]`).
fn each(
    data: &Value,
    f: Format,
    one: impl Fn(&Value, &Trail<'_>) -> Result<Message>,
) -> Result<Vec<Message>> {
    let list = TOP.key(f.input_name());
    interop::array(data, &list)?
        .iter()
        .enumerate()
        .map(|(i, v)| one(v, &list.index(i)))
        .collect()
}

/// Where an importer starts: the top of what it was given.
pub(crate) static TOP: Trail<'static> = Trail::Top;

/// A provider value that cannot be converted, where `place` leads:
/// `err(&messages.index(3).key("tool_calls").index(0).key("function"), "missing \"name\"")`.
pub fn err(place: &Trail<'_>, what: impl std::fmt::Display) -> Error {
    Error::unconvertible(what.to_string()).at_trail(place)
}
