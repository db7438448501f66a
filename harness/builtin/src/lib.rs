//! The built-in suites and components of cargo-sparktest, shipped inside
//! the binary, so that an installed `cargo sparktest` runs every built-in
//! suite and builds the board from any folder, with no source tree and no
//! `wasm32-wasip2` target.
//!
//! - [`SUITES`]: every file of each `suites/<name>/` of the source tree,
//!   as it was when the binary was built (the suites pin their data by
//!   sha256; the harness writes a suite once into the user's cache and
//!   checks it against these bytes on every use).
//! - [`COMPONENTS`]: the instruments and the board reporter, built by this
//!   project from its own source for `wasm32-wasip2` (`--profile plugin`,
//!   paths remapped so a rebuild anywhere gives the same bytes), kept
//!   xz-compressed, each pinned by the sha256 of its bytes in
//!   `components/components.toml`. The build checks
//!   the bytes against the pins; CI rebuilds them from source and compares,
//!   so a stale or hand-changed component fails, naming it.
#![warn(missing_docs)]

/// A built-in suite: its folder's files by relative path.
#[derive(Debug)]
pub struct Suite {
    /// Its name (the folder's): `cargo sparktest --suite NAME`.
    pub name: &'static str,
    /// Every file of its folder, `suite.toml` among them, by relative path
    /// (`/`-separated), with its bytes.
    pub files: &'static [(&'static str, &'static [u8])],
}

impl Suite {
    /// A file of the suite by its relative path.
    pub fn file(&self, rel: &str) -> Option<&'static [u8]> {
        self.files.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
    }
}

/// A built-in component: a crate of this project built to WASM.
#[derive(Debug)]
pub struct Component {
    /// The crate it was built from (`sparktest-speed`): what a suite's
    /// `crate = "…"` names.
    pub package: &'static str,
    /// Its file name (`sparktest_speed.wasm`).
    pub file: &'static str,
    /// The sha256 of its bytes, as pinned.
    pub sha256: &'static str,
    /// The interface version it was built against (`0.5.0`).
    pub interface: &'static str,
    /// The component, xz-compressed.
    pub packed: &'static [u8],
}

impl Component {
    /// The component's bytes (decompressed; checked against the pin when
    /// the binary was built).
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // The build decompressed these very bytes: this cannot fail.
        let _ = lzma_rs::xz_decompress(&mut &self.packed[..], &mut out);
        out
    }
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// The package of the built-in board reporter.
pub const BOARD: &str = "sparktest-board";

/// A built-in suite by name.
pub fn suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

/// A built-in component by the crate it was built from.
pub fn component(package: &str) -> Option<&'static Component> {
    COMPONENTS.iter().find(|c| c.package == package)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_has_its_manifest_and_every_component_its_pin() {
        assert!(!SUITES.is_empty());
        for s in SUITES {
            assert!(s.file("suite.toml").is_some(), "{}", s.name);
        }
        for c in COMPONENTS {
            assert_eq!(c.sha256.len(), 64, "{}", c.package);
            assert!(c.bytes().starts_with(b"\0asm"), "{} is a WASM file", c.package);
        }
    }
}
