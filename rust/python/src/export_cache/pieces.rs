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

use super::ffi::{self, Node};
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
            match c.check(py) {
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

    /// How many copies are kept (what `export_cache_usage` counts).
    pub fn len(&self) -> usize {
        let kept = self.lock();
        kept.first
            .iter()
            .chain(&kept.more)
            .map(|k| k.copies.iter().flatten().count())
            .sum()
    }

    /// Drop every kept copy (`export_cache_clear`).
    pub fn clear(&self) {
        *self.lock() = Slots::default();
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
            r.note(o.as_borrowed(), 0)?;
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
    fn check(&self, py: Python<'_>) -> Check {
        let mut at = 0;
        for o in self.items() {
            match self.same(o.bind_borrowed(py), &mut at) {
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

    fn same(&self, o: Borrowed<'_, '_, PyAny>, at: &mut usize) -> Check {
        let Some(&want) = self.walk.get(*at) else {
            return Check::Changed;
        };
        *at += 1;
        // A recorded object is checked by address alone, without reading it (most of a
        // request is strings, each in memory of its own).
        if want & 1 == 0 {
            return if want == ffi::address(o) {
                Check::Free
            } else {
                Check::Changed
            };
        }
        let node = ffi::node(o);
        if matches!(node, Node::Dict(_) | Node::List(_)) && ffi::refcnt(o) != 1 {
            return Check::Held;
        }
        // Written out, not through iterator adaptors: this runs for every dict and list of a
        // request.
        match node {
            Node::Dict(d) if want == ffi::dict_len(d) * 4 + DICT => {
                for (k, v) in ffi::dict_entries(d) {
                    for x in [k, v] {
                        match self.same(x, at) {
                            Check::Free => {}
                            other => return other,
                        }
                    }
                }
                Check::Free
            }
            Node::List(l) if want == ffi::list_len(l) * 4 + LIST => {
                for x in ffi::list_items(l) {
                    match self.same(x, at) {
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
    fn note(&mut self, o: Borrowed<'_, '_, PyAny>, depth: usize) -> Option<()> {
        if depth > DEEPEST {
            return None;
        }
        match ffi::node(o) {
            Node::Dict(d) => {
                self.walk.push(ffi::dict_len(d) * 4 + DICT);
                for (k, v) in ffi::dict_entries(d) {
                    self.note(k, depth + 1)?;
                    self.note(v, depth + 1)?;
                }
            }
            Node::List(l) => {
                self.walk.push(ffi::list_len(l) * 4 + LIST);
                for x in ffi::list_items(l) {
                    self.note(x, depth + 1)?;
                }
            }
            Node::Atom => {
                self.walk.push(ffi::address(o));
                self.held.push(o.to_owned().unbind());
            }
            Node::Other => return None,
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
