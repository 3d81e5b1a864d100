//! Base64 payloads: the strings (screenshots, PDFs, signatures) that become descriptors.

/// Strings shorter than this are never taken for base64 payloads.
pub const PAYLOAD_MIN_LEN: usize = 256;

/// True for a string (raw content between the quotes) that is base64 by its alphabet and
/// length: at least [`PAYLOAD_MIN_LEN`] bytes of `A-Z a-z 0-9 + / =` (`=` only at the end),
/// with upper case, lower case and digits all present, so that long runs of one letter, words
/// and hex digests are not mistaken for one. Strings over 64 KiB are judged by samples.
pub fn is_base64_payload(s: &[u8]) -> bool {
    if s.len() < PAYLOAD_MIN_LEN {
        return false;
    }
    let body = s
        .strip_suffix(b"==")
        .or_else(|| s.strip_suffix(b"="))
        .unwrap_or(s);
    // A long string is judged by its first and last 16 KiB and 32 windows in between: a
    // screenshot is megabytes, and reading all of it would cost more than the rest of the line.
    const EDGE: usize = 16 << 10;
    if body.len() > 4 * EDGE {
        let step = (body.len() - 2 * EDGE) / 33;
        let windows = (1..33).map(|k| &body[EDGE + k * step..EDGE + k * step + 256]);
        let (head, tail) = (&body[..EDGE], &body[body.len() - EDGE..]);
        return base64_classes(std::iter::once(head).chain(windows).chain([tail]));
    }
    base64_classes(std::iter::once(body))
}

/// True when every byte of `parts` is base64 and upper case, lower case and digits all occur.
fn base64_classes<'a>(parts: impl Iterator<Item = &'a [u8]>) -> bool {
    // Checked a block at a time with branch-free compares (they vectorize), so ordinary text is
    // turned away within its first 64 bytes.
    let (mut upper, mut lower, mut digit) = (false, false, false);
    for block in parts.flat_map(|p| p.chunks(64)) {
        let mut bad = false;
        for &b in block {
            let u = b.wrapping_sub(b'A') < 26;
            let l = b.wrapping_sub(b'a') < 26;
            let d = b.wrapping_sub(b'0') < 10;
            upper |= u;
            lower |= l;
            digit |= d;
            bad |= !(u | l | d | (b == b'+') | (b == b'/'));
        }
        if bad {
            return false;
        }
    }
    upper && lower && digit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_payloads_by_alphabet_and_length() {
        let b64: Vec<u8> = (0..400).map(|i| b"Ab3+/xYz9Q"[i % 10]).collect();
        assert!(is_base64_payload(&b64));
        assert!(is_base64_payload(&[&b64[..], b"=="].concat()));
        assert!(!is_base64_payload(&b64[..200]), "too short");
        assert!(!is_base64_payload(&vec![b'x'; 1000]), "one letter");
        assert!(!is_base64_payload(&b"0123456789abcdef".repeat(40)), "hex");
        assert!(
            !is_base64_payload(&[&b64[..], b" word"].concat()),
            "a space"
        );
        assert!(
            !is_base64_payload(&[&b64[..], b"\\n"].concat()),
            "an escape"
        );
    }
}
