//! The source's shape (issue 49): no module of a crate imports, through
//! any chain of imports, a module that imports it back (a circle makes a
//! newcomer read every file of it to understand any one of them), and no
//! function outside the tests is longer than a newcomer reads at once.
//!
//! Read from the source text: every `crate::a::b` and `super::a` path
//! outside a file's `#[cfg(test)] mod tests` (doc comments included: a
//! link is a pointer a reader follows too), resolved to the deepest module
//! of the crate it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::repo;

/// Every crate's `src` folder (the tree test's crate folders that have
/// one).
fn crate_sources() -> Vec<PathBuf> {
    crate::tree::crate_folders().into_iter().map(|c| repo().join(c).join("src")).filter(|s| s.is_dir()).collect()
}

/// Module path (`board::index`) → its file, for one crate.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    parts.pop();
                }
                out.insert(parts.join("::"), p);
            }
        }
    }
    out
}

/// The paths after `prefix` in `text`: `a::b::c` of `crate::a::b::c`.
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = text[at..].find(prefix).map(|i| at + i) {
        at = i + prefix.len();
        let before = i.checked_sub(1).map(|b| bytes[b]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let rest = &text[at..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
        out.push(rest[..len].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

/// Each module's imports of other modules of its crate.
fn imports(mods: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, file) in mods {
        let text = std::fs::read_to_string(file).unwrap();
        let text = text.find("#[cfg(test)]\nmod tests").map_or(text.as_str(), |t| &text[..t]);
        let parent: Vec<&str> = m.split("::").filter(|s| !s.is_empty()).collect();
        let parent = &parent[..parent.len().saturating_sub(1)];
        let from_crate = paths_after(text, "crate::").into_iter().map(|p| p.into_iter().collect::<Vec<_>>());
        let from_super = paths_after(text, "super::").into_iter().map(|p| parent.iter().copied().chain(p).collect());
        let to = edges.entry(m.clone()).or_default();
        for path in from_crate.chain(from_super) {
            let deepest = (1..=path.len()).rev().map(|k| path[..k].join("::")).find(|c| mods.contains_key(c));
            if let Some(target) = deepest.filter(|t| t != m) {
                to.insert(target);
            }
        }
    }
    edges
}

/// The circles among the modules: each strongly connected set of more
/// than one module (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        let edges = w.edges;
        for t in edges.get(v).into_iter().flatten() {
            let t = t.as_str();
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[v].min(w.low[t]);
                w.low.insert(v, low);
            } else if w.stack.contains(&t) {
                let low = w.low[v].min(w.index[t]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let at = w.stack.iter().rposition(|x| *x == v).unwrap();
            let set: Vec<String> = w.stack.drain(at..).map(str::to_string).collect();
            if set.len() > 1 {
                w.out.push(set);
            }
        }
    }
    let mut w = Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in edges.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.out
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let crates = crate_sources();
    assert!(crates.len() >= 10, "the workspace's crates: {crates:?}");
    let mut found = Vec::new();
    for src in &crates {
        for circle in circles(&imports(&modules(src))) {
            found.push(format!("{}: {}", src.strip_prefix(repo()).unwrap().display(), circle.join(" → ")));
        }
    }
    assert!(found.is_empty(), "modules that import each other, directly or through others:\n{}", found.join("\n"));
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
            .collect();
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    let mut circle = found[0].clone();
    circle.sort();
    assert_eq!(circle, ["a", "b", "c"]);
    assert_eq!(paths_after("use crate::a::b;\nx::crate::c; super::d::e", "crate::"), [vec!["a", "b"]]);
}

/// The longest a function outside the tests may be, in lines from its
/// `fn` to its closing brace.
const LONGEST_FUNCTION: usize = 120;

/// Every `.rs` file under the workspace's crates' `src` folders.
fn source_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for src in crate_sources() {
        out.extend(modules(&src).into_values());
    }
    out
}

/// The functions of a file outside its tests longer than `limit` lines:
/// (name, first line, lines). A function is its `fn` line to the first
/// line after it that is its closing brace, at the indent it started at.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let words: Vec<&str> = body.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else { continue };
        let heads = ["pub", "pub(crate)", "pub(super)", "async", "const", "unsafe", "extern"];
        if !words[..at].iter().all(|w| heads.contains(w)) || body.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| l.trim_end() == close) {
            let n = end + 2;
            if n > limit {
                let name = words[at + 1].split(['(', '<']).next().unwrap_or("").to_string();
                out.push((name, i + 1, n));
            }
        }
    }
    out
}

#[test]
fn no_function_outside_the_tests_is_longer_than_a_newcomer_reads_at_once() {
    let files = source_files();
    assert!(files.len() > 100, "the workspace's sources: {}", files.len());
    let mut found = Vec::new();
    for f in &files {
        for (name, line, n) in long_functions(&std::fs::read_to_string(f).unwrap(), LONGEST_FUNCTION) {
            found.push(format!("{}:{line}: fn {name}: {n} lines", f.strip_prefix(repo()).unwrap().display()));
        }
    }
    assert!(
        found.is_empty(),
        "functions over {LONGEST_FUNCTION} lines (split them into steps a reader can name):\n{}",
        found.join("\n")
    );
}

/// The issue numbers a text cites (`issue 48`, `issues 21 and 30`,
/// `(#12)`), with their lines: a library's source says what it does, and
/// the commits say why.
fn issue_numbers(text: &str) -> Vec<usize> {
    let cites = |l: &str| {
        let l = l.to_ascii_lowercase();
        ["issue ", "issues "]
            .iter()
            .any(|w| l.match_indices(w).any(|(at, _)| l[at + w.len()..].starts_with(|c: char| c.is_ascii_digit())))
            || l.match_indices("(#").any(|(at, _)| l[at + 2..].starts_with(|c: char| c.is_ascii_digit()))
    };
    text.lines().enumerate().filter(|(_, l)| cites(l)).map(|(i, _)| i + 1).collect()
}

#[test]
fn no_library_source_cites_an_issue_number() {
    let mut found = Vec::new();
    for f in source_files() {
        for line in issue_numbers(&std::fs::read_to_string(&f).unwrap()) {
            found.push(format!("{}:{line}", f.strip_prefix(repo()).unwrap().display()));
        }
    }
    assert!(found.is_empty(), "issue numbers belong in the commits, not the source:\n{}", found.join("\n"));
    assert_eq!(issue_numbers("a\n//! The board (issue 48): x\n(#12) and Issues 3\nan issue with it"), vec![2, 3]);
}

#[test]
fn the_length_finder_measures_a_function_to_its_own_closing_brace() {
    let text = "pub fn short() {\n    1;\n}\n\n    pub(crate) async fn long(a: u8) -> u8 {\n        if a > 0 {\n            a\n        } else {\n            0\n        }\n    }\nfn decl();\n#[cfg(test)]\nfn in_tests() {\n\n\n\n}\n";
    assert_eq!(long_functions(text, 3), [("long".to_string(), 5, 7)]);
    assert!(long_functions(text, 7).is_empty());
}

/// Every `.rs` file of the workspace's crates, their tests and benches
/// included.
fn every_rust_file() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> =
        ["cargo-sparktest", "harness", "common", "plugins", "snapshots"].iter().map(|d| repo().join(d)).collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let (p, kind) = (e.path(), e.file_type());
            if kind.as_ref().is_ok_and(|t| t.is_dir()) && e.file_name() != "target" {
                dirs.push(p);
            } else if kind.is_ok_and(|t| t.is_file()) && p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn no_file_is_compiled_into_another_crate_by_its_path() {
    let files = every_rust_file();
    assert!(files.len() > 150, "the workspace's Rust files: {}", files.len());
    let attribute = concat!("#[", "path");
    let found: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().lines().any(|l| l.trim_start().starts_with(attribute)))
        .map(|f| f.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "shared code is a crate (harness/test-support for tests), not a file included by path: {found:?}"
    );
}
