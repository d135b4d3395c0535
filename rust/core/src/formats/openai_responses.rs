//! OpenAI Responses: `{"input": [...], "tools": [...]}` (+ `"instructions"`) and back, one
//! message per item: a message item is a message; a `function_call` an assistant message with
//! one `tool_calls` entry; a `function_call_output` a tool message; a `reasoning` item an
//! assistant message holding one thinking part; any other item (built-in tool calls,
//! `item_reference`, `compaction`, ...) a message holding the item as its one part, sent back
//! as it came and to this format only.

use super::interop::{
    self, arguments, block, finish, kind, object, opt_str, own_reasoning, req_str, source_url,
    url_source, Keep,
};
use super::out::{Obj, J};
use super::plan::{answered, own_calls, AnswerSrc, Call, CallSrc, Step, Target};
use super::{err, shapes, tools, ExportOptions, Format};
use crate::error::Result;
use crate::message::{part_type, Content, Kind, Message, Part, Role};
use serde_json::{Map, Value};
use std::borrow::Cow;

const F: Format = Format::OpenAiResponses;

pub fn export<'a>(messages: &[&'a Message], opts: ExportOptions) -> Result<J<'a>> {
    if !opts.pair {
        return export_as_is(messages, opts);
    }
    let p = Target::OpenAiResponses.plan(messages);
    p.check(opts.strict)?;
    let mut req = Request::new(opts, p.msgs.len());
    for step in &p.steps {
        match step {
            Step::Msg(i) => {
                let m = p.msgs[*i];
                if !req.instructions(m) {
                    req.out.push(J::piece(m, "openai_responses.message", |m| {
                        verbatim(m)
                            .or_else(|| input_message(m))
                            .into_iter()
                            .collect()
                    }));
                }
            }
            Step::Turn { msgs, answers, .. } => {
                req.leading = false;
                for i in msgs.clone() {
                    let m = p.msgs[i];
                    if p.ids_kept(i) {
                        req.out.push(assistant_piece(m));
                    } else {
                        assistant_items(m, p.calls(i), &mut req.out);
                    }
                }
                for a in &p.answers[answers.clone()] {
                    req.out.push(match a.src {
                        AnswerSrc::Tool(m) if a.id_kept() => output_piece(m),
                        src => output_item(a.target.clone(), src),
                    });
                }
            }
        }
    }
    Ok(req.done(p.tools))
}

/// A request being written, paired or not: the items so far, and the leading system and
/// developer text while it goes to `instructions`.
struct Request<'a> {
    out: Vec<J<'a>>,
    instructions: Vec<&'a str>,
    /// Still at the start, with `instructions` asked for.
    leading: bool,
}

impl<'a> Request<'a> {
    fn new(opts: ExportOptions, n: usize) -> Self {
        Request {
            out: Vec::with_capacity(n),
            instructions: Vec::new(),
            leading: opts.instructions,
        }
    }

    /// Whether `m` is leading system or developer text, written to `instructions`. Any
    /// other message ends the leading run.
    fn instructions(&mut self, m: &'a Message) -> bool {
        if self.leading && matches!(m.role, Role::System | Role::Developer) {
            push_text(&m.content, &mut self.instructions);
            return true;
        }
        self.leading = false;
        false
    }

    /// `instructions` (when any), `input`, `tools` (when the source defines some).
    fn done(self, defs: Option<&'a Message>) -> J<'a> {
        let mut req = Obj::default();
        if !self.instructions.is_empty() {
            req.push("instructions", J::String(self.instructions.join("\n\n")));
        }
        req.push("input", J::Arr(self.out));
        if let Some(t) = defs.and_then(tools::openai_responses) {
            req.push("tools", t);
        }
        req.done()
    }
}

/// An assistant message's items, its calls under their own ids.
fn assistant_piece(m: &Message) -> J<'_> {
    J::piece(m, "openai_responses.assistant", |m| {
        let mut out = Vec::new();
        assistant_items(m, &own_calls(m), &mut out);
        out
    })
}

/// A tool message's `function_call_output`, under its own call id.
fn output_piece(m: &Message) -> J<'_> {
    J::piece(m, "openai_responses.output", |m| {
        vec![output_item(Cow::Borrowed(answered(m)), AnswerSrc::Tool(m))]
    })
}

/// The `function_call_output` item answering `call_id`.
fn output_item<'a>(call_id: Cow<'a, str>, src: AnswerSrc<'a>) -> J<'a> {
    let (output, own) = match src {
        AnswerSrc::Tool(m) => (
            match &m.content {
                Content::None => J::Lit(""),
                Content::Text(t) => J::Str(t),
                Content::Parts(parts) => J::Arr(input_parts(parts.iter(), interop::from(m, F))),
            },
            Some(m),
        ),
        AnswerSrc::Part(part) => (
            match part.get("content") {
                Some(Value::String(s)) => J::Str(s),
                Some(Value::Array(items)) => J::Arr(input_parts(
                    items.iter().filter_map(Value::as_object),
                    false,
                )),
                None | Some(Value::Null) => J::Lit(""),
                Some(other) => J::String(crate::json::compact_json(other)),
            },
            None,
        ),
        AnswerSrc::Interrupted => (J::Str(crate::message::INTERRUPTED), None),
    };
    let o = J::obj()
        .put("type", J::Lit("function_call_output"))
        .put("call_id", J::cow(call_id))
        .put("output", output);
    match own {
        Some(m) => finish(o, m, F),
        None => o.done(),
    }
}

/// `pair: false`: each message as the item(s) it exports to, in transcript order, with no
/// plan — a call without its output and an output without its call go as they are, no
/// interrupted result is added, no id is mapped. What a session that stores items one by one
/// must give back (the Agents SDK pops and rewinds single items). Nothing is repaired, so
/// `strict` has nothing to refuse; a tool message without a `tool_call_id` has no item and
/// is an error rather than left out.
fn export_as_is<'a>(messages: &[&'a Message], opts: ExportOptions) -> Result<J<'a>> {
    let defs = messages
        .iter()
        .copied()
        .find(|m| m.kind == Kind::ToolDefinitions);
    let mut req = Request::new(opts, messages.len());
    for (i, &m) in messages.iter().enumerate() {
        if m.kind == Kind::ToolDefinitions || req.instructions(m) {
            continue;
        }
        req.out.push(match m.role {
            Role::Assistant => assistant_piece(m),
            Role::Tool if m.tool_call_id.is_none() => {
                return Err(err(
                    &format!("messages[{i}]"),
                    "a tool message without a tool_call_id has no Responses item",
                ))
            }
            Role::Tool => output_piece(m),
            _ => J::piece(m, "openai_responses.item", |m| {
                if let Some(item) = verbatim(m) {
                    return vec![item];
                }
                // A user message's tool results are its outputs, before the rest of it (as
                // a request sends them, right after their calls).
                let mut out = Vec::new();
                if let Content::Parts(parts) = &m.content {
                    for p in parts.iter().filter(|p| part_type(p) == Some("tool_result")) {
                        if let Some(id) = p.get("call_id").and_then(Value::as_str) {
                            out.push(output_item(Cow::Borrowed(id), AnswerSrc::Part(p)));
                        }
                    }
                }
                out.extend(input_message(m));
                out
            }),
        });
    }
    Ok(req.done(defs))
}

fn push_text<'a>(c: &'a Content, out: &mut Vec<&'a str>) {
    match c {
        Content::None => {}
        Content::Text(t) => out.push(t),
        Content::Parts(parts) => out.extend(
            parts
                .iter()
                .filter(|p| part_type(p) == Some("text"))
                .filter_map(interop::text_of),
        ),
    }
}

/// An item this format made that ctxfold has no meaning for, sent back as it came.
fn verbatim(m: &Message) -> Option<J<'_>> {
    interop::field(m, F, "item")?;
    match &m.content {
        Content::Parts(parts) if parts.len() == 1 => {
            Some(block(&parts[0], part_type(&parts[0])?, &[], &[], true).of(m))
        }
        _ => None,
    }
}

/// A system, developer or user message as an input message item.
fn input_message(m: &Message) -> Option<J<'_>> {
    let own = interop::from(m, F);
    let content = match &m.content {
        Content::None => return None,
        Content::Text(t) => J::Str(t),
        Content::Parts(parts) => {
            let items = if m.role == Role::User {
                input_parts(parts.iter(), own)
            } else {
                input_parts(parts.iter().filter(|p| part_type(p) == Some("text")), own)
            };
            if items.is_empty() {
                return None;
            }
            J::Arr(items)
        }
    };
    let o = J::obj()
        .put("role", J::Lit(m.role.as_str()))
        .put("content", content);
    Some(finish(o, m, F))
}

/// Parts as input content (`input_text`, `input_image`, `input_file`).
fn input_parts<'a>(parts: impl Iterator<Item = &'a Part>, own: bool) -> Vec<J<'a>> {
    parts.filter_map(|p| input_part(p, own)).collect()
}

pub fn input_part(p: &Part, own: bool) -> Option<J<'_>> {
    match part_type(p)? {
        "text" => Some(block(p, "input_text", &[], &["text"], own).done()),
        "image" | "image_url" => {
            let source = super::media::image_source(p)?;
            let s = source.as_object()?;
            let mut o = J::obj().put("type", J::Lit("input_image"));
            match s.get("type").and_then(Value::as_str)? {
                "file" => o.push("file_id", J::Owned(s.get("file_id")?.clone())),
                _ => o.push("image_url", J::String(source_url(&source)?)),
            }
            o.push(
                "detail",
                shapes::image_detail(super::media::image_detail(p))
                    .map(J::Val)
                    .unwrap_or(J::Lit("auto")),
            );
            Some(o.done())
        }
        "file" | "pdf" => {
            let s = p.get("source")?.as_object()?;
            let mut o = J::obj().put("type", J::Lit("input_file"));
            match s.get("type").and_then(Value::as_str)? {
                "file" => o.push("file_id", J::Val(s.get("file_id")?)),
                "url" => o.push("file_url", J::Val(s.get("url")?)),
                "base64" => o.push("file_data", J::String(source_url(p.get("source")?)?)),
                _ => return None,
            }
            // The SDKs type a file name as a string: anything else is not sent.
            if let Some(n) = p.get("filename").filter(|v| v.is_string()) {
                o.push("filename", J::Val(n));
            }
            Some(o.done())
        }
        "thinking" | "tool_use" | "tool_result" | "tool" | "audio" | "video" => None,
        ty if own => Some(block(p, ty, &[], &[], true).done()),
        _ => None,
    }
}

/// The items of one assistant message, in the order of its parts, then its `tool_calls`.
fn assistant_items<'a>(m: &'a Message, calls: &[Call<'a>], out: &mut Vec<J<'a>>) {
    let own = interop::from(m, F);
    if let Some(item) = verbatim(m) {
        out.push(item);
        return;
    }
    let start = out.len();
    let mut by_part = calls.iter().filter(|c| matches!(c.src, CallSrc::Part(_)));
    match &m.content {
        Content::None => {}
        Content::Text(t) => out.push(
            J::obj()
                .put("role", J::Lit("assistant"))
                .put("content", J::Str(t))
                .done(),
        ),
        Content::Parts(parts) => {
            let mut texts: Vec<&'a Part> = Vec::new();
            for p in parts {
                match part_type(p) {
                    Some("text" | "refusal") => {
                        texts.push(p);
                        continue;
                    }
                    _ => flush_text(&mut texts, own, out),
                }
                match part_type(p) {
                    Some("thinking")
                        if own_reasoning(p, F) && p.get("id").is_some_and(Value::is_string) =>
                    {
                        out.push(reasoning_out(p))
                    }
                    Some("tool_use") if p.get("call_id").and_then(Value::as_str).is_some() => {
                        if let Some(c) = by_part.next() {
                            out.push(call_out(c, own));
                        }
                    }
                    _ => {}
                }
            }
            flush_text(&mut texts, own, out);
        }
    }
    for c in calls.iter().filter(|c| matches!(c.src, CallSrc::Entry(_))) {
        out.push(call_out(c, own));
    }
    // Every item here is written for `m` (its strings are `m`'s: see `J::Of`).
    for item in &mut out[start..] {
        if let J::Obj(entries) = item {
            *item = J::Of(m, std::mem::take(entries));
        }
    }
    // The message's own wire keys go back on its item when it made exactly one.
    if own && out.len() == start + 1 {
        if let Some(J::Obj(entries) | J::Of(_, entries)) = out.pop() {
            out.push(finish(Obj(entries), m, F));
        }
    }
}

/// Text parts as one assistant message item: output text when they came from this format
/// (with their keys as they came: `annotations` only when it was there, as the SDK's own
/// sessions give an item back), else the text as a string.
fn flush_text<'a>(texts: &mut Vec<&'a Part>, own: bool, out: &mut Vec<J<'a>>) {
    if texts.is_empty() {
        return;
    }
    let content = if own {
        J::Arr(
            texts
                .iter()
                .map(|p| {
                    if part_type(p) == Some("text") {
                        block(p, "output_text", &[], &[], true).done()
                    } else {
                        block(p, "refusal", &[], &[], true).done()
                    }
                })
                .collect(),
        )
    } else if let [one] = texts.as_slice() {
        // One text part: its own string, not a copy (see `J::Of`).
        match crate::message::small_get(one, "text") {
            Some(v @ Value::String(_)) if part_type(one) == Some("text") => J::Val(v),
            _ => J::Lit(""),
        }
    } else {
        let joined: String = texts
            .iter()
            .filter(|p| part_type(p) == Some("text"))
            .filter_map(|p| interop::text_of(p))
            .collect();
        J::String(joined)
    };
    texts.clear();
    out.push(
        J::obj()
            .put("role", J::Lit("assistant"))
            .put("content", content)
            .done(),
    );
}

fn reasoning_out(p: &Part) -> J<'_> {
    let mut o = Obj::default();
    o.push("type", J::Lit("reasoning"));
    for (k, v) in p {
        if !matches!(k.as_str(), "type" | "text" | "provider") {
            o.push(k.as_str(), J::Val(v));
        }
    }
    if !o.has("summary") {
        let summary = match interop::text_of(p) {
            Some(t) if !t.is_empty() => vec![J::obj()
                .put("type", J::Lit("summary_text"))
                .put("text", J::Str(t))
                .done()],
            _ => Vec::new(),
        };
        o.push("summary", J::Arr(summary));
    }
    o.done()
}

fn call_out<'a>(c: &Call<'a>, own: bool) -> J<'a> {
    let mut o = J::obj()
        .put("type", J::Lit("function_call"))
        .put("call_id", J::cow(c.sent()))
        .put("name", J::Str(c.name()))
        .put("arguments", arguments(c.arguments()));
    if own {
        let src = match c.src {
            CallSrc::Entry(e) => e,
            CallSrc::Part(p) => p,
        };
        for (k, v) in src {
            if !matches!(
                k.as_str(),
                "type" | "id" | "call_id" | "name" | "arguments" | "provider"
            ) {
                o.push(k.as_str(), J::Val(v));
            }
        }
    }
    o.done()
}

// ---- import -----------------------------------------------------------------------------

pub fn import(data: &Value) -> Result<Vec<Message>> {
    super::each(data, F, item_in)
}

pub fn item_in(v: &Value, at: &str) -> Result<Message> {
    let o = object(v, at)?;
    let ty = opt_str(o, "type", at)?;
    let mut keep = Keep::new(F, o);
    match ty {
        None | Some("message") => {
            let role = match req_str(o, "role", at)? {
                r @ ("user" | "system" | "developer" | "assistant") => Role::parse(r)?,
                other => {
                    return Err(err(
                        &format!("{at}.role"),
                        format!("unsupported role {other:?}"),
                    ))
                }
            };
            let content = o
                .get("content")
                .ok_or_else(|| err(at, "missing \"content\""))?;
            let place = format!("{at}.content");
            let content = match content {
                Value::String(s) => Content::Text(s.clone()),
                Value::Array(parts) => Content::Parts(
                    parts
                        .iter()
                        .enumerate()
                        .map(|(j, p)| part_in(p, &format!("{place}[{j}]")))
                        .collect::<Result<_>>()?,
                ),
                other => {
                    return Err(err(
                        &place,
                        format!("must be a string or a list of parts, got {}", kind(other)),
                    ))
                }
            };
            for (k, val) in o {
                if k != "role" && k != "content" {
                    keep.extra(k, val);
                }
            }
            let mut m = Message::new(role, content);
            m.metadata = keep.metadata(&["role", "content"]);
            Ok(m)
        }
        Some("function_call") => {
            let call_id = req_str(o, "call_id", at)?;
            let name = req_str(o, "name", at)?;
            let args = req_str(o, "arguments", at)?;
            for (k, val) in o {
                if !matches!(k.as_str(), "type" | "call_id" | "name" | "arguments") {
                    keep.extra(k, val);
                }
            }
            let mut c = Map::new();
            c.insert("id".into(), Value::String(call_id.into()));
            c.insert("name".into(), Value::String(name.into()));
            c.insert("arguments".into(), Value::String(args.into()));
            let mut m = Message::new(Role::Assistant, Content::None);
            m.tool_calls.push(c);
            m.metadata = keep.metadata(&["type", "call_id", "name", "arguments"]);
            Ok(m)
        }
        Some("function_call_output") => {
            let call_id = req_str(o, "call_id", at)?;
            let place = format!("{at}.output");
            let content = match o.get("output") {
                Some(Value::String(s)) => Content::Text(s.clone()),
                Some(Value::Array(parts)) => Content::Parts(
                    parts
                        .iter()
                        .enumerate()
                        .map(|(j, p)| part_in(p, &format!("{place}[{j}]")))
                        .collect::<Result<_>>()?,
                ),
                None => return Err(err(at, "missing \"output\"")),
                Some(other) => {
                    return Err(err(
                        &place,
                        format!("must be a string or a list of parts, got {}", kind(other)),
                    ))
                }
            };
            for (k, val) in o {
                if !matches!(k.as_str(), "type" | "call_id" | "output") {
                    keep.extra(k, val);
                }
            }
            let mut m = Message::new(Role::Tool, content);
            m.tool_call_id = Some(call_id.into());
            m.metadata = keep.metadata(&["type", "call_id", "output"]);
            Ok(m)
        }
        Some("reasoning") => {
            req_str(o, "id", at)?; // the API finds the reasoning it made by its id
            let mut p = Map::new();
            p.insert("type".into(), Value::String("thinking".into()));
            p.insert("text".into(), Value::String(reasoning_text(o, at)?));
            for (k, val) in o {
                if k != "type" {
                    p.insert(k.clone(), val.clone());
                }
            }
            p.insert("provider".into(), Value::String(F.name().into()));
            let mut m = Message::new(Role::Assistant, Content::Parts(vec![p]));
            // The exporter writes `type` first, then the item's keys: the wire order is kept
            // when it differs (the SDK's `model_dump()` puts `id` and `summary` first).
            let written: Vec<&str> = std::iter::once("type")
                .chain(o.keys().map(String::as_str).filter(|k| *k != "type"))
                .collect();
            m.metadata = keep.metadata(&written);
            Ok(m)
        }
        Some(other) => {
            // Output of a tool the client ran goes in as the user's; everything else the model made.
            let role = if other.ends_with("_output") || other.ends_with("_response") {
                Role::User
            } else {
                Role::Assistant
            };
            keep.set("item", Value::Bool(true));
            let mut m = Message::new(role, Content::Parts(vec![o.clone()]));
            let written: Vec<&str> = o.keys().map(String::as_str).collect();
            m.metadata = keep.metadata(&written);
            Ok(m)
        }
    }
}

fn reasoning_text(o: &Map<String, Value>, at: &str) -> Result<String> {
    let mut texts = Vec::new();
    for key in ["summary", "content"] {
        match o.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (j, s) in items.iter().enumerate() {
                    let so = object(s, &format!("{at}.{key}[{j}]"))?;
                    if let Some(t) = opt_str(so, "text", &format!("{at}.{key}[{j}]"))? {
                        texts.push(t.to_string());
                    }
                }
                if !texts.is_empty() {
                    break;
                }
            }
            Some(other) => {
                return Err(err(
                    &format!("{at}.{key}"),
                    format!("must be a list, got {}", kind(other)),
                ))
            }
        }
    }
    Ok(texts.join("\n\n"))
}

/// An input or output content part as a ctxfold part (kept as it came when the exporter
/// would not give back these bytes).
fn part_in(v: &Value, at: &str) -> Result<Part> {
    let o = object(v, at)?;
    let ty = req_str(o, "type", at)?;
    let mapped: Option<Part> = match ty {
        "input_text" | "output_text" => {
            req_str(o, "text", at)?;
            return Ok(interop::renamed(o, "text", &[]));
        }
        "input_image" => {
            let mut p = Map::new();
            p.insert("type".into(), Value::String("image".into()));
            if let Some(url) = opt_str(o, "image_url", at)? {
                p.insert("source".into(), url_source(url));
            } else if let Some(id) = opt_str(o, "file_id", at)? {
                p.insert("source".into(), file_source(id));
            }
            if let Some(d) = o.get("detail") {
                shapes::check_enum(d, shapes::IMAGE_DETAIL, &format!("{at}.detail"))?;
                p.insert("detail".into(), d.clone());
            }
            Some(p)
        }
        "input_file" => {
            let mut p = Map::new();
            p.insert("type".into(), Value::String("file".into()));
            if let Some(d) = opt_str(o, "file_data", at)? {
                p.insert("source".into(), url_source(d));
            } else if let Some(id) = opt_str(o, "file_id", at)? {
                p.insert("source".into(), file_source(id));
            } else if let Some(u) = opt_str(o, "file_url", at)? {
                let mut s = Map::new();
                s.insert("type".into(), Value::String("url".into()));
                s.insert("url".into(), Value::String(u.into()));
                p.insert("source".into(), Value::Object(s));
            }
            if let Some(n) = o.get("filename") {
                p.insert("filename".into(), n.clone());
            }
            Some(p)
        }
        _ => None,
    };
    if let Some(p) = mapped {
        if input_part(&p, true).map(|j| j.to_value()).as_ref() == Some(v) {
            return Ok(p);
        }
    }
    Ok(o.clone())
}

fn file_source(id: &str) -> Value {
    let mut s = Map::new();
    s.insert("type".into(), Value::String("file".into()));
    s.insert("file_id".into(), Value::String(id.into()));
    Value::Object(s)
}
