//! The repository's shape (issue 49): the crates sit side by side in three
//! groups (`harness/` the host's, `plugins/` the guests', `common/` both),
//! no crate inside another, every dependency runs down the picture the
//! book's architecture page draws, no link joins two crates, and that page
//! names every crate folder there is.

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
