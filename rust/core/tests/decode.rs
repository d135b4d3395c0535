//! Every way a document can be wrong is an undecodable-input error that says where, never a panic and
//! never a half-built context.

use ctxfold_core::{Content, Context, ErrorKind, LocItem, Message, Role};
use serde_json::{json, Value};
use std::sync::Arc;

type Ctx = Context<Arc<Message>>;

fn doc() -> Value {
    let mut ctx = Ctx::default();
    for i in 0..3 {
        let m = Message::new(Role::User, Content::Text(format!("m{i}")));
        ctx.append(Arc::new(m), "messages", None).unwrap();
    }
    ctx.remove_range(0, 0).unwrap();
    let bytes = ctx.to_json_bytes(&Default::default()).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn decode_error(v: &Value) -> String {
    match Ctx::load_value(v, true) {
        Err(e) if e.kind() == ErrorKind::Undecodable => e.to_string(),
        Err(other) => panic!("expected a decode error, got {other:?}"),
        Ok(_) => panic!("expected a decode error for {v}"),
    }
}

fn with(path: &[&str], value: Value) -> Value {
    let mut d = doc();
    let mut at = &mut d;
    for (i, key) in path.iter().enumerate() {
        let slot = match key.parse::<usize>() {
            Ok(n) => &mut at[n],
            Err(_) => &mut at[*key],
        };
        if i == path.len() - 1 {
            *slot = value.clone();
            break;
        }
        at = slot;
    }
    d
}

#[test]
fn a_valid_document_loads() {
    let loaded = Ctx::load_value(&doc(), true).unwrap();
    assert_eq!(loaded.context.len(), 2);
}

#[test]
fn each_bad_field_names_its_place() {
    let cases: Vec<(Value, &str)> = vec![
        (with(&["version"], json!(7)), "unsupported version: 7"),
        (
            with(&["version"], json!("2")),
            "missing or invalid version field",
        ),
        (with(&["events", "1", "seq"], json!(5)), "events[1].seq"),
        (
            with(&["events", "0", "type"], json!("nope")),
            "events[0].type",
        ),
        (
            with(&["events", "0", "time"], json!("yesterday")),
            "events[0].time",
        ),
        (
            with(&["events", "0", "time"], json!("2020-01-01T00:00:00Z")),
            "differs from its message's created_at",
        ),
        (
            with(&["events", "0", "data", "op"], json!("move")),
            "events[0].data.op",
        ),
        (
            with(&["events", "1", "data", "position"], json!(9)),
            "events[1]",
        ),
        (
            with(&["events", "0", "data", "message", "role"], json!("robot")),
            "events[0].data.message",
        ),
        (
            with(&["events", "0", "data", "message", "role"], json!(3)),
            "events[0].data.message.role",
        ),
        (
            with(&["events", "3", "data", "last"], json!(7)),
            "events[3]",
        ),
        (
            with(&["events", "3", "data", "first"], json!(-1)),
            "events[3].data.first",
        ),
        (
            with(&["events", "3", "data", "op"], json!("replace")),
            "events[3].data.op",
        ),
        (
            with(&["events", "3", "data", "message"], json!({"role": "user"})),
            "events[3].data.message",
        ),
        (
            with(&["events", "3", "data", "first"], json!(1)),
            "events[3]",
        ),
        (with(&["events"], json!({})), "events"),
        (with(&["anchors"], json!([["messages", 9]])), "anchors"),
        (with(&["anchors"], json!([["a", 1], ["b", 0]])), "anchors"),
        (
            with(&["started_at"], json!("9999-12-31T23:59:59-01:00")),
            "started_at",
        ),
    ];
    for (v, place) in cases {
        let m = decode_error(&v);
        assert!(m.contains(place), "{place:?} not in {m:?}");
    }
}

#[test]
fn bad_bytes_are_decode_errors() {
    let text = serde_json::to_vec(&doc()).unwrap();
    for cut in [0, 1, text.len() / 2, text.len() - 1] {
        let e = Ctx::load_bytes(&text[..cut]).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Undecodable);
    }
    let mut bad = text.clone();
    bad[10] = 0xff;
    let e = Ctx::load_bytes(&bad).err().unwrap();
    assert!(e.kind() == ErrorKind::Undecodable && e.to_string().contains("UTF-8"));
    let e = Ctx::load_bytes(b"[]").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Undecodable);
}

#[test]
fn runtime_fields_that_could_not_be_saved_again_are_refused() {
    let mut deep = json!(1);
    for _ in 0..110 {
        deep = json!({ "a": deep });
    }
    let m = decode_error(&with(&["deps"], deep));
    assert!(m.contains("deps") && m.contains("deeper"), "{m}");
}

#[test]
fn the_place_of_a_bad_field_is_data_as_well_as_text() {
    let key = |k: &str| LocItem::Key(k.into());
    let cases: Vec<(Value, Vec<LocItem>)> = vec![
        (
            with(&["events", "0", "data", "message", "role"], json!("robot")),
            vec![
                key("events"),
                LocItem::Index(0),
                key("data"),
                key("message"),
                key("role"),
            ],
        ),
        (
            with(&["events", "3", "data", "first"], json!(-1)),
            vec![key("events"), LocItem::Index(3), key("data"), key("first")],
        ),
        (
            with(&["anchors"], json!([["a", 1], ["b", 0]])),
            vec![key("anchors"), LocItem::Index(1)],
        ),
        (with(&["version"], json!(7)), vec![]),
    ];
    for (v, loc) in cases {
        let e = Ctx::load_value(&v, true).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Undecodable);
        let got: Vec<LocItem> = e.loc().items().cloned().collect();
        assert_eq!(got, loc, "{e}");
        // The text is the place, then the message.
        let place = e.loc().to_string();
        let expected = if place.is_empty() {
            e.message().to_string()
        } else {
            format!("{place}: {}", e.message())
        };
        assert_eq!(e.to_string(), expected);
    }
}
