//! Log files: opening them as tee does, and writing whole batches of lines.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The permission bits of a log file smart-tee creates: agent logs hold source code, prompts
/// and sometimes secrets. An existing file keeps its own.
pub const DEFAULT_MODE: u32 = 0o600;

/// One log destination. After a failed write it is dropped from the stream.
pub struct LogSink {
    path: PathBuf,
    writer: Box<dyn Write + Send>,
    failed: bool,
}

impl LogSink {
    /// Opens `path` for writing, truncating it or (`append`) appending to it, creating it with
    /// `mode` if missing. Like tee: a symlink is followed, a FIFO is opened for writing (which
    /// waits for a reader).
    pub fn open(path: &Path, append: bool, mode: u32) -> Result<LogSink, Error> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .append(append)
            .truncate(!append)
            .mode(mode)
            .open(path)
            .map_err(|source| Error::OpenLog {
                path: path.to_owned(),
                source,
            })?;
        Ok(LogSink::from_file(path, file))
    }

    pub fn from_file(path: &Path, file: File) -> LogSink {
        LogSink::new(path, Box::new(file))
    }

    /// A sink over any writer; `path` names it in messages.
    pub fn new(path: &Path, writer: Box<dyn Write + Send>) -> LogSink {
        LogSink {
            path: path.to_owned(),
            writer,
            failed: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_failed(&self) -> bool {
        self.failed
    }

    /// Writes whole lines with one `write_all`; on failure the sink is marked failed.
    pub fn write_lines(&mut self, lines: &[u8]) -> Result<(), Error> {
        if self.failed || lines.is_empty() {
            return Ok(());
        }
        let result = self
            .writer
            .write_all(lines)
            .and_then(|()| self.writer.flush());
        result.map_err(|source| {
            self.failed = true;
            Error::WriteLog {
                path: self.path.clone(),
                source,
            }
        })
    }
}

/// A writer into shared memory, for tests and fuzzing.
#[derive(Clone, Default)]
pub struct SharedBuffer(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedBuffer {
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.lock() {
            Ok(mut v) => {
                v.extend_from_slice(buf);
                Ok(buf.len())
            }
            Err(_) => Err(io::Error::other("buffer poisoned")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
