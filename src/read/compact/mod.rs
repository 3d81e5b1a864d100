//! `--compact`: rewriting existing logs in place to the budget, atomically and safely.
//!
//! Each file is locked (the exclusive lock that writers' shared locks hold off: a log being
//! written is refused), checked to be a log (a binary, or a file of more than a tenth non-JSON
//! lines, is refused), and read through the tee path's own line splitter and memory caps
//! ([`LogWriter`]) into a temporary file beside it, which is given the original's owner, group,
//! mode and extended attributes (or the compaction is refused), synced and renamed over it while
//! the lock is held; the directory is synced too. A log with a second hard link, or that another
//! process holds open for writing (`/proc/*/fd`), is refused. A result
//! that is not smaller, or identical, leaves the file untouched. What a killed compaction of the
//! same log left (its temporary file) is removed first. An unfinished last line (a
//! writer was killed mid-line) is copied as it is, unprocessed. Any failure removes the
//! temporary file and leaves the original as it was. A file that changes while being compacted
//! (a writer that takes no lock, such as `>>`) is refused, checked last just before the rename;
//! what it appends between that check and the rename is carried over. With `--dry-run` nothing
//! is written; the report is the same. `docs/writing.md` says what compaction cannot protect.
//!
//! A log compressed with gzip or zstd (a rotated `agent.jsonl.1.gz`) is compacted the same way
//! and written back compressed as it was (gzip level 6, zstd level 3); its sizes in the report
//! are the compressed ones. Every zstd frame and gzip member is read (`crate::tee::decompress`). A
//! compressed stream that is damaged or truncated is refused, saying which, and a last line
//! without a newline in it is compacted as a line.
//!
//! A compaction never shortens a log: the temporary file, read back through the same decoder,
//! must hold as many lines as the decoded original (less its blank lines) before the rename.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::cut::engine::{EngineConfig, LineEngine};
use crate::error::Error;
use crate::read::log::{Compression, DecompressLimit, open_log};
use crate::tee::log::LogWriter;
use crate::tee::sink::{LogSink, whole_lines_len};

/// Bytes read at a time.
mod copy;

use copy::{copy_range, copy_unfinished, keep_attributes, same_contents};

const CHUNK: usize = 1 << 20;

/// A file with more non-JSON lines than one in this many is not taken for a log.
const NON_JSON_SHARE: u64 = 10;

/// What compacting one file did (or would do).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactReport {
    pub path: PathBuf,
    pub lines: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub lines_cut: u64,
    pub lines_non_json: u64,
}

impl std::fmt::Display for CompactReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} lines, {} -> {} bytes, {} cut, {} not JSON",
            self.path.display(),
            self.lines,
            self.bytes_before,
            self.bytes_after,
            self.lines_cut,
            self.lines_non_json
        )
    }
}

/// A file's identity and state: a change means someone wrote to it meanwhile.
fn fingerprint(meta: &fs::Metadata) -> (u64, Option<std::time::SystemTime>, u64) {
    (meta.len(), meta.modified().ok(), meta.ino())
}

/// What became of a file that was looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Rewritten smaller (or, in a dry run, would be).
    Compacted,
    /// Already compact: left untouched.
    Unchanged,
}

/// A writer that keeps nothing (`--dry-run`).
struct Discard;

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where the compacted lines go: the temporary file (or nothing, in a dry run), through the
/// compressor of a compressed log, counting the bytes that reach the file.
enum Output {
    Plain(Counted),
    Gzip(flate2::write::GzEncoder<Counted>),
    Zstd(zstd::stream::write::Encoder<'static, Counted>),
}

/// A writer that counts the bytes it passes on.
struct Counted {
    inner: Box<dyn Write + Send>,
    bytes: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl Output {
    fn new(to: Box<dyn Write + Send>, compression: Option<Compression>) -> io::Result<Output> {
        let counted = Counted {
            inner: to,
            bytes: 0,
        };
        Ok(match compression {
            None => Output::Plain(counted),
            Some(Compression::Gzip) => Output::Gzip(flate2::write::GzEncoder::new(
                counted,
                flate2::Compression::new(6),
            )),
            Some(Compression::Zstd) => Output::Zstd(zstd::stream::write::Encoder::new(counted, 3)?),
        })
    }

    /// Ends the compressed stream; the bytes that reached the file.
    fn finish(self) -> io::Result<u64> {
        let mut counted = match self {
            Output::Plain(c) => c,
            Output::Gzip(e) => e.finish()?,
            Output::Zstd(e) => e.finish()?,
        };
        counted.flush()?;
        Ok(counted.bytes)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::Gzip(w) => w.write(buf),
            Output::Zstd(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::Gzip(w) => w.flush(),
            Output::Zstd(w) => w.flush(),
        }
    }
}

/// An [`Output`] that the log's sink writes to and the compaction finishes after it.
#[derive(Clone)]
struct SharedOutput(std::sync::Arc<std::sync::Mutex<Option<Output>>>);

impl SharedOutput {
    fn with<T>(&self, f: impl FnOnce(&mut Output) -> io::Result<T>) -> io::Result<T> {
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(out) => f(out),
            None => Err(io::Error::other(
                "the compacted output was already finished",
            )),
        }
    }

    fn finish(&self) -> io::Result<u64> {
        let taken = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        taken.map_or(Ok(0), Output::finish)
    }
}

impl Write for SharedOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|out| out.write(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.with(|out| out.flush())
    }
}

/// Compacts `path` (or, with `dry_run`, only measures it).
pub fn compact_file(
    path: &Path,
    config: &EngineConfig,
    dry_run: bool,
) -> Result<(CompactReport, Verdict), Error> {
    let io_err = |source: io::Error| Error::Compact {
        path: path.to_owned(),
        source,
    };
    let refuse = |why: String| io_err(io::Error::other(why));
    // Work on the file a symlink points to, so the link stays a link.
    let real = fs::canonicalize(path).map_err(io_err)?;
    let before = fs::metadata(&real).map_err(io_err)?;
    if !before.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    let file = File::open(&real).map_err(io_err)?;
    if file.try_lock().is_err() {
        return Err(refuse(
            "another process is writing it (it holds the log's lock); not compacted".into(),
        ));
    }
    if before.nlink() > 1 {
        return Err(refuse(format!(
            "it has {} hard links: the other names would keep the old content; not compacted",
            before.nlink()
        )));
    }
    if let Some(writer) = writer_elsewhere(&before) {
        return Err(refuse(format!(
            "{writer} has it open for writing (its next lines would go to the replaced file); \
             not compacted"
        )));
    }
    let compression = Compression::of(&file).map_err(io_err)?;
    if compression.is_none() && looks_binary(&file).map_err(io_err)? {
        return Err(refuse(
            "it holds NUL bytes: a binary file, not a log; not compacted".into(),
        ));
    }
    let mut report = CompactReport {
        path: path.to_owned(),
        bytes_before: before.len(),
        ..CompactReport::default()
    };
    let tmp = temp_path(&real);
    if !dry_run {
        remove_stale_temps(&real);
    }
    let result = (|| -> io::Result<Verdict> {
        let out = if dry_run {
            None
        } else {
            let mode = before.mode();
            #[allow(
                clippy::disallowed_methods,
                reason = "a door (docs/redaction.md): every line is made by the redacting engine"
            )]
            Some(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(mode & 0o777)
                    .open(&tmp)
                    .map_err(|e| {
                        io::Error::new(
                            e.kind(),
                            format!(
                                "cannot create the compacted copy beside it ({}): {e}; not \
                                 compacted, left as it was",
                                tmp.display()
                            ),
                        )
                    })?,
            )
        };
        let to: Box<dyn Write + Send> = match &out {
            Some(f) => Box::new(f.try_clone()?),
            None => Box::new(Discard),
        };
        let output = SharedOutput(std::sync::Arc::new(std::sync::Mutex::new(Some(
            Output::new(to, compression)?,
        ))));
        let sink = LogSink::new(&tmp, Box::new(output.clone()));
        let mut log = LogWriter::new(LineEngine::new(config.clone()), vec![sink]);
        // Whole lines go through the tee path; an unfinished last line of a plain log is
        // copied unprocessed. A compressed log is read whole, decompressed.
        let whole = match compression {
            None => whole_lines_len(&file)?,
            Some(_) => before.len(),
        };
        // The reader `--view` uses: a plain log's whole lines, a compressed one decompressed.
        let no_bound = DecompressLimit {
            bytes: None,
            hit: Default::default(),
        };
        let mut reader = open_log(file.try_clone()?, &no_bound)?;
        if crate::door::redactor().is_some() {
            // A log written without --redact may hold the part of a secret its own cut left
            // beside a marker: each line is read as every reading surface reads it.
            reader = Box::new(crate::read::lines_in::LinesIn::new(reader, CHUNK));
        }
        let mut buf = vec![0u8; CHUNK];
        let mut read = 0u64;
        let mut lines_before = LineCount::default();
        loop {
            // The decoder's error says whether the stream is truncated or damaged.
            let n = reader
                .read(&mut buf)
                .map_err(|e| io::Error::new(e.kind(), format!("{e}; not compacted")))?;
            if n == 0 {
                break;
            }
            read += n as u64;
            lines_before.add(&buf[..n]);
            if let Some(e) = log.feed(&buf[..n]).into_iter().next() {
                return Err(io::Error::other(e.to_string()));
            }
        }
        if let Some(e) = log.finish().into_iter().next() {
            return Err(io::Error::other(e.to_string()));
        }
        let stats = log.stats();
        drop(log);
        let written = output.finish()?;
        let unfinished = before.len() - whole;
        // The lines the compacted log must hold: every line read, less the blank ones (the
        // tee path drops them), an unfinished last line of a plain log included.
        let expected =
            (lines_before.lines() + u64::from(unfinished > 0)).saturating_sub(stats.lines_blank);
        if stats.lines_logged() + u64::from(unfinished > 0) != expected {
            return Err(short(expected, stats.lines_logged(), "lines were written"));
        }
        report.lines = stats.lines_logged();
        report.lines_cut = stats.lines_cut + stats.lines_unplanned;
        report.lines_non_json = stats.lines_non_json;
        report.bytes_after = written + unfinished;
        if stats.lines_non_json > 0 && stats.lines_non_json * NON_JSON_SHARE > report.lines {
            return Err(io::Error::other(format!(
                "{} of its {} lines are not JSON: not a log; not compacted",
                stats.lines_non_json, report.lines
            )));
        }
        let nothing_cut = report.lines_cut + report.lines_non_json + stats.lines_blank == 0;
        let redacting = crate::door::redactor().is_some();
        // Recompressing lines that were all kept as they were changes nothing worth a rename;
        // with --redact, a line may have changed without a cut.
        if compression.is_some() && nothing_cut && !redacting {
            if out.is_some() {
                fs::remove_file(&tmp)?;
            }
            report.bytes_after = report.bytes_before;
            return Ok(Verdict::Unchanged);
        }
        // A compressed log is judged by its lines: recompressed cut lines may take a few more
        // bytes than the runs of repeats they replaced, and the lines are what readers read.
        let (from, to) = match compression {
            Some(_) => (read, stats.bytes_logged),
            None => (report.bytes_before, report.bytes_after),
        };
        // With --redact a label may be longer than the secret it replaces: redacting is the
        // point, and it may cost bytes.
        if to > from && !redacting {
            return Err(io::Error::other(format!(
                "compacting would make it larger ({from} -> {to} bytes); not compacted"
            )));
        }
        let Some(out) = out else {
            let same = report.bytes_after == report.bytes_before && nothing_cut;
            return Ok(if same {
                Verdict::Unchanged
            } else {
                Verdict::Compacted
            });
        };
        if unfinished > 0 {
            copy_unfinished(&file, whole, unfinished, &out)?;
        }
        if report.bytes_after == report.bytes_before && same_contents(&file, &out)? {
            fs::remove_file(&tmp)?;
            return Ok(Verdict::Unchanged);
        }
        // The log's owner, group, mode and extended attributes (ACLs among them), or no
        // compaction: a log that its writer can no longer open is worse than a long one.
        keep_attributes(&file, &out, &before)?;
        out.sync_all()?;
        // Verified before it replaces: the new file, read back as any reader reads it, holds
        // every line. A compaction never shortens a log.
        let mut lines_after = LineCount::default();
        let mut back = crate::tee::decompress::open(File::open(&tmp)?).map_err(|e| {
            io::Error::new(e.kind(), format!("reading the compacted copy back: {e}"))
        })?;
        loop {
            let n = back.read(&mut buf).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("reading the compacted copy back: {e}; not compacted"),
                )
            })?;
            if n == 0 {
                break;
            }
            lines_after.add(&buf[..n]);
        }
        if lines_after.lines() != expected {
            return Err(short(
                expected,
                lines_after.lines(),
                "lines are in the compacted copy",
            ));
        }
        // Checked last, just before the rename: a writer that takes no lock and wrote meanwhile.
        if fingerprint(&fs::metadata(&real)?) != fingerprint(&before) {
            return Err(io::Error::other(
                "the file changed while being compacted (is something appending to it?); left as it was",
            ));
        }
        // Writers that open the new file wait for this lock until the carry-over below is done.
        out.lock()?;
        fs::rename(&tmp, &real)?;
        // A writer that takes no lock may still have written between the check and the
        // rename: what it added to the replaced file is carried over, as it was written.
        let added = file.metadata()?.len().saturating_sub(before.len());
        if added > 0 {
            copy_range(&file, before.len(), &out)?;
            out.sync_all()?;
            crate::say!(
                "smart-tee: {}: {added} bytes were appended during the compaction; carried over \
                 unchanged",
                path.display()
            );
        }
        if let Some(dir) = real.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(Verdict::Compacted)
    })();
    match result {
        Ok(verdict) => Ok((report, verdict)),
        Err(source) => {
            let _ = fs::remove_file(&tmp);
            Err(io_err(source))
        }
    }
}

/// Lines in a stream of bytes: its newlines, and an unfinished last line.
#[derive(Default)]
struct LineCount {
    newlines: u64,
    last: Option<u8>,
}

impl LineCount {
    fn add(&mut self, bytes: &[u8]) {
        self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        if let Some(&b) = bytes.last() {
            self.last = Some(b);
        }
    }

    fn lines(&self) -> u64 {
        self.newlines + u64::from(self.last.is_some_and(|b| b != b'\n'))
    }
}

/// The refusal of a compaction that would lose lines.
fn short(expected: u64, got: u64, what: &str) -> io::Error {
    io::Error::other(format!(
        "it has {expected} lines (blank ones left out) but {got} {what}; not compacted, \
         left as it was (a compaction never shortens a log: please report this)"
    ))
}

/// Another process that has the file `meta` describes open for writing, as `/proc` shows it
/// (all processes for root, one's own otherwise): "process PID (name)".
fn writer_elsewhere(meta: &fs::Metadata) -> Option<String> {
    let me = std::process::id().to_string();
    for proc in fs::read_dir("/proc").ok()?.flatten() {
        let pid = proc.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = fs::read_dir(proc.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let same = fs::metadata(fd.path())
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino());
            if !same {
                continue;
            }
            let info = proc.path().join("fdinfo").join(fd.file_name());
            let flags = fs::read_to_string(info).ok().and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("flags:"))?;
                u32::from_str_radix(line["flags:".len()..].trim(), 8).ok()
            });
            // O_WRONLY or O_RDWR (an unknown mode counts as a writer).
            if flags.is_none_or(|f| f & 3 != 0) {
                let name = fs::read_to_string(proc.path().join("comm")).unwrap_or_default();
                return Some(format!("process {pid} ({})", name.trim()));
            }
        }
    }
    None
}

/// True when the first 64 KiB of the file hold a NUL byte (no text log has one).
fn looks_binary(file: &File) -> io::Result<bool> {
    let mut head = vec![0u8; 64 * 1024];
    let n = file.read_at(&mut head, 0)?;
    Ok(memchr::memchr(0, &head[..n]).is_some())
}

/// `.NAME.smart-tee-PID.tmp` beside the file.
fn temp_path(real: &Path) -> PathBuf {
    real.with_file_name(format!("{}{}.tmp", temp_prefix(real), std::process::id()))
}

/// `.NAME.smart-tee-`: what every compaction's temporary file of `real` starts with.
fn temp_prefix(real: &Path) -> String {
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    format!(".{name}.smart-tee-")
}

/// Removes what compactions of `real` that were killed left beside it: their temporary files
/// (see [`temp_path`]), named after a process that is gone. (Under the log's exclusive lock no
/// other compaction of it can be running; the process check also spares a compaction that
/// holds an older file of the same name.) Each removal is said on stderr; a failure to remove
/// is not an error of this compaction.
fn remove_stale_temps(real: &Path) {
    let prefix = temp_prefix(real);
    let Some(Ok(entries)) = real.parent().map(fs::read_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(pid) = file_name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists();
        if gone && fs::remove_file(entry.path()).is_ok() {
            crate::say!(
                "smart-tee: removed {:?}, left by a compaction that was stopped",
                entry.path()
            );
        }
    }
}

/// Runs `--compact` over `files`, printing one report line each. Returns false if any failed.
pub fn run(files: &[PathBuf], config: &EngineConfig, dry_run: bool) -> bool {
    let mut ok = true;
    for path in files {
        match compact_file(path, config, dry_run) {
            Ok((report, verdict)) => crate::answer!(
                "{report}{}{}",
                if verdict == Verdict::Unchanged {
                    ", unchanged"
                } else {
                    ""
                },
                if dry_run { " (dry run)" } else { "" }
            ),
            Err(e) => {
                crate::say!("smart-tee: {e}");
                ok = false;
            }
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_with_an_unfinished_last_one() {
        let count = |parts: &[&[u8]]| {
            let mut c = LineCount::default();
            for p in parts {
                c.add(p);
            }
            c.lines()
        };
        assert_eq!(count(&[]), 0);
        assert_eq!(count(&[b"", b""]), 0);
        assert_eq!(count(&[b"a\nb", b"\n"]), 2);
        assert_eq!(count(&[b"a\n", b"b"]), 2);
        assert_eq!(count(&[b"a\n", b""]), 1);
        assert_eq!(count(&[b"\n\n"]), 2);
        let e = short(4, 2, "lines are in the compacted copy").to_string();
        assert!(
            e.contains("has 4 lines") && e.contains("not compacted"),
            "{e}"
        );
    }
}
