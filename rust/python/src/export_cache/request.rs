//! Python objects from an exporter's tree (the request of SPEC §10).
//!
//! What costs in a request of 100k messages is making objects: so keys and the exporter's
//! constants (roles, type names) are made once per request and shared, and the strings of a
//! message are the ones kept with it (`leaves`), made on its first request only. What a
//! message exports to when the request needs no repair of it (a piece) is kept with it too,
//! and given again when nobody else holds it and it is as made (`pieces`); the rest of a
//! request is new every time.

use crate::leaves::{Key, Leaves};
use crate::message::Handle;
use ctxfold_core::formats::out::Piece;
use ctxfold_core::formats::J;
use ctxfold_core::Message;
use pyo3::ffi;
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
        }
    }

    fn name(&mut self, s: &'static str) -> &Bound<'py, PyString> {
        let py = self.py;
        self.names
            .entry(s.as_ptr() as usize)
            .or_insert_with(|| PyString::intern(py, s))
    }

    fn key(&mut self, k: &str) -> &Bound<'py, PyString> {
        let py = self.py;
        self.keys
            .entry((k.as_ptr() as usize, k.len()))
            .or_insert_with(|| PyString::intern(py, k))
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
                .leaf(Key::json(v), || ctxfold_core::json::compact_json(v))
                .into_any(),
            J::Obj(entries) => self.dict(entries)?.into_any(),
            J::Of(m, entries) => {
                let outer = self.scope;
                self.scope = match self.handle_of(m) {
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
        let Some(h) = self.handle_of(p.of) else {
            for j in p.make() {
                out.push(self.object(&j)?);
            }
            return Ok(());
        };
        let kept = h.pieces(py)?;
        if kept.lend(py, p.slot, out) {
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
        kept.keep(p.slot, &out[start..]);
        Ok(())
    }

    fn dict(
        &mut self,
        entries: &[(ctxfold_core::formats::out::Key<'r>, J<'r>)],
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(self.py);
        for (k, v) in entries {
            let key = self.key(k).as_ptr();
            // Constants and a message's strings already made are lent to the dict, which
            // takes its own reference.
            if let J::Lit(s) = v {
                let name = self.name(s).as_ptr();
                self.set(&d, key, name)?;
                continue;
            }
            if let Some(s) = text_of(v) {
                if self.lend(&d, key, Key::text(s))? {
                    continue;
                }
            }
            let value = self.object(v)?;
            self.set(&d, key, value.as_ptr())?;
        }
        Ok(d)
    }

    /// `d[key] = ` the scope message's string at `leaf`, if it has one made; whether it did.
    fn lend(&self, d: &Bound<'py, PyDict>, key: *mut ffi::PyObject, leaf: Key) -> PyResult<bool> {
        match self.scope {
            Some((_, leaves)) => leaves
                .lend(leaf, |value| self.set(d, key, value))
                .transpose()
                .map(|done| done.is_some()),
            None => Ok(false),
        }
    }

    /// `d[key] = value` for objects this build holds (the key, a constant) without taking
    /// references of its own to them: two calls fewer per entry, on every entry of a request.
    fn set(
        &self,
        d: &Bound<'py, PyDict>,
        key: *mut ffi::PyObject,
        value: *mut ffi::PyObject,
    ) -> PyResult<()> {
        // SAFETY: the GIL is held (`self.py`); `d` is a dict, `key` a str the build keeps
        // alive and `value` a live object; `PyDict_SetItem` takes its own references.
        if unsafe { ffi::PyDict_SetItem(d.as_ptr(), key, value) } < 0 {
            return Err(PyErr::fetch(self.py));
        }
        Ok(())
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

/// The string a leaf of the tree is, when it is one borrowed from a message.
fn text_of<'j>(j: &'j J<'_>) -> Option<&'j str> {
    match j {
        J::Str(s) => Some(s),
        J::Val(Value::String(s)) => Some(s),
        _ => None,
    }
}
