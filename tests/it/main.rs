//! The integration tests, as one test binary (one link instead of eight). `common` holds what
//! they share: the binary under test, child processes with timeouts, temporary directories, the
//! serde_json oracle and the log contract.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

mod common;

mod agent;
mod agent_streams;
mod archive;
mod archive_pairs;
mod cli;
mod compressed;
mod contract;
mod corpus;
mod door;
mod door_leaks;
mod drift;
mod faults;
mod golden;
mod hostile;
mod layout;
#[cfg(feature = "mcp")]
mod mcp;
mod newcomer;
mod prices;
mod progress;
#[cfg(feature = "mcp")]
mod reading;
mod redact;
mod report;
mod retracted;
mod rotation;
mod run;
mod runs;
mod simd;
mod synth;
mod types;
mod view;
mod writing;
