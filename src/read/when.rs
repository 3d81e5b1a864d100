//! Times as instants, for `--since` and `--until`: a bound is an RFC 3339 date (midnight UTC),
//! date-time (an offset or `Z`; none means UTC; `T` or a space; seconds and fractions
//! optional) or an age (`90s`, `15m`, `2h`, `3d` before now); an event's time is its RFC 3339
//! `timestamp`, or epoch milliseconds (`timestamp`, `timestamp_ms`) or seconds (`created`).
//! Both compare as instants, so time zones and fractions order correctly, and nothing in an
//! event's text can make the comparison fail (times are read as bytes, never sliced as text).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Nanoseconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant(pub i128);

const NANOS: i128 = 1_000_000_000;

/// The forms a bound may take, for error messages.
pub const ACCEPTED: &str = "an RFC 3339 date (2026-11-20), date-time (2026-11-20T10:30:00Z, \
     2026-11-20 10:30, 2026-11-20T10:30:00.5+02:00; UTC when no offset is given) or an age \
     before now (90s, 15m, 2h, 3d)";

/// Parses a `--since`/`--until` value, ages counted back from `now`.
pub fn parse_bound(flag: &str, s: &str, now: SystemTime) -> Result<Instant, String> {
    let t = s.trim();
    if let Some(age) = parse_age(t) {
        let now = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        return Ok(Instant(now - age));
    }
    parse_rfc3339(t).ok_or_else(|| format!("{flag} {s:?}: not a time; use {ACCEPTED}"))
}

/// `90s`, `15m`, `2h`, `3d` as nanoseconds.
fn parse_age(s: &str) -> Option<i128> {
    let unit = match s.as_bytes().last()? {
        b's' => 1,
        b'm' => 60,
        b'h' => 3600,
        b'd' => 86_400,
        _ => return None,
    };
    let digits = &s[..s.len() - 1];
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<i128>().ok()? * unit * NANOS)
}

/// Reads `n` ASCII digits at `at`.
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let d = b.get(at..at + n)?;
    d.iter().all(u8::is_ascii_digit).then(|| {
        d.iter()
            .fold(0i64, |acc, &c| acc * 10 + i64::from(c - b'0'))
    })
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An RFC 3339 date or date-time (`T`, `t` or a space between; minutes at least; a missing
/// offset is UTC).
pub fn parse_rfc3339(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    let (y, m, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let day = i128::from(days_from_civil(y, m, d)) * 86_400 * NANOS;
    if b.len() == 10 {
        return Some(Instant(day));
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let (hh, mm) = (digits(b, 11, 2)?, digits(b, 14, 2)?);
    let mut at = 16;
    let mut ss = 0;
    let mut frac: i128 = 0;
    if b.get(at) == Some(&b':') {
        ss = digits(b, at + 1, 2)?;
        at += 3;
        if b.get(at) == Some(&b'.') {
            at += 1;
            let start = at;
            let mut scale = NANOS;
            while let Some(c) = b.get(at).filter(|c| c.is_ascii_digit()) {
                if scale > 1 {
                    scale /= 10;
                    frac += i128::from(c - b'0') * scale;
                }
                at += 1;
            }
            if at == start {
                return None;
            }
        }
    }
    if hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let offset = match &b[at..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] if b.len() == at + 6 && b[at + 3] == b':' => {
            let (oh, om) = (digits(b, at + 1, 2)?, digits(b, at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = (oh * 3600 + om * 60) as i128;
            if *sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let secs = i128::from(hh * 3600 + mm * 60 + ss) - offset;
    Some(Instant(day + secs * NANOS + frac))
}

/// An event's time as an instant: its RFC 3339 `timestamp`, epoch milliseconds (`timestamp`
/// of opencode, `timestamp_ms` of Cursor) or seconds (`created` of Goose).
pub fn event_instant(v: &Value) -> Option<Instant> {
    let ms = |ms: u64| Instant(i128::from(ms) * 1_000_000);
    match v.get("timestamp") {
        Some(Value::String(ts)) => return parse_rfc3339(ts.trim()),
        Some(Value::Number(n)) => return n.as_u64().map(ms),
        _ => {}
    }
    if let Some(t) = v.get("timestamp_ms").and_then(Value::as_u64) {
        return Some(ms(t));
    }
    let secs = v
        .get("created")
        .or_else(|| v.pointer("/message/created"))
        .and_then(Value::as_u64)?;
    Some(Instant(i128::from(secs) * NANOS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(s: &str) -> i128 {
        parse_rfc3339(s).unwrap().0 / NANOS
    }

    #[test]
    fn dates_and_date_times_are_instants() {
        assert_eq!(at("1970-01-01"), 0);
        assert_eq!(at("2026-11-22T10:04:05Z"), 1_795_341_845);
        assert_eq!(at("2026-11-22 10:04:05"), 1_795_341_845);
        assert_eq!(at("2026-11-22T12:04:05+02:00"), 1_795_341_845);
        assert_eq!(at("2026-11-22T10:04"), 1_795_341_840);
        assert_eq!(at("2000-02-29T00:00:00.999999999999Z"), 951_782_400);
        assert!(
            parse_rfc3339("2026-11-22T10:04:05.5Z").unwrap()
                > parse_rfc3339("2026-11-22T10:04:05.25Z").unwrap()
        );
        for bad in [
            "banana",
            "yesterday",
            "2026-2-11",
            "2026-02-30",
            "2026-13-01",
            "2026-11-22T25:00",
            "2026-11-22T10:04:05.Z",
            "2026-11-22T10:04:05+0200",
            "ééééééééééé",
            "2026-11-22Té0:00",
            "",
        ] {
            assert!(parse_rfc3339(bad).is_none(), "{bad}");
        }
    }

    /// #28.8: `--since banana` printed nothing with status 0 (compared as text).
    #[test]
    fn bounds_are_refused_unless_a_time_or_an_age() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let age = |s: &str| (1_000_000 * NANOS - parse_bound("--since", s, now).unwrap().0) / NANOS;
        assert_eq!(age("90s"), 90);
        assert_eq!(age("15m"), 900);
        assert_eq!(age("2h"), 7200);
        assert_eq!(age("3d"), 259_200);
        for bad in ["banana", "yesterday", "2026-2-11", "3w", "-3d", "d", "1.5h"] {
            let err = parse_bound("--since", bad, now).unwrap_err();
            assert!(err.contains("RFC 3339") && err.contains("15m"), "{err}");
        }
    }

    #[test]
    fn event_times_in_every_form() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(
            event_instant(&v(r#"{"timestamp":"1970-01-01T00:00:01.5Z"}"#)),
            Some(Instant(1_500_000_000))
        );
        assert_eq!(
            event_instant(&v(r#"{"timestamp":1500}"#)),
            Some(Instant(1_500_000_000))
        );
        assert_eq!(
            event_instant(&v(r#"{"timestamp_ms":1500}"#)),
            Some(Instant(1_500_000_000))
        );
        assert_eq!(
            event_instant(&v(r#"{"created":2}"#)),
            Some(Instant(2_000_000_000))
        );
        assert_eq!(event_instant(&v(r#"{"timestamp":"ééééééééééé"}"#)), None);
    }
}
