//! The sequence window, and the rule both windows share: a window never begins with a tool
//! result.

use crate::context::{Context, MessageHandle};
use crate::error::{Error, Result};

impl<H: MessageHandle> Context<H> {
    /// Drop tool results at the start of a kept suffix: a window never begins with one.
    pub(crate) fn drop_leading_tool_results(&self, kept: &mut Vec<usize>) {
        let n = kept
            .iter()
            .take_while(|&&p| self.raw_at(p).is_some_and(|h| h.message().is_tool_result()))
            .count();
        kept.drain(..n);
    }

    /// The last `count` non-special messages; `None` when that is all of them.
    pub fn rolling_sequence_window(&mut self, count: i64) -> Result<Option<Context<H>>> {
        let count = usize::try_from(count)
            .map_err(|_| Error::bad_argument(format!("count must be non-negative, got {count}")))?;
        let (sp, td) = self.special_positions();
        let specials = [sp, td].iter().flatten().count();
        if count >= self.len() - specials {
            return Ok(None);
        }
        let mut kept: Vec<usize> = (0..self.len())
            .rev()
            .filter(|p| Some(*p) != sp && Some(*p) != td)
            .take(count)
            .collect();
        kept.reverse();
        self.drop_leading_tool_results(&mut kept);
        Ok(Some(self.fork(&kept, None, None)))
    }
}
