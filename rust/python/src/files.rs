//! The command line's file writes (`convert`, `store --export`) go through the core's one rule
//! of writing a file (`ctxfold_core::write_file_with`), the rule `save` follows.

use crate::errors::IntoPyResult;
use pyo3::prelude::*;
use std::io::Write;
use std::path::PathBuf;

/// Write `data` to `path`: atomically for a regular file or a new one (a replaced file keeps
/// its mode), written through for a link, a FIFO or a device; a missing folder is an error
/// that names it.
#[pyfunction]
pub fn write_file(py: Python<'_>, path: PathBuf, data: &[u8]) -> PyResult<()> {
    py.detach(|| ctxfold_core::write_file_with(&path, false, Box::new(|w| w.write_all(data))))
        .py()?;
    Ok(())
}
