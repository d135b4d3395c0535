//! Conversions between Python values and the core's JSON values and times.

use crate::errors::Failure;
use ctxfold_core::{Error, ErrorKind, Micros};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDateAccess, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTimeAccess,
    PyTuple, PyTzInfo, PyTzInfoAccess,
};
use serde_json::{Map, Number, Value};

/// How deep a value given from Python may nest (the core's rule; it also bounds the
/// recursion here).
pub use ctxfold_core::MAX_DEPTH;

/// An int argument of any size (an index, a count, a budget). Values beyond 64 bits saturate,
/// so a huge index reads as out of range, as the index rules say, rather than raising `OverflowError`;
/// the core judges the value. A bool is not an int here.
pub struct Int(pub i64);

impl<'py> FromPyObject<'_, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Int> {
        // A bool is an int to Python, never an index or a count here.
        let i = match obj.cast::<PyInt>() {
            Ok(i) if obj.cast::<PyBool>().is_err() => i,
            _ => return Err(expected("an int", &obj).into()),
        };
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Int(v));
        }
        let negative = i.lt(0)?;
        Ok(Int(if negative { i64::MIN } else { i64::MAX }))
    }
}

/// What a conversion does with what is not JSON. The rule of what is JSON is one (below);
/// callers differ only in what they do with the rest.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// An argument: a wrong kind of value (`TypeError`) or a bad one (bad text, too deep:
    /// `ValueError`).
    Raise,
    /// Runtime fields on their way to disk: left out (a dict entry, a list item); with
    /// `redact`, credential-named keys too (`ctxfold_core::redact`). Too deep still raises.
    Drop { redact: bool },
    /// A provider's request or response for an importer: pydantic objects (the SDKs' types)
    /// read as what `model_dump(mode="json", exclude_unset=True)` gives; the rest cannot be
    /// converted (`FormatError`).
    Import,
}

/// Why a value is not JSON.
enum Why {
    Type(String),
    Key,
    BigInt,
    NonFinite,
    Surrogates,
    Deep,
}

impl Why {
    /// Whether `Policy::Drop` leaves the value out (too deep is refused under every policy).
    fn droppable(&self) -> bool {
        !matches!(self, Why::Deep)
    }

    /// The error under `policy`; its place is added as it unwinds.
    fn error(self, policy: Policy) -> Error {
        let expected = match policy {
            Policy::Import => {
                "a dict, list, tuple, str, int, float, bool or None, or a pydantic model"
            }
            _ => "a dict, list, tuple, str, int, float, bool or None",
        };
        let text = match &self {
            Why::Type(t) => format!("{t} is not JSON (expected {expected})"),
            Why::Key => "JSON object keys must be str".into(),
            Why::BigInt => "an integer outside the 64-bit range is not JSON".into(),
            Why::NonFinite => "NaN and infinity are not JSON".into(),
            Why::Surrogates => SURROGATES.into(),
            Why::Deep => format!("JSON nested deeper than {MAX_DEPTH} levels"),
        };
        let kind = match (self, policy) {
            (_, Policy::Import) => ErrorKind::Unconvertible,
            (Why::Surrogates | Why::Deep, _) => ErrorKind::BadArgument,
            _ => ErrorKind::WrongKind,
        };
        Error::new(kind, text)
    }
}

/// `o` as JSON under `policy`; `None` when `Drop` left out the whole value.
pub fn json(o: &Bound<'_, PyAny>, policy: Policy) -> Result<Option<Value>, Failure> {
    walk(o, 0, policy)
}

/// `o` as JSON, refused as arguments are.
pub fn to_value(o: &Bound<'_, PyAny>) -> Result<Value, Failure> {
    json(o, Policy::Raise).map(|v| v.unwrap_or(Value::Null))
}

fn walk(o: &Bound<'_, PyAny>, depth: usize, policy: Policy) -> Result<Option<Value>, Failure> {
    if depth > MAX_DEPTH {
        return Err(Why::Deep.error(policy).into());
    }
    let leaf = |r: Result<Value, Why>| match r {
        Ok(v) => Ok(Some(v)),
        Err(why) if why.droppable() && matches!(policy, Policy::Drop { .. }) => Ok(None),
        Err(why) => Err(Failure::from(why.error(policy))),
    };
    if o.is_none() {
        return Ok(Some(Value::Null));
    }
    if let Ok(s) = o.cast::<PyString>() {
        return leaf(
            s.to_str()
                .map(|s| Value::String(s.to_string()))
                .map_err(|_| Why::Surrogates),
        );
    }
    if let Ok(b) = o.cast::<PyBool>() {
        return Ok(Some(Value::Bool(b.is_true())));
    }
    if let Ok(i) = o.cast::<PyInt>() {
        return leaf(if let Ok(v) = i.extract::<i64>() {
            Ok(Value::from(v))
        } else if let Ok(v) = i.extract::<u64>() {
            Ok(Value::from(v))
        } else {
            Err(Why::BigInt)
        });
    }
    if let Ok(f) = o.cast::<PyFloat>() {
        return leaf(
            Number::from_f64(f.value())
                .map(Value::Number)
                .ok_or(Why::NonFinite),
        );
    }
    if let Ok(d) = o.cast::<PyDict>() {
        return map_walk(d, depth, policy).map(|m| Some(Value::Object(m)));
    }
    if o.cast::<PyList>().is_ok() || o.cast::<PyTuple>().is_ok() {
        let mut items = Vec::with_capacity(o.len()?);
        for (i, x) in o.try_iter()?.enumerate() {
            match walk(&x?, depth + 1, policy) {
                Ok(Some(v)) => items.push(v),
                Ok(None) => {}
                Err(e) => return Err(e.at_index(i)),
            }
        }
        return Ok(Some(Value::Array(items)));
    }
    if policy == Policy::Import && o.hasattr("model_dump")? {
        let kw = PyDict::new(o.py());
        kw.set_item("mode", "json")?;
        kw.set_item("exclude_unset", true)?;
        let dumped = o.call_method("model_dump", (), Some(&kw))?;
        return walk(&dumped, depth + 1, policy);
    }
    leaf(Err(Why::Type(o.get_type().name()?.to_string())))
}

fn map_walk(
    d: &Bound<'_, PyDict>,
    depth: usize,
    policy: Policy,
) -> Result<Map<String, Value>, Failure> {
    let mut m = Map::with_capacity(d.len());
    for (k, v) in d.iter() {
        let key = match k.cast::<PyString>().map(|k| k.to_str()) {
            Ok(Ok(k)) => k,
            _ if matches!(policy, Policy::Drop { .. }) => continue,
            Ok(Err(_)) => return Err(Why::Surrogates.error(policy).into()),
            Err(_) => return Err(Why::Key.error(policy).into()),
        };
        if policy == (Policy::Drop { redact: true }) && ctxfold_core::is_secret_key(key) {
            continue;
        }
        match walk(&v, depth + 1, policy) {
            Ok(Some(v)) => {
                m.insert(key.to_string(), v);
            }
            Ok(None) => {}
            Err(e) => return Err(e.at_key(key)),
        }
    }
    Ok(m)
}

/// Any JSON value (`convert::Policy::Raise`).
pub struct Json(pub Value);

impl<'py> FromPyObject<'_, 'py> for Json {
    type Error = Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<Json, Failure> {
        to_value(&o).map(Json)
    }
}

/// A dict of JSON values.
pub struct JsonMap(pub Map<String, Value>);

impl<'py> FromPyObject<'_, 'py> for JsonMap {
    type Error = Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<JsonMap, Failure> {
        let d = o.cast::<PyDict>().map_err(|_| expected("a dict", &o))?;
        to_map(&d).map(JsonMap)
    }
}

/// A time: a datetime (naive is UTC) or an ISO 8601 str.
pub struct Time(pub Micros);

impl<'py> FromPyObject<'_, 'py> for Time {
    type Error = Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<Time, Failure> {
        micros(&o).map(Time)
    }
}

/// `expected WHAT, got TYPE` (a `TypeError`): the one wording of a wrong kind of argument.
pub fn expected(what: &str, o: &Bound<'_, PyAny>) -> Failure {
    let got = o
        .get_type()
        .name()
        .map_or_else(|_| "an object".to_string(), |n| n.to_string());
    Error::wrong_kind(format!("expected {what}, got {got}")).into()
}

/// A dict as a JSON object, refused as arguments are.
pub fn to_map(d: &Bound<'_, PyDict>) -> Result<Map<String, Value>, Failure> {
    map_walk(d, 0, Policy::Raise)
}

const SURROGATES: &str = "text with lone surrogates is not valid Unicode";

/// A Python str as UTF-8; lone surrogates are a bad argument (`ValueError`).
pub fn string(s: &Bound<'_, PyString>) -> Result<String, Failure> {
    s.to_str()
        .map(str::to_string)
        .map_err(|_| Error::bad_argument(SURROGATES).into())
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

/// Any of the core's JSON-shaped values (a `Value`, a map, a list of maps) as Python objects,
/// when a method returns it: through the same serializer as whole documents.
pub struct JsonOut<'a, T: ?Sized>(pub &'a T);

impl<'py, T: serde::Serialize + ?Sized> IntoPyObject<'py> for JsonOut<'_, T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::pyser::to_object(py, self.0)
    }
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
        .ok_or_else(|| Failure::from(Error::bad_argument("time out of range")))?;
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
pub fn micros(o: &Bound<'_, PyAny>) -> Result<Micros, Failure> {
    let py = o.py();
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(ctxfold_core::parse_iso(&string(s)?)?);
    }
    let dt = o
        .cast::<PyDateTime>()
        .map_err(|_| expected("a datetime or an ISO 8601 str", o))?;
    let dt = if dt.get_tzinfo().is_some() {
        dt.call_method1("astimezone", (PyTzInfo::utc(py)?,))?
            .cast_into::<PyDateTime>()
            .map_err(PyErr::from)?
    } else {
        dt.clone()
    };
    let date =
        chrono::NaiveDate::from_ymd_opt(dt.get_year(), dt.get_month().into(), dt.get_day().into())
            .ok_or_else(|| Error::bad_argument("invalid date"))?;
    let t = date
        .and_hms_micro_opt(
            dt.get_hour().into(),
            dt.get_minute().into(),
            dt.get_second().into(),
            dt.get_microsecond(),
        )
        .ok_or_else(|| Error::bad_argument("invalid time"))?;
    Ok(t.and_utc().timestamp_micros())
}
