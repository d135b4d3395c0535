//! The requests an exporter builds: a JSON tree that borrows from the messages it was made
//! from (strings, part values), so that serializing it — into Python objects through the
//! binding's serializer, or into JSON text — copies each byte once.

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

pub type Key<'a> = Cow<'a, str>;

#[derive(Debug, Clone)]
pub enum J<'a> {
    Null,
    Bool(bool),
    /// A constant of the exporter (a role, a type name): the binding makes one Python object
    /// for each and shares it.
    Lit(&'static str),
    Str(&'a str),
    String(String),
    /// A value of a message, written as it is.
    Val(&'a Value),
    /// A value made by the exporter (a parsed argument string).
    Owned(Value),
    /// An object, keys in the order given.
    Obj(Vec<(Key<'a>, J<'a>)>),
    Arr(Vec<J<'a>>),
}

impl<'a> J<'a> {
    pub fn str(s: &'a str) -> J<'a> {
        J::Str(s)
    }
    pub fn cow(s: Cow<'a, str>) -> J<'a> {
        match s {
            Cow::Borrowed(b) => J::Str(b),
            Cow::Owned(o) => J::String(o),
        }
    }
    pub fn obj() -> Obj<'a> {
        Obj(Vec::new())
    }
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
    pub fn is_null(&self) -> bool {
        matches!(self, J::Null | J::Val(Value::Null) | J::Owned(Value::Null))
    }
}

/// An object under construction.
#[derive(Debug, Clone, Default)]
pub struct Obj<'a>(pub Vec<(Key<'a>, J<'a>)>);

impl<'a> Obj<'a> {
    pub fn put(mut self, k: impl Into<Key<'a>>, v: J<'a>) -> Self {
        self.0.push((k.into(), v));
        self
    }
    pub fn push(&mut self, k: impl Into<Key<'a>>, v: J<'a>) {
        self.0.push((k.into(), v));
    }
    pub fn has(&self, k: &str) -> bool {
        self.0.iter().any(|(key, _)| key == k)
    }
    pub fn done(self) -> J<'a> {
        J::Obj(self.0)
    }
}

impl Serialize for J<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Null => s.serialize_unit(),
            J::Bool(b) => s.serialize_bool(*b),
            J::Lit(t) => s.serialize_str(t),
            J::Str(t) => s.serialize_str(t),
            J::String(t) => s.serialize_str(t),
            J::Val(v) => v.serialize(s),
            J::Owned(v) => v.serialize(s),
            J::Obj(entries) => {
                let mut m = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k.as_ref(), v)?;
                }
                m.end()
            }
            J::Arr(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for x in items {
                    q.serialize_element(x)?;
                }
                q.end()
            }
        }
    }
}
