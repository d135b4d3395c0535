//! A message's strings as Python strings, made once and kept with the message's Python object.
//!
//! An agent exports the same transcript every turn, and a request is mostly strings the
//! messages already hold (texts, call ids, names, arguments). A message never changes and a
//! Python `str` cannot be changed either, so each of those strings is made into a Python
//! string on the first request that sends it and shared by every later one; only the dicts
//! and lists of a request are new each time (a caller may change them).
//!
//! A string is known by where it lives in the message: the address and length of its bytes
//! (or, for a value sent as its compact JSON text, the address of the value). The address is
//! only trusted after checking that it is one of this message's own strings — the message
//! holds them for as long as it lives and never changes them, so the same address means the
//! same bytes. A string from anywhere else (another message, a constant) is made anew.

use ctxfold_core::{Content, Message};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{Map, Value};
use std::sync::Mutex;

/// Where a string lives in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// The bytes of a string: address and length.
    Text(usize, usize),
    /// The compact JSON text of a value, by the value's address.
    Json(usize),
}

impl Key {
    pub fn text(s: &str) -> Key {
        Key::Text(s.as_ptr() as usize, s.len())
    }
    pub fn json(v: &Value) -> Key {
        Key::Json(v as *const Value as usize)
    }
}

/// The Python strings made so far for one message, sorted by key.
#[derive(Default)]
pub struct Leaves(Mutex<Vec<(Key, Py<PyString>)>>);

impl Leaves {
    /// The Python string at `key` of `m`, made by `make` the first time. `None` when `key`
    /// is not one of `m`'s own strings (the caller makes a string of its own).
    pub fn get<'py>(
        &self,
        py: Python<'py>,
        m: &Message,
        key: Key,
        make: impl FnOnce() -> Bound<'py, PyString>,
    ) -> Option<Bound<'py, PyString>> {
        if let Some(s) = self.find(py, key) {
            return Some(s);
        }
        if !owns(m, key) {
            return None;
        }
        let s = make();
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(at) = v.binary_search_by(|(k, _)| k.cmp(&key)) {
            v.insert(at, (key, s.clone().unbind()));
        }
        Some(s)
    }

    /// `f` of the string at `key`, when one is kept, lent (no reference taken: `f` must
    /// take its own if it keeps it, as a dict it is set in does).
    pub fn lend<'py, R>(
        &self,
        py: Python<'py>,
        key: Key,
        f: impl FnOnce(Borrowed<'_, 'py, PyAny>) -> R,
    ) -> Option<R> {
        let v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = v.binary_search_by(|(k, _)| k.cmp(&key)).ok()?;
        Some(f(v[at].1.bind(py).as_any().as_borrowed()))
    }

    /// How many strings are kept (what `export_cache_usage` counts).
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Drop every kept string (`export_cache_clear`).
    pub fn clear(&self) {
        let taken = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        // Released after the lock: dropping a str never runs Python code, but nothing need
        // wait on it.
        drop(taken);
    }

    fn find<'py>(&self, py: Python<'py>, key: Key) -> Option<Bound<'py, PyString>> {
        let v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = v.binary_search_by(|(k, _)| k.cmp(&key)).ok()?;
        Some(v[at].1.bind(py).clone())
    }
}

/// Whether `key` is one of `m`'s own strings (or values).
fn owns(m: &Message, key: Key) -> bool {
    let own_str = |s: &str| Key::text(s) == key;
    if let Content::Text(t) = &m.content {
        if own_str(t) {
            return true;
        }
    }
    if [&m.name, &m.tool_call_id]
        .into_iter()
        .flatten()
        .any(|s| own_str(s))
    {
        return true;
    }
    let parts: &[Map<String, Value>] = match &m.content {
        Content::Parts(p) => p,
        _ => &[],
    };
    parts
        .iter()
        .chain(&m.tool_calls)
        .chain(std::iter::once(&m.metadata))
        .any(|o| o.values().any(|v| in_value(v, key)))
}

fn in_value(v: &Value, key: Key) -> bool {
    if Key::json(v) == key {
        return true;
    }
    match v {
        Value::String(s) => Key::text(s) == key,
        Value::Array(items) => items.iter().any(|x| in_value(x, key)),
        Value::Object(o) => o.values().any(|x| in_value(x, key)),
        _ => false,
    }
}
