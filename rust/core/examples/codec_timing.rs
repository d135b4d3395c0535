//! Times encoding and decoding a 100k-message context: `cargo run --release --example codec_timing [FILE]`.
use ctxfold_core::{Content, Context, Message, Role};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    // With a path: time decoding that file instead.
    if let Some(path) = std::env::args().nth(1) {
        let bytes = std::fs::read(&path).unwrap();
        for _ in 0..3 {
            let t = Instant::now();
            let l = Context::<Arc<Message>>::load_bytes(&bytes).unwrap();
            println!(
                "decode {:?} ({} messages, {} bytes)",
                t.elapsed(),
                l.context.len(),
                bytes.len()
            );
        }
        return;
    }
    let mut ctx: Context<Arc<Message>> = Context::default();
    for i in 0..100_000 {
        ctx.append(
            Arc::new(Message::new(
                Role::User,
                Content::Text(format!("message number {i} with some text")),
            )),
            "messages",
            None,
        )
        .unwrap();
    }
    let t = Instant::now();
    let bytes = ctx.to_json_bytes(&Default::default()).unwrap();
    println!("encode {:?} ({} bytes)", t.elapsed(), bytes.len());
    let t = Instant::now();
    let l = Context::<Arc<Message>>::load_bytes(&bytes).unwrap();
    println!("decode {:?} ({} messages)", t.elapsed(), l.context.len());
}
