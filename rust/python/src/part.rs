//! `Part`: one content part, the JSON object it was given (every key, in order), and its
//! factories; the rules of a part are the core's (the core's `message/part.rs`).

use crate::convert::{self, expected, map_to_py, to_map, Json, JsonMap, JsonOut};
use crate::errors::IntoPyResult;
use ctxfold_core::compact_json;
use ctxfold_core::Part;
use ctxfold_core::{new_part, part_from_map};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A part: a `Part` or a dict (its `type` is the core's rule).
pub struct PartArg(pub Part);

impl<'py> FromPyObject<'_, 'py> for PartArg {
    type Error = crate::errors::Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<PartArg, Self::Error> {
        if let Ok(p) = o.cast::<PyPart>() {
            return Ok(PartArg((*p.get().inner).clone()));
        }
        let d = o
            .cast::<PyDict>()
            .map_err(|_| expected("a Part or a dict", &o))?;
        to_map(&d).map(PartArg)
    }
}

/// One content part: `type` plus that type's fields, every key kept as given.
#[pyclass(name = "Part", module = "ctxfold", frozen)]
pub struct PyPart {
    pub inner: Arc<Map<String, Value>>,
}

/// A part of `kind` from a factory's arguments (the core's `new_part`).
fn part(kind: &str, fields: &[(&str, Option<Json>)], extra: Option<JsonMap>) -> PyPart {
    let fields = fields
        .iter()
        .map(|(k, v)| (*k, v.as_ref().map(|j| j.0.clone())));
    let extra = extra.map(|e| e.0).unwrap_or_default();
    PyPart {
        inner: Arc::new(new_part(kind, fields, extra)),
    }
}

#[pymethods]
impl PyPart {
    #[new]
    #[pyo3(signature = (r#type, **fields))]
    fn py_new(r#type: &str, fields: Option<JsonMap>) -> Self {
        part(r#type, &[], fields)
    }

    #[staticmethod]
    #[pyo3(signature = (text, **extra))]
    fn text(text: Json, extra: Option<JsonMap>) -> Self {
        part("text", &[("text", Some(text))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (text, **extra))]
    fn thinking(text: Json, extra: Option<JsonMap>) -> Self {
        part("thinking", &[("text", Some(text))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn image(source: Json, extra: Option<JsonMap>) -> Self {
        part("image", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn audio(source: Json, extra: Option<JsonMap>) -> Self {
        part("audio", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn video(source: Json, extra: Option<JsonMap>) -> Self {
        part("video", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn file(source: Json, extra: Option<JsonMap>) -> Self {
        part("file", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn pdf(source: Json, extra: Option<JsonMap>) -> Self {
        part("pdf", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (call_id, name, arguments=None, **extra))]
    fn tool_use(
        call_id: Json,
        name: Json,
        arguments: Option<Json>,
        extra: Option<JsonMap>,
    ) -> Self {
        let fields = [
            ("call_id", Some(call_id)),
            ("name", Some(name)),
            ("arguments", arguments),
        ];
        part("tool_use", &fields, extra)
    }
    #[staticmethod]
    #[pyo3(signature = (call_id, content, **extra))]
    fn tool_result(call_id: Json, content: Json, extra: Option<JsonMap>) -> Self {
        let fields = [("call_id", Some(call_id)), ("content", Some(content))];
        part("tool_result", &fields, extra)
    }
    #[staticmethod]
    #[pyo3(signature = (name, description=None, parameters=None, **extra))]
    fn tool(
        name: Json,
        description: Option<Json>,
        parameters: Option<Json>,
        extra: Option<JsonMap>,
    ) -> Self {
        let fields = [
            ("name", Some(name)),
            ("description", description),
            ("parameters", parameters),
        ];
        part("tool", &fields, extra)
    }

    #[staticmethod]
    fn from_dict(d: JsonMap) -> PyResult<Self> {
        let inner = Arc::new(part_from_map(d.0).py()?);
        Ok(PyPart { inner })
    }

    fn to_dict(&self) -> JsonOut<'_, Part> {
        JsonOut(&self.inner)
    }

    #[getter(r#type)]
    fn type_(&self) -> &str {
        self.inner.get("type").and_then(Value::as_str).unwrap_or("")
    }

    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.get(key) {
            Some(v) => JsonOut(v).into_pyobject(py),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.get(key) {
            Some(v) => JsonOut(v).into_pyobject(py),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    fn __contains__(&self, key: &str) -> bool {
        self.inner.contains_key(key)
    }

    /// Any field reads as its value, or `None` when this part has no such key.
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if name.starts_with('_') {
            return Err(PyAttributeError::new_err(name.to_string()));
        }
        match self.inner.get(name) {
            Some(v) => JsonOut(v).into_pyobject(py),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp, py: Python<'_>) -> Py<PyAny> {
        let eq = other
            .cast::<PyPart>()
            .ok()
            .map(|o| *self.inner == *o.get().inner);
        convert::compare(py, op, eq)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &compact_json(&Value::Object((*self.inner).clone()))).hash()
    }

    fn __repr__(&self) -> String {
        format!(
            "Part({})",
            compact_json(&Value::Object((*self.inner).clone()))
        )
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let f = slf.get_type().getattr("from_dict")?;
        Ok((f, (map_to_py(slf.py(), &slf.get().inner)?,)))
    }
}

/// A message's parts as `Part` objects.
pub fn parts_list<'py>(
    py: Python<'py>,
    parts: &[Map<String, Value>],
) -> PyResult<Bound<'py, PyList>> {
    let items = parts
        .iter()
        .map(|p| {
            Bound::new(
                py,
                PyPart {
                    inner: Arc::new(p.clone()),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}
