//! A message's arguments from Python: its content and its keyword fields, each one
//! `FromPyObject` impl, so what a value must be is said once, here (JSON and times: `convert`;
//! parts: `part`). The rules a message obeys (tool calls, part types) are
//! the core's and are checked there, once (`Message::build`, `Message::with`).

use crate::convert::{expected, string, JsonMap, Time};
use crate::errors::Failure;
use crate::part::PartArg;
use ctxfold_core::{Content, Error, Fields, Role};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde_json::Map;

/// Content: a str, a list (or tuple) of parts, or `None`.
pub struct ContentArg(pub Content);

impl<'py> FromPyObject<'_, 'py> for ContentArg {
    type Error = Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<ContentArg, Failure> {
        if o.is_none() {
            return Ok(ContentArg(Content::None));
        }
        if let Ok(s) = o.cast::<PyString>() {
            return Ok(ContentArg(Content::Text(string(&s)?)));
        }
        if o.cast::<PyList>().is_err() && o.cast::<PyTuple>().is_err() {
            return Err(expected("a str, a list of Part, or None", &o));
        }
        let parts = o
            .try_iter()?
            .enumerate()
            .map(|(i, p)| {
                p?.extract::<PartArg>()
                    .map(|p| p.0)
                    .map_err(|e| e.at_index(i).at_key("content"))
            })
            .collect::<Result<_, Failure>>()?;
        Ok(ContentArg(Content::Parts(parts)))
    }
}

/// The keyword fields of a message (`Message(…, name=…)`, `Message.user(text, **fields)`,
/// `m.replace(**changes)`). `None` clears `name`, `tool_call_id`, `tool_calls`, `metadata`
/// and `hook_ids`, and leaves `created_at` and `id` as they are.
pub struct FieldsArg(pub Fields);

impl<'py> FromPyObject<'_, 'py> for FieldsArg {
    type Error = Failure;
    fn extract(o: Borrowed<'_, 'py, PyAny>) -> Result<FieldsArg, Failure> {
        let d = o.cast::<PyDict>().map_err(PyErr::from)?;
        let mut f = Fields::default();
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            let value = |e: Failure| e.at_key(&key);
            let none = v.is_none();
            match key.as_str() {
                "role" => {
                    let r = v.cast::<PyString>().map_err(|_| expected("a str", &v))?;
                    f.role = Some(Role::parse(&string(r)?)?);
                }
                "content" => f.content = Some(v.extract::<ContentArg>().map_err(value)?.0),
                "name" => f.name = Some(opt_str(&v).map_err(value)?),
                "tool_call_id" => f.tool_call_id = Some(opt_str(&v).map_err(value)?),
                "tool_calls" => {
                    f.tool_calls = Some(if none {
                        Vec::new()
                    } else {
                        v.try_iter()?
                            .enumerate()
                            .map(|(i, c)| {
                                c?.extract::<JsonMap>()
                                    .map(|c| c.0)
                                    .map_err(|e| e.at_index(i).at_key("tool_calls"))
                            })
                            .collect::<Result<_, Failure>>()?
                    })
                }
                "metadata" => {
                    f.metadata = Some(if none {
                        Map::new()
                    } else {
                        v.extract::<JsonMap>().map_err(value)?.0
                    })
                }
                "created_at" if none => {}
                "created_at" => f.created_at = Some(v.extract::<Time>().map_err(value)?.0),
                "id" if none => {}
                "id" => f.id = opt_str(&v).map_err(value)?,
                "hook_ids" => {
                    f.hook_ids = Some(if none {
                        Vec::new()
                    } else {
                        v.try_iter()?
                            .map(|h| h?.extract::<String>())
                            .collect::<PyResult<_>>()
                            .map_err(|e| value(e.into()))?
                    })
                }
                other => {
                    return Err(
                        Error::wrong_kind(format!("unexpected keyword argument '{other}'")).into(),
                    )
                }
            }
        }
        Ok(FieldsArg(f))
    }
}

impl FieldsArg {
    /// The fields of an optional `**kwargs`.
    pub fn of(kw: Option<FieldsArg>) -> Fields {
        kw.map(|f| f.0).unwrap_or_default()
    }
}

fn opt_str(v: &Bound<'_, PyAny>) -> Result<Option<String>, Failure> {
    if v.is_none() {
        return Ok(None);
    }
    let s = v
        .cast::<PyString>()
        .map_err(|_| expected("a str or None", v))?;
    string(s).map(Some)
}
