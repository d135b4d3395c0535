//! `Event` and `ContextCore`: the log, fold, anchors, tokens, windows and codec of one
//! context, behind one mutex. The Python `Context` adds the runtime fields around it.

use crate::convert::{self, datetime, map_to_py, to_map, Int};
use crate::convert::{JsonMap, Time};
use crate::errors::IntoPyResult;
use crate::message::{Handle, PyMessage};
use ctxfold_core::{Context, Error, Event, EventType, Message, MessageHandle, Role};
use ctxfold_core::{DataOut, Encoding, Shape};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

pub(crate) type Core = Context<Handle>;

/// One durable fact of a context's log. Immutable; compared by value.
#[pyclass(name = "Event", module = "ctxfold", frozen)]
pub struct PyEvent {
    event: Event<Handle>,
}

impl PyEvent {
    pub(crate) fn of(e: &Event<Handle>) -> PyEvent {
        PyEvent { event: e.clone() }
    }
    /// `data` as `Event.data` shows it: where the message goes, the whole message, the rest.
    fn data_out(&self) -> DataOut<'_, Handle> {
        DataOut(&self.event, Shape::Full)
    }
}

#[pymethods]
impl PyEvent {
    #[getter]
    fn seq(&self) -> u64 {
        self.event.seq
    }
    #[getter(r#type)]
    fn type_(&self) -> &'static str {
        self.event.kind.name()
    }
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDateTime>> {
        datetime(py, self.event.time)
    }
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        Ok(crate::pyser::to_object(py, &self.data_out())?.cast_into::<PyDict>()?)
    }
    /// The message of a surface event, else `None`.
    #[getter]
    fn message(&self) -> Option<Handle> {
        self.event.message.clone()
    }
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp, py: Python<'_>) -> Py<PyAny> {
        let eq = other.cast::<PyEvent>().ok().map(|o| {
            let o = o.get();
            let (a, b) = (&self.event, &o.event);
            a.seq == b.seq
                && a.kind == b.kind
                && a.time == b.time
                && serde_json::to_value(self.data_out()).ok()
                    == serde_json::to_value(o.data_out()).ok()
        });
        convert::compare(py, op, eq)
    }
    fn __hash__(&self) -> u64 {
        self.event.seq ^ (self.event.time as u64)
    }
    fn __repr__(&self) -> String {
        format!(
            "Event(seq={}, type={:?}, time={:?})",
            self.event.seq,
            self.event.kind.name(),
            ctxfold_core::to_iso(self.event.time)
        )
    }
}

/// The Rust half of a `Context`. Not part of the public API.
#[pyclass(name = "ContextCore", module = "ctxfold._core", frozen)]
pub struct ContextCore {
    inner: Mutex<Core>,
}

impl ContextCore {
    pub(crate) fn wrap(c: Core) -> ContextCore {
        ContextCore {
            inner: Mutex::new(c),
        }
    }

    /// The shown messages that pass `keep`, as a list of their Python objects. The handles
    /// are collected under the lock and made Python objects after it is released: creating
    /// objects can run the cyclic GC, and a finalizer that touches this context would then
    /// wait forever on a lock its own thread holds.
    fn shown_where<'py>(
        &self,
        py: Python<'py>,
        keep: impl Fn(&Message) -> bool,
    ) -> PyResult<Bound<'py, PyList>> {
        // Under the lock only references are taken (an incref runs no Python code); the
        // objects still to be made, and the list, are made after it is released.
        let (mut items, missing) = {
            let mut c = self.lock(py);
            let mut items: Vec<Option<Py<PyMessage>>> = Vec::with_capacity(c.shown_len());
            let mut missing: Vec<(usize, Handle)> = Vec::new();
            c.visit_messages(|h| {
                if keep(h.message()) {
                    let made = h.made(py);
                    if made.is_none() {
                        missing.push((items.len(), h.clone()));
                    }
                    items.push(made);
                }
            });
            (items, missing)
        };
        for (i, h) in missing {
            items[i] = Some(h.to_py(py)?);
        }
        PyList::new(
            py,
            items
                .into_iter()
                .map(|p| p.expect("every slot filled above")),
        )
    }

    /// Take the lock without ever waiting for it while attached: a thread that holds the lock
    /// may need the interpreter, so waiting is done detached.
    pub(crate) fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Core> {
        loop {
            match self.inner.try_lock() {
                Ok(g) => return g,
                Err(std::sync::TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => py.detach(|| drop(self.inner.lock())),
            }
        }
    }
}

impl ContextCore {
    /// The messages as shown (overlay applied, dynamic messages resolved) as handles: no
    /// Python object is made while the lock is held.
    pub(crate) fn shown_handles(&self, py: Python<'_>) -> Vec<Handle> {
        self.lock(py).messages()
    }
}

pub(crate) fn handles_to_list<'py>(py: Python<'py>, hs: &[Handle]) -> PyResult<Bound<'py, PyList>> {
    let items = hs
        .iter()
        .map(|h| h.to_py(py))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn enc(name: &str) -> PyResult<Encoding> {
    Encoding::parse(name).py()
}

fn opt_handle(m: Option<&Bound<'_, PyMessage>>) -> Option<Handle> {
    m.map(Handle::from_py)
}

#[pymethods]
impl ContextCore {
    #[new]
    #[pyo3(signature = (id=None, created_at=None))]
    fn py_new(id: Option<String>, created_at: Option<Time>) -> Self {
        let t = created_at.map_or_else(ctxfold_core::now, |t| t.0);
        ContextCore::wrap(Context::new(id.unwrap_or_else(ctxfold_core::new_id), t))
    }

    #[getter]
    fn id(&self, py: Python<'_>) -> String {
        self.lock(py).id().to_string()
    }
    #[getter]
    fn created_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDateTime>> {
        let t = self.lock(py).created_at();
        datetime(py, t)
    }
    #[getter]
    fn origin_context_id(&self, py: Python<'_>) -> Option<String> {
        self.lock(py).origin_context_id().map(str::to_string)
    }
    #[getter]
    fn children(&self, py: Python<'_>) -> Vec<String> {
        self.lock(py).children().to_vec()
    }
    #[getter]
    fn next_seq(&self, py: Python<'_>) -> u64 {
        self.lock(py).next_seq()
    }

    /// Take over another core's content map and bindings, and name it as origin.
    fn inherit(&self, py: Python<'_>, parent: &ContextCore) {
        // Copy out of the parent first: the two locks are never held together.
        let snapshot = {
            let p = parent.lock(py);
            let mut s = Context::new(p.id().to_string(), p.created_at());
            s.inherit(&p);
            s
        };
        let mut c = self.lock(py);
        c.inherit(&snapshot);
    }

    /// Insert at an anchor. Returns the event, only when asked for (someone listens: building
    /// it is most of an append's cost), and what the message does to `needs_response`.
    #[pyo3(signature = (message, anchor_point="messages", source=None, want_event=true))]
    fn append(
        &self,
        py: Python<'_>,
        message: &Bound<'_, PyMessage>,
        anchor_point: &str,
        source: Option<String>,
        want_event: bool,
    ) -> PyResult<(Option<PyEvent>, Option<bool>)> {
        let effect = message.get().inner.needs_response_after();
        let h = Handle::from_py(message);
        let mut c = self.lock(py);
        let e = c.append(h, anchor_point, source).py()?;
        Ok((want_event.then(|| PyEvent::of(e)), effect))
    }

    /// Append many at one anchor; one event each. Returns the events (when asked for) and what
    /// the batch does to `needs_response` (the last message that changes it decides).
    #[pyo3(signature = (messages, anchor_point="messages", want_events=true))]
    fn extend(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        anchor_point: &str,
        want_events: bool,
    ) -> PyResult<(Vec<PyEvent>, Option<bool>)> {
        let hs = messages
            .try_iter()?
            .map(|m| {
                let m = m?;
                let m = m
                    .cast::<PyMessage>()
                    .map_err(|_| convert::expected("a Message", &m))?;
                Ok(Handle::from_py(m))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let effect = Message::needs_response_after_all(hs.iter().map(|h| h.message()));
        let mut c = self.lock(py);
        c.anchors().position(anchor_point).py()?;
        let mut events = Vec::with_capacity(if want_events { hs.len() } else { 0 });
        for h in hs {
            let e = c.append(h, anchor_point, None).py()?;
            if want_events {
                events.push(PyEvent::of(e));
            }
        }
        Ok((events, effect))
    }

    #[pyo3(signature = (name, msg_index, after_existing=true))]
    fn add_anchor(
        &self,
        py: Python<'_>,
        name: &str,
        msg_index: Int,
        after_existing: bool,
    ) -> PyResult<()> {
        self.lock(py)
            .add_anchor(name, msg_index.0, after_existing)
            .py()
    }

    /// `None` when the range is outside the transcript.
    fn replace_range(
        &self,
        py: Python<'_>,
        first: Int,
        last: Int,
        message: &Bound<'_, PyMessage>,
    ) -> PyResult<Option<PyEvent>> {
        let h = Handle::from_py(message);
        let mut c = self.lock(py);
        c.replace_range(first.0, last.0, h)
            .map(|e| e.map(PyEvent::of))
            .py()
    }

    /// `None` when the range is outside the transcript.
    fn remove_range(&self, py: Python<'_>, first: Int, last: Int) -> PyResult<Option<PyEvent>> {
        let mut c = self.lock(py);
        c.remove_range(first.0, last.0)
            .map(|e| e.map(PyEvent::of))
            .py()
    }

    fn clear(&self, py: Python<'_>) -> PyResult<Option<PyEvent>> {
        self.lock(py).clear().map(|e| e.map(PyEvent::of)).py()
    }

    fn messages_at<'py>(&self, py: Python<'py>, seq: Int) -> PyResult<Bound<'py, PyList>> {
        let hs = {
            let mut g = self.lock(py);
            let c: &mut Core = &mut g;
            py.detach(|| c.messages_at(seq.0)).py()?
        };
        handles_to_list(py, &hs)
    }

    fn changed_since(&self, py: Python<'_>, seq: Int) -> PyResult<usize> {
        self.lock(py).changed_since(seq.0).py()
    }

    fn log_event(&self, py: Python<'_>, kind: &str, data: JsonMap) -> PyResult<PyEvent> {
        let t = EventType::parse(kind)
            .ok_or_else(|| Error::bad_argument(format!("unknown event type {kind:?}")))
            .py()?;
        let mut c = self.lock(py);
        c.log_event(t, data.0).map(PyEvent::of).py()
    }

    fn patch_dangling_tool_calls(&self, py: Python<'_>) -> PyResult<Vec<PyEvent>> {
        let mut c = self.lock(py);
        let seqs = c.patch_dangling_tool_calls().py()?;
        Ok(seqs
            .into_iter()
            .filter_map(|s| c.event(s).map(PyEvent::of))
            .collect())
    }

    /// The calls still to run, as `(id, name, arguments, message_index, raw_arguments)`
    /// (`arguments`: the decoded dict, or `None` for a string that is not a JSON object).
    fn pending_tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let calls = self.lock(py).pending_tool_calls();
        calls
            .iter()
            .map(|c| {
                let args = match &c.arguments {
                    Some(a) => map_to_py(py, a)?.into_any(),
                    None => py.None().into_bound(py),
                };
                let raw = match &c.raw_arguments {
                    Some(v) => convert::to_py(py, v)?,
                    None => py.None().into_bound(py),
                };
                PyTuple::new(
                    py,
                    [
                        c.id.as_str().into_pyobject(py)?.into_any(),
                        c.name.as_str().into_pyobject(py)?.into_any(),
                        args,
                        c.message_index.into_pyobject(py)?.into_any(),
                        raw,
                    ],
                )
            })
            .collect()
    }

    fn materialize(
        &self,
        py: Python<'_>,
        outputs: &Bound<'_, PyDict>,
    ) -> PyResult<Option<PyEvent>> {
        let mut pairs = Vec::new();
        for (k, v) in outputs.iter() {
            let k: String = k.extract()?;
            let v = v
                .cast::<pyo3::types::PyString>()
                .map_err(|_| Error::wrong_kind(format!("output of hook {k:?} must be a str")))
                .py()?;
            pairs.push((k, convert::string(v)?));
        }
        let mut c = self.lock(py);
        let seq = c.materialize(&pairs).py()?;
        Ok(seq.and_then(|s| c.event(s).map(PyEvent::of)))
    }

    #[pyo3(signature = (text))]
    fn set_overlay(&self, py: Python<'_>, text: Option<String>) {
        self.lock(py).set_overlay(text);
    }
    /// The configured system prompt, shown when the transcript has no leading system message.
    #[pyo3(signature = (text))]
    fn set_system_prompt(&self, py: Python<'_>, text: Option<String>) {
        self.lock(py).set_system_prompt(text);
    }

    fn system_prompt(&self, py: Python<'_>) -> Option<String> {
        self.lock(py).system_prompt().map(str::to_string)
    }

    #[getter]
    fn overlay(&self, py: Python<'_>) -> Option<String> {
        self.lock(py).overlay().map(str::to_string)
    }

    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.shown_where(py, |_| true)
    }

    /// The shown messages of one role, filtered in Rust (no role string per message).
    fn messages_with_role<'py>(&self, py: Python<'py>, role: &str) -> PyResult<Bound<'py, PyList>> {
        let role = Role::parse(role).py()?;
        self.shown_where(py, |m| m.role == role)
    }

    fn shown_len(&self, py: Python<'_>) -> usize {
        self.lock(py).shown_len()
    }
    fn __len__(&self, py: Python<'_>) -> usize {
        self.lock(py).len()
    }
    fn last_message(&self, py: Python<'_>) -> Option<Handle> {
        self.lock(py).last_shown()
    }
    fn events(&self, py: Python<'_>) -> Vec<PyEvent> {
        self.lock(py).events().iter().map(PyEvent::of).collect()
    }
    #[getter]
    fn anchor_points<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let list = self.lock(py).anchors().list().to_vec();
        list.iter()
            .map(|(n, i)| {
                PyTuple::new(
                    py,
                    [
                        n.into_pyobject(py)?.into_any(),
                        i.into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .collect()
    }
    #[getter]
    fn content_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let map = self.lock(py).content_map().clone();
        let d = PyDict::new(py);
        for (k, v) in map {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    #[getter]
    fn hook_index<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let idx = self.lock(py).hook_index();
        let d = PyDict::new(py);
        for (k, hs) in idx {
            d.set_item(k, handles_to_list(py, &hs)?)?;
        }
        Ok(d)
    }
    #[getter]
    fn system_prompt_message(&self, py: Python<'_>) -> Option<Handle> {
        self.lock(py).system_prompt_message()
    }
    #[getter]
    fn tool_definitions_message(&self, py: Python<'_>) -> Option<Handle> {
        self.lock(py).tool_definitions_message()
    }

    // ---- tokens and windows --------------------------------------------------------------

    #[pyo3(signature = (encoding="cl100k_base"))]
    fn total_token_count(&self, py: Python<'_>, encoding: &str) -> PyResult<u64> {
        let e = enc(encoding)?;
        let mut g = self.lock(py);
        let c: &mut Core = &mut g;
        py.detach(|| c.total_tokens(e)).py()
    }

    #[pyo3(signature = (encoding="cl100k_base"))]
    fn message_token_counts(&self, py: Python<'_>, encoding: &str) -> PyResult<Vec<u64>> {
        let e = enc(encoding)?;
        let mut g = self.lock(py);
        let c: &mut Core = &mut g;
        py.detach(|| c.message_token_counts(e)).py()
    }

    #[pyo3(signature = (system_prompt_message=None, tool_definitions_message=None, start=None, end=None))]
    fn fork_insert_sequence(
        &self,
        py: Python<'_>,
        system_prompt_message: Option<&Bound<'_, PyMessage>>,
        tool_definitions_message: Option<&Bound<'_, PyMessage>>,
        start: Option<Int>,
        end: Option<Int>,
    ) -> ContextCore {
        let (sp, td) = (
            opt_handle(system_prompt_message),
            opt_handle(tool_definitions_message),
        );
        let (start, end) = (start.map(|i| i.0), end.map(|i| i.0));
        ContextCore::wrap(self.lock(py).fork_insert_sequence(sp, td, start, end))
    }

    fn rolling_sequence_window(&self, py: Python<'_>, count: Int) -> PyResult<Option<ContextCore>> {
        let child = self.lock(py).rolling_sequence_window(count.0).py()?;
        Ok(child.map(ContextCore::wrap))
    }

    #[pyo3(signature = (max_tokens, encoding="cl100k_base"))]
    fn rolling_token_window(
        &self,
        py: Python<'_>,
        max_tokens: Int,
        encoding: &str,
    ) -> PyResult<Option<ContextCore>> {
        let e = enc(encoding)?;
        let budget = ctxfold_core::budget(max_tokens.0);
        let mut g = self.lock(py);
        let c: &mut Core = &mut g;
        let child = py.detach(|| c.rolling_token_window(budget, e)).py()?;
        Ok(child.map(ContextCore::wrap))
    }

    fn strip_thinking(&self, py: Python<'_>) -> ContextCore {
        ContextCore::wrap(self.lock(py).strip_thinking())
    }

    // ---- persistence ---------------------------------------------------------------------

    fn serialize<'py>(&self, py: Python<'py>, runtime: JsonMap) -> PyResult<Bound<'py, PyDict>> {
        let runtime = runtime.0;
        let mut g = self.lock(py);
        let c: &mut Core = &mut g;
        let doc = c.document(&runtime);
        // Straight from the live context into dicts and lists: no JSON tree in between.
        let obj = convert::with_gc_paused(py, || crate::pyser::to_object(py, &doc))?;
        Ok(obj.cast_into::<PyDict>()?)
    }

    fn save(&self, py: Python<'_>, session_dir: PathBuf, runtime: JsonMap) -> PyResult<PathBuf> {
        let runtime = runtime.0;
        let mut g = self.lock(py);
        let c: &mut Core = &mut g;
        py.detach(|| {
            let saved = c.save(&session_dir, runtime);
            if saved
                .as_ref()
                .is_ok_and(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > crate::BIG_FILE))
            {
                crate::release_free_memory();
            }
            saved
        })
        .py()
    }

    fn file_name(&self, py: Python<'_>) -> PyResult<String> {
        self.lock(py).file_name().py()
    }

    /// (core, runtime fields, versioned) from a file.
    #[staticmethod]
    fn load_file<'py>(
        py: Python<'py>,
        path: PathBuf,
    ) -> PyResult<(ContextCore, Bound<'py, PyDict>, bool)> {
        let l = py
            .detach(|| {
                let loaded = Core::load_file(&path);
                if std::fs::metadata(&path).is_ok_and(|m| m.len() > crate::BIG_FILE) {
                    crate::release_free_memory();
                }
                loaded
            })
            .py()?;
        Ok((
            ContextCore::wrap(l.context),
            map_to_py(py, &l.runtime)?,
            l.versioned,
        ))
    }

    /// (core, runtime fields, versioned) from a dict; `require_version` for `deserialize`.
    #[staticmethod]
    fn load_dict<'py>(
        py: Python<'py>,
        d: &Bound<'py, PyAny>,
        require_version: bool,
    ) -> PyResult<(ContextCore, Bound<'py, PyDict>, bool)> {
        let d = d.cast::<PyDict>().map_err(|_| {
            crate::errors::to_py(ctxfold_core::Error::undecodable(
                "expected a dict at the top level",
            ))
        })?;
        let v = Value::Object(to_map(d).map_err(crate::errors::Failure::in_input)?);
        let l = py.detach(|| Core::load_value(&v, require_version)).py()?;
        Ok((
            ContextCore::wrap(l.context),
            map_to_py(py, &l.runtime)?,
            l.versioned,
        ))
    }
}
