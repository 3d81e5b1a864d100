//! The code's layout, as docs/design.md's map draws it: one folder of `src/` per phase of the
//! data path, and no module uses a module of a later phase (`crate::name` outside comments).

use std::path::{Path, PathBuf};

/// The phases, in data-path order: the folders of `src/` (and the two shared root files); a
/// module may use its own phase and earlier ones.
const PHASES: &[(&str, &[&str])] = &[
    ("shared", &["error", "early"]),
    ("reading a line", &["line"]),
    ("reducing a giant line", &["reduce"]),
    ("cutting a line", &["cut"]),
    ("the door out", &["door"]),
    ("the tee path", &["tee"]),
    ("reading logs back", &["read"]),
    ("serving logs over MCP", &["mcp"]),
    ("the command line", &["cli"]),
];

fn phase_of(module: &str) -> Option<usize> {
    PHASES.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every `.rs` file under `dir`, with the phase folder (or root file stem) it belongs to.
fn sources(dir: &Path, top: Option<&str>, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let owner = top.map_or(name.clone(), str::to_owned);
        if path.is_dir() {
            sources(&path, Some(&owner), out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !(top.is_none() && matches!(name.as_str(), "lib" | "main"))
        {
            out.push((owner, path));
        }
    }
}

fn all_sources() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        None,
        &mut files,
    );
    assert!(files.len() > 20, "the source tree was not found");
    files
}

/// The modules `text` (the file at `path`) uses, outside comments, each as its first two
/// names under the crate (`read::view`, or `door` alone): by `crate::a::b`, in a grouped import
/// (`use crate::{a::x, b}`), and by `super::super::…` from the file's own place.
fn used_modules(path: &Path, text: &str) -> Vec<Vec<String>> {
    // The file's module path under src/ (`read/view/html.rs`: read, view, html).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = path.strip_prefix(&src).unwrap().with_extension("");
    let mut own: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if own.last().is_some_and(|l| l == "mod") {
        own.pop();
    }
    let mut used = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            paths(&line[i + 7..], Vec::new(), &mut used);
        }
        for (i, _) in line.match_indices("super::") {
            if line[..i].ends_with("super::") {
                continue; // counted from the first `super::` of the run
            }
            let mut rest = &line[i..];
            let mut up = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                up += 1;
                rest = r;
            }
            let kept = own.len().saturating_sub(up);
            paths(rest, own[..kept].to_vec(), &mut used);
        }
    }
    used
}

/// The paths that `rest` (what follows `crate::` or a module path) names, to two names each:
/// `a::b::c` gives `a::b`, `{a::x, b}` gives `a::x` and `b`, `a::{x, y}` gives `a::x`, `a::y`.
fn paths(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    if prefix.len() >= 2 {
        out.push(prefix[..2].to_vec());
        return;
    }
    if let Some(group) = rest.strip_prefix('{') {
        // The group's items at its first level, up to its closing brace (on this line).
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' | ',' if depth == 0 => {
                    paths(group[start..k].trim_start(), prefix.clone(), out);
                    if c == '}' {
                        return;
                    }
                    start = k + 1;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        return;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix);
        }
        return;
    }
    let after = &rest[name.len()..];
    let mut path = prefix;
    path.push(name);
    match after.strip_prefix("::") {
        Some(next) if path.len() < 2 => paths(next, path, out),
        _ => out.push(path),
    }
}

#[test]
fn grouped_imports_and_super_paths_are_seen() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let used = used_modules(
        &src.join("cut/redact/mod.rs"),
        "use crate::{line::x, tee::{a, b}, door};\nuse super::super::read::y;\nsuper::z();\n\
         use crate::read::{log::{A, B}, events};",
    );
    let named: Vec<String> = used.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        named,
        [
            "line::x",
            "tee::a",
            "tee::b",
            "door",
            "read::y",
            "cut::z",
            "read::log",
            "read::events"
        ]
    );
}

/// The layers of `read/`, in order: a module may use its own layer and earlier ones. What
/// `--summary` and `--view` both read (`log`) sits below both; what the newer agents' events say
/// of their run (`headless`: calls, endings, tokens) sits with the summary, which counts it in
/// the summary's own terms, and below the view, which pairs their calls; the view shows the
/// summary; a compaction reads logs as the view does.
const READ_LAYERS: &[&[&str]] = &[
    &["confine", "lines_in", "when", "gist", "events"],
    &["log"],
    &["summary", "headless"],
    &["view"],
    &["compact"],
];

fn read_layer(module: &str) -> Option<usize> {
    READ_LAYERS.iter().position(|ms| ms.contains(&module))
}

#[test]
fn no_reader_uses_a_later_layer_of_read() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("read");
    let mut wrong = Vec::new();
    for (_, path) in all_sources()
        .into_iter()
        .filter(|(_, p)| p.starts_with(&src) && *p != src.join("mod.rs"))
    {
        let own = path
            .strip_prefix(&src)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let own = Path::new(own.as_os_str()).with_extension("");
        let own = own.to_string_lossy();
        let Some(own_layer) = read_layer(&own) else {
            wrong.push(format!(
                "{}: in no layer of read (see READ_LAYERS)",
                path.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        for used in used_modules(&path, &text) {
            if let [first, second] = used.as_slice()
                && first == "read"
                && read_layer(second).is_some_and(|l| l > own_layer)
            {
                wrong.push(format!(
                    "{}: read::{own} uses read::{second}",
                    path.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_module_uses_a_later_phase() {
    let mut wrong = Vec::new();
    for (module, path) in &all_sources() {
        let Some(own) = phase_of(module) else {
            wrong.push(format!(
                "{}: in no phase (put it in a phase folder; see docs/design.md)",
                path.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap();
        for used in used_modules(path, &text) {
            let used = &used[0];
            match phase_of(used) {
                Some(p) if p > own => wrong.push(format!(
                    "{}: {module} ({}) uses {used} ({})",
                    path.display(),
                    PHASES[own].0,
                    PHASES[p].0
                )),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_phase_folder_says_its_job() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for (_, modules) in PHASES {
        for m in *modules {
            let folder = src.join(m).join("mod.rs");
            let file = src.join(format!("{m}.rs"));
            let path = if folder.exists() { folder } else { file };
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if !text.starts_with("//!") {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "no module doc: {}", missing.join(", "));
}

/// A module the next engineer reads in one sitting: none over 700 lines (split it by job).
#[test]
fn no_module_is_over_700_lines() {
    let long: Vec<String> = all_sources()
        .iter()
        .filter_map(|(_, path)| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            (lines > 700).then(|| format!("{}: {lines} lines", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "split by job: {}", long.join(", "));
}

/// The one door out (src/door/mod.rs, docs/redaction.md): clippy.toml disallows every other
/// way to standard output, standard error and a written file, so a surface that bypassed the
/// redaction would not build under `cargo clippy -D warnings`. An `allow` of those lints is
/// the only way round, and this test holds each one to its reason: the door itself, the tee's
/// raw stream, a test fixture, or a file door that docs/redaction.md names.
#[test]
fn only_the_door_reaches_stdout_stderr_and_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let clippy = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    for banned in [
        "std::eprintln",
        "std::println",
        "std::io::stdout",
        "std::io::stderr",
        "rustix::stdio::stdout",
        "rustix::stdio::stderr",
        "std::fs::OpenOptions::write",
        "std::fs::OpenOptions::append",
        "std::fs::File::create",
        "std::fs::write",
        "std::fs::copy",
        "clap::Command::get_matches_from",
        "rustix::io::write",
        "rustix::fs::openat",
    ] {
        assert!(
            clippy.contains(&format!("\"{banned}\"")),
            "clippy.toml no longer disallows {banned}"
        );
    }
    let doc = std::fs::read_to_string(root.join("docs/redaction.md")).unwrap();
    let mut wrong = Vec::new();
    let mut files: Vec<PathBuf> = all_sources().into_iter().map(|(_, p)| p).collect();
    files.push(root.join("src/main.rs"));
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        for (i, _) in text.match_indices("clippy::disallowed_") {
            let reason = text[i..]
                .split_once("reason = \"")
                .map_or("", |(_, r)| r.split('"').next().unwrap_or(""));
            let ok = match rel.as_str() {
                _ if reason.starts_with("test fixtures") => {
                    text[..i].trim_end().ends_with("#[cfg(test)]\n#[allow(")
                        || text[..i].ends_with("#[cfg(test)]\n#[allow(")
                }
                "src/door/mod.rs" => true,
                "src/tee/fd.rs" => reason.starts_with("standard output is the stream itself"),
                "src/early.rs" => reason.contains("writes nothing"),
                _ if reason.starts_with("a door (docs/redaction.md)") => {
                    doc.contains(&format!("`{rel}`"))
                }
                // A file opened to read: the call that follows asks for reading alone.
                _ if reason.starts_with("reads only") => {
                    let call: String = text[i..].lines().take(14).collect();
                    (call.contains("RDONLY") || call.contains("reading(flags)"))
                        && !["WRONLY", "RDWR", "CREATE", "APPEND", "TRUNC"]
                            .iter()
                            .any(|w| call.contains(w))
                }
                _ => false,
            };
            if !ok {
                wrong.push(format!("{rel}: allows {reason:?}"));
            }
        }
    }
    // The tee's raw stream (descriptor 1, never redacted) is the tee's alone: a reading
    // surface that took it would bypass the door with a safe call.
    for path in &files {
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        if !rel.starts_with("src/tee/")
            && rel != "src/main.rs"
            && ["fd::Stdout", "stdout_fd", "fd::write_all"]
                .iter()
                .any(|raw| text.contains(raw))
        {
            wrong.push(format!("{rel}: uses the tee's raw stdout"));
        }
    }
    assert!(
        wrong.is_empty(),
        "a way out that bypasses the door (or a file door docs/redaction.md does not name):\n{}",
        wrong.join("\n")
    );
}
