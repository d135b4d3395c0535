//! The enumerations and required keys of the provider APIs that their SDK types spell out and
//! a request is refused for: checked by the importers on the way in (a `FormatError` that says
//! where), and by the exporters on the way out, so that a part built by hand or carried over
//! from another format is never sent in a shape its target refuses.

use super::err;
use crate::error::{Result, Trail};
use serde_json::{Map, Value};

/// An image's `detail`, in Chat's `image_url` and Responses' `input_image` alike.
pub const IMAGE_DETAIL: &[&str] = &["auto", "low", "high", "original"];
/// Chat's `input_audio.format`.
pub const AUDIO_FORMATS: &[&str] = &["wav", "mp3"];
/// The media types of an Anthropic base64 image.
pub const IMAGE_MEDIA: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
/// The `type`s of an Anthropic document's source.
pub const DOCUMENT_SOURCES: &[&str] = &["base64", "text", "content", "url", "file"];

fn one_of<'v>(v: &'v Value, allowed: &[&str]) -> Option<&'v str> {
    v.as_str().filter(|s| allowed.contains(s))
}

/// A value of an enumeration, or the `FormatError` at `place` that lists the allowed ones.
pub fn check_enum(v: &Value, allowed: &[&str], place: &Trail<'_>) -> Result<()> {
    match one_of(v, allowed) {
        Some(_) => Ok(()),
        None => Err(err(place, format!("{v} is not one of {allowed:?}"))),
    }
}

/// An image detail fit to send, if `v` is one.
pub fn image_detail(v: Option<&Value>) -> Option<&Value> {
    v.filter(|d| one_of(d, IMAGE_DETAIL).is_some())
}

fn has_str(o: &Map<String, Value>, key: &str) -> bool {
    o.get(key).is_some_and(Value::is_string)
}

/// Why an Anthropic image `source` would be refused (`None`: it would not): base64 with one of
/// the image media types and its data, a URL, or a file id.
pub fn image_source_fault(s: &Value) -> Option<String> {
    let Some(o) = s.as_object() else {
        return Some("must be an object".into());
    };
    match o.get("type").and_then(Value::as_str) {
        Some("base64") if !has_str(o, "data") => Some("missing \"data\"".into()),
        Some("base64") => match o.get("media_type") {
            Some(m) if one_of(m, IMAGE_MEDIA).is_some() => None,
            Some(m) => Some(format!("media_type {m} is not one of {IMAGE_MEDIA:?}")),
            None => Some("missing \"media_type\"".into()),
        },
        Some("url") => (!has_str(o, "url")).then(|| "missing \"url\"".into()),
        Some("file") => (!has_str(o, "file_id")).then(|| "missing \"file_id\"".into()),
        _ => Some("\"type\" must be \"base64\", \"url\" or \"file\"".into()),
    }
}

/// Why an Anthropic document `source` would be refused (`None`: it would not).
pub fn document_source_fault(s: &Value) -> Option<String> {
    let Some(o) = s.as_object() else {
        return Some("must be an object".into());
    };
    match o.get("type") {
        Some(t) if one_of(t, DOCUMENT_SOURCES).is_some() => None,
        _ => Some(format!("\"type\" must be one of {DOCUMENT_SOURCES:?}")),
    }
}

/// An Anthropic image or document block's source, checked on the way in.
pub fn check_source(o: &Map<String, Value>, document: bool, at: &Trail<'_>) -> Result<()> {
    let place = at.key("source");
    let Some(s) = o.get("source") else {
        return Err(err(at, "missing \"source\""));
    };
    let fault = if document {
        document_source_fault(s)
    } else {
        image_source_fault(s)
    };
    match fault {
        Some(why) => Err(err(&place, why)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_sources() {
        assert!(image_source_fault(&json!({})).is_some());
        assert!(image_source_fault(&json!({"type": "url"})).is_some());
        assert!(image_source_fault(&json!({"type": "url", "url": "https://x"})).is_none());
        assert!(image_source_fault(
            &json!({"type": "base64", "media_type": "image/bmp", "data": "x"})
        )
        .is_some());
        assert!(image_source_fault(&json!({"type": "file", "file_id": "f"})).is_none());
        assert!(document_source_fault(&json!({"type": "text", "data": "x"})).is_none());
        assert!(document_source_fault(&json!({})).is_some());
    }

    #[test]
    fn enumerations() {
        assert!(check_enum(&json!("low"), IMAGE_DETAIL, &Trail::Top).is_ok());
        assert!(check_enum(&json!("bogus"), IMAGE_DETAIL, &Trail::Top).is_err());
        assert!(check_enum(&json!([null]), IMAGE_DETAIL, &Trail::Top).is_err());
        assert!(image_detail(Some(&json!("bogus"))).is_none());
    }
}
