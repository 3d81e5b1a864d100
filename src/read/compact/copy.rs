//! Bytes between the log and its compacted copy: a range copied as it is, the unfinished last
//! line, the file's attributes, and whether two files hold the same bytes.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};

use super::CHUNK;

/// Appends what `from` holds past `at` to `to`.
pub(super) fn copy_range(from: &File, mut at: u64, mut to: &File) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = from.read_at(&mut buf, at)?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n])?;
        at += n as u64;
    }
}

/// Gives the new file `out` the owner, group, permissions and extended attributes of the log
/// (`file`, `meta`), as logrotate does; an error if one cannot be kept.
pub(super) fn keep_attributes(file: &File, out: &File, meta: &fs::Metadata) -> io::Result<()> {
    let now = out.metadata()?;
    if (now.uid(), now.gid()) != (meta.uid(), meta.gid()) {
        std::os::unix::fs::fchown(out, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot give the new file the log's owner and group ({}:{}): {e}; not \
                     compacted",
                    meta.uid(),
                    meta.gid()
                ),
            )
        })?;
    }
    // After the owner: a change of owner clears the set-id bits.
    out.set_permissions(meta.permissions())?;
    let names = match xattrs(file) {
        Ok(names) => names,
        // No extended attributes on this file system: none to keep.
        Err(rustix::io::Errno::NOTSUP) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::ffi::CString::new(name).map_err(io::Error::other)?;
        let value = xattr(file, &name)?;
        if xattr(out, &name).is_ok_and(|v| v == value) {
            continue;
        }
        let flags = rustix::fs::XattrFlags::empty();
        rustix::fs::fsetxattr(out, name.as_c_str(), &value, flags).map_err(|e| {
            io::Error::other(format!(
                "cannot keep its extended attribute {name:?}: {e}; not compacted"
            ))
        })?;
    }
    Ok(())
}

/// The names of the file's extended attributes, each ended by a NUL.
fn xattrs(file: &File) -> rustix::io::Result<Vec<u8>> {
    let mut names = vec![0; rustix::fs::flistxattr_query(file)?];
    let n = rustix::fs::flistxattr(file, &mut names[..])?;
    names.truncate(n);
    Ok(names)
}

/// The value of the file's extended attribute `name`.
fn xattr(file: &File, name: &std::ffi::CStr) -> rustix::io::Result<Vec<u8>> {
    let mut value = vec![0; rustix::fs::fgetxattr_query(file, name)?];
    if !value.is_empty() {
        let n = rustix::fs::fgetxattr(file, name, &mut value[..])?;
        value.truncate(n);
    }
    Ok(value)
}

/// True when the two files hold the same bytes.
pub(super) fn same_contents(a: &File, b: &File) -> io::Result<bool> {
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

/// Copies the unfinished last line of a plain log (`len` bytes from `at`) to the end of `out`:
/// as it is, or with --redact as an excerpt cut at its end ([`crate::cut::redact::Redactor::excerpt`]),
/// what the tee makes of a last line the input ended inside. An excerpt with nothing left
/// keeps the line as one space, so that the line count holds.
pub(super) fn copy_unfinished(file: &File, at: u64, len: u64, out: &File) -> io::Result<()> {
    let Some(r) = crate::door::redactor() else {
        return copy_range(file, at, out);
    };
    let mut line = vec![0; usize::try_from(len).map_err(io::Error::other)?];
    file.read_exact_at(&mut line, at)?;
    let mut kept = Vec::new();
    // Inside a private key's block written as lines of text, the line is one of them.
    let keys = crate::read::log::lines::keys_at_end(file);
    if let Some(replaced) = crate::door::replaced_after(keys, &line) {
        line = replaced;
    }
    r.excerpt(&line, false, true, &mut kept);
    if kept.is_empty() {
        kept.push(b' ');
    }
    let mut out = out;
    out.write_all(&kept)
}
