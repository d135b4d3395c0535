//! Tool definitions: the tool definitions message's `tool` parts in each API's shape, and any
//! API's `tools` list as the text of the `tool_list` hook.

use super::interop::{array, kind, object, opt_str, req_str};
use super::out::J;
use super::{err, TOP};
use crate::error::Result;
use crate::json::compact_json;
use crate::message::{part_type, Content, Message, Part};
use serde_json::{Map, Value};

fn tool_parts(m: &Message) -> Vec<&Part> {
    match &m.content {
        Content::Parts(parts) => parts
            .iter()
            .filter(|p| part_type(p) == Some("tool"))
            .collect(),
        _ => Vec::new(),
    }
}

fn some(items: Vec<J<'_>>) -> Option<J<'_>> {
    (!items.is_empty()).then_some(J::Arr(items))
}

pub fn openai_chat(m: &Message) -> Option<J<'_>> {
    some(
        tool_parts(m)
            .into_iter()
            .filter_map(|p| {
                let mut f = J::obj().put("name", J::Val(p.get("name")?));
                for k in ["description", "parameters", "strict"] {
                    if let Some(v) = p.get(k).filter(|v| !v.is_null()) {
                        f.push(k, J::Val(v));
                    }
                }
                Some(
                    J::obj()
                        .put("type", J::Lit("function"))
                        .put("function", f.done())
                        .done(),
                )
            })
            .collect(),
    )
}

pub fn openai_responses(m: &Message) -> Option<J<'_>> {
    some(
        tool_parts(m)
            .into_iter()
            .filter_map(|p| {
                let mut o = J::obj()
                    .put("type", J::Lit("function"))
                    .put("name", J::Val(p.get("name")?));
                if let Some(d) = p.get("description").filter(|v| !v.is_null()) {
                    o.push("description", J::Val(d));
                }
                o.push(
                    "parameters",
                    p.get("parameters").map(J::Val).unwrap_or(J::Null),
                );
                o.push("strict", p.get("strict").map(J::Val).unwrap_or(J::Null));
                Some(o.done())
            })
            .collect(),
    )
}

pub fn anthropic(m: &Message) -> Option<J<'_>> {
    some(
        tool_parts(m)
            .into_iter()
            .filter_map(|p| {
                let mut o = J::obj().put("name", J::Val(p.get("name")?));
                if let Some(d) = p.get("description").filter(|v| !v.is_null()) {
                    o.push("description", J::Val(d));
                }
                let schema = match p.get("parameters") {
                    Some(v @ Value::Object(_)) => J::Val(v),
                    _ => J::obj().put("type", J::Lit("object")).done(),
                };
                o.push("input_schema", schema);
                if let Some(c) = p.get("cache_control") {
                    o.push("cache_control", J::Val(c));
                }
                Some(o.done())
            })
            .collect(),
    )
}

/// `tools` of any of the three APIs as a JSON list of `{name, description, parameters}`, each
/// with the other keys it came with.
pub fn tool_list(tools: &Value) -> Result<String> {
    let mut out = Vec::new();
    let list = TOP.key("tools");
    for (i, t) in array(tools, &list)?.iter().enumerate() {
        let at = list.index(i);
        let o = object(t, &at)?;
        // Chat: {"type": "function", "function": {...}}; Responses: the same flat;
        // Anthropic: {"name", "description", "input_schema"}.
        let (f, place) = match o.get("function") {
            Some(f) => (object(f, &at.key("function"))?, at.key("function")),
            None => (o, at),
        };
        if let Some(ty) = opt_str(o, "type", &at)? {
            if ty != "function" && ty != "custom" && !o.contains_key("input_schema") {
                return Err(err(&at.key("type"), format!("not a function tool: {ty:?}")));
            }
        }
        let mut d = Map::new();
        d.insert(
            "name".into(),
            Value::String(req_str(f, "name", &place)?.into()),
        );
        if let Some(desc) = f.get("description").filter(|v| !v.is_null()) {
            if !desc.is_string() {
                return Err(err(
                    &place,
                    format!("\"description\" must be a string, got {}", kind(desc)),
                ));
            }
            d.insert("description".into(), desc.clone());
        }
        let params = f
            .get("parameters")
            .or_else(|| f.get("input_schema"))
            .filter(|v| !v.is_null());
        if let Some(p) = params {
            if !p.is_object() {
                return Err(err(
                    &place,
                    format!("the parameters must be an object, got {}", kind(p)),
                ));
            }
            d.insert("parameters".into(), p.clone());
        }
        // The tool's other keys (`strict`, `cache_control`, …) come along: the exporters send
        // the ones their API takes. Structure keys (`type`, Chat's `function`) do not.
        let inner = (!std::ptr::eq(f, o)).then_some(f);
        for (k, v) in o.iter().chain(inner.into_iter().flatten()) {
            let structure = matches!(
                k.as_str(),
                "type" | "function" | "input_schema" | "parameters"
            );
            if !structure && !d.contains_key(k) {
                d.insert(k.clone(), v.clone());
            }
        }
        out.push(Value::Object(d));
    }
    Ok(compact_json(&Value::Array(out)))
}
