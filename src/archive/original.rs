//! `smart-tee --view --original --line N LOG`: a log line's original bytes, from the archive,
//! whole or a page at a time.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::reader::Archive;

/// What `--view --original` was asked for.
#[derive(Clone, Debug)]
pub struct OriginalRequest {
    pub log: PathBuf,
    /// `--archive FILE`, when the archive is not at [`super::default_path`].
    pub archive: Option<PathBuf>,
    /// Inclusive ranges of line numbers (`--line N`, `--line N-M`).
    pub lines: Vec<(u64, u64)>,
    /// `--offset`/`--limit`: a page of one line instead of whole lines.
    pub page: Option<(u64, Option<u64>)>,
}

/// The archive of `log`: `archive`, or the default beside it. The error is a sentence for the
/// user.
pub fn open_for(log: &Path, archive: Option<&Path>) -> Result<Archive, String> {
    let path = archive.map_or_else(|| super::default_path(log), Path::to_path_buf);
    if !path.exists() {
        return Err(format!(
            "log {} has no archive: {} does not exist (smart-tee writes one with --archive FILE \
             or {}=1; name another with --archive FILE)",
            log.display(),
            path.display(),
            super::ARCHIVE_VAR
        ));
    }
    Archive::open(&path).map_err(|e| e.to_string())
}

/// Prints the originals asked for on `out`, notes on `note`. Returns false when one could not
/// be given (said on `note`).
pub fn run(req: &OriginalRequest, out: &mut dyn Write, note: &mut dyn Write) -> io::Result<bool> {
    let mut archive = match open_for(&req.log, req.archive.as_deref()) {
        Ok(a) => a,
        Err(msg) => {
            writeln!(note, "smart-tee: {msg}")?;
            return Ok(false);
        }
    };
    let mut ok = true;
    for &(first, last) in &req.lines {
        for n in first..=last {
            let loc = match archive.locate(&req.log, n) {
                Ok(loc) => loc,
                Err(msg) => {
                    writeln!(note, "smart-tee: {msg}")?;
                    ok = false;
                    continue;
                }
            };
            let (offset, limit) = match req.page {
                Some((offset, limit)) => (offset, limit.unwrap_or(u64::MAX)),
                None => (0, u64::MAX),
            };
            let got = archive.read(loc, offset, limit, out);
            let got = match got {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Err(e),
                Err(e) => {
                    writeln!(note, "smart-tee: line {n}: {e}")?;
                    ok = false;
                    continue;
                }
            };
            if req.page.is_none() {
                out.write_all(b"\n")?;
                continue;
            }
            let from = offset.min(loc.len);
            let to = from + got;
            if to < loc.len {
                writeln!(
                    note,
                    "smart-tee: line {n}: bytes {from}..{to} of {}; next page: --offset {to}",
                    loc.len
                )?;
            } else {
                writeln!(
                    note,
                    "smart-tee: line {n}: bytes {from}..{to} of {}; end of line",
                    loc.len
                )?;
            }
        }
    }
    out.flush()?;
    Ok(ok)
}
