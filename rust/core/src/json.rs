//! Rules for JSON values shared by everything that takes them from outside.

use serde_json::Value;

/// How deep a value given from Python may nest. Files nest it a few levels further, and the
/// reader refuses documents deeper than 128 levels (serde_json's guard against stack
/// exhaustion), so anything deeper could be saved but never loaded.
pub const MAX_DEPTH: usize = 100;

/// How many containers deep `v` nests (a scalar is 0, `[1]` is 1).
pub fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}
