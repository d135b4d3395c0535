//! Token accounting: the counted text of a message (SPEC §6), real BPE counts through
//! `tiktoken-rs`, and a per-message cache so a message is counted once per encoding.

use crate::error::{Error, Result};
use crate::json::compact_json;
use crate::message::{part_type, Content, Message, MEDIA_TYPES};
mod pretokenize;

use pretokenize::{Counter, Split};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// Every encoding `tiktoken-rs` ships. The index is the slot in a `TokenCache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Cl100kBase,
    O200kBase,
    O200kHarmony,
    P50kBase,
    P50kEdit,
    R50kBase,
}

pub const ENCODINGS: [Encoding; 6] = [
    Encoding::Cl100kBase,
    Encoding::O200kBase,
    Encoding::O200kHarmony,
    Encoding::P50kBase,
    Encoding::P50kEdit,
    Encoding::R50kBase,
];

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
            Encoding::O200kHarmony => "o200k_harmony",
            Encoding::P50kBase => "p50k_base",
            Encoding::P50kEdit => "p50k_edit",
            Encoding::R50kBase => "r50k_base",
        }
    }

    pub fn parse(name: &str) -> Result<Encoding> {
        ENCODINGS
            .iter()
            .copied()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = ENCODINGS.iter().map(|e| e.name()).collect();
                Error::Value(format!(
                    "unknown encoding {name:?}; known encodings: {}",
                    known.join(", ")
                ))
            })
    }

    pub fn slot(self) -> usize {
        self as usize
    }

    /// The fast counter of this encoding (built once, on first use).
    pub(crate) fn counter(self) -> Option<&'static Counter> {
        static COUNTERS: [OnceLock<Option<Counter>>; ENCODINGS.len()] =
            [const { OnceLock::new() }; ENCODINGS.len()];
        COUNTERS[self.slot()]
            .get_or_init(|| {
                let (split, max_rank) = match self {
                    Encoding::Cl100kBase => (Split::Cl100k, 100_300),
                    Encoding::O200kBase | Encoding::O200kHarmony => (Split::O200k, 202_000),
                    Encoding::P50kBase | Encoding::P50kEdit | Encoding::R50kBase => {
                        (Split::Gpt2, 50_300)
                    }
                };
                Counter::new(self.bpe(), split, max_rank)
            })
            .as_ref()
    }

    /// tiktoken-rs's BPE of this encoding (the binding rebuilds rank files from it).
    pub fn bpe(self) -> &'static CoreBPE {
        match self {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
            Encoding::P50kBase => tiktoken_rs::p50k_base_singleton(),
            Encoding::P50kEdit => tiktoken_rs::p50k_edit_singleton(),
            Encoding::R50kBase => tiktoken_rs::r50k_base_singleton(),
        }
    }
}

const UNCOUNTED: u32 = u32::MAX;

/// One count per encoding; `u32::MAX` means not counted yet. Atomic so that counting can
/// fill it from several threads, through shared references, without a lock.
#[derive(Debug)]
pub struct TokenCache([AtomicU32; ENCODINGS.len()]);

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache(std::array::from_fn(|_| AtomicU32::new(UNCOUNTED)))
    }
}

impl TokenCache {
    pub fn get(&self, enc: Encoding) -> Option<u32> {
        match self.0[enc.slot()].load(Ordering::Relaxed) {
            UNCOUNTED => None,
            n => Some(n),
        }
    }
    fn set(&self, enc: Encoding, n: u32) {
        self.0[enc.slot()].store(n.min(UNCOUNTED - 1), Ordering::Relaxed);
    }
}

/// Number of BPE tokens in `text`, special-token text counted as ordinary text.
/// Uses the fallible encoder, and guards against a panic inside the regex engine as well:
/// a Rust panic must never reach Python.
pub fn count_text(text: &str, enc: Encoding) -> Result<usize> {
    if let Some(counter) = enc.counter() {
        return std::panic::catch_unwind(|| counter.count(text))
            .map_err(|_| Error::Value("cannot tokenize text: the tokenizer failed".into()));
    }
    let bpe = enc.bpe();
    let empty: HashSet<&str> = HashSet::new();
    match std::panic::catch_unwind(|| bpe.encode(text, &empty)) {
        Ok(Ok((tokens, _))) => {
            // `encode` stops at special-token text only when it is allowed; none is, so the
            // whole text was encoded as ordinary text.
            Ok(tokens.len())
        }
        Ok(Err(e)) => Err(Error::Value(format!("cannot tokenize text: {}", e.message))),
        Err(_) => Err(Error::Value(
            "cannot tokenize text: the tokenizer failed".into(),
        )),
    }
}

fn call_text(name: Option<&Value>, args: Option<&Value>) -> String {
    let name = match name {
        Some(Value::String(s)) => s.clone(),
        Some(v) => compact_json(v),
        None => String::new(),
    };
    let args = match args {
        Some(Value::String(s)) => s.clone(),
        None => "{}".to_string(),
        Some(v) => compact_json(v),
    };
    format!("{name}({args})")
}

fn value_text(v: Option<&Value>) -> Option<String> {
    match v {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(compact_json(v)),
    }
}

/// The text SPEC §6 counts, and the number of media parts.
pub fn counted_text(m: &Message) -> (String, usize) {
    let mut pieces: Vec<String> = vec![m.role.as_str().to_string()];
    if let Some(n) = &m.name {
        pieces.push(n.clone());
    }
    let mut media = 0;
    match &m.content {
        Content::None => {}
        Content::Text(t) => pieces.push(t.clone()),
        Content::Parts(parts) => {
            for p in parts {
                match part_type(p) {
                    Some("text") | Some("thinking") => pieces.extend(value_text(p.get("text"))),
                    Some("tool_use") => pieces.push(call_text(p.get("name"), p.get("arguments"))),
                    Some("tool_result") => pieces.extend(value_text(p.get("content"))),
                    Some(t) if MEDIA_TYPES.contains(&t) => media += 1,
                    _ => pieces.push(compact_json(&Value::Object(p.clone()))),
                }
            }
        }
    }
    for c in &m.tool_calls {
        pieces.push(call_text(c.get("name"), c.get("arguments")));
    }
    (pieces.join("\n"), media)
}

/// Tokens of one message, from its cache when counted before.
pub fn message_tokens(m: &Message, enc: Encoding) -> Result<u64> {
    if let Some(n) = m.tokens.get(enc) {
        return Ok(n as u64);
    }
    let (text, media) = counted_text(m);
    let n = 3 + count_text(&text, enc)? + 85 * media;
    let n = u32::try_from(n).unwrap_or(UNCOUNTED - 1);
    m.tokens.set(enc, n);
    Ok(n as u64)
}

/// Count every message not counted yet, on every core. Callers release the GIL around this.
pub fn warm<'a, I>(messages: I, enc: Encoding) -> Result<()>
where
    I: IntoIterator<Item = &'a Message>,
{
    let todo: Vec<&Message> = messages
        .into_iter()
        .filter(|m| m.tokens.get(enc).is_none())
        .collect();
    if todo.len() < 64 {
        for m in todo {
            message_tokens(m, enc)?;
        }
        return Ok(());
    }
    todo.par_iter()
        .try_for_each(|m| message_tokens(m, enc).map(|_| ()))
}
