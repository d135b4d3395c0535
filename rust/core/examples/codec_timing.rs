//! Times serialize / encode / decode of a 100k-message context: `cargo run --release --example codec_timing`.
use ctxfold_core::{Content, Context, Message, Role};
use std::sync::Arc;
use std::time::Instant;

fn main() {
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
