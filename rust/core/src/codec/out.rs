//! Writing a file: the one rule every writer follows (`save`, and the command line's
//! `convert` and `store --export` through the binding).
//!
//! - A regular file, or a path where nothing is yet, is written atomically: a temporary file
//!   beside it, flushed and fsynced, renamed over it, then the folder fsynced. A crash leaves
//!   the old file or the new one, never a torn one. A replaced file keeps its mode; a new one
//!   gets the mode the umask gives (`0o666 & !umask`), as any program's new file does.
//! - Anything else is written through, never replaced: a symlink (`/dev/stdout`, or a link to
//!   a file, which then changes in place as a shell's `>` changes it), a FIFO, a character
//!   device (`/dev/null`; `/dev/full` reports its error). Replacing those would turn a pipe
//!   or a device into a regular file.
//! - A folder that does not exist is created when the caller asks (`save` into a sessions
//!   folder) and otherwise named in the error.

use crate::error::{Error, ErrorKind, Result};
use std::fs::{File, OpenOptions, Permissions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The content, streamed: no copy of the file is held in memory.
pub type Writer<'a> = dyn FnOnce(&mut BufWriter<File>) -> std::io::Result<()> + 'a;

/// Write `target` by the rule above; `create_dir`: create its folder when missing.
pub fn write_file_with(target: &Path, create_dir: bool, write: Box<Writer<'_>>) -> Result<PathBuf> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.is_file() => atomic(target, Some(m.permissions()), write),
        Ok(m) if m.is_dir() => atomic(target, None, write), // the rename names the error
        Ok(_) => through(target, write),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = folder(target);
            if !dir.is_dir() {
                if create_dir {
                    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, &e))?;
                } else {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!(
                            "no such folder: {} (to write {})",
                            dir.display(),
                            target.display()
                        ),
                    ));
                }
            }
            atomic(target, None, write)
        }
        Err(e) => Err(Error::io(target, &e)),
    }
}

fn folder(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn atomic(target: &Path, keep: Option<Permissions>, write: Box<Writer<'_>>) -> Result<PathBuf> {
    let dir = folder(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    super::remove_dead_writers_litter(&dir, &name);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        crate::message::new_id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        if let Some(p) = keep {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, target)?;
        // Make the rename itself durable. Opening a folder is not possible everywhere
        // (Windows), where the rename is what we can do.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(target, &e));
    }
    Ok(target.to_path_buf())
}

fn through(target: &Path, write: Box<Writer<'_>>) -> Result<PathBuf> {
    let result = (|| -> std::io::Result<()> {
        let file = OpenOptions::new().write(true).truncate(true).open(target)?;
        let regular = file.metadata()?.is_file();
        let mut f = BufWriter::with_capacity(1 << 20, file);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        if regular {
            f.sync_all()?; // a pipe or a device has nothing to sync
        }
        Ok(())
    })();
    result.map_err(|e| Error::io(target, &e))?;
    Ok(target.to_path_buf())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn put(path: &Path, text: &'static str) -> Result<PathBuf> {
        write_file_with(path, false, Box::new(move |w| w.write_all(text.as_bytes())))
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ctxfold-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_link_is_written_through() {
        let d = scratch("mode");
        let f = d.join("out.json");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, Permissions::from_mode(0o640)).unwrap();
        put(&f, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let link = d.join("link.json");
        symlink(&f, &link).unwrap();
        put(&link, "through").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "through");
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_folder_is_named_unless_asked_to_create_it() {
        let d = scratch("folder");
        let f = d.join("missing").join("out.json");
        let e = put(&f, "x").unwrap_err().to_string();
        assert!(
            e.starts_with("no such folder: ") && e.contains("missing"),
            "{e}"
        );
        assert!(!d.join("missing").exists());
        write_file_with(&f, true, Box::new(|w| w.write_all(b"x"))).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_device_is_written_through() {
        put(Path::new("/dev/null"), "gone").unwrap();
        assert!(!std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_file());
    }
}
