//! Messages are built and validated in the core: every constructor of the binding goes through
//! `Message::build` / `Message::with`, so these rules hold whatever door a message comes in by.

use ctxfold_core::{new_part, part_from_map, Fields};
use ctxfold_core::{Content, ErrorKind, Kind, Message, Role};
use serde_json::{json, Map, Value};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn build_applies_fields_then_validates_once() {
    let m = Message::build(
        Role::Assistant,
        Content::Text("hi".into()),
        Kind::Plain,
        Fields {
            name: Some(Some("bot".into())),
            tool_calls: Some(vec![obj(
                json!({"id": "c1", "name": "f", "arguments": "{}"}),
            )]),
            id: Some("m1".into()),
            ..Fields::default()
        },
    )
    .unwrap();
    assert_eq!((m.name.as_deref(), m.id.as_str()), (Some("bot"), "m1"));
    let bad = Fields {
        tool_calls: Some(vec![
            obj(json!({"id": "c1", "name": "f"})),
            obj(json!({"id": 2})),
        ]),
        ..Fields::default()
    };
    let e = Message::build(Role::Assistant, Content::None, Kind::Plain, bad).unwrap_err();
    assert!(
        e.kind() == ErrorKind::BadArgument
            && e.to_string() == "tool_calls[1]: a tool call's id must be a string",
        "{e:?}"
    );
    let parts = Content::Parts(vec![
        obj(json!({"type": "text", "text": "a"})),
        obj(json!({"text": "b"})),
    ]);
    let e = Message::build(Role::User, parts, Kind::Plain, Fields::default()).unwrap_err();
    assert!(
        e.kind() == ErrorKind::BadArgument
            && e.to_string() == "content[1]: a part needs a string \"type\"",
        "{e:?}"
    );
}

#[test]
fn with_changes_only_what_is_given() {
    let m = Message::build(
        Role::User,
        Content::Text("a".into()),
        Kind::Plain,
        Fields::default(),
    )
    .unwrap();
    let n = m
        .with(Fields {
            content: Some(Content::Text("b".into())),
            name: Some(None),
            ..Fields::default()
        })
        .unwrap();
    assert_eq!(
        (n.id.as_str(), n.created_at, n.text()),
        (m.id.as_str(), m.created_at, "b".to_string())
    );
    assert!(m
        .with(Fields {
            content: Some(Content::Parts(vec![Map::new()])),
            ..Fields::default()
        })
        .is_err());
}

#[test]
fn tool_result_text_is_the_compact_json_of_a_non_str() {
    let m = Message::tool_result(
        "c1".into(),
        json!({"b": [1, 2.5, null], "a": "é"}),
        Fields::default(),
    )
    .unwrap();
    assert_eq!(m.text(), r#"{"b":[1,2.5,null],"a":"é"}"#);
    assert_eq!(m.tool_call_id.as_deref(), Some("c1"));
    let s = Message::tool_result("c1".into(), json!("as is"), Fields::default()).unwrap();
    assert_eq!(s.text(), "as is");
}

#[test]
fn parts_keep_order_and_need_a_type() {
    let p = new_part(
        "tool_use",
        [
            ("call_id", Some(json!("c"))),
            ("name", Some(json!("f"))),
            ("arguments", None),
        ],
        obj(json!({"cache_control": {"type": "ephemeral"}, "name": "g"})),
    );
    assert_eq!(
        Value::Object(p),
        json!({"type": "tool_use", "call_id": "c", "name": "g", "cache_control": {"type": "ephemeral"}})
    );
    let keys: Vec<String> = new_part(
        "x",
        [("b", Some(json!(1))), ("a", Some(json!(2)))],
        Map::new(),
    )
    .keys()
    .cloned()
    .collect();
    assert_eq!(keys, ["type", "b", "a"]);
    assert!(part_from_map(obj(json!({"type": 1}))).is_err());
    assert!(part_from_map(obj(json!({"type": "text"}))).is_ok());
}
