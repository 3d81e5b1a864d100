//! Reading a log's lines: forward (decompressed when gzip or zstd, within a bound on the bytes
//! decompressed when one is set) and backward from its end for `--tail`, in fixed blocks.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Error;
use crate::tee::log::LINE_CAP;
use crate::tee::split::{Piece, Splitter};

/// The block read at a time, backward and forward.
const BLOCK: usize = 64 * 1024;

/// Lines of a file from its end. Line starts are found by one backward `memrchr` scan over
/// fixed blocks, and a line is read once its start is known: the cost of the last N lines is
/// about the bytes of those N lines (twice), however long they are.
pub struct ReverseLines {
    file: File,
    /// Offset just past the newline that ends the next line to give (0: none left).
    end: u64,
    /// The last block read, and its offset in the file.
    buf: Vec<u8>,
    buf_start: u64,
    /// Bytes read from the file so far.
    pub bytes_read: u64,
    /// With `--redact`: where the log is in keys' blocks before lines still to read back, by
    /// their start, the nearest last ([`ReverseLines::look_back`]).
    known: Vec<(u64, crate::cut::redact::KeyLines)>,
    /// Where the last line read back is (its start and its newline), when it was past
    /// [`LINE_CAP`].
    long: Option<(u64, u64)>,
}

impl ReverseLines {
    /// Lines of `file` from the end of its last whole line: an unfinished last line is a line
    /// in progress (or torn by a kill), not an event.
    pub fn new(file: File) -> io::Result<ReverseLines> {
        let end = crate::tee::sink::whole_lines_len(&file)?;
        Ok(ReverseLines {
            file,
            end,
            buf: Vec::new(),
            buf_start: 0,
            bytes_read: 0,
            known: Vec::new(),
            long: None,
        })
    }

    /// Lines of the file at `path`, from its end.
    pub fn open(path: &Path) -> io::Result<ReverseLines> {
        ReverseLines::new(open_regular(path)?)
    }

    fn read_at(&mut self, at: u64, len: usize, into: &mut Vec<u8>) -> io::Result<()> {
        into.resize(len, 0);
        self.file.read_exact_at(into, at)?;
        self.bytes_read += len as u64;
        Ok(())
    }

    /// Where the line that ends (its newline excluded) at `stop` starts.
    fn line_start(&mut self, stop: u64) -> io::Result<u64> {
        let mut pos = stop;
        loop {
            if pos == 0 {
                return Ok(0);
            }
            let buf_end = self.buf_start + self.buf.len() as u64;
            if !(self.buf_start < pos && pos <= buf_end) {
                let lo = pos.saturating_sub(BLOCK as u64);
                let mut block = std::mem::take(&mut self.buf);
                self.read_at(lo, (pos - lo) as usize, &mut block)?;
                self.buf = block;
                self.buf_start = lo;
            }
            let upto = (pos - self.buf_start) as usize;
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf[..upto]) {
                return Ok(self.buf_start + nl as u64 + 1);
            }
            pos = self.buf_start;
        }
    }

    /// The previous line (without its newline) as the read side reads it, or None at the start
    /// of the file. A line past [`LINE_CAP`] is given as its first `LINE_CAP` bytes. With
    /// `--redact`, a line that may be one of a private key's lines of text is read with the
    /// lines before it that say whether it is ([`crate::door::before`]); what those say of
    /// the lines between is kept for them, so that the lines from the end cost each one look.
    pub fn prev(&mut self) -> io::Result<Option<Vec<u8>>> {
        let Some(line) = self.prev_raw()? else {
            return Ok(None);
        };
        if crate::door::redactor().is_none() || !crate::door::may_be_a_keys(&line) {
            return Ok(Some(crate::door::line_in(&line).into_owned()));
        }
        let start = self.end;
        while self.known.last().is_some_and(|&(at, _)| at > start) {
            self.known.pop();
        }
        let keys = match self.known.last() {
            Some(&(at, keys)) if at == start => {
                self.known.pop();
                keys
            }
            _ => self.look_back(start)?,
        };
        Ok(Some(match crate::door::replaced_after(keys, &line) {
            Some(replaced) => replaced,
            None => crate::door::line_in(&line).into_owned(),
        }))
    }

    /// Where the log is in keys' blocks before the line that starts at `start` (the next one
    /// to read back), and, kept in `known`, before each line read back on the way.
    fn look_back(&mut self, start: u64) -> io::Result<crate::cut::redact::KeyLines> {
        let mut starts = Vec::new();
        let mut failed = None;
        let states = crate::door::before(|| match self.prev_raw() {
            Ok(Some(line)) => {
                starts.push(self.end);
                match self.long.take() {
                    Some(span) => match self.marks_of(span) {
                        Ok(marks) => Some(crate::door::said_by(&marks)),
                        Err(e) => {
                            failed = Some(e);
                            None
                        }
                    },
                    None => Some(line),
                }
            }
            Ok(None) => None,
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        self.end = start;
        self.long = None;
        if let Some(e) = failed {
            return Err(e);
        }
        // states[k] is where the log is after the k-th line read back: before the one read
        // back before it, which starts at starts[k - 1].
        self.known = (1..states.len())
            .rev()
            .map(|k| (starts[k - 1], states[k]))
            .collect();
        Ok(states.first().copied().unwrap_or_default())
    }

    /// What the line at `span` (its start and its newline) says of keys' blocks, read a MiB
    /// at a time.
    fn marks_of(&mut self, (start, stop): (u64, u64)) -> io::Result<crate::cut::redact::KeyMarks> {
        let mut marks = crate::cut::redact::KeyMarks::default();
        let mut block = Vec::new();
        let mut at = start;
        while at < stop {
            let n = ((stop - at) as usize).min(1 << 20);
            self.read_at(at, n, &mut block)?;
            marks.see(&block);
            at += n as u64;
        }
        Ok(marks)
    }

    /// The previous line as it is in the file (a line past [`LINE_CAP`]: its first bytes, and
    /// where all of it is in `long`).
    fn prev_raw(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.end == 0 {
            return Ok(None);
        }
        let stop = self.end - 1; // the newline that ends the line
        let start = self.line_start(stop)?;
        self.end = start;
        let whole = (stop - start) as usize;
        let len = whole.min(LINE_CAP);
        self.long = (whole > len).then_some((start, stop));
        let buf_end = self.buf_start + self.buf.len() as u64;
        if self.buf_start <= start && start + len as u64 <= buf_end {
            let at = (start - self.buf_start) as usize;
            return Ok(Some(self.buf[at..at + len].to_vec()));
        }
        let mut line = Vec::new();
        self.read_at(start, len, &mut line)?;
        Ok(Some(line))
    }
}

/// Where the end of `file`'s whole lines is in a private key's blocks, for a reader that
/// follows it from there (`--follow`, the unfinished last line `--compact` copies).
pub fn keys_at_end(file: &File) -> crate::cut::redact::KeyLines {
    if crate::door::redactor().is_none() {
        return Default::default();
    }
    let Ok(mut lines) = file.try_clone().and_then(ReverseLines::new) else {
        return Default::default();
    };
    let end = lines.end;
    lines.look_back(end).unwrap_or_default()
}

pub(crate) fn read_error(path: &Path, source: io::Error) -> Error {
    Error::ReadLog {
        path: path.to_owned(),
        source,
    }
}

/// How much may be decompressed from one compressed log, and whether the bound cut one.
#[derive(Clone, Debug, Default)]
pub struct DecompressLimit {
    /// The most decompressed bytes read from one log (`None`: no bound).
    pub bytes: Option<u64>,
    /// Set when a log was cut by the bound.
    pub hit: Arc<AtomicBool>,
}

/// A decompressing reader that ends after its bound, saying so.
struct Bounded<R> {
    inner: R,
    left: u64,
    hit: Arc<AtomicBool>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if self.inner.read(&mut [0u8; 1])? > 0 {
                self.hit.store(true, Ordering::Relaxed);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

pub use crate::tee::decompress::{Compression, is_compressed};

/// Opens the log at `path` to read it back: without waiting (a FIFO nobody writes to would
/// hold `open` forever, and `--follow` with it), and only a regular file, which the readers
/// seek in. A FIFO, a terminal, a device or a socket is refused with what it is; standard input
/// (`-`) is copied first and may be any of them.
pub fn open_regular(path: &Path) -> io::Result<File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    #[allow(clippy::disallowed_methods, reason = "reads only: RDONLY")]
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        // A socket cannot be opened (ENXIO, "No such device or address"): say what it is.
        Err(rustix::io::Errno::NXIO)
            if std::fs::metadata(path)
                .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())) =>
        {
            return Err(not_regular("a socket"));
        }
        opened => opened?,
    };
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
    let what = match kind {
        FileType::RegularFile => {
            rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
            return Ok(File::from(fd));
        }
        FileType::Directory => return Err(rustix::io::Errno::ISDIR.into()),
        FileType::Fifo => "a FIFO or pipe",
        FileType::CharacterDevice => "a terminal or device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        _ => "not a file",
    };
    Err(not_regular(what))
}

fn not_regular(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file: give it on standard input (`--view - < FILE`)"),
    )
}

/// A log's bytes: decompressed when it is gzip or zstd, within `limit`, else its whole lines
/// (an unfinished last line is in progress).
pub fn open_log(mut file: File, limit: &DecompressLimit) -> io::Result<Box<dyn Read>> {
    let compression = Compression::of(&file)?;
    file.seek(SeekFrom::Start(0))?;
    let bound = |r: Box<dyn Read>| -> Box<dyn Read> {
        match limit.bytes {
            Some(left) => Box::new(Bounded {
                inner: r,
                left,
                hit: Arc::clone(&limit.hit),
            }),
            None => r,
        }
    };
    if let Some(c) = compression {
        // One decoder for every reader: every zstd frame and gzip member (crate::tee::decompress).
        return Ok(bound(crate::tee::decompress::decoder(file, c)?));
    }
    let whole = crate::tee::sink::whole_lines_len(&file)?;
    Ok(Box::new(file.take(whole)))
}

/// Calls `each` with every whole line of `file` in order (decompressed, within `limit`), until
/// it returns false. A line past [`LINE_CAP`] is given as its first `LINE_CAP` bytes. An
/// unfinished last line of a plain log is in progress and left out; a compressed log is
/// finished, and its last line is a line without a newline (as `--compact` takes it), unless
/// `limit` cut the log.
pub fn for_each_line_in(
    file: File,
    limit: &DecompressLimit,
    mut each: impl FnMut(&[u8]) -> bool,
) -> io::Result<()> {
    let compressed = is_compressed(&file)?;
    // This log's own flag, so that another log cut by the bound does not hide its last line.
    let own = DecompressLimit {
        bytes: limit.bytes,
        hit: Arc::default(),
    };
    let mut reader = open_log(file, &own)?;
    let mut lines = Splitter::new(LINE_CAP);
    let mut long = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut door = crate::door::Forward::default();
    // With --redact, what a line past the cap says of keys' blocks, all of it.
    let redacting = crate::door::redactor().is_some();
    let mut marks = crate::cut::redact::KeyMarks::default();
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            let cut = own.hit.load(Ordering::Relaxed);
            if cut {
                limit.hit.store(true, Ordering::Relaxed);
            }
            let last = match lines.finish() {
                Some(Piece::Line(line)) => Some(line),
                Some(Piece::End(_)) => Some(&long[..]),
                _ => None,
            };
            if let Some(line) = last.filter(|_| compressed && !cut) {
                each(&door.line(line));
            }
            return Ok(());
        }
        let mut at = 0;
        while let Some(piece) = lines.next(&buf[..n], &mut at) {
            let line = match piece {
                Piece::Line(line) => line,
                Piece::Start(first) => {
                    long = first.to_vec();
                    if redacting {
                        marks = Default::default();
                        marks.see(first);
                    }
                    continue;
                }
                Piece::Part(part) => {
                    if redacting {
                        marks.see(part);
                    }
                    continue;
                }
                Piece::End(last) => {
                    if redacting {
                        marks.see(last);
                    }
                    if !each(&door.long_line(&long, &marks)) {
                        return Ok(());
                    }
                    continue;
                }
            };
            // Redacted whole before any surface cuts it (crate::door).
            if !each(&door.line(line)) {
                return Ok(());
            }
        }
    }
}

/// [`for_each_line_in`] the file at `path`, without a bound.
pub fn for_each_line(path: &Path, each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
    for_each_line_in(open_regular(path)?, &DecompressLimit::default(), each)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str, content: &[u8]) -> (std::path::PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("smart-tee-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        File::create(&path).unwrap().write_all(content).unwrap();
        let f = File::open(&path).unwrap();
        (path, f)
    }

    #[test]
    fn reverse_lines_reads_only_the_end() {
        let line = format!("{{\"n\":\"{}\"}}\n", "x".repeat(1000));
        let mut content = line.repeat(20_000).into_bytes();
        content.extend_from_slice(b"{\"last\":1}\n{\"last\":2}\n{\"in progress");
        let (path, f) = temp("big.jsonl", &content);
        let mut r = ReverseLines::new(f).unwrap();
        // The unfinished last line is not an event yet.
        assert_eq!(r.prev().unwrap().unwrap(), b"{\"last\":2}");
        assert_eq!(r.prev().unwrap().unwrap(), b"{\"last\":1}");
        assert_eq!(r.prev().unwrap().unwrap(), line.trim_end().as_bytes());
        assert!(r.bytes_read <= 64 * 1024, "read {} of 20 MB", r.bytes_read);
        std::fs::remove_file(path).unwrap();
    }

    /// #28.4: a long last line was read back in time growing as its square (each block was
    /// prepended to all that was read). It is scanned once, then read once.
    #[test]
    fn a_long_last_line_is_read_back_in_linear_bytes() {
        let long = format!("{{\"n\":\"{}\"}}", "y".repeat(5 << 20));
        let content = format!("{{\"a\":1}}\n\n{long}\n");
        let (path, f) = temp("long.jsonl", content.as_bytes());
        let mut r = ReverseLines::new(f).unwrap();
        assert_eq!(r.prev().unwrap().unwrap(), long.as_bytes());
        assert!(r.bytes_read <= 2 * long.len() as u64 + 2 * BLOCK as u64);
        assert_eq!(r.prev().unwrap().unwrap(), b"");
        assert_eq!(r.prev().unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(r.prev().unwrap(), None);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn reverse_lines_agree_with_forward_lines() {
        for content in [&b""[..], b"\n", b"a\nb\n", b"a\n\nb", b"\n\n\nx\n", b"only"] {
            let (path, f) = temp("agree.jsonl", content);
            let mut back = Vec::new();
            let mut r = ReverseLines::new(f).unwrap();
            while let Some(l) = r.prev().unwrap() {
                back.push(l);
            }
            back.reverse();
            let mut forward = Vec::new();
            for_each_line(&path, |l| {
                forward.push(l.to_vec());
                true
            })
            .unwrap();
            assert_eq!(back, forward, "{:?}", String::from_utf8_lossy(content));
        }
    }
}
