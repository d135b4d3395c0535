//! The store's two crossings of the boundary (SPEC §11): the rows a save writes, and a context
//! from the rows a load read. Encoding and decoding run in the core with the GIL released; the
//! SQL and the drivers are Python's (`ctxfold/stores/`).

use crate::context::{ContextCore, Core};
use crate::convert::map_to_py;
use crate::convert::JsonMap;
use crate::errors::IntoPyResult;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

/// What a save writes: the new head, the fold's length, the state (JSON text), the events
/// since the stored head as (seq, JSON text), and the content entries as (ord, hash, text).
type RowsOut = (
    u64,
    usize,
    String,
    Vec<(u64, String)>,
    Vec<(usize, String, String)>,
);

/// The rows a store lacks when it holds `core` up to `stored_seq` (`None`: nothing of it).
#[pyfunction]
pub fn store_rows(
    py: Python<'_>,
    core: &ContextCore,
    stored_seq: Option<u64>,
    runtime: JsonMap,
) -> PyResult<RowsOut> {
    let runtime = runtime.0;
    let mut g = core.lock(py);
    let c: &mut Core = &mut g;
    let rows = py.detach(|| c.rows_since(stored_seq, &runtime)).py()?;
    let content = rows
        .content
        .into_iter()
        .map(|r| (r.ord, r.hash, r.text))
        .collect();
    Ok((
        rows.next_seq,
        rows.message_count,
        rows.state,
        rows.events,
        content,
    ))
}

/// The bytes of a column value: `bytes` as they are, `str` as UTF-8.
fn column<'a>(v: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "a store column must be bytes or str, got {}",
        v.get_type().name()?
    )))
}

/// The two values of a row (a 2-tuple or any 2-item sequence).
fn pair<'py>(row: Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if let Ok(t) = row.cast::<PyTuple>() {
        if t.len() == 2 {
            return Ok((t.get_item(0)?, t.get_item(1)?));
        }
    }
    Ok((row.get_item(0)?, row.get_item(1)?))
}

/// (core, runtime fields, versioned) from a store's rows: the state, the content entries as
/// (hash, text) in their order, and the event rows as (seq, JSON text) in seq order, of which
/// the store's head says there are `head`.
#[pyfunction]
pub fn store_load<'py>(
    py: Python<'py>,
    id: &str,
    head: u64,
    state: &Bound<'py, PyAny>,
    content: &Bound<'py, PyAny>,
    events: &Bound<'py, PyAny>,
) -> PyResult<(ContextCore, Bound<'py, PyDict>, bool)> {
    let content = content
        .try_iter()?
        .map(|r| pair(r?))
        .collect::<PyResult<Vec<_>>>()?;
    let events = events
        .try_iter()?
        .map(|r| {
            let (seq, data) = pair(r?)?;
            Ok((seq.extract::<u64>()?, data))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let state = column(state)?;
    let content_bytes = content
        .iter()
        .map(|(h, t)| Ok((column(h)?, column(t)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let event_bytes = events
        .iter()
        .map(|(s, d)| Ok((*s, column(d)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let big = event_bytes.iter().map(|(_, d)| d.len() as u64).sum::<u64>() > crate::BIG_FILE;
    let loaded = py
        .detach(|| {
            let l = Core::from_rows(id, head, state, &content_bytes, &event_bytes);
            if big {
                crate::release_free_memory();
            }
            l
        })
        .py()?;
    Ok((
        ContextCore::wrap(loaded.context),
        map_to_py(py, &loaded.runtime)?,
        loaded.versioned,
    ))
}
