//! The store's crossings of the boundary: the rows a save writes, a context from the
//! rows a load read, the rows a refresh applies to a loaded context (and the savepoint a writer
//! that lost a race rewinds to before it refreshes). Encoding and decoding run in the core with the GIL released; the
//! SQL and the drivers are Python's (`ctxfold/stores/`).

use crate::context::{ContextCore, Core};
use crate::convert::map_to_py;
use crate::convert::JsonMap;
use crate::errors::IntoPyResult;
use ctxfold_core::codec::refresh::Prepared;
use ctxfold_core::savepoint::Savepoint;
use pyo3::exceptions::{PyTypeError, PyValueError};
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

/// A read's content entries (hash, text) and event rows (seq, data) as the driver returned
/// them, held so that their bytes can be borrowed while the core reads them.
struct RowObjects<'py> {
    content: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    events: Vec<(u64, Bound<'py, PyAny>)>,
}

impl<'py> RowObjects<'py> {
    fn read(content: &Bound<'py, PyAny>, events: &Bound<'py, PyAny>) -> PyResult<Self> {
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
        Ok(RowObjects { content, events })
    }

    #[allow(clippy::type_complexity)]
    fn bytes(&self) -> PyResult<(Vec<(&[u8], &[u8])>, Vec<(u64, &[u8])>)> {
        let content = self
            .content
            .iter()
            .map(|(h, t)| Ok((column(h)?, column(t)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let events = self
            .events
            .iter()
            .map(|(s, d)| Ok((*s, column(d)?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((content, events))
    }
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
    let rows = RowObjects::read(content, events)?;
    let state = column(state)?;
    let (content_bytes, event_bytes) = rows.bytes()?;
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

/// Rows checked against a context by `store_refresh_prepare`, to apply with
/// `store_refresh_apply`. Not part of the public API.
#[pyclass(name = "PreparedRows", module = "ctxfold._core", frozen)]
pub struct PreparedRows {
    rows: std::sync::Mutex<Option<Prepared>>,
    runtime: Py<PyDict>,
    events: usize,
}

#[pymethods]
impl PreparedRows {
    /// The state's runtime fields, for the facade to check and set.
    #[getter]
    fn runtime(&self, py: Python<'_>) -> Py<PyDict> {
        self.runtime.clone_ref(py)
    }
    /// How many events applying appends.
    #[getter]
    fn event_count(&self) -> usize {
        self.events
    }
}

/// Check the rows a store holds past `core`'s `next_seq` (the state, the content entries as
/// (hash, text) the context may lack, the event rows as (seq, JSON text) up to `head`),
/// changing nothing: the rows ready to apply. Rows of another context's history are a
/// `ConflictError`; a corrupt row is a `DecodeError` naming the context and seq.
#[pyfunction]
pub fn store_refresh_prepare<'py>(
    py: Python<'py>,
    core: &ContextCore,
    head: u64,
    state: &Bound<'py, PyAny>,
    content: &Bound<'py, PyAny>,
    events: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PreparedRows>> {
    let rows = RowObjects::read(content, events)?;
    let state = column(state)?;
    let (content_bytes, event_bytes) = rows.bytes()?;
    let g = core.lock(py);
    let c: &Core = &g;
    let prepared = py.detach(|| c.prepare_rows(head, state, &content_bytes, &event_bytes));
    drop(g);
    let p = prepared.map_err(ctxfold_core::Error::from).py()?;
    let runtime = map_to_py(py, &p.runtime)?.unbind();
    let events = p.event_count();
    let rows = PreparedRows {
        rows: std::sync::Mutex::new(Some(p)),
        runtime,
        events,
    };
    Bound::new(py, rows)
}

/// Apply rows `store_refresh_prepare` checked against `core` as it still is; how many events
/// were appended. Rows apply once.
#[pyfunction]
pub fn store_refresh_apply(
    py: Python<'_>,
    core: &ContextCore,
    rows: &PreparedRows,
) -> PyResult<usize> {
    let taken = rows
        .rows
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .ok_or_else(|| PyValueError::new_err("these rows were applied already"))?;
    let mut g = core.lock(py);
    let c: &mut Core = &mut g;
    py.detach(|| c.apply_prepared(taken)).py()
}

/// Whether `row` (an event's JSON text) is `core`'s event `seq`.
#[pyfunction]
pub fn store_holds_event(
    py: Python<'_>,
    core: &ContextCore,
    seq: u64,
    row: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let row = column(row)?;
    Ok(core.lock(py).holds_event_row(seq, row))
}

/// A savepoint of a context's log (`context_savepoint`), to rewind its unsaved events to.
/// Not part of the public API.
#[pyclass(name = "Savepoint", module = "ctxfold._core", frozen)]
pub struct PySavepoint {
    point: Savepoint,
}

#[pymethods]
impl PySavepoint {
    #[getter]
    fn seq(&self) -> u64 {
        self.point.seq()
    }
}

#[pyfunction]
pub fn context_savepoint(py: Python<'_>, core: &ContextCore) -> PySavepoint {
    PySavepoint {
        point: core.lock(py).savepoint(),
    }
}

/// Drop the events since `point` and restore the context as it was then.
#[pyfunction]
pub fn context_rewind(py: Python<'_>, core: &ContextCore, point: &PySavepoint) -> PyResult<()> {
    core.lock(py).rewind(&point.point).py()
}
