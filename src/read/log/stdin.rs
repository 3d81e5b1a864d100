//! `--view -`: standard input as a log. Reading a log back seeks (its end for `--tail`, its
//! first bytes for the format), so a piped standard input is copied first into a private
//! temporary file that has no name: on Linux it is made without one (`O_TMPFILE`); elsewhere,
//! or where the file system cannot, it is removed as soon as it is created, before a byte is
//! written. Nothing of it is left behind by any ending, `kill -9` included. With
//! `--redact`, each line is redacted on its way in ([`crate::door::line_in`]), so the copy holds
//! no secret either.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The path that stands for the copy of standard input, once it is made.
static SPOOL: OnceLock<PathBuf> = OnceLock::new();

/// True when `path` stands for standard input (`-`): `/dev/stdin`, or the copy of it.
pub fn is_stdin(path: &Path) -> bool {
    path == Path::new("/dev/stdin") || SPOOL.get().is_some_and(|p| p == path)
}

/// The name a file is shown by among several: its file name, `standard input` for `-`.
pub fn shown_name(path: &Path) -> String {
    match path.file_name() {
        _ if is_stdin(path) => "standard input".into(),
        Some(n) => n.to_string_lossy().into(),
        None => path.display().to_string(),
    }
}

/// Replaces each `-` among `files` by a path that reads standard input from its start:
/// `/dev/stdin` when it is a regular file (`< log`), else the nameless copy of it (mode 0600)
/// whose open file is returned; keep it open while the files are read. Every `-` stands for the
/// same input.
pub fn spool(files: &mut [PathBuf]) -> io::Result<Option<File>> {
    if !files.iter().any(|f| f.as_os_str() == "-") {
        return Ok(None);
    }
    let stdin = io::stdin();
    let kind = rustix::fs::fstat(&stdin).map(|s| rustix::fs::FileType::from_raw_mode(s.st_mode));
    let (path, spooled) = if kind.is_ok_and(|k| k == rustix::fs::FileType::RegularFile) {
        (PathBuf::from("/dev/stdin"), None)
    } else {
        let file = nameless_file()?;
        copy_in(&mut stdin.lock(), &file)?;
        let path = fd_path(&file);
        let _ = SPOOL.set(path.clone());
        (path, Some(file))
    };
    for f in files.iter_mut().filter(|f| f.as_os_str() == "-") {
        *f = path.clone();
    }
    Ok(spooled)
}

/// A new file in the temporary directory, private to this process, with no name: made
/// without one where the system can (Linux's `O_TMPFILE`), else removed once created.
fn nameless_file() -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        #[allow(
            clippy::disallowed_methods,
            reason = "a door (docs/redaction.md): a nameless private copy of stdin"
        )]
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(rustix::fs::OFlags::TMPFILE.bits() as i32)
            .mode(0o600)
            .open(&dir);
        if let Ok(file) = opened {
            return Ok(file);
        }
        // A file system without O_TMPFILE: a name for an instant, below.
    }
    let mut attempt = 0u32;
    loop {
        let path = dir.join(format!("smart-tee-stdin-{}-{attempt}", std::process::id()));
        #[allow(
            clippy::disallowed_methods,
            reason = "a door (docs/redaction.md): a nameless private copy of stdin"
        )]
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match opened {
            Ok(file) => {
                std::fs::remove_file(&path).map_err(|e| {
                    io::Error::new(e.kind(), format!("{}: removing: {e}", path.display()))
                })?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("{}: {e}", crate::door::path(&path)),
                ));
            }
        }
    }
}

/// Copies `input` into `file`, each line redacted when redaction is on.
fn copy_in(input: &mut impl BufRead, mut file: &File) -> io::Result<()> {
    if crate::door::redactor().is_none() {
        io::copy(input, &mut file)?;
        return Ok(());
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut door = crate::door::Forward::default();
    while input.read_until(b'\n', &mut line)? > 0 {
        let body = line.strip_suffix(b"\n");
        out.write_all(&door.line(body.unwrap_or(&line)))?;
        if body.is_some() {
            out.write_all(b"\n")?;
        }
        line.clear();
    }
    out.flush()
}

/// A path that opens `file` again, from its start: its descriptor under `/proc/self/fd`
/// (Linux), else `/dev/fd`.
fn fd_path(file: &File) -> PathBuf {
    let fd = file.as_raw_fd();
    if Path::new("/proc/self/fd").is_dir() {
        PathBuf::from(format!("/proc/self/fd/{fd}"))
    } else {
        PathBuf::from(format!("/dev/fd/{fd}"))
    }
}
