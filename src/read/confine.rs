//! Opening a file under a root directory so that nothing outside it can be reached, whatever
//! other processes do to the tree meanwhile: the path is resolved once, by the kernel, relative
//! to a descriptor of the root, and everything after works on the opened descriptor.
//!
//! - `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` where the kernel has it (Linux 5.6): a
//!   symlink that stays inside the root is followed, one that leads out (absolute, or `..` past
//!   the root) fails with `EXDEV` before its target is looked at, so an outside path that
//!   exists and one that does not are refused alike.
//! - Elsewhere, a walk component by component with `O_NOFOLLOW`: no symlink is followed at all.
//!
//! Opens are `O_NONBLOCK` (a FIFO or a device swapped in cannot block the open) and the caller
//! checks the descriptor with `fstat` before reading from it.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

/// A directory whose files may be opened, held by a descriptor.
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
    /// The directory's canonical path, and the absolute path it was given as (absolute paths
    /// from a client are matched against both, by their text).
    pub path: PathBuf,
    pub given: PathBuf,
}

impl Root {
    /// Opens the directory `path`.
    pub fn open(path: &Path) -> io::Result<Root> {
        let canonical = std::fs::canonicalize(path)?;
        #[allow(
            clippy::disallowed_methods,
            reason = "reads only: RDONLY, or flags through reading()"
        )]
        let dir = rustix::fs::open(
            &canonical,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            dir,
            path: canonical,
            given: std::path::absolute(path)?,
        })
    }

    /// The root's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

/// The flags every read under a root is opened with.
pub fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY
}

/// `flags` for reading: every flag that would write or create is dropped, and `RDONLY` kept.
/// A log is read, never written, under a root.
fn reading(flags: OFlags) -> OFlags {
    (flags - (OFlags::WRONLY | OFlags::RDWR | OFlags::CREATE | OFlags::APPEND | OFlags::TRUNC))
        | OFlags::RDONLY
}

/// True for a relative path of plain names (no `..`, no root, no prefix).
pub fn is_plain_relative(rel: &Path) -> bool {
    rel.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Opens `rel` beneath `dir`: by `openat2` with `RESOLVE_BENEATH` where the kernel has it, else
/// by [`open_walk`].
pub fn open_beneath(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    if !is_plain_relative(rel) {
        return Err(io::Error::from_raw_os_error(libc_exdev()));
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::ResolveFlags;
        #[allow(
            clippy::disallowed_methods,
            reason = "reads only: RDONLY, or flags through reading()"
        )]
        match rustix::fs::openat2(
            dir,
            rel,
            reading(flags),
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        ) {
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {}
            other => return other.map_err(io::Error::from),
        }
    }
    open_walk(dir, rel, flags)
}

fn libc_exdev() -> i32 {
    rustix::io::Errno::XDEV.raw_os_error()
}

/// Opens `rel` beneath `dir` one component at a time, each with `O_NOFOLLOW`: a symlink
/// anywhere on the way fails (`ELOOP`, or `ENOTDIR` for a directory component), so the walk
/// never leaves `dir`.
pub fn open_walk(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    if !is_plain_relative(rel) {
        return Err(io::Error::from_raw_os_error(libc_exdev()));
    }
    let Some((last, parents)) = names.split_last() else {
        #[allow(
            clippy::disallowed_methods,
            reason = "reads only: RDONLY, or flags through reading()"
        )]
        return Ok(rustix::fs::openat(
            dir,
            ".",
            reading(flags) | OFlags::NOFOLLOW,
            Mode::empty(),
        )?);
    };
    let mut held: Option<OwnedFd> = None;
    for name in parents {
        let at = held.as_ref().map_or(dir, AsFd::as_fd);
        #[allow(
            clippy::disallowed_methods,
            reason = "reads only: RDONLY, or flags through reading()"
        )]
        let next = rustix::fs::openat(
            at,
            *name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, AsFd::as_fd);
    #[allow(
        clippy::disallowed_methods,
        reason = "reads only: RDONLY, or flags through reading()"
    )]
    Ok(rustix::fs::openat(
        at,
        *last,
        reading(flags) | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}

/// What an opened descriptor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Regular { size: u64, links: u64 },
    Directory,
    Other,
}

/// The kind of `fd`, by `fstat`.
pub fn kind_of(fd: BorrowedFd<'_>) -> io::Result<Kind> {
    let st = rustix::fs::fstat(fd)?;
    Ok(match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Kind::Regular {
            size: st.st_size as u64,
            links: st.st_nlink as u64,
        },
        FileType::Directory => Kind::Directory,
        _ => Kind::Other,
    })
}

/// Opens `rel` beneath `dir` for reading, without blocking (a FIFO or a device opens at once),
/// and says what it is: the caller reads only a [`Kind::Regular`].
pub fn open_regular(dir: BorrowedFd<'_>, rel: &Path) -> io::Result<(File, Kind)> {
    let fd = open_beneath(dir, rel, read_flags())?;
    let kind = kind_of(fd.as_fd())?;
    Ok((File::from(fd), kind))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;
    use std::io::Read;

    fn tempdir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("smart-tee-confine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn read(f: OwnedFd) -> String {
        let mut s = String::new();
        File::from(f).read_to_string(&mut s).unwrap();
        s
    }

    /// Symlinks that lead out fail alike whether their target exists or not; one that stays
    /// inside is followed by openat2 and refused by the walk.
    #[test]
    fn symlinks_out_of_the_root_are_refused_alike() {
        let base = tempdir("links");
        let root_dir = base.join("root");
        std::fs::create_dir_all(root_dir.join("d")).unwrap();
        std::fs::write(base.join("secret.jsonl"), "{\"secret\":1}\n").unwrap();
        std::fs::write(root_dir.join("d/in.jsonl"), "{\"in\":1}\n").unwrap();
        let ln = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root_dir.join(name)).unwrap();
        };
        ln(&base.join("secret.jsonl"), "abs-exists.jsonl");
        ln(&base.join("missing.jsonl"), "abs-missing.jsonl");
        ln(Path::new("../secret.jsonl"), "rel-exists.jsonl");
        ln(Path::new("../missing.jsonl"), "rel-missing.jsonl");
        ln(Path::new("d/in.jsonl"), "inside.jsonl");
        ln(&base, "dir-out");
        let root = Root::open(&root_dir).unwrap();
        for open in [open_beneath, open_walk] {
            for name in [
                "abs-exists.jsonl",
                "abs-missing.jsonl",
                "rel-exists.jsonl",
                "rel-missing.jsonl",
                "dir-out/secret.jsonl",
                "dir-out/missing.jsonl",
            ] {
                let err = open(root.fd(), Path::new(name), read_flags()).unwrap_err();
                let code = err.raw_os_error();
                assert!(
                    [
                        libc_exdev(),
                        rustix::io::Errno::LOOP.raw_os_error(),
                        rustix::io::Errno::NOTDIR.raw_os_error()
                    ]
                    .contains(&code.unwrap_or(0)),
                    "{name}: {err}"
                );
            }
            assert_eq!(
                read(open(root.fd(), Path::new("d/in.jsonl"), read_flags()).unwrap()),
                "{\"in\":1}\n"
            );
            assert!(open(root.fd(), Path::new("../secret.jsonl"), read_flags()).is_err());
        }
        assert_eq!(
            read(open_beneath(root.fd(), Path::new("inside.jsonl"), read_flags()).unwrap()),
            "{\"in\":1}\n",
            "a symlink that stays inside is followed"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Construction proof of the one resolution: a descriptor once opened keeps reading the
    /// file it opened, whatever is swapped in at its path after.
    #[test]
    fn an_opened_log_is_read_after_its_folder_is_swapped_for_a_symlink_out() {
        let base = tempdir("swap");
        let root_dir = base.join("root");
        std::fs::create_dir_all(root_dir.join("d")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::fs::write(root_dir.join("d/x.jsonl"), "{\"in\":1}\n").unwrap();
        std::fs::write(base.join("out/x.jsonl"), "{\"secret\":1}\n").unwrap();
        let root = Root::open(&root_dir).unwrap();
        let (mut f, kind) = open_regular(root.fd(), Path::new("d/x.jsonl")).unwrap();
        assert!(matches!(kind, Kind::Regular { links: 1, .. }));
        std::fs::rename(root_dir.join("d"), base.join("was-d")).unwrap();
        std::os::unix::fs::symlink(base.join("out"), root_dir.join("d")).unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        assert_eq!(s, "{\"in\":1}\n");
        assert!(open_regular(root.fd(), Path::new("d/x.jsonl")).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
