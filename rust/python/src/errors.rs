//! The one place where core errors become Python exceptions: each kind of failure maps to one
//! exception class here, and the error's place goes along as data (`loc`). The exception
//! classes live in the Python package (`ctxfold.errors`) so that they can inherit from two
//! builtins at once (`DecodeError` is a `ValueError`, `UnknownAnchorError` a `KeyError`).

use ctxfold_core::{Error, ErrorKind, LocItem, Place};
use pyo3::exceptions::{PyIndexError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyString, PyTuple, PyType};

/// `No such file or directory`, the same number on every platform.
const ENOENT: i32 = 2;

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

/// The exception class of a kind (`None`: an `OSError`, made with its errno below).
fn class_of(py: Python<'_>, kind: ErrorKind) -> PyResult<Option<Bound<'_, PyType>>> {
    let ours = |cell, name| class(py, cell, name).map(|c| Some(c.into_bound(py)));
    match kind {
        ErrorKind::BadArgument => Ok(Some(py.get_type::<PyValueError>())),
        ErrorKind::OutOfRange => Ok(Some(py.get_type::<PyIndexError>())),
        ErrorKind::WrongKind => Ok(Some(py.get_type::<PyTypeError>())),
        ErrorKind::Undecodable => ours(&DECODE_ERROR, "DecodeError"),
        ErrorKind::Unconvertible | ErrorKind::NeedsRepair => ours(&FORMAT_ERROR, "FormatError"),
        ErrorKind::Conflict => ours(&CONFLICT_ERROR, "ConflictError"),
        ErrorKind::UnknownAnchor => ours(&UNKNOWN_ANCHOR_ERROR, "UnknownAnchorError"),
        ErrorKind::NotFound | ErrorKind::Io { .. } => Ok(None),
    }
}

pub fn to_py(e: Error) -> PyErr {
    Python::attach(|py| match class_of(py, e.kind()) {
        Ok(Some(cls)) => raised(py, &cls, e.place(), e.message()).unwrap_or_else(|err| err),
        Ok(None) => {
            let text = e.to_string();
            match e.kind() {
                // OSError(errno, strerror) picks the subclass for the errno (PEP 3151).
                ErrorKind::NotFound => PyOSError::new_err((ENOENT, text)),
                ErrorKind::Io { errno: Some(n) } => PyOSError::new_err((n, text)),
                _ => PyOSError::new_err(text),
            }
        }
        Err(err) => err,
    })
}

/// An exception of `cls` whose text is `message` at `place` (the core's one rendering), with
/// the place as data: `loc`, the path of keys and indices (a tuple of str and int), and, for
/// `located` to add to later, what held the input (`_within`) and the bare message (`_reason`).
/// ctxfold's own classes always get them (`loc` is `()` without a path); a builtin exception
/// only when there is a place.
fn raised(
    py: Python<'_>,
    cls: &Bound<'_, PyType>,
    place: &Place,
    message: &str,
) -> PyResult<PyErr> {
    let err = PyErr::from_type(cls.clone(), place.render(message));
    let ours = cls.module()?.to_str()? == "ctxfold.errors";
    if ours || !place.loc().is_empty() || place.within().next().is_some() {
        let value = err.value(py);
        let loc = place.loc().items().map(|item| match item {
            LocItem::Key(k) => PyString::new(py, k).into_any(),
            LocItem::Index(i) => PyInt::new(py, *i).into_any(),
        });
        value.setattr("loc", PyTuple::new(py, loc)?)?;
        value.setattr("_within", PyTuple::new(py, place.within())?)?;
        value.setattr("_reason", message)?;
    }
    Ok(err)
}

/// A copy of the exception `e` found at a place outside the one it has: under `path` (keys and
/// indices, outermost first), in what `within` names (a file, a stored context). It is of
/// `e`'s class, or of `cls` when the caller reports the failure as another kind (a provider
/// message the core refused to build is a `FormatError`). Python code that catches an error
/// and says where it was goes through here, so that the text reads as the core's do and `loc`
/// stays data. An exception without a place of its own is taken as its bare message.
#[pyfunction]
#[pyo3(signature = (e, *path, within=None, cls=None))]
pub fn located(
    py: Python<'_>,
    e: &Bound<'_, PyAny>,
    path: &Bound<'_, PyTuple>,
    within: Option<&str>,
    cls: Option<&Bound<'_, PyType>>,
) -> PyResult<Py<PyAny>> {
    let reason: String = match e.getattr_opt("_reason")? {
        Some(r) => r.extract()?,
        None => e.str()?.to_string(),
    };
    // The place `e` has, rebuilt from the inside out, then the new steps outside it.
    let mut place = Place::default();
    let own = match e.getattr_opt("loc")? {
        Some(loc) => loc.cast_into::<PyTuple>()?,
        None => PyTuple::empty(py),
    };
    for item in own.iter().rev().chain(path.iter().rev()) {
        place = if item.is_instance_of::<PyInt>() {
            place.at_index(item.extract()?)
        } else {
            place.at_key(item.extract::<String>()?)
        };
    }
    if let Some(w) = e.getattr_opt("_within")? {
        for label in w.cast::<PyTuple>()?.iter().rev() {
            place = place.within_label(label.extract::<String>()?);
        }
    }
    if let Some(w) = within {
        place = place.within_label(w);
    }
    let cls = match cls {
        Some(c) => c.clone(),
        None => e.get_type(),
    };
    Ok(raised(py, &cls, &place, &reason)?.into_value(py).into_any())
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

/// A failure on the way from Python into the core: an error of the core's kinds, placed as it
/// unwinds (`content[2]`, `metadata.x`), or an exception Python code raised (a `__iter__`, a
/// `model_dump`), which passes through as it is. It becomes an exception once, in `to_py`.
pub enum Failure {
    Core(Error),
    Py(PyErr),
}

impl Failure {
    pub fn at_key(self, key: &str) -> Failure {
        match self {
            Failure::Core(e) => Failure::Core(e.at_key(key)),
            py => py,
        }
    }

    pub fn at_index(self, index: usize) -> Failure {
        match self {
            Failure::Core(e) => Failure::Core(e.at_index(index)),
            py => py,
        }
    }

    /// The same failure as bad input for a context (a `DecodeError`), as `Error::in_input`.
    pub fn in_input(self) -> Failure {
        match self {
            Failure::Core(e) => Failure::Core(e.in_input()),
            py => py,
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Core(e)
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Failure {
        Failure::Py(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Core(e) => to_py(e),
            Failure::Py(e) => e,
        }
    }
}
