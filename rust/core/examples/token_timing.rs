//! Single-thread tokenizer timing on texts from a JSON list: `cargo run --release --example token_timing FILE`.
use std::collections::HashSet;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("a JSON list of strings");
    let texts: Vec<String> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let empty: HashSet<&str> = HashSet::new();
    for _ in 0..2 {
        let t = Instant::now();
        let n: usize = texts
            .iter()
            .map(|s| bpe.encode(s, &empty).unwrap().0.len())
            .sum();
        println!("encode          {:?} ({n} tokens)", t.elapsed());
        let t = Instant::now();
        let n: usize = texts.iter().map(|s| bpe.encode_ordinary(s).len()).sum();
        println!("encode_ordinary {:?} ({n} tokens)", t.elapsed());
        use rayon::prelude::*;
        let t = Instant::now();
        let n: usize = texts
            .par_iter()
            .map(|s| ctxfold_core::count_text(s, ctxfold_core::Encoding::Cl100kBase).unwrap())
            .sum();
        println!("count_text par  {:?} ({n} tokens)", t.elapsed());
        let t = Instant::now();
        let n: usize = texts
            .iter()
            .map(|s| ctxfold_core::count_text(s, ctxfold_core::Encoding::Cl100kBase).unwrap())
            .sum();
        println!("count_text seq  {:?} ({n} tokens)", t.elapsed());
    }
}
