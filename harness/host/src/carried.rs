//! The built-in suites and components ([`sparktest_builtin`]) as files the
//! rest of the harness reads: a built-in suite is written once into the
//! user's cache (`~/.cache/sparktest/suites/<name>-<version>-<digest>/`) and checked
//! against the binary's bytes on every use; a built-in component is written
//! content-addressed (`components/<sha256>.wasm`) and loaded only by its
//! pin. Nothing here needs a source tree or a `wasm32-wasip2` target.
//!
//! In cargo-sparktest's own source tree the suites and instruments are
//! the tree's: a suite under the project's `suites/` shadows a built-in of
//! its name, and an instrument crate of the workspace this binary was built
//! from is built from source ([`crate::plugin::component_for`]).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
pub use sparktest_builtin::{BOARD, COMPONENTS, Component, SUITES, Suite};

use crate::error::{Error, ErrorKind};
use crate::files::sha256_hex;

/// A digest of a built-in suite's files: names and bytes.
fn digest(s: &Suite) -> String {
    let mut h = Sha256::new();
    for (rel, bytes) in s.files {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(sha256_hex(bytes).as_bytes());
        h.update([b'\n']);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a folder holds exactly a built-in suite's bytes (every file of
/// it; other files are ignored).
fn holds(dir: &Path, s: &Suite) -> bool {
    s.files.iter().all(|(rel, bytes)| std::fs::read(dir.join(rel)).is_ok_and(|b| b == *bytes))
}

/// Write `files` into a new folder `dir` whole or not at all: a temporary
/// folder beside it, then one rename (another process may be reading it,
/// or writing the same).
fn write_folder(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), Error> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(format!("create {}", parent.display()), e))?;
    let tmp = parent.join(format!(
        ".{}.{}.{}.tmp",
        dir.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    let written = files.iter().try_for_each(|(rel, bytes)| {
        let path = tmp.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::write(path, bytes)
    });
    let placed = written.and_then(|()| {
        if dir.exists() {
            // A damaged copy goes; a good one another run put there stays.
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::rename(&tmp, dir)
    });
    if let Err(e) = placed {
        let _ = std::fs::remove_dir_all(&tmp);
        if !dir.is_dir() {
            return Err(Error::io(format!("write {}", dir.display()), e));
        }
    }
    Ok(())
}

/// The folder of a built-in suite in the user's cache, written there if it
/// is missing or does not hold the binary's bytes (a damaged or edited
/// copy is written again, never used).
pub fn suite_dir(s: &Suite) -> Result<PathBuf, Error> {
    suite_dir_in(&crate::files::user_cache(), s)
}

fn suite_dir_in(cache: &Path, s: &Suite) -> Result<PathBuf, Error> {
    let dir = cache.join("suites").join(format!("{}-{}-{}", s.name, env!("CARGO_PKG_VERSION"), &digest(s)[..12]));
    if !holds(&dir, s) {
        write_folder(&dir, s.files)?;
        if !holds(&dir, s) {
            return Err(Error::new(
                ErrorKind::Io,
                format!("the built-in suite {} written to {} does not read back as written", s.name, dir.display()),
            ));
        }
    }
    Ok(dir)
}

/// Whether a project's suite folder holds the same files as the built-in
/// suite of its name: then it is not said to shadow it.
pub fn same_as(dir: &Path, s: &Suite) -> bool {
    holds(dir, s)
}

/// A built-in component as a file, `components/<sha256>.wasm` in the
/// user's cache, and its pin: written if it is missing or damaged; the
/// host loads it only if its bytes match the pin.
pub fn component_file(c: &Component) -> Result<(PathBuf, String), Error> {
    component_file_in(&crate::files::user_cache(), c)
}

fn component_file_in(cache: &Path, c: &Component) -> Result<(PathBuf, String), Error> {
    let dir = cache.join("components");
    let path = dir.join(format!("{}.wasm", c.sha256));
    if std::fs::read(&path).is_ok_and(|b| sha256_hex(&b) == c.sha256) {
        return Ok((path, c.sha256.to_string()));
    }
    let bytes = c.bytes();
    let actual = sha256_hex(&bytes);
    if actual != c.sha256 {
        // Not this build's own bytes: never loaded, whatever they are.
        return Err(Error::new(
            ErrorKind::Plugin,
            format!(
                "the built-in component {} does not match its pin (pinned sha256 {}, found {actual}): this \
                 binary is damaged; install cargo-sparktest again",
                c.package, c.sha256
            ),
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
    crate::files::replace(&path, &bytes).map_err(|e| Error::io(format!("write {}", path.display()), e))?;
    Ok((path, c.sha256.to_string()))
}

/// The built-in component of a crate, when this binary carries one.
pub fn component(package: &str) -> Option<&'static Component> {
    sparktest_builtin::component(package)
}

/// The built-in suite of a name.
pub fn suite(name: &str) -> Option<&'static Suite> {
    sparktest_builtin::suite(name)
}

/// What a rebuild from source found against the pinned components: one
/// line per component that differs, is missing or was never built, naming
/// it. Empty when every pin is what the source builds.
pub fn compare(built: &[(String, String)], pinned: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (package, sha) in built {
        match pinned.iter().find(|(p, _)| p == package) {
            None => problems.push(format!("{package}: built from source but not among the built-in components")),
            Some((_, pin)) if pin != sha => problems.push(format!(
                "{package}: the built-in component is stale or was changed by hand (pinned sha256 {pin}, this \
                 source builds {sha})"
            )),
            Some(_) => {}
        }
    }
    for (package, _) in pinned {
        if !built.iter().any(|(p, _)| p == package) {
            problems.push(format!("{package}: pinned as a built-in component but no built-in suite uses it"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_is_written_once_and_a_damaged_copy_again() {
        let cache = tempfile::tempdir().unwrap();
        let s = suite("smoke").expect("smoke is built in");
        let dir = suite_dir_in(cache.path(), s).unwrap();
        assert!(dir.join("suite.toml").is_file());
        let again = suite_dir_in(cache.path(), s).unwrap();
        assert_eq!(dir, again);
        // A copy edited in the cache is not used: written again.
        std::fs::write(dir.join("suite.toml"), "[suite]\nname = \"smoke\"\nversion = \"evil\"\n").unwrap();
        let fixed = suite_dir_in(cache.path(), s).unwrap();
        assert_eq!(std::fs::read(fixed.join("suite.toml")).unwrap(), s.file("suite.toml").unwrap());
    }

    #[test]
    fn a_component_is_content_addressed_and_a_damaged_file_written_again() {
        let cache = tempfile::tempdir().unwrap();
        let Some(c) = COMPONENTS.first() else { return };
        let (path, pin) = component_file_in(cache.path(), c).unwrap();
        assert_eq!(pin, c.sha256);
        assert!(path.ends_with(format!("{}.wasm", c.sha256)));
        std::fs::write(&path, b"not a component").unwrap();
        let (again, _) = component_file_in(cache.path(), c).unwrap();
        assert_eq!(std::fs::read(again).unwrap(), c.bytes());
    }

    #[test]
    fn a_stale_or_hand_changed_component_is_named() {
        let pinned =
            vec![("sparktest-speed".to_string(), "aa".repeat(32)), ("sparktest-board".into(), "bb".repeat(32))];
        assert!(compare(&pinned, &pinned).is_empty());
        let rebuilt =
            vec![("sparktest-speed".to_string(), "cc".repeat(32)), ("sparktest-board".into(), "bb".repeat(32))];
        let said = compare(&rebuilt, &pinned);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("sparktest-speed: the built-in component is stale or was changed by hand"));
        let missing = compare(&rebuilt[1..], &pinned);
        assert!(missing.iter().any(|m| m.contains("sparktest-speed: pinned") && m.contains("no built-in suite")));
        let extra = compare(&[("sparktest-new".into(), "dd".repeat(32))], &[]);
        assert!(extra[0].contains("not among the built-in components"));
    }
}
