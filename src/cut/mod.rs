//! Cutting a line: the line engine (`engine`) takes one input line and gives one log line,
//! copied when it fits, else planned (`plan`, priced by `costs`) and written (`emit`) within
//! the budget; a line that is not JSON becomes a record (`record`); `--redact` (`redact`) and `--add-timestamp`
//! (`stamp`) apply here, so every log line passes one place.
//!
//! It may use the phases before it (`line`, `reduce`), never the tee or the readers.

pub mod costs;
pub mod emit;
pub mod engine;
pub mod plan;
pub mod record;
pub mod redact;
pub mod stamp;
