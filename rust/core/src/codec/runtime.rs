//! The runtime fields of a context: the agent loop's state that lives beside the log (the
//! system prompt, deps, usage, the iteration count, …). One table says which there are, which
//! a document carries at its top level and as what JSON type, what a document without one
//! reads as, and how a fork takes the parent's value. The binding shows the table to Python,
//! which keeps only the conversions that are Python's (times as `datetime`, usage as `Usage`,
//! what a value must be to be saved).

use crate::error::{Error, Result};
use crate::json::{depth, MAX_DEPTH};
use crate::time;
use serde_json::{Map, Value};

/// The JSON type a document holds a runtime field as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carried {
    Text,
    Object,
    List,
    Bool,
    Int,
    /// An ISO 8601 time, as a string.
    Time,
}

/// What a document without the field (or with `null` for it) reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    Null,
    Int(i64),
    EmptyObject,
    EmptyList,
    /// `true` in a document without a version (the oldest layout never recorded it, and a
    /// loop read from there is owed a turn), `false` in a versioned one.
    TrueWhenVersionless,
}

/// How a fork (a window, a copy) takes the parent's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkCopy {
    /// The same value.
    Shared,
    /// A shallow copy of its own (a list or a dict the child may change alone).
    Own,
}

/// One runtime field.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeField {
    pub name: &'static str,
    /// As what a document carries it; `None` for fields never saved (callables, flags).
    pub carried: Option<(Carried, Absent)>,
    pub fork: ForkCopy,
}

const fn carried(name: &'static str, c: Carried, absent: Absent, fork: ForkCopy) -> RuntimeField {
    RuntimeField {
        name,
        carried: Some((c, absent)),
        fork,
    }
}

const fn runtime_only(name: &'static str, fork: ForkCopy) -> RuntimeField {
    RuntimeField {
        name,
        carried: None,
        fork,
    }
}

use Absent as A;
use Carried as C;
use ForkCopy::{Own, Shared};

/// Every runtime field, in the order a document writes the carried ones.
pub const RUNTIME_FIELDS: [RuntimeField; 14] = [
    carried("system_prompt", C::Text, A::Null, Shared),
    carried("deps", C::Object, A::EmptyObject, Own),
    carried("usage", C::Object, A::EmptyObject, Shared),
    carried("tool_calls", C::List, A::EmptyList, Own),
    carried("needs_response", C::Bool, A::TrueWhenVersionless, Shared),
    carried("iteration", C::Int, A::Int(0), Shared),
    carried("max_iterations", C::Int, A::Int(10), Shared),
    carried("started_at", C::Time, A::Null, Shared),
    carried("agent_name", C::Text, A::Null, Shared),
    runtime_only("stream", Shared),
    runtime_only("callbacks", Own),
    runtime_only("notify", Shared),
    runtime_only("cancellation_check", Shared),
    runtime_only("approval_handler", Shared),
];

/// The carried fields: (name, JSON type, what absence reads as), in document order.
pub fn carried_fields() -> impl Iterator<Item = (&'static str, Carried, Absent)> {
    RUNTIME_FIELDS
        .iter()
        .filter_map(|f| f.carried.map(|(c, a)| (f.name, c, a)))
}

impl Absent {
    fn value(self, versioned: bool) -> Value {
        match self {
            Absent::Null => Value::Null,
            Absent::Int(n) => Value::from(n),
            Absent::EmptyObject => Value::Object(Map::new()),
            Absent::EmptyList => Value::Array(Vec::new()),
            Absent::TrueWhenVersionless => Value::Bool(!versioned),
        }
    }
}

/// A JSON value's type as Python names it once decoded (`json.loads`): what a caller of the
/// Python API sees in an error.
fn python_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int",
        Value::Number(_) => "float",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn fits(c: Carried, v: &Value) -> bool {
    match (c, v) {
        (C::Text | C::Time, Value::String(_)) => true,
        (C::Object, Value::Object(_)) => true,
        (C::List, Value::Array(_)) => true,
        (C::Bool, Value::Bool(_)) => true,
        (C::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// Every carried field of a document's top level, checked so that whatever loads can be saved
/// again, with what absence reads as filled in (`versioned`: the document has a version).
/// A value of another JSON type is refused; values nest at most `MAX_DEPTH` levels (they go
/// back through Python, which bounds the nesting it takes); a time must parse.
pub(crate) fn runtime_fields(
    fields: &Map<String, Value>,
    versioned: bool,
) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for (name, c, absent) in carried_fields() {
        let v = match fields.get(name) {
            None | Some(Value::Null) => absent.value(versioned),
            Some(v) if fits(c, v) => v.clone(),
            Some(Value::Bool(_)) => {
                let want = match c {
                    C::Text | C::Time => "str",
                    C::Object => "dict",
                    C::List => "list",
                    C::Int => "int",
                    C::Bool => "bool",
                };
                return Err(Error::undecodable(format!("expected {want}, got bool")).at_key(name));
            }
            Some(v) => {
                return Err(
                    Error::undecodable(format!("wrong type {}", python_type(v))).at_key(name)
                )
            }
        };
        if depth(&v) + 1 > MAX_DEPTH {
            return Err(
                Error::undecodable(format!("nested deeper than {MAX_DEPTH} levels")).at_key(name),
            );
        }
        if let (C::Time, Value::String(t)) = (c, &v) {
            time::parse_iso(t).map_err(|e| e.in_input().at_key(name))?;
        }
        out.insert(name.to_string(), v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value, versioned: bool) -> Result<Map<String, Value>> {
        runtime_fields(v.as_object().unwrap(), versioned)
    }

    #[test]
    fn every_carried_field_is_filled_in() {
        let rt = read(json!({"iteration": 3, "deps": {"a": 1}, "other": 1}), true).unwrap();
        let names: Vec<&str> = rt.keys().map(String::as_str).collect();
        assert_eq!(names, carried_fields().map(|f| f.0).collect::<Vec<_>>());
        assert_eq!(rt["iteration"], json!(3));
        assert_eq!(rt["max_iterations"], json!(10));
        assert_eq!(rt["deps"], json!({"a": 1}));
        assert_eq!(rt["usage"], json!({}));
        assert_eq!(rt["tool_calls"], json!([]));
        assert_eq!(rt["started_at"], Value::Null);
        assert_eq!(rt["needs_response"], json!(false));
        let old = read(json!({"needs_response": null}), false).unwrap();
        assert_eq!(old["needs_response"], json!(true));
    }

    #[test]
    fn a_wrong_type_is_refused_by_name() {
        let err = |v: Value| read(v, true).unwrap_err().to_string();
        assert!(err(json!({"iteration": "zero"})).contains("iteration: wrong type str"));
        assert!(err(json!({"iteration": 1.5})).contains("iteration: wrong type float"));
        assert!(err(json!({"iteration": true})).contains("iteration: expected int, got bool"));
        assert!(err(json!({"deps": []})).contains("deps: wrong type list"));
        assert!(err(json!({"needs_response": 1})).contains("needs_response: wrong type int"));
        assert!(err(json!({"started_at": "yesterday"})).contains("started_at"));
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(err(json!({ "tool_calls": deep })).contains("tool_calls: nested deeper"));
    }

    #[test]
    fn the_fields_are_named_once() {
        let mut names: Vec<&str> = RUNTIME_FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RUNTIME_FIELDS.len());
    }
}
