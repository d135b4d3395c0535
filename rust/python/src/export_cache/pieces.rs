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

struct Kept {
    slot: &'static str,
    copies: [Option<Record>; COPIES],
    /// The copy given last (the other is replaced first).
    last: usize,
}

/// The pieces kept for one message, by slot: the first in place (a message is mostly sent
/// in one format, and its place is read on every request without a pointer to follow).
#[derive(Default)]
pub struct Pieces(Mutex<Slots>);

#[derive(Default)]
struct Slots {
    first: Option<Kept>,
    more: Vec<Kept>,
}

impl Slots {
    fn find(&mut self, slot: &'static str) -> Option<&mut Kept> {
        match &mut self.first {
            Some(k) if same_slot(k.slot, slot) => Some(k),
            _ => self.more.iter_mut().find(|k| same_slot(k.slot, slot)),
        }
    }

    fn add(&mut self, k: Kept) -> &mut Kept {
        if self.first.is_none() {
            return self.first.insert(k);
        }
        self.more.push(k);
        self.more.last_mut().expect("just pushed")
    }
}

/// Slots are the exporters' constants: the same one is mostly at the same address, and an
/// address compares without reading the text.
fn same_slot(a: &'static str, b: &'static str) -> bool {
    std::ptr::eq(a, b) || a == b
}

impl Pieces {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
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
        let Some(k) = kept.find(slot) else {
            return false;
        };
        // The one not given last first: the last is most likely still held.
        for i in [1 - k.last, k.last] {
            let Some(c) = &k.copies[i] else { continue };
            // Nothing in the check runs Python code: it reads dicts, lists and addresses.
            // SAFETY: the GIL is held (`py`).
            match unsafe { c.check() } {
                Check::Held => {}
                Check::Changed => k.copies[i] = None,
                Check::Free => {
                    k.last = i;
                    out.extend(c.items().map(|o| o.bind(py).clone()));
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
        let mut kept = self.lock();
        let k = match kept.find(slot) {
            Some(k) => k,
            None => kept.add(Kept {
                slot,
                copies: [None, None],
                last: 1,
            }),
        };
        // An empty place, else the one given before the last (both are held by requests
        // still alive, or the last would have been given).
        let at = if k.copies[1 - k.last].is_none() || k.copies[k.last].is_some() {
            1 - k.last
        } else {
            k.last
        };
        k.copies[at] = Some(record);
        k.last = at;
    }
}

/// What a piece's items held when made, in walking order: for each dict or list its size
/// (tagged, odd), for each other object its address (even: objects are aligned). It holds a
/// reference to each of those objects, so none of them can be freed and another object put
/// at its address: an object found at a recorded address is the recorded object. Dicts and
/// lists are compared by what they hold, never by address (a new list with the same items
/// sends the same request).
struct Record {
    /// The first item, in place: most pieces are one item, and a request reads only this and
    /// `walk` (never `held`).
    first: Option<Py<PyAny>>,
    walk: Box<[usize]>,
    /// The other items (the first `items - 1` of them), then every other object recorded.
    held: Box<[Py<PyAny>]>,
    items: usize,
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
        let mut r = Noting {
            walk: Vec::new(),
            held: items.iter().skip(1).map(|o| o.clone().unbind()).collect(),
        };
        for o in items {
            // SAFETY: the GIL is held (`o` is bound); `note` only reads what it is given.
            unsafe { r.note(o.py(), o.as_ptr(), 0)? };
        }
        Some(Record {
            first: items.first().map(|o| o.clone().unbind()),
            walk: r.walk.into_boxed_slice(),
            held: r.held.into_boxed_slice(),
            items: items.len(),
        })
    }

    fn items(&self) -> impl Iterator<Item = &Py<PyAny>> {
        let rest = &self.held[..self.items.saturating_sub(1)];
        self.first.iter().chain(rest)
    }

    /// Whether `items` are free to give (ours is the only reference to each, each dict and
    /// list in them is held by its parent alone) and hold what they held when recorded.
    ///
    /// # Safety
    /// The GIL must be held.
    unsafe fn check(&self) -> Check {
        let mut at = 0;
        for o in self.items() {
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

/// A record being made.
struct Noting {
    walk: Vec<usize>,
    held: Vec<Py<PyAny>>,
}

impl Noting {
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
                self.held.push(Bound::from_borrowed_ptr(py, o).unbind());
            }
        }
        Some(())
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
