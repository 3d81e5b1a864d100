//! What every reader of a log shares, below `--summary` and `--view`: the options a reading is
//! asked with (`options.rs`), a log's lines read forward or backward, decompressed within a
//! bound (`lines.rs`), and text from a log made inert for a terminal (`inert.rs`).

pub mod inert;
pub mod lines;
pub mod options;
pub mod stdin;

pub use inert::{escape_controls, inert_json, is_unsafe_char, sgr_sequences, strip_sgr};
pub use lines::{
    Compression, DecompressLimit, ReverseLines, for_each_line, for_each_line_in, is_compressed,
    open_log, open_regular,
};
pub use options::{Format, NO_TIME_NOTE, STALL_AFTER, ViewOptions};
