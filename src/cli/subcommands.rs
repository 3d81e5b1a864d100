//! The subcommands (`mcp`, `completions`, `man`), parsed before clap sees the tee's flags,
//! and the whole command's definition for completions and the man page.

use std::path::PathBuf;

use clap::CommandFactory;

use super::checks::secrets;
use super::{Cli, Mode};

/// `smart-tee mcp [--root DIR]... [--hidden] [--hard-links] [--redact] [--redact-values FILE]`.
fn mcp_command() -> clap::Command {
    clap::Command::new("mcp")
        .bin_name("smart-tee mcp")
        .about(
            "Serve the agent logs under the roots to MCP clients over stdio, read-only: tools \
             list_logs, read_log, log_summary, wait_for_log and read_original. Only logs under \
             the roots are served: regular files named .jsonl, .ndjson or .log (and rotated .N/.gz/.zst \
             forms) whose first line is a JSON object, outside hidden folders, opened once \
             beneath the root without following symlinks out.",
        )
        .arg(
            clap::Arg::new("root")
                .long("root")
                .value_name("DIR")
                .action(clap::ArgAction::Append)
                .value_parser(clap::value_parser!(PathBuf))
                .value_hint(clap::ValueHint::DirPath)
                .help("A directory whose logs may be read (repeatable) [default: the current directory]"),
        )
        .arg(
            clap::Arg::new("hidden")
                .long("hidden")
                .action(clap::ArgAction::SetTrue)
                .help("Also serve logs in hidden folders (names starting with '.'), skipped by default"),
        )
        .arg(
            clap::Arg::new("hard-links")
                .long("hard-links")
                .action(clap::ArgAction::SetTrue)
                .help("Also serve files that have other hard links (refused by default: another name may be outside the roots)"),
        )
        .arg(
            clap::Arg::new("redact")
                .long("redact")
                .action(clap::ArgAction::SetTrue)
                .help("Redact every answer as smart-tee --redact redacts the logs"),
        )
        .arg(
            clap::Arg::new("redact-values")
                .long("redact-values")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Redact the values of this dotenv file too (implies --redact)"),
        )
}

pub(super) fn parse_mcp(args: &[std::ffi::OsString]) -> Mode {
    let m = mcp_command().get_matches_from(args);
    let values = m.get_one::<PathBuf>("redact-values");
    if m.get_flag("redact") || values.is_some() {
        match secrets(values.map(PathBuf::as_path)) {
            Ok(secrets) => crate::door::open(&secrets),
            Err(e) => {
                crate::say!("smart-tee mcp: {e}");
                std::process::exit(2);
            }
        }
    }
    let roots = m
        .get_many::<PathBuf>("root")
        .map(|r| r.cloned().collect())
        .unwrap_or_default();
    Mode::Mcp {
        roots,
        hidden: m.get_flag("hidden"),
        hard_links: m.get_flag("hard-links"),
    }
}

/// `smart-tee completions SHELL`.
fn completions_command() -> clap::Command {
    clap::Command::new("completions")
        .bin_name("smart-tee completions")
        .about("Print the completion script of SHELL (bash, zsh, fish, elvish, powershell)")
        .arg(
            clap::Arg::new("shell")
                .required(true)
                .value_parser(clap::value_parser!(clap_complete::Shell)),
        )
}

pub(super) fn parse_completions(args: &[std::ffi::OsString]) -> Mode {
    let m = completions_command().get_matches_from(args);
    match m.get_one::<clap_complete::Shell>("shell") {
        Some(&shell) => Mode::Completions(shell),
        None => Mode::Man, // unreachable: the argument is required
    }
}

/// The command's definition, for completions and the man page: the tee's flags, the FILEs
/// (any number), and the subcommands, which `parse_from` handles before clap sees the rest.
pub fn command() -> clap::Command {
    Cli::command()
        // clap_mangen writes a positional's value name without clap's `...`.
        .mut_arg("files", |a| {
            a.value_name("FILE...")
                .value_hint(clap::ValueHint::FilePath)
        })
        .subcommand(mcp_command())
        .subcommand(completions_command())
        .subcommand(clap::Command::new("man").about("Print the man page (roff)"))
        .args_conflicts_with_subcommands(true)
        .disable_help_subcommand(true)
}
