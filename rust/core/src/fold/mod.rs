//! The fold: the transcript kept live as positions → seqs of surface events (`transcript`,
//! indexed by `fenwick` trees), and its shown view (`shown`: resolution and overlay).

pub(crate) mod fenwick;
mod shown;
pub(crate) mod transcript;

pub(crate) use shown::{overlay_message, with_overlay};
pub use transcript::Transcript;
