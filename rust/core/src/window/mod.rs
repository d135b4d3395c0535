//! Windows: a child context keeping the special messages and a suffix of the rest,
//! by count (`sequence`) or by token budget (`tokens`).

mod sequence;
mod specials;
mod tokens;

/// A token budget as a caller may give it: a negative one is 0 (nothing but what a window
/// always keeps fits), never an error.
pub fn budget(max_tokens: i64) -> u64 {
    max_tokens.max(0) as u64
}
