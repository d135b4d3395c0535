//! The PyO3 binding of ctxfold: converts, maps errors (in `errors`), and nothing else.

mod args;
mod compaction;
mod context;
mod convert;
mod errors;
mod export_cache;
mod files;
mod formats;
mod interop;
mod message;
mod part;
mod plan;
mod pyser;
mod ranks;
mod runtime;
mod store;
mod tail;

use pyo3::prelude::*;

// Loading a transcript builds millions of small strings and maps; glibc's malloc spent a
// third of decode time on them. mimalloc is what pydantic-core ships for the same reason.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Files above this size give their scratch memory back after a load or save; below it the
/// collection would cost more than the memory is worth.
pub(crate) const BIG_FILE: u64 = 16 << 20;

/// Give the pages freed by a big load or save (the file's bytes, parse scratch) back to the
/// system now; mimalloc would otherwise keep them until later allocations reuse them. Forced:
/// measured at 100k messages, resident memory after a load drops from +307 MB to +150 MB (the
/// live context), for a few milliseconds.
pub(crate) fn release_free_memory() {
    // SAFETY: `mi_collect` only walks mimalloc's own heaps; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// sha256 hex of a hook's name: the id messages carry in `hook_ids`.
#[pyfunction]
fn hook_id(name: &str) -> String {
    ctxfold_core::hook_id(name)
}

/// The encodings token counting knows.
#[pyfunction]
fn encodings() -> Vec<&'static str> {
    ctxfold_core::ENCODINGS.iter().map(|e| e.name()).collect()
}

/// Tokens of a text in an encoding, special-token text counted as ordinary text.
#[pyfunction]
#[pyo3(signature = (text, encoding="cl100k_base"))]
fn count_text(py: Python<'_>, text: &str, encoding: &str) -> PyResult<usize> {
    use errors::IntoPyResult;
    let e = ctxfold_core::Encoding::parse(encoding).py()?;
    py.detach(|| ctxfold_core::count_text(text, e)).py()
}

/// An ISO 8601 time as an aware UTC datetime, by the core's rules (a naive time is UTC; the
/// instant must fall within years 1 to 9999 in UTC); else `DecodeError`.
#[pyfunction]
fn parse_time<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, pyo3::types::PyDateTime>> {
    use errors::IntoPyResult;
    convert::datetime(py, ctxfold_core::parse_iso(text).py()?)
}

/// Whether `value` is JSON as the binding takes it everywhere (dict with str keys, list,
/// tuple, str, int within 64 bits, finite float, bool, None; no lone surrogates; nested at
/// most `MAX_DEPTH` deep).
#[pyfunction]
fn is_json(value: &Bound<'_, PyAny>) -> bool {
    convert::json(value, convert::Policy::Raise).is_ok()
}

/// A JSON-compatible copy of `value` (what may be written to disk): what is not JSON is left
/// out, with `redact` credential-named keys too; `None` if the value itself is not JSON.
#[pyfunction]
#[pyo3(signature = (value, redact=false))]
fn json_clean<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    redact: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let policy = convert::Policy::Drop { redact };
    match convert::json(value, policy)? {
        Some(v) => convert::to_py(py, &v),
        None => Ok(py.None().into_bound(py)),
    }
}

// Safe without the GIL (free-threaded CPython): every class is frozen, a context's state sits
// behind its own mutex, and the caches are atomics or once-cells (docs/shipping.md).
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The event type names live in the core; the facade reads them from here.
    let types = ctxfold_core::EVENT_TYPES;
    m.add(
        "EVENT_TYPES",
        pyo3::types::PyTuple::new(m.py(), types.map(|t| t.name()))?,
    )?;
    let bookkeeping: Vec<&str> = types
        .iter()
        .filter(|t| t.is_bookkeeping())
        .map(|t| t.name())
        .collect();
    m.add(
        "BOOKKEEPING_EVENT_TYPES",
        pyo3::types::PyFrozenSet::new(m.py(), bookkeeping)?,
    )?;
    // The runtime fields, by the core's table; the facade converts each carried one.
    m.add_class::<runtime::PyRuntimeField>()?;
    m.add("RUNTIME_FIELDS", runtime::fields(m.py())?)?;
    m.add_class::<message::PyMessage>()?;
    m.add_class::<message::PySystemPromptMessage>()?;
    m.add_class::<message::PyToolDefinitionsMessage>()?;
    m.add_class::<part::PyPart>()?;
    m.add_class::<context::PyEvent>()?;
    m.add_class::<context::ContextCore>()?;
    m.add_function(wrap_pyfunction!(hook_id, m)?)?;
    m.add_function(wrap_pyfunction!(errors::located, m)?)?;
    m.add_function(wrap_pyfunction!(encodings, m)?)?;
    m.add_function(wrap_pyfunction!(count_text, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_export, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_import, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_response, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_tool_list, m)?)?;
    m.add_function(wrap_pyfunction!(plan::format_plan, m)?)?;
    m.add_function(wrap_pyfunction!(interop::interop_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(interop::request_header, m)?)?;
    m.add_function(wrap_pyfunction!(export_cache::export_cache_mode, m)?)?;
    m.add_function(wrap_pyfunction!(export_cache::export_cache_usage, m)?)?;
    m.add_function(wrap_pyfunction!(export_cache::export_cache_clear, m)?)?;
    m.add_class::<plan::FormatPlan>()?;
    m.add_class::<plan::PlanCall>()?;
    m.add_class::<plan::PlanAnswer>()?;
    // The result a call never answered gets (the log's patch and every request's).
    m.add("INTERRUPTED", ctxfold_core::INTERRUPTED)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(json_clean, m)?)?;
    m.add_function(wrap_pyfunction!(is_json, m)?)?;
    m.add_function(wrap_pyfunction!(ranks::rank_file_py, m)?)?;
    m.add_function(wrap_pyfunction!(store::store_rows, m)?)?;
    m.add_function(wrap_pyfunction!(store::store_load, m)?)?;
    m.add_class::<store::PySavepoint>()?;
    m.add_function(wrap_pyfunction!(store::store_refresh, m)?)?;
    m.add_function(wrap_pyfunction!(store::context_savepoint, m)?)?;
    m.add_function(wrap_pyfunction!(store::context_rewind, m)?)?;
    m.add_function(wrap_pyfunction!(tail::shown_tail, m)?)?;
    m.add_function(wrap_pyfunction!(tail::shown_range, m)?)?;
    m.add_function(wrap_pyfunction!(files::write_file, m)?)?;
    m.add_function(wrap_pyfunction!(compaction::compaction_plan, m)?)?;
    m.add_function(wrap_pyfunction!(compaction::compaction_apply, m)?)?;
    m.add_function(wrap_pyfunction!(
        compaction::compaction_clear_tool_results,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(compaction::compaction_records, m)?)?;
    Ok(())
}
