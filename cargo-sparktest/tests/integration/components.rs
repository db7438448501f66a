//! The built-in components are this checkout's source, built (issue 36):
//! every instrument crate a built-in suite names, and the board reporter,
//! built for `wasm32-wasip2` the way the harness builds them (paths
//! remapped, so that any machine with the same toolchain builds the same
//! bytes) and compared with the pins in
//! `harness/builtin/components/components.toml` (the files themselves are
//! kept xz-compressed beside it). A stale or hand-changed
//! component fails here, named. `SPARKTEST_REFRESH_COMPONENTS=1` writes
//! them instead (after changing an instrument, the SDK or the board).

use std::collections::BTreeSet;
use std::path::PathBuf;

use sparktest_harness::{Source, component_for, sha256_hex, trusted_workspaces};

use crate::support::*;

fn components_dir() -> PathBuf {
    repo().join("harness/builtin/components")
}

/// Every crate the built-in suites name, and the board.
fn packages() -> BTreeSet<String> {
    let mut out = BTreeSet::from(["sparktest-board".to_string()]);
    for entry in std::fs::read_dir(repo().join("suites")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("suite.toml")) else { continue };
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("crate = \"") {
                out.insert(rest.trim_end_matches('"').to_string());
            }
        }
    }
    out
}

/// The interface version a component imports (`sparktest:plugin/…@0.5.0`).
fn interface(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let at = text.find("sparktest:plugin/").expect("a sparktest component");
    let rest = &text[at..];
    let version = &rest[rest.find('@').unwrap() + 1..];
    version.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect()
}

/// `[[component]]` pins as (package, sha256): what the build read from
/// `components.toml` and compiled in (the one reader of that file).
fn pinned() -> Vec<(String, String)> {
    sparktest_harness::COMPONENTS.iter().map(|c| (c.package.to_string(), c.sha256.to_string())).collect()
}

#[test]
fn the_built_in_components_are_what_this_source_builds() {
    let repo = repo();
    let trusted = trusted_workspaces(&repo);
    let mut built = Vec::new();
    for package in packages() {
        let (path, _) = component_for(&repo.join("suites"), &Source::Crate(package.clone()), &trusted)
            .unwrap_or_else(|e| panic!("{package}: {e}"));
        built.push((package, path));
    }
    let shas: Vec<(String, String)> =
        built.iter().map(|(p, path)| (p.clone(), sha256_hex(&std::fs::read(path).unwrap()))).collect();
    if std::env::var_os("SPARKTEST_REFRESH_COMPONENTS").is_some() {
        let dir = components_dir();
        for old in std::fs::read_dir(&dir).unwrap().flatten() {
            if old.path().extension().is_some_and(|x| x == "xz") {
                std::fs::remove_file(old.path()).unwrap();
            }
        }
        let mut toml = String::from(
            "# Built by this checkout from source, never by hand:\n#   SPARKTEST_REFRESH_COMPONENTS=1 cargo test -p cargo-sparktest --test integration components::\n",
        );
        for ((package, path), (_, sha)) in built.iter().zip(&shas) {
            let bytes = std::fs::read(path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            // Kept xz-compressed (xz from Debian's xz-utils): a third of
            // the bytes, which the package and the binary carry.
            let packed = std::process::Command::new("xz")
                .args(["-9e", "--stdout", "--keep"])
                .arg(path)
                .output()
                .expect("xz (Debian's xz-utils) compresses the components");
            assert!(packed.status.success(), "xz failed on {}", path.display());
            std::fs::write(dir.join(format!("{file}.xz")), &packed.stdout).unwrap();
            toml.push_str(&format!(
                "\n[[component]]\npackage = \"{package}\"\nfile = \"{file}\"\nsha256 = \"{sha}\"\ninterface = \"{}\"\n",
                interface(&bytes)
            ));
        }
        std::fs::write(dir.join("components.toml"), toml).unwrap();
        eprintln!("wrote {} built-in components into {}", built.len(), dir.display());
        return;
    }
    let problems = sparktest_harness::compare_components(&shas, &pinned());
    assert!(
        problems.is_empty(),
        "the built-in components are not what this source builds; rebuild them with \
         `SPARKTEST_REFRESH_COMPONENTS=1 cargo test -p cargo-sparktest --test integration components::` \
         and commit them:\n{}",
        problems.join("\n")
    );
}
