//! Snapshots through insta, from a non-test binary.
//!
//! insta's settings are thread-local, so they are bound inside every case;
//! paths are absolute; the diff never goes to stdout (it would land inside
//! libtest's output); a mismatch is caught, not propagated as a panic.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// What became of one snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotStatus {
    /// Same as the stored one.
    Match,
    /// None was stored: this one is now the baseline.
    New,
    /// Differs from the stored one; a `.snap.new` waits for
    /// `cargo insta review`.
    Changed,
}

impl SnapshotStatus {
    /// The word used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotStatus::Match => "match",
            SnapshotStatus::New => "new",
            SnapshotStatus::Changed => "changed",
        }
    }
}

/// Set insta's process-wide environment. Call once, before any thread runs a
/// case: insta reads these on first use.
pub fn init(project_root: &Path) {
    // SAFETY: called from main before the runner starts any thread.
    unsafe {
        std::env::set_var("INSTA_WORKSPACE_ROOT", project_root);
        std::env::set_var("INSTA_OUTPUT", "none");
        if std::env::var_os("INSTA_UPDATE").is_none() {
            // A first snapshot becomes the baseline; a changed one is left
            // pending as `.snap.new`.
            std::env::set_var("INSTA_UPDATE", "unseen");
        }
        std::env::remove_var("INSTA_FORCE_PASS");
    }
    // A snapshot mismatch is a panic inside insta; it is reported as the
    // case's failure, so the panic message itself stays quiet.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_SNAPSHOT.with(Cell::get) {
            previous(info);
        }
    }));
}

thread_local! {
    static IN_SNAPSHOT: Cell<bool> = const { Cell::new(false) };
}

/// What never goes into a snapshot raw: ids, timestamps, durations and
/// rates differ between identical runs.
pub const REDACTIONS: &[(&str, &str)] = &[
    (r"\b(chatcmpl|cmpl|req|run)-[A-Za-z0-9_-]{6,}", "[id]"),
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?", "[timestamp]"),
    (r"\b\d+(\.\d+)?\s?(tok/s|tokens/s|t/s)", "[rate]"),
    (r"\b\d+(\.\d+)?\s?(ms|µs|us|ns)\b", "[duration]"),
];

/// File-name-safe form of a snapshot name.
pub fn file_stem(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Compare `content` with the stored snapshot `name` in `dir`.
pub fn check(dir: &Path, name: &str, content: &str) -> SnapshotStatus {
    let stem = file_stem(name);
    let existed = dir.join(format!("{stem}.snap")).is_file();
    let mut settings = insta::Settings::new();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_input_file(dir.join(format!("{stem}.snap")));
    for (pattern, replacement) in REDACTIONS {
        settings.add_filter(pattern, *replacement);
    }
    IN_SNAPSHOT.with(|f| f.set(true));
    let matched = settings.bind(|| {
        catch_unwind(AssertUnwindSafe(|| {
            insta::assert_snapshot!(stem.as_str(), content);
        }))
        .is_ok()
    });
    IN_SNAPSHOT.with(|f| f.set(false));
    match (existed, matched) {
        (false, _) => SnapshotStatus::New,
        (true, true) => SnapshotStatus::Match,
        (true, false) => SnapshotStatus::Changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redactions_hide_what_varies_and_keep_the_text() {
        let dir = tempfile::tempdir().unwrap();
        init(dir.path());
        let first = "id chatcmpl-OJqKKjP85NfIP at 2026-11-29T17:02:35Z took 241.3 ms at 38.2 tok/s: Paris";
        let second = "id chatcmpl-2YtEhBMaxxjcSVg at 2026-11-30T09:00:01Z took 15 ms at 80 tok/s: Paris";
        assert_eq!(check(dir.path(), "probe", first), SnapshotStatus::New);
        let stored = std::fs::read_to_string(dir.path().join("probe.snap")).unwrap();
        assert!(stored.contains("id [id] at [timestamp] took [duration] at [rate]: Paris"), "{stored}");
        assert_eq!(check(dir.path(), "probe", second), SnapshotStatus::Match);
        assert_eq!(check(dir.path(), "probe", &second.replace("Paris", "Lyon")), SnapshotStatus::Changed);
        assert!(dir.path().join("probe.snap.new").is_file());
    }
}
