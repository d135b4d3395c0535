//! The core's plan of a request, handed to the exporters that build a framework's objects in
//! Python (LangChain, Pydantic AI): converted, nothing decided here.

use crate::convert::{map_to_py, to_py};
use crate::errors::IntoPyResult;
use crate::formats::handles_of;
use ctxfold_core::{Message, MessageHandle};
use ctxfold_core::{OutlineStep, Target};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyRange, PyTuple};

/// A call of an assistant message, as the request makes it.
#[pyclass(frozen, get_all, module = "ctxfold._core", name = "PlanCall")]
pub struct PlanCall {
    /// The call id in the message.
    id: Py<PyAny>,
    /// The id sent (`id`, or its mapping into the target's ids).
    sent: Py<PyAny>,
    /// The tool's name (`""` when the call has none).
    name: Py<PyAny>,
    arguments: Py<PyAny>,
    /// Where the message writes it: its `tool_calls` entry and its `tool_use` part (an index
    /// into the content), either or both.
    entry: Option<u32>,
    part: Option<u32>,
}

/// An answer placed right after its call's turn.
#[pyclass(frozen, get_all, module = "ctxfold._core", name = "PlanAnswer")]
pub struct PlanAnswer {
    /// The call it answers.
    call: Py<PlanCall>,
    /// The message that holds it (`None`: the call is never answered and gets the interrupted
    /// result, in the request only) and, for a user message, its `tool_result` part.
    message: Option<usize>,
    part: Option<u32>,
    /// The call id sent with it.
    sent: Py<PyAny>,
}

/// The request for a transcript, as the core planned it: which messages are sent where,
/// which answer meets which call, the repairs made and the ids changed.
#[pyclass(frozen, get_all, module = "ctxfold._core", name = "FormatPlan")]
pub struct FormatPlan {
    /// The messages of the request (the tool definitions message left out).
    messages: Py<PyList>,
    /// In order: `("message", i)` for a message sent where it is, or `("turn", range(i, j),
    /// [answers])` for a run of assistant messages followed by the answers to their calls.
    steps: Py<PyList>,
    /// For each message, its calls (a tuple, empty but for assistant messages).
    calls: Py<PyList>,
    /// For each message, what the target's importer kept on it (`metadata["interop"]`), or
    /// `None` for a message from anywhere else.
    interop: Py<PyList>,
    /// Every repair, in words (what `strict=True` refuses with).
    problems: Py<PyList>,
    /// The calls sent under another id: `{id: id sent}`.
    ids: Py<PyDict>,
}

/// The core's plan of the request for `src` (a context's messages as shown, or a list of
/// messages) in `format`; `strict`: a `FormatError` listing every repair instead.
#[pyfunction]
#[pyo3(signature = (format, src, strict=false))]
pub fn format_plan<'py>(
    py: Python<'py>,
    format: &str,
    src: &Bound<'py, PyAny>,
    strict: bool,
) -> PyResult<FormatPlan> {
    let target = Target::parse(format).py()?;
    let handles = handles_of(py, src)?;
    let refs: Vec<&Message> = handles.iter().map(|h| h.message()).collect();
    let o = target.outline(&refs, strict).py()?;

    let messages = PyList::empty(py);
    for &k in &o.source {
        messages.append(handles[k].to_py(py)?)?;
    }
    let mut calls: Vec<Py<PlanCall>> = Vec::with_capacity(o.calls.len());
    for c in &o.calls {
        let call = PlanCall {
            id: c.id.into_pyobject(py)?.into_any().unbind(),
            sent: c.sent.as_ref().into_pyobject(py)?.into_any().unbind(),
            name: c.name.into_pyobject(py)?.into_any().unbind(),
            arguments: match c.arguments {
                Some(v) => to_py(py, v)?.unbind(),
                None => py.None(),
            },
            entry: c.entry,
            part: c.part,
        };
        calls.push(Py::new(py, call)?);
    }
    let by_message = PyList::empty(py);
    let interops = PyList::empty(py);
    let none = PyTuple::empty(py);
    for (i, m) in o.msgs.iter().enumerate() {
        let r = o.calls_of(i);
        if r.is_empty() {
            by_message.append(&none)?;
        } else {
            by_message.append(PyTuple::new(py, calls[r].iter().map(|c| c.clone_ref(py)))?)?;
        }
        match ctxfold_core::interop_of(m, target.name()) {
            Some(i) => interops.append(map_to_py(py, i)?)?,
            None => interops.append(py.None())?,
        }
    }
    let answers = o
        .answers
        .iter()
        .map(|a| {
            Py::new(
                py,
                PlanAnswer {
                    call: calls[a.call as usize].clone_ref(py),
                    message: a.message,
                    part: a.part,
                    sent: a.sent.as_ref().into_pyobject(py)?.into_any().unbind(),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    let steps = PyList::empty(py);
    for s in &o.steps {
        match s {
            OutlineStep::Message(i) => steps.append(("message", *i))?,
            OutlineStep::Turn { msgs, answers: r } => {
                let range = PyRange::new(py, msgs.start as isize, msgs.end as isize)?;
                let placed = PyList::new(py, answers[r.clone()].iter().map(|a| a.clone_ref(py)))?;
                steps.append(("turn", range, placed))?;
            }
        }
    }
    let ids = PyDict::new(py);
    for (id, sent) in &o.ids {
        ids.set_item(*id, sent)?;
    }
    Ok(FormatPlan {
        messages: messages.unbind(),
        steps: steps.unbind(),
        calls: by_message.unbind(),
        interop: interops.unbind(),
        problems: PyList::new(py, &o.problems)?.unbind(),
        ids: ids.unbind(),
    })
}
