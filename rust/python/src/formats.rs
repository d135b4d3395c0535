//! The provider formats (docs/formats.md), as thin functions: convert the arguments, plan the request
//! and build its tree in the core detached from the interpreter, then build the Python objects
//! from that tree attached (`export_cache::Build`: a message's share of the request, its piece,
//! is made there, and only when the export cache has no copy of it to give).

use crate::context::ContextCore;
use crate::errors::{Failure, IntoPyResult};
use crate::message::{message_from_rust, Handle, PyMessage};
use ctxfold_core::{Error, Message, MessageHandle};
use ctxfold_core::{ExportOptions, Format};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

/// A provider's value for an importer (`convert::Policy::Import`): JSON, or the SDKs' pydantic
/// objects as they dump; else a `FormatError` at the place (the caller adds where the value
/// itself is).
fn json_in(o: &Bound<'_, PyAny>) -> Result<Value, Failure> {
    crate::convert::json(o, crate::convert::Policy::Import).map(|v| v.unwrap_or(Value::Null))
}

/// The top-level list an importer takes: any iterable (a list, a generator, SDK objects).
fn list_in(o: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let not_list = || {
        let got = o
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        crate::errors::to_py(
            Error::unconvertible(format!("expected a list, got {got}")).at_key(what),
        )
    };
    if o.cast::<PyDict>().is_ok() || o.cast::<PyString>().is_ok() {
        return Err(not_list());
    }
    let iter = o.try_iter().map_err(|_| not_list())?;
    let items = iter
        .enumerate()
        .map(|(i, x)| json_in(&x?).map_err(|e| PyErr::from(e.at_index(i).at_key(what))))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Value::Array(items))
}

fn messages_out<'py>(py: Python<'py>, ms: Vec<Message>) -> PyResult<Bound<'py, PyList>> {
    let objs = ms
        .into_iter()
        .map(|m| message_from_rust(py, m))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objs)
}

/// The messages of a request's source: a context's core (its messages as shown) or a list
/// of messages.
pub(crate) fn handles_of(py: Python<'_>, src: &Bound<'_, PyAny>) -> PyResult<Vec<Handle>> {
    if let Ok(core) = src.cast::<ContextCore>() {
        return Ok(core.get().shown_handles(py));
    }
    let list = src.cast::<PyList>()?;
    list.iter()
        .map(|m| Ok(Handle::from_py(m.cast::<PyMessage>()?)))
        .collect()
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
    let handles = handles_of(py, src)?;
    let refs: Vec<&Message> = handles.iter().map(|h| h.message()).collect();
    let opts = ExportOptions {
        strict,
        instructions,
        pair,
    };
    let request = py.detach(|| ctxfold_core::export(f, &refs, opts)).py()?;
    let obj = crate::convert::with_gc_paused(py, || {
        crate::export_cache::Build::new(py, &handles, &refs).object(&request)
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
    let v = list_in(data, f.input_name())?;
    let sys = match system {
        Some(s) if !s.is_none() => Some(json_in(s).map_err(|e| e.at_key("system"))?),
        _ => None,
    };
    let ms = py
        .detach(|| ctxfold_core::import(f, &v, sys.as_ref()))
        .py()?;
    messages_out(py, ms)
}

/// A provider's answer: (messages, usage to add).
#[pyfunction]
pub fn format_response<'py>(
    py: Python<'py>,
    response: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let v = json_in(response).map_err(|e| e.at_key("response"))?;
    let (ms, usage) = py.detach(|| ctxfold_core::import_response(&v)).py()?;
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
    py.detach(|| ctxfold_core::tool_list(&v)).py()
}
