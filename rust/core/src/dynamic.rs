//! Dynamic messages: hook outputs stored in the content map by sha256, bound to hooks, and
//! resolved into the messages that carry those hooks whenever `messages` is read. Also the
//! system-prompt overlay, which is applied on read in the same way and never logged.

use crate::context::{Context, MessageHandle};
use crate::error::{Error, Result};
use crate::message::{part_type, text_part, Content, Kind, Message, Part};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub fn sha256_hex(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of a hook: sha256 hex of its name.
pub fn hook_id(name: &str) -> String {
    sha256_hex(name)
}

pub const TOOL_LIST: &str = "tool_list";
pub const TOOL_FILTER: &str = "tool_filter";

/// `SystemPromptMessage.create(static_text, hooks)`: the system prompt, its text resolved
/// from the named hooks when they are bound.
pub fn system_prompt(static_text: Option<String>, hooks: &[String]) -> Message {
    let content = static_text.map_or(Content::None, Content::Text);
    let mut m = Message::new(crate::message::Role::System, content);
    m.kind = Kind::SystemPrompt;
    m.hook_ids = hooks.iter().map(|h| hook_id(h)).collect();
    m
}

/// `ToolDefinitionsMessage.create(hooks)`: the tool definitions, resolved from `tool_list`
/// and `tool_filter` (always) and any other named hooks.
pub fn tool_definitions(hooks: &[String]) -> Message {
    let mut m = Message::new(crate::message::Role::Tool, Content::None);
    m.kind = Kind::ToolDefinitions;
    add_tool_hooks(&mut m, hooks);
    m
}

/// A tool-definitions message carries the `tool_list` and `tool_filter` hooks, then `extra`,
/// each once.
pub fn add_tool_hooks(m: &mut Message, extra: &[String]) {
    for name in [TOOL_LIST, TOOL_FILTER]
        .into_iter()
        .chain(extra.iter().map(String::as_str))
    {
        let id = hook_id(name);
        if !m.hook_ids.contains(&id) {
            m.hook_ids.push(id);
        }
    }
}

/// Tool definitions from a `tool_list` output: a JSON list of `{name, description, parameters}`
/// and any other keys each tool came with.
fn parse_tool_list(text: &str) -> Result<Vec<Part>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::bad_argument(format!("tool_list output is not JSON: {e}")))?;
    let arr = v
        .as_array()
        .ok_or_else(|| Error::bad_argument("tool_list output must be a JSON list"))?;
    let mut out = Vec::with_capacity(arr.len());
    for (i, t) in arr.iter().enumerate() {
        let o = t
            .as_object()
            .ok_or_else(|| Error::bad_argument(format!("tool_list[{i}] must be an object")))?;
        if !matches!(o.get("name"), Some(Value::String(_))) {
            return Err(Error::bad_argument(format!(
                "tool_list[{i}] needs a string name"
            )));
        }
        let mut p = Map::new();
        p.insert("type".into(), Value::String("tool".into()));
        p.insert("name".into(), o["name"].clone());
        p.insert(
            "description".into(),
            o.get("description").cloned().unwrap_or(Value::Null),
        );
        p.insert(
            "parameters".into(),
            o.get("parameters").cloned().unwrap_or(Value::Null),
        );
        // Every other key a tool came with (`strict`, `cache_control`, …) stays on its part,
        // for the exporters that send it; `type` is the part's own.
        for (k, v) in o {
            if !p.contains_key(k) {
                p.insert(k.clone(), v.clone());
            }
        }
        out.push(p);
    }
    Ok(out)
}

/// Regexes from a `tool_filter` output: a JSON list of patterns, each matched in full.
fn parse_tool_filter(text: &str) -> Result<Vec<regex::Regex>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::bad_argument(format!("tool_filter output is not JSON: {e}")))?;
    let arr = v
        .as_array()
        .ok_or_else(|| Error::bad_argument("tool_filter output must be a JSON list"))?;
    arr.iter()
        .enumerate()
        .map(|(i, p)| {
            let s = p
                .as_str()
                .ok_or_else(|| Error::bad_argument(format!("tool_filter[{i}] must be a string")))?;
            regex::Regex::new(&format!("^(?:{s})$")).map_err(|e| {
                Error::bad_argument(format!("tool_filter[{i}] is not a valid regex: {e}"))
            })
        })
        .collect()
}

impl<H: MessageHandle> Context<H> {
    /// Bind hook outputs. Every output is checked before anything changes.
    /// Returns the seq of the one `materialize` event, or `None` for no outputs.
    pub fn materialize(&mut self, outputs: &[(String, String)]) -> Result<Option<u64>> {
        if outputs.is_empty() {
            return Ok(None);
        }
        for (name, text) in outputs {
            match name.as_str() {
                TOOL_LIST => drop(parse_tool_list(text)?),
                TOOL_FILTER => drop(parse_tool_filter(text)?),
                _ => {}
            }
        }
        let mut bound = Map::new();
        let mut rebound = std::collections::HashSet::new();
        for (name, text) in outputs {
            let hash = sha256_hex(text);
            self.keep_content(hash.clone(), text.clone());
            let hook = hook_id(name);
            if self.bind(hook.clone(), hash.clone()) {
                rebound.insert(hook);
            }
            bound.insert(name.clone(), Value::String(hash));
        }
        let mut data = Map::new();
        data.insert("bindings".into(), Value::Object(bound));
        let seq = self.push_materialize(data)?.seq;
        // Only messages carrying a hook bound to another text resolve anew; the others keep
        // their resolved objects, so a caller still holds what `messages` shows.
        self.forget_rebound(&rebound);
        Ok(Some(seq))
    }

    fn bound_text<'a>(
        &'a self,
        bindings: &IndexMap<String, String>,
        hook: &str,
    ) -> Option<&'a str> {
        bindings
            .get(hook)
            .and_then(|h| self.content_map().get(h))
            .map(String::as_str)
    }

    /// `None` when nothing bound changes the message.
    pub(crate) fn resolve(&self, m: &Message) -> Option<Message> {
        self.resolve_with(self.bindings(), m)
    }

    /// The message resolved with `bindings` (hook id → content hash); `None` when nothing
    /// bound changes it.
    pub(crate) fn resolve_with(
        &self,
        bindings: &IndexMap<String, String>,
        m: &Message,
    ) -> Option<Message> {
        if m.kind == Kind::ToolDefinitions {
            let list = parse_tool_list(self.bound_text(bindings, &hook_id(TOOL_LIST))?).ok()?;
            let filter = match self.bound_text(bindings, &hook_id(TOOL_FILTER)) {
                Some(t) => parse_tool_filter(t).ok()?,
                None => Vec::new(),
            };
            let parts: Vec<Part> = list
                .into_iter()
                .filter(|p| {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    filter.is_empty() || filter.iter().any(|r| r.is_match(name))
                })
                .collect();
            let mut out = m.clone();
            out.content = Content::Parts(parts);
            return Some(out);
        }
        let hooks: Vec<&str> = m
            .hook_ids
            .iter()
            .filter_map(|h| self.bound_text(bindings, h))
            .collect();
        if hooks.is_empty() {
            return None;
        }
        let own = m.text();
        let mut pieces: Vec<&str> = Vec::with_capacity(hooks.len() + 1);
        if !own.is_empty() {
            pieces.push(&own);
        }
        pieces.extend(hooks);
        let text = pieces.join("\n\n");
        let mut out = m.clone();
        out.content = match &m.content {
            Content::None | Content::Text(_) => Content::Text(text),
            Content::Parts(parts) => {
                let first_text = parts.iter().position(|p| part_type(p) == Some("text"));
                let mut merged: Vec<Part> = parts
                    .iter()
                    .filter(|p| part_type(p) != Some("text"))
                    .cloned()
                    .collect();
                let at = match first_text {
                    Some(i) => parts[..i]
                        .iter()
                        .filter(|p| part_type(p) != Some("text"))
                        .count(),
                    None => merged.len(),
                };
                merged.insert(at, text_part(&text));
                Content::Parts(merged)
            }
        };
        Some(out)
    }
}
