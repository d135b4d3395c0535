//! `Message`, its two special subclasses, `Part`, and the handle through which the core holds
//! a message: the Python object itself (so `messages` gives back what was appended) or, for a
//! message the core derived, the Rust value plus the Python object made for it on first read.

use crate::args::{ContentArg, FieldsArg};
use crate::convert::{self, datetime, JsonOut};
use crate::convert::{Json, JsonMap};
use crate::errors::IntoPyResult;
use crate::export_cache::{Leaves, MessageCache, Pieces};
use crate::part::parts_list;
use ctxfold_core::Fields;
use ctxfold_core::{message_tokens, Encoding};
use ctxfold_core::{Content, Kind, Message, MessageHandle, Role};
use ctxfold_core::{MessageOut, Shape};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::PyClassInitializer;
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

// ---- handle -------------------------------------------------------------------------------

enum Slot {
    Py(Py<PyMessage>),
    Rust(Arc<Message>, OnceLock<Py<PyMessage>>),
}

#[derive(Clone)]
pub struct Handle(Arc<Slot>);

impl MessageHandle for Handle {
    fn message(&self) -> &Message {
        match &*self.0 {
            Slot::Py(p) => &p.get().inner,
            Slot::Rust(m, _) => m,
        }
    }
    fn wrap(m: Message) -> Self {
        Handle(Arc::new(Slot::Rust(Arc::new(m), OnceLock::new())))
    }
}

/// A message going back to Python is its handle's object (made on first read).
impl<'py> IntoPyObject<'py> for Handle {
    type Target = PyMessage;
    type Output = Bound<'py, PyMessage>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyMessage>> {
        self.to_py(py).map(|p| p.into_bound(py))
    }
}

impl Handle {
    pub fn from_py(m: &Bound<'_, PyMessage>) -> Handle {
        Handle(Arc::new(Slot::Py(m.clone().unbind())))
    }

    /// The Python object, if it exists already (a new reference; makes nothing).
    pub fn made(&self, py: Python<'_>) -> Option<Py<PyMessage>> {
        match &*self.0 {
            Slot::Py(p) => Some(p.clone_ref(py)),
            Slot::Rust(_, cell) => cell.get().map(|p| p.clone_ref(py)),
        }
    }

    pub fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyMessage>> {
        match &*self.0 {
            Slot::Py(p) => Ok(p.clone_ref(py)),
            Slot::Rust(m, cell) => {
                if let Some(p) = cell.get() {
                    return Ok(p.clone_ref(py));
                }
                let p = new_message(py, m.clone())?;
                Ok(cell.get_or_init(|| p).clone_ref(py))
            }
        }
    }
}

impl Handle {
    /// Its Python object, made now if the core's message has none yet.
    fn object(&self, py: Python<'_>) -> PyResult<&PyMessage> {
        match &*self.0 {
            Slot::Py(p) => Ok(p.get()),
            Slot::Rust(m, cell) => {
                let p = match cell.get() {
                    Some(p) => p,
                    None => {
                        let made = new_message(py, m.clone())?;
                        cell.get_or_init(|| made)
                    }
                };
                Ok(p.get())
            }
        }
    }

    /// The message's strings as Python strings, made once (`export_cache`); they live with
    /// its Python object.
    pub fn leaves(&self, py: Python<'_>) -> PyResult<&Leaves> {
        Ok(self.object(py)?.cache.leaves())
    }

    /// What it exported to, kept for the next request (`export_cache`); with its Python
    /// object.
    pub fn pieces(&self, py: Python<'_>) -> PyResult<&Pieces> {
        Ok(self.object(py)?.cache.pieces())
    }
}

/// A Python object of the class the message's kind names.
pub fn new_message(py: Python<'_>, m: Arc<Message>) -> PyResult<Py<PyMessage>> {
    let kind = m.kind;
    let base = PyClassInitializer::from(PyMessage::new(m));
    let obj: Bound<'_, PyMessage> = match kind {
        Kind::Plain => Bound::new(py, base)?,
        Kind::SystemPrompt => {
            Bound::new(py, base.add_subclass(PySystemPromptMessage))?.into_super()
        }
        Kind::ToolDefinitions => {
            Bound::new(py, base.add_subclass(PyToolDefinitionsMessage))?.into_super()
        }
    };
    Ok(obj.unbind())
}

/// `Message.to_dict()`: every key, straight into a dict.
fn message_dict<'py>(py: Python<'py>, m: &Message) -> PyResult<Bound<'py, PyDict>> {
    let out = MessageOut(m, Shape::Full);
    Ok(crate::pyser::to_object(py, &out)?.cast_into::<PyDict>()?)
}

pub fn message_from_rust(py: Python<'_>, m: Message) -> PyResult<Py<PyMessage>> {
    new_message(py, Arc::new(m))
}

// ---- Message --------------------------------------------------------------------------------

/// One message of a transcript: an immutable value, compared by value, hashed by id.
#[pyclass(name = "Message", module = "ctxfold", subclass, frozen)]
pub struct PyMessage {
    pub inner: Arc<Message>,
    /// Its strings as sent in requests and what it exported to (`export_cache`).
    cache: MessageCache,
}

impl PyMessage {
    pub fn new(inner: Arc<Message>) -> PyMessage {
        PyMessage {
            inner,
            cache: MessageCache::new(),
        }
    }
}

#[pymethods]
impl PyMessage {
    #[new]
    #[pyo3(
        signature = (role, content=None, **fields),
        text_signature = "(role, content=None, *, name=None, tool_calls=None, tool_call_id=None, metadata=None, created_at=None, id=None, hook_ids=None)"
    )]
    fn py_new(
        role: &str,
        content: Option<ContentArg>,
        fields: Option<FieldsArg>,
    ) -> PyResult<Self> {
        let m = build(role, content, Kind::Plain, fields)?;
        Ok(PyMessage::new(Arc::new(m)))
    }

    #[classmethod]
    #[pyo3(signature = (content, **fields))]
    fn system(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        content: ContentArg,
        fields: Option<FieldsArg>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("system", Some(content), Kind::Plain, fields)?)
    }

    /// A developer message: instructions from the application, which providers that know the
    /// role weigh above the user's (OpenAI), and others take as a system message.
    #[classmethod]
    #[pyo3(signature = (content, **fields))]
    fn developer(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        content: ContentArg,
        fields: Option<FieldsArg>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("developer", Some(content), Kind::Plain, fields)?)
    }

    #[classmethod]
    #[pyo3(signature = (content, **fields))]
    fn user(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        content: ContentArg,
        fields: Option<FieldsArg>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("user", Some(content), Kind::Plain, fields)?)
    }

    #[classmethod]
    #[pyo3(signature = (content=None, **fields))]
    fn assistant(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        content: Option<ContentArg>,
        fields: Option<FieldsArg>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("assistant", content, Kind::Plain, fields)?)
    }

    /// A tool result; a non-str result is stored as its compact JSON (the core's rule).
    #[classmethod]
    #[pyo3(signature = (tool_call_id, result, **fields))]
    fn tool(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        tool_call_id: String,
        result: Json,
        fields: Option<FieldsArg>,
    ) -> PyResult<Py<PyMessage>> {
        let m = Message::tool_result(tool_call_id, result.0, FieldsArg::of(fields)).py()?;
        message_from_rust(py, m)
    }

    #[classmethod]
    #[pyo3(signature = (role, content_parts, metadata=None))]
    fn create(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        role: &str,
        content_parts: ContentArg,
        metadata: Option<JsonMap>,
    ) -> PyResult<Py<PyMessage>> {
        let fields = Fields {
            metadata: metadata.map(|m| m.0),
            ..Fields::default()
        };
        let m = Message::build(
            Role::parse(role).py()?,
            content_parts.0,
            Kind::Plain,
            fields,
        );
        message_from_rust(py, m.py()?)
    }

    /// Read what `to_dict` writes, or any subset of it (`role` required).
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, py: Python<'_>, d: JsonMap) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, Message::from_json(&Value::Object(d.0)).py()?)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        message_dict(py, &self.inner)
    }

    /// A copy with some fields changed.
    #[pyo3(signature = (**changes))]
    fn replace(&self, py: Python<'_>, changes: Option<FieldsArg>) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, self.inner.with(FieldsArg::of(changes)).py()?)
    }

    #[pyo3(signature = (encoding="cl100k_base"))]
    fn count_tokens(&self, py: Python<'_>, encoding: &str) -> PyResult<u64> {
        let enc = Encoding::parse(encoding).py()?;
        let m = self.inner.clone();
        py.detach(|| message_tokens(&m, enc)).py()
    }

    #[getter]
    fn role<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyString> {
        // Interned: reading a role allocates nothing, and `==` against a literal is a pointer test.
        pyo3::types::PyString::intern(py, self.inner.role.as_str())
    }
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match &self.inner.content {
            Content::None => py.None().into_bound(py),
            Content::Text(t) => PyString::new(py, t).into_any(),
            Content::Parts(p) => parts_list(py, p)?.into_any(),
        })
    }
    #[getter]
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        parts_list(py, &self.inner.parts())
    }
    #[getter]
    fn text(&self) -> String {
        self.inner.text()
    }
    #[getter]
    fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }
    #[getter]
    fn tool_calls(&self) -> JsonOut<'_, [Map<String, Value>]> {
        JsonOut(&self.inner.tool_calls)
    }
    #[getter]
    fn tool_call_id(&self) -> Option<&str> {
        self.inner.tool_call_id.as_deref()
    }
    #[getter]
    fn metadata(&self) -> JsonOut<'_, Map<String, Value>> {
        JsonOut(&self.inner.metadata)
    }
    #[getter]
    fn created_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDateTime>> {
        datetime(py, self.inner.created_at)
    }
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }
    #[getter]
    fn hook_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.hook_ids)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp, py: Python<'_>) -> Py<PyAny> {
        let eq = other
            .cast::<PyMessage>()
            .ok()
            .map(|o| *self.inner == *o.get().inner);
        convert::compare(py, op, eq)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &self.inner.id).hash()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let m = &slf.get().inner;
        let cls = slf.get_type().name()?;
        let content = match &m.content {
            Content::None => "None".to_string(),
            Content::Text(t) => {
                let short: String = t.chars().take(60).collect();
                format!(
                    "{:?}{}",
                    short,
                    if t.chars().count() > 60 { "…" } else { "" }
                )
            }
            Content::Parts(p) => format!("[{} parts]", p.len()),
        };
        Ok(format!(
            "{cls}(role={:?}, content={content}, id={:?})",
            m.role.as_str(),
            m.id
        ))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let f = slf.get_type().getattr("from_dict")?;
        Ok((f, (message_dict(slf.py(), &slf.get().inner)?,)))
    }

    fn __copy__(slf: &Bound<'_, Self>) -> Py<Self> {
        slf.clone().unbind()
    }

    fn __deepcopy__(slf: &Bound<'_, Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf.clone().unbind()
    }
}

/// The system prompt a context keeps in its `system_prompt` slot; may carry hooks.
#[pyclass(name = "SystemPromptMessage", module = "ctxfold", extends = PyMessage, frozen)]
pub struct PySystemPromptMessage;

#[pymethods]
impl PySystemPromptMessage {
    #[new]
    #[pyo3(signature = (role="system", content=None, **fields))]
    fn py_new(
        role: &str,
        content: Option<ContentArg>,
        fields: Option<FieldsArg>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let m = build(role, content, Kind::SystemPrompt, fields)?;
        Ok(PyClassInitializer::from(PyMessage::new(Arc::new(m)))
            .add_subclass(PySystemPromptMessage))
    }

    #[classmethod]
    #[pyo3(name = "create", signature = (static_text=None, hooks=None))]
    fn create_sp(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        static_text: Option<String>,
        hooks: Option<Vec<String>>,
    ) -> PyResult<Py<PyMessage>> {
        let m = ctxfold_core::system_prompt(static_text, &hooks.unwrap_or_default());
        message_from_rust(py, m)
    }
}

/// The tool definitions a context keeps in its `tools` slot, resolved from the hooks
/// `tool_list` and `tool_filter`.
#[pyclass(name = "ToolDefinitionsMessage", module = "ctxfold", extends = PyMessage, frozen)]
pub struct PyToolDefinitionsMessage;

#[pymethods]
impl PyToolDefinitionsMessage {
    #[new]
    #[pyo3(signature = (role="tool", content=None, **fields))]
    fn py_new(
        role: &str,
        content: Option<ContentArg>,
        fields: Option<FieldsArg>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut m = build(role, content, Kind::ToolDefinitions, fields)?;
        ctxfold_core::add_tool_hooks(&mut m, &[]);
        Ok(PyClassInitializer::from(PyMessage::new(Arc::new(m)))
            .add_subclass(PyToolDefinitionsMessage))
    }

    #[classmethod]
    #[pyo3(name = "create", signature = (hooks=None))]
    fn create_td(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        hooks: Option<Vec<String>>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(
            py,
            ctxfold_core::tool_definitions(&hooks.unwrap_or_default()),
        )
    }
}

/// A message of `kind` from a constructor's arguments, by the core's rules.
fn build(
    role: &str,
    content: Option<ContentArg>,
    kind: Kind,
    fields: Option<FieldsArg>,
) -> PyResult<Message> {
    let content = content.map_or(Content::None, |c| c.0);
    Message::build(
        Role::parse(role).py()?,
        content,
        kind,
        FieldsArg::of(fields),
    )
    .py()
}
