//! The provider formats over core messages: round trips, repairs, ids, strict, errors.

use ctxfold_core::{Content, Error, ErrorKind, LocItem, Message, Role};
use ctxfold_core::{ExportOptions, Format};
use serde_json::{json, Value};

fn export(f: Format, ms: &[Message], strict: bool) -> Result<Value, Error> {
    let refs: Vec<&Message> = ms.iter().collect();
    let opts = ExportOptions {
        strict,
        instructions: false,
        ..ExportOptions::default()
    };
    ctxfold_core::export(f, &refs, opts).map(|j| serde_json::to_value(&j).unwrap())
}

#[test]
fn chat_round_trip_keeps_bytes_and_order() {
    let p = json!([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1 }"}}]},
        {"tool_call_id": "c1", "role": "tool", "content": "ok", "name": "f"},
        {"role": "assistant", "content": "done", "weird": [1]}
    ]);
    let ms = ctxfold_core::import(Format::OpenAiChat, &p, None).unwrap();
    assert_eq!(ms[2].tool_calls[0]["arguments"], json!("{\"a\": 1 }"));
    assert!(matches!(ms[1].content, Content::Parts(ref x) if x[1]["type"] == "image"));
    let out = export(Format::OpenAiChat, &ms, true).unwrap();
    assert_eq!(
        serde_json::to_string(&out["messages"]).unwrap(),
        serde_json::to_string(&p).unwrap()
    );
}

#[test]
fn anthropic_results_come_first_in_the_next_user_turn() {
    let mut a = Message::new(Role::Assistant, Content::Text("calling".into()));
    a.tool_calls.push(
        serde_json::from_value(json!({"id": "call|1", "name": "f", "arguments": "{\"x\":1}"}))
            .unwrap(),
    );
    a.tool_calls
        .push(serde_json::from_value(json!({"id": "c2", "name": "g", "arguments": {}})).unwrap());
    let mut t = Message::new(Role::Tool, Content::Text("r1".into()));
    t.tool_call_id = Some("call|1".into());
    let u = Message::new(Role::User, Content::Text("more".into()));
    let ms = vec![
        Message::new(Role::User, Content::Text("go".into())),
        a,
        u,
        t,
    ];
    let out = export(Format::Anthropic, &ms, false).unwrap();
    let msgs = out["messages"].as_array().unwrap();
    let uses: Vec<&str> = msgs[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(uses.len(), 2);
    assert!(uses[0]
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    assert_eq!(msgs[1]["content"][1]["input"], json!({"x": 1}));
    let results = msgs[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["tool_use_id"], json!(uses[0]));
    assert_eq!(results[0]["content"], json!("r1"));
    assert_eq!(results[1]["tool_use_id"], json!("c2"));
    assert_eq!(msgs[3]["content"], json!("more"));
    // Strict: the remapped id, the dangling call and the moved answer are all named.
    let e = export(Format::Anthropic, &ms, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NeedsRepair);
    let m = e.to_string();
    assert!(
        m.contains("call|1") && m.contains("\"c2\"") && m.contains("moved"),
        "{m}"
    );
}

#[test]
fn responses_items_round_trip_one_message_each() {
    let p = json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
        {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}", "status": "completed"},
        {"type": "function_call_output", "call_id": "c", "output": "x"},
        {"type": "mcp_call", "id": "m", "server_label": "s"},
        {"content": "hi", "role": "user"}
    ]);
    let ms = ctxfold_core::import(Format::OpenAiResponses, &p, None).unwrap();
    assert_eq!(ms.len(), 5);
    let out = export(Format::OpenAiResponses, &ms, true).unwrap();
    assert_eq!(
        serde_json::to_string(&out["input"]).unwrap(),
        serde_json::to_string(&p).unwrap()
    );
    // To Chat the reasoning and the unknown item are dropped, never sent as text.
    let chat = export(Format::OpenAiChat, &ms, false).unwrap();
    assert!(!chat.to_string().contains("rs_1") && !chat.to_string().contains("mcp_call"));
}

#[test]
fn malformed_input_is_a_located_format_error() {
    let p = json!([{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"arguments": "{}"}}]}]);
    let e = ctxfold_core::import(Format::OpenAiChat, &p, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unconvertible);
    assert_eq!(
        e.to_string(),
        "messages[0].tool_calls[0].function: missing \"name\""
    );
    let key = |k: &str| LocItem::Key(k.into());
    assert_eq!(
        e.loc().items().cloned().collect::<Vec<_>>(),
        [
            key("messages"),
            LocItem::Index(0),
            key("tool_calls"),
            LocItem::Index(0),
            key("function")
        ]
    );
    assert_eq!(e.message(), "missing \"name\"");
    let e = ctxfold_core::import(Format::Anthropic, &json!([{"role": "user"}]), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unconvertible);
    assert_eq!(e.to_string(), "messages[0]: missing \"content\"");
}

#[test]
fn mapped_ids_are_deterministic_and_distinct() {
    let mut a = Message::new(Role::Assistant, Content::None);
    for id in [
        "x".repeat(80),
        format!("{}y", "x".repeat(79)),
        "dup".into(),
        "dup".into(),
    ] {
        a.tool_calls
            .push(serde_json::from_value(json!({"id": id, "name": "f"})).unwrap());
    }
    let ms = vec![a];
    let one = export(Format::OpenAiChat, &ms, false).unwrap();
    let two = export(Format::OpenAiChat, &ms, false).unwrap();
    assert_eq!(one, two);
    let ids: Vec<&str> = one["messages"][0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 4);
    assert!(ids.iter().all(|i| i.len() <= 40));
    let answered: Vec<&str> = one["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ids);
}

/// Each call meets the first answer to its id at or after the end of its turn that no
/// earlier call met (the pairing rule), however far away it is and however many calls a turn
/// makes: the plan's answer lookup (near the turn first, then by id) against the rule
/// written out plainly, over transcripts with up to 20 parallel calls, answers shuffled and
/// sent late, ids shared by several calls, second answers and orphans.
#[test]
fn every_call_meets_the_first_free_answer_after_its_turn() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _round in 0..300 {
        let mut ms: Vec<Message> = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut answer_no = 0;
        for _ in 0..(5 + next(40)) {
            match next(4) {
                0 => {
                    let most = if next(3) == 0 { 20 } else { 3 };
                    let k = 1 + next(most);
                    let mut a = Message::new(Role::Assistant, Content::None);
                    for _ in 0..k {
                        let id = format!("c{}", next(30));
                        a.tool_calls.push(
                            json!({"id": id, "name": "f", "arguments": "{}"})
                                .as_object()
                                .unwrap()
                                .clone(),
                        );
                        pending.push(id);
                    }
                    ms.push(a);
                }
                1 if !pending.is_empty() => {
                    let most = pending.len() as u64;
                    let k = 1 + next(most) as usize;
                    for _ in 0..k {
                        let id = if next(8) == 0 {
                            format!("c{}", next(30))
                        } else {
                            let at = next(pending.len() as u64) as usize;
                            pending.swap_remove(at)
                        };
                        let mut t =
                            Message::new(Role::Tool, Content::Text(format!("r{answer_no}")));
                        answer_no += 1;
                        t.tool_call_id = Some(id);
                        ms.push(t);
                        if pending.is_empty() {
                            break;
                        }
                    }
                }
                _ => ms.push(Message::new(Role::User, Content::Text("u".into()))),
            }
        }
        // The rule, plainly: for each run of assistant messages, each call in order takes the
        // first answer not yet taken with its id in a message at or after the run's end.
        let mut taken = vec![false; ms.len()];
        let mut want: Vec<String> = Vec::new();
        let mut i = 0;
        while i < ms.len() {
            if ms[i].role != Role::Assistant {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < ms.len() && ms[j].role == Role::Assistant {
                j += 1;
            }
            let mut met: Vec<(usize, String)> = Vec::new();
            let mut interrupted = 0;
            for m in &ms[i..j] {
                for c in &m.tool_calls {
                    let id = c["id"].as_str().unwrap();
                    let hit = (j..ms.len()).find(|&k| {
                        !taken[k]
                            && ms[k].role == Role::Tool
                            && ms[k].tool_call_id.as_deref() == Some(id)
                    });
                    match hit {
                        Some(k) => {
                            taken[k] = true;
                            let Content::Text(t) = &ms[k].content else {
                                unreachable!()
                            };
                            met.push((k, t.clone()));
                        }
                        None => interrupted += 1,
                    }
                }
            }
            met.sort();
            want.extend(met.into_iter().map(|(_, t)| t));
            want.extend((0..interrupted).map(|_| ctxfold_core::INTERRUPTED.to_string()));
            i = j;
        }
        let out = export(Format::OpenAiChat, &ms, false).unwrap();
        let got: Vec<String> = out["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, want);
    }
}
