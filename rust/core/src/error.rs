//! The one error type of the core: what went wrong (its [`ErrorKind`]), where (its [`Place`]: what
//! held the input, then a path of keys and indices inside it), and why (a message).
//!
//! The place is data, pushed as the error unwinds (`at_key`, `at_index`, `within`), so the
//! success path pays nothing for it, and it is rendered in one place, this module's `Display`:
//! `context c1: seq 2: data.message.role: invalid role "bot"`. A reader that walks down into a
//! value and names places as it goes (the format importers) passes a [`Trail`] down instead,
//! which costs nothing until an error copies it. The binding maps each kind to one Python
//! exception class and hands the path to Python as data too.

use std::fmt;

/// What went wrong. Named for the failure; the binding decides which exception each becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An argument whose value the operation refuses.
    BadArgument,
    /// A position outside the transcript (or another sequence).
    OutOfRange,
    /// A value of the wrong kind.
    WrongKind,
    /// An anchor name that the context does not have.
    UnknownAnchor,
    /// Input that cannot be read into a context: a document, a dict, stored rows.
    Undecodable,
    /// A provider message or request that cannot be converted.
    Unconvertible,
    /// A strict export whose request would need repairs.
    NeedsRepair,
    /// A file that does not exist.
    NotFound,
    /// Any other I/O failure, with the OS error number when there is one (so that the binding
    /// can raise the matching subclass: `PermissionError`, `IsADirectoryError`, …).
    Io { errno: Option<i32> },
    /// A compare-and-swap that lost: what it was based on has changed since, or a store holds
    /// another context's history under this one's id. Nothing was written.
    Conflict,
}

/// One step of a path: a key of an object or an index of a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LocItem {
    Key(String),
    Index(usize),
}

/// A path inside a value, e.g. `events[17].data.message.role`. Kept innermost first, the order
/// in which an unwinding error learns it; read outermost first with [`Location::items`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location(Vec<LocItem>);

impl Location {
    /// The path, outermost first.
    pub fn items(&self) -> impl DoubleEndedIterator<Item = &LocItem> + ExactSizeIterator {
        self.0.iter().rev()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forget the `n` outermost steps (a caller that names that place another way).
    pub fn drop_outer(&mut self, n: usize) {
        self.0.truncate(self.0.len().saturating_sub(n));
    }

    /// Add a step outside the ones already there.
    pub fn push_outer(&mut self, item: LocItem) {
        self.0.push(item);
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items().enumerate() {
            match item {
                LocItem::Key(k) if i == 0 => f.write_str(k)?,
                LocItem::Key(k) => write!(f, ".{k}")?,
                LocItem::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Where a reader is inside a nested value: the steps taken from the top, as a chain borrowed
/// on the stack. Descending costs nothing (no allocation on the success path); an error raised
/// there copies the steps into its [`Location`] ([`Error::at_trail`]).
#[derive(Debug, Clone, Copy)]
pub enum Trail<'a> {
    Top,
    Key(&'a Trail<'a>, &'a str),
    Index(&'a Trail<'a>, usize),
}

impl<'a> Trail<'a> {
    /// One step further in: under `key`.
    pub fn key(&'a self, key: &'a str) -> Trail<'a> {
        Trail::Key(self, key)
    }

    /// One step further in: at `index`.
    pub fn index(&'a self, index: usize) -> Trail<'a> {
        Trail::Index(self, index)
    }
}

/// Where an error was found: what held the input (a file, a stored context, one of its rows:
/// `within`, outermost first when read) and the path inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// Innermost first, like the path.
    within: Vec<String>,
    loc: Location,
}

impl Place {
    pub fn loc(&self) -> &Location {
        &self.loc
    }

    /// What held the input, outermost first (`["context c1", "seq 2"]`).
    pub fn within(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.within.iter().rev().map(String::as_str)
    }

    pub fn at_key(mut self, key: impl Into<String>) -> Place {
        self.loc.push_outer(LocItem::Key(key.into()));
        self
    }

    pub fn at_index(mut self, index: usize) -> Place {
        self.loc.push_outer(LocItem::Index(index));
        self
    }

    pub fn within_label(mut self, label: impl Into<String>) -> Place {
        self.within.push(label.into());
        self
    }

    /// `message` with this place before it: the one rendering of every located error.
    pub fn render(&self, message: &str) -> String {
        Located(self, message).to_string()
    }
}

struct Located<'a>(&'a Place, &'a str);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Located(place, message) = self;
        for w in place.within() {
            write!(f, "{w}: ")?;
        }
        if !place.loc.is_empty() {
            write!(f, "{}: ", place.loc)?;
        }
        f.write_str(message)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    place: Place,
    message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            place: Place::default(),
            message: message.into(),
        }
    }

    pub fn bad_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::BadArgument, message)
    }

    pub fn out_of_range(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::OutOfRange, message)
    }

    pub fn wrong_kind(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::WrongKind, message)
    }

    pub fn undecodable(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Undecodable, message)
    }

    pub fn unconvertible(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unconvertible, message)
    }

    pub fn conflict(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conflict, message)
    }

    /// An I/O failure at `path`, keeping its OS error number.
    pub fn io(path: &std::path::Path, e: &std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::NotFound => Error::new(
                ErrorKind::NotFound,
                format!("no such file: {}", path.display()),
            ),
            _ => Error::new(
                ErrorKind::Io {
                    errno: e.raw_os_error(),
                },
                format!("{}: {e}", path.display()),
            ),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn place(&self) -> &Place {
        &self.place
    }

    pub fn loc(&self) -> &Location {
        &self.place.loc
    }

    /// Why, without the place.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Found under `key` of the value being read.
    pub fn at_key(mut self, key: impl Into<String>) -> Error {
        self.place = self.place.at_key(key);
        self
    }

    /// Found at `index` of the list being read.
    pub fn at_index(mut self, index: usize) -> Error {
        self.place = self.place.at_index(index);
        self
    }

    /// Found where `trail` leads (the reader's steps, outermost first).
    pub fn at_trail(self, trail: &Trail<'_>) -> Error {
        let mut e = self;
        let mut step = trail;
        loop {
            match step {
                Trail::Top => return e,
                Trail::Key(up, k) => {
                    e = e.at_key(*k);
                    step = up;
                }
                Trail::Index(up, i) => {
                    e = e.at_index(*i);
                    step = up;
                }
            }
        }
    }

    /// Found under a path of keys, given outermost first (`&["data", "op"]`).
    pub fn at_keys(self, keys: &[&str]) -> Error {
        keys.iter().rev().fold(self, |e, k| e.at_key(*k))
    }

    /// Found in what `label` names (a file, `context c1`, `seq 2`), which holds the path.
    pub fn within(mut self, label: impl Into<String>) -> Error {
        self.place = self.place.within_label(label);
        self
    }

    /// Forget the `n` outermost steps of the path, for a caller that names that place in
    /// its own terms (`within`).
    pub fn drop_outer(&mut self, n: usize) {
        self.place.loc.drop_outer(n);
    }

    /// The same error with another kind.
    pub fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.kind = kind;
        self
    }

    /// An error met while reading input into a context: a value that a rule refused there (a
    /// bad value, a wrong kind, a position out of range) is undecodable input. Failures of
    /// another kind (I/O, a conflict) stay what they are.
    pub fn in_input(self) -> Error {
        match self.kind {
            ErrorKind::BadArgument | ErrorKind::WrongKind | ErrorKind::OutOfRange => {
                self.with_kind(ErrorKind::Undecodable)
            }
            _ => self,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Located(&self.place, &self.message).fmt(f)
    }
}

impl std::error::Error for Error {}

/// `Err` of an undecodable-input error.
pub fn decode<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::undecodable(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_pushed_as_the_error_unwinds_and_render_as_one_path() {
        let e = Error::bad_argument("invalid role \"bot\"")
            .at_key("role")
            .at_key("message")
            .at_key("data")
            .at_index(17)
            .at_key("events");
        assert_eq!(
            e.to_string(),
            "events[17].data.message.role: invalid role \"bot\""
        );
        let items: Vec<_> = e.loc().items().cloned().collect();
        assert_eq!(
            items,
            [
                LocItem::Key("events".into()),
                LocItem::Index(17),
                LocItem::Key("data".into()),
                LocItem::Key("message".into()),
                LocItem::Key("role".into()),
            ]
        );
        assert_eq!(e.message(), "invalid role \"bot\"");
        assert_eq!(e.kind(), ErrorKind::BadArgument);
    }

    #[test]
    fn a_path_may_start_with_an_index_and_may_be_empty() {
        let e = Error::unconvertible("bad").at_index(2);
        assert_eq!(e.to_string(), "[2]: bad");
        assert_eq!(
            Error::undecodable("invalid type: null").to_string(),
            "invalid type: null"
        );
        let e = Error::undecodable("x").at_index(0).at_index(3);
        assert_eq!(e.to_string(), "[3][0]: x");
    }

    #[test]
    fn what_holds_the_input_leads_the_path() {
        let e = Error::undecodable("must be \"remove\"")
            .at_key("op")
            .at_key("data")
            .within("seq 2")
            .within("context c1");
        assert_eq!(
            e.to_string(),
            "context c1: seq 2: data.op: must be \"remove\""
        );
        assert_eq!(
            e.place().within().collect::<Vec<_>>(),
            ["context c1", "seq 2"]
        );
        assert_eq!(e.loc().to_string(), "data.op");
        let e = Error::undecodable("not UTF-8").within("/tmp/a.json");
        assert_eq!(e.to_string(), "/tmp/a.json: not UTF-8");
        assert!(e.loc().is_empty());
    }

    #[test]
    fn a_rule_refusing_input_makes_it_undecodable_and_other_failures_keep_their_kind() {
        for kind in [
            ErrorKind::BadArgument,
            ErrorKind::WrongKind,
            ErrorKind::OutOfRange,
        ] {
            let e = Error::new(kind, "m").at_key("k").in_input();
            assert_eq!(e.kind(), ErrorKind::Undecodable);
            assert_eq!(e.to_string(), "k: m");
        }
        for kind in [
            ErrorKind::Conflict,
            ErrorKind::NotFound,
            ErrorKind::Io { errno: Some(13) },
            ErrorKind::Unconvertible,
        ] {
            assert_eq!(Error::new(kind, "m").in_input().kind(), kind);
        }
    }

    #[test]
    fn io_errors_keep_the_os_error_number() {
        let p = std::path::Path::new("/x/y.json");
        let e = Error::io(p, &std::io::Error::from_raw_os_error(13));
        assert_eq!(e.kind(), ErrorKind::Io { errno: Some(13) });
        assert!(e.to_string().starts_with("/x/y.json: "));
        let e = Error::io(p, &std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(e.to_string(), "no such file: /x/y.json");
    }

    #[test]
    fn a_trail_becomes_the_location_only_when_an_error_is_raised() {
        let top = Trail::Top;
        let messages = top.key("messages");
        let third = messages.index(3);
        let e = Error::unconvertible("missing \"name\"")
            .at_trail(&third.key("tool_calls").index(0).key("function"));
        assert_eq!(
            e.to_string(),
            "messages[3].tool_calls[0].function: missing \"name\""
        );
        assert_eq!(e.loc().items().len(), 5);
        assert_eq!(
            Error::unconvertible("m").at_trail(&Trail::Top).to_string(),
            "m"
        );
    }

    #[test]
    fn a_place_renders_any_message_the_same_way() {
        let p = Place::default().at_key("started_at").within_label("f.json");
        assert_eq!(
            p.render("unparsable time \"x\""),
            "f.json: started_at: unparsable time \"x\""
        );
    }
}
