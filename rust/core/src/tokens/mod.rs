//! Token accounting: the counted text of a message, real BPE counts through
//! `tiktoken-rs`, and a per-message cache so a message is counted once per encoding.

use crate::error::{Error, Result};
use crate::json::compact_json;
use crate::message::{is_media_type, part_type, Content, Message};
pub mod cache;
mod encoding;
mod pretokenize;

pub use cache::TokenCache;
pub use encoding::{Encoding, ENCODINGS};

use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashSet;

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

pub(crate) fn value_text(v: Option<&Value>) -> Option<String> {
    match v {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(compact_json(v)),
    }
}

/// The counted text (docs/guide.md, Counting tokens), and the number of media parts.
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
                    Some(t) if is_media_type(t) => media += 1,
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
    let n = u32::try_from(n).unwrap_or(cache::UNCOUNTED - 1);
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
