//! Message arguments from Python: each kind of argument is one `FromPyObject` impl, so what a
//! value must be is said once, here. The rules a message obeys (tool calls, part types) are
//! the core's and are checked there, once (`Message::build`, `Message::with`).

use crate::convert::{micros, string, to_map, to_value};
use crate::errors::IntoPyResult;
use crate::message::PyPart;
use ctxfold_core::message::Fields;
use ctxfold_core::time::Micros;
use ctxfold_core::{Content, Part, Role};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde_json::{Map, Value};

/// Any JSON value (`convert::Policy::Raise`).
pub struct Json(pub Value);

impl<'py> FromPyObject<'_, 'py> for Json {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<Json> {
        to_value(&o).map(Json)
    }
}

/// A dict of JSON values.
pub struct JsonMap(pub Map<String, Value>);

impl<'py> FromPyObject<'_, 'py> for JsonMap {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<JsonMap> {
        let d = o.cast::<PyDict>().map_err(|_| expected("a dict", &o))?;
        to_map(&d).map(JsonMap)
    }
}

/// A time: a datetime (naive is UTC) or an ISO 8601 str.
pub struct Time(pub Micros);

impl<'py> FromPyObject<'_, 'py> for Time {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<Time> {
        micros(&o).map(Time)
    }
}

/// A part: a `Part` or a dict (its `type` is the core's rule).
pub struct PartArg(pub Part);

impl<'py> FromPyObject<'_, 'py> for PartArg {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<PartArg> {
        if let Ok(p) = o.cast::<PyPart>() {
            return Ok(PartArg((*p.get().inner).clone()));
        }
        let d = o
            .cast::<PyDict>()
            .map_err(|_| expected("a Part or a dict", &o))?;
        to_map(&d).map(PartArg)
    }
}

/// Content: a str, a list (or tuple) of parts, or `None`.
pub struct ContentArg(pub Content);

impl<'py> FromPyObject<'_, 'py> for ContentArg {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<ContentArg> {
        if o.is_none() {
            return Ok(ContentArg(Content::None));
        }
        if let Ok(s) = o.cast::<PyString>() {
            return Ok(ContentArg(Content::Text(string(&s)?)));
        }
        if o.cast::<PyList>().is_err() && o.cast::<PyTuple>().is_err() {
            return Err(expected("a str, a list of Part, or None", &o));
        }
        let parts = o
            .try_iter()?
            .enumerate()
            .map(|(i, p)| {
                p?.extract::<PartArg>()
                    .map(|p| p.0)
                    .map_err(|e| under(&format!("content[{i}]"), e, o.py()))
            })
            .collect::<PyResult<_>>()?;
        Ok(ContentArg(Content::Parts(parts)))
    }
}

/// The keyword fields of a message (`Message(…, name=…)`, `Message.user(text, **fields)`,
/// `m.replace(**changes)`). `None` clears `name`, `tool_call_id`, `tool_calls`, `metadata`
/// and `hook_ids`, and leaves `created_at` and `id` as they are.
pub struct FieldsArg(pub Fields);

impl<'py> FromPyObject<'_, 'py> for FieldsArg {
    type Error = PyErr;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> PyResult<FieldsArg> {
        let d = o.cast::<PyDict>()?;
        let mut f = Fields::default();
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            let value = |e: PyErr| under(&key, e, o.py());
            let none = v.is_none();
            match key.as_str() {
                "role" => {
                    let r = v.cast::<PyString>().map_err(|_| expected("a str", &v))?;
                    f.role = Some(Role::parse(&string(r)?).py()?);
                }
                "content" => f.content = Some(v.extract::<ContentArg>().map_err(value)?.0),
                "name" => f.name = Some(opt_str(&v).map_err(value)?),
                "tool_call_id" => f.tool_call_id = Some(opt_str(&v).map_err(value)?),
                "tool_calls" => {
                    f.tool_calls = Some(if none {
                        Vec::new()
                    } else {
                        v.try_iter()?
                            .enumerate()
                            .map(|(i, c)| {
                                c?.extract::<JsonMap>()
                                    .map(|c| c.0)
                                    .map_err(|e| under(&format!("tool_calls[{i}]"), e, o.py()))
                            })
                            .collect::<PyResult<_>>()?
                    })
                }
                "metadata" => {
                    f.metadata = Some(if none {
                        Map::new()
                    } else {
                        v.extract::<JsonMap>().map_err(value)?.0
                    })
                }
                "created_at" if none => {}
                "created_at" => f.created_at = Some(v.extract::<Time>().map_err(value)?.0),
                "id" if none => {}
                "id" => f.id = opt_str(&v).map_err(value)?,
                "hook_ids" => {
                    f.hook_ids = Some(if none {
                        Vec::new()
                    } else {
                        v.try_iter()?
                            .map(|h| h?.extract::<String>())
                            .collect::<PyResult<_>>()
                            .map_err(value)?
                    })
                }
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "unexpected keyword argument '{other}'"
                    )))
                }
            }
        }
        Ok(FieldsArg(f))
    }
}

impl FieldsArg {
    /// The fields of an optional `**kwargs`.
    pub fn of(kw: Option<FieldsArg>) -> Fields {
        kw.map(|f| f.0).unwrap_or_default()
    }
}

fn opt_str(v: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if v.is_none() {
        return Ok(None);
    }
    let s = v
        .cast::<PyString>()
        .map_err(|_| expected("a str or None", v))?;
    string(s).map(Some)
}

/// `TypeError: expected WHAT, got TYPE`: the one wording of a wrong kind of argument.
fn expected(what: &str, o: &Bound<'_, PyAny>) -> PyErr {
    let got = o
        .get_type()
        .name()
        .map_or_else(|_| "an object".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!("expected {what}, got {got}"))
}

/// The same exception, its message prefixed with where (`content[2]: …`).
fn under(at: &str, e: PyErr, py: Python<'_>) -> PyErr {
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let ty = e.get_type(py);
    PyErr::from_type(ty, format!("{at}: {text}"))
}
