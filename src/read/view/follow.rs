//! `--follow`: printing events as they are written, in bounded memory: new bytes are read a
//! block at a time and each finished event is printed as soon as its block is read. A compressed
//! file, which cannot be read from an offset, is decoded again from its start when it changes.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Printer, Renderer, ViewOptions, read_error};
use crate::error::Error;
use crate::tee::log::LINE_CAP;
use crate::tee::split::{Piece, Splitter};

/// The block read at a time.
const BLOCK: usize = 1 << 20;

/// A file being followed.
pub(super) struct Followed {
    path: PathBuf,
    /// Bytes read, and the file's identity when they were.
    pos: u64,
    ino: Option<u64>,
    /// Whole lines read so far (a compaction keeps them all, rewritten).
    lines: u64,
    pending: Splitter,
    /// Where the lines read are in a private key's blocks (`--redact`).
    door: crate::door::Forward,
    /// The file is there but refused (a FIFO, a device, a directory): said once, and waited on
    /// until a regular file takes its name.
    refused: bool,
}

impl Followed {
    /// Following a name from the start of whatever file comes to hold it.
    fn at_start(path: &Path) -> Followed {
        Followed {
            path: path.to_owned(),
            pos: 0,
            ino: None,
            lines: 0,
            pending: Splitter::new(LINE_CAP),
            door: Default::default(),
            refused: false,
        }
    }

    /// Following from the end of the file's whole lines (or from its start once it appears).
    pub(super) fn at_end(path: &Path) -> Followed {
        let opened = crate::read::log::open_regular(path);
        // The view before the follow says why (`run_to`).
        let refused = opened
            .as_ref()
            .is_err_and(|e| e.kind() != io::ErrorKind::NotFound);
        let mut door = crate::door::Forward::default();
        let (pos, ino, lines) = match opened {
            // A compressed file: its decoded lines, and its length to see it change.
            Ok(f) if super::is_compressed(&f).unwrap_or(false) => (
                f.metadata().map_or(0, |m| m.len()),
                f.metadata().ok().map(|m| m.ino()),
                decoded_lines(&f, &super::DecompressLimit::default()),
            ),
            Ok(f) => {
                let pos = crate::tee::sink::whole_lines_len(&f).unwrap_or(0);
                let ino = f.metadata().ok().map(|m| m.ino());
                door = crate::door::Forward::after(crate::read::log::lines::keys_at_end(&f));
                (
                    pos,
                    ino,
                    crate::tee::sink::count_newlines(&f, pos).unwrap_or(0),
                )
            }
            Err(_) => (0, None, 0),
        };
        Followed {
            pos,
            ino,
            lines,
            refused,
            door,
            ..Followed::at_start(path)
        }
    }
}

/// `--follow`: polls every 200 ms and prints each new finished event. A file that does not
/// exist yet, or is deleted, is waited for (like `tail -F`); one that is there but refused (a
/// FIFO, a device) is said so, once, and waited on until a regular file takes its name. A file replaced by a compaction
/// (a new file holding at least the lines already read) goes on after those lines; a file
/// replaced otherwise (rotation) or truncated is read from its start. Ends when stdout's
/// reader goes away.
pub(super) fn follow_files<W: Write>(
    opts: &ViewOptions,
    files: &mut [Followed],
    r: &mut Renderer,
    printer: &mut Printer<W>,
) -> Result<(), Error> {
    let write_err = |source: io::Error| Error::WriteStdout { source };
    loop {
        for (k, f) in files.iter_mut().enumerate() {
            let file = match crate::read::log::open_regular(&f.path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // Not there: waited for. A file that takes the name then is new (read from
                    // its start), not a compaction, which renames over the name.
                    *f = Followed::at_start(&f.path);
                    continue;
                }
                Err(e) => {
                    // There, but not a file to read (a FIFO renamed over it): said once.
                    if !f.refused {
                        crate::say!("smart-tee: {}", read_error(&f.path, e));
                        f.refused = true;
                    }
                    // The file read so far is gone: a regular file taking the name is new.
                    *f = Followed {
                        refused: true,
                        ..Followed::at_start(&f.path)
                    };
                    continue;
                }
            };
            f.refused = false;
            let Ok(meta) = file.metadata() else { continue };
            let (len, ino) = (meta.len(), meta.ino());
            if super::is_compressed(&file).unwrap_or(false) {
                follow_compressed(opts, k, f, file, (len, ino), r, printer)?;
                continue;
            }
            if f.ino.is_some_and(|i| i != ino) {
                // Replaced: a compaction keeps every line already read; anything else is new.
                let whole = crate::tee::sink::whole_lines_len(&file).unwrap_or(0);
                let lines = crate::tee::sink::count_newlines(&file, whole).unwrap_or(0);
                if lines >= f.lines && f.lines > 0 {
                    // Where the lines read are in keys' blocks holds for their rewrite.
                    f.pos = skip_lines(&file, f.lines).unwrap_or(whole);
                } else {
                    f.pos = 0;
                    f.lines = 0;
                    f.door = Default::default();
                }
                f.pending = Splitter::new(LINE_CAP);
            } else if len < f.pos {
                // Truncated: read again from the start, with nothing pending.
                f.pos = 0;
                f.lines = 0;
                f.pending = Splitter::new(LINE_CAP);
                f.door = Default::default();
            }
            f.ino = Some(ino);
            if len == f.pos {
                continue;
            }
            let mut reader = file;
            reader
                .seek(SeekFrom::Start(f.pos))
                .map_err(|e| read_error(&f.path, e))?;
            let mut reader = reader.take(len - f.pos);
            let mut block = vec![0u8; BLOCK];
            let mut printed = false;
            loop {
                let n = reader
                    .read(&mut block)
                    .map_err(|e| read_error(&f.path, e))?;
                if n == 0 {
                    break;
                }
                f.pos += n as u64;
                let mut at = 0;
                while let Some(piece) = f.pending.next(&block[..n], &mut at) {
                    // A line past the cap while following is left out, like a torn one.
                    if let Piece::Line(line) = piece {
                        let line = &*f.door.line(line);
                        f.lines += 1;
                        if opts.on_line(f.lines) && opts.wants(line) {
                            r.number = Some(f.lines);
                            printer.event(&r.render(k, line)).map_err(write_err)?;
                            printed = true;
                        }
                    }
                }
            }
            if printed {
                printer.out.flush().map_err(write_err)?;
            }
        }
        if crate::door::stdout_gone() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A compressed file followed: it cannot be read from an offset, so when it changes (a frame
/// or member appended, `zstd -c >> log.zst`, or the file replaced) it is decoded again from its
/// start and the lines past those already read are shown; a file replaced by one with fewer
/// lines is read from its start. A stream that ends inside a frame is being written: its whole
/// lines are shown and the rest waited for. Damage ends the follow, naming the file.
fn follow_compressed<W: Write>(
    opts: &ViewOptions,
    k: usize,
    f: &mut Followed,
    file: File,
    (len, ino): (u64, u64),
    r: &mut Renderer,
    printer: &mut Printer<W>,
) -> Result<(), Error> {
    let write_err = |source: io::Error| Error::WriteStdout { source };
    if f.ino == Some(ino) && f.pos == len {
        return Ok(());
    }
    let shown = if f.ino == Some(ino) || decoded_lines(&file, &opts.decompress) >= f.lines {
        f.lines
    } else {
        0
    };
    let (mut number, mut printed, mut failed) = (0u64, false, Ok(()));
    let res = super::for_each_line_in(file, &opts.decompress, |line| {
        number += 1;
        if number > shown && opts.on_line(number) && opts.wants(line) {
            r.number = Some(number);
            if let Err(e) = printer.event(&r.render(k, line)) {
                failed = Err(write_err(e));
                return false;
            }
            printed = true;
        }
        true
    });
    failed?;
    f.lines = number.max(shown);
    f.ino = Some(ino);
    match res {
        Ok(()) => f.pos = len,
        // Being written: read again at the next change, after the lines shown.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => f.pos = len,
        Err(e) => return Err(read_error(&f.path, e)),
    }
    if printed {
        printer.out.flush().map_err(write_err)?;
    }
    Ok(())
}

/// The lines of a compressed file, decoded (of a stream being written, its whole lines so far).
fn decoded_lines(file: &File, limit: &super::DecompressLimit) -> u64 {
    let mut n = 0;
    if let Ok(f) = file.try_clone() {
        let _ = super::for_each_line_in(f, limit, |_| {
            n += 1;
            true
        });
    }
    n
}

/// The offset just past the first `n` lines of the file.
fn skip_lines(f: &File, n: u64) -> io::Result<u64> {
    let mut r = f.try_clone()?;
    r.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut seen, mut pos) = (0u64, 0u64);
    loop {
        let k = r.read(&mut buf)?;
        if k == 0 {
            return Ok(pos);
        }
        for nl in memchr::memchr_iter(b'\n', &buf[..k]) {
            seen += 1;
            if seen == n {
                return Ok(pos + nl as u64 + 1);
            }
        }
        pos += k as u64;
    }
}
