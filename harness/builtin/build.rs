//! Embed the built-in suites (every file of `suites/<name>/`) and the
//! prebuilt instrument and reporter components (`components/*.wasm.xz`,
//! each decompressed and checked against its pin in
//! `components/components.toml`: a component changed by hand does not
//! build).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn files_under(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("failed to read {}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, base, out);
        } else {
            out.push(p.strip_prefix(base).expect("below its base").to_path_buf());
        }
    }
}

/// `components/components.toml`: the pins of the built-in components. It
/// is read here alone; the binary and the tests read what this build
/// compiled in (`sparktest_builtin::COMPONENTS`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Pins {
    #[serde(default)]
    component: Vec<Pin>,
}

/// One `[[component]]`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    package: String,
    file: String,
    sha256: String,
    interface: String,
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=suites");
    println!("cargo:rerun-if-changed=components");
    let mut code = String::from("/// The built-in suites, by name.\npub static SUITES: &[Suite] = &[\n");
    let suites = root.join("suites");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&suites)
        .expect("the suites folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.join("suite.toml").is_file())
        .collect();
    names.sort();
    for dir in &names {
        let name = dir.file_name().and_then(|n| n.to_str()).expect("a suite folder named in UTF-8");
        let mut files = Vec::new();
        files_under(dir, dir, &mut files);
        let _ = writeln!(code, "    Suite {{ name: {name:?}, files: &[");
        for f in files {
            let rel = f.to_str().expect("a suite file named in UTF-8").replace('\\', "/");
            let abs = dir.join(&f);
            let _ = writeln!(code, "        ({rel:?}, include_bytes!({:?})),", abs.display().to_string());
        }
        let _ = writeln!(code, "    ] }},");
    }
    code.push_str("];\n\n/// The built-in components, by package.\npub static COMPONENTS: &[Component] = &[\n");
    let pins = root.join("components/components.toml");
    let text = std::fs::read_to_string(&pins).unwrap_or_default();
    let Pins { component } =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: not a list of [[component]] pins: {e}", pins.display()));
    for Pin { package, file, sha256, interface } in component {
        // Kept compressed (xz): the components are most of the package.
        let path = root.join("components").join(format!("{file}.xz"));
        let packed = std::fs::read(&path).unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
        let mut bytes = Vec::new();
        lzma_rs::xz_decompress(&mut &packed[..], &mut bytes)
            .unwrap_or_else(|e| panic!("{} is not an xz file: {e:?}", path.display()));
        let actual = hex(&bytes);
        if actual != sha256 {
            panic!(
                "component {} does not match its pin in {} (pinned sha256 {sha256}, found {actual}): a built-in \
                 component is built from this checkout's source, never changed by hand; rebuild them with \
                 `SPARKTEST_REFRESH_COMPONENTS=1 cargo test --test integration components::`",
                path.display(),
                pins.display()
            );
        }
        let _ = writeln!(
            code,
            "    Component {{ package: {package:?}, file: {file:?}, sha256: {sha256:?}, interface: {interface:?}, packed: include_bytes!({:?}) }},",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("builtin.rs");
    std::fs::write(&out, code).expect("failed to write the generated list");
}
