//! The interop shapes the frameworks' importers write, built by the core: a message's
//! `metadata["interop"]` and a whole request's `request_header` data.

use crate::convert::{self, map_to_py, Policy};
use crate::errors::IntoPyResult;
use ctxfold_core::{Format, Target};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value};

/// `o` as a JSON object under `policy`; an error is placed under `root` (outermost key first).
fn object(o: &Bound<'_, PyDict>, root: &[&str], policy: Policy) -> PyResult<Map<String, Value>> {
    let placed = |e: crate::errors::Failure| root.iter().rev().fold(e, |e, k| e.at_key(k));
    match convert::json(o.as_any(), policy).map_err(placed)? {
        Some(Value::Object(m)) => Ok(m),
        _ => Ok(Map::new()),
    }
}

/// `metadata` for a message the importer of `format` made: `{"interop": {"format": format,
/// **kept}}`. A value of `kept` that is not JSON is refused as a message's metadata is.
#[pyfunction]
pub fn interop_metadata<'py>(
    py: Python<'py>,
    format: &str,
    kept: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let target = Target::parse(format).py()?;
    let kept = object(kept, &["metadata", ctxfold_core::INTEROP], Policy::Raise)?;
    map_to_py(py, &ctxfold_core::interop_metadata(target.name(), kept))
}

/// The data of the `request_header` event of a whole request of `format`: `{"format": format,
/// "request": request}`; values of `request` that are not JSON are left out, as an event's
/// data leaves them out.
#[pyfunction]
pub fn request_header<'py>(
    py: Python<'py>,
    format: &str,
    request: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let f = Format::parse(format).py()?;
    let request = object(request, &["request"], Policy::Drop { redact: false })?;
    map_to_py(py, &ctxfold_core::request_header(f, request))
}
