//! The one place where core errors become Python exceptions. The exception classes live in
//! the Python package (`ctxfold.errors`) so that they can inherit from two builtins at once
//! (`DecodeError` is a `ValueError`, `UnknownAnchorError` a `KeyError`).

use ctxfold_core::Error;
use pyo3::exceptions::{PyIndexError, PyOSError, PyTypeError, PyValueError};

/// `No such file or directory`, the same number on every platform.
const ENOENT: i32 = 2;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNKNOWN_ANCHOR_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FORMAT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONFLICT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn class(
    py: Python<'_>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Py<PyType>> {
    cell.get_or_try_init(py, || {
        let m = py.import("ctxfold.errors")?;
        Ok(m.getattr(name)?.cast_into::<PyType>()?.unbind())
    })
    .map(|c| c.clone_ref(py))
}

pub fn to_py(e: Error) -> PyErr {
    Python::attach(|py| match e {
        Error::Value(m) => PyValueError::new_err(m),
        Error::Index(m) => PyIndexError::new_err(m),
        Error::Type(m) => PyTypeError::new_err(m),
        // OSError(errno, strerror) picks the subclass for the errno (PEP 3151).
        Error::NotFound(m) => PyOSError::new_err((ENOENT, m)),
        Error::Io(m, Some(errno)) => PyOSError::new_err((errno, m)),
        Error::Io(m, None) => PyOSError::new_err(m),
        Error::Decode(m) => match class(py, &DECODE_ERROR, "DecodeError") {
            Ok(c) => PyErr::from_type(c.into_bound(py), m),
            Err(e) => e,
        },
        Error::Format(m) => match class(py, &FORMAT_ERROR, "FormatError") {
            Ok(c) => PyErr::from_type(c.into_bound(py), m),
            Err(e) => e,
        },
        Error::Conflict(m) => match class(py, &CONFLICT_ERROR, "ConflictError") {
            Ok(c) => PyErr::from_type(c.into_bound(py), m),
            Err(e) => e,
        },
        Error::UnknownAnchor(m) => match class(py, &UNKNOWN_ANCHOR_ERROR, "UnknownAnchorError") {
            Ok(c) => PyErr::from_type(c.into_bound(py), m),
            Err(e) => e,
        },
    })
}

/// `?` on a core result inside a `#[pymethods]` body.
pub trait IntoPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for ctxfold_core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// A decode error raised from Python-side conversion (e.g. a wrong type while loading a dict).
pub fn decode_err(m: String) -> PyErr {
    to_py(Error::Decode(m))
}
