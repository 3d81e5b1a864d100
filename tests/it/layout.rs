//! The code's layout, as docs/design.md's map draws it: each module belongs to one phase of the
//! data path, and no module uses a module of a later phase (`crate::name` outside comments).

/// The phases, in data-path order; a module may use its own phase and earlier ones.
const PHASES: &[(&str, &[&str])] = &[
    ("shared", &["error", "early"]),
    (
        "reading a line",
        &["strings", "scan", "payload", "fields", "index", "marker"],
    ),
    ("reducing a giant line", &["reduce"]),
    (
        "cutting a line",
        &["plan", "emit", "record", "redact", "stamp", "engine"],
    ),
    (
        "the tee path",
        &[
            "fd",
            "split",
            "sink",
            "log",
            "stats",
            "stdout_cap",
            "splice",
            "handoff",
            "tee",
            "archive",
        ],
    ),
    (
        "reading logs back",
        &["when", "confine", "gist", "summary", "view", "compact"],
    ),
    ("serving logs over MCP", &["mcp"]),
    ("the command line", &["cli"]),
];

fn phase_of(module: &str) -> Option<usize> {
    PHASES.iter().position(|(_, ms)| ms.contains(&module))
}

#[test]
fn no_module_uses_a_later_phase() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            for f in std::fs::read_dir(&path).unwrap() {
                files.push((name.clone(), f.unwrap().path()));
            }
        } else if !matches!(name.as_str(), "lib" | "main") {
            files.push((name, path));
        }
    }
    let mut wrong = Vec::new();
    for (module, path) in &files {
        let Some(own) = phase_of(module) else {
            wrong.push(format!(
                "{module}: in no phase (add it to PHASES and the map in docs/design.md)"
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
    assert!(files.len() > 20);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
