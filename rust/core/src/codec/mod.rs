//! Persistence: the version 2 JSON document, readers for version 1 and the Python seed's
//! versionless layout, and atomic files. Every decode error says where it was found and
//! nothing is built until the whole input has been checked.

mod legacy;
mod message_in;
pub mod out;
mod read;
pub mod refresh;
pub mod rows;
pub mod runtime;
pub mod write;

use crate::context::{Context, MessageHandle};
use crate::error::{decode, Error, ErrorKind, Result};
use crate::time;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub const VERSION: i64 = 2;

/// A decoded document: the context, its runtime fields (every carried one, checked, absent
/// ones as absence reads), and whether it carried a version.
pub struct Loaded<H> {
    pub context: Context<H>,
    pub runtime: Map<String, Value>,
    pub versioned: bool,
}

impl<H: MessageHandle> Context<H> {
    /// The version 2 document as compact JSON bytes.
    pub fn to_json_bytes(&mut self, runtime: &Map<String, Value>) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256 * self.events().len() + 1024);
        serde_json::to_writer(&mut out, &self.document(runtime)).map_err(|e| {
            Error::new(ErrorKind::Io { errno: None }, format!("cannot encode: {e}"))
        })?;
        Ok(out)
    }

    /// Read a document (version 2 or 1, or the versionless layout) from JSON text. Returns
    /// the context and the runtime fields found at the top level.
    pub fn load_bytes(bytes: &[u8]) -> Result<Loaded<H>> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            Error::undecodable(format!(
                "not UTF-8: invalid byte at offset {}",
                e.valid_up_to()
            ))
        })?;
        read::load_str(text, false)
    }

    /// Read a dict-shaped document (`load_from_dict`); `require_version` for `deserialize`.
    pub fn load_value(v: &Value, require_version: bool) -> Result<Loaded<H>> {
        if !v.is_object() {
            return decode("expected a JSON object at the top level");
        }
        // One reader for files and dicts: the dict goes through its JSON text.
        let text = serde_json::to_string(v).map_err(|e| Error::undecodable(e.to_string()))?;
        read::load_str(&text, require_version)
    }

    pub fn load_file(path: &Path) -> Result<Loaded<H>> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, &e))?;
        Self::load_bytes(&bytes).map_err(|e| match e.kind() {
            ErrorKind::Undecodable => e.within(path.display().to_string()),
            _ => e,
        })
    }

    pub fn file_name(&self) -> Result<String> {
        check_file_id(self.id())?;
        Ok(format!(
            "{}-{}.json",
            time::date_stamp(self.created_at()),
            self.id()
        ))
    }

    /// Write `<YYYYMMDD>-<id>.json` into `dir` atomically: a temporary file in the same folder,
    /// flushed and fsynced, renamed over the target, then the folder fsynced.
    pub fn save(&mut self, dir: &Path, runtime: Map<String, Value>) -> Result<PathBuf> {
        let name = self.file_name()?;
        let doc = self.document(&runtime);
        write_atomic_with(dir, &name, |w| {
            serde_json::to_writer(w, &doc).map_err(std::io::Error::other)
        })
    }
}

pub fn check_file_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 200
        && id != "."
        && id != ".."
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::bad_argument(format!(
            "context id {id:?} is not a safe file name"
        )))
    }
}

/// Remove the temporary files that writers of `dir/name` left when they were killed
/// mid-save (`.<name>.<pid>.<uuid>.tmp`), so a crash loop cannot fill the disk. A file whose
/// writer may still be alive is never touched: this process's own, and any whose process
/// exists (on Unix, asked with `kill(pid, 0)`; elsewhere, where that cannot be asked cheaply,
/// only files untouched for a day count as dead).
pub(crate) fn remove_dead_writers_litter(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && writer_is_dead(pid, &entry) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn writer_is_dead(pid: u32, _entry: &std::fs::DirEntry) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    !alive
}

#[cfg(not(unix))]
fn writer_is_dead(_pid: u32, entry: &std::fs::DirEntry) -> bool {
    entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > std::time::Duration::from_secs(24 * 3600))
}

/// Write `dir/name` (the folder created if missing) by the one rule of `out`: atomically for a
/// regular file, written through for a link, a FIFO or a device.
pub fn write_atomic_with(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<PathBuf> {
    // The folder first, so that a file in its place is the error about the folder.
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, &e))?;
    out::write_file_with(&dir.join(name), true, Box::new(write))
}
