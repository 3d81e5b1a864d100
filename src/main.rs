//! The smart-tee binary: parse the flags, run the tee, exit with its status.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    smart_tee::tee::run(smart_tee::cli::parse())
}
