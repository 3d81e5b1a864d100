//! The one error type. Each message says what was being done and to what; the io error's text
//! follows it. A malformed input line is never an error: it is input, and the engine logs it.

use std::io;
use std::path::PathBuf;

#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("opening log {path:?}: {source}")]
    OpenLog {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing log {path:?}: {source}")]
    WriteLog {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing standard output: {source}")]
    WriteStdout {
        #[source]
        source: io::Error,
    },
    #[error("reading standard input: {source}")]
    ReadStdin {
        #[source]
        source: io::Error,
    },
    #[error("reading log {path:?}: {source}")]
    ReadLog {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("compacting {path:?}: {source}")]
    Compact {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing stats {path:?}: {source}")]
    WriteStats {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("opening archive {path:?}: {source}")]
    OpenArchive {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing archive {path:?}: {source}")]
    WriteArchive {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("reading archive {path:?}: {source}")]
    ReadArchive {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("setting up signal handling: {source}")]
    Signals {
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// True for a write to a pipe whose reader is gone (EPIPE).
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Error::WriteLog { source, .. } | Error::WriteStdout { source } => {
                source.kind() == io::ErrorKind::BrokenPipe
            }
            _ => false,
        }
    }
}
