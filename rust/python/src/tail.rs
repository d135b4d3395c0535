//! Some of a context's messages without a list of all of them (a session's `get_items(limit)`,
//! `ctx[i]`, `ctx[a:b]`): O(log n) to find the start, then O(k).

use crate::context::{handles_to_list, ContextCore};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// The last `k` messages of `messages`, the same objects.
#[pyfunction]
pub fn shown_tail<'py>(
    py: Python<'py>,
    core: &ContextCore,
    k: usize,
) -> PyResult<Bound<'py, PyList>> {
    // Handles under the lock, Python objects after it (see `ContextCore::shown_where`).
    let handles = core.lock(py).shown_tail(k);
    handles_to_list(py, &handles)
}

/// `messages[start:stop]` (clamped), the same objects.
#[pyfunction]
pub fn shown_range<'py>(
    py: Python<'py>,
    core: &ContextCore,
    start: usize,
    stop: usize,
) -> PyResult<Bound<'py, PyList>> {
    let handles = core.lock(py).shown_range(start, stop);
    handles_to_list(py, &handles)
}
