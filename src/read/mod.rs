//! Reading logs back: `--view` (`view`), its gists (`gist`) and summary (`summary`), times for
//! `--since`/`--until` (`when`), what an event says of itself (`events`), `--compact`
//! (`compact`), and opening files beneath a root (`confine`) for the MCP server.
//!
//! A log is untrusted input here: every reader is bounded in memory and output. It may use the
//! phases before it (the engine, to rewrite a line within a budget; the tee's splitter and sinks).

pub mod compact;
pub mod confine;
pub mod events;
pub mod gist;
pub mod headless;
pub mod lines_in;
pub mod log;
pub mod summary;
pub mod view;
pub mod when;
