//! Process exit codes of `cargo sparktest`.

/// Every case passed (or was not applicable).
pub const OK: i32 = 0;
/// The command line could not be parsed (clap's and libtest's code).
pub const USAGE: i32 = 2;
/// The project configuration or a suite is invalid, or its data do not
/// match their pins.
pub const SETUP: i32 = 3;
/// The target could not be launched or reached, or it serves another
/// model than the target names.
pub const TARGET: i32 = 4;
/// An instrument could not be built, loaded or listed.
pub const PLUGIN: i32 = 5;
/// A measurement file could not be written.
pub const IO: i32 = 6;
/// At least one case failed or was lost (libtest's code).
pub const CASES_FAILED: i32 = 101;
/// `diff --fail-on regression`: a row changed beyond run-to-run
/// variation for the worse. The check failed, so libtest's code.
pub const REGRESSION: i32 = 101;
