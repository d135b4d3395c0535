//! Conversions between Python values and the core's JSON values and times.

use ctxfold_core::time::Micros;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDateAccess, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTimeAccess,
    PyTuple, PyTzInfo, PyTzInfoAccess,
};
use serde_json::{Map, Number, Value};

/// How deep a value given from Python may nest (the core's rule; it also bounds the
/// recursion here).
pub use ctxfold_core::json::MAX_DEPTH;

/// An int argument of any size (an index, a count, a budget). Values beyond 64 bits saturate,
/// so a huge index reads as out of range, as SPEC asks, rather than raising `OverflowError`;
/// the core judges the value. A bool is not an int here.
pub struct Int(pub i64);

impl<'py> FromPyObject<'_, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Int> {
        if obj.cast::<PyBool>().is_ok() {
            return Err(PyTypeError::new_err("expected an int, got a bool"));
        }
        let i = obj.cast::<PyInt>().map_err(|_| {
            PyTypeError::new_err(format!("expected an int, got {}", type_name(&obj)))
        })?;
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Int(v));
        }
        let negative = i.lt(0)?;
        Ok(Int(if negative { i64::MIN } else { i64::MAX }))
    }
}

fn type_name(o: &Borrowed<'_, '_, PyAny>) -> String {
    o.get_type()
        .name()
        .map_or_else(|_| "an object".to_string(), |n| n.to_string())
}

/// A Python value as JSON: dict/list/tuple/str/int/float/bool/None, else `TypeError`; nested
/// deeper than `MAX_DEPTH` → `ValueError`.
pub fn to_value(o: &Bound<'_, PyAny>) -> PyResult<Value> {
    value_at(o, 0)
}

fn value_at(o: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "JSON value nested deeper than {MAX_DEPTH} levels"
        )));
    }
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(Value::String(string(s)?));
    }
    if let Ok(b) = o.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = o.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::from(v));
        }
        return Err(PyTypeError::new_err(
            "integer out of the 64-bit range is not supported in JSON values",
        ));
    }
    if let Ok(f) = o.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyTypeError::new_err("NaN and infinity are not JSON values"));
    }
    if let Ok(d) = o.cast::<PyDict>() {
        return Ok(Value::Object(map_at(d, depth)?));
    }
    if let Ok(l) = o.cast::<PyList>() {
        return l
            .iter()
            .map(|x| value_at(&x, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(t) = o.cast::<PyTuple>() {
        return t
            .iter()
            .map(|x| value_at(&x, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "{} is not JSON-compatible (expected dict, list, str, int, float, bool or None)",
        o.get_type().name()?
    )))
}

pub fn to_map(d: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    map_at(d, 0)
}

fn map_at(d: &Bound<'_, PyDict>, depth: usize) -> PyResult<Map<String, Value>> {
    let mut m = Map::new();
    for (k, v) in d.iter() {
        let k = k
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))
            .and_then(string)?;
        m.insert(k, value_at(&v, depth + 1)?);
    }
    Ok(m)
}

/// A Python str as UTF-8; lone surrogates are a `ValueError`.
pub fn string(s: &Bound<'_, PyString>) -> PyResult<String> {
    s.to_str().map(str::to_string).map_err(|_| {
        PyValueError::new_err("text contains lone surrogates and is not valid Unicode")
    })
}

/// `==` and `!=` from an equality test (`None`: the other object is of another class);
/// ordering comparisons are not supported.
pub fn compare(py: Python<'_>, op: pyo3::basic::CompareOp, eq: Option<bool>) -> Py<PyAny> {
    use pyo3::basic::CompareOp;
    match (op, eq) {
        (CompareOp::Eq, Some(e)) => PyBool::new(py, e).to_owned().into_any().unbind(),
        (CompareOp::Ne, Some(e)) => PyBool::new(py, !e).to_owned().into_any().unbind(),
        _ => py.NotImplemented(),
    }
}

/// Run `f` with Python's cyclic garbage collector paused (restored after, even on error).
/// Building a large document makes millions of dicts and lists, each of which counts toward
/// a collection; the collections, not the building, were most of the time. Nothing built
/// here can form a cycle.
pub fn with_gc_paused<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let gc = py.import("gc")?;
    let was_enabled: bool = gc.call_method0("isenabled")?.extract()?;
    if was_enabled {
        gc.call_method0("disable")?;
    }
    let out = f();
    if was_enabled {
        gc.call_method0("enable")?;
    }
    out
}

/// A JSON value as Python objects (through the same serializer as whole documents).
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    crate::pyser::to_object(py, v)
}

pub fn map_to_py<'py>(py: Python<'py>, o: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    Ok(crate::pyser::to_object(py, o)?.cast_into::<PyDict>()?)
}

/// An aware UTC datetime with microseconds.
pub fn datetime(py: Python<'_>, t: Micros) -> PyResult<Bound<'_, PyDateTime>> {
    use chrono::{Datelike, Timelike};
    let d = chrono::DateTime::<chrono::Utc>::from_timestamp_micros(t)
        .ok_or_else(|| PyValueError::new_err("time out of range"))?;
    let utc = PyTzInfo::utc(py)?;
    PyDateTime::new(
        py,
        d.year(),
        d.month() as u8,
        d.day() as u8,
        d.hour() as u8,
        d.minute() as u8,
        d.second() as u8,
        d.timestamp_subsec_micros(),
        Some(&utc),
    )
}

/// A datetime as microseconds since the epoch; a naive one is taken as UTC.
pub fn micros(o: &Bound<'_, PyAny>) -> PyResult<Micros> {
    let py = o.py();
    if let Ok(s) = o.cast::<PyString>() {
        return ctxfold_core::time::parse_iso(&string(s)?).map_err(crate::errors::to_py);
    }
    let dt = o
        .cast::<PyDateTime>()
        .map_err(|_| PyTypeError::new_err("created_at must be a datetime or an ISO 8601 str"))?;
    let dt = if dt.get_tzinfo().is_some() {
        dt.call_method1("astimezone", (PyTzInfo::utc(py)?,))?
            .cast_into::<PyDateTime>()?
    } else {
        dt.clone()
    };
    let date =
        chrono::NaiveDate::from_ymd_opt(dt.get_year(), dt.get_month().into(), dt.get_day().into())
            .ok_or_else(|| PyValueError::new_err("invalid date"))?;
    let t = date
        .and_hms_micro_opt(
            dt.get_hour().into(),
            dt.get_minute().into(),
            dt.get_second().into(),
            dt.get_microsecond(),
        )
        .ok_or_else(|| PyValueError::new_err("invalid time"))?;
    Ok(t.and_utc().timestamp_micros())
}
