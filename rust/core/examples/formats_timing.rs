//! How long the exporters take in the core alone (plan + tree, then JSON text), on a
//! transcript shaped like the demo's: `cargo run --release --example formats_timing -- 100000`.

use ctxfold_core::{Content, Message, Role};
use ctxfold_core::{ExportOptions, Format};
use serde_json::json;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let prose = "the build failed because the cache key changed after the lockfile update so we reran tests";
    let mut ms = Vec::with_capacity(n);
    let mut k = 0;
    while ms.len() < n {
        k += 1;
        ms.push(Message::new(Role::User, Content::Text(prose.into())));
        let parts = vec![
            serde_json::from_value(json!({"type": "thinking", "text": prose, "signature": "sig"}))
                .unwrap(),
            serde_json::from_value(json!({"type": "text", "text": prose})).unwrap(),
        ];
        let mut a = Message::new(Role::Assistant, Content::Parts(parts));
        a.tool_calls.push(
            serde_json::from_value(
                json!({"id": format!("call_{k}"), "name": "search", "arguments": {"q": "x"}}),
            )
            .unwrap(),
        );
        ms.push(a);
        let mut t = Message::new(Role::Tool, Content::Text(prose.repeat(3)));
        t.tool_call_id = Some(format!("call_{k}"));
        ms.push(t);
        ms.push(Message::new(Role::Assistant, Content::Text(prose.into())));
    }
    ms.truncate(n);
    let refs: Vec<&Message> = ms.iter().collect();
    for f in [
        Format::OpenAiChat,
        Format::Anthropic,
        Format::OpenAiResponses,
    ] {
        let t = Instant::now();
        let j = ctxfold_core::export(f, &refs, ExportOptions::default()).unwrap();
        let built = t.elapsed();
        let s = serde_json::to_string(&j).unwrap();
        println!(
            "{f:?}: plan + tree {built:?}, + JSON text {:?} ({} bytes)",
            t.elapsed(),
            s.len()
        );
    }
}
