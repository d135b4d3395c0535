//! `Message`, its two special subclasses, `Part`, and the handle through which the core holds
//! a message: the Python object itself (so `messages` gives back what was appended) or, for a
//! message the core derived, the Rust value plus the Python object made for it on first read.

use crate::convert::{self, datetime, map_to_py, micros, to_map, to_value};
use crate::errors::IntoPyResult;
use crate::leaves::Leaves;
use ctxfold_core::codec::write::{MessageOut, Shape};
use ctxfold_core::dynamic::{hook_id, TOOL_FILTER, TOOL_LIST};
use ctxfold_core::json::compact_json;
use ctxfold_core::message::validate_tool_call;
use ctxfold_core::tokens::{message_tokens, Encoding};
use ctxfold_core::{Content, Kind, Message, MessageHandle, Role};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
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

impl Handle {
    pub fn from_py(m: &Bound<'_, PyMessage>) -> Handle {
        Handle(Arc::new(Slot::Py(m.clone().unbind())))
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
    /// The message's strings as Python strings, made once (`leaves.rs`); they live with its
    /// Python object, which is made now if the core's message has none yet.
    pub fn leaves(&self, py: Python<'_>) -> PyResult<&Leaves> {
        match &*self.0 {
            Slot::Py(p) => Ok(&p.get().leaves),
            Slot::Rust(m, cell) => {
                let p = match cell.get() {
                    Some(p) => p,
                    None => {
                        let made = new_message(py, m.clone())?;
                        cell.get_or_init(|| made)
                    }
                };
                Ok(&p.get().leaves)
            }
        }
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

// ---- building messages from Python arguments ------------------------------------------------

fn content_from_py(o: Option<&Bound<'_, PyAny>>) -> PyResult<Content> {
    let Some(o) = o else { return Ok(Content::None) };
    if o.is_none() {
        return Ok(Content::None);
    }
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(Content::Text(convert::string(s)?));
    }
    if o.cast::<PyList>().is_ok() || o.cast::<PyTuple>().is_ok() {
        let mut parts = Vec::new();
        for (i, item) in o.try_iter()?.enumerate() {
            let item = item?;
            let p = if let Ok(p) = item.cast::<PyPart>() {
                (*p.get().inner).clone()
            } else if let Ok(d) = item.cast::<PyDict>() {
                to_map(d)?
            } else {
                return Err(PyTypeError::new_err(format!(
                    "content[{i}] must be a Part or a dict"
                )));
            };
            if !matches!(p.get("type"), Some(Value::String(_))) {
                return Err(PyValueError::new_err(format!(
                    "content[{i}] needs a string \"type\""
                )));
            }
            parts.push(p);
        }
        return Ok(Content::Parts(parts));
    }
    Err(PyTypeError::new_err(
        "content must be a str, a list of Part, or None",
    ))
}

fn tool_calls_from_py(o: &Bound<'_, PyAny>) -> PyResult<Vec<Map<String, Value>>> {
    if o.is_none() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (i, c) in o.try_iter()?.enumerate() {
        let c = c?;
        let d = c
            .cast::<PyDict>()
            .map_err(|_| PyTypeError::new_err(format!("tool_calls[{i}] must be a dict")))?;
        let m = to_map(d)?;
        validate_tool_call(&m)
            .map_err(|e| PyValueError::new_err(format!("tool_calls[{i}]: {e}")))?;
        out.push(m);
    }
    Ok(out)
}

fn opt_string(o: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<String>> {
    if o.is_none() {
        return Ok(None);
    }
    let s = o
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a str or None")))?;
    Ok(Some(convert::string(s)?))
}

/// Apply keyword fields (`name`, `tool_calls`, …) onto a message.
fn apply_fields(m: &mut Message, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let Some(kw) = kw else { return Ok(()) };
    for (k, v) in kw.iter() {
        let key: String = k.extract()?;
        match key.as_str() {
            "role" => {
                let r: String = v
                    .extract()
                    .map_err(|_| PyValueError::new_err("role must be a str"))?;
                m.role = Role::parse(&r).py()?;
            }
            "content" => m.content = content_from_py(Some(&v))?,
            "name" => m.name = opt_string(&v, "name")?,
            "tool_call_id" => m.tool_call_id = opt_string(&v, "tool_call_id")?,
            "tool_calls" => m.tool_calls = tool_calls_from_py(&v)?,
            "metadata" => {
                m.metadata = if v.is_none() {
                    Map::new()
                } else {
                    let d = v
                        .cast::<PyDict>()
                        .map_err(|_| PyTypeError::new_err("metadata must be a dict"))?;
                    to_map(d)?
                }
            }
            "created_at" => {
                if !v.is_none() {
                    m.created_at = micros(&v)?
                }
            }
            "id" => {
                if let Some(id) = opt_string(&v, "id")? {
                    m.id = id
                }
            }
            "hook_ids" => {
                m.hook_ids = if v.is_none() {
                    Vec::new()
                } else {
                    v.try_iter()?
                        .map(|h| h?.extract::<String>())
                        .collect::<PyResult<_>>()?
                }
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unexpected keyword argument {other:?}"
                )))
            }
        }
    }
    Ok(())
}

fn build(
    role: &str,
    content: Option<&Bound<'_, PyAny>>,
    kind: Kind,
    kw: Option<&Bound<'_, PyDict>>,
) -> PyResult<Message> {
    let mut m = Message::new(Role::parse(role).py()?, content_from_py(content)?);
    m.kind = kind;
    apply_fields(&mut m, kw)?;
    Ok(m)
}

#[allow(clippy::too_many_arguments)]
fn kwargs<'py>(
    py: Python<'py>,
    name: Option<&Bound<'py, PyAny>>,
    tool_calls: Option<&Bound<'py, PyAny>>,
    tool_call_id: Option<&Bound<'py, PyAny>>,
    metadata: Option<&Bound<'py, PyAny>>,
    created_at: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
    hook_ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("name", name),
        ("tool_calls", tool_calls),
        ("tool_call_id", tool_call_id),
        ("metadata", metadata),
        ("created_at", created_at),
        ("id", id),
        ("hook_ids", hook_ids),
    ] {
        if let Some(v) = v {
            d.set_item(k, v)?;
        }
    }
    Ok(d)
}

// ---- Message --------------------------------------------------------------------------------

/// One message of a transcript: an immutable value, compared by value, hashed by id.
#[pyclass(name = "Message", module = "ctxfold", subclass, frozen)]
pub struct PyMessage {
    pub inner: Arc<Message>,
    /// Its strings as sent in requests (`leaves.rs`).
    leaves: Leaves,
}

impl PyMessage {
    pub fn new(inner: Arc<Message>) -> PyMessage {
        PyMessage {
            inner,
            leaves: Leaves::default(),
        }
    }
}

#[pymethods]
impl PyMessage {
    #[new]
    #[pyo3(signature = (role, content=None, *, name=None, tool_calls=None, tool_call_id=None, metadata=None, created_at=None, id=None, hook_ids=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new<'py>(
        py: Python<'py>,
        role: &str,
        content: Option<&Bound<'py, PyAny>>,
        name: Option<&Bound<'py, PyAny>>,
        tool_calls: Option<&Bound<'py, PyAny>>,
        tool_call_id: Option<&Bound<'py, PyAny>>,
        metadata: Option<&Bound<'py, PyAny>>,
        created_at: Option<&Bound<'py, PyAny>>,
        id: Option<&Bound<'py, PyAny>>,
        hook_ids: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let kw = kwargs(
            py,
            name,
            tool_calls,
            tool_call_id,
            metadata,
            created_at,
            id,
            hook_ids,
        )?;
        Ok(PyMessage::new(Arc::new(build(
            role,
            content,
            Kind::Plain,
            Some(&kw),
        )?)))
    }

    #[classmethod]
    #[pyo3(signature = (content, **kw))]
    fn system(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        content: &Bound<'_, PyAny>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("system", Some(content), Kind::Plain, kw)?)
    }

    #[classmethod]
    #[pyo3(signature = (content, **kw))]
    fn user(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        content: &Bound<'_, PyAny>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("user", Some(content), Kind::Plain, kw)?)
    }

    #[classmethod]
    #[pyo3(signature = (content=None, **kw))]
    fn assistant(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        content: Option<&Bound<'_, PyAny>>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyMessage>> {
        message_from_rust(py, build("assistant", content, Kind::Plain, kw)?)
    }

    /// A tool result; a non-str result is stored as its compact JSON.
    #[classmethod]
    #[pyo3(signature = (tool_call_id, result, **kw))]
    fn tool(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        tool_call_id: &str,
        result: &Bound<'_, PyAny>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyMessage>> {
        let text = match result.cast::<PyString>() {
            Ok(s) => convert::string(s)?,
            Err(_) => compact_json(&to_value(result)?),
        };
        let mut m = Message::new(Role::Tool, Content::Text(text));
        m.tool_call_id = Some(tool_call_id.to_string());
        apply_fields(&mut m, kw)?;
        message_from_rust(py, m)
    }

    #[classmethod]
    #[pyo3(signature = (role, content_parts, metadata=None))]
    fn create(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        role: &str,
        content_parts: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyMessage>> {
        let kw = PyDict::new(py);
        if let Some(md) = metadata {
            kw.set_item("metadata", md)?;
        }
        message_from_rust(
            py,
            build(role, Some(content_parts), Kind::Plain, Some(&kw))?,
        )
    }

    /// Read what `to_dict` writes, or any subset of it (`role` required).
    #[classmethod]
    fn from_dict(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
    ) -> PyResult<Py<PyMessage>> {
        let v = Value::Object(to_map(d)?);
        message_from_rust(py, Message::from_json(&v).py()?)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        message_dict(py, &self.inner)
    }

    /// A copy with some fields changed.
    #[pyo3(signature = (**changes))]
    fn replace(
        &self,
        py: Python<'_>,
        changes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyMessage>> {
        let mut m = (*self.inner).clone();
        apply_fields(&mut m, changes)?;
        m.validate().py()?;
        message_from_rust(py, m)
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
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .tool_calls
            .iter()
            .map(|c| map_to_py(py, c))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }
    #[getter]
    fn tool_call_id(&self) -> Option<&str> {
        self.inner.tool_call_id.as_deref()
    }
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, &self.inner.metadata)
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

fn parts_list<'py>(py: Python<'py>, parts: &[Map<String, Value>]) -> PyResult<Bound<'py, PyList>> {
    let items = parts
        .iter()
        .map(|p| {
            Bound::new(
                py,
                PyPart {
                    inner: Arc::new(p.clone()),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The system prompt a context keeps in its `system_prompt` slot; may carry hooks.
#[pyclass(name = "SystemPromptMessage", module = "ctxfold", extends = PyMessage, frozen)]
pub struct PySystemPromptMessage;

#[pymethods]
impl PySystemPromptMessage {
    #[new]
    #[pyo3(signature = (role="system", content=None, **kw))]
    fn py_new(
        role: &str,
        content: Option<&Bound<'_, PyAny>>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let m = build(role, content, Kind::SystemPrompt, kw)?;
        Ok(PyClassInitializer::from(PyMessage::new(Arc::new(m)))
            .add_subclass(PySystemPromptMessage))
    }

    #[classmethod]
    #[pyo3(name = "create", signature = (static_text=None, hooks=None))]
    fn create_sp(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        static_text: Option<&str>,
        hooks: Option<Vec<String>>,
    ) -> PyResult<Py<PyMessage>> {
        let content = match static_text {
            Some(t) => Content::Text(t.to_string()),
            None => Content::None,
        };
        let mut m = Message::new(Role::System, content);
        m.kind = Kind::SystemPrompt;
        m.hook_ids = hooks
            .unwrap_or_default()
            .iter()
            .map(|h| hook_id(h))
            .collect();
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
    #[pyo3(signature = (role="tool", content=None, **kw))]
    fn py_new(
        role: &str,
        content: Option<&Bound<'_, PyAny>>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut m = build(role, content, Kind::ToolDefinitions, kw)?;
        add_tool_hooks(&mut m, &[]);
        Ok(PyClassInitializer::from(PyMessage::new(Arc::new(m)))
            .add_subclass(PyToolDefinitionsMessage))
    }

    #[classmethod]
    #[pyo3(name = "create", signature = (hooks=None))]
    fn create_td(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        hooks: Option<Vec<String>>,
    ) -> PyResult<Py<PyMessage>> {
        let mut m = Message::new(Role::Tool, Content::None);
        m.kind = Kind::ToolDefinitions;
        add_tool_hooks(&mut m, &hooks.unwrap_or_default());
        message_from_rust(py, m)
    }
}

fn add_tool_hooks(m: &mut Message, extra: &[String]) {
    for name in [TOOL_LIST, TOOL_FILTER]
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        let id = hook_id(name);
        if !m.hook_ids.contains(&id) {
            m.hook_ids.push(id);
        }
    }
}

// ---- Part -------------------------------------------------------------------------------------

/// One content part: `type` plus that type's fields, every key kept as given.
#[pyclass(name = "Part", module = "ctxfold", frozen)]
pub struct PyPart {
    pub inner: Arc<Map<String, Value>>,
}

fn make_part(
    kind: &str,
    fields: &[(&str, Option<&Bound<'_, PyAny>>)],
    extra: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyPart> {
    let mut m = Map::new();
    m.insert("type".into(), Value::String(kind.into()));
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert((*k).into(), to_value(v)?);
        }
    }
    if let Some(extra) = extra {
        for (k, v) in to_map(extra)? {
            m.insert(k, v);
        }
    }
    Ok(PyPart { inner: Arc::new(m) })
}

#[pymethods]
impl PyPart {
    #[new]
    #[pyo3(signature = (r#type, **fields))]
    fn py_new(r#type: &str, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part(r#type, &[], fields)
    }

    #[staticmethod]
    #[pyo3(signature = (text, **extra))]
    fn text(text: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("text", &[("text", Some(text))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (text, **extra))]
    fn thinking(text: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("thinking", &[("text", Some(text))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn image(source: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("image", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn audio(source: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("audio", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn video(source: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("video", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn file(source: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("file", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (source, **extra))]
    fn pdf(source: &Bound<'_, PyAny>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        make_part("pdf", &[("source", Some(source))], extra)
    }
    #[staticmethod]
    #[pyo3(signature = (call_id, name, arguments=None, **extra))]
    fn tool_use(
        call_id: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        arguments: Option<&Bound<'_, PyAny>>,
        extra: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        make_part(
            "tool_use",
            &[
                ("call_id", Some(call_id)),
                ("name", Some(name)),
                ("arguments", arguments),
            ],
            extra,
        )
    }
    #[staticmethod]
    #[pyo3(signature = (call_id, content, **extra))]
    fn tool_result(
        call_id: &Bound<'_, PyAny>,
        content: &Bound<'_, PyAny>,
        extra: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        make_part(
            "tool_result",
            &[("call_id", Some(call_id)), ("content", Some(content))],
            extra,
        )
    }
    #[staticmethod]
    #[pyo3(signature = (name, description=None, parameters=None, **extra))]
    fn tool(
        name: &Bound<'_, PyAny>,
        description: Option<&Bound<'_, PyAny>>,
        parameters: Option<&Bound<'_, PyAny>>,
        extra: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        make_part(
            "tool",
            &[
                ("name", Some(name)),
                ("description", description),
                ("parameters", parameters),
            ],
            extra,
        )
    }

    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Self> {
        let m = to_map(d)?;
        if !matches!(m.get("type"), Some(Value::String(_))) {
            return Err(PyValueError::new_err("a part needs a string \"type\""));
        }
        Ok(PyPart { inner: Arc::new(m) })
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, &self.inner)
    }

    #[getter(r#type)]
    fn type_(&self) -> &str {
        self.inner.get("type").and_then(Value::as_str).unwrap_or("")
    }

    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.get(key) {
            Some(v) => convert::to_py(py, v),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.get(key) {
            Some(v) => convert::to_py(py, v),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    fn __contains__(&self, key: &str) -> bool {
        self.inner.contains_key(key)
    }

    /// Any field reads as its value, or `None` when this part has no such key.
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if name.starts_with('_') {
            return Err(PyAttributeError::new_err(name.to_string()));
        }
        match self.inner.get(name) {
            Some(v) => convert::to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp, py: Python<'_>) -> Py<PyAny> {
        let eq = other
            .cast::<PyPart>()
            .ok()
            .map(|o| *self.inner == *o.get().inner);
        convert::compare(py, op, eq)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &compact_json(&Value::Object((*self.inner).clone()))).hash()
    }

    fn __repr__(&self) -> String {
        format!(
            "Part({})",
            compact_json(&Value::Object((*self.inner).clone()))
        )
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let f = slf.get_type().getattr("from_dict")?;
        Ok((f, (map_to_py(slf.py(), &slf.get().inner)?,)))
    }
}
