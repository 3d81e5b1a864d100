//! Parsers of flag values (sizes, line ranges, ratios, token counts, file modes): each
//! refusal names the value and says what was expected.

/// Parses a byte count: digits with an optional K or M suffix (1024-based; KB, KiB, MB and MiB
/// are accepted too, in any case).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("expected a number of bytes such as 5120, 8K or 1M".into());
    }
    if t.starts_with('-') {
        return Err(format!(
            "{s:?} is negative; expected a number of bytes such as 5120, 8K or 1M"
        ));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let unit: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => {
            return Err(format!(
                "{s:?} is not a number of bytes; expected digits with an optional K or M suffix"
            ));
        }
    };
    if digits.is_empty() {
        return Err(format!(
            "{s:?} has no digits; expected a number of bytes such as 5120, 8K or 1M"
        ));
    }
    let too_large = || format!("{s:?} is too large");
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    let n = n.checked_mul(unit).ok_or_else(too_large)?;
    // Offsets in a line are kept in 32 bits: no budget needs more.
    if n > u32::MAX as u64 {
        return Err(format!(
            "{s:?} is too large; the largest budget is 4294967295 bytes"
        ));
    }
    Ok(n as usize)
}

/// Parses `--line`: `N` or `N-M` (line numbers from 1, M at least N).
pub(super) fn parse_line_range(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{s:?} is not a line number N or a range N-M (from 1)");
    let num = |t: &str| t.trim().parse::<u64>().ok().filter(|&n| n > 0);
    match s.split_once('-') {
        None => num(s).map(|n| (n, n)).ok_or_else(bad),
        Some((a, b)) => match (num(a), num(b)) {
            (Some(a), Some(b)) if a <= b => Ok((a, b)),
            _ => Err(bad()),
        },
    }
}

pub(super) fn parse_bytes_per_token(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.5..=100.0).contains(&r) => Ok(r),
        _ => Err(format!(
            "{s:?} is not a number of bytes per token between 0.5 and 100"
        )),
    }
}

/// `--max-tokens`: a whole number of tokens, at least 100 (a budget that holds a line of
/// output and the note of what was left out).
pub(super) fn parse_max_tokens(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 100 => Ok(n),
        Ok(_) => Err(format!("{s:?} is too small: the least is 100 tokens")),
        Err(_) => Err(format!(
            "{s:?} is not a whole number of tokens (100 or more)"
        )),
    }
}

pub(super) fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("{s:?} is not a ratio between 0 and 1")),
    }
}

pub(super) fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim(), 8) {
        Ok(m) if m <= 0o777 => Ok(m),
        Ok(m) if m <= 0o7777 => Err(format!(
            "{s:?} has setuid, setgid or sticky bits, which a log must not have; use a mode \
             such as 600 or 644"
        )),
        _ => Err(format!(
            "{s:?} is not an octal file mode such as 600 or 644"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("5120"), Ok(5120));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("0"), Ok(0));
        for bad in [
            "",
            "-1",
            "abc",
            "1.5K",
            "K",
            "1T",
            "99999999999999999999999",
            "4096M",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn default_mode_is_private() {
        assert_eq!(parse_mode("600"), Ok(crate::tee::sink::DEFAULT_MODE));
        assert_eq!(parse_mode("777"), Ok(0o777));
        for bad in ["999", "7777", "4755", "1644", "2600", "-1", ""] {
            assert!(parse_mode(bad).is_err(), "{bad}");
        }
    }
}
