//! `--compact`: rewriting existing logs in place to the budget, atomically and safely.
//!
//! Each file is locked (the exclusive lock that writers' shared locks hold off: a log being
//! written is refused), checked to be a log (a binary, or a file of more than a tenth non-JSON
//! lines, is refused), and read through the tee path's own line splitter and memory caps
//! ([`LogWriter`]) into a temporary file beside it, which is synced, given the original's
//! permissions and renamed over it while the lock is held; the directory is synced too. A result
//! that is not smaller, or identical, leaves the file untouched. What a killed compaction of the
//! same log left (its temporary file) is removed first. An unfinished last line (a
//! writer was killed mid-line) is copied as it is, unprocessed. Any failure removes the
//! temporary file and leaves the original as it was. A file that changes while being compacted
//! (a writer that takes no lock, such as `tee -a`) is refused. With `--dry-run` nothing is
//! written; the report is the same.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::engine::{EngineConfig, LineEngine};
use crate::error::Error;
use crate::log::LogWriter;
use crate::sink::{LogSink, whole_lines_len};

/// Bytes read at a time.
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
    use std::os::unix::fs::MetadataExt;
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

/// A writer that counts what it is given and keeps nothing (`--dry-run`).
struct Discard;

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
    if looks_binary(&file).map_err(io_err)? {
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
            let mode = std::os::unix::fs::PermissionsExt::mode(&before.permissions());
            Some(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(mode & 0o777)
                    .open(&tmp)?,
            )
        };
        let writer: Box<dyn Write + Send> = match &out {
            Some(f) => Box::new(f.try_clone()?),
            None => Box::new(Discard),
        };
        let sink = LogSink::new(&tmp, writer);
        let mut log = LogWriter::new(LineEngine::new(config.clone()), vec![sink]);
        // Whole lines go through the tee path; an unfinished last line is copied unprocessed.
        let whole = whole_lines_len(&file)?;
        let mut reader = (&file).take(whole);
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            if let Some(e) = log.feed(&buf[..n]).into_iter().next() {
                return Err(io::Error::other(e.to_string()));
            }
        }
        if let Some(e) = log.finish().into_iter().next() {
            return Err(io::Error::other(e.to_string()));
        }
        let stats = log.stats();
        let unfinished = before.len() - whole;
        report.lines = stats.lines_logged();
        report.lines_cut = stats.lines_cut + stats.lines_unplanned;
        report.lines_non_json = stats.lines_non_json;
        report.bytes_after = stats.bytes_logged + unfinished;
        if stats.lines_non_json > 0 && stats.lines_non_json * NON_JSON_SHARE > report.lines {
            return Err(io::Error::other(format!(
                "{} of its {} lines are not JSON: not a log; not compacted",
                stats.lines_non_json, report.lines
            )));
        }
        if report.bytes_after > report.bytes_before {
            return Err(io::Error::other(format!(
                "compacting would make it larger ({} -> {} bytes); not compacted",
                report.bytes_before, report.bytes_after
            )));
        }
        let now = fs::metadata(&real)?;
        if fingerprint(&now) != fingerprint(&before) {
            return Err(io::Error::other(
                "the file changed while being compacted (is something appending to it?); left as it was",
            ));
        }
        let Some(out) = out else {
            let same = report.bytes_after == report.bytes_before
                && report.lines_cut + report.lines_non_json + stats.lines_blank == 0;
            return Ok(if same {
                Verdict::Unchanged
            } else {
                Verdict::Compacted
            });
        };
        if unfinished > 0 {
            let mut rest = vec![0u8; CHUNK];
            let mut at = whole;
            while at < before.len() {
                let n = file.read_at(&mut rest, at)?;
                if n == 0 {
                    break;
                }
                (&out).write_all(&rest[..n])?;
                at += n as u64;
            }
        }
        if report.bytes_after == report.bytes_before && same_contents(&file, &out)? {
            fs::remove_file(&tmp)?;
            return Ok(Verdict::Unchanged);
        }
        out.sync_all()?;
        // Permissions again, in case the umask narrowed them at creation.
        fs::set_permissions(&tmp, before.permissions())?;
        fs::rename(&tmp, &real)?;
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

/// True when the first 64 KiB of the file hold a NUL byte (no text log has one).
fn looks_binary(file: &File) -> io::Result<bool> {
    let mut head = vec![0u8; 64 * 1024];
    let n = file.read_at(&mut head, 0)?;
    Ok(memchr::memchr(0, &head[..n]).is_some())
}

/// True when the two files hold the same bytes.
fn same_contents(a: &File, b: &File) -> io::Result<bool> {
    let (mut x, mut y) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    let mut at = 0;
    loop {
        let n = a.read_at(&mut x, at)?;
        let m = read_full_at(b, &mut y[..n.max(1)], at)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
        at += n as u64;
    }
}

fn read_full_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let n = f.read_at(&mut buf[got..], at + got as u64)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
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
            eprintln!(
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
            Ok((report, verdict)) => println!(
                "{report}{}{}",
                if verdict == Verdict::Unchanged {
                    ", unchanged"
                } else {
                    ""
                },
                if dry_run { " (dry run)" } else { "" }
            ),
            Err(e) => {
                eprintln!("smart-tee: {e}");
                ok = false;
            }
        }
    }
    ok
}
