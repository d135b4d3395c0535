//! An image part as a user may build it, read one way for every exporter: `Part.image` with
//! a canonical source (`{"type": "url", "url"}`, `{"type": "base64", "media_type", "data"}`,
//! `{"type": "file", "file_id"}`), with a URL string (a data URL included) or `{"url": …}`,
//! or a Chat-shaped `image_url` part (`{"type": "image_url", "image_url": {"url"} | "…"}`).

use super::interop::url_source;
use crate::message::{part_type, Part};
use serde_json::Value;
use std::borrow::Cow;

/// The image's source in the canonical shape; `None` when the part carries none a target
/// could send.
pub fn image_source(p: &Part) -> Option<Cow<'_, Value>> {
    let given = match part_type(p)? {
        "image" => p.get("source")?,
        "image_url" => p.get("image_url")?,
        _ => return None,
    };
    match given {
        Value::String(url) => Some(Cow::Owned(url_source(url))),
        Value::Object(o) if o.contains_key("type") => Some(Cow::Borrowed(given)),
        Value::Object(o) => Some(Cow::Owned(url_source(o.get("url")?.as_str()?))),
        _ => None,
    }
}

/// The `detail` of an image: the part's own, or the one inside a Chat `image_url` object.
pub fn image_detail(p: &Part) -> Option<&Value> {
    p.get("detail")
        .or_else(|| p.get("image_url")?.get("detail"))
}
