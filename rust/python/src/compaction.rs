//! Compaction's functions over a `ContextCore`: plan, apply, clear tool results, read the
//! records back. The core decides everything; these convert its arguments and results.

use crate::context::{handles_to_list, ContextCore, Core, PyEvent};
use crate::convert::{self, map_to_py, Int};
use crate::errors::IntoPyResult;
use crate::message::{Handle, PyMessage};
use ctxfold_core::{ClearOptions, Encoding, Error, PlanOptions, Summary};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

/// A count or budget: an int, never negative.
fn count(name: &str, i: Int) -> PyResult<u64> {
    u64::try_from(i.0)
        .map_err(|_| Error::bad_argument(format!("{name} must be non-negative, got {}", i.0)))
        .py()
}

fn position(name: &str, i: Int) -> PyResult<usize> {
    count(name, i).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

type PlanOut<'py> = (
    String,
    Vec<(usize, usize)>,
    Bound<'py, PyList>,
    Option<Bound<'py, PyList>>,
    u64,
    u64,
);

/// `(context id, ranges, messages, shown, based_on, tokens_before)` (`shown`: `None` when it is
/// `messages`), or `None` when nothing is to be done.
#[pyfunction]
#[pyo3(signature = (core, max_tokens, keep_tokens, keep_last, encoding, pinned))]
pub fn compaction_plan<'py>(
    py: Python<'py>,
    core: &ContextCore,
    max_tokens: Int,
    keep_tokens: Option<Int>,
    keep_last: Option<Int>,
    encoding: &str,
    pinned: Vec<Int>,
) -> PyResult<Option<PlanOut<'py>>> {
    let o = PlanOptions {
        max_tokens: count("max_tokens", max_tokens)?,
        keep_tokens: keep_tokens.map(|k| count("keep_tokens", k)).transpose()?,
        keep_last: keep_last.map(|k| position("keep_last", k)).transpose()?,
        encoding: Encoding::parse(encoding).py()?,
        pinned: pinned
            .into_iter()
            .map(|p| position("pinned", p))
            .collect::<PyResult<_>>()?,
    };
    // Handles under the lock (counting detached), Python objects after it.
    let plan = {
        let mut g = core.lock(py);
        let c: &mut Core = &mut g;
        py.detach(|| c.plan_compaction(&o)).py()?
    };
    let Some(p) = plan else { return Ok(None) };
    Ok(Some((
        p.context,
        p.ranges,
        handles_to_list(py, &p.messages)?,
        p.shown.map(|s| handles_to_list(py, &s)).transpose()?,
        p.based_on,
        p.tokens_before,
    )))
}

/// The events written: the replace, then one removal per further range.
#[pyfunction]
#[pyo3(signature = (core, context, ranges, based_on, tokens_before, encoding, summary))]
#[allow(clippy::too_many_arguments)]
pub fn compaction_apply(
    py: Python<'_>,
    core: &ContextCore,
    context: &str,
    ranges: Vec<(Int, Int)>,
    based_on: Int,
    tokens_before: Int,
    encoding: &str,
    summary: &Bound<'_, PyAny>,
) -> PyResult<Vec<PyEvent>> {
    let summary = if let Ok(m) = summary.cast::<PyMessage>() {
        Summary::Message(Handle::from_py(m))
    } else if let Ok(s) = summary.cast::<PyString>() {
        Summary::Text(convert::string(s)?)
    } else {
        return Err(convert::expected("a str or a Message as the summary", summary).into());
    };
    let ranges = ranges
        .into_iter()
        .map(|(a, b)| Ok((position("first", a)?, position("last", b)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let based_on = count("based_on", based_on)?;
    let tokens_before = count("tokens_before", tokens_before)?;
    let enc = Encoding::parse(encoding).py()?;
    let mut c = core.lock(py);
    let seqs = c
        .apply_compaction(context, &ranges, based_on, tokens_before, enc, summary)
        .py()?;
    Ok(seqs
        .into_iter()
        .filter_map(|s| c.event(s).map(PyEvent::of))
        .collect())
}

/// The events written, one per cleared result.
#[pyfunction]
#[pyo3(signature = (core, keep_last, min_tokens, exclude_tools, placeholder, encoding))]
pub fn compaction_clear_tool_results(
    py: Python<'_>,
    core: &ContextCore,
    keep_last: Int,
    min_tokens: Int,
    exclude_tools: Vec<String>,
    placeholder: &Bound<'_, PyString>,
    encoding: &str,
) -> PyResult<Vec<PyEvent>> {
    let o = ClearOptions {
        keep_last: position("keep_last", keep_last)?,
        min_tokens: count("min_tokens", min_tokens)?,
        exclude_tools,
        placeholder: convert::string(placeholder)?,
        encoding: Encoding::parse(encoding).py()?,
    };
    let mut g = core.lock(py);
    let c: &mut Core = &mut g;
    let seqs = py.detach(|| c.clear_tool_results(&o)).py()?;
    Ok(seqs
        .into_iter()
        .filter_map(|s| c.event(s).map(PyEvent::of))
        .collect())
}

type RecordOut<'py> = (u64, usize, usize, Bound<'py, PyDict>);

/// `(seq, first, last, record)` for each applied compaction, oldest first.
#[pyfunction]
pub fn compaction_records<'py>(
    py: Python<'py>,
    core: &ContextCore,
) -> PyResult<Vec<RecordOut<'py>>> {
    let records = core.lock(py).compactions();
    records
        .into_iter()
        .map(|r| Ok((r.seq, r.first, r.last, map_to_py(py, &r.record)?)))
        .collect()
}
