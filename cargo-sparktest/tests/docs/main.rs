//! The README and the book (`docs/`, an mdBook) checked offline: every
//! relative link and `#anchor` resolves, the README stays two screens with
//! the quick start as its first code block, the command-line reference is
//! the commands' own help (a unit test of the binary), and every command
//! they show either runs here with its output checked (```console blocks,
//! run by trycmd) or is marked as needing a server (```sh needs-server),
//! which the end-to-end tests cover.
//!
//! Its own test binary: trycmd runs a page's commands in the process's
//! current folder, which these tests set to a scratch folder per page.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The markdown a reader of the repository or the book meets: the README,
/// every page of the book, and the READMEs of the crates and suites.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut out = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    for folder in ["cargo-sparktest", "harness", "common", "plugins/lib", "suites", "examples"] {
        let mut stack = vec![root.join(folder)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() && !path.is_symlink() && name != "target" && name != "tests" {
                    stack.push(path);
                } else if name == "README.md" && !path.is_symlink() {
                    out.push(path);
                }
            }
        }
    }
    out.sort();
    out
}

/// How the book names a file of the repository (`blob` for a file, `tree`
/// for a folder).
const REPOSITORY_FILES: [&str; 2] = [
    "https://github.com/cargo-sparktest/cargo-sparktest/blob/main/",
    "https://github.com/cargo-sparktest/cargo-sparktest/tree/main/",
];

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH
}

/// A heading's anchor as GitHub and mdBook make it (mdBook's
/// `normalize_id`): lowercase, whitespace to `-`, every character but
/// letters, digits, `-` and `_` dropped; a repeated one gets `-1`, `-2` …
fn slug(text: &str) -> String {
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// Every anchor a markdown file offers.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_default();
                out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
                *n += 1;
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                // <a id="…"></a> and <span id="…">: explicit anchors.
                for part in h.split("id=\"").skip(1) {
                    if let Some(id) = part.split('"').next() {
                        out.insert(id.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Every link and image target in a markdown file, with its line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        let dest = match event {
            Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. }) => {
                dest_url.to_string()
            }
            _ => continue,
        };
        let line = text[..range.start].lines().count().max(1);
        out.push((line, dest));
    }
    out
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What is wrong with the links of these files: `file:line: why` each.
fn broken_links(files: &[PathBuf]) -> Vec<String> {
    let root = repo();
    let mut anchor_cache: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for (line, dest) in links(&text) {
            // The book links to the repository's files by their address on
            // its host (a relative link would leave the built book): the
            // file must be in this checkout.
            let in_repo = REPOSITORY_FILES.iter().find_map(|p| dest.strip_prefix(p));
            if in_repo.is_none() && (dest.contains("://") || dest.starts_with("mailto:")) {
                continue;
            }
            let (path, anchor) = match in_repo.unwrap_or(&dest).split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (in_repo.unwrap_or(&dest), None),
            };
            let target = match in_repo {
                Some(_) => normalize(&root.join(path)),
                None if path.is_empty() => file.clone(),
                None => normalize(&file.parent().unwrap().join(path)),
            };
            let docs = root.join("docs");
            if in_repo.is_none() && file.starts_with(&docs) && !target.starts_with(&docs) {
                broken.push(format!(
                    "{shown}:{line}: {dest} leaves the book: link to {}{} instead",
                    REPOSITORY_FILES[0],
                    target.strip_prefix(&root).unwrap_or(&target).display()
                ));
                continue;
            }
            if target.file_name().is_some_and(|n| n == "README.md") && target.starts_with(&docs) {
                broken.push(format!(
                    "{shown}:{line}: {dest}: mdBook publishes a README.md as index.html; name it index.md"
                ));
                continue;
            }
            if !target.starts_with(&root) {
                broken.push(format!("{shown}:{line}: {dest} leaves the repository"));
                continue;
            }
            if !target.exists() {
                broken.push(format!("{shown}:{line}: {dest}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                if target.extension().is_none_or(|e| e != "md") {
                    continue;
                }
                let offered = anchor_cache
                    .entry(target.clone())
                    .or_insert_with(|| anchors(&std::fs::read_to_string(&target).unwrap_or_default()));
                if !offered.contains(anchor) {
                    broken.push(format!("{shown}:{line}: {dest}: no heading gives #{anchor}"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_link_and_anchor_of_the_readme_and_the_book_resolves_offline() {
    let files = documents();
    assert!(files.len() > 40, "found only {} markdown files", files.len());
    let broken = broken_links(&files);
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_anchor() {
    let dir = tempfile::tempdir_in(repo().join("target")).unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# A page\n\n## Its part\n\n[fine](#its-part) [gone](#no-part) [missing](nowhere.md) \
         [elsewhere](page.md#a-page) [web](https://example.com/x#y) \
         [code](https://github.com/cargo-sparktest/cargo-sparktest/blob/main/Cargo.toml) \
         [no code](https://github.com/cargo-sparktest/cargo-sparktest/blob/main/no/such.rs) \
         [no part](https://github.com/cargo-sparktest/cargo-sparktest/blob/main/README.md#no-such-part)\n",
    )
    .unwrap();
    let broken = broken_links(std::slice::from_ref(&page));
    assert_eq!(broken.len(), 4, "{broken:?}");
    assert!(broken[0].ends_with("#no-part: no heading gives #no-part"), "{broken:?}");
    assert!(broken[1].ends_with("nowhere.md: no such file"), "{broken:?}");
    assert!(broken[2].ends_with("no/such.rs: no such file"), "{broken:?}");
    assert!(broken[3].ends_with("no heading gives #no-such-part"), "{broken:?}");
}

#[test]
fn anchors_are_made_as_github_and_mdbook_make_them() {
    let text = "# The board\n## Comparing runs: `diff`\n## Exit codes\n## Exit codes\n## A-Bench (60 tasks)\n";
    let a = anchors(text);
    for want in ["the-board", "comparing-runs-diff", "exit-codes", "exit-codes-1", "a-bench-60-tasks"] {
        assert!(a.contains(want), "{want} not in {a:?}");
    }
}

/// Every page the book's SUMMARY.md names exists, and every page of the
/// book is named there (mdBook would build without an unlisted page, and
/// nobody would find it).
#[test]
fn the_book_s_summary_names_every_page_and_only_pages_that_exist() {
    let docs = repo().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary).into_iter().map(|(_, d)| normalize(&docs.join(d))).collect();
    for page in &listed {
        assert!(page.is_file(), "SUMMARY.md names {} which does not exist", page.display());
    }
    for file in documents().into_iter().filter(|f| f.starts_with(&docs)) {
        if file.file_name().is_some_and(|n| n == "SUMMARY.md") {
            continue;
        }
        assert!(listed.contains(&file), "{} is not in docs/SUMMARY.md", file.display());
    }
}

/// The numbered list at the head of the book's "Adding a board row": the
/// places a built-in row of a declared kind touches.
fn places_of_a_new_row() -> Vec<String> {
    let book = std::fs::read_to_string(repo().join("docs/instruments.md")).unwrap();
    let section = book.split("\n## Adding a board row\n").nth(1).expect("the section").split("\n## ").next().unwrap();
    let list: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("1. "))
        .take_while(|l| !l.is_empty())
        .filter(|l| l.split_once(". ").is_some_and(|(n, _)| n.parse::<u32>().is_ok()))
        .collect();
    list.iter().map(|l| l.split('`').nth(1).unwrap_or_default().to_string()).collect()
}

#[test]
fn adding_a_board_row_in_the_book_is_three_places_the_tree_has() {
    let places = places_of_a_new_row();
    assert_eq!(
        places,
        ["plugins/instruments/<name>/", "suites/<suite>/suite.toml", "docs/suites/<suite>.md"],
        "the book's list"
    );
    let root = repo();
    // 1. Every crate in plugins/instruments/ is a workspace member.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("\"plugins/instruments/*\""), "the workspace takes every instrument crate");
    // 2. Every built-in suite is a suite.toml there, and a suite may declare rows.
    let suites: Vec<String> = std::fs::read_dir(root.join("suites"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("suite.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(suites.len() > 10, "{suites:?}");
    for s in &suites {
        let loaded = sparktest_harness::load_suite(&root.join("suites").join(s).join("suite.toml"));
        assert!(loaded.is_ok(), "suites/{s}: {:?}", loaded.err());
    }
    // The board's suites are read from the suites' files: each names one.
    let named = sparktest_harness::board_suites();
    assert!(named.len() > 10 && named.iter().all(|n| suites.iter().any(|s| s == n)), "{named:?}");
    // 3. Each built-in suite on the board has its page, in the SUMMARY and the index.
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let index = std::fs::read_to_string(root.join("docs/suites/index.md")).unwrap();
    for n in &named {
        let page = format!("suites/{n}.md");
        assert!(root.join("docs").join(&page).is_file(), "docs/{page}");
        assert!(summary.contains(&page), "SUMMARY.md names {page}");
        assert!(index.contains(&format!("({n}.md")), "the suites index links {page}");
    }
}

/// The repository paths a text names in code spans (`harness/host/src/…`),
/// each with its line; placeholders (`<name>`) and globs are left out.
fn repository_paths(text: &str) -> Vec<(usize, String)> {
    let tops = ["cargo-sparktest/", "harness/", "common/", "plugins/", "suites/", "scripts/", "snapshots/"];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (k, span) in line.split('`').enumerate() {
            let path = span.split_whitespace().next().unwrap_or_default().trim_end_matches([',', ':', '.', ')']);
            let named = k % 2 == 1 && tops.iter().any(|t| path.starts_with(t));
            if named && !path.contains(['<', '*', '{', '$']) {
                out.push((i + 1, path.split(['#', ':']).next().unwrap_or(path).to_string()));
            }
        }
    }
    out
}

#[test]
fn every_repository_path_the_book_names_is_in_the_tree() {
    // The changelog and the benchmark history name files as they were.
    let history = ["changelog.md", "benchmarks.md"];
    let mut missing = Vec::new();
    let mut seen = 0;
    for doc in documents().iter().filter(|d| !history.iter().any(|h| d.ends_with(h))) {
        let text = std::fs::read_to_string(doc).unwrap();
        for (line, path) in repository_paths(&text) {
            seen += 1;
            if !repo().join(&path).exists() {
                missing.push(format!("{}:{line}: {path}", doc.strip_prefix(repo()).unwrap().display()));
            }
        }
    }
    assert!(seen > 50, "paths named: {seen}");
    assert!(missing.is_empty(), "the book names paths the tree does not hold: {missing:#?}");
}

#[test]
fn the_path_finder_reads_code_spans_and_leaves_placeholders() {
    let text = "see `harness/host/src/runner/` and `plugins/instruments/<name>/src/lib.rs`,\n`common/rows/src/coded/mod.rs:12` or `cargo sparktest`";
    assert_eq!(
        repository_paths(text),
        [(1, "harness/host/src/runner/".to_string()), (2, "common/rows/src/coded/mod.rs".to_string())]
    );
}

#[test]
fn the_readme_is_two_screens_and_opens_with_the_quick_start() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(lines <= 200, "README.md is {lines} lines: its detail belongs in the book (docs/)");
    let first_code = Parser::new_ext(&text, options())
        .scan(false, |inside, e| {
            Some(match e {
                Event::Start(Tag::CodeBlock(_)) => {
                    *inside = true;
                    None
                }
                Event::Text(t) if *inside => Some(t.to_string()),
                _ => None,
            })
        })
        .flatten()
        .next()
        .unwrap_or_default();
    assert!(
        first_code.contains("cargo sparktest --suite a-bench") && first_code.contains("cargo nextest run --workspace"),
        "the README's first code block is not the two-command quick start:\n{first_code}"
    );
    let headings: Vec<String> = Parser::new_ext(&text, options())
        .scan(None::<String>, |h, e| {
            Some(match e {
                Event::Start(Tag::Heading { level: HeadingLevel::H2, .. }) => {
                    *h = Some(String::new());
                    None
                }
                Event::Text(t) if h.is_some() => {
                    h.as_mut().unwrap().push_str(&t);
                    None
                }
                Event::End(TagEnd::Heading(HeadingLevel::H2)) => h.take(),
                _ => None,
            })
        })
        .flatten()
        .collect();
    assert!(headings.iter().any(|h| h.contains("Across boxes")), "README has no 'Across boxes' section: {headings:?}");
}

/// A shell block names how it is checked: ```console blocks run here
/// (trycmd), ```sh needs-server blocks need a server, a GPU, a cluster or
/// the network. A plain ```sh block showing `cargo sparktest` is neither.
#[test]
fn every_command_shown_is_run_here_or_marked_as_needing_a_server() {
    let mut unmarked = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lang: Option<String> = None;
        for (event, range) in Parser::new_ext(&text, options()).into_offset_iter() {
            match event {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                    if info.trim().is_empty() {
                        // trycmd takes a fence with no language for one of
                        // its own, and fails the page on its first line.
                        let line = text[..range.start].lines().count() + 1;
                        let at = file.strip_prefix(repo()).unwrap().display();
                        unmarked.push(format!("{at}:{line}: a fence with no language (```text, ```sh …)"));
                    }
                    lang = Some(info.to_string());
                }
                Event::End(TagEnd::CodeBlock) => lang = None,
                Event::Text(t) => {
                    let Some(info) = lang.as_deref() else { continue };
                    let kind = info.split([',', ' ']).next().unwrap_or_default();
                    let marked = info.contains("needs-server");
                    let shell = matches!(kind, "sh" | "bash" | "shell" | "");
                    let line = text[..range.start].lines().count() + 1;
                    let at = format!("{}:{line}", file.strip_prefix(repo()).unwrap().display());
                    if shell && !marked && t.lines().any(|l| l.trim_start().starts_with("cargo sparktest")) {
                        unmarked.push(at);
                    } else if kind == "console" {
                        // trycmd passes over a program it cannot find: a
                        // command here is this binary's, or it is not run.
                        for l in t.lines().filter(|l| l.starts_with("$ ")) {
                            if !l.starts_with("$ cargo sparktest") {
                                unmarked.push(format!("{at}: `{l}` is not `cargo sparktest`: trycmd would skip it"));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    assert!(
        unmarked.is_empty(),
        "blocks that show `cargo sparktest` but are neither ```console (run by the doc tests) nor \
         ```sh needs-server:\n{}",
        unmarked.join("\n")
    );
}

/// The current folder is the process's: one page at a time.
static CWD: Mutex<()> = Mutex::new(());

/// A folder as a user's would be: no `sparktest.toml`, the repository's
/// `examples/` copied in (the campaign file, the bundled measurement files,
/// the example instrument), so a page's `examples/…` paths read as they do
/// from a checkout.
fn scratch() -> tempfile::TempDir {
    // Outside the repository: a project is found by walking up.
    let dir = tempfile::tempdir().unwrap();
    assert!(dir.path().ancestors().all(|d| !d.join("sparktest.toml").exists() && !d.join("Cargo.toml").exists()));
    copy_tree(&repo().join("examples"), &dir.path().join("examples"));
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// trycmd with `cargo` meaning this build's binary: `$ cargo sparktest
/// --help` runs `cargo-sparktest sparktest --help`, as cargo would.
fn cases() -> trycmd::TestCases {
    let t = trycmd::TestCases::new();
    t.register_bin("cargo", Path::new(env!("CARGO_BIN_EXE_cargo-sparktest")))
        .env("NO_COLOR", "1")
        .timeout(std::time::Duration::from_secs(120));
    t
}

/// The pages with a ```console block.
fn pages_with_commands() -> Vec<PathBuf> {
    documents()
        .into_iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().lines().any(|l| l.starts_with("```console")))
        .collect()
}

/// Run one page's commands in a fresh scratch folder; a page whose output
/// differs panics, as trycmd does.
fn run_page(page: &Path) {
    let dir = scratch();
    std::env::set_current_dir(dir.path()).unwrap();
    cases().case(page).run();
}

#[test]
fn the_commands_the_readme_and_the_book_show_run_as_shown() {
    let _one = CWD.lock().unwrap_or_else(|e| e.into_inner());
    let pages = pages_with_commands();
    assert!(pages.len() >= 5, "only {} pages show commands that run here: {pages:?}", pages.len());
    for page in pages {
        eprintln!("docs: {}", page.strip_prefix(repo()).unwrap().display());
        run_page(&page);
    }
}

/// The check can fail: a page whose shown output no longer matches what
/// the command prints fails the run.
#[test]
fn a_changed_output_in_a_page_fails_its_run() {
    if std::env::var_os("TRYCMD").is_some() {
        return; // overwrite mode would write the change back
    }
    let _one = CWD.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let shown = "$ cargo sparktest --version\ncargo-sparktest ";
    assert!(text.contains(shown), "the README no longer shows `cargo sparktest --version` as this test expects");
    let dir = tempfile::tempdir_in(repo().join("target")).unwrap();
    let changed = dir.path().join("README.md");
    std::fs::write(&changed, text.replacen(shown, "$ cargo sparktest --version\ncargo-sparktest-renamed ", 1)).unwrap();
    let failed = std::panic::catch_unwind(|| run_page(&changed));
    let why = failed.expect_err("the README with one shown output changed still passed");
    let said = why.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(said.contains("failed"), "{said}");
}

/// mdBook builds the book with no warning (scripts/book.sh installs the
/// pinned mdBook once per machine when it is missing, and denies warnings).
#[test]
fn the_book_builds_with_warnings_denied() {
    let out =
        std::process::Command::new("bash").arg(repo().join("scripts/book.sh")).current_dir(repo()).output().unwrap();
    assert!(
        out.status.success(),
        "scripts/book.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(repo().join("target/book/suites/sustained-load.html").is_file());
}
