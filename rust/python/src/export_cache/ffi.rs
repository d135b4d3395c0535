//! The raw CPython calls of the export cache, each behind a typed function: the rest of the
//! cache makes none of its own (its one other `unsafe`, the list of caches by address that
//! `export_cache_usage` and `export_cache_clear` walk, is in `mod.rs`).
//!
//! Every function takes a `Borrowed<'a, 'py, _>`: the `'py` is the proof that the caller is
//! attached to the interpreter (the GIL is held), and `'a` bounds what is handed back. They
//! exist because the cache's hot paths must not pay what PyO3's safe API does on every object
//! — a reference taken and released per value set or read, a check per dict step that it was
//! not changed — on every string of a 100k-message request. What that costs them: nothing
//! here may run Python code between reading an object and being done with what it holds (no
//! `__eq__`, no `__hash__` of anything but exact `str` keys, no allocation that could trigger
//! the garbage collector to run finalizers while an iteration is under way).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

/// What an object is, for the cache: only exact types, so that reading it runs no Python
/// code.
pub enum Node<'a, 'py> {
    Dict(Borrowed<'a, 'py, PyDict>),
    List(Borrowed<'a, 'py, PyList>),
    /// An exact `str`, `int`, `float` or `bool`, or `None`: a value no one can change.
    Atom,
    /// Anything else (a subclass included).
    Other,
}

pub fn node<'a, 'py>(o: Borrowed<'a, 'py, PyAny>) -> Node<'a, 'py> {
    let p = o.as_ptr();
    // SAFETY: `o` is a live object and the GIL is held (`'py`); reading its type runs no code,
    // and a `Borrowed` of the exact type it is checked to be is sound.
    unsafe {
        let ty = ffi::Py_TYPE(p);
        if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            return Node::Dict(o.cast_unchecked());
        }
        if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
            return Node::List(o.cast_unchecked());
        }
        let atoms = [
            std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
            std::ptr::addr_of_mut!(ffi::PyLong_Type),
            std::ptr::addr_of_mut!(ffi::PyFloat_Type),
            std::ptr::addr_of_mut!(ffi::PyBool_Type),
        ];
        if p == ffi::Py_None() || atoms.contains(&ty) {
            return Node::Atom;
        }
    }
    Node::Other
}

/// How many references the object has: 1 when its holder is the only one.
pub fn refcnt(o: Borrowed<'_, '_, PyAny>) -> isize {
    // SAFETY: a live object, the GIL held.
    unsafe { ffi::Py_REFCNT(o.as_ptr()) }
}

/// The object's address: what the cache records of an immutable value.
pub fn address(o: Borrowed<'_, '_, PyAny>) -> usize {
    o.as_ptr() as usize
}

pub fn dict_len(d: Borrowed<'_, '_, PyDict>) -> usize {
    // SAFETY: an exact dict, the GIL held.
    unsafe { ffi::PyDict_Size(d.as_ptr()) as usize }
}

pub fn list_len(l: Borrowed<'_, '_, PyList>) -> usize {
    // SAFETY: an exact list, the GIL held.
    unsafe { ffi::PyList_Size(l.as_ptr()) as usize }
}

/// The entries of a dict, borrowed (no reference taken): valid while the dict is not changed,
/// which nothing the cache does between two steps can do (see the module's rule).
pub fn dict_entries<'a, 'py>(
    d: Borrowed<'a, 'py, PyDict>,
) -> impl Iterator<Item = (Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)> {
    let py = d.py();
    let mut pos: ffi::Py_ssize_t = 0;
    std::iter::from_fn(move || {
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: an exact dict, the GIL held; `PyDict_Next` hands out borrowed references
        // that live as long as the dict holds them (`'a`), and it is not changed meanwhile.
        unsafe {
            if ffi::PyDict_Next(d.as_ptr(), &mut pos, &mut k, &mut v) == 0 {
                return None;
            }
            Some((Borrowed::from_ptr(py, k), Borrowed::from_ptr(py, v)))
        }
    })
}

/// The items of a list, borrowed (no reference taken), on the same terms as `dict_entries`.
pub fn list_items<'a, 'py>(
    l: Borrowed<'a, 'py, PyList>,
) -> impl Iterator<Item = Borrowed<'a, 'py, PyAny>> {
    let py = l.py();
    (0..list_len(l)).map(move |i| {
        // SAFETY: an exact list, the GIL held, `i` within its length (which nothing changes
        // meanwhile); `PyList_GetItem` hands out a borrowed reference.
        unsafe { Borrowed::from_ptr(py, ffi::PyList_GetItem(l.as_ptr(), i as ffi::Py_ssize_t)) }
    })
}

/// `d[key] = value` with the references the caller holds lent, not taken: `PyDict_SetItem`
/// takes its own, so the two a safe `set_item` would add and drop are saved on every entry.
/// `key` must be an exact `str` (its hash and equality run no Python code).
pub fn dict_set(
    d: &Bound<'_, PyDict>,
    key: Borrowed<'_, '_, PyString>,
    value: Borrowed<'_, '_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the GIL is held (`d` is bound); `d` is a dict, `key` a str and `value` a live
    // object, each kept alive by its holder for the call.
    if unsafe { ffi::PyDict_SetItem(d.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(PyErr::fetch(d.py()));
    }
    Ok(())
}
