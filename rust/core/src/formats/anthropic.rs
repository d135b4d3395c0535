//! Anthropic Messages: `{"system": ..., "messages": [...], "tools": [...]}` and back.
//!
//! Roles: the leading system and developer messages become `system`; a later one is sent as a
//! user turn holding its text (every model accepts that; Anthropic merges consecutive user
//! turns), unless it came from a `system` message inside an Anthropic request, which goes back
//! where it was. A run of assistant messages is one assistant turn; the answers to its calls
//! are the first blocks of the next user turn.

use super::interop::{
    self, array, block, finish, kind, object, opt_str, own_reasoning, req_str, text_of, Keep,
};
use super::out::{Obj, J};
use super::plan::{answered, own_calls, AnswerSrc, Call, Step, Target};
use super::{err, shapes, tools, ExportOptions, Format, TOP};
use crate::error::{Result, Trail};
use crate::message::{part_type, Content, Message, Part, Role};
use serde_json::{Map, Value};

const F: Format = Format::Anthropic;

/// The keys a text block may have besides its type.
const TEXT_KEYS: &[&str] = &["text", "cache_control", "citations"];

/// Whitespace-only, counting as whitespace what either Unicode or Python does (Python's
/// `isspace` adds the separators U+001C..U+001F): when in doubt, the text is not sent alone.
fn blank(t: &str) -> bool {
    t.chars()
        .all(|c| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

pub fn export<'a>(messages: &[&'a Message], opts: ExportOptions) -> Result<J<'a>> {
    let p = Target::Anthropic.plan(messages);
    p.check(opts.strict)?;
    // The leading system and developer messages: the top-level `system`.
    let mut lead = 0;
    for step in &p.steps {
        match step {
            Step::Msg(i)
                if matches!(p.rows[*i].role, Role::System | Role::Developer)
                    && interop::field(p.msgs[*i], F, "placement").is_none() =>
            {
                lead += 1
            }
            _ => break,
        }
    }
    let system = system_out(p.steps[..lead].iter().filter_map(|s| match s {
        Step::Msg(i) => Some(p.msgs[*i]),
        _ => None,
    }));
    let mut out: Vec<J<'a>> = Vec::with_capacity(p.msgs.len());
    for step in &p.steps[lead..] {
        match step {
            Step::Msg(i) => {
                let m = p.msgs[*i];
                match p.rows[*i].role {
                    Role::User => out.push(J::piece(m, "anthropic.user", |m| {
                        user(m, Vec::new()).into_iter().collect()
                    })),
                    _ if interop::field(m, F, "placement").is_some() => {
                        out.extend(turn(m, "system", content_blocks(m, true)))
                    }
                    _ => out.extend(turn(m, "user", content_blocks(m, false))),
                }
            }
            Step::Turn {
                msgs,
                answers,
                absorb,
            } => {
                match msgs.len() {
                    1 if p.ids_kept(msgs.start) => {
                        let m = p.msgs[msgs.start];
                        out.push(J::piece(m, "anthropic.assistant", |m| {
                            let calls = own_calls(m);
                            let cs: Vec<&Call> = calls.iter().collect();
                            assistant(&[m], &cs).into_iter().collect()
                        }));
                    }
                    _ => {
                        let ms: Vec<&Message> = msgs.clone().map(|i| p.msgs[i]).collect();
                        let cs: Vec<&Call> = msgs.clone().flat_map(|i| p.calls(i)).collect();
                        out.extend(assistant(&ms, &cs));
                    }
                }
                let answers = &p.answers[answers.clone()];
                if let ([a], None) = (answers, absorb) {
                    // One call, answered by a tool message: the user turn is that message's.
                    if let (AnswerSrc::Tool(m), true) = (a.src, a.id_kept()) {
                        out.push(J::piece(m, "anthropic.tool_turn", |m| {
                            vec![results_turn(vec![tool_result(m, J::Str(answered(m)))])]
                        }));
                        continue;
                    }
                }
                if answers.is_empty() {
                    continue;
                }
                let mut results: Vec<J<'a>> = Vec::with_capacity(answers.len());
                for a in answers {
                    let id = J::cow(a.target.clone());
                    results.push(match a.src {
                        AnswerSrc::Part(part) => {
                            let own = a.at.is_some_and(|i| interop::from(p.msgs[i], F));
                            result_part(part, id, own)
                        }
                        AnswerSrc::Tool(m) if a.id_kept() => {
                            J::piece(m, "anthropic.tool_result", |m| {
                                vec![tool_result(m, J::Str(answered(m)))]
                            })
                        }
                        AnswerSrc::Tool(m) => tool_result(m, id),
                        AnswerSrc::Interrupted => J::obj()
                            .put("type", J::Lit("tool_result"))
                            .put("tool_use_id", id)
                            .put("content", J::Str(crate::message::INTERRUPTED))
                            .done(),
                    });
                }
                match absorb {
                    Some(i) => out.extend(user(p.msgs[*i], results)),
                    None => out.push(results_turn(results)),
                }
            }
        }
    }
    let mut req = Obj::default();
    if let Some(s) = system {
        req.push("system", s);
    }
    req.push("messages", J::Arr(out));
    if let Some(t) = p.tools.and_then(tools::anthropic) {
        req.push("tools", t);
    }
    Ok(req.done())
}

/// The user turn holding a turn's tool results.
fn results_turn(results: Vec<J<'_>>) -> J<'_> {
    J::obj()
        .put("role", J::Lit("user"))
        .put("content", J::Arr(results))
        .done()
}

/// A tool message as the `tool_result` block answering call `id`.
fn tool_result<'a>(m: &'a Message, id: J<'a>) -> J<'a> {
    let mut o = J::obj()
        .put("type", J::Lit("tool_result"))
        .put("tool_use_id", id);
    match &m.content {
        Content::None => {}
        Content::Text(t) => o.push("content", J::Str(t)),
        Content::Parts(parts) => o.push(
            "content",
            J::Arr(parts.iter().filter_map(|x| user_block(x, false)).collect()),
        ),
    }
    o.of(m)
}

/// The top-level `system`: one message's str as it is, else text blocks.
fn system_out<'a>(ms: impl Iterator<Item = &'a Message>) -> Option<J<'a>> {
    let ms: Vec<&Message> = ms.collect();
    if let [m] = ms.as_slice() {
        if let Content::Text(t) = &m.content {
            return (!blank(t) || t.is_empty()).then_some(J::Str(t));
        }
    }
    let mut blocks = Vec::new();
    for m in ms {
        let own = interop::from(m, F);
        match &m.content {
            Content::None => {}
            Content::Text(t) if !blank(t) => blocks.push(text_block(t)),
            Content::Text(_) => {}
            Content::Parts(parts) => {
                for p in parts {
                    if part_type(p) == Some("text") && text_of(p).is_some_and(|t| !blank(t)) {
                        blocks.push(block(p, "text", &[], TEXT_KEYS, own).done());
                    }
                }
            }
        }
    }
    (!blocks.is_empty()).then_some(J::Arr(blocks))
}

fn text_block(t: &str) -> J<'_> {
    J::obj()
        .put("type", J::Lit("text"))
        .put("text", J::Str(t))
        .done()
}

/// A message's content as blocks (system messages: text only).
fn content_blocks(m: &Message, keep_str: bool) -> Option<J<'_>> {
    let own = interop::from(m, F);
    match &m.content {
        Content::None => None,
        Content::Text(t) if blank(t) => None,
        Content::Text(t) if keep_str => Some(J::Str(t)),
        Content::Text(t) => Some(J::Arr(vec![text_block(t)])),
        Content::Parts(parts) => {
            let b: Vec<J> = parts
                .iter()
                .filter(|p| part_type(p) == Some("text"))
                .filter_map(|p| user_block(p, own))
                .collect();
            (!b.is_empty()).then_some(J::Arr(b))
        }
    }
}

fn turn<'a>(m: &'a Message, role: &'static str, content: Option<J<'a>>) -> Option<J<'a>> {
    let o = J::obj().put("role", J::Str(role)).put("content", content?);
    Some(finish(o, m, F))
}

/// A user turn: `first` (tool results) then the message's own content.
fn user<'a>(m: &'a Message, first: Vec<J<'a>>) -> Option<J<'a>> {
    let own = interop::from(m, F);
    let content = match &m.content {
        Content::Text(t) if first.is_empty() => {
            if blank(t) {
                return None;
            }
            J::Str(t)
        }
        Content::Text(t) => {
            let mut b = first;
            if !blank(t) {
                b.push(text_block(t));
            }
            J::Arr(b)
        }
        Content::None => {
            if first.is_empty() {
                return None;
            }
            J::Arr(first)
        }
        Content::Parts(parts) => {
            let mut b = first;
            let n = b.len();
            b.extend(
                parts
                    .iter()
                    .filter(|p| part_type(p) != Some("tool_result"))
                    .filter_map(|p| user_block(p, own)),
            );
            // Whitespace-only text alone is refused; beside anything else it is accepted.
            if b.is_empty() || (n == 0 && b.iter().all(blank_text)) {
                return None;
            }
            J::Arr(b)
        }
    };
    let o = J::obj().put("role", J::Lit("user")).put("content", content);
    Some(finish(o, m, F))
}

fn blank_text(b: &J) -> bool {
    match b.entries() {
        Some(e) => e
            .iter()
            .any(|(k, v)| k == "text" && matches!(v, J::Val(Value::String(s)) if blank(s))),
        None => false,
    }
}

/// A block of a user turn or a tool result (text, image, document); `None` for what
/// Anthropic does not take there.
fn user_block(p: &Part, own: bool) -> Option<J<'_>> {
    match part_type(p)? {
        "text" => {
            let t = text_of(p)?;
            if t.is_empty() {
                return None;
            }
            Some(block(p, "text", &[], TEXT_KEYS, own).done())
        }
        "image" | "image_url" => match super::media::image_source(p)? {
            // A source in the canonical shape goes as it is (Anthropic's own shape).
            // unless the API would refuse it: then the part is not sent.
            std::borrow::Cow::Borrowed(s) if part_type(p) == Some("image") => {
                if shapes::image_source_fault(s).is_some() {
                    return None;
                }
                Some(block(p, "image", &[], &["source", "cache_control"], own).done())
            }
            source => {
                let mut o = J::obj()
                    .put("type", J::Lit("image"))
                    .put("source", J::Owned(source.into_owned()));
                if let Some(c) = p.get("cache_control") {
                    o.push("cache_control", J::Val(c));
                }
                Some(o.done())
            }
        },
        "file" | "pdf" => {
            if shapes::document_source_fault(p.get("source")?).is_some() {
                return None;
            }
            Some(
                block(
                    p,
                    "document",
                    &[],
                    &["source", "cache_control", "title", "context", "citations"],
                    own,
                )
                .done(),
            )
        }
        "thinking" | "tool_use" | "tool_result" | "tool" | "audio" | "video" => None,
        ty if own => Some(block(p, ty, &[], &[], true).done()),
        _ => None,
    }
}

fn result_part<'a>(p: &'a Part, id: J<'a>, own: bool) -> J<'a> {
    let mut o = Obj::default();
    for (k, v) in p {
        match k.as_str() {
            "type" => o.push("type", J::Lit("tool_result")),
            "call_id" => o.push("tool_use_id", id.clone()),
            "content" => o.push(
                "content",
                match v {
                    Value::Array(items) => J::Arr(
                        items
                            .iter()
                            .filter_map(Value::as_object)
                            .filter_map(|x| user_block(x, own))
                            .collect(),
                    ),
                    other => J::Val(other),
                },
            ),
            "is_error" | "cache_control" => o.push(k.as_str(), J::Val(v)),
            "provider" => {}
            _ if own => o.push(k.as_str(), J::Val(v)),
            _ => {}
        }
    }
    o.done()
}

/// One assistant turn for a run of assistant messages: their blocks in order, then the calls
/// written as `tool_calls` entries.
fn assistant<'a>(ms: &[&'a Message], calls: &[&Call<'a>]) -> Option<J<'a>> {
    let single = ms.len() == 1;
    if let ([m], true) = (ms, calls.is_empty()) {
        // Empty or whitespace-only assistant text is refused mid-conversation and, as the
        // final turn, refused for its trailing whitespace: it is never sent (below, too).
        if let Content::Text(t) = &m.content {
            if blank(t) {
                return None;
            }
            let o = J::obj()
                .put("role", J::Lit("assistant"))
                .put("content", J::Str(t));
            return Some(finish(o, m, F));
        }
    }
    let mut blocks: Vec<J<'a>> = Vec::new();
    let mut by_part = calls
        .iter()
        .filter(|c| matches!(c.src, super::plan::CallSrc::Part(_)));
    for m in ms {
        let own = interop::from(m, F);
        match &m.content {
            Content::None => {}
            Content::Text(t) => {
                if !blank(t) {
                    blocks.push(text_block(t));
                }
            }
            Content::Parts(parts) => {
                for p in parts {
                    match part_type(p) {
                        Some("thinking") if own_reasoning(p, F) && signed(p) => {
                            blocks.push(thinking_out(p))
                        }
                        Some("thinking") => {}
                        Some("text") if text_of(p).is_some_and(|t| !blank(t)) => {
                            blocks.push(block(p, "text", &[], TEXT_KEYS, own).done())
                        }
                        Some("tool_use") if p.get("call_id").and_then(Value::as_str).is_some() => {
                            if let Some(c) = by_part.next() {
                                blocks.push(tool_use(c, p, own));
                            }
                        }
                        Some("text" | "tool_use") => {}
                        Some(
                            "tool_result" | "tool" | "image" | "audio" | "video" | "file" | "pdf",
                        ) => {}
                        Some(ty) if own => blocks.push(block(p, ty, &[], &[], true).done()),
                        _ => {}
                    }
                }
            }
        }
    }
    for c in calls {
        if let super::plan::CallSrc::Entry(e) = c.src {
            blocks.push(tool_use(c, e, interop::from(ms[0], F) && single));
        }
    }
    if blocks.is_empty() {
        return None;
    }
    let o = J::obj()
        .put("role", J::Lit("assistant"))
        .put("content", J::Arr(blocks));
    Some(if single {
        finish(o, ms[0], F)
    } else {
        o.done()
    })
}

/// Thinking the API will take back: redacted (its `data`) or signed.
fn signed(p: &Part) -> bool {
    let key = if p.get("redacted").and_then(Value::as_bool) == Some(true) {
        "data"
    } else {
        "signature"
    };
    p.get(key).is_some_and(Value::is_string)
}

fn thinking_out(p: &Part) -> J<'_> {
    if p.get("redacted").and_then(Value::as_bool) == Some(true) {
        let mut o = block(p, "redacted_thinking", &[], &[], true);
        o.0.retain(|(k, _)| k != "redacted");
        return o.done();
    }
    let mut o = block(p, "thinking", &[("text", "thinking")], &[], true);
    if !o.has("thinking") {
        o.0.insert(1, ("thinking".into(), J::Lit("")));
    }
    o.done()
}

/// A call as a `tool_use` block: `input` must be an object, so string arguments are parsed
/// (arguments that are not a JSON object go as `{"_raw": "<the string>"}`).
fn tool_use<'a>(c: &Call<'a>, src: &'a Map<String, Value>, own: bool) -> J<'a> {
    let input = match c.arguments() {
        Some(Value::Object(_)) => J::Val(c.arguments().unwrap_or(&Value::Null)),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => J::Owned(v),
            _ => J::obj().put("_raw", J::Str(s)).done(),
        },
        _ => J::obj().done(),
    };
    let mut o = J::obj()
        .put("type", J::Lit("tool_use"))
        .put("id", J::cow(c.sent()))
        .put("name", J::Str(c.name()))
        .put("input", input);
    for (k, v) in src {
        if matches!(
            k.as_str(),
            "type" | "id" | "call_id" | "name" | "arguments" | "provider"
        ) {
            continue;
        }
        if own || matches!(k.as_str(), "cache_control") {
            o.push(k.as_str(), J::Val(v));
        }
    }
    o.done()
}

// ---- import -----------------------------------------------------------------------------

pub fn import(data: &Value, system: Option<&Value>) -> Result<Vec<Message>> {
    let mut out = Vec::new();
    match system {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            let mut m = Message::new(Role::System, Content::Text(s.clone()));
            m.metadata = Keep::new(F, &Map::new()).metadata(&[]);
            out.push(m);
        }
        Some(Value::Array(blocks)) => {
            let system = TOP.key("system");
            let parts = blocks
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let at = system.index(i);
                    let o = object(b, &at)?;
                    req_str(o, "text", &at)?;
                    Ok(o.clone())
                })
                .collect::<Result<Vec<_>>>()?;
            let mut m = Message::new(Role::System, Content::Parts(parts));
            m.metadata = Keep::new(F, &Map::new()).metadata(&[]);
            out.push(m);
        }
        Some(other) => {
            return Err(err(
                &TOP.key("system"),
                format!("must be a string or text blocks, got {}", kind(other)),
            ))
        }
    }
    let list = TOP.key("messages");
    for (i, v) in array(data, &list)?.iter().enumerate() {
        out.push(message_in(v, &list.index(i))?);
    }
    Ok(out)
}

pub fn message_in(v: &Value, at: &Trail<'_>) -> Result<Message> {
    let o = object(v, at)?;
    let role = match req_str(o, "role", at)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => return Err(err(&at.key("role"), format!("unsupported role {other:?}"))),
    };
    let mut keep = Keep::new(F, o);
    let content = o
        .get("content")
        .ok_or_else(|| err(at, "missing \"content\""))?;
    let mut m = Message::new(role, Content::None);
    for (k, val) in o {
        if k != "role" && k != "content" {
            keep.extra(k, val);
        }
    }
    let place = at.key("content");
    match content {
        Value::String(s) => m.content = Content::Text(s.clone()),
        Value::Array(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (j, b) in blocks.iter().enumerate() {
                parts.push(block_in(b, &place.index(j), role)?);
            }
            if role == Role::Assistant {
                // Trailing calls are the message's `tool_calls` (so it asks for a response, as
                // `add_message` reads them); calls between other blocks stay parts, in place.
                while let Some(p) = parts.last() {
                    match call_entry(p) {
                        Some(c) => {
                            m.tool_calls.insert(0, c);
                            parts.pop();
                        }
                        None => break,
                    }
                }
            }
            m.content = Content::Parts(parts);
        }
        other => {
            return Err(err(
                &place,
                format!("must be a string or a list of blocks, got {}", kind(other)),
            ))
        }
    }
    if role == Role::System {
        keep.set("placement", Value::String("messages".into()));
    }
    m.metadata = keep.metadata(&["role", "content"]);
    Ok(m)
}

/// A trailing `tool_use` part written as `type, call_id, name, arguments` first: a call entry.
fn call_entry(p: &Part) -> Option<Map<String, Value>> {
    if part_type(p) != Some("tool_use") {
        return None;
    }
    if !p.get("arguments")?.is_object() {
        return None;
    }
    let mut c = Map::new();
    for (k, v) in p {
        match k.as_str() {
            "type" => {}
            "call_id" => {
                c.insert("id".into(), v.clone());
            }
            _ => {
                c.insert(k.clone(), v.clone());
            }
        }
    }
    Some(c)
}

fn block_in(v: &Value, at: &Trail<'_>, role: Role) -> Result<Part> {
    let o = object(v, at)?;
    let ty = req_str(o, "type", at)?;
    Ok(match ty {
        "text" => {
            req_str(o, "text", at)?;
            o.clone()
        }
        "thinking" if role == Role::Assistant => {
            req_str(o, "thinking", at)?;
            req_str(o, "signature", at)?; // the API verifies the thinking it gets back by it
            let mut p = interop::renamed(o, "thinking", &[("thinking", "text")]);
            p.insert("provider".into(), Value::String(F.name().into()));
            p
        }
        "redacted_thinking" if role == Role::Assistant => {
            req_str(o, "data", at)?;
            let mut p = interop::renamed(o, "thinking", &[]);
            p.insert("redacted".into(), Value::Bool(true));
            p.insert("provider".into(), Value::String(F.name().into()));
            p
        }
        "tool_use" if role == Role::Assistant => {
            req_str(o, "id", at)?;
            req_str(o, "name", at)?;
            if !o.get("input").is_some_and(Value::is_object) {
                return Err(err(at, "\"input\" must be an object"));
            }
            interop::renamed(o, "tool_use", &[("id", "call_id"), ("input", "arguments")])
        }
        "tool_result" if role == Role::User => {
            req_str(o, "tool_use_id", at)?;
            let mut p = interop::renamed(o, "tool_result", &[("tool_use_id", "call_id")]);
            match o.get("content") {
                None | Some(Value::String(_)) => {}
                Some(Value::Array(items)) => {
                    let inner = items
                        .iter()
                        .enumerate()
                        .map(|(k, b)| {
                            block_in(b, &at.key("content").index(k), Role::User).map(Value::Object)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    p.insert("content".into(), Value::Array(inner));
                }
                Some(other) => {
                    return Err(err(
                        &at.key("content"),
                        format!("must be a string or a list of blocks, got {}", kind(other)),
                    ))
                }
            }
            p
        }
        "document" => {
            shapes::check_source(o, true, at)?;
            interop::renamed(o, "file", &[])
        }
        "image" => {
            shapes::check_source(o, false, at)?;
            o.clone()
        }
        _ => {
            let _ = opt_str(o, "type", at)?;
            o.clone()
        }
    })
}
