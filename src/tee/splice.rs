//! Standard output fed inside the kernel: when stdout is a pipe, the bytes go to it without a
//! copy through user space, and smart-tee reads them once, for the logs.
//!
//! - stdin a pipe: `tee(2)` duplicates what is in it into stdout's pipe without consuming it,
//!   then `read(2)` takes exactly those bytes for the logs;
//! - stdin a regular file: `splice(2)` moves the next bytes' page-cache pages into stdout's pipe
//!   (advancing the file's offset, as a read would), then `pread(2)` reads them for the logs.
//!
//! Both pipes are grown to 1 MiB where the system allows it, so that each call moves more.
//! The calls do not block (`SPLICE_F_NONBLOCK`): when the input is empty or stdout full,
//! [`Splice::wait`] waits with `poll`, outside the turn in which the tee hands bytes over (see
//! `handoff.rs`), so a stop never waits for a slow stdout.
//! Either way stdout gets the bytes before the logs do, as on the copying path, and the copy that
//! is saved is the write to stdout. Anything else (a terminal, a file, a socket, a capped stdout)
//! takes the copying path, and so does the rest of a run once a `tee`/`splice` fails with
//! anything but a broken pipe (a failed call consumes nothing).
//!
//! One difference from the copying path, with a regular file as input: a pipe holds references
//! to the file's pages, so a process that rewrites the file in place while smart-tee runs may
//! change bytes already handed to stdout but not yet read from it. `tee` and `cat` read the file
//! into their own buffers first.

use std::io;
use std::os::fd::BorrowedFd;

use rustix::event::PollFlags;
use rustix::fs::{FileType, fstat};
use rustix::io::Errno;

/// What feeds stdout from: stdin's pipe, or its file at an offset.
enum Source {
    Pipe,
    /// The offset of the next byte to read for the logs (the file's own offset is past it once
    /// `splice` has run).
    File(u64),
}

/// Feeds stdout inside the kernel. See the module documentation.
pub struct Splice<'a> {
    input: BorrowedFd<'a>,
    output: BorrowedFd<'a>,
    source: Source,
}

/// Why [`Splice::fill`] did not give bytes.
#[derive(Debug)]
pub enum Failed {
    /// Reading the input failed.
    Input(io::Error),
    /// Writing stdout failed (its reader went away): nothing was consumed.
    Output(io::Error),
    /// This pair of descriptors cannot be spliced: nothing was consumed, copy instead.
    Unsupported,
    /// The input is empty or stdout is full: nothing was consumed, [`Splice::wait`] and retry.
    WouldBlock,
}

impl<'a> Splice<'a> {
    /// A splice from `input` to `output` when `output` is a pipe and `input` a pipe or a
    /// regular file; `None` otherwise.
    pub fn new(input: BorrowedFd<'a>, output: BorrowedFd<'a>) -> Option<Splice<'a>> {
        if !kernel::AVAILABLE {
            return None;
        }
        let kind = |fd: BorrowedFd<'_>| fstat(fd).ok().map(|s| FileType::from_raw_mode(s.st_mode));
        if kind(output)? != FileType::Fifo {
            return None;
        }
        let source = match kind(input)? {
            FileType::Fifo => Source::Pipe,
            FileType::RegularFile => {
                Source::File(rustix::fs::seek(input, rustix::fs::SeekFrom::Current(0)).ok()?)
            }
            _ => return None,
        };
        kernel::grow(output);
        if let Source::Pipe = source {
            kernel::grow(input);
        }
        Some(Splice {
            input,
            output,
            source,
        })
    }

    /// Waits until the input has bytes (or its end) and stdout has room (or an error).
    pub fn wait(&self) {
        if let Source::Pipe = self.source {
            crate::tee::fd::wait_for(self.input, PollFlags::IN);
        }
        crate::tee::fd::wait_for(self.output, PollFlags::OUT);
    }

    /// Gives stdout the next bytes of input (at most `buf.len()`) and reads the same bytes into
    /// `buf`; returns how many, 0 at end of input.
    pub fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Failed> {
        let fed = loop {
            let fed = match self.source {
                Source::Pipe => kernel::tee(self.input, self.output, buf.len()),
                Source::File(_) => kernel::splice(self.input, self.output, buf.len()),
            };
            match fed {
                Ok(n) => break n,
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => return Err(Failed::WouldBlock),
                Err(Errno::PIPE) => return Err(Failed::Output(Errno::PIPE.into())),
                Err(_) => return Err(Failed::Unsupported),
            }
        };
        let mut got = 0;
        while got < fed {
            let read = match &mut self.source {
                Source::Pipe => rustix::io::read(self.input, &mut buf[got..fed]),
                Source::File(at) => rustix::io::pread(self.input, &mut buf[got..fed], *at),
            };
            match read {
                Ok(0) => {
                    // Only a file that shrank under us ends before what was spliced.
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "input file shrank");
                    return Err(Failed::Input(e));
                }
                Ok(n) => {
                    got += n;
                    if let Source::File(at) = &mut self.source {
                        *at += n as u64;
                    }
                }
                Err(Errno::INTR) => continue,
                Err(e) => return Err(Failed::Input(e.into())),
            }
        }
        Ok(fed)
    }
}

/// The kernel's calls: Linux's `tee(2)`, `splice(2)` and pipe sizes. Elsewhere there are none,
/// [`Splice::new`] gives `None`, and stdout takes the copying path.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod kernel {
    use rustix::pipe::SpliceFlags;
    use std::os::fd::BorrowedFd;

    /// The pipe size asked for: a 64 KiB pipe (Linux's default) makes a `tee`/`splice` and a
    /// `read` per 64 KiB, and the downstream reader wakes as often.
    const PIPE_SIZE: usize = 1 << 20;

    pub const AVAILABLE: bool = true;

    pub fn tee(
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
        len: usize,
    ) -> rustix::io::Result<usize> {
        rustix::pipe::tee(input, output, len, SpliceFlags::NONBLOCK)
    }

    pub fn splice(
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
        len: usize,
    ) -> rustix::io::Result<usize> {
        rustix::pipe::splice(input, None, output, None, len, SpliceFlags::NONBLOCK)
    }

    /// Grows the pipe `fd` to [`PIPE_SIZE`] if it is smaller. Best effort: past the user's pipe
    /// quota or `/proc/sys/fs/pipe-max-size` the pipe stays as it is.
    pub fn grow(fd: BorrowedFd<'_>) {
        if rustix::pipe::fcntl_getpipe_size(fd).is_ok_and(|size| size < PIPE_SIZE) {
            let _ = rustix::pipe::fcntl_setpipe_size(fd, PIPE_SIZE);
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod kernel {
    use rustix::io::Errno;
    use std::os::fd::BorrowedFd;

    pub const AVAILABLE: bool = false;

    pub fn tee(_: BorrowedFd<'_>, _: BorrowedFd<'_>, _: usize) -> rustix::io::Result<usize> {
        Err(Errno::NOSYS)
    }

    pub fn splice(_: BorrowedFd<'_>, _: BorrowedFd<'_>, _: usize) -> rustix::io::Result<usize> {
        Err(Errno::NOSYS)
    }

    pub fn grow(_: BorrowedFd<'_>) {}
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    use std::os::fd::OwnedFd;

    /// Everything that can be read from `fd` until its writers are gone.
    fn drain(fd: OwnedFd) -> Vec<u8> {
        let mut v = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut v).unwrap();
        v
    }

    /// Fills until the end, in reads of at most `chunk`; what the logs get.
    fn fill_all(splice: &mut Splice, chunk: usize) -> Vec<u8> {
        // The writers are closed and the output has room: nothing here would block.
        let (mut logged, mut buf) = (Vec::new(), vec![0; chunk]);
        loop {
            match splice.fill(&mut buf) {
                Ok(0) => return logged,
                Ok(n) => logged.extend_from_slice(&buf[..n]),
                Err(e) => panic!("{e:?}"),
            }
        }
    }

    const BYTES: usize = 40_000; // less than a pipe holds: no write here blocks

    #[test]
    fn a_pipe_is_teed_to_stdout_and_read_for_the_logs() {
        let input: Vec<u8> = (0..BYTES).map(|i| (i * 7) as u8).collect();
        let (in_read, in_write) = rustix::pipe::pipe().unwrap();
        let (out_read, out_write) = rustix::pipe::pipe().unwrap();
        std::fs::File::from(in_write).write_all(&input).unwrap(); // and closed
        let mut splice = Splice::new(in_read.as_fd(), out_write.as_fd()).expect("two pipes");
        assert!(fill_all(&mut splice, 1000) == input);
        drop(out_write);
        assert!(drain(out_read) == input);
    }

    #[test]
    fn a_file_is_spliced_to_stdout_from_its_offset_and_read_for_the_logs() {
        let input: Vec<u8> = (0..BYTES).map(|i| (i * 13) as u8).collect();
        let path = std::env::temp_dir().join(format!("smart-tee-splice-{}", std::process::id()));
        std::fs::write(&path, &input).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file.read_exact(&mut [0; 100]).unwrap();
        let (out_read, out_write) = rustix::pipe::pipe().unwrap();
        let mut splice = Splice::new(file.as_fd(), out_write.as_fd()).expect("file to pipe");
        assert!(fill_all(&mut splice, 3000) == input[100..]);
        drop(out_write);
        assert!(drain(out_read) == input[100..]);
        let mut rest = Vec::new();
        file.read_to_end(&mut rest).unwrap();
        assert!(
            rest.is_empty(),
            "the file's offset is at its end, as after reads"
        );
    }

    #[test]
    fn only_a_pipe_on_stdout_is_spliced() {
        let dir = std::fs::File::open(std::env::temp_dir()).unwrap();
        let devnull = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        let (in_read, _in_write) = rustix::pipe::pipe().unwrap();
        let (_out_read, out_write) = rustix::pipe::pipe().unwrap();
        assert!(Splice::new(in_read.as_fd(), devnull.as_fd()).is_none());
        // A directory is neither a pipe nor a regular file.
        assert!(Splice::new(dir.as_fd(), out_write.as_fd()).is_none());
        assert!(Splice::new(in_read.as_fd(), out_write.as_fd()).is_some());
    }
}
