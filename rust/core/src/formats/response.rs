//! What a provider answered, appended by `Context.add_response`: an OpenAI `ChatCompletion`
//! (its first choice), an OpenAI `Response` (its output items) or an Anthropic `Message`, as
//! messages plus the usage to add.

use super::interop::{array, object, INTEROP};
use super::{anthropic, err, openai_chat, openai_responses, TOP};
use crate::error::{Result, Trail};
use crate::message::Message;
use serde_json::{Map, Value};

/// Usage counts to add (the keys of `ctxfold.Usage`).
pub type UsageDelta = Vec<(&'static str, u64)>;

fn count(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

fn at_path<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// Every token count of a usage object (a key ending in `_tokens`, at any depth: the details
/// objects hold more) is a non-negative integer, or null where the SDKs leave one unset.
/// Anything else is refused rather than read as 0, before anything is appended.
fn check_counts(u: &Value, path: &Trail<'_>) -> Result<()> {
    let Value::Object(fields) = u else {
        return match u {
            Value::Null => Ok(()),
            _ => Err(err(path, "not an object")),
        };
    };
    for (k, v) in fields {
        let at = path.key(k);
        match v {
            Value::Null => {}
            _ if k.ends_with("_tokens") && v.as_u64().is_none() => {
                return Err(err(&at, format!("{v} is not a non-negative integer count")));
            }
            _ if k.ends_with("_tokens") => {}
            Value::Object(_) => check_counts(v, &at)?,
            _ => {}
        }
    }
    Ok(())
}

pub fn response(v: &Value) -> Result<(Vec<Message>, UsageDelta)> {
    let top = TOP.key("response");
    let o = object(v, &top)?;
    check_counts(o.get("usage").unwrap_or(&Value::Null), &top.key("usage"))?;
    let ty = o.get("type").and_then(Value::as_str);
    let object_kind = o.get("object").and_then(Value::as_str);
    let (mut messages, usage, meta) = if object_kind == Some("chat.completion")
        || o.contains_key("choices")
    {
        let at = top.key("choices");
        let choices = array(o.get("choices").unwrap_or(&Value::Null), &at)?;
        let first = choices.first().ok_or_else(|| err(&at, "no choice"))?;
        let at = at.index(0);
        let msg = first
            .get("message")
            .ok_or_else(|| err(&at, "missing \"message\""))?;
        let m = openai_chat::message_in(msg, &at.key("message"))?;
        let usage = openai_usage(
            o,
            [
                "prompt_tokens",
                "completion_tokens",
                "prompt_tokens_details",
            ],
        );
        let meta = pick(
            o,
            &["id", "model"],
            first.get("finish_reason").map(|f| ("finish_reason", f)),
        );
        (vec![m], usage, meta)
    } else if object_kind == Some("response") || (o.contains_key("output") && ty.is_none()) {
        let output = o
            .get("output")
            .ok_or_else(|| err(&top, "missing \"output\""))?;
        let at = top.key("output");
        let items = array(output, &at)?;
        let ms = items
            .iter()
            .enumerate()
            .map(|(i, it)| openai_responses::item_in(it, &at.index(i)))
            .collect::<Result<Vec<_>>>()?;
        let usage = openai_usage(o, ["input_tokens", "output_tokens", "input_tokens_details"]);
        (ms, usage, pick(o, &["id", "model"], None))
    } else if ty == Some("message") && o.get("role").and_then(Value::as_str) == Some("assistant") {
        let content = o
            .get("content")
            .ok_or_else(|| err(&top, "missing \"content\""))?;
        let mut turn = Map::new();
        turn.insert("role".into(), Value::String("assistant".into()));
        turn.insert("content".into(), content.clone());
        let m = anthropic::message_in(&Value::Object(turn), &top)?;
        let u = o.get("usage").unwrap_or(&Value::Null);
        let input = count(u.get("input_tokens"));
        let output = count(u.get("output_tokens"));
        let read = count(u.get("cache_read_input_tokens"));
        let created = count(u.get("cache_creation_input_tokens"));
        let usage = vec![
            ("input_tokens", input),
            ("output_tokens", output),
            ("total_tokens", input + output + read + created),
            ("cache_read_input_tokens", read),
            ("cache_creation_input_tokens", created),
        ];
        (
            vec![m],
            usage,
            pick(o, &["id", "model", "stop_reason"], None),
        )
    } else {
        return Err(err(
            &top,
            "not an OpenAI ChatCompletion, an OpenAI Response or an Anthropic Message",
        ));
    };
    let mut usage = usage;
    usage.push(("requests", 1));
    // Which answer each message came from: the response's id, model and why it stopped.
    for m in &mut messages {
        if let Some(Value::Object(i)) = m.metadata.get_mut(INTEROP) {
            i.insert("response".into(), Value::Object(meta.clone()));
        }
    }
    Ok((messages, usage))
}

/// OpenAI's usage, Chat's and Responses' alike but for the key names: `[input, output,
/// details]` (the details hold `cached_tokens`, the cache reads, and `cache_write_tokens`, the
/// tokens written to the cache). A missing total is the sum.
fn openai_usage(o: &Map<String, Value>, [input, output, details]: [&str; 3]) -> UsageDelta {
    let u = o.get("usage").unwrap_or(&Value::Null);
    let i = count(u.get(input));
    let out = count(u.get(output));
    vec![
        ("input_tokens", i),
        ("output_tokens", out),
        (
            "total_tokens",
            u.get("total_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(i + out),
        ),
        (
            "cache_read_input_tokens",
            count(at_path(u, &[details, "cached_tokens"])),
        ),
        (
            "cache_creation_input_tokens",
            count(at_path(u, &[details, "cache_write_tokens"])),
        ),
    ]
}

fn pick(
    o: &Map<String, Value>,
    keys: &[&str],
    extra: Option<(&str, &Value)>,
) -> Map<String, Value> {
    let mut m = Map::new();
    for k in keys {
        if let Some(v) = o.get(*k) {
            m.insert((*k).into(), v.clone());
        }
    }
    if let Some((k, v)) = extra {
        m.insert(k.into(), v.clone());
    }
    m
}
