//! Timestamps: microseconds since the Unix epoch, UTC, written as ISO-8601 with a `Z`.
//!
//! Files hold one time per event and per message, so the common shape
//! `YYYY-MM-DDTHH:MM:SS.ffffffZ` is formatted and parsed by hand (chrono's general paths
//! cost more than the rest of an event); every other shape goes through chrono.

use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

/// Microseconds since the epoch, UTC.
pub type Micros = i64;

const MICROS_PER_DAY: i64 = 86_400_000_000;

pub fn now() -> Micros {
    Utc::now().timestamp_micros()
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The 27 bytes of `YYYY-MM-DDTHH:MM:SS.ffffffZ`, or `None` outside years 0..=9999.
pub fn iso_bytes(t: Micros) -> Option<[u8; 27]> {
    let (y, mo, d) = civil_from_days(t.div_euclid(MICROS_PER_DAY));
    if !(0..=9999).contains(&y) {
        return None;
    }
    let in_day = t.rem_euclid(MICROS_PER_DAY);
    let (secs, us) = (in_day / 1_000_000, in_day % 1_000_000);
    let mut b = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |at: usize, width: usize, mut v: i64| {
        for k in (0..width).rev() {
            b[at + k] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, i64::from(mo));
    put(8, 2, i64::from(d));
    put(11, 2, secs / 3600);
    put(14, 2, secs / 60 % 60);
    put(17, 2, secs % 60);
    put(20, 6, us);
    Some(b)
}

pub fn to_iso(t: Micros) -> String {
    if let Some(b) = iso_bytes(t) {
        // Only ASCII digits and separators were written.
        return String::from_utf8_lossy(&b).into_owned();
    }
    match DateTime::<Utc>::from_timestamp_micros(t) {
        Some(d) => d.to_rfc3339_opts(SecondsFormat::Micros, true),
        None => "1970-01-01T00:00:00.000000Z".to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff` followed by `Z` or `+00:00`; `None` for any other shape.
fn parse_common(s: &str) -> Option<Micros> {
    let b = s.as_bytes();
    let utc = match b.len() {
        27 => b[26] == b'Z',
        32 => &b[26..] == b"+00:00",
        _ => false,
    };
    if !utc || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if b[19] != b'.' {
        return None;
    }
    let num = |at: usize, width: usize| -> Option<i64> {
        b[at..at + width].iter().try_fold(0i64, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)? as u32, num(8, 2)? as u32);
    let (h, mi, sec, us) = (num(11, 2)?, num(14, 2)?, num(17, 2)?, num(20, 6)?);
    if !(1..=12).contains(&mo)
        || d == 0
        || d > days_in_month(y, mo)
        || h > 23
        || mi > 59
        || sec > 59
    {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(days * MICROS_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1_000_000 + us)
}

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z: the times Python's `datetime` holds.
const EARLIEST: Micros = -62_135_596_800_000_000;
const LATEST: Micros = 253_402_300_799_999_999;

/// Parse an ISO-8601 time. A time without an offset is taken as UTC (the Python seed wrote
/// naive local times; we have no better guess than UTC and say so in the docs). Times that
/// fall outside years 1 to 9999 in UTC are refused: Python could not represent them.
pub fn parse_iso(s: &str) -> Result<Micros> {
    let t = parse_any(s)?;
    if (EARLIEST..=LATEST).contains(&t) {
        Ok(t)
    } else {
        Err(Error::undecodable(format!(
            "time {s:?} is outside years 1 to 9999 (UTC)"
        )))
    }
}

fn parse_any(s: &str) -> Result<Micros> {
    if let Some(t) = parse_common(s) {
        return Ok(t);
    }
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
    Err(Error::undecodable(format!("unparsable time {s:?}")))
}

/// `YYYYMMDD` of a time, for file names.
pub fn date_stamp(t: Micros) -> String {
    match DateTime::<Utc>::from_timestamp_micros(t) {
        Some(d) => d.format("%Y%m%d").to_string(),
        None => "19700101".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrono_iso(t: Micros) -> String {
        DateTime::<Utc>::from_timestamp_micros(t)
            .unwrap()
            .to_rfc3339_opts(SecondsFormat::Micros, true)
    }

    #[test]
    fn hand_written_paths_agree_with_chrono() {
        // Leap days, century rules, the epoch, before it, the last microsecond of a year.
        let mut samples = vec![
            0,
            -1,
            951_782_400_000_000,     // 2000-02-29
            4_107_542_399_999_999,   // 2100-02-28T23:59:59.999999
            -62_135_596_800_000_000, // 0001-01-01
            253_402_300_799_999_999, // 9999-12-31T23:59:59.999999
            1_767_225_599_999_999,   // 2025-12-31T23:59:59.999999
        ];
        let mut x: i64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(
                x.rem_euclid(253_402_300_800_000_000 + 62_135_596_800_000_000)
                    - 62_135_596_800_000_000,
            );
        }
        for t in samples {
            let s = to_iso(t);
            assert_eq!(s, chrono_iso(t), "format {t}");
            assert_eq!(parse_iso(&s).unwrap(), t, "parse {s}");
            let plus = s.replace('Z', "+00:00");
            assert_eq!(parse_iso(&plus).unwrap(), t, "parse {plus}");
        }
    }

    #[test]
    fn impossible_dates_are_refused() {
        for bad in [
            "2023-02-29T00:00:00.000000Z",
            "2024-13-01T00:00:00.000000Z",
            "2024-01-01T24:00:00.000000Z",
        ] {
            assert!(parse_iso(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_iso("2024-02-29T00:00:00.000000Z").unwrap(),
            1_709_164_800_000_000
        );
    }
}
