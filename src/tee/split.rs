//! Splitting a stream of chunks into lines, in bounded memory: the one splitter of the tee path,
//! `--compact`, `--stdout-max-line-bytes` and `--view`.
//!
//! A line that ends in the chunk where it starts is handed over in place, without a copy; one
//! that spans chunks is gathered in a buffer; one that grows past the cap is handed over in
//! pieces as it arrives ([`Piece::Start`], [`Piece::Part`]s, [`Piece::End`]), so no line is
//! ever held whole past the cap.

use memchr::memchr;

/// What the splitter hands over.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A whole line, without its newline.
    Line(&'a [u8]),
    /// The first bytes of a line longer than the cap; `Part`s and one `End` follow.
    Start(&'a [u8]),
    /// More bytes of a long line.
    Part(&'a [u8]),
    /// The last bytes of a long line (its newline excluded), or none at end of input.
    End(&'a [u8]),
}

/// Splits chunks into lines. Call [`Splitter::next`] with each chunk until it returns `None`,
/// then [`Splitter::finish`] at end of input.
#[derive(Debug, Default)]
pub struct Splitter {
    /// The unfinished line so far (while it is within the cap).
    pending: Vec<u8>,
    cap: usize,
    /// Inside a line past the cap.
    long: bool,
    /// `pending` was handed over: clear it at the next call.
    handed: bool,
}

impl Splitter {
    /// A splitter that gathers lines up to `cap` bytes.
    pub fn new(cap: usize) -> Splitter {
        Splitter {
            cap,
            ..Splitter::default()
        }
    }

    fn reclaim(&mut self) {
        if self.handed {
            self.handed = false;
            if self.long {
                // A long line's first bytes: give the memory back.
                self.pending = Vec::new();
            } else {
                self.pending.clear();
            }
        }
    }

    /// The next piece of `chunk` from `*at`, advancing `*at`; `None` when the chunk is used up.
    #[inline]
    pub fn next<'a>(&'a mut self, chunk: &'a [u8], at: &mut usize) -> Option<Piece<'a>> {
        self.reclaim();
        let rest = chunk.get(*at..).filter(|r| !r.is_empty())?;
        match memchr(b'\n', rest) {
            Some(k) => {
                let piece = &rest[..k];
                *at += k + 1;
                if self.long {
                    self.long = false;
                    Some(Piece::End(piece))
                } else if self.pending.is_empty() {
                    Some(Piece::Line(piece))
                } else {
                    self.gather(piece);
                    self.handed = true;
                    Some(Piece::Line(&self.pending))
                }
            }
            None => {
                *at = chunk.len();
                if self.long {
                    return Some(Piece::Part(rest));
                }
                self.gather(rest);
                if self.pending.len() > self.cap {
                    self.long = true;
                    self.handed = true;
                    return Some(Piece::Start(&self.pending));
                }
                None
            }
        }
    }

    /// Adds `bytes` to the unfinished line. The buffer grows as a `Vec` does, doubling, but
    /// never past what the cap lets it hold (the cap and the bytes that crossed it): a line
    /// just past an 8 MiB cap held 16 MiB.
    fn gather(&mut self, bytes: &[u8]) {
        let want = self.pending.len() + bytes.len();
        if want > self.pending.capacity() {
            let most = self.cap.saturating_add(bytes.len()).max(want);
            let grown = (self.pending.capacity() * 2).clamp(want, most);
            self.pending.reserve_exact(grown - self.pending.len());
        }
        self.pending.extend_from_slice(bytes);
    }

    /// At end of input: the unfinished last line, if there is one.
    pub fn finish(&mut self) -> Option<Piece<'_>> {
        self.reclaim();
        if self.long {
            self.long = false;
            return Some(Piece::End(&[]));
        }
        if self.pending.is_empty() {
            return None;
        }
        self.handed = true;
        Some(Piece::Line(&self.pending))
    }

    /// True when part of a line has been read and not handed over whole yet.
    pub fn in_line(&self) -> bool {
        self.long || (!self.pending.is_empty() && !self.handed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reassembles what the splitter hands over: each line whole, and whether it came in pieces.
    fn split(input: &[u8], chunk: usize, cap: usize) -> Vec<(Vec<u8>, bool)> {
        let mut s = Splitter::new(cap);
        let mut out: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut take = |p: Piece| match p {
            Piece::Line(l) => out.push((l.to_vec(), false)),
            Piece::Start(b) => out.push((b.to_vec(), true)),
            Piece::Part(b) | Piece::End(b) => out.last_mut().unwrap().0.extend_from_slice(b),
        };
        for c in input.chunks(chunk.max(1)) {
            let mut at = 0;
            while let Some(p) = s.next(c, &mut at) {
                take(p);
            }
        }
        if let Some(p) = s.finish() {
            take(p);
        }
        out
    }

    /// A line gathered past the cap holds the cap and the chunk that crossed it, not the
    /// doubling of the cap (16 MiB for a line just past 8 MiB).
    #[test]
    fn a_line_just_past_the_cap_holds_no_more_than_the_cap_and_a_chunk() {
        let (cap, chunk) = (8 << 20, 256 << 10);
        let bytes = vec![b'x'; chunk];
        let mut s = Splitter::new(cap);
        let mut most = 0;
        for _ in 0..(cap / chunk + 3) {
            let mut at = 0;
            while s.next(&bytes, &mut at).is_some() {}
            most = most.max(s.pending.capacity());
        }
        assert!(most <= cap + chunk, "{most}");
        // And a line ending just past the cap.
        let mut s = Splitter::new(cap);
        for _ in 0..cap / chunk {
            let mut at = 0;
            assert!(s.next(&bytes, &mut at).is_none());
        }
        let mut at = 0;
        let end = [&bytes[..chunk - 1], b"\n"].concat();
        assert_eq!(
            s.next(&end, &mut at)
                .map(|p| matches!(p, Piece::Line(l) if l.len() == cap + chunk - 1)),
            Some(true)
        );
        assert!(
            s.pending.capacity() <= cap + chunk,
            "{}",
            s.pending.capacity()
        );
    }

    proptest! {
        #[test]
        fn lines_are_the_input_split_on_newlines(
            input in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a'), Just(b'b')], 0..300),
            chunk in 1usize..40,
            cap in 1usize..30,
        ) {
            let got = split(&input, chunk, cap);
            let mut want: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
            if want.last().is_some_and(|l| l.is_empty()) {
                want.pop();
            }
            prop_assert_eq!(got.len(), want.len());
            for ((line, long), w) in got.iter().zip(&want) {
                prop_assert_eq!(&line[..], *w);
                // Only a line past the cap, gathered across chunks, comes in pieces.
                if *long {
                    prop_assert!(line.len() > cap);
                }
            }
        }
    }

    #[test]
    fn a_long_line_is_never_gathered_past_the_cap() {
        let mut s = Splitter::new(10);
        let mut at = 0;
        assert_eq!(
            s.next(b"0123456789ab", &mut at),
            Some(Piece::Start(b"0123456789ab"))
        );
        let mut at = 0;
        assert_eq!(s.next(b"cdef", &mut at), Some(Piece::Part(b"cdef")));
        assert!(
            s.pending.capacity() == 0,
            "the gathered bytes were given back"
        );
        let mut at = 0;
        assert_eq!(s.next(b"gh\nnext\n", &mut at), Some(Piece::End(b"gh")));
        assert_eq!(s.next(b"gh\nnext\n", &mut at), Some(Piece::Line(b"next")));
        assert_eq!(s.next(b"gh\nnext\n", &mut at), None);
        assert_eq!(s.finish(), None);
    }
}
