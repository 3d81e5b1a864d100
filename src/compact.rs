//! `--compact`: rewriting existing logs in place to the budget, atomically.
//!
//! Each file is read line by line through the engine into a temporary file beside it, which is
//! synced, given the original's permissions and renamed over it; the directory is synced too.
//! Any failure removes the temporary file and leaves the original as it was. A file that grows
//! or changes while being compacted (someone is appending to it) is refused. With `--dry-run`
//! nothing is written; the report is the same.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::engine::{EngineConfig, LineEngine, Outcome};
use crate::error::Error;

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

/// Compacts `path` (or, with `dry_run`, only measures it).
pub fn compact_file(
    path: &Path,
    config: &EngineConfig,
    dry_run: bool,
) -> Result<CompactReport, Error> {
    let io_err = |source: io::Error| Error::Compact {
        path: path.to_owned(),
        source,
    };
    // Work on the file a symlink points to, so the link stays a link.
    let real = fs::canonicalize(path).map_err(io_err)?;
    let before = fs::metadata(&real).map_err(io_err)?;
    if !before.is_file() {
        return Err(io_err(io::Error::other("not a regular file")));
    }
    let mut report = CompactReport {
        path: path.to_owned(),
        ..CompactReport::default()
    };
    let tmp = temp_path(&real);
    let result = (|| -> io::Result<()> {
        let mut out: Option<BufWriter<File>> = if dry_run {
            None
        } else {
            let mode = std::os::unix::fs::PermissionsExt::mode(&before.permissions());
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode & 0o7777)
                .open(&tmp)?;
            Some(BufWriter::with_capacity(1 << 20, f))
        };
        let mut engine = LineEngine::new(config.clone());
        let mut reader = BufReader::with_capacity(1 << 20, File::open(&real)?);
        let mut line = Vec::new();
        let mut logged = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            report.bytes_before += line.len() as u64;
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            logged.clear();
            match engine.process(body, &mut logged) {
                Outcome::Blank => continue,
                Outcome::Cut | Outcome::Unplanned => report.lines_cut += 1,
                Outcome::NonJson => report.lines_non_json += 1,
                Outcome::Verbatim => {}
            }
            report.lines += 1;
            report.bytes_after += logged.len() as u64;
            if let Some(out) = out.as_mut() {
                out.write_all(&logged)?;
            }
        }
        let now = fs::metadata(&real)?;
        if fingerprint(&now) != fingerprint(&before) || report.bytes_before != before.len() {
            return Err(io::Error::other(
                "the file changed while being compacted (is something appending to it?); left as it was",
            ));
        }
        if let Some(out) = out {
            let file = out.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            // Permissions again, in case the umask narrowed them at creation.
            fs::set_permissions(&tmp, before.permissions())?;
            fs::rename(&tmp, &real)?;
            if let Some(dir) = real.parent() {
                File::open(dir)?.sync_all()?;
            }
        }
        Ok(())
    })();
    if let Err(source) = result {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(source));
    }
    Ok(report)
}

/// `.NAME.smart-tee-PID.tmp` beside the file.
fn temp_path(real: &Path) -> PathBuf {
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    real.with_file_name(format!(".{name}.smart-tee-{}.tmp", std::process::id()))
}

/// Runs `--compact` over `files`, printing one report line each. Returns false if any failed.
pub fn run(files: &[PathBuf], config: &EngineConfig, dry_run: bool) -> bool {
    let mut ok = true;
    for path in files {
        match compact_file(path, config, dry_run) {
            Ok(report) => println!("{report}{}", if dry_run { " (dry run)" } else { "" }),
            Err(e) => {
                eprintln!("smart-tee: {e}");
                ok = false;
            }
        }
    }
    ok
}
