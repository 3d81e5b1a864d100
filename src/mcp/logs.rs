//! Which files the MCP server serves, and opening them once.
//!
//! A file is served when it is plainly a log: its name is one smart-tee writes or rotates
//! (`.jsonl`, `.ndjson`, `.log`, each with an optional `.N` and then `.gz` or `.zst`), it is not
//! in a hidden folder (unless the server was started with `--hidden`), it is a regular file
//! with no other hard link (unless `--hard-links`: another name could be outside the roots),
//! and its first line is a whole JSON object (or it is empty, or its first line is still being
//! written and starts with `{`).
//!
//! A path is resolved once, relative to a root's descriptor, by `confine`; everything after
//! reads the opened descriptor. Refusals never tell an outside path that exists from one that
//! does not: an absolute path outside the roots is refused before any file system access, and
//! a symlink that leads out is refused by the kernel before its target is looked at.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Dir, FileType, Mode, OFlags};

use crate::read::confine::{self, Kind, Root};
use crate::read::log::{DecompressLimit, escape_controls};

/// How much of a log's start is read to tell whether it is one.
const HEAD: usize = 1 << 20;
/// Directory depth walked by `list_logs`.
const MAX_DEPTH: usize = 8;
/// Directory entries looked at by one `list_logs` at most.
const MAX_ENTRIES: usize = 100_000;
/// Logs listed at most (their names are matched before anything is opened).
pub const MAX_LISTED: usize = 1000;

/// The roots and what is served under them.
#[derive(Debug)]
pub struct Roots {
    roots: Vec<Root>,
    /// Serve logs in hidden folders.
    pub hidden: bool,
    /// Serve files with other hard links.
    pub hard_links: bool,
}

/// A log opened under a root.
#[derive(Debug)]
pub struct OpenedLog {
    pub file: File,
    /// The root it is under.
    pub root: usize,
    /// Its path relative to its root, as the client names it.
    pub rel: PathBuf,
    pub size: u64,
}

/// The most bytes of what a client sent that a message repeats.
pub const ECHO_CAP: usize = 200;

/// `path` (or any name a client sent) quoted for a message, its characters made inert, cut to
/// [`ECHO_CAP`] bytes: an answer repeats no more of a request than that.
pub fn quoted(path: &str) -> String {
    format!(
        "\"{}\"",
        crate::read::summary::clip(&escape_controls(path), ECHO_CAP)
    )
}

/// True for a name smart-tee writes or rotates: `NAME.jsonl`, `.ndjson` or `.log`, then an
/// optional `.N`, then an optional `.gz` or `.zst`.
pub fn is_log_name(name: &OsStr) -> bool {
    let Some(mut name) = name.to_str() else {
        return false;
    };
    for ext in [".gz", ".zst"] {
        if let Some(rest) = name.strip_suffix(ext) {
            name = rest;
            break;
        }
    }
    if let Some((rest, n)) = name.rsplit_once('.')
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        name = rest;
    }
    [".jsonl", ".ndjson", ".log"]
        .iter()
        .any(|ext| name.len() > ext.len() && name.ends_with(ext))
}

fn is_hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

impl Roots {
    /// Opens the root directories.
    pub fn open(paths: &[PathBuf], hidden: bool, hard_links: bool) -> Result<Roots, String> {
        let mut roots = Vec::new();
        for p in paths {
            let root = Root::open(p).map_err(|e| format!("--root {}: {e}", p.display()))?;
            if !matches!(confine::kind_of(root.fd()), Ok(Kind::Directory)) {
                return Err(format!("--root {}: not a directory", p.display()));
            }
            roots.push(root);
        }
        Ok(Roots {
            roots,
            hidden,
            hard_links,
        })
    }

    /// Opens the log a client names: relative to a root, or absolute inside one.
    pub fn open_log(&self, path: &str) -> Result<OpenedLog, String> {
        let q = quoted(path);
        let p = Path::new(path);
        if p.components().any(|c| c == Component::ParentDir) {
            return Err(format!("{q}: paths with '..' are refused"));
        }
        let outside = || format!("{q}: outside the roots (a symlink that leads out is refused)");
        // Absolute: matched against the roots by its text, before any file system access.
        let tries: Vec<(usize, PathBuf)> = if p.is_absolute() {
            let found: Vec<(usize, PathBuf)> = self
                .roots
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let rel = p
                        .strip_prefix(&r.path)
                        .or_else(|_| p.strip_prefix(&r.given));
                    rel.ok().map(|rel| (i, rel.to_owned()))
                })
                .collect();
            if found.is_empty() {
                return Err(outside());
            }
            found
        } else {
            (0..self.roots.len()).map(|i| (i, p.to_owned())).collect()
        };
        let mut last = format!("{q}: no such log under the roots");
        for (i, rel) in tries {
            match self.open_rel(i, &rel) {
                Ok(log) => return Ok(log),
                Err(Refused::Missing) => {}
                Err(Refused::Outside) => last = outside(),
                Err(Refused::Because(why)) => return Err(format!("{q}: {why}")),
            }
        }
        Err(last)
    }

    /// Opens the archive smart-tee keeps beside `log` (`NAME.orig.zst`, `--archive`), beneath
    /// the same root and with the same checks as a log but its name and first line.
    pub fn open_archive_of(&self, log: &OpenedLog) -> Result<File, String> {
        let mut opened = None;
        for rel in crate::tee::archive::default_paths(&log.rel) {
            let q = quoted(&rel.to_string_lossy());
            match confine::open_regular(self.roots[log.root].fd(), &rel) {
                Ok(found) => {
                    opened = Some((found, q));
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{q}: {e}")),
            }
        }
        let Some(((file, kind), q)) = opened else {
            let q = quoted(&crate::tee::archive::default_path(&log.rel).to_string_lossy());
            return Err(format!(
                "this log has no archive: {q} does not exist (smart-tee writes one with \
                 --archive or SMART_TEE_ARCHIVE=1)"
            ));
        };
        match kind {
            Kind::Regular { links, .. } if links > 1 && !self.hard_links => Err(format!(
                "{q}: has {links} hard links: refused (the server serves them with --hard-links)"
            )),
            Kind::Regular { .. } => Ok(file),
            _ => Err(format!("{q}: not a regular file")),
        }
    }

    /// Opens `rel` under root `i` as a log, with every check.
    fn open_rel(&self, i: usize, rel: &Path) -> Result<OpenedLog, Refused> {
        let names: Vec<&OsStr> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        let Some(name) = names.last() else {
            return Err(Refused::Because("not a regular file (a directory)".into()));
        };
        if !self.hidden && names.iter().any(|n| is_hidden(n)) {
            return Err(Refused::Because(
                "in a hidden folder or hidden: not served (the server serves them with --hidden)"
                    .into(),
            ));
        }
        if !is_log_name(name) {
            return Err(Refused::Because(
                "not a log name (served: .jsonl, .ndjson and .log files, with .N, .gz or .zst \
                 after)"
                    .into(),
            ));
        }
        let (file, kind) = match confine::open_regular(self.roots[i].fd(), rel) {
            Ok(opened) => opened,
            Err(e) => return Err(Refused::from_io(&e)),
        };
        let size = match kind {
            Kind::Regular { size, links } => {
                if links > 1 && !self.hard_links {
                    return Err(Refused::Because(format!(
                        "has {links} hard links: refused, since another name could be outside \
                         the roots (the server serves them with --hard-links)"
                    )));
                }
                size
            }
            _ => {
                return Err(Refused::Because(
                    "not a regular file (devices, FIFOs and directories are refused)".into(),
                ));
            }
        };
        check_is_log(&file).map_err(Refused::Because)?;
        Ok(OpenedLog {
            file,
            root: i,
            rel: rel.to_owned(),
            size,
        })
    }

    /// The paths (relative to their root) of files named like logs under the roots, sorted, at
    /// most [`MAX_LISTED`]; nothing is opened but directories. True when more were left out.
    pub fn candidates(&self) -> (Vec<(usize, PathBuf)>, bool) {
        let mut found = Vec::new();
        let mut entries = 0;
        let mut more = false;
        for (i, root) in self.roots.iter().enumerate() {
            #[allow(clippy::disallowed_methods, reason = "reads only: RDONLY")]
            let Ok(top) = rustix::fs::openat(
                root.fd(),
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            let mut stack: Vec<(OwnedFd, PathBuf, usize)> = vec![(top, PathBuf::new(), 0)];
            while let Some((dir, rel, depth)) = stack.pop() {
                let Ok(mut listing) = Dir::read_from(&dir) else {
                    continue;
                };
                let mut names = Vec::new();
                while let Some(Ok(e)) = listing.read() {
                    entries += 1;
                    if entries > MAX_ENTRIES {
                        more = true;
                        break;
                    }
                    let name = e.file_name().to_bytes();
                    if name == b"." || name == b".." {
                        continue;
                    }
                    let name = PathBuf::from(OsStr::from_bytes(name));
                    if !self.hidden && is_hidden(name.as_os_str()) {
                        continue;
                    }
                    names.push((name, e.file_type()));
                }
                names.sort_by(|a, b| a.0.cmp(&b.0));
                // Directories are walked in reverse so that the stack pops them in order.
                for (name, ft) in names.iter().rev() {
                    let ft = match ft {
                        FileType::Unknown => {
                            rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode))
                        }
                        ft => *ft,
                    };
                    #[allow(clippy::disallowed_methods, reason = "reads only: RDONLY")]
                    if ft == FileType::Directory
                        && depth < MAX_DEPTH
                        && let Ok(sub) = rustix::fs::openat(
                            &dir,
                            name,
                            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                            Mode::empty(),
                        )
                    {
                        stack.push((sub, rel.join(name), depth + 1));
                    }
                }
                for (name, ft) in &names {
                    let plain = matches!(
                        ft,
                        FileType::RegularFile | FileType::Symlink | FileType::Unknown
                    );
                    if plain && is_log_name(name.as_os_str()) {
                        if found.len() == MAX_LISTED {
                            more = true;
                            break;
                        }
                        found.push((i, rel.join(name)));
                    }
                }
            }
        }
        (found, more)
    }

    /// Opens a candidate of [`Roots::candidates`] as a log.
    pub fn open_candidate(&self, i: usize, rel: &Path) -> Option<OpenedLog> {
        self.open_rel(i, rel).ok()
    }

    /// The roots' descriptors and paths.
    pub fn len(&self) -> usize {
        self.roots.len()
    }

    /// True when there is no root.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }
}

/// Why a path was not opened.
enum Refused {
    /// Not there (or a folder on the way is not one): the next root is tried.
    Missing,
    /// A symlink leads out of the root.
    Outside,
    Because(String),
}

impl Refused {
    fn from_io(e: &io::Error) -> Refused {
        use rustix::io::Errno;
        let code = e.raw_os_error().unwrap_or(0);
        if code == Errno::NOENT.raw_os_error() || code == Errno::NOTDIR.raw_os_error() {
            Refused::Missing
        } else if code == Errno::XDEV.raw_os_error() || code == Errno::LOOP.raw_os_error() {
            Refused::Outside
        } else {
            Refused::Because(e.to_string())
        }
    }
}

/// A log's first bytes, decompressed when it is gzip or zstd (at most [`HEAD`] of them).
fn head_of(file: &File) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; HEAD];
    let mut n = 0;
    while n < HEAD {
        match file.read_at(&mut head[n..], n as u64)? {
            0 => break,
            k => n += k,
        }
    }
    head.truncate(n);
    if crate::read::log::is_compressed(file)? {
        let limit = DecompressLimit {
            bytes: Some(HEAD as u64),
            ..DecompressLimit::default()
        };
        let mut r = crate::read::log::open_log(file.try_clone()?, &limit)?;
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        return Ok(out);
    }
    Ok(head)
}

/// A log is text of JSON lines whose first line is a whole JSON object: a NUL byte in its
/// first MiB, or a first line that is not an object, says it is something else. An empty
/// file is a log not written yet; a first line still being written (or longer than the MiB
/// read) is judged by its first byte.
fn check_is_log(file: &File) -> Result<(), String> {
    let head = head_of(file).map_err(|e| format!("reading it: {e}"))?;
    if memchr::memchr(0, &head).is_some() {
        return Err("a binary file, not a log".into());
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let rest = &head[start..];
    if rest.is_empty() {
        return Ok(());
    }
    match memchr::memchr(b'\n', rest) {
        Some(nl) => match serde_json::from_slice::<serde_json::Value>(&rest[..nl]) {
            Ok(v) if v.is_object() => Ok(()),
            _ => Err("not a log: its first line is not a JSON object".into()),
        },
        None if rest[0] == b'{' => Ok(()),
        None => Err("not a log: its first line is not a JSON object".into()),
    }
}

/// Opens the log at `log`'s path again, with every check (for a poll of `wait_for_log`:
/// the file at the path may have been rotated, or swapped for something that is not a log).
pub fn reopen(roots: &Roots, log: &OpenedLog) -> Option<OpenedLog> {
    roots.open_rel(log.root, &log.rel).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_the_ones_smart_tee_writes_and_rotates() {
        for ok in [
            "a.jsonl",
            "a.ndjson",
            "a.log",
            "a.jsonl.1",
            "a.jsonl.12.gz",
            "a.log.zst",
            "run.2026.jsonl.gz",
        ] {
            assert!(is_log_name(OsStr::new(ok)), "{ok}");
        }
        for bad in [
            "a.json",
            ".jsonl",
            "jsonl",
            "a.txt",
            "a.jsonl.bak",
            "a.gz",
            "a.jsonl.gz.1",
            "application_default_credentials.json",
        ] {
            assert!(!is_log_name(OsStr::new(bad)), "{bad}");
        }
    }
}
