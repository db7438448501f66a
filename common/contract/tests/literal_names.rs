//! The built-in instruments, the board and the benchmark's generator name
//! what they record and read from this crate: no `.metric("…")` or
//! `.note("…")` with a literal name outside their tests, no host fact read
//! by a literal key
//! (`key == "…"`), no case group matched as a literal (`starts_with("decode::")`,
//! `strip_prefix`, `trim_start_matches`, `case == "level::c2"`), and no arm
//! named as a literal (`a.name == "bare"`, `Some("draft")`, a compliance
//! context `== "agent"`), no case name built from a literal of a group the
//! contract names (`format!("level::c{l}")`), so the board,
//! which reads by the same constants, cannot miss a renamed figure, group or
//! arm. (A third-party instrument may use any name; the SDK takes both.)

use std::path::{Path, PathBuf};

use sparktest_contract::spec_decode::arm;

/// Every case group the contract names.
const GROUPS: &[sparktest_contract::Group] = {
    use sparktest_contract::*;
    &[
        campaign::LAUNCH,
        campaign::STOP,
        campaign::NOT_RUN,
        concurrency::LEVEL,
        long_prompt::PASTE,
        spec_decode::STRUCTURED,
        speed::AGENT,
        sustained_load::RATE,
        sustained_load::SWEEP,
        workload::DECODE,
    ]
};

/// Every arm the contract names.
const ARMS: &[sparktest_contract::Arm] = &[arm::BARE, arm::DRAFT];

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

/// The string literal `text` starts with, without its quotes.
fn literal(text: &str) -> Option<&str> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (i, ch) in body.char_indices() {
        match ch {
            '\\' => escaped = !escaped,
            '"' if !escaped => return Some(&body[..i]),
            _ => escaped = false,
        }
    }
    None
}

/// Each literal metric or note name, host fact key, case group and arm,
/// as `file:line: what`, in the code before the file's tests.
fn literal_names(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    let mut flag = |at: usize, what: &str| {
        let line = code[..at].lines().count();
        found.push(format!("{}:{line}: {what}", file.display()));
    };
    let after = |at: usize, len: usize| code[at + len..].trim_start();
    for call in [".metric(", ".note(", "key == "] {
        for (at, _) in code.match_indices(call) {
            if after(at, call.len()).starts_with('"') {
                flag(at, "a metric, note or fact named by a literal");
            }
        }
    }
    for call in ["starts_with(", "strip_prefix(", "trim_start_matches(", "== ", "!= "] {
        for (at, _) in code.match_indices(call) {
            if literal(after(at, call.len())).is_some_and(|l| l.contains("::")) {
                flag(at, "a case group matched as a literal");
            }
        }
    }
    // A case name built from a literal of a group the contract names:
    // `format!("level::c{l}")`.
    for call in ["format!(", "Case::new("] {
        for (at, _) in code.match_indices(call) {
            let group = literal(after(at, call.len())).and_then(|l| l.split_once("::")).map(|(g, _)| g);
            if group.is_some_and(|g| GROUPS.iter().any(|known| known.name() == g)) {
                flag(at, "a case name built from a literal group");
            }
        }
    }
    // The compliance contexts, like arms.
    for context in [sparktest_contract::compliance::context::AGENT] {
        for pattern in [format!("== \"{context}\""), format!("\"{context}\" |")] {
            for (at, _) in code.match_indices(&pattern) {
                flag(at, "a compliance context named by a literal");
            }
        }
    }
    for arm in ARMS {
        // `("bare")` is also `Some("bare")`.
        for pattern in [format!("== \"{arm}\""), format!("(\"{arm}\")")] {
            for (at, _) in code.match_indices(&pattern) {
                flag(at, "an arm named by a literal");
            }
        }
    }
    found
}

#[test]
fn built_in_instruments_the_board_and_the_benchmark_name_from_the_contract() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "plugins/instruments",
        "plugins/lib/workload",
        "plugins/lib/sdk/src",
        "plugins/reporters/board",
        "harness/host/benches",
        "harness/test-support/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 30, "found only {} files under {}", files.len(), root.display());
    assert!(files.iter().any(|f| f.ends_with("harness/test-support/src/board_files.rs")), "the generator is scanned");
    let found: Vec<String> = files.iter().flat_map(|f| literal_names(f)).collect();
    assert!(found.is_empty(), "literal names (use sparktest_contract): {found:#?}");
}

#[test]
fn the_check_sees_a_literal_name() {
    let dir = std::env::temp_dir().join(format!("sparktest-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lib.rs");
    let check = |code: &str| {
        std::fs::write(&file, code).unwrap();
        literal_names(&file).len()
    };
    assert_eq!(check("fn f(o: Outcome) -> Outcome {\n    o.note(\n        \"kind\", \"x\")\n}\n"), 1);
    assert_eq!(check("fn f(o: Outcome) -> Outcome {\n    o.note(names::KIND, \"x\")\n}\n"), 0);
    assert_eq!(check("fn f(e: &[Pair]) -> bool {\n    e.iter().any(|p| p.key == \"footprint.x\")\n}\n"), 1);
    // Case groups.
    assert_eq!(check("fn f(c: &str) -> bool {\n    c.starts_with(\"decode::\")\n}\n"), 1);
    assert_eq!(check("fn f(c: &str) -> &str {\n    c.trim_start_matches(\"paste::\")\n}\n"), 1);
    assert_eq!(check("fn f(c: &str) -> Option<&str> {\n    c.strip_prefix(\"level::c\")\n}\n"), 1);
    assert_eq!(check("fn f(c: &str) -> bool {\n    c == \"level::c2\"\n}\n"), 1);
    assert_eq!(check("fn f(c: &str) -> bool {\n    DECODE.holds(c) && c.starts_with(\"pin.\")\n}\n"), 0);
    // Case names built from a literal group; a message is not one.
    assert_eq!(check("fn f(l: u32) -> String {\n    format!(\"level::c{l}\")\n}\n"), 1);
    assert_eq!(check("fn f(n: &str) -> Case {\n    Case::new(format!(\"paste::{}\", n), 1)\n}\n"), 1);
    assert_eq!(check("fn f(l: u32) -> String {\n    names::level(l).to_string()\n}\n"), 0);
    assert_eq!(check("fn f(e: &str) -> String {\n    format!(\"failed: {e}\")\n}\n"), 0);
    // A compliance context.
    assert_eq!(check("fn f(c: &str) -> bool {\n    c == \"agent\"\n}\n"), 1);
    assert_eq!(check("fn f(c: &str) -> bool {\n    c == names::context::AGENT\n}\n"), 0);
    // Arms.
    assert_eq!(check("fn f(a: &Arm) -> bool {\n    a.name == \"bare\"\n}\n"), 1);
    assert_eq!(check("fn f(a: Option<&str>) -> bool {\n    a == Some(\"draft\")\n}\n"), 1);
    assert_eq!(check("fn f() -> X {\n    decode(\"bare\")\n}\n"), 1);
    assert_eq!(check("fn f(a: Option<&str>) -> bool {\n    arm::DRAFT.is(a)\n}\n"), 0);
    // Code after the tests' start is theirs.
    assert_eq!(check("#[cfg(test)]\nfn f(c: &str) -> bool {\n    c.starts_with(\"decode::\")\n}\n"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
