//! Numbers, read fast: a number's end (the run of its digits eight bytes at a time) and a run of
//! integer array elements (`1,-2, 30`: token ids, offsets) sixty-four bytes at a time from the
//! masks of [`crate::line::strings`]. Tests check both against a byte-at-a-time reference in
//! every lane.

use crate::line::strings::{self, Invalid};

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` starting at `i`; returns its end.
#[inline(never)]
pub(crate) fn number_end(s: &[u8], i: usize) -> Result<usize, Invalid> {
    number_end_inlined(s, i)
}

/// [`number_end`], inlined where numbers come one after another (`reduce::whole`): the
/// scanner's loop, which calls `number_end`, runs slower with it inlined.
#[inline(always)]
pub(crate) fn number_end_inlined(s: &[u8], mut i: usize) -> Result<usize, Invalid> {
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(s, i + 1),
        _ => return Err(Invalid),
    }
    // At least one digit after a `.` or an exponent's `e`.
    let digits = |i: usize| match digits_end(s, i) {
        end if end > i => Ok(end),
        _ => Err(Invalid),
    };
    if s.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Ok(i)
}

/// The end of the run of ASCII digits at `i` (`i` itself when there is none): eight bytes at a
/// time, as a `u64` in which a byte is a digit when, less `b'0'`, its high nibble is zero and
/// its low nibble under ten.
#[inline]
fn digits_end(s: &[u8], mut i: usize) -> usize {
    const LOW: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    while let Some(&eight) = s.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let t = u64::from_le_bytes(eight) ^ 0x3030_3030_3030_3030;
        // No carry crosses a byte: each low nibble plus six is at most 0x15.
        let not_digit = (t & !LOW) | (((t & LOW) + 0x0606_0606_0606_0606) & 0x1010_1010_1010_1010);
        if not_digit != 0 {
            return i + (not_digit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// What [`integers`] read of a run of integer array elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Integers {
    /// The elements that end with a comma in the blocks read.
    pub count: usize,
    /// The last of those commas (meaningless when `count` is 0).
    pub last_comma: usize,
    /// Where the first block that was not read starts.
    pub stop: usize,
}

/// A run of array elements that are integers, from the element at `i` (a digit or `-`), read
/// sixty-four bytes at a time while each block holds nothing but such a run: integers (`-`,
/// then `0` or digits that do not start with `0`), each but the last followed by `,` and at most
/// one space. A block with any other byte, or with these in any other order, stops the read,
/// and so does the end of `s`; what the elements in the blocks read are is then known from
/// their commas alone: each ends a valid integer.
///
/// Giant arrays of token ids or line numbers are this run: read a number at a time, each end
/// found before the next is looked at, they took more than tee's time; by masks, a block costs
/// about as much as one element did.
pub(crate) fn integers(s: &[u8], i: usize) -> Integers {
    let mut run = Integers {
        count: 0,
        last_comma: 0,
        stop: i,
    };
    // What the byte before the block was, in bit 0: the element at `i` follows a comma.
    let (mut digit, mut comma, mut space, mut zero_start) = (0, 1, 0, 0);
    while let Some(block) = s.get(run.stop..).and_then(<[u8]>::first_chunk::<64>) {
        let m = strings::num_masks64(block);
        if m.digit | m.comma | m.space | m.minus != u64::MAX {
            break;
        }
        let after_digit = m.digit << 1 | digit;
        let after_comma = m.comma << 1 | comma;
        let starts_with_zero = m.zero & !after_digit;
        // A comma after a digit, a space after a comma, a minus after either, no digit after a
        // leading zero. That is all: whatever follows a space or a minus other than a digit or
        // a minus is a comma or a space in the wrong place, or a byte that stopped the read.
        let bad = (m.comma & !after_digit)
            | (m.space & !after_comma)
            | (m.minus & !(after_comma | (m.space << 1 | space)))
            | ((starts_with_zero << 1 | zero_start) & m.digit);
        if bad != 0 {
            break;
        }
        if m.comma != 0 {
            run.count += m.comma.count_ones() as usize;
            run.last_comma = run.stop + 63 - m.comma.leading_zeros() as usize;
        }
        (digit, comma, space) = (m.digit >> 63, m.comma >> 63, m.space >> 63);
        zero_start = starts_with_zero >> 63;
        run.stop += 64;
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The run of digits ends at the first byte that is not one, whichever byte value it is
    /// and wherever it falls: in each lane of the eight-byte steps and in the tail after them.
    #[test]
    fn digits_end_at_every_byte_value_in_every_lane() {
        for len in [1, 7, 8, 9, 16, 19] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'7'; len];
                    s[at] = b;
                    let want = if b.is_ascii_digit() { len } else { at };
                    assert_eq!(digits_end(&s, 0), want, "{len} {at} {b}");
                    assert_eq!(digits_end(&s, at), want, "{len} {at} {b} from it");
                }
            }
        }
    }

    /// How long the start of `s[i..]` is that can begin a run of integer elements (`-? (0 |
    /// [1-9][0-9]*)`, then `,` and at most one space before the next), a byte at a time: what
    /// [`integers`] must agree with.
    fn reference_run_prefix(s: &[u8], i: usize) -> usize {
        #[derive(Clone, Copy)]
        enum At {
            Comma,
            Space,
            Minus,
            Zero,
            Digits,
        }
        use At::*;
        let mut at = Comma;
        for (k, &b) in s[i..].iter().enumerate() {
            at = match (at, b) {
                (Comma, b' ') => Space,
                (Comma | Space, b'-') => Minus,
                (Comma | Space | Minus, b'0') => Zero,
                (Comma | Space | Minus | Digits, b'1'..=b'9') | (Digits, b'0') => Digits,
                (Zero | Digits, b',') => Comma,
                _ => return k,
            };
        }
        s.len() - i
    }

    /// Integer elements joined by `,` or `, `, with up to three bytes then overwritten by ones
    /// that may break the run (or not: a digit over a digit).
    fn integer_run() -> impl Strategy<Value = (Vec<u8>, usize)> {
        let element = prop_oneof![
            any::<u32>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            Just("0".to_string()),
            Just("-0".to_string()),
            (0..10u32).prop_map(|n| n.to_string()),
        ];
        let flaw = (
            any::<prop::sample::Index>(),
            prop::sample::select(b"0123456789,- x.]\"".to_vec()),
        );
        (
            prop::collection::vec((element, any::<bool>()), 1..200),
            prop::collection::vec(flaw, 0..4),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(elements, flaws, start)| {
                let mut s = Vec::new();
                for (k, (e, spaced)) in elements.iter().enumerate() {
                    if k > 0 {
                        s.extend_from_slice(if *spaced { b", " } else { b"," });
                    }
                    s.extend_from_slice(e.as_bytes());
                }
                for (at, b) in flaws {
                    let at = at.index(s.len());
                    s[at] = b;
                }
                // The run starts at an element start: a digit or `-` after a comma, a space or
                // nothing.
                let starts: Vec<usize> = (0..s.len())
                    .filter(|&k| {
                        matches!(s[k], b'0'..=b'9' | b'-')
                            && (k == 0 || matches!(s[k - 1], b',' | b' '))
                    })
                    .collect();
                let i = if starts.is_empty() {
                    0
                } else {
                    starts[start.index(starts.len())]
                };
                (s, i)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The blocks [`integers`] reads are the whole 64-byte blocks of the longest start of
        /// the run a byte at a time would accept, and it counts their commas.
        #[test]
        fn integers_read_the_blocks_a_byte_at_a_time_accepts((s, i) in integer_run()) {
            let got = integers(&s, i);
            let stop = i + reference_run_prefix(&s, i) / 64 * 64;
            let commas: Vec<usize> = (i..stop).filter(|&k| s[k] == b',').collect();
            prop_assert_eq!(got.stop, stop);
            prop_assert_eq!(got.count, commas.len());
            if let Some(&last) = commas.last() {
                prop_assert_eq!(got.last_comma, last);
            }
        }
    }

    /// Each rule of the run broken after a comma at every offset of a block (and across into
    /// the next): the block is not read.
    #[test]
    fn integers_stop_at_each_broken_rule_in_every_lane() {
        for bad in [
            "01", "-01", "00", "--1", "1-2", "-,", ",", "  1", " -01", " ,", "1 ,2", "1.5", "1e5",
            "+1", "1]", "-0-", "1\t,2",
        ] {
            for lane in (0..64).filter(|&lane| lane != 1) {
                // Valid elements up to `lane`, ending with a comma.
                let mut line = match lane % 2 {
                    0 => b"1,".repeat(lane / 2),
                    _ => [b"11,".as_slice(), &b"1,".repeat((lane - 3) / 2)].concat(),
                };
                line.extend_from_slice(bad.as_bytes());
                line.extend_from_slice(&b",7".repeat(100));
                let want = reference_run_prefix(&line, 0) / 64 * 64;
                assert_eq!(integers(&line, 0).stop, want, "{bad} @ {lane}");
                if lane + bad.len() <= 64 {
                    assert_eq!(want, 0, "{bad} @ {lane}");
                }
            }
        }
    }
}
