//! Checking the parsed flags into what smart-tee runs: a [`Mode`] with its validated
//! [`Config`] or view options; every refusal says which flag and why.

use std::path::PathBuf;

use super::values::parse_size;
use super::{BUDGET_VAR, Cli, Config, Mode, OutputError};
use crate::cut::engine::{DEFAULT_BUDGET, EngineConfig};
use crate::line::fields::{FieldClass, FieldClasses};
use crate::line::marker::MarkerTemplate;
use crate::tee::progress::ProgressTo;
use crate::tee::stats::StatsReport;

/// The secrets to redact by value: the environment's, and those of `file` (`--redact-values`).
pub(super) fn secrets(
    file: Option<&std::path::Path>,
) -> Result<Vec<crate::cut::redact::Secret>, String> {
    let mut secrets = crate::cut::redact::from_env();
    if let Some(path) = file {
        secrets.extend(
            crate::cut::redact::from_dotenv(path).map_err(|e| format!("--redact-values: {e}"))?,
        );
    }
    Ok(secrets)
}

impl Cli {
    pub(super) fn into_mode(mut self) -> Result<Mode, String> {
        let (view, compact) = (self.view, self.compact);
        if view {
            // `-` is standard input, as for cat, jq and less; so is no FILE when standard
            // input is not a terminal (`agent | smart-tee --view`).
            let stdin_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
            if self.files.is_empty() && !stdin_is_terminal {
                self.files.push("-".into());
            }
            if self.follow && self.files.iter().any(|f| f == "-") {
                return Err(
                    "--follow waits for files to grow; standard input (-) is read to \
                            its end: give the log's path"
                        .into(),
                );
            }
        }
        if (view || compact) && self.files.is_empty() {
            return Err(format!(
                "--{} needs at least one FILE",
                if view { "view" } else { "compact" }
            ));
        }
        let grep = match self.grep.take() {
            Some(p) => {
                Some(regex::bytes::Regex::new(&p).map_err(|e| format!("--grep {p:?}: {e}"))?)
            }
            None => None,
        };
        let (tail, head, types, format) = (
            self.tail,
            self.head,
            std::mem::take(&mut self.types),
            self.format,
        );
        let (max_tokens, bytes_per_token, follow, dry_run) = (
            self.max_tokens,
            self.bytes_per_token,
            self.follow,
            self.dry_run,
        );
        if format == crate::read::log::Format::Html && (follow || self.summary) {
            return Err(
                "--format html is one finished page that holds the summary: not with \
                        --follow or --summary"
                    .into(),
            );
        }
        if format == crate::read::log::Format::Csv && !self.summary {
            return Err("--format csv is the table of runs: use it with --summary".into());
        }
        if follow && format == crate::read::log::Format::Json {
            return Err(
                "--follow prints events as they come, which a JSON array cannot hold; \
                        use --format jsonl or text"
                    .into(),
            );
        }
        let exclude_types = std::mem::take(&mut self.exclude_types);
        let now = std::time::SystemTime::now();
        let bound = |flag: &str, v: Option<String>| {
            v.map(|v| crate::read::when::parse_bound(flag, &v, now))
                .transpose()
        };
        let (errors, since, until) = (
            self.errors,
            bound("--since", self.since.take())?,
            bound("--until", self.until.take())?,
        );
        if let Some(path) = self.prices.take() {
            let table = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| crate::read::summary::prices::Prices::parse(&text))
                .map_err(|e| format!("--prices {path:?}: {e}"))?;
            crate::read::summary::prices::choose(table);
        }
        let (summary, by_run, stall_after) = (
            self.summary,
            self.by_run,
            std::time::Duration::from_secs(self.stall_after),
        );
        let (archive, original, lines) = (
            self.archive.clone(),
            self.original,
            std::mem::take(&mut self.lines),
        );
        let page = match (self.offset, self.limit) {
            (None, None) => None,
            (offset, limit) => Some((offset.unwrap_or(0), limit)),
        };
        let on_terminal = crate::door::stdout_terminal();
        let terminal = on_terminal.is_some();
        let color = match self.color.as_str() {
            "always" => true,
            "never" => false,
            _ => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        };
        let width = on_terminal.flatten();
        let config = self.into_config()?;
        if original {
            if config.files.len() != 1 {
                return Err("--original reads one LOG".into());
            }
            if page.is_some() && (lines.len() != 1 || lines[0].0 != lines[0].1) {
                return Err("--offset and --limit page through one line: give one --line N".into());
            }
            return Ok(Mode::Original(
                crate::tee::archive::original::OriginalRequest {
                    log: config.files[0].clone(),
                    archive,
                    lines,
                    page,
                },
            ));
        }
        Ok(if view {
            Mode::View(Box::new(crate::read::log::ViewOptions {
                files: config.files,
                head,
                tail,
                grep,
                types,
                exclude_types,
                errors,
                since,
                until,
                format,
                max_tokens: max_tokens.map(|t| t as usize),
                bytes_per_token,
                follow,
                color: color && format == crate::read::log::Format::Text,
                width,
                summary,
                by_run,
                stall_after,
                engine: config.engine,
                lines,
                ..crate::read::log::ViewOptions::new(Vec::new())
            }))
        } else if compact {
            Mode::Compact {
                files: config.files,
                engine: config.engine,
                dry_run,
                archive,
            }
        } else {
            Mode::Tee(config)
        })
    }

    fn into_config(self) -> Result<Config, String> {
        let mut fields = if self.no_default_fields {
            FieldClasses::default()
        } else {
            FieldClasses::defaults()
        };
        fields.extend(&self.duplicate, FieldClass::Duplicate);
        fields.extend(&self.truncate_first, FieldClass::CutFirst);
        fields.extend(&self.cut_last, FieldClass::CutLast);
        fields.extend(&self.preserve, FieldClass::Preserved);
        let mut warnings = Vec::new();
        let marker = MarkerTemplate::check(&self.marker).map_err(|e| format!("--marker: {e}"))?;
        let mut engine = EngineConfig {
            max_line_bytes: self.max_line_bytes,
            head_ratio: self.head_ratio,
            marker,
            fields: if self.plain {
                fields.without_duplicates()
            } else {
                fields
            },
            value_aware: !self.plain,
            omit_images: self.omit_images,
            add_timestamp: self.add_timestamp,
            redact: self.redact || self.redact_values.is_some(),
            secrets: Vec::new(),
            field_stats: self.stats || self.stats_json.is_some(),
        };
        if engine.redact {
            engine.secrets = secrets(self.redact_values.as_deref())?;
            // Everything else that leaves smart-tee (stderr, the read side's answers) is
            // redacted with the same secrets.
            crate::door::open(&engine.secrets);
        }
        if self.plain && self.omit_images {
            return Err("--omit-images needs value-aware cutting; drop --plain".into());
        }
        let floor = engine.min_budget();
        if self.budget_from_default
            && let Some(value) = std::env::var_os(BUDGET_VAR)
        {
            // A bad value in the environment must not cost the stream: said, and the default
            // used.
            let value = value.to_string_lossy().into_owned();
            match parse_size(&value) {
                Ok(n) if n == 0 || n >= floor => engine.max_line_bytes = n,
                Ok(n) => warnings.push(format!(
                    "{BUDGET_VAR}={value}: {n} is below {floor}, the least that holds a marker \
                     record; using the default {DEFAULT_BUDGET}"
                )),
                Err(e) => warnings.push(format!(
                    "{BUDGET_VAR}={value}: {e}; using the default {DEFAULT_BUDGET}"
                )),
            }
        }
        if let Some(value) = std::env::var_os(crate::line::strings::SIMD_VAR) {
            // A path this CPU lacks, or no path at all: said, and the stream goes on.
            use crate::line::strings::{SIMD_VAR, Simd};
            let value = value.to_string_lossy().into_owned();
            match Simd::parse(&value) {
                None => warnings.push(format!(
                    "{SIMD_VAR}={value}: not one of portable, sse2, avx2, avx512; using the \
                     fastest path measured on this CPU"
                )),
                Some(path) if path > Simd::widest() => warnings.push(format!(
                    "{SIMD_VAR}={value}: this CPU has no {value}; using {}",
                    Simd::widest().name()
                )),
                Some(_) => {}
            }
        }
        if engine.max_line_bytes != 0 && engine.max_line_bytes < floor {
            return Err(format!(
                "--max-line-bytes {} is below {floor}, the least that holds a marker record{}; \
                 use 0 for no truncation",
                engine.max_line_bytes,
                if floor > crate::cut::engine::MIN_BUDGET {
                    " with this --marker"
                } else {
                    ""
                },
            ));
        }
        if let Some(n) = self.stdout_max_line_bytes.filter(|&n| n != 0 && n < floor) {
            return Err(format!(
                "--stdout-max-line-bytes {n} is below {floor}, the least that holds a marker record"
            ));
        }
        let output_error = match (self.output_error, self.pipe) {
            (Some(mode), _) => mode,
            (None, _) => OutputError::WarnNopipe,
        };
        let files: Vec<PathBuf> = self.files.into_iter().map(PathBuf::from).collect();
        // --archive, or the environment's archive beside the first log.
        let archive = match self.archive {
            Some(path) => Some(path),
            None if crate::tee::archive::wanted_by_env() => {
                if files.is_empty() {
                    warnings.push(format!(
                        "{}: no log to put the archive beside; no archive is written",
                        crate::tee::archive::ARCHIVE_VAR
                    ));
                }
                files.first().map(|f| crate::tee::archive::default_path(f))
            }
            None => None,
        };
        let progress = self.progress.map(|p| {
            if p.as_os_str() == "-" {
                ProgressTo::Stderr
            } else {
                ProgressTo::File(p)
            }
        });
        Ok(Config {
            progress,
            archive,
            files,
            warnings,
            append: self.append,
            ignore_interrupts: self.ignore_interrupts,
            output_error,
            file_mode: self.file_mode,
            engine,
            stdout_max_line_bytes: self.stdout_max_line_bytes.filter(|&n| n > 0),
            stats: StatsReport {
                human: self.stats,
                json: self.stats_json,
            },
        })
    }
}
