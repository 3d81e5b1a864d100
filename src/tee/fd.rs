//! Reading and writing descriptors that another process may have made non-blocking.
//!
//! `O_NONBLOCK` belongs to the open file description, which a terminal or a pipe shares with
//! every process that holds it: a Node-based parent often sets it on the pipe it hands its
//! children. A read or write there returns EAGAIN instead of waiting; these helpers wait for the
//! descriptor with `poll(2)` and go on, as GNU tee 9.5 does, so nothing is dropped.
//!
//! [`Stdin`] and [`Stdout`] use descriptors 0 and 1 as they are, without a duplicate: the tee path
//! needs no descriptor of its own, so a short descriptor limit costs logs, never the stream.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

/// Waits until `fd` is ready for `what` (`IN` or `OUT`), or has an error or hang-up to report
/// (the next call on it says which).
pub fn wait_for(fd: BorrowedFd<'_>, what: PollFlags) {
    let mut fds = [PollFd::new(&fd, what)];
    loop {
        match rustix::event::poll(&mut fds, None) {
            Err(Errno::INTR) => continue,
            // Ready, or poll itself failed (the call that follows reports what is wrong).
            _ => return,
        }
    }
}

/// Writes all of `bytes` to `fd`, waiting with `poll` whenever it returns EAGAIN.
pub fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        #[allow(
            clippy::disallowed_methods,
            reason = "standard output is the stream itself, and a log's descriptor is a door (docs/redaction.md)"
        )]
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait_for(fd, PollFlags::OUT),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads from `fd` into `buf`, waiting with `poll` whenever it returns EAGAIN.
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(n) => return Ok(n),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait_for(fd, PollFlags::IN),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Descriptor 0, read as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stdin;

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read(rustix::stdio::stdin(), buf)
    }
}

impl AsFd for Stdin {
    fn as_fd(&self) -> BorrowedFd<'_> {
        rustix::stdio::stdin()
    }
}

/// Descriptor 1 itself: the stream's way out, which is never redacted (the one place outside
/// [`crate::door`] that clippy.toml lets reach it).
#[allow(
    clippy::disallowed_methods,
    reason = "standard output is the stream itself: every input byte, unchanged"
)]
pub fn stdout_fd() -> BorrowedFd<'static> {
    rustix::stdio::stdout()
}

/// Descriptor 1, written as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        write_all(stdout_fd(), buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsFd for Stdout {
    fn as_fd(&self) -> BorrowedFd<'_> {
        stdout_fd()
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "test fixtures: a pipe filled by hand"
)]
mod tests {
    use super::*;
    use rustix::fs::OFlags;

    /// A non-blocking pipe that is full: the write waits for the reader and loses nothing.
    #[test]
    fn a_full_non_blocking_pipe_is_waited_on() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        rustix::fs::fcntl_setfl(&w, OFlags::NONBLOCK).unwrap();
        let mut filler = 0usize;
        while rustix::io::write(&w, &[7u8; 4096]).is_ok() {
            filler += 4096;
        }
        let data: Vec<u8> = (0..300_000).map(|i| (i % 251) as u8).collect();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::from(r).read_to_end(&mut got).unwrap();
            got
        });
        write_all(w.as_fd(), &data).unwrap();
        drop(w);
        let got = reader.join().unwrap();
        assert_eq!(got.len(), filler + data.len());
        assert!(got[filler..] == data[..]);
    }
}
