//! The requests an exporter builds: a JSON tree that borrows from the messages it was made
//! from (strings, part values), so that serializing it — into Python objects through the
//! binding's serializer, or into JSON text — copies each byte once.
//!
//! An object written for one message says so ([`J::Of`]): its strings are that message's, and
//! since a message never changes, the binding can make each of them into a Python string once
//! and share it with every later request (a busy agent exports the same messages every turn).

use crate::message::Message;
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
    /// A value of a message written as its compact JSON text (dict arguments): made when the
    /// tree is written out, so a writer that already has the text need not make it again.
    Json(&'a Value),
    /// An object, keys in the order given.
    Obj(Vec<(Key<'a>, J<'a>)>),
    /// An object written for `message`: the strings in it borrowed from a message are its
    /// (a string borrowed from elsewhere may sit in it too; a writer must check, not assume).
    Of(&'a Message, Vec<(Key<'a>, J<'a>)>),
    Arr(Vec<J<'a>>),
    /// Items of the enclosing array made from one message alone (see [`Piece`]).
    Piece(Piece<'a>),
}

/// Zero or more items of an array that depend on one message and nothing else: what a
/// message exports to when the request needs no repair of it (its ids kept, nothing moved).
/// They are made on demand, so that a writer that kept what it made for this message the
/// last time (the binding's export cache) need not make them again: an agent sends the same
/// messages every turn. `slot` names what they are (the format and the message's place),
/// so that what is kept for one is never given for another.
#[derive(Clone, Copy)]
pub struct Piece<'a> {
    pub of: &'a Message,
    pub slot: &'static str,
    /// A plain function of the message (no closure: a request holds one piece a message).
    make: Make,
}

pub type Make = for<'m> fn(&'m Message) -> Vec<J<'m>>;

impl<'a> Piece<'a> {
    pub fn make(&self) -> Vec<J<'a>> {
        (self.make)(self.of)
    }
}

impl std::fmt::Debug for Piece<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Piece")
            .field("slot", &self.slot)
            .field("items", &self.make())
            .finish()
    }
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
    /// The items `make` writes for `of` alone, in `slot` (see [`Piece`]).
    pub fn piece(of: &'a Message, slot: &'static str, make: Make) -> J<'a> {
        J::Piece(Piece { of, slot, make })
    }
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
    /// The entries, when it is an object.
    pub fn entries(&self) -> Option<&[(Key<'a>, J<'a>)]> {
        match self {
            J::Obj(e) | J::Of(_, e) => Some(e),
            _ => None,
        }
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
    /// The object, written for `m` (see [`J::Of`]).
    pub fn of(self, m: &'a Message) -> J<'a> {
        J::Of(m, self.0)
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
            J::Json(v) => s.serialize_str(&crate::json::compact_json(v)),
            J::Obj(entries) | J::Of(_, entries) => {
                let mut m = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k.as_ref(), v)?;
                }
                m.end()
            }
            J::Arr(items) => {
                let mut q = s.serialize_seq(None)?;
                for x in items {
                    match x {
                        J::Piece(p) => {
                            for y in p.make() {
                                q.serialize_element(&y)?;
                            }
                        }
                        _ => q.serialize_element(x)?,
                    }
                }
                q.end()
            }
            // A piece is only ever an array's item; alone, it is the array of its items.
            J::Piece(p) => J::Arr(p.make()).serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Content, Role};
    use serde_json::json;

    #[test]
    fn json_leaves_are_their_compact_text_and_objects_of_a_message_are_objects() {
        let m = Message::new(Role::User, Content::Text("hi".into()));
        let args = json!({"q": "é", "n": [1, 2]});
        let Content::Text(t) = &m.content else {
            unreachable!()
        };
        let j = J::obj()
            .put("arguments", J::Json(&args))
            .put("content", J::Str(t))
            .of(&m);
        assert_eq!(
            j.to_value(),
            json!({"arguments": "{\"q\":\"é\",\"n\":[1,2]}", "content": "hi"})
        );
        assert_eq!(j.entries().map(<[_]>::len), Some(2));
    }
}
