//! OpenAI Chat Completions: `{"messages": [...], "tools": [...]}` and its messages back.

use super::interop::{
    self, arguments, array, block, finish, kind, object, opt_str, req_str, source_url, url_source,
    Keep,
};
use super::out::J;
use super::plan::{answered, own_calls, AnswerSrc, Call, CallSrc, Step, Target};
use super::{err, shapes, tools, ExportOptions, Format};
use crate::error::{Result, Trail};
use crate::message::{part_type, Content, Message, Part, Role};
use serde_json::{Map, Value};

const F: Format = Format::OpenAiChat;

pub fn export<'a>(messages: &[&'a Message], opts: ExportOptions) -> Result<J<'a>> {
    let p = Target::OpenAiChat.plan(messages);
    p.check(opts.strict)?;
    let mut out: Vec<J<'a>> = Vec::with_capacity(p.msgs.len());
    for step in &p.steps {
        match step {
            Step::Msg(i) => {
                let m = p.msgs[*i];
                out.push(J::piece(m, "openai_chat.message", |m| {
                    plain_message(m).into_iter().collect()
                }));
            }
            Step::Turn { msgs, answers, .. } => {
                let merge = (msgs.start..msgs.end - 1).any(|i| !p.calls(i).is_empty());
                if merge {
                    let ms: Vec<&Message> = msgs.clone().map(|i| p.msgs[i]).collect();
                    let cs: Vec<&Call> = msgs.clone().flat_map(|i| p.calls(i)).collect();
                    out.extend(assistant(&ms, &cs));
                } else {
                    for i in msgs.clone() {
                        let m = p.msgs[i];
                        if p.ids_kept(i) {
                            out.push(J::piece(m, "openai_chat.assistant", |m| {
                                let calls = own_calls(m);
                                let cs: Vec<&Call> = calls.iter().collect();
                                assistant(&[m], &cs).into_iter().collect()
                            }));
                        } else {
                            let cs: Vec<&Call> = p.calls(i).iter().collect();
                            out.extend(assistant(&[m], &cs));
                        }
                    }
                }
                let mut media: Vec<J<'a>> = Vec::new();
                for a in &p.answers[answers.clone()] {
                    let id = J::cow(a.target.clone());
                    out.push(match a.src {
                        AnswerSrc::Tool(m)
                            if a.id_kept() && !a.at.is_some_and(|i| p.rows[i].media) =>
                        {
                            J::piece(m, "openai_chat.tool", |m| {
                                vec![tool_message(m, J::Str(answered(m)), &mut Vec::new())]
                            })
                        }
                        AnswerSrc::Tool(m) => tool_message(m, id, &mut media),
                        AnswerSrc::Part(part) => {
                            tool_obj(id, result_content(part.get("content"), &mut media)).done()
                        }
                        AnswerSrc::Interrupted => {
                            tool_obj(id, J::Str(crate::message::INTERRUPTED)).done()
                        }
                    });
                }
                if !media.is_empty() {
                    // A tool message takes text only: its images and files follow as the user's.
                    out.push(
                        J::obj()
                            .put("role", J::Lit("user"))
                            .put("content", J::Arr(media))
                            .done(),
                    );
                }
            }
        }
    }
    let mut req = J::obj().put("messages", J::Arr(out));
    if let Some(t) = p.tools.and_then(tools::openai_chat) {
        req.push("tools", t);
    }
    Ok(req.done())
}

/// A `tool` message answering call `id`.
fn tool_obj<'a>(id: J<'a>, content: J<'a>) -> super::out::Obj<'a> {
    J::obj()
        .put("role", J::Lit("tool"))
        .put("tool_call_id", id)
        .put("content", content)
}

/// A tool message as the `tool` message answering call `id`; its media go to `media`.
fn tool_message<'a>(m: &'a Message, id: J<'a>, media: &mut Vec<J<'a>>) -> J<'a> {
    finish(tool_obj(id, tool_content(&m.content, media)), m, F)
}

/// A system, developer or user message; `None` when nothing of it can be sent.
fn plain_message(m: &Message) -> Option<J<'_>> {
    let own = interop::from(m, F);
    let content = match &m.content {
        Content::None => return None,
        Content::Text(t) => J::Str(t),
        Content::Parts(parts) => {
            let text_only = m.role != Role::User;
            let items: Vec<J> = parts
                .iter()
                .filter_map(|p| part_out(p, own, text_only))
                .collect();
            if items.is_empty() {
                return None;
            }
            J::Arr(items)
        }
    };
    let mut o = J::obj()
        .put("role", J::Lit(m.role.as_str()))
        .put("content", content);
    if let Some(n) = &m.name {
        o.push("name", J::Str(n));
    }
    Some(finish(o, m, F))
}

/// One assistant message for a run of assistant messages (one, or a run merged because an
/// earlier one made calls) and their calls.
fn assistant<'a>(ms: &[&'a Message], calls: &[&Call<'a>]) -> Option<J<'a>> {
    let single = ms.len() == 1;
    let m0 = ms[0];
    let own = single && interop::from(m0, F);
    let mut items: Vec<J<'a>> = Vec::new();
    let mut text: Option<&'a str> = None;
    let mut had_parts = false;
    for m in ms {
        match &m.content {
            Content::None => {}
            Content::Text(t) => {
                if single {
                    text = Some(t);
                } else if !t.is_empty() {
                    items.push(
                        J::obj()
                            .put("type", J::Lit("text"))
                            .put("text", J::Str(t))
                            .done(),
                    );
                }
            }
            Content::Parts(parts) => {
                had_parts = true;
                for p in parts {
                    match part_type(p) {
                        Some("text") => items.extend(part_out(p, own, true)),
                        Some("refusal") if own => {
                            items.push(block(p, "refusal", &[], &[], true).done())
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let content = match text {
        Some(t) => J::Str(t),
        None if !items.is_empty() => J::Arr(items),
        None if !calls.is_empty() || (own && !had_parts && answers_otherwise(m0)) => J::Null,
        None => return None,
    };
    let mut o = J::obj()
        .put("role", J::Lit("assistant"))
        .put("content", content);
    if single {
        if let Some(n) = &m0.name {
            o.push("name", J::Str(n));
        }
    }
    if !calls.is_empty() {
        o.push(
            "tool_calls",
            J::Arr(calls.iter().map(|c| call_out(c)).collect()),
        );
    }
    Some(if single { finish(o, m0, F) } else { o.done() })
}

/// Whether an assistant message that came from Chat says something without content: its
/// audio, a legacy `function_call` or a refusal. Only then may its `content` be null; an
/// assistant message with nothing at all is refused by the API, and left out.
fn answers_otherwise(m: &Message) -> bool {
    let Some(Value::Object(extra)) = interop::field(m, F, "extra") else {
        return false;
    };
    ["audio", "function_call", "refusal"]
        .iter()
        .any(|k| extra.get(*k).is_some_and(|v| !v.is_null()))
}

fn call_out<'a>(c: &Call<'a>) -> J<'a> {
    let custom = matches!(c.src, CallSrc::Entry(e) if part_type(e) == Some("custom"));
    let args = arguments(c.arguments());
    if custom {
        return J::obj()
            .put("id", J::cow(c.sent()))
            .put("type", J::Lit("custom"))
            .put(
                "custom",
                J::obj()
                    .put("name", J::Str(c.name()))
                    .put("input", args)
                    .done(),
            )
            .done();
    }
    J::obj()
        .put("id", J::cow(c.sent()))
        .put("type", J::Lit("function"))
        .put(
            "function",
            J::obj()
                .put("name", J::Str(c.name()))
                .put("arguments", args)
                .done(),
        )
        .done()
}

/// A tool message's content: its text (a str, or text parts); media go to `media`.
fn tool_content<'a>(c: &'a Content, media: &mut Vec<J<'a>>) -> J<'a> {
    match c {
        Content::None => J::Lit(""),
        Content::Text(t) => J::Str(t),
        Content::Parts(parts) => text_and_media(parts.iter(), media),
    }
}

fn result_content<'a>(c: Option<&'a Value>, media: &mut Vec<J<'a>>) -> J<'a> {
    match c {
        Some(Value::String(s)) => J::Str(s),
        Some(Value::Array(items)) => {
            text_and_media(items.iter().filter_map(Value::as_object), media)
        }
        None | Some(Value::Null) => J::Lit(""),
        Some(other) => J::String(crate::json::compact_json(other)),
    }
}

fn text_and_media<'a>(parts: impl Iterator<Item = &'a Part>, media: &mut Vec<J<'a>>) -> J<'a> {
    let mut texts = Vec::new();
    for p in parts {
        match part_type(p) {
            Some("text") => texts.extend(part_out(p, false, true)),
            _ => media.extend(part_out(p, false, false)),
        }
    }
    if texts.is_empty() {
        J::Lit("")
    } else {
        J::Arr(texts)
    }
}

/// A ctxfold part as a Chat content part; `own`: it came from this format (every key kept,
/// unknown types passed through); `text_only`: roles that take text parts only.
pub fn part_out(p: &Part, own: bool, text_only: bool) -> Option<J<'_>> {
    let ty = part_type(p)?;
    if ty == "text" {
        return Some(block(p, "text", &[], &["text"], own).done());
    }
    if text_only {
        return None;
    }
    match ty {
        "image" | "image_url" => {
            let url = source_url(super::media::image_source(p)?.as_ref())?;
            let mut inner = J::obj().put("url", J::String(url));
            if let Some(d) = shapes::image_detail(super::media::image_detail(p)) {
                inner.push("detail", J::Val(d));
            }
            Some(
                J::obj()
                    .put("type", J::Lit("image_url"))
                    .put("image_url", inner.done())
                    .done(),
            )
        }
        "audio" => {
            let s = p.get("source")?.as_object()?;
            if s.get("type").and_then(Value::as_str) != Some("base64") {
                return None;
            }
            let format = match p
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| shapes::AUDIO_FORMATS.contains(f))
            {
                Some(f) => f.to_string(),
                None => match s.get("media_type").and_then(Value::as_str)? {
                    "audio/wav" | "audio/x-wav" | "audio/wave" => "wav".into(),
                    "audio/mpeg" | "audio/mp3" => "mp3".into(),
                    _ => return None,
                },
            };
            Some(
                J::obj()
                    .put("type", J::Lit("input_audio"))
                    .put(
                        "input_audio",
                        J::obj()
                            .put("data", J::Val(s.get("data")?))
                            .put("format", J::String(format))
                            .done(),
                    )
                    .done(),
            )
        }
        "file" | "pdf" => {
            let s = p.get("source")?.as_object()?;
            let mut inner = J::obj();
            match s.get("type").and_then(Value::as_str)? {
                "base64" => inner.push("file_data", J::String(source_url(p.get("source")?)?)),
                "file" => inner.push("file_id", J::Val(s.get("file_id")?)),
                _ => return None,
            }
            // The SDKs type a file name as a string: anything else is not sent.
            if let Some(f) = p.get("filename").filter(|v| v.is_string()) {
                inner.push("filename", J::Val(f));
            }
            Some(
                J::obj()
                    .put("type", J::Lit("file"))
                    .put("file", inner.done())
                    .done(),
            )
        }
        _ if own && !matches!(ty, "thinking" | "tool_use" | "tool_result" | "tool") => {
            Some(block(p, ty, &[], &[], true).done())
        }
        _ => None,
    }
}

// ---- import -----------------------------------------------------------------------------

pub fn import(data: &Value) -> Result<Vec<Message>> {
    super::each(data, F, message_in)
}

pub fn message_in(v: &Value, at: &Trail<'_>) -> Result<Message> {
    let o = object(v, at)?;
    let role_s = req_str(o, "role", at)?;
    let role = match role_s {
        "system" | "developer" | "user" | "assistant" | "tool" => Role::parse(role_s)?,
        other => return Err(err(&at.key("role"), format!("unsupported role {other:?}"))),
    };
    let mut keep = Keep::new(F, o);
    let mut m = Message::new(role, Content::None);
    let mut written: Vec<&str> = vec!["role"];
    for (k, val) in o {
        let place = at.key(k);
        match (k.as_str(), role) {
            ("role", _) => {}
            ("content", _) => {
                m.content = content_in(val, &place, role)?;
            }
            ("name", Role::System | Role::Developer | Role::User | Role::Assistant) => {
                m.name = opt_str(o, "name", at)?.map(str::to_string);
                if m.name.is_none() {
                    keep.extra(k, val);
                }
            }
            ("tool_calls", Role::Assistant)
                if !matches!(val, Value::Array(a) if a.is_empty()) && !val.is_null() =>
            {
                for (j, c) in array(val, &place)?.iter().enumerate() {
                    m.tool_calls.push(call_in(c, &place.index(j))?);
                }
            }
            ("tool_call_id", Role::Tool) => {
                m.tool_call_id = Some(req_str(o, "tool_call_id", at)?.to_string());
            }
            _ => keep.extra(k, val),
        }
    }
    match role {
        Role::Tool => {
            if m.tool_call_id.is_none() {
                return Err(err(at, "missing \"tool_call_id\""));
            }
            written.extend(["tool_call_id", "content"]);
        }
        Role::Assistant => {
            written.push("content");
            if m.name.is_some() {
                written.push("name");
            }
            if !m.tool_calls.is_empty() {
                written.push("tool_calls");
            }
        }
        _ => {
            if !o.contains_key("content") {
                return Err(err(at, "missing \"content\""));
            }
            written.push("content");
            if m.name.is_some() {
                written.push("name");
            }
        }
    }
    m.metadata = keep.metadata(&written);
    Ok(m)
}

fn content_in(v: &Value, at: &Trail<'_>, role: Role) -> Result<Content> {
    Ok(match v {
        Value::Null => Content::None,
        Value::String(s) => Content::Text(s.clone()),
        Value::Array(items) => Content::Parts(
            items
                .iter()
                .enumerate()
                .map(|(i, p)| part_in(p, &at.index(i), role))
                .collect::<Result<_>>()?,
        ),
        other => {
            return Err(err(
                at,
                format!(
                    "must be a string, a list of parts or null, got {}",
                    kind(other)
                ),
            ))
        }
    })
}

/// A Chat content part as a ctxfold part, kept as it came when the exporter would not give
/// back exactly these bytes.
fn part_in(v: &Value, at: &Trail<'_>, role: Role) -> Result<Part> {
    let o = object(v, at)?;
    let ty = req_str(o, "type", at)?;
    let mapped: Option<Part> = match ty {
        "text" => {
            req_str(o, "text", at)?;
            None
        }
        "image_url" => {
            let img = object(
                o.get("image_url").unwrap_or(&Value::Null),
                &at.key("image_url"),
            )?;
            let url = req_str(img, "url", &at.key("image_url"))?;
            if let Some(d) = img.get("detail") {
                shapes::check_enum(d, shapes::IMAGE_DETAIL, &at.key("image_url").key("detail"))?;
            }
            let mut p = Map::new();
            p.insert("type".into(), Value::String("image".into()));
            p.insert("source".into(), url_source(url));
            if let Some(d) = img.get("detail") {
                p.insert("detail".into(), d.clone());
            }
            Some(p)
        }
        "input_audio" => {
            let a = object(
                o.get("input_audio").unwrap_or(&Value::Null),
                &at.key("input_audio"),
            )?;
            let data = req_str(a, "data", &at.key("input_audio"))?;
            let format = req_str(a, "format", &at.key("input_audio"))?;
            shapes::check_enum(
                &a["format"],
                shapes::AUDIO_FORMATS,
                &at.key("input_audio").key("format"),
            )?;
            let mt = if format == "mp3" {
                "audio/mpeg"
            } else {
                "audio/wav"
            };
            let mut s = Map::new();
            s.insert("type".into(), Value::String("base64".into()));
            s.insert("media_type".into(), Value::String(mt.into()));
            s.insert("data".into(), Value::String(data.into()));
            let mut p = Map::new();
            p.insert("type".into(), Value::String("audio".into()));
            p.insert("source".into(), Value::Object(s));
            p.insert("format".into(), Value::String(format.into()));
            Some(p)
        }
        "file" => {
            let f = object(o.get("file").unwrap_or(&Value::Null), &at.key("file"))?;
            let source = if let Some(d) = opt_str(f, "file_data", at)? {
                url_source(d)
            } else if let Some(id) = opt_str(f, "file_id", at)? {
                let mut s = Map::new();
                s.insert("type".into(), Value::String("file".into()));
                s.insert("file_id".into(), Value::String(id.into()));
                Value::Object(s)
            } else {
                return Err(err(&at.key("file"), "needs \"file_data\" or \"file_id\""));
            };
            let mut p = Map::new();
            p.insert("type".into(), Value::String("file".into()));
            p.insert("source".into(), source);
            if let Some(n) = f.get("filename") {
                p.insert("filename".into(), n.clone());
            }
            Some(p)
        }
        _ => None,
    };
    if let Some(p) = mapped {
        let back = part_out(&p, true, false).map(|j| j.to_value());
        if back.as_ref() == Some(v) {
            return Ok(p);
        }
    }
    let _ = role;
    Ok(o.clone())
}

fn call_in(v: &Value, at: &Trail<'_>) -> Result<Map<String, Value>> {
    let o = object(v, at)?;
    let id = req_str(o, "id", at)?;
    let ty = opt_str(o, "type", at)?.unwrap_or("function");
    let (name, args) = match ty {
        "function" => {
            let place = at.key("function");
            let f = object(
                o.get("function")
                    .ok_or_else(|| err(at, "missing \"function\""))?,
                &place,
            )?;
            (
                req_str(f, "name", &place)?,
                req_str(f, "arguments", &place)?,
            )
        }
        "custom" => {
            let place = at.key("custom");
            let f = object(
                o.get("custom")
                    .ok_or_else(|| err(at, "missing \"custom\""))?,
                &place,
            )?;
            (req_str(f, "name", &place)?, req_str(f, "input", &place)?)
        }
        other => {
            return Err(err(
                &at.key("type"),
                format!("unknown tool call type {other:?}"),
            ))
        }
    };
    let mut c = Map::new();
    c.insert("id".into(), Value::String(id.into()));
    c.insert("name".into(), Value::String(name.into()));
    c.insert("arguments".into(), Value::String(args.into()));
    if ty == "custom" {
        c.insert("type".into(), Value::String("custom".into()));
    }
    Ok(c)
}
