//! The core's table of runtime fields, as Python reads it (`_core.RUNTIME_FIELDS`).

use ctxfold_core::{ForkCopy, RUNTIME_FIELDS};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A runtime field of a context, as the core's table has it.
#[pyclass(frozen, get_all, module = "ctxfold._core", name = "RuntimeField")]
pub struct PyRuntimeField {
    /// The attribute's name, and its key in a document.
    name: &'static str,
    /// Whether a document carries it (at its top level).
    carried: bool,
    /// Whether a fork takes a shallow copy of its own, rather than the same value.
    fork_copies: bool,
}

#[pymethods]
impl PyRuntimeField {
    fn __repr__(&self) -> String {
        format!(
            "RuntimeField(name={:?}, carried={}, fork_copies={})",
            self.name, self.carried, self.fork_copies
        )
    }
}

/// Every runtime field, in the core's order (the carried ones in document order).
pub fn fields(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    let fields = RUNTIME_FIELDS
        .iter()
        .map(|f| {
            Py::new(
                py,
                PyRuntimeField {
                    name: f.name,
                    carried: f.carried.is_some(),
                    fork_copies: f.fork == ForkCopy::Own,
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, fields)
}
