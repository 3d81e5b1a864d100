//! Payloads: the strings that become descriptors in a cut line, wherever they are: base64
//! (standard or URL-safe alphabet: screenshots, PDFs, signatures), `data:<mime>;base64,` URLs
//! (opencode attachments), and opaque ciphertext under its own key (Codex `encrypted_content`).

/// Keys whose string value is ciphertext or a signature, whatever its alphabet: a payload from
/// [`CIPHERTEXT_MIN_LEN`] bytes when it is opaque (see [`is_opaque`]).
pub const CIPHERTEXT_KEYS: &[&[u8]] = &[
    b"\"encrypted_content\"",
    b"\"encryptedContent\"",
    b"\"signature\"",
];

/// Ciphertext shorter than this stays as it is: one rule with the planner's, which never cuts a
/// string of 64 bytes or less (`costs::MIN_CUT_LEN`), so never replaces one either.
pub const CIPHERTEXT_MIN_LEN: usize = 65;

/// True when the string `s` (raw content between the quotes) under the member key `key` (quotes
/// included, empty in an array) is a payload.
#[inline]
pub fn is_payload(key: &[u8], s: &[u8]) -> bool {
    if s.len() >= CIPHERTEXT_MIN_LEN && CIPHERTEXT_KEYS.contains(&key) && is_opaque(s) {
        return true;
    }
    s.len() >= PAYLOAD_MIN_LEN && (is_base64_payload(s) || data_url_media(s).is_some())
}

/// True for a token, not prose: printable ASCII without a space, a quote or a backslash (an
/// escape), as ciphertext and signatures are in any of their alphabets (base64, base64url, hex,
/// dotted tokens). Branch-free over blocks, as [`base64_classes`].
pub fn is_opaque(s: &[u8]) -> bool {
    s.chunks(64).all(|block| {
        !block.iter().fold(false, |bad, &b| {
            bad | !(0x21..=0x7E).contains(&b) | (b == b'"') | (b == b'\\')
        })
    })
}

/// The media type of a `data:<mime>;base64,<base64>` URL, when `s` is one.
pub fn data_url_media(s: &[u8]) -> Option<&[u8]> {
    let rest = s.strip_prefix(b"data:")?;
    let head = &rest[..rest.len().min(128)];
    let semi = memchr::memmem::find(head, b";base64,")?;
    let media = &rest[..semi];
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"+-./".contains(b);
    if media.is_empty() || !media.iter().all(plain) {
        return None;
    }
    let body = &rest[semi + 8..];
    (body.len() >= PAYLOAD_MIN_LEN / 2 && is_base64_payload_body(body)).then_some(media)
}

/// Strings shorter than this are never taken for base64 payloads.
pub const PAYLOAD_MIN_LEN: usize = 256;

/// True for a string (raw content between the quotes) that is base64 by its alphabet and
/// length: at least [`PAYLOAD_MIN_LEN`] bytes of `A-Z a-z 0-9 + / =` or the URL-safe `- _`
/// (`=` only at the end), with upper case, lower case and digits all present, so that long runs
/// of one letter, words and hex digests are not mistaken for one. Strings over 64 KiB are
/// judged by samples.
pub fn is_base64_payload(s: &[u8]) -> bool {
    s.len() >= PAYLOAD_MIN_LEN && is_base64_payload_body(s)
}

fn is_base64_payload_body(s: &[u8]) -> bool {
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

/// True when every byte of `parts` is base64 (either alphabet) and upper case, lower case and digits all occur.
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
            bad |= !(u | l | d | (b == b'+') | (b == b'/') | (b == b'-') | (b == b'_'));
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

    #[test]
    fn ciphertext_is_a_token_longer_than_the_strings_never_cut() {
        let key = b"\"signature\"";
        let token = b"EqMBCkYIBxgCKkBx0+/=_-.".repeat(4);
        assert!(is_payload(key, &token[..65]));
        assert!(!is_payload(key, &token[..64]), "64 bytes are never cut");
        assert!(!is_payload(b"\"text\"", &token[..65]), "another key");
        let prose = b"I will read the file first, then run the tests and fix what fails.";
        assert!(prose.len() > 64);
        assert!(!is_payload(key, prose), "prose with spaces");
        assert!(
            !is_payload(key, &[&token[..70], b"\\n"].concat()),
            "an escape"
        );
        assert!(!is_payload(key, "é".repeat(40).as_bytes()), "not ASCII");
    }
}
