//! `smart-tee --view --original --line N LOG`: a log line's original bytes, from the archive,
//! whole or a page at a time.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::reader::{Archive, Located};

/// The longest original that `--redact` reads whole to redact it before paging; a longer one
/// is refused under `--redact` rather than shown with a secret cut at a page's edge.
pub const REDACT_WHOLE_MAX: u64 = 256 << 20;

/// The most of an original held at a time to see what it says of private keys' blocks.
const PAGE: u64 = 1 << 20;

/// A page of an original as every reading surface shows it (`--original`, MCP
/// `read_original`, the report): at most `limit` bytes from `offset`, and the length the
/// offsets count in. With `--redact` ([`crate::door`]) the whole original is redacted first and
/// the page is taken from the redacted text, so that no page ends inside a secret the whole
/// line would have redacted; offsets and lengths then count redacted bytes. Without it, the
/// archive's bytes as they are. `loc` is line `n` of `log`: a line of text may be one of a
/// private key's, which the originals before it say ([`crate::door::before`]).
pub fn page_of(
    archive: &mut Archive,
    (log, n): (&Path, u64),
    loc: Located,
    offset: u64,
    limit: u64,
) -> io::Result<(Vec<u8>, u64)> {
    let mut page = Vec::new();
    if crate::door::redactor().is_none() {
        archive.read(loc, offset, limit, &mut page)?;
        return Ok((page, loc.len));
    }
    if loc.len > REDACT_WHOLE_MAX {
        return Err(io::Error::other(format!(
            "its original is {} bytes, more than the {} MiB that --redact reads whole to \
             redact it; read it without --redact",
            loc.len,
            REDACT_WHOLE_MAX >> 20
        )));
    }
    let mut whole = Vec::new();
    archive.read(loc, 0, u64::MAX, &mut whole)?;
    let whole = if crate::door::may_be_a_keys(&whole) {
        let mut k = n;
        let states = crate::door::before(|| {
            k = k.checked_sub(1).filter(|&k| k > 0)?;
            let loc = archive.locate(log, k).ok()?;
            let mut line = Vec::new();
            if loc.len <= PAGE {
                archive.read(loc, 0, u64::MAX, &mut line).ok()?;
                return Some(line);
            }
            // A long original is read a page at a time, for what it says of keys' blocks.
            let mut marks = crate::cut::redact::KeyMarks::default();
            for at in (0..loc.len).step_by(PAGE as usize) {
                line.clear();
                archive.read(loc, at, PAGE, &mut line).ok()?;
                marks.see(&line);
            }
            Some(crate::door::said_by(&marks))
        });
        let keys = states.first().copied().unwrap_or_default();
        match crate::door::replaced_after(keys, &whole) {
            Some(replaced) => replaced.into(),
            None => crate::door::bytes(&whole),
        }
    } else {
        crate::door::bytes(&whole)
    };
    let len = whole.len() as u64;
    let from = offset.min(len) as usize;
    let to = offset.saturating_add(limit).min(len) as usize;
    page.extend_from_slice(&whole[from..to]);
    Ok((page, len))
}

/// How a page's offsets count, said beside the page when `--redact` is on.
fn counted() -> &'static str {
    if crate::door::redactor().is_some() {
        " (of the redacted original: offsets count redacted bytes)"
    } else {
        ""
    }
}

/// What `--view --original` was asked for.
#[derive(Clone, Debug)]
pub struct OriginalRequest {
    pub log: PathBuf,
    /// `--archive FILE`, when the archive is not at one of [`super::default_paths`].
    pub archive: Option<PathBuf>,
    /// Inclusive ranges of line numbers (`--line N`, `--line N-M`).
    pub lines: Vec<(u64, u64)>,
    /// `--offset`/`--limit`: a page of one line instead of whole lines.
    pub page: Option<(u64, Option<u64>)>,
}

/// The archive of `log`: `archive`, or the first of [`super::default_paths`] that exists. The
/// error is a sentence for the user.
pub fn open_for(log: &Path, archive: Option<&Path>) -> Result<Archive, String> {
    let path = match archive {
        Some(a) => a.to_path_buf(),
        None => find_default(log).unwrap_or_else(|| super::default_path(log)),
    };
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

/// The archive beside `log`, by the names [`super::default_paths`] gives, if one exists.
pub fn find_default(log: &Path) -> Option<PathBuf> {
    super::default_paths(log).into_iter().find(|p| p.is_file())
}

/// The archives rotated next to `archive`, newer first (`run.jsonl.orig.zst.1`: the live
/// `run.jsonl.orig.zst`, then `run.jsonl.orig.zst.2`), those that exist. logrotate's
/// `copytruncate` copies an archive at another moment than its log: the lines smart-tee had
/// logged but not yet archived then are archived after the truncation, in the next archive of
/// the rotation, and the first lines of the new log may have gone to the copy. The hash check
/// of every frame against the log keeps a line found there right.
pub fn neighbours(archive: &Path) -> Vec<PathBuf> {
    const STEM: &str = ".orig.zst";
    let Some(name) = archive.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let beside = |file: String| archive.with_file_name(file);
    let found = if name.ends_with(STEM) {
        vec![beside(format!("{name}.1"))]
    } else if let Some((base, n)) = name.rsplit_once('.')
        && base.ends_with(STEM)
        && let Ok(n) = n.parse::<u64>()
    {
        let newer = match n {
            0 | 1 => base.to_string(),
            n => format!("{base}.{}", n - 1),
        };
        vec![beside(newer), beside(format!("{base}.{}", n + 1))]
    } else {
        Vec::new()
    };
    found.into_iter().filter(|p| p.is_file()).collect()
}

/// Finds line `n` of `log` in `archive` or, when it is not there and the archive was found by
/// its name (not named with `--archive`), in its [`neighbours`]. Returns the archive that has
/// it (`None`: `archive`) and where.
fn locate_across(
    archive: &mut Archive,
    others: &mut Option<Vec<Archive>>,
    named: bool,
    log: &Path,
    n: u64,
) -> Result<(Option<usize>, Located), String> {
    let first = match archive.locate(log, n) {
        Ok(loc) => return Ok((None, loc)),
        Err(msg) => msg,
    };
    if named {
        return Err(first);
    }
    let others = others.get_or_insert_with(|| {
        neighbours(archive.path())
            .iter()
            .filter_map(|p| Archive::open(p).ok())
            .collect()
    });
    for (i, other) in others.iter_mut().enumerate() {
        if let Ok(loc) = other.locate(log, n) {
            return Ok((Some(i), loc));
        }
    }
    Err(first)
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
    // The rotated archives beside the one found by name, opened when a line is not in it.
    let mut others = None::<Vec<Archive>>;
    let mut ok = true;
    for &(first, last) in &req.lines {
        for n in first..=last {
            let named = req.archive.is_some();
            let found = locate_across(&mut archive, &mut others, named, &req.log, n);
            let (archive, loc) = match found {
                Ok((None, loc)) => (&mut archive, loc),
                Ok((Some(i), loc)) => match others.as_mut() {
                    Some(others) => (&mut others[i], loc),
                    None => continue,
                },
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
            let got = if crate::door::redactor().is_some() {
                page_of(archive, (&req.log, n), loc, offset, limit).and_then(|(page, len)| {
                    out.write_all(&page)?;
                    Ok((page.len() as u64, len))
                })
            } else {
                archive
                    .read(loc, offset, limit, out)
                    .map(|got| (got, loc.len))
            };
            let (got, len) = match got {
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
            let from = offset.min(len);
            let to = from + got;
            let counted = counted();
            if to < len {
                writeln!(
                    note,
                    "smart-tee: line {n}: bytes {from}..{to} of {len}{counted}; next page: \
                     --offset {to}"
                )?;
            } else {
                writeln!(
                    note,
                    "smart-tee: line {n}: bytes {from}..{to} of {len}{counted}; end of line"
                )?;
            }
        }
    }
    out.flush()?;
    Ok(ok)
}

/// The MCP tool `read_original`: a page of line `line`'s original, from `offset`, of at most
/// `limit` bytes and within `budget` bytes of response, as text (invalid UTF-8 shown as
/// U+FFFD). The page ends on a character boundary unless it ends the line; the first line of
/// the response says which bytes it holds and where the next page starts. The server passes
/// the log and its archive as opened beneath its root.
pub fn read_page(
    log: &Path,
    archive: &Path,
    line: u64,
    offset: u64,
    limit: u64,
    budget: usize,
) -> Result<String, String> {
    let path = archive;
    let mut archive = open_for(log, Some(archive))?;
    let loc = archive.locate(log, line)?;
    let room = (budget.saturating_sub(300) as u64).max(64);
    let (mut page, len) = page_of(&mut archive, (log, line), loc, offset, limit.min(room))
        .map_err(|e| format!("reading archive {}: line {line}: {e}", path.display()))?;
    let from = offset.min(len);
    if from + (page.len() as u64) < len {
        // Keep a character whole for the next page.
        if let Err(e) = std::str::from_utf8(&page)
            && e.error_len().is_none()
        {
            page.truncate(e.valid_up_to());
        }
    }
    let to = from + page.len() as u64;
    let next = if to < len {
        format!("more: call read_original with offset {to}")
    } else {
        "end of line".into()
    };
    Ok(format!(
        "line {line} original, bytes {from}..{to} of {len}{}; {next}\n{}",
        counted(),
        String::from_utf8_lossy(&page)
    ))
}

/// For `read_log`: how to get the originals of the events shown, when `log` has an archive
/// (the text view does not always show that an event was cut, so it is said for all).
pub fn cut_hint(log: &Path, shown: &str) -> Option<String> {
    (!shown.is_empty() && find_default(log).is_some()).then(|| {
        "\n(Events here may be cut; their originals are in the log's archive: call \
         read_original with the path and line = the event's #N, paging with offset/limit.)\n"
            .to_string()
    })
}
