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
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let used: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                match phase_of(&used) {
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
