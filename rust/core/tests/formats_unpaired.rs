//! The Responses export with `pair: false`: each message as its item(s), in order, nothing
//! added, dropped, moved or renamed — what an item store must give back.

use ctxfold_core::{Content, Error, ErrorKind, Message, Role};
use ctxfold_core::{ExportOptions, Format};
use serde_json::{json, Value};

fn unpaired(ms: &[Message], strict: bool) -> Result<Value, Error> {
    let refs: Vec<&Message> = ms.iter().collect();
    let opts = ExportOptions {
        strict,
        pair: false,
        ..ExportOptions::default()
    };
    ctxfold_core::export(Format::OpenAiResponses, &refs, opts)
        .map(|j| serde_json::to_value(&j).unwrap())
}

fn same_bytes(a: &Value, b: &Value) {
    assert_eq!(
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap()
    );
}

#[test]
fn lone_calls_and_outputs_come_back_as_they_were() {
    // An output before its call, a call never answered, an output to no call, a second
    // output to one call, and an id longer than Responses accepts: every one the paired
    // export would repair.
    let long = "c".repeat(80);
    let p = json!([
        {"type": "function_call_output", "call_id": "early", "output": "x"},
        {"content": "hi", "role": "user"},
        {"type": "function_call", "id": "fc_1", "call_id": "early", "name": "f", "arguments": "{}", "status": "completed"},
        {"type": "function_call", "call_id": "waiting", "name": "g", "arguments": "{\"a\": 1}"},
        {"type": "function_call_output", "call_id": "nobody", "output": [{"type": "input_text", "text": "t"}]},
        {"type": "function_call_output", "call_id": "early", "output": "again"},
        {"type": "function_call", "call_id": long, "name": "h", "arguments": "{}"}
    ]);
    let ms = ctxfold_core::import(Format::OpenAiResponses, &p, None).unwrap();
    assert_eq!(ms.len(), 7);
    let out = unpaired(&ms, true).unwrap();
    same_bytes(&out["input"], &p);

    // Each prefix, as a session holds it after popping items one by one.
    for n in 0..=ms.len() {
        let out = unpaired(&ms[..n], true).unwrap();
        same_bytes(
            &out["input"],
            &Value::Array(p.as_array().unwrap()[..n].to_vec()),
        );
    }

    // The paired export repairs the same items (strict refuses them).
    let refs: Vec<&Message> = ms.iter().collect();
    let strict = ExportOptions {
        strict: true,
        ..ExportOptions::default()
    };
    assert!(ctxfold_core::export(Format::OpenAiResponses, &refs, strict).is_err());
}

#[test]
fn core_messages_export_without_a_plan() {
    // Messages made in ctxfold (not imported): a user message's tool results are outputs
    // before the rest of it; a call keeps its id.
    let mut a = Message::new(Role::Assistant, Content::Text("calling".into()));
    a.tool_calls.push(
        serde_json::from_value(json!({"id": "c1", "name": "f", "arguments": {"q": 1}})).unwrap(),
    );
    let u = Message::new(
        Role::User,
        Content::Parts(vec![
            serde_json::from_value(json!({"type": "tool_result", "call_id": "zz", "content": "r"}))
                .unwrap(),
            serde_json::from_value(json!({"type": "text", "text": "and?"})).unwrap(),
        ]),
    );
    let out = unpaired(&[a, u], false).unwrap();
    same_bytes(
        &out["input"],
        &json!([
            {"role": "assistant", "content": "calling"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"q\":1}"},
            {"type": "function_call_output", "call_id": "zz", "output": "r"},
            {"role": "user", "content": [{"type": "input_text", "text": "and?"}]}
        ]),
    );
}

#[test]
fn a_tool_message_without_a_call_id_is_an_error_not_left_out() {
    let t = Message::new(Role::Tool, Content::Text("r".into()));
    let e = unpaired(&[t], false).unwrap_err();
    assert!(
        e.kind() == ErrorKind::Unconvertible && e.to_string().starts_with("messages[0]:"),
        "{e:?}"
    );
}

#[test]
fn only_responses_has_an_unpaired_export() {
    let ms = [Message::new(Role::User, Content::Text("hi".into()))];
    let refs: Vec<&Message> = ms.iter().collect();
    let opts = ExportOptions {
        pair: false,
        ..ExportOptions::default()
    };
    for f in [Format::OpenAiChat, Format::Anthropic] {
        let e = ctxfold_core::export(f, &refs, opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArgument);
    }
}
