//! `_core._rank_file(name)`: an encoding's BPE rank file in tiktoken's own format, rebuilt from
//! the ranks the extension already embeds. The tests give it to Python tiktoken, their oracle,
//! so that the suite runs offline against an installed wheel, with no Rust toolchain to find
//! tiktoken-rs's copy of the files.

use crate::errors::IntoPyResult;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ctxfold_core::Encoding;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashSet;

/// One line per mergeable token, by rank: `<base64 of its bytes> <rank>\n`. The special tokens,
/// which tiktoken keeps out of the file, are skipped, and so are the ranks no token has (cl100k_base
/// has none at 100256); past the last special token the mergeable ranks run on without a gap
/// (p50k_base's go on after its one special token), so the first missing rank there ends the
/// file. Byte for byte the file tiktoken-rs was built from: the tests compare sha256.
fn rank_file(e: Encoding) -> Vec<u8> {
    let bpe = e.bpe();
    let special: HashSet<u32> = bpe
        .special_tokens()
        .into_iter()
        .flat_map(|s| bpe.encode_with_special_tokens(s))
        .collect();
    let last_special = special.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    for rank in (0..).filter(|r| !special.contains(r)) {
        match bpe.decode_bytes(&[rank]) {
            Ok(token) => {
                out.extend_from_slice(STANDARD.encode(token).as_bytes());
                out.extend_from_slice(format!(" {rank}\n").as_bytes());
            }
            Err(_) if rank > last_special => break,
            Err(_) => {}
        }
    }
    out
}

/// The rank file of an encoding (`ValueError` for an unknown name). For the tests' oracle.
#[pyfunction]
#[pyo3(name = "_rank_file")]
pub fn rank_file_py<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
    let e = Encoding::parse(name).py()?;
    let bytes = py.detach(|| rank_file(e));
    Ok(PyBytes::new(py, &bytes))
}
