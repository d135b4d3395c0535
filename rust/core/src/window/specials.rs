//! The special messages: the first `SystemPromptMessage` in the `system_prompt`
//! partition and the first `ToolDefinitionsMessage` in `tools`. Every window and fork carries
//! them.

use crate::context::{Context, MessageHandle};
use crate::message::Kind;

impl<H: MessageHandle> Context<H> {
    fn first_of_kind(&self, anchor: &str, kind: Kind) -> Option<usize> {
        let (start, end) = self.anchors().partition(anchor)?;
        (start..end.min(self.len()))
            .find(|&p| self.raw_at(p).is_some_and(|h| h.message().kind == kind))
    }

    /// Positions of the special messages: the first `SystemPromptMessage` in the
    /// `system_prompt` partition and the first `ToolDefinitionsMessage` in `tools`.
    pub fn special_positions(&self) -> (Option<usize>, Option<usize>) {
        (
            self.first_of_kind("system_prompt", Kind::SystemPrompt),
            self.first_of_kind("tools", Kind::ToolDefinitions),
        )
    }

    /// The system prompt message as `messages` shows it (resolved, overlaid): the very
    /// object `messages` holds in its slot.
    pub fn system_prompt_message(&mut self) -> Option<H> {
        let p = self.special_positions().0?;
        Some(self.shown_at(p))
    }

    /// The tool definitions message as `messages` shows it.
    pub fn tool_definitions_message(&mut self) -> Option<H> {
        let p = self.special_positions().1?;
        Some(self.shown_at(p))
    }
}
