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
    /// Any other I/O failure (`OSError`).
    Io(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Prefix a decode error with the place it was found, e.g. `events[17].data`.
    pub fn at(self, place: &str) -> Error {
        match self {
            Error::Decode(m) => Error::Decode(format!("{place}: {m}")),
            Error::Value(m) | Error::Type(m) | Error::Index(m) => {
                Error::Decode(format!("{place}: {m}"))
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
            | Error::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub fn decode<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Decode(msg.into()))
}
