//! The one error type of the core. The binding maps each variant to one Python exception class.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad argument value (Python `ValueError`).
    Value(String),
    /// A position outside the transcript (Python `IndexError`).
    Index(String),
    /// A value of the wrong kind (Python `TypeError`).
    Type(String),
    /// An anchor name that the context does not have (`UnknownAnchorError`, a `KeyError`).
    UnknownAnchor(String),
    /// Input that cannot be decoded into a context (`DecodeError`, a `ValueError`).
    Decode(String),
    /// A file that does not exist (`FileNotFoundError`).
    NotFound(String),
    /// A provider message that cannot be converted, or a strict export that would need
    /// repairs (`FormatError`, a `ValueError`).
    Format(String),
    /// Any other I/O failure (`OSError`, with the OS error number when there is one, so the
    /// binding can raise the matching subclass: `PermissionError`, `IsADirectoryError`, …).
    Io(String, Option<i32>),
    /// A compare-and-swap that lost: what it was based on has changed since, or a store holds
    /// another context's history under this one's id (`ConflictError`): nothing was written.
    Conflict(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Prefix a decode error with the place it was found, e.g. `events[17].data`.
    /// A message that already starts with a path (`data.message.role: ...`) is joined to it,
    /// so the place reads as one path: `events[17].data.message.role: ...`.
    pub fn at(self, place: &str) -> Error {
        match self {
            Error::Decode(m) | Error::Value(m) | Error::Type(m) | Error::Index(m) => {
                Error::Decode(join_path(place, &m))
            }
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Value(m)
            | Error::Index(m)
            | Error::Type(m)
            | Error::UnknownAnchor(m)
            | Error::Decode(m)
            | Error::NotFound(m)
            | Error::Format(m)
            | Error::Conflict(m) => f.write_str(m),
            Error::Io(m, _) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// An I/O failure at `path`, keeping its OS error number.
    pub fn io(path: &std::path::Path, e: &std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::NotFound(format!("no such file: {}", path.display()))
            }
            _ => Error::Io(format!("{}: {e}", path.display()), e.raw_os_error()),
        }
    }
}

fn join_path(place: &str, m: &str) -> String {
    let is_path = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'))
    };
    match m.split_once(": ") {
        Some((p, _)) if is_path(p) && p.starts_with('[') => format!("{place}{m}"),
        Some((p, _)) if is_path(p) => format!("{place}.{m}"),
        _ => format!("{place}: {m}"),
    }
}

pub fn decode<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Decode(msg.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_join_into_one_path() {
        let e = Error::Type("role: invalid".into())
            .at("data.message")
            .at("events[3]");
        assert_eq!(
            e,
            Error::Decode("events[3].data.message.role: invalid".into())
        );
        let e = Error::Decode("[2]: bad".into()).at("messages");
        assert_eq!(e, Error::Decode("messages[2]: bad".into()));
        let e = Error::Decode("invalid type: null".into()).at("events");
        assert_eq!(e, Error::Decode("events: invalid type: null".into()));
    }
}
