//! Key order at every depth of an imported wire object. An exporter writes the objects it
//! builds (a content part, a tool call, a nested `image_url`) in one order of its own; a
//! request that spelled them in another order (the SDKs' `model_dump()` does, and so may any
//! hand-written dict) must still come back as it came. So an importer exports each message
//! it made alone, and where that gives the same object in another order it keeps the wire
//! object's skeleton — its keys at every depth, in order, leaves as null — in
//! `metadata["interop"]["shape"]`; the exporter puts the keys of the message's object back in
//! that order (`interop::finish`). Messages that already come back in order keep nothing.

use super::interop::INTEROP;
use super::out::{Key, J};
use super::{export, ExportOptions, Format};
use crate::message::Message;
use serde_json::{Map, Value};

/// The wire object's keys at every depth, in order; leaves are null.
fn skeleton(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), skeleton(v))).collect())
        }
        Value::Array(a) if a.iter().any(|v| v.is_object() || v.is_array()) => {
            Value::Array(a.iter().map(skeleton).collect())
        }
        _ => Value::Null,
    }
}

/// `j` with the keys of its objects, at every depth, in the order of `shape`; keys `shape`
/// lacks follow in their own order.
pub fn reorder_deep<'a>(j: J<'a>, shape: &Value) -> J<'a> {
    match (j, shape) {
        (J::Obj(entries), Value::Object(s)) => J::Obj(entries_in_order(entries, s)),
        (J::Of(m, entries), Value::Object(s)) => J::Of(m, entries_in_order(entries, s)),
        (J::Arr(items), Value::Array(s)) => J::Arr(
            items
                .into_iter()
                .enumerate()
                .map(|(i, j)| match s.get(i) {
                    Some(sub) => reorder_deep(j, sub),
                    None => j,
                })
                .collect(),
        ),
        (J::Val(v), s @ (Value::Object(_) | Value::Array(_))) => J::Owned(value_in_order(v, s)),
        (J::Owned(v), s @ (Value::Object(_) | Value::Array(_))) => J::Owned(value_in_order(&v, s)),
        (j, _) => j,
    }
}

fn entries_in_order<'a>(
    entries: Vec<(Key<'a>, J<'a>)>,
    shape: &Map<String, Value>,
) -> Vec<(Key<'a>, J<'a>)> {
    let mut rest: Vec<Option<(Key<'a>, J<'a>)>> = entries.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rest.len());
    for (k, sub) in shape {
        if let Some(slot) = rest
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(|(key, _)| key == k))
        {
            if let Some((key, j)) = slot.take() {
                out.push((key, reorder_deep(j, sub)));
            }
        }
    }
    out.extend(rest.into_iter().flatten());
    out
}

fn value_in_order(v: &Value, shape: &Value) -> Value {
    match (v, shape) {
        (Value::Object(o), Value::Object(s)) => {
            let mut out = Map::new();
            for (k, sub) in s {
                if let Some(x) = o.get(k) {
                    out.insert(k.clone(), value_in_order(x, sub));
                }
            }
            for (k, x) in o {
                if !out.contains_key(k) {
                    out.insert(k.clone(), x.clone());
                }
            }
            Value::Object(out)
        }
        (Value::Array(a), Value::Array(s)) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    s.get(i)
                        .map_or_else(|| x.clone(), |sub| value_in_order(x, sub))
                })
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Compact JSON text: what tells one key order from another.
fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Keep the shape of each wire item whose message, exported alone, gives it back with the
/// same keys and values in another order. `wire` are the items the messages came from, one
/// each (a format whose import is not one message per item passes them only when it was).
pub fn keep_shapes(format: Format, messages: &mut [Message], wire: &[Value]) {
    if messages.len() != wire.len() {
        return;
    }
    let key = match format {
        Format::OpenAiResponses => "input",
        _ => "messages",
    };
    let opts = ExportOptions {
        pair: format != Format::OpenAiResponses,
        ..ExportOptions::default()
    };
    for (m, w) in messages.iter_mut().zip(wire) {
        if !w.is_object() {
            continue;
        }
        let first = export(format, &[&*m], opts)
            .ok()
            .map(|j| j.to_value())
            .and_then(|v| v.get(key).and_then(|items| items.get(0)).cloned());
        let Some(out) = first else { continue };
        if out == *w && text(&out) != text(w) {
            if let Some(Value::Object(i)) = m.metadata.get_mut(INTEROP) {
                i.insert("shape".into(), skeleton(w));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_reorder_follows_the_shape() {
        let built = J::obj()
            .put("type", J::Lit("image_url"))
            .put(
                "image_url",
                J::obj()
                    .put("url", J::Lit("u"))
                    .put("detail", J::Lit("low"))
                    .done(),
            )
            .done();
        let wire = json!({"image_url": {"detail": "low", "url": "u"}, "type": "image_url"});
        let out = reorder_deep(built, &skeleton(&wire)).to_value();
        assert_eq!(text(&out), text(&wire));
    }
}
