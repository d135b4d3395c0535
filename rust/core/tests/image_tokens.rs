//! An image costs a flat 85 tokens whatever shape it arrived in: ctxfold's `image` part
//! (Anthropic's block has the same type), Chat's `image_url` and Responses' `input_image`.

use ctxfold_core::message::Fields;
use ctxfold_core::tokens::{counted_text, message_tokens};
use ctxfold_core::{Content, Encoding, Kind, Message, Role};
use serde_json::{json, Value};

fn user(parts: Vec<Value>) -> Message {
    let parts = parts
        .into_iter()
        .map(|p| p.as_object().unwrap().clone())
        .collect();
    Message::build(
        Role::User,
        Content::Parts(parts),
        Kind::Plain,
        Fields::default(),
    )
    .unwrap()
}

fn text() -> Value {
    json!({"type": "text", "text": "What is in this picture?"})
}

#[test]
fn every_image_shape_costs_the_flat_amount() {
    let url = "https://example.com/a-rather-long-path/to/some/picture-of-a-cat.png";
    let shapes = [
        json!({"type": "image", "source": {"type": "url", "url": url}}),
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo".repeat(50)}}),
        json!({"type": "image_url", "image_url": {"url": url, "detail": "high"}}),
        json!({"type": "image_url", "image_url": url}),
        json!({"type": "input_image", "image_url": url, "detail": "auto"}),
        json!({"type": "input_image", "file_id": "file-abc123"}),
    ];
    for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
        let plain = message_tokens(&user(vec![text()]), enc).unwrap();
        for shape in &shapes {
            let m = user(vec![text(), shape.clone()]);
            assert_eq!(
                message_tokens(&m, enc).unwrap(),
                plain + 85,
                "{shape} under {}",
                enc.name()
            );
            // No text of the image (its URL, its bytes) is counted.
            assert_eq!(counted_text(&m).0, "user\nWhat is in this picture?");
            let two = user(vec![text(), shape.clone(), shape.clone()]);
            assert_eq!(message_tokens(&two, enc).unwrap(), plain + 170);
        }
    }
}

#[test]
fn a_part_of_another_type_still_counts_as_its_json() {
    let m = user(vec![json!({"type": "refusal", "refusal": "no"})]);
    assert_eq!(
        counted_text(&m).0,
        r#"user
{"type":"refusal","refusal":"no"}"#
    );
}
