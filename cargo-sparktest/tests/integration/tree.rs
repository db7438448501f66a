//! The repository's shape: the crates sit side by side in three
//! groups (`harness/` the host's, `plugins/` the guests', `common/` both),
//! no crate inside another, every dependency runs down the picture the
//! book's architecture page draws, no link joins two crates, and that page
//! names every crate folder there is. Inside the host crate, every import
//! runs down the floors its `lib.rs` lists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::repo;

/// Who builds a crate, read from its folder's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// `cargo-sparktest/`: the CLI.
    Cli,
    /// `harness/*`: native code, the host's.
    Host,
    /// `common/*`: built by the host and the guests alike.
    Common,
    /// `plugins/**` and the third-party example: built for wasm32.
    Guest,
    /// `snapshots/`: insta's files, a crate only so that cargo finds them.
    Snapshots,
}

fn group_of(folder: &str) -> Option<Group> {
    match folder.split('/').next()? {
        "cargo-sparktest" => Some(Group::Cli),
        "harness" => Some(Group::Host),
        "common" => Some(Group::Common),
        "plugins" | "examples" => Some(Group::Guest),
        "snapshots" => Some(Group::Snapshots),
        _ => None,
    }
}

/// The groups a crate of `from` may depend on: down the architecture
/// page's picture, never up, never across between host and guests.
fn may_depend_on(from: Group, to: Group) -> bool {
    use Group::*;
    match from {
        Cli => matches!(to, Host | Common),
        Host => matches!(to, Host | Common),
        Guest => matches!(to, Guest | Common),
        Common | Snapshots => to == Common,
    }
}

/// Every crate folder under the repository (a folder whose `Cargo.toml`
/// has a `[package]`), relative to it, with `/` between parts. Links are
/// not followed and build output is skipped.
pub fn crate_folders() -> Vec<String> {
    let root = repo();
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let manifest = dir.join("Cargo.toml");
        if dir != root && std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("[package]")) {
            out.push(relative(&dir));
        }
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name();
            let skip = [".git", "target", "vendor", "node_modules"];
            if e.file_type().is_ok_and(|t| t.is_dir()) && !skip.iter().any(|s| name == *s) {
                dirs.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    let rel = path.strip_prefix(repo()).unwrap_or(path);
    rel.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The crate folder holding `path` (the folder itself when it is one).
fn crate_holding<'a>(crates: &'a [String], path: &str) -> Option<&'a String> {
    crates.iter().filter(|c| path == c.as_str() || path.starts_with(&format!("{c}/"))).max_by_key(|c| c.len())
}

#[test]
fn every_crate_sits_in_its_group_beside_its_siblings() {
    let crates = crate_folders();
    assert!(crates.len() > 30, "the crate folders: {crates:?}");
    for c in &crates {
        assert!(
            group_of(c).is_some(),
            "{c}: a crate outside cargo-sparktest/, harness/, common/, plugins/ and examples/"
        );
        let inside: Vec<&String> = crates.iter().filter(|o| c.starts_with(&format!("{o}/"))).collect();
        assert!(inside.is_empty(), "{c} sits inside the crate folder {inside:?}: crates go side by side");
    }
    for folder in ["harness/host", "harness/endpoint", "common/contract", "common/record", "plugins/lib/sdk"] {
        assert!(crates.iter().any(|c| c == folder), "{folder} is a crate folder: {crates:?}");
    }
}

/// `(crate folder, the sparktest crates it names in any dependency table)`.
fn dependencies(crates: &[String]) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for c in crates {
        let text = std::fs::read_to_string(repo().join(c).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = text.parse().unwrap_or_else(|e| panic!("{c}/Cargo.toml: {e}"));
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        let mut deps = Vec::new();
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(t) = manifest.get(table).and_then(|t| t.as_table()) else { continue };
            deps.extend(t.keys().filter(|k| k.starts_with("sparktest-") && *k != "sparktest-libtest-mimic").cloned());
        }
        out.push((c.clone(), name, deps));
    }
    out
}

/// The dependencies among `(from folder, to folder)` that run against the
/// direction, each said in words.
fn against_the_direction(edges: &[(String, String)]) -> Vec<String> {
    edges
        .iter()
        .filter_map(|(from, to)| {
            let (f, t) = (group_of(from)?, group_of(to)?);
            (!may_depend_on(f, t)).then(|| format!("{from} ({f:?}) depends on {to} ({t:?})"))
        })
        .collect()
}

#[test]
fn every_dependency_runs_down_the_architecture_pages_picture() {
    let crates = crate_folders();
    let deps = dependencies(&crates);
    let folder_of: BTreeMap<&str, &str> = deps.iter().map(|(c, n, _)| (n.as_str(), c.as_str())).collect();
    let mut edges = Vec::new();
    for (from, _, names) in &deps {
        for n in names {
            let to =
                folder_of.get(n.as_str()).unwrap_or_else(|| panic!("{from} depends on {n}, which no folder holds"));
            edges.push((from.clone(), to.to_string()));
        }
    }
    assert!(edges.len() > 40, "the workspace's own dependencies: {edges:?}");
    assert_eq!(against_the_direction(&edges), Vec::<String>::new());
}

#[test]
fn the_direction_rule_refuses_a_dependency_that_runs_up_or_across() {
    let edge = |a: &str, b: &str| (a.to_string(), b.to_string());
    let bad = [
        edge("common/record", "harness/host"),
        edge("plugins/instruments/speed", "harness/endpoint"),
        edge("harness/host", "plugins/lib/sdk"),
        edge("harness/host", "cargo-sparktest"),
    ];
    assert_eq!(against_the_direction(&bad).len(), bad.len(), "{:?}", against_the_direction(&bad));
    let good = [edge("harness/host", "common/rows"), edge("plugins/reporters/board", "common/stats")];
    assert!(against_the_direction(&good).is_empty());
}

/// Every symbolic link under the repository, with where it resolves.
fn links() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut dirs = vec![repo()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if kind.is_symlink() {
                let to = std::fs::canonicalize(e.path())
                    .unwrap_or_else(|err| panic!("{}: a broken link: {err}", relative(&e.path())));
                out.push((relative(&e.path()), to));
            } else if kind.is_dir() && ![".git", "target", "node_modules"].iter().any(|s| name == *s) {
                dirs.push(e.path());
            }
        }
    }
    out
}

#[test]
fn no_link_joins_two_crates() {
    let crates = crate_folders();
    let root = repo().canonicalize().unwrap();
    let links = links();
    assert!(links.iter().any(|(l, _)| l == "harness/builtin/suites"), "the links: {links:?}");
    for (link, to) in links {
        let to = relative(
            to.strip_prefix(&root).unwrap_or_else(|_| panic!("{link} points out of the repository: {}", to.display())),
        );
        let from = crate_holding(&crates, &link);
        let into = crate_holding(&crates, &to);
        let holds_one = crates.iter().any(|c| c.starts_with(&format!("{to}/")));
        assert!(
            (into.is_none() || into == from) && !holds_one,
            "{link} → {to} joins two crates: shared code is a crate named as a dependency, shared files sit outside every crate"
        );
    }
}

/// The paths the architecture page's layout tree names: `harness/` at the
/// left edge and `host/` two spaces in make `harness/host`.
fn layout_tree(page: &str) -> Vec<String> {
    let at = page.find("## Layout").expect("the page has a Layout section");
    let block = &page[at..];
    let start = block.find("```text\n").expect("the Layout section draws a tree") + "```text\n".len();
    let block = &block[start..start + block[start..].find("```").unwrap()];
    let mut out = Vec::new();
    let mut parent = String::new();
    for line in block.lines() {
        let indent = line.len() - line.trim_start().len();
        let Some(first) = line.split_whitespace().next().filter(|w| w.ends_with('/') && indent <= 2) else { continue };
        let first = first.trim_end_matches('/');
        if indent == 0 {
            parent = first.to_string();
            out.push(parent.clone());
        } else {
            out.push(format!("{parent}/{first}"));
        }
    }
    out
}

#[test]
fn the_architecture_page_draws_every_crate_folder_there_is() {
    let page = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let tree = layout_tree(&page);
    assert!(tree.contains(&"harness/host".to_string()) && tree.contains(&"common".to_string()), "{tree:?}");
    for entry in tree.iter().filter(|e| !e.contains('<') && *e != "board") {
        assert!(repo().join(entry).exists(), "docs/architecture.md draws {entry}/, which the repository does not hold");
    }
    let named = |c: &str| {
        let (parent, name) = c.rsplit_once('/').unwrap_or(("", c));
        tree.iter()
            .any(|e| e == c || *e == format!("{parent}/<name>") || (*e == parent && mentions(&page, parent, name)))
    };
    let missing: Vec<String> = crate_folders().into_iter().filter(|c| !named(c)).collect();
    assert!(missing.is_empty(), "docs/architecture.md's layout tree does not name these crate folders: {missing:?}");
}

/// Whether the tree's line for `parent` (a group folder whose crates it
/// lists in words, as `plugins/lib/`) names `name`.
fn mentions(page: &str, parent: &str, name: &str) -> bool {
    let leaf = parent.rsplit('/').next().unwrap_or(parent);
    let mut lines = page.lines().skip_while(|l| l.split_whitespace().next() != Some(&format!("{leaf}/")));
    let Some(first) = lines.next() else { return false };
    let text: String =
        std::iter::once(first).chain(lines.take_while(|l| l.starts_with("      "))).collect::<Vec<_>>().join(" ");
    text.split(|c: char| !(c.is_alphanumeric() || c == '-')).any(|w| w == name)
}

/// Every `.rs` file of the repository's crates, relative, with its text.
fn sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![repo()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if kind.is_dir() && ![".git", "target", "node_modules", "vendor"].iter().any(|s| name == *s) {
                dirs.push(e.path());
            } else if kind.is_file() && e.path().extension().is_some_and(|x| x == "rs") {
                out.push((relative(&e.path()), std::fs::read_to_string(e.path()).unwrap_or_default()));
            }
        }
    }
    out
}

#[test]
fn a_hand_over_file_is_named_only_where_it_is_defined() {
    let home = "common/record/src/handover.rs";
    let definition = std::fs::read_to_string(repo().join(home)).unwrap();
    // The names, as the one definition writes them.
    let names: Vec<String> = definition
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const ")?.split('"').nth(1).map(|n| format!("\"{n}\"")))
        .collect();
    assert!(names.len() >= 8 && names.contains(&"\"selection.json\"".to_string()), "{names:?}");
    let elsewhere: Vec<String> = sources()
        .into_iter()
        .filter(|(path, _)| path != home)
        .flat_map(|(path, text)| {
            names.iter().filter(|n| text.contains(n.as_str())).map(move |n| format!("{path}: {n}")).collect::<Vec<_>>()
        })
        .collect();
    assert!(elsewhere.is_empty(), "name them by sparktest_record::handover::file: {elsewhere:?}");
}

/// The host crate's floors as its `lib.rs` declares them, from the
/// ground up: each run of consecutive `mod` lines is one floor (rustfmt
/// keeps each in name order).
fn host_floors(lib: &str) -> Vec<Vec<String>> {
    let mut floors: Vec<Vec<String>> = vec![Vec::new()];
    for line in lib.lines() {
        match line.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            Some(m) => floors.last_mut().unwrap().push(m.to_string()),
            None if !floors.last().unwrap().is_empty() => floors.push(Vec::new()),
            None => {}
        }
    }
    floors.retain(|f| !f.is_empty());
    floors
}

/// The names a source imports through the crate root (`crate::x`,
/// `crate::{x, y::{z}}` over any lines), each with its line; comments are
/// not read.
fn through_the_root(text: &str) -> Vec<(usize, String)> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].chars().next_back().is_some_and(ident) {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.push((line, rest.chars().take_while(|c| ident(*c)).collect()));
            continue;
        };
        // The group's first segments: the names right after its `{` or a
        // `,` at its own depth.
        let (mut depth, mut starts) = (1, true);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => starts = true,
                c if starts && ident(c) => {
                    out.push((line, group[i..].chars().take_while(|c| ident(*c)).collect()));
                    starts = false;
                }
                _ => {}
            }
        }
    }
    out
}

/// The imports of `files` (path under the crate's `src/`, text) that do not
/// run down `floors`: to a module of its own floor or one above, to a name
/// that is no module (through `lib.rs`, as `crate::endpoint` was), and any
/// room `lib.rs` does not list. A macro exported at the root counts as
/// the module that defines it.
fn against_the_floors(floors: &[Vec<String>], files: &[(String, String)]) -> Vec<String> {
    let room = |path: &str| path.split('/').next().unwrap_or("").trim_end_matches(".rs").to_string();
    let mut floor: BTreeMap<String, usize> =
        floors.iter().enumerate().flat_map(|(i, f)| f.iter().map(move |m| (m.clone(), i))).collect();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, m) in lines.iter().enumerate().filter_map(|(i, l)| Some((i, l.strip_prefix("macro_rules! ")?))) {
            let exported = i > 0 && lines[i - 1] == "#[macro_export]";
            if let (true, Some(f)) = (exported, floor.get(&room(path)).copied()) {
                floor.entry(m.trim_end_matches(" {").to_string()).or_insert(f);
            }
        }
    }
    let mut bad = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| p != "lib.rs") {
        let Some(&mine) = floor.get(&room(path)) else {
            bad.push(format!("{path}: its room {:?} is not declared in lib.rs's floors", room(path)));
            continue;
        };
        for (line, name) in through_the_root(text).into_iter().filter(|(_, n)| *n != room(path)) {
            match floor.get(&name) {
                Some(&theirs) if theirs < mine => {}
                Some(_) => bad.push(format!("{path}:{line}: imports {name}, on its own floor or above")),
                None => bad.push(format!("{path}:{line}: imports {name} through the crate root, not from its module")),
            }
        }
    }
    bad
}

#[test]
fn every_import_inside_the_host_crate_runs_down_its_floors() {
    let src = repo().join("harness/host/src");
    let floors = host_floors(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert!(
        floors.len() > 5 && floors.iter().flatten().count() > 20 && floors[0].contains(&"error".to_string()),
        "lib.rs declares its modules one a line, a floor a group: {floors:?}"
    );
    let files: Vec<(String, String)> = sources()
        .into_iter()
        .filter_map(|(path, text)| Some((path.strip_prefix("harness/host/src/")?.to_string(), text)))
        .collect();
    assert!(files.len() > 60, "{}", files.len());
    assert_eq!(against_the_floors(&floors, &files), Vec::<String>::new());
}

#[test]
fn the_floor_rule_refuses_an_import_up_across_or_through_the_root() {
    let floors =
        host_floors("mod error;\n\n// a floor\nmod redact;\nmod tally;\n\nmod files;\n// the top\nmod board;\n");
    assert_eq!(floors, [vec!["error"], vec!["redact", "tally"], vec!["files"], vec!["board"]]);
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let ground = [
        file("redact.rs", "#[macro_export]\nmacro_rules! warn_line {\n() => {};\n}"),
        file("board/mod.rs", "macro_rules! files {\n() => {};\n}"),
        file("lib.rs", "use crate::board;"),
    ];
    let good = [
        file("board/mod.rs", "use crate::{\n    error::{Error, ErrorKind},\n    files,\n};\nuse super::x;"),
        file("board/select.rs", "crate::warn_line!(\"up\"); // crate::board::x and crate::nothing"),
        file("files.rs", "let a = sparktest_crate::x; use crate::files::y;"),
    ];
    let all: Vec<_> = ground.iter().chain(&good).cloned().collect();
    assert_eq!(against_the_floors(&floors, &all), Vec::<String>::new());
    let bad = [
        file("files.rs", "use crate::board::Selection;"),
        file("files.rs", "use crate::{error::Error,\n redact::{x, y}, board};"),
        file("error.rs", "crate::warn_line!(\"x\");"),
        file("redact.rs", "use crate::files;"),
        file("board/index.rs", "use crate::endpoint::Endpoint;"),
        file("scaffold.rs", "use crate::error::Error;"),
        file("tally.rs", "use crate::redact::Redactor;"),
    ];
    let all: Vec<_> = ground.iter().chain(&bad).cloned().collect();
    let said = against_the_floors(&floors, &all);
    assert_eq!(said.len(), bad.len(), "{said:#?}");
    assert_eq!(said[1], "files.rs:1: imports board, on its own floor or above");
}
