//! The export cache: what the exporters keep with each message so that the next request of
//! the same transcript costs less than the first.
//!
//! An agent exports the same messages every turn, and what costs in a request of 100k
//! messages is making its Python objects. So two things are kept with a message's Python
//! object, on its first export, and used again by every later request:
//! - **its strings** (`leaves`): each text, id, name and arguments string the message holds,
//!   as the Python `str` a request carries (a `str` cannot be changed, so every request may
//!   share it);
//! - **its pieces** (`pieces`): the dicts and lists a message exported to when the request
//!   needed no repair of it, given again only when nobody else holds them and they are still
//!   exactly as made (so no two live requests ever share a dict or list, and a request a
//!   caller changed is never given again).
//!
//! What it costs: memory, for as long as the message lives — its strings as Python `str`s, and
//! up to two copies of each of its pieces per format it was exported to, with a record of
//! each copy (on the demo transcript at 10k messages, after two requests of one format, about
//! one and a half times that request's own Python objects) — and, on the first export of a
//! message, the time to record them. It is dropped with the message.
//!
//! [`Mode`] switches it (all, strings only, off); `export_cache_usage` counts what it holds
//! and `export_cache_clear` drops it all (`ctxfold.export_cache_mode`, `export_cache_usage`,
//! `export_cache_clear` in Python). The raw CPython calls it needs are in [`ffi`], typed.
//!
//! Where the work runs: the core plans a request and builds its tree detached from the
//! interpreter (`py.detach`); the Python objects are then made attached, and a piece — what
//! one message exports to — is made there too (`Piece::make`), only when no kept copy of it
//! can be given: on a message's first export, or with the cache off.

mod ffi;
mod leaves;
mod pieces;
mod request;

pub use leaves::Leaves;
pub use pieces::Pieces;
pub use request::Build;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What the cache keeps and gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Strings and pieces (the default).
    All,
    /// Strings only: every request makes its dicts and lists anew.
    Strings,
    /// Nothing: every request makes every object anew (what is held stays until cleared).
    Off,
}

static MODE: AtomicU8 = AtomicU8::new(0);

impl Mode {
    pub fn get() -> Mode {
        match MODE.load(Ordering::Relaxed) {
            0 => Mode::All,
            1 => Mode::Strings,
            _ => Mode::Off,
        }
    }

    fn set(self) {
        let v = match self {
            Mode::All => 0,
            Mode::Strings => 1,
            Mode::Off => 2,
        };
        MODE.store(v, Ordering::Relaxed);
    }

    fn name(self) -> &'static str {
        match self {
            Mode::All => "all",
            Mode::Strings => "strings",
            Mode::Off => "off",
        }
    }

    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "all" => Mode::All,
            "strings" => Mode::Strings,
            "off" => Mode::Off,
            _ => return None,
        })
    }

    pub fn keeps_strings(self) -> bool {
        self != Mode::Off
    }

    pub fn keeps_pieces(self) -> bool {
        self == Mode::All
    }
}

/// What is kept for one message, in place in its Python object (a request reads it for every
/// message: no pointer more to follow), and listed where `export_cache_usage` and
/// `export_cache_clear` find it from the message's first export until it is dropped.
pub struct MessageCache {
    leaves: Leaves,
    pieces: Pieces,
    /// Its place in [`REGISTRY`] (`UNLISTED` before its first export); changed only under
    /// the registry's lock.
    listed: AtomicUsize,
}

const UNLISTED: usize = usize::MAX;

impl MessageCache {
    pub fn new() -> MessageCache {
        MessageCache {
            leaves: Leaves::default(),
            pieces: Pieces::default(),
            listed: AtomicUsize::new(UNLISTED),
        }
    }

    pub fn leaves(&self) -> &Leaves {
        self.enlist();
        &self.leaves
    }

    pub fn pieces(&self) -> &Pieces {
        self.enlist();
        &self.pieces
    }

    /// Listed on first use. A message's cache lives inside its Python object, which never
    /// moves, so its address stays valid until `drop` takes it off the list.
    fn enlist(&self) {
        if self.listed.load(Ordering::Acquire) != UNLISTED {
            return;
        }
        let mut r = registry();
        if self.listed.load(Ordering::Acquire) == UNLISTED {
            self.listed.store(r.len(), Ordering::Release);
            r.push(Listed(self));
        }
    }

    fn clear(&self) {
        self.leaves.clear();
        self.pieces.clear();
    }
}

impl Drop for MessageCache {
    fn drop(&mut self) {
        if *self.listed.get_mut() == UNLISTED {
            return;
        }
        let mut r = registry();
        let at = self.listed.load(Ordering::Acquire);
        r.swap_remove(at);
        if let Some(moved) = r.get(at) {
            // SAFETY: a listed cache is alive (it leaves the list, under this lock, before its
            // memory goes); only its atomic place is written.
            unsafe { (*moved.0).listed.store(at, Ordering::Release) };
        }
    }
}

/// A listed cache's address.
struct Listed(*const MessageCache);

// SAFETY: a `MessageCache` is `Sync` (its state is behind mutexes and atomics); the pointer is
// only read under the registry's lock, while the cache is alive (see `Drop`).
unsafe impl Send for Listed {}

/// Every cache holding something, or that did since its message's first export.
static REGISTRY: Mutex<Vec<Listed>> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Vec<Listed>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// `f` of every listed cache, under the registry's lock (a cache dropped meanwhile waits).
fn each_listed(mut f: impl FnMut(&MessageCache)) {
    let r = registry();
    for l in r.iter() {
        // SAFETY: listed, hence alive while the lock is held (see `Drop`).
        f(unsafe { &*l.0 });
    }
}

/// What the cache holds: (messages holding something, strings, pieces' copies).
fn usage() -> (usize, usize, usize) {
    let mut out = (0, 0, 0);
    each_listed(|c| {
        let (s, p) = (c.leaves.len(), c.pieces.len());
        if s + p > 0 {
            out.0 += 1;
        }
        out.1 += s;
        out.2 += p;
    });
    out
}

/// The export cache's mode: `"all"` (a message's strings and the dicts and lists it exported
/// to are kept and given again; the default), `"strings"` (its strings only) or `"off"`
/// (nothing is kept or given: every request is made anew; what is held stays until
/// `export_cache_clear`). Given a mode, sets it for every later request; returns the mode in
/// force before the call.
#[pyfunction]
#[pyo3(signature = (mode=None))]
pub fn export_cache_mode(mode: Option<&str>) -> PyResult<&'static str> {
    let before = Mode::get();
    if let Some(m) = mode {
        let m = Mode::parse(m)
            .ok_or_else(|| {
                ctxfold_core::Error::bad_argument(format!(
                    "export cache mode {m:?}: expected \"all\", \"strings\" or \"off\""
                ))
            })
            .map_err(crate::errors::to_py)?;
        m.set();
    }
    Ok(before.name())
}

/// What the export cache holds now: `{"messages": n, "strings": n, "pieces": n}` — the
/// messages holding something, the Python strings kept, the copies of exported dicts and lists
/// kept (at most two per message and format).
#[pyfunction]
pub fn export_cache_usage(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let (messages, strings, pieces) = usage();
    let d = PyDict::new(py);
    d.set_item("messages", messages)?;
    d.set_item("strings", strings)?;
    d.set_item("pieces", pieces)?;
    Ok(d)
}

/// Drop everything the export cache holds; the next request of each message makes its
/// objects anew (and keeps them again, unless the mode is `"off"`).
#[pyfunction]
pub fn export_cache_clear() {
    // What is dropped is strings, dicts and lists (`pieces` keeps nothing else): no message
    // goes with them, so no cache leaves the list while it is walked.
    each_listed(MessageCache::clear);
}
