//! A savepoint of a context's log, and the rewind back to it: how a writer that lost a race
//! to the store (its save refused with a conflict) drops the events it could not save, to
//! catch up with the store and redo its change, without reloading the whole history.
//!
//! The log is append-only for everyone else: a rewind only ever drops events that were never
//! saved, and the caller (the OpenAI Agents session) uses it for nothing else. A savepoint
//! copies what an event can change and cannot be read back from the events themselves: the
//! fold (a removal does not say which messages it removed), the anchors, the bindings, and
//! the lengths of what only grows. That copy is a memcpy of one `u32` per transcript message.

use crate::context::{Context, LogMark, MessageHandle};
use crate::error::{Error, Result};

/// A context's state at one `next_seq`, to rewind to.
#[derive(Debug, Clone)]
pub struct Savepoint {
    id: String,
    mark: LogMark,
}

impl Savepoint {
    pub fn seq(&self) -> u64 {
        self.mark.seq()
    }
}

impl<H: MessageHandle> Context<H> {
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            id: self.id().to_string(),
            mark: self.mark(),
        }
    }

    /// Drop every event since `sp` was taken and restore the fold, anchors, bindings and
    /// content map as they were then. A savepoint of another context, or from past this log's
    /// end, is a bad argument and nothing changes.
    pub fn rewind(&mut self, sp: &Savepoint) -> Result<()> {
        if sp.id != self.id() || !self.reaches(&sp.mark) {
            return Err(Error::bad_argument(format!(
                "not a savepoint of this context's log (context {}, seq {})",
                sp.id,
                sp.seq()
            )));
        }
        self.rewind_to(&sp.mark);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::message::{Content, Message, Role};
    use std::sync::Arc;

    type Ctx = crate::Context<Arc<Message>>;

    fn msg(text: &str) -> Arc<Message> {
        Arc::new(Message::new(Role::User, Content::Text(text.into())))
    }

    #[test]
    fn a_rewind_restores_the_log_as_it_was() {
        let mut c = Ctx::new("c".into(), crate::time::now());
        for t in ["a", "b", "c"] {
            c.append(msg(t), "messages", None).unwrap();
        }
        let before = c.to_json_bytes(&Default::default()).unwrap();
        let sp = c.savepoint();
        c.remove_range(0, 1).unwrap();
        c.append(msg("d"), "messages", None).unwrap();
        c.materialize(&[("h".into(), "x".into())]).unwrap();
        c.replace_range(0, 1, msg("e")).unwrap();
        c.clear().unwrap();
        c.rewind(&sp).unwrap();
        assert_eq!(c.to_json_bytes(&Default::default()).unwrap(), before);
        assert_eq!(c.next_seq(), 3);
        let other = Ctx::new("other".into(), crate::time::now()).savepoint();
        assert!(c.rewind(&other).is_err());
    }
}
