//! The provider formats of SPEC §10, as thin functions: convert the arguments, release the GIL
//! around the JSON work in the core, build the Python objects straight from the core's output.

use crate::context::ContextCore;
use crate::errors::IntoPyResult;
use crate::message::{message_from_rust, Handle, PyMessage};
use ctxfold_core::formats::{self, ExportOptions, Format};
use ctxfold_core::{Error, Message, MessageHandle};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

fn format_err(m: String) -> PyErr {
    crate::errors::to_py(Error::Format(m))
}

/// A Python value as JSON for an importer: dicts, lists, tuples and scalars, and anything
/// with pydantic's `model_dump` (the SDKs' objects) as what it dumps. Else a `FormatError`
/// naming the place.
fn json_in(o: &Bound<'_, PyAny>, at: &mut String, depth: usize) -> PyResult<Value> {
    if depth > crate::convert::MAX_DEPTH {
        return Err(format_err(format!("{at}: nested too deeply")));
    }
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = o.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_string()))
            .map_err(|_| format_err(format!("{at}: text with lone surrogates")));
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
        return Err(format_err(format!("{at}: integer out of the 64-bit range")));
    }
    if let Ok(f) = o.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| format_err(format!("{at}: NaN and infinity are not JSON")));
    }
    if let Ok(d) = o.cast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let k = k
                .cast::<PyString>()
                .ok()
                .and_then(|k| k.to_str().ok().map(str::to_string))
                .ok_or_else(|| format_err(format!("{at}: object keys must be str")))?;
            let n = at.len();
            at.push('.');
            at.push_str(&k);
            let v = json_in(&v, at, depth + 1)?;
            at.truncate(n);
            m.insert(k, v);
        }
        return Ok(Value::Object(m));
    }
    if o.cast::<PyList>().is_ok() || o.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (i, x) in o.try_iter()?.enumerate() {
            let n = at.len();
            at.push_str(&format!("[{i}]"));
            items.push(json_in(&x?, at, depth + 1)?);
            at.truncate(n);
        }
        return Ok(Value::Array(items));
    }
    if o.hasattr("model_dump")? {
        let kw = PyDict::new(o.py());
        kw.set_item("mode", "json")?;
        kw.set_item("exclude_unset", true)?;
        let dumped = o.call_method("model_dump", (), Some(&kw))?;
        return json_in(&dumped, at, depth + 1);
    }
    Err(format_err(format!(
        "{at}: {} is not JSON (expected a dict, a list, a scalar or a pydantic object)",
        o.get_type().name()?
    )))
}

/// The top-level list an importer takes: any iterable (a list, a generator, SDK objects).
fn list_in(o: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let mut at = what.to_string();
    if o.cast::<PyDict>().is_ok() || o.cast::<PyString>().is_ok() {
        return Err(format_err(format!(
            "{what}: expected a list, got {}",
            o.get_type().name()?
        )));
    }
    let iter = o.try_iter().map_err(|_| {
        format_err(format!(
            "{what}: expected a list, got {}",
            o.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut items = Vec::new();
    for (i, x) in iter.enumerate() {
        let n = at.len();
        at.push_str(&format!("[{i}]"));
        items.push(json_in(&x?, &mut at, 1)?);
        at.truncate(n);
    }
    Ok(Value::Array(items))
}

fn messages_out<'py>(py: Python<'py>, ms: Vec<Message>) -> PyResult<Bound<'py, PyList>> {
    let objs = ms
        .into_iter()
        .map(|m| message_from_rust(py, m))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objs)
}

/// The request's keyword arguments for a context (its messages as shown) or a list of messages.
/// `pair=False` (Responses only): the items as they are, with no pairing plan.
#[pyfunction]
#[pyo3(signature = (format, src, strict, instructions, pair=true))]
pub fn format_export<'py>(
    py: Python<'py>,
    format: &str,
    src: &Bound<'py, PyAny>,
    strict: bool,
    instructions: bool,
    pair: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let f = Format::parse(format).py()?;
    let handles: Vec<Handle> = if let Ok(core) = src.cast::<ContextCore>() {
        core.get().shown_handles(py)
    } else {
        let list = src.cast::<PyList>()?;
        list.iter()
            .map(|m| Ok(Handle::from_py(m.cast::<PyMessage>()?)))
            .collect::<PyResult<_>>()?
    };
    let refs: Vec<&Message> = handles.iter().map(|h| h.message()).collect();
    let opts = ExportOptions {
        strict,
        instructions,
        pair,
    };
    let request = py.detach(|| formats::export(f, &refs, opts)).py()?;
    let obj = crate::convert::with_gc_paused(py, || {
        crate::request::Build::new(py, &handles, &refs).object(&request)
    })?;
    Ok(obj.cast_into::<PyDict>()?)
}

/// Messages from a request's messages (Anthropic: and its `system`).
#[pyfunction]
#[pyo3(signature = (format, data, system=None))]
pub fn format_import<'py>(
    py: Python<'py>,
    format: &str,
    data: &Bound<'py, PyAny>,
    system: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let f = Format::parse(format).py()?;
    let what = if f == Format::OpenAiResponses {
        "items"
    } else {
        "messages"
    };
    let v = list_in(data, what)?;
    let sys = match system {
        Some(s) if !s.is_none() => Some(json_in(s, &mut "system".to_string(), 0)?),
        _ => None,
    };
    let ms = py.detach(|| formats::import(f, &v, sys.as_ref())).py()?;
    messages_out(py, ms)
}

/// A provider's answer: (messages, usage to add).
#[pyfunction]
pub fn format_response<'py>(
    py: Python<'py>,
    response: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let v = json_in(response, &mut "response".to_string(), 0)?;
    let (ms, usage) = py.detach(|| formats::response::response(&v)).py()?;
    let d = PyDict::new(py);
    for (k, n) in usage {
        d.set_item(k, n)?;
    }
    Ok((messages_out(py, ms)?, d))
}

/// Any API's `tools` as the text of the `tool_list` hook.
#[pyfunction]
pub fn format_tool_list(py: Python<'_>, tools: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = list_in(tools, "tools")?;
    py.detach(|| formats::tools::tool_list(&v)).py()
}
