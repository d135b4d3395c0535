//! Python objects from an exporter's tree (a provider request, docs/formats.md).
//!
//! What costs in a request of 100k messages is making objects: so keys and the exporter's
//! constants (roles, type names) are made once per request and shared, and the strings of a
//! message are the ones kept with it (`leaves`), made on its first request only. What a
//! message exports to when the request needs no repair of it (a piece) is kept with it too,
//! and given again when nobody else holds it and it is as made (`pieces`); the rest of a
//! request is new every time.

use super::ffi;
use super::leaves::{Key, Leaves};
use super::Mode;
use crate::message::Handle;
use ctxfold_core::Message;
use ctxfold_core::Piece;
use ctxfold_core::J;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use rustc_hash::FxHashMap;
use serde_json::Value;

pub struct Build<'py, 'r> {
    py: Python<'py>,
    /// The exporter's constants, by address (each is one `&'static str`).
    names: FxHashMap<usize, Bound<'py, PyString>>,
    keys: FxHashMap<(usize, usize), Bound<'py, PyString>>,
    /// The messages exported, and where the last object written for one was found.
    handles: &'r [Handle],
    messages: &'r [&'r Message],
    cursor: usize,
    /// Every message by address; made only when one is not where the cursor looks.
    by_address: Option<FxHashMap<usize, usize>>,
    /// The message whose object is being written, and its strings.
    scope: Option<(&'r Message, &'r Leaves)>,
    /// What the cache may keep and give, read once per request.
    mode: Mode,
}

impl<'py, 'r> Build<'py, 'r> {
    pub fn new(py: Python<'py>, handles: &'r [Handle], messages: &'r [&'r Message]) -> Self {
        Build {
            py,
            names: FxHashMap::default(),
            keys: FxHashMap::default(),
            handles,
            messages,
            cursor: 0,
            by_address: None,
            scope: None,
            mode: Mode::get(),
        }
    }

    fn name(&mut self, s: &'static str) -> &Bound<'py, PyString> {
        interned(&mut self.names, self.py, s.as_ptr() as usize, s)
    }

    /// The handle of `m`: exporters write messages mostly in order, so it is looked for at
    /// the cursor and just after it, then by address.
    fn handle_of(&mut self, m: &Message) -> Option<&'r Handle> {
        let same = |i: usize| self.messages.get(i).is_some_and(|x| std::ptr::eq(*x, m));
        let near = (self.cursor..self.cursor + 4).find(|&i| same(i));
        let at = match near {
            Some(i) => i,
            None => {
                let messages = self.messages;
                let index = self.by_address.get_or_insert_with(|| {
                    messages
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (*x as *const Message as usize, i))
                        .collect()
                });
                *index.get(&(m as *const Message as usize))?
            }
        };
        self.cursor = at;
        self.handles.get(at)
    }

    /// A string of the tree: the scope message's own Python string when it is one of its.
    fn leaf(&self, key: Key, text: impl Fn() -> String) -> Bound<'py, PyString> {
        let py = self.py;
        let new = || PyString::new(py, &text());
        match self.scope {
            Some((m, leaves)) => leaves.get(py, m, key, new).unwrap_or_else(new),
            None => new(),
        }
    }

    fn str_leaf(&self, s: &str) -> Bound<'py, PyString> {
        self.leaf(Key::text(s), || s.to_string())
    }

    pub fn object(&mut self, j: &J<'r>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match j {
            J::Null => py.None().into_bound(py),
            J::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            J::Lit(s) => self.name(s).clone().into_any(),
            J::Str(s) => self.str_leaf(s).into_any(),
            J::String(s) => PyString::new(py, s).into_any(),
            J::Val(v) => self.value(v)?,
            J::Owned(v) => crate::pyser::to_object(py, v)?,
            J::Json(v) => self
                .leaf(Key::json(v), || ctxfold_core::compact_json(v))
                .into_any(),
            J::Obj(entries) => self.dict(entries)?.into_any(),
            J::Of(m, entries) => {
                let outer = self.scope;
                self.scope = match self.strings_of(m) {
                    Some(h) => Some((*m, h.leaves(py)?)),
                    None => None,
                };
                let d = self.dict(entries);
                self.scope = outer;
                d?.into_any()
            }
            J::Arr(items) => {
                let mut objs = Vec::with_capacity(items.len());
                for x in items {
                    match x {
                        J::Piece(p) => self.piece(p, &mut objs)?,
                        _ => objs.push(self.object(x)?),
                    }
                }
                PyList::new(py, objs)?.into_any()
            }
            J::Piece(p) => {
                let mut objs = Vec::new();
                self.piece(p, &mut objs)?;
                PyList::new(py, objs)?.into_any()
            }
        })
    }

    /// The items of a piece onto `out`: those kept with its message when still as made, else
    /// made now (the message's strings its own) and kept.
    fn piece(&mut self, p: &Piece<'r>, out: &mut Vec<Bound<'py, PyAny>>) -> PyResult<()> {
        let py = self.py;
        let Some(h) = self.strings_of(p.of) else {
            for j in p.make() {
                out.push(self.object(&j)?);
            }
            return Ok(());
        };
        let kept = if self.mode.keeps_pieces() {
            Some(h.pieces(py)?)
        } else {
            None
        };
        if kept.is_some_and(|k| k.lend(py, p.slot, out)) {
            return Ok(());
        }
        let outer = self.scope;
        self.scope = Some((p.of, h.leaves(py)?));
        let start = out.len();
        let made = p
            .make()
            .iter()
            .try_for_each(|j| self.object(j).map(|o| out.push(o)));
        self.scope = outer;
        made?;
        if let Some(k) = kept {
            k.keep(p.slot, &out[start..]);
        }
        Ok(())
    }

    /// The handle of `m` when the cache may keep its strings (else its strings are made anew).
    fn strings_of(&mut self, m: &Message) -> Option<&'r Handle> {
        if !self.mode.keeps_strings() {
            return None;
        }
        self.handle_of(m)
    }

    fn dict(
        &mut self,
        entries: &[(ctxfold_core::PieceKey<'r>, J<'r>)],
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let d = PyDict::new(py);
        for (k, v) in entries {
            // The keys and constants are held by the build, and a message's strings already
            // made by its leaves: all are lent to the dict, which takes its own reference
            // (`ffi::dict_set`: two calls fewer per entry, on every entry of a request).
            let id = (k.as_ptr() as usize, k.len());
            if let J::Lit(s) = v {
                let name = interned(&mut self.names, py, s.as_ptr() as usize, s);
                let key = interned(&mut self.keys, py, id, k);
                ffi::dict_set(&d, key.as_borrowed(), name.as_any().as_borrowed())?;
                continue;
            }
            if let (Some(s), Some((_, leaves))) = (text_of(v), self.scope) {
                let key = interned(&mut self.keys, py, id, k);
                let lent = leaves.lend(py, Key::text(s), |value| {
                    ffi::dict_set(&d, key.as_borrowed(), value)
                });
                if let Some(done) = lent {
                    done?;
                    continue;
                }
            }
            let value = self.object(v)?;
            let key = interned(&mut self.keys, py, id, k);
            ffi::dict_set(&d, key.as_borrowed(), value.as_borrowed())?;
        }
        Ok(d)
    }

    /// A value of a message, its strings the scope's own.
    fn value(&mut self, v: &Value) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match v {
            Value::String(s) => self.str_leaf(s).into_any(),
            Value::Object(o) => {
                let d = PyDict::new(py);
                for (k, x) in o {
                    d.set_item(k, self.value(x)?)?;
                }
                d.into_any()
            }
            Value::Array(items) => {
                let objs = items
                    .iter()
                    .map(|x| self.value(x))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, objs)?.into_any()
            }
            other => crate::pyser::to_object(py, other)?,
        })
    }
}

/// The Python string for `s`, made (interned) the first time this build meets `id`.
fn interned<'m, 'py, K: std::hash::Hash + Eq>(
    map: &'m mut FxHashMap<K, Bound<'py, PyString>>,
    py: Python<'py>,
    id: K,
    s: &str,
) -> &'m Bound<'py, PyString> {
    map.entry(id).or_insert_with(|| PyString::intern(py, s))
}

/// The string a leaf of the tree is, when it is one borrowed from a message.
fn text_of<'j>(j: &'j J<'_>) -> Option<&'j str> {
    match j {
        J::Str(s) => Some(s),
        J::Val(Value::String(s)) => Some(s),
        _ => None,
    }
}
