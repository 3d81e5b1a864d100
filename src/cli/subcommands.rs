//! The subcommands (`mcp`, `completions`, `man`), parsed before clap sees the tee's flags,
//! and the whole command's definition for completions and the man page.

use std::path::PathBuf;

use super::Mode;
use super::checks::secrets;

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

/// What clap makes of `args`; a refusal, `--help` or `--version` is written through the door
/// (redacted when `--redact` is on the command line) and ends the process with clap's status.
fn matches(command: clap::Command, args: &[std::ffi::OsString]) -> clap::ArgMatches {
    command.try_get_matches_from(args).unwrap_or_else(|e| {
        crate::door::clap_message(&e);
        std::process::exit(e.exit_code())
    })
}

pub(super) fn parse_mcp(args: &[std::ffi::OsString]) -> Mode {
    let m = matches(mcp_command(), args);
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
    let m = matches(completions_command(), args);
    match m.get_one::<clap_complete::Shell>("shell") {
        Some(&shell) => Mode::Completions(shell),
        None => Mode::Man, // unreachable: the argument is required
    }
}

/// The command's definition, for completions and the man page: the tee's flags, the FILEs
/// (any number), and the subcommands, which `parse_from` handles before clap sees the rest.
pub fn command() -> clap::Command {
    super::tee_command()
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

/// The man page: clap's sections for the flags, then the modes, the examples and a SEE ALSO
/// that names only pages that exist (the subcommands are sections of this page, not pages of
/// their own).
pub fn man_page(out: &mut Vec<u8>) -> std::io::Result<()> {
    // The examples of --help's end are a section of their own here.
    let mut cmd = command();
    if let Some(after) = cmd.get_after_long_help().map(|a| a.to_string())
        && let Some((before, _)) = after.split_once("\n\nExamples:\n")
    {
        cmd = cmd.after_long_help(before.to_owned());
    }
    let man = clap_mangen::Man::new(cmd);
    man.render_title(out)?;
    man.render_name_section(out)?;
    // clap_mangen writes a flag with no long name and no value with a space in its bold:
    // `[-p ]`.
    let mut synopsis = Vec::new();
    man.render_synopsis_section(&mut synopsis)?;
    let synopsis = String::from_utf8_lossy(&synopsis).replace("\\-p \\fR", "\\-p\\fR");
    out.extend_from_slice(synopsis.as_bytes());
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    out.extend_from_slice(MAN_MODES.as_bytes());
    man.render_extra_section(out)?;
    out.extend_from_slice(MAN_EXAMPLES.as_bytes());
    man.render_version_section(out)?;
    Ok(())
}

const MAN_MODES: &str = r#".SH MODES
.TP
\fBsmart\-tee run\fR [OPTIONS] LOG... \-\- COMMAND [ARGS...]
Start COMMAND with its standard output piped through the tee, in a process group of its own; stop it on \-\-stall\-after, \-\-timeout, \-\-max\-cost or \-\-max\-output\-tokens (SIGTERM, SIGKILL after \-\-kill\-after); exit with a status that says how the run ended (smart\-tee run \-\-help).
.TP
\fBsmart\-tee mcp\fR [\-\-root DIR]... [\-\-redact]
Serve the logs under the roots to MCP clients over stdio, read\-only: tools list_logs, read_log, log_summary, wait_for_log and read_original.
.TP
\fBsmart\-tee completions\fR SHELL
Print the completion script of SHELL (bash, zsh, fish, elvish, powershell).
.TP
\fBsmart\-tee man\fR
Print this page.
"#;

const MAN_EXAMPLES: &str = r#".SH EXAMPLES
.nf
claude \-p "$P" \-\-output\-format stream\-json \-\-verbose | smart\-tee \-\-add\-timestamp logs/a.jsonl
codex exec \-\-json "$P" | smart\-tee \-a \-\-archive logs/all.orig.zst logs/all.jsonl
smart\-tee \-\-view \-\-tail 20 logs/a.jsonl
smart\-tee \-\-summary logs/*.jsonl
smart\-tee \-\-view \-\-original \-\-line 6 logs/a.jsonl
smart\-tee \-\-compact \-b 2K logs/old.jsonl
smart\-tee mcp \-\-root logs
.fi
.SH "SEE ALSO"
\fBtee\fR(1), \fBzstd\fR(1), \fBlogrotate\fR(8), \fBjq\fR(1)
"#;
