//! What a message exported to, kept with it: the dicts and lists a request was given for it,
//! given again to a later request of the same kind when nobody else holds them and they are
//! still as they were made.
//!
//! An agent sends the same messages every turn, and what costs in a request of 100k messages
//! is making its Python objects: even copying them (new dicts and lists, the same strings)
//! is most of the time. So the items of a piece (`out::Piece`: what a message exports to when
//! the request needs no repair of it) are made once and handed out again, on two rules:
//! - **Nobody else holds them.** The root's only reference is ours and every dict and list
//!   in it is held by its parent alone — so a request a caller still holds (or any part of it
//!   kept aside) never shares an object with a new one. The usual loop keeps the last request
//!   while it asks for the next, so each piece keeps two copies and the free one is given.
//! - **They are as made.** A caller may have changed a request before letting it go: before
//!   an item is given again it is checked against what was recorded when it was made — every
//!   key and value, in order, all the way down, by identity (the record holds each of them,
//!   so an object at the same address is the same object). A changed copy is dropped.
//!
//! So each request has dicts and lists of its own, exactly as if made anew: the saving shows
//! only as `id()`s reused across requests that were not alive at the same time. Free-threaded
//! builds keep nothing (a reference count there is not a reliable "nobody else").

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::Mutex;

/// Copies kept of one piece: the one the last request got, and one for the next.
const COPIES: usize = 2;

struct Copy {
    items: Vec<Py<PyAny>>,
    /// What the items held when made (`Record`).
    record: Record,
}

struct Kept {
    slot: &'static str,
    copies: Vec<Copy>,
    /// The copy given last (the other is replaced first).
    last: usize,
}

/// The pieces kept for one message, by slot.
#[derive(Default)]
pub struct Pieces(Mutex<Vec<Kept>>);

impl Pieces {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Kept>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The items of a kept copy of `slot` onto `out`, when one is free and as made (a changed
    /// one is dropped); whether one was.
    pub fn lend<'py>(
        &self,
        py: Python<'py>,
        slot: &'static str,
        out: &mut Vec<Bound<'py, PyAny>>,
    ) -> bool {
        if cfg!(Py_GIL_DISABLED) {
            return false;
        }
        let mut kept = self.lock();
        let Some(k) = kept.iter_mut().find(|k| k.slot == slot) else {
            return false;
        };
        let mut i = 0;
        while i < k.copies.len() {
            let c = &k.copies[i];
            // Nothing in the check runs Python code: it reads dicts, lists and addresses.
            // SAFETY: the GIL is held (`py`).
            match unsafe { c.record.check(&c.items) } {
                Check::Held => i += 1,
                Check::Changed => {
                    k.copies.swap_remove(i);
                    k.last = 0;
                }
                Check::Free => {
                    k.last = i;
                    out.extend(c.items.iter().map(|o| o.bind(py).clone()));
                    return true;
                }
            }
        }
        false
    }

    /// Keep `items`, just made for `slot` (and given to a request now).
    pub fn keep(&self, slot: &'static str, items: &[Bound<'_, PyAny>]) {
        if cfg!(Py_GIL_DISABLED) {
            return;
        }
        let Some(record) = Record::of(items) else {
            // Something in them is not what exporters make: not kept.
            return;
        };
        let copy = Copy {
            items: items.iter().map(|o| o.clone().unbind()).collect(),
            record,
        };
        let mut kept = self.lock();
        let k = match kept.iter().position(|k| k.slot == slot) {
            Some(at) => &mut kept[at],
            None => {
                kept.push(Kept {
                    slot,
                    copies: Vec::with_capacity(COPIES),
                    last: 0,
                });
                kept.last_mut().expect("just pushed")
            }
        };
        if k.copies.len() < COPIES {
            k.copies.push(copy);
            k.last = k.copies.len() - 1;
        } else {
            // Both are held by requests still alive: the one given before the last goes.
            let other = 1 - k.last.min(1);
            k.copies[other] = copy;
            k.last = other;
        }
    }
}

/// What a piece's items held when made, in walking order: for each dict or list its size
/// (tagged, odd), for each other object its address (even: objects are aligned). It holds a
/// reference to each of those objects, so none of them can be freed and another object put
/// at its address: an object found at a recorded address is the recorded object. Dicts and
/// lists are compared by what they hold, never by address (a new list with the same items
/// sends the same request).
struct Record {
    walk: Vec<usize>,
    _held: Vec<Py<PyAny>>,
}

const DICT: usize = 1;
const LIST: usize = 3;

/// A request deeper than this is not an exporter's (they copy values of messages, whose depth
/// the core bounds far lower).
const DEEPEST: usize = 512;

impl Record {
    /// The record of `items`; `None` for anything but exact dicts, lists, str, int, float,
    /// bool and None (what exporters make: reading them runs no Python code).
    fn of(items: &[Bound<'_, PyAny>]) -> Option<Record> {
        let mut r = Record {
            walk: Vec::new(),
            _held: Vec::new(),
        };
        for o in items {
            // SAFETY: the GIL is held (`o` is bound); `note` only reads what it is given.
            unsafe { r.note(o.py(), o.as_ptr(), 0)? };
        }
        Some(r)
    }

    unsafe fn note(&mut self, py: Python<'_>, o: *mut ffi::PyObject, depth: usize) -> Option<()> {
        if depth > DEEPEST {
            return None;
        }
        match container(o) {
            Some(DICT) => {
                self.walk.push(ffi::PyDict_Size(o) as usize * 4 + DICT);
                let mut pos: ffi::Py_ssize_t = 0;
                let mut k: *mut ffi::PyObject = std::ptr::null_mut();
                let mut v: *mut ffi::PyObject = std::ptr::null_mut();
                while ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) != 0 {
                    self.note(py, k, depth + 1)?;
                    self.note(py, v, depth + 1)?;
                }
            }
            Some(_) => {
                let n = ffi::PyList_Size(o);
                self.walk.push(n as usize * 4 + LIST);
                for i in 0..n {
                    self.note(py, ffi::PyList_GetItem(o, i), depth + 1)?;
                }
            }
            None => {
                if !immutable(o) {
                    return None;
                }
                self.walk.push(o as usize);
                self._held.push(Bound::from_borrowed_ptr(py, o).unbind());
            }
        }
        Some(())
    }

    /// Whether `items` are free to give (ours is the only reference to each, each dict and
    /// list in them is held by its parent alone) and hold what they held when recorded.
    ///
    /// # Safety
    /// The GIL must be held.
    unsafe fn check(&self, items: &[Py<PyAny>]) -> Check {
        let mut at = 0;
        for o in items {
            match self.same(o.as_ptr(), &mut at) {
                Check::Free => {}
                other => return other,
            }
        }
        if at == self.walk.len() {
            Check::Free
        } else {
            Check::Changed
        }
    }

    unsafe fn same(&self, o: *mut ffi::PyObject, at: &mut usize) -> Check {
        let Some(&want) = self.walk.get(*at) else {
            return Check::Changed;
        };
        *at += 1;
        // A recorded object is checked by address alone, without reading it (most of a
        // request is strings, each in memory of its own).
        if want & 1 == 0 {
            return if want == o as usize {
                Check::Free
            } else {
                Check::Changed
            };
        }
        let kind = container(o);
        if kind.is_some() && ffi::Py_REFCNT(o) != 1 {
            return Check::Held;
        }
        match kind {
            Some(DICT) if want == ffi::PyDict_Size(o) as usize * 4 + DICT => {
                let mut pos: ffi::Py_ssize_t = 0;
                let mut k: *mut ffi::PyObject = std::ptr::null_mut();
                let mut v: *mut ffi::PyObject = std::ptr::null_mut();
                while ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) != 0 {
                    for x in [k, v] {
                        match self.same(x, at) {
                            Check::Free => {}
                            other => return other,
                        }
                    }
                }
                Check::Free
            }
            Some(LIST) if want == ffi::PyList_Size(o) as usize * 4 + LIST => {
                for i in 0..ffi::PyList_Size(o) {
                    match self.same(ffi::PyList_GetItem(o, i), at) {
                        Check::Free => {}
                        other => return other,
                    }
                }
                Check::Free
            }
            _ => Check::Changed,
        }
    }
}

/// What a kept copy is, when a request asks for it.
enum Check {
    /// Nobody else holds it and it is as made: it may be given.
    Free,
    /// Something else holds it or a part of it (a request still alive): not now.
    Held,
    /// It was changed since it was made: dropped.
    Changed,
}

/// `Some(DICT)` or `Some(LIST)` for an exact dict or list.
unsafe fn container(o: *mut ffi::PyObject) -> Option<usize> {
    let ty = ffi::Py_TYPE(o);
    if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
        Some(DICT)
    } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
        Some(LIST)
    } else {
        None
    }
}

/// An exact str, int, float or bool, or None.
unsafe fn immutable(o: *mut ffi::PyObject) -> bool {
    let ty = ffi::Py_TYPE(o);
    o == ffi::Py_None()
        || [
            std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
            std::ptr::addr_of_mut!(ffi::PyLong_Type),
            std::ptr::addr_of_mut!(ffi::PyFloat_Type),
            std::ptr::addr_of_mut!(ffi::PyBool_Type),
        ]
        .contains(&ty)
}
