//! Python-compatible JSON: the compact text counted and stored exactly as Python's `json.dumps`
//! writes it, and the nesting rule for values taken from outside.

use serde_json::Value;

/// How deep a value given from Python may nest. Files nest it a few levels further, and the
/// reader refuses documents deeper than 128 levels (serde_json's guard against stack
/// exhaustion), so anything deeper could be saved but never loaded.
pub const MAX_DEPTH: usize = 100;

/// How many containers deep `v` nests (a scalar is 0, `[1]` is 1).
pub fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Compact JSON as Python's `json.dumps(v, ensure_ascii=False, separators=(",", ":"))`,
/// floats included (`1e-05`, `1e+16`, `3.0`): counts are of this text, so it must be Python's.
pub fn compact_json(v: &Value) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFloats);
    // Writing a `Value` into memory cannot fail.
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// serde_json's compact output with floats written as Python's `repr` writes them.
struct PythonFloats;

impl serde_json::ser::Formatter for PythonFloats {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        w.write_all(python_float_repr(v).as_bytes())
    }
    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        self.write_f64(w, f64::from(v))
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip (Rust's `{:e}` gives the same),
/// positional when the decimal exponent is in [-4, 16), else `d.ddde±XX`; `.0` on integers.
pub fn python_float_repr(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = nearest_even(x.abs(), digits, exp);
    let point = exp + 1; // digits are 0.d1d2… × 10^point
    let body = if !(-4 < point && point <= 16) {
        let frac = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}{frac}e{sign}{:02}", &digits[..1], exp.abs())
    } else if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    if x < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// The shortest digits of `x` as Python picks them where two candidates of that length both
/// read back as `x` and lie exactly as far from it (its exact value ends in a 5 just past
/// them): the one whose last digit is even, as Python's correctly rounded `repr` does. Rust's
/// shortest formatting may give the other (`70368744177664.625` → `…64.63`, Python `…64.62`).
fn nearest_even(x: f64, digits: String, exp: i32) -> String {
    let n = digits.len();
    let last = digits.as_bytes()[n - 1] - b'0';
    if last.is_multiple_of(2) {
        return digits; // already the even one of any tie
    }
    let reads_back = |d: &str| format!("0.{d}e{}", exp + 1).parse::<f64>() == Ok(x);
    let neighbour = |to: u8| format!("{}{}", &digits[..n - 1], to);
    let other = [Some(last - 1), (last < 9).then_some(last + 1)]
        .into_iter()
        .flatten()
        .map(neighbour)
        .find(|d| reads_back(d));
    let Some(other) = other else {
        return digits; // the only candidate of its length
    };
    let low = digits.as_str().min(other.as_str());
    // A tie: x is exactly `low` followed by a 5. Its digits `low` then 5 (one past the
    // candidates, correctly rounded) are a cheap first test; only then is its exact expansion
    // (an f64 has at most 767 significant digits) read to see nothing follows the 5.
    let starts_low_5 = |text: &str| {
        let (d, e) = text.split_once('e').unwrap_or((text, "0"));
        let d: String = d.chars().filter(char::is_ascii_digit).collect();
        (e.parse::<i32>() == Ok(exp) && d.starts_with(low) && d[n..].starts_with('5')).then_some(d)
    };
    let tie = starts_low_5(&format!("{:.*e}", n, x)).is_some()
        && starts_low_5(&format!("{:.800e}", x))
            .is_some_and(|d| d[n + 1..].bytes().all(|b| b == b'0'));
    if tie {
        other
    } else {
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::python_float_repr;

    #[test]
    fn floats_print_as_python_repr() {
        // (value, Python 3.11 repr)
        let cases = [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (0.1, "0.1"),
            (1.5e-7, "1.5e-07"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (-0.0, "-0.0"),
            (3.0, "3.0"),
            (-2.5, "-2.5"),
            (1e300, "1e+300"),
            (2.5e-300, "2.5e-300"),
            (1234567890123456.7, "1234567890123456.8"),
            (0.30000000000000004, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (100.0, "100.0"),
            (12.5, "12.5"),
            (0.001234, "0.001234"),
            (9999999999999998.0, "9999999999999998.0"),
            // exactly halfway between two shortest candidates: Python takes the even digit
            (70368744177664.62, "70368744177664.62"),
            (-70368744177664.62, "-70368744177664.62"),
        ];
        for (v, want) in cases {
            assert_eq!(python_float_repr(v), want, "{v:e}");
        }
    }
}
