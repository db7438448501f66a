//! The built-in instruments name what they record from this crate: no
//! `.metric("…")` or `.note("…")` with a literal name outside their tests,
//! and no host fact read by a literal key (`key == "…"`),
//! so the board, which reads by the same constants, cannot miss a renamed
//! figure. (A third-party instrument may use any name; the SDK takes both.)

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each `.metric(` or `.note(` whose first argument is a string literal,
/// and each key compared with a literal, as `file:line`, in the code
/// before the file's tests.
fn literal_names(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    for call in [".metric(", ".note(", "key == "] {
        for (at, _) in code.match_indices(call) {
            let rest = code[at + call.len()..].trim_start();
            if rest.starts_with('"') {
                let line = code[..at].lines().count();
                found.push(format!("{}:{line}", file.display()));
            }
        }
    }
    found
}

#[test]
fn built_in_instruments_name_their_metrics_and_notes_from_the_contract() {
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["instruments", "lib/workload", "lib/sdk/src", "reporters/board"] {
        rust_files(&plugins.join(dir), &mut files);
    }
    assert!(files.len() > 30, "found only {} files under {}", files.len(), plugins.display());
    let found: Vec<String> = files.iter().flat_map(|f| literal_names(f)).collect();
    assert!(found.is_empty(), "literal metric or note names (use sparktest_contract): {found:#?}");
}

#[test]
fn the_check_sees_a_literal_name() {
    let dir = std::env::temp_dir().join(format!("sparktest-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lib.rs");
    std::fs::write(&file, "fn f(o: Outcome) -> Outcome {\n    o.note(\n        \"kind\", \"x\")\n}\n").unwrap();
    assert_eq!(literal_names(&file).len(), 1);
    std::fs::write(&file, "fn f(o: Outcome) -> Outcome {\n    o.note(names::KIND, \"x\")\n}\n").unwrap();
    assert!(literal_names(&file).is_empty());
    std::fs::write(&file, "fn f(e: &[Pair]) -> bool {\n    e.iter().any(|p| p.key == \"footprint.x\")\n}\n").unwrap();
    assert_eq!(literal_names(&file).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
