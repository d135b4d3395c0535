//! Timestamps: microseconds since the Unix epoch, UTC, written as ISO-8601 with a `Z`.

use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

/// Microseconds since the epoch, UTC.
pub type Micros = i64;

pub fn now() -> Micros {
    Utc::now().timestamp_micros()
}

pub fn to_iso(t: Micros) -> String {
    match DateTime::<Utc>::from_timestamp_micros(t) {
        Some(d) => d.to_rfc3339_opts(SecondsFormat::Micros, true),
        None => "1970-01-01T00:00:00.000000Z".to_string(),
    }
}

/// Parse an ISO-8601 time. A time without an offset is taken as UTC (the Python seed wrote
/// naive local times; we have no better guess than UTC and say so in the docs).
pub fn parse_iso(s: &str) -> Result<Micros> {
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Ok(d.with_timezone(&Utc).timestamp_micros());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(n.and_utc().timestamp_micros());
        }
    }
    if let Ok(d) = DateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f%z") {
        return Ok(d.with_timezone(&Utc).timestamp_micros());
    }
    Err(Error::Decode(format!("unparsable time {s:?}")))
}

/// `YYYYMMDD` of a time, for file names.
pub fn date_stamp(t: Micros) -> String {
    match DateTime::<Utc>::from_timestamp_micros(t) {
        Some(d) => d.format("%Y%m%d").to_string(),
        None => "19700101".to_string(),
    }
}
