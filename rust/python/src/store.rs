//! The store's crossings of the boundary: the rows a save writes, a context from the
//! rows a load read, the rows a refresh applies to a loaded context (and the savepoint a writer
//! that lost a race rewinds to before it refreshes). Encoding and decoding run in the core with the GIL released; the
//! SQL and the drivers are Python's (`ctxfold/stores/`).

use crate::context::{ContextCore, Core};
use crate::convert::map_to_py;
use crate::convert::JsonMap;
use crate::errors::IntoPyResult;
use ctxfold_core::Error;
use ctxfold_core::Savepoint;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyString, PyTuple};

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
    Err(Error::wrong_kind(format!(
        "a store column must be bytes or str, got {}",
        v.get_type().name()?
    )))
    .py()
}

/// An event row's seq: a non-negative int (not a bool). A database that holds anything else
/// there (SQLite stores any type in any column) holds a corrupt row.
fn seq_column(id: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if !v.is_instance_of::<PyBool>() {
        if let Ok(seq) = v.extract::<u64>() {
            return Ok(seq);
        }
    }
    let shown: String = v.repr()?.to_string().chars().take(40).collect();
    Err(
        Error::undecodable("an event row's seq is not a non-negative integer")
            .within(format!("seq {shown}"))
            .within(format!("context {id}")),
    )
    .py()
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
    /// `id` names the context in the error for a seq column that is not a seq.
    fn read(id: &str, content: &Bound<'py, PyAny>, events: &Bound<'py, PyAny>) -> PyResult<Self> {
        let content = content
            .try_iter()?
            .map(|r| pair(r?))
            .collect::<PyResult<Vec<_>>>()?;
        let events = events
            .try_iter()?
            .map(|r| {
                let (seq, data) = pair(r?)?;
                Ok((seq_column(id, &seq)?, data))
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
    let rows = RowObjects::read(id, content, events)?;
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

/// Catch `core`, stored at `expected`, up with the rows a store read for it from seq
/// `expected - 1` on (the state, the content entries as (hash, text) it may lack, the event
/// rows as (seq, JSON text) up to `head`), in one step under the context's lock: the rows are
/// checked against the context as it is, `check` is called with the state's runtime fields
/// (it raises to refuse them, else returns what to set), and only then are the rows applied.
/// → (events appended, what `check` returned); `ConflictError` when the store cannot catch the
/// context up (it holds unsaved events, or the rows are another history). A corrupt row is a
/// `DecodeError` naming the context and seq; whatever is raised, the context is unchanged.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn store_refresh<'py>(
    py: Python<'py>,
    core: &ContextCore,
    expected: u64,
    head: u64,
    state: &Bound<'py, PyAny>,
    content: &Bound<'py, PyAny>,
    events: &Bound<'py, PyAny>,
    check: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut g = core.lock(py);
    let c: &mut Core = &mut g;
    let id = c.id().to_string();
    let rows = RowObjects::read(&id, content, events)?;
    let state = column(state)?;
    let (content_bytes, event_bytes) = rows.bytes()?;
    let prepared =
        py.detach(|| c.prepare_refresh(expected, head, state, &content_bytes, &event_bytes));
    // A refusal (unsaved events, another history) is the core's Conflict error.
    let p = prepared.map_err(ctxfold_core::Error::from).py()?;
    // Called with the lock held: `check` only reads its argument, and a thread waiting for
    // this context waits detached, so the interpreter stays free.
    let fields = check.call1((map_to_py(py, &p.runtime)?,))?;
    let applied = py.detach(|| c.apply_prepared(p)).py()?;
    Ok((applied, fields).into_pyobject(py)?.into_any())
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
