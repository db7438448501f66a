//! What an installed CLI writes for its users: `cargo sparktest new
//! instrument NAME` (an instrument author's crate, built against the
//! published SDK by version, and a suite that pins its component),
//! `cargo sparktest init` (a commented `sparktest.toml`), `cargo sparktest
//! pin SUITE` (every sha256 of a suite written from the files as they
//! are), and `--version --verbose`.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files::sha256_hex;

/// The SDK version a new instrument depends on: this CLI's own.
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Write a new instrument crate `name` into `dir` (which must not exist):
/// a crate that builds a component against `sparktest-sdk` by version, a
/// suite beside it (the crate folder is the suite folder) whose data file
/// is pinned and whose component is pinned by [`pin`] once built. Returns
/// what to do next, in words.
pub fn new_instrument(dir: &Path, name: &str) -> Result<String, Error> {
    if let Some(why) = name_refusal(name) {
        return Err(Error::setup(format!("new instrument: {name:?}: {why}")));
    }
    let camel = type_name(name);
    if dir.exists() {
        return Err(Error::setup(format!("new instrument: {} already exists; give a new folder", dir.display())));
    }
    let lib = name.replace('-', "_");
    let words = "[\"hello\", \"sparktest\", \"wasm\"]\n";
    let files: Vec<(&str, String)> = vec![
        ("Cargo.toml", CARGO_TOML.replace("{name}", name).replace("{sdk}", SDK_VERSION)),
        ("src/lib.rs", LIB_RS.replace("{name}", name).replace("{type}", &camel)),
        ("data/words.json", words.to_string()),
        (
            "suite.toml",
            SUITE_TOML.replace("{name}", name).replace("{lib}", &lib).replace("{words}", &sha256_hex(words.as_bytes())),
        ),
        (".gitignore", "/target\n".to_string()),
        ("README.md", README_MD.replace("{name}", name).replace("{lib}", &lib).replace("{sdk_patch}", &sdk_patch())),
    ];
    for (rel, text) in &files {
        let path = dir.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| Error::io(format!("create {}", p.display()), e))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::io(format!("write {}", path.display()), e))?;
    }
    Ok(format!(
        "wrote instrument crate {name} in {dir}; next:\n  cd {dir}\n  cargo build --target wasm32-wasip2 --release   \
         # rustup target add wasm32-wasip2, once\n  cargo sparktest pin .                           # writes the \
         component's sha256 into suite.toml\n  cargo sparktest --suite . --endpoint http://127.0.0.1:8000 --model MODEL\n\
         sparktest-sdk {SDK_VERSION} is taken from crates.io; to build against a local SDK instead (a checkout \
         of cargo-sparktest), add to Cargo.toml:\n  [patch.crates-io]\n  {patch}",
        dir = dir.display(),
        patch = sdk_patch()
    ))
}

/// The `[patch.crates-io]` line that points `sparktest-sdk` at a local
/// SDK: this build's own source tree when it is still there (a CLI built
/// from a checkout), else where a checkout keeps it.
fn sdk_patch() -> String {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/lib/sdk");
    let path = match std::fs::canonicalize(&sdk) {
        Ok(found) if found.join("Cargo.toml").is_file() => found.display().to_string(),
        _ => "/path/to/cargo-sparktest/plugins/lib/sdk".to_string(),
    };
    // Quoted as TOML: a path may hold a quote or a backslash.
    format!("sparktest-sdk = {{ path = {} }}", toml_edit::Value::from(path))
}

/// Rust's keywords, strict and reserved (2024 edition): none can name a
/// crate or a type.
const KEYWORDS: [&str; 52] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become",
    "box", "do", "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Crates of Rust's own, which cargo refuses as a new package's name.
const RUST_CRATES: [&str; 5] = ["std", "core", "alloc", "proc_macro", "test"];

/// The names the generated `src/lib.rs` uses beside its type: a type of
/// one of these names would shadow it and the crate would not build.
const TEMPLATE_NAMES: [&str; 13] = [
    "Case",
    "ChatRequest",
    "Config",
    "Deserialize",
    "Err",
    "Finding",
    "Info",
    "Instrument",
    "Message",
    "Ok",
    "Result",
    "String",
    "Vec",
];

/// Why `name` cannot name a new instrument, if it cannot. It names the
/// crate, its library (`-` as `_`) and its type (each word capitalised),
/// so each must be a name cargo and rustc take.
fn name_refusal(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let plain = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !plain {
        return Some(
            "a crate and instrument name is lowercase letters, digits and single '-', starting with a letter (it \
             names the crate, the component and the cases)"
                .into(),
        );
    }
    let lib = name.replace('-', "_");
    let ty = type_name(name);
    if let Some(word) = [&lib, &ty].into_iter().find(|w| KEYWORDS.contains(&w.as_str())) {
        Some(format!(
            "`{word}` is a Rust keyword (the crate would be `{lib}` and its type `{ty}`), and a keyword names no \
             crate or type"
        ))
    } else if RUST_CRATES.contains(&lib.as_str()) {
        Some(format!("`{lib}` is the name of a crate of Rust's own, which cargo refuses for a package"))
    } else if TEMPLATE_NAMES.contains(&ty.as_str()) {
        Some(format!("the crate's type would be `{ty}`, a name its src/lib.rs already uses; choose another name"))
    } else {
        None
    }
}

/// The instrument's type: each `-`-separated word capitalised.
fn type_name(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or_else(String::new, |f| f.to_ascii_uppercase().to_string() + c.as_str())
        })
        .collect()
}

const CARGO_TOML: &str = r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
# The guest SDK, by version: the interface it builds against is in its docs.
sparktest-sdk = "{sdk}"
serde = { version = "1", features = ["derive"] }
serde_json = "1"

# Small components: they are loaded, compiled once and cached by the host.
[profile.release]
opt-level = "s"
lto = true
strip = true
panic = "abort"

# A crate of its own, outside any other workspace.
[workspace]
"#;

const LIB_RS: &str = r#"//! `{name}`: asks the model to repeat each word of the suite's data file
//! and passes a case when the reply holds it. Replace `describe`, `cases`
//! and `run` with your own measurement; the host does every request and
//! keeps every clock.

use serde::Deserialize;
use sparktest_sdk::*;

struct {type};

/// The suite's `[instrument.config]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// A pinned data file of the suite: a JSON list of words.
    words: String,
}

impl Instrument for {type} {
    type Config = Config;
    type Case = String;

    fn describe() -> Info {
        Info::new("{name}", "Repeat a word ({name})", env!("CARGO_PKG_VERSION"), "Asks the model to repeat a word at temperature 0; passes when the reply holds it.")
    }

    fn cases(config: &Config) -> Result<Vec<Case<String>>, String> {
        let words: Vec<String> =
            serde_json::from_str(&read_text(&config.words)?).map_err(|e| format!("{}: {e}", config.words))?;
        Ok(words.into_iter().map(|w| Case::new(format!("word::{w}"), w)).collect())
    }

    fn run(_config: &Config, word: &String) -> Finding {
        let ask = format!("Repeat this word exactly once: {word}");
        match chat(&ChatRequest::new(vec![Message::user(&ask)]).greedy().max_tokens(16)) {
            Ok(reply) => Finding::judge(reply.text.to_lowercase().contains(word.as_str()), "the word is not in the reply"),
            // Lost stays lost and a refusal fails: never mixed.
            Err(err) => err.into(),
        }
    }
}

register_instrument!({type});
"#;

const SUITE_TOML: &str = r#"[suite]
name = "{name}"
version = "0.1.0"
description = "The {name} instrument on its words."

[[instrument]]
# The component this crate builds, pinned by its sha256: build it, then
# `cargo sparktest pin .` writes the pin (and every data file's).
wasm = "target/wasm32-wasip2/release/{lib}.wasm"
sha256 = "not pinned yet: build, then run cargo sparktest pin ."
[instrument.config]
words = "data/words.json"

[files]
"data/words.json" = "{words}"

# The board row this suite declares: the board, `diff` and the run's
# summary show it as they show the built-in rows. `figure` is one of
# pass-share, mean, median, p1 … p99 and highest (a metric's figures name
# `metric`); see the book's "Declaring a row".
[[row]]
title = "Repeat a word ({name})"
instrument = "{name}"
figure = "pass-share"
methodology = "Asks the model to repeat each word at temperature 0; the share of words repeated, with its Wilson 95% interval."
"#;

const README_MD: &str = r#"# {name}

A cargo-sparktest instrument. This folder is both its crate and its suite.

```sh
rustup target add wasm32-wasip2                     # once
cargo build --target wasm32-wasip2 --release         # target/wasm32-wasip2/release/{lib}.wasm
cargo sparktest pin .                                # the component's and data's sha256 into suite.toml
cargo sparktest --suite . --list                     # its cases
cargo sparktest --suite .                            # on the reference target (local)
cargo sparktest --suite . --endpoint http://127.0.0.1:8000 --model MODEL
```

`sparktest-sdk` comes from crates.io. To build against a local SDK instead
(a checkout of cargo-sparktest), add to `Cargo.toml`:

```toml
[patch.crates-io]
{sdk_patch}
```
"#;

/// Write a commented `sparktest.toml` into `dir` (refused where one is).
pub fn init(dir: &Path) -> Result<PathBuf, Error> {
    let path = dir.join(crate::config::CONFIG_FILE);
    if path.exists() {
        return Err(Error::setup(format!("{} already exists; it is left as it is", path.display())));
    }
    std::fs::write(&path, INIT).map_err(|e| Error::io(format!("write {}", path.display()), e))?;
    Ok(path)
}

const INIT: &str = r#"# cargo-sparktest project configuration. Every key is optional: the
# built-in defaults (`cargo sparktest --help`, the book's Targets page) apply
# where this file is silent, and the built-in targets (local, local-tools,
# local-vllm, ...) are always there.

[run]
# Where measurement files and snapshots go, relative to this file.
measurements-dir = "measurements"
snapshots-dir = "snapshots"
# A case's wall-clock limit, and one request's.
# case-timeout-secs = 1800
# request-timeout-secs = 600

# A server of your own that is already running:
#   cargo sparktest --suite smoke --target my-server
[target.my-server]
description = "what it is: engine, version, quantisation, flags"
model = "Qwen/Qwen3-8B"                # the id its /v1/models must report
base-url = "http://127.0.0.1:8000"     # with or without /v1
# api-key-env = "MY_SERVER_KEY"        # a bearer key, read from this variable
# label = "Qwen3-8B FP8"               # the column's name on the board
# pins = { image = "vllm/vllm-openai@sha256:..." }

# A server the harness launches on a free port, and stops after:
# [target.my-vllm]
# model = "Qwen/Qwen3-8B"
# [target.my-vllm.launch]
# command = ["vllm", "serve", "Qwen/Qwen3-8B", "--port", "{port}"]
# health-path = "/health"
# startup-timeout-secs = 600
"#;

/// Write every sha256 of a suite from its files as they are: each
/// `[[instrument]]`'s `wasm` component and each `[files]` entry. The file
/// is edited as TOML, comments, order, spacing and quoting kept; only the
/// pins change. The edit is loaded as a run loads the suite before it is
/// written, so a pin written here is one the run accepts, and "every pin
/// already matches" is said only of a suite the run accepts. Returns what
/// changed, a line each.
pub fn pin(suite_file: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(suite_file)
        .map_err(|e| Error::setup(format!("failed to read suite {}: {e}", suite_file.display())))?;
    let parsed =
        toml_edit::Document::parse(text.clone()).map_err(|e| Error::setup(format!("{}: {e}", suite_file.display())))?;
    let pins = Pins::read(&parsed, suite_file)?;
    let mut doc = parsed.into_mut();
    let said = pins.write(&mut doc);
    let written = doc.to_string();
    accepted(suite_file, &written)
        .map_err(|e| Error::setup(format!("{}; pinning cannot mend that, so the file is left as it was", e.message)))?;
    if written != text {
        crate::files::replace(suite_file, written.as_bytes())
            .map_err(|e| Error::io(format!("write {}", suite_file.display()), e))?;
    }
    Ok(said)
}

/// The digests [`pin`] writes, read from the files as they are: each
/// instrument's component (by the instrument's place; `None` for one
/// without `wasm`) and each `[files]` entry (by its key), with the path.
struct Pins {
    components: Vec<Option<(String, String)>>,
    files: Vec<(String, String)>,
}

impl Pins {
    fn read(doc: &toml_edit::Document<String>, file: &Path) -> Result<Pins, Error> {
        let dir = file.parent().unwrap_or(Path::new("."));
        // Spans are byte offsets into the text: a key is named by its line.
        let at = |item: &toml_edit::Item| {
            let line = item.span().map_or(0, |s| doc.raw()[..s.start].matches('\n').count() + 1);
            format!("{}:{line}", file.display())
        };
        let digest = |rel: &str, item: &toml_edit::Item, hint: &str| -> Result<String, Error> {
            let bytes =
                std::fs::read(dir.join(rel)).map_err(|e| Error::setup(format!("{}: {rel}: {e}{hint}", at(item))))?;
            Ok(sha256_hex(&bytes))
        };
        let mut components = Vec::new();
        for (i, table) in instruments(doc.as_table().get("instrument")).into_iter().enumerate() {
            let Some(item) = table.and_then(|t| t.get("wasm")) else {
                components.push(None);
                continue;
            };
            let rel = item.as_str().ok_or_else(|| {
                Error::setup(format!("{}: instrument #{}: wasm is not a string (a path)", at(item), i + 1))
            })?;
            let sha = digest(rel, item, " (build the component first?)")?;
            components.push(Some((rel.to_string(), sha)));
        }
        let mut files = Vec::new();
        if let Some(table) = doc.as_table().get("files").and_then(toml_edit::Item::as_table_like) {
            for (rel, item) in table.iter() {
                files.push((rel.to_string(), digest(rel, item, "")?));
            }
        }
        Ok(Pins { components, files })
    }

    /// Write each digest where it differs from its pin; returns what
    /// changed, `path: sha256` a line.
    fn write(&self, doc: &mut toml_edit::DocumentMut) -> Vec<String> {
        let mut said = Vec::new();
        if let Some(item) = doc.get_mut("instrument") {
            for (table, pin) in instruments_mut(item).into_iter().zip(&self.components) {
                if let (Some(table), Some((rel, sha))) = (table, pin)
                    && set_digest(table, "sha256", sha)
                {
                    said.push(format!("{rel}: {sha}"));
                }
            }
        }
        if let Some(table) = doc.get_mut("files").and_then(toml_edit::Item::as_table_like_mut) {
            for (rel, sha) in &self.files {
                if set_digest(table, rel, sha) {
                    said.push(format!("{rel}: {sha}"));
                }
            }
        }
        said
    }
}

/// A suite's instrument tables, `[[instrument]]` or an inline array, each
/// in its place (`None` for an entry that is not a table: the loader
/// refuses it).
fn instruments(item: Option<&toml_edit::Item>) -> Vec<Option<&dyn toml_edit::TableLike>> {
    match item {
        Some(toml_edit::Item::ArrayOfTables(a)) => a.iter().map(|t| Some(t as &dyn toml_edit::TableLike)).collect(),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
            a.iter().map(|v| v.as_inline_table().map(|t| t as &dyn toml_edit::TableLike)).collect()
        }
        _ => Vec::new(),
    }
}

/// [`instruments`], to edit.
fn instruments_mut(item: &mut toml_edit::Item) -> Vec<Option<&mut dyn toml_edit::TableLike>> {
    match item {
        toml_edit::Item::ArrayOfTables(a) => a.iter_mut().map(|t| Some(t as &mut dyn toml_edit::TableLike)).collect(),
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
            a.iter_mut().map(|v| v.as_inline_table_mut().map(|t| t as &mut dyn toml_edit::TableLike)).collect()
        }
        _ => Vec::new(),
    }
}

/// Pin `key` of `table` to `sha` unless it holds it already (in either
/// case, as the loader compares). Returns whether it changed.
fn set_digest(table: &mut dyn toml_edit::TableLike, key: &str, sha: &str) -> bool {
    let old = table.get(key).and_then(toml_edit::Item::as_value);
    if old.and_then(toml_edit::Value::as_str).is_some_and(|v| v.eq_ignore_ascii_case(sha)) {
        return false;
    }
    let new = toml_edit::Item::Value(digest_value(old, sha));
    match table.get_mut(key) {
        Some(item) => *item = new,
        None => {
            table.insert(key, new);
        }
    }
    true
}

/// A digest written where `old` was: its spacing and trailing comment
/// kept, and its quotes (a literal string, `'…'`, stays one).
fn digest_value(old: Option<&toml_edit::Value>, sha: &str) -> toml_edit::Value {
    let literal = match old {
        Some(toml_edit::Value::String(s)) => {
            s.as_repr().and_then(|r| r.as_raw().as_str()).is_some_and(|raw| raw.starts_with('\''))
        }
        _ => false,
    };
    let mut new = if literal {
        format!("'{sha}'").parse().unwrap_or_else(|_| toml_edit::Value::from(sha))
    } else {
        toml_edit::Value::from(sha)
    };
    if let Some(old) = old {
        *new.decor_mut() = old.decor().clone();
    }
    new
}

/// Whether a run accepts the suite as `text`: it loads as a run loads it
/// (every data pin checked, every component's path and pin in place), and
/// each component matches its pin as the run checks it.
fn accepted(file: &Path, text: &str) -> Result<(), Error> {
    let suite = crate::suite::load_bytes(file, text.as_bytes())?;
    for (i, entry) in suite.instruments.iter().enumerate() {
        if let crate::suite::Source::Wasm { path, sha256: Some(pin) } = &entry.source {
            let bytes = std::fs::read(path).map_err(|e| Error::io(format!("read {}", path.display()), e))?;
            if !sha256_hex(&bytes).eq_ignore_ascii_case(pin) {
                return Err(Error::setup(format!(
                    "{}: instrument #{}: {} does not match its pin",
                    file.display(),
                    i + 1,
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

/// `--version`, and with `--verbose` the interface versions this binary
/// loads, the measurement format it writes, and its built-in suites and
/// components with their digests.
pub fn version(verbose: bool) -> String {
    let mut s = format!("cargo-sparktest {}\n", env!("CARGO_PKG_VERSION"));
    if !verbose {
        return s;
    }
    s.push_str(&format!(
        "interfaces loaded: sparktest:plugin {} (a component built against any of them runs)\n",
        crate::plugin::INTERFACES.join(", ")
    ));
    s.push_str(&format!("measurement format written: {}\n", sparktest_record::FORMAT_VERSION));
    let suites: Vec<&str> = crate::carried::SUITES.iter().map(|x| x.name).collect();
    s.push_str(&format!("built-in suites ({}): {}\n", suites.len(), suites.join(", ")));
    s.push_str(&format!(
        "built-in components ({}), each loaded only by its sha256:\n",
        crate::carried::COMPONENTS.len()
    ));
    for c in crate::carried::COMPONENTS {
        s.push_str(&format!("  {:<26} interface {}  sha256:{}\n", c.package, c.interface, c.sha256));
    }
    s.push_str(&this_box());
    s
}

/// What a run here records of the box (its manifest's `client_host` and
/// `job`), and the memory a launch waits to see given back: so a user sees,
/// before a night's campaign, what each column will say it was measured on.
fn this_box() -> String {
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let h = crate::hostinfo::snapshot();
    let mut s = format!(
        "this box (each run's client_host): {} · {} · {} cores · {}\n",
        h.hostname.as_deref().unwrap_or("unnamed"),
        h.cpu_model.as_deref().unwrap_or("CPU unknown"),
        h.cores,
        gib(h.memory_bytes)
    );
    if h.accelerators.is_empty() {
        s.push_str("GPUs: none that nvidia-smi reports\n");
    }
    for a in &h.accelerators {
        let memory = match a.memory_total_mib {
            Some(m) => gib(m << 20),
            None => "unified memory".to_string(),
        };
        s.push_str(&format!("GPU: {} · {memory} · driver {}\n", a.name, a.driver.as_deref().unwrap_or("unknown")));
    }
    if let Ok(v) = std::env::var("CUDA_VISIBLE_DEVICES") {
        s.push_str(&format!("  (only those CUDA_VISIBLE_DEVICES={v} gives this process)\n"));
    }
    for p in crate::hostinfo::memory_pools() {
        s.push_str(&format!(
            "memory a launch waits on: {} {}: {} free of {}\n",
            p.kind.as_str(),
            p.device,
            gib(p.free_bytes),
            gib(p.total_bytes)
        ));
    }
    match crate::hostinfo::job() {
        Some(j) => s.push_str(&format!("batch job: {}\n", j.describe())),
        None => s.push_str("batch job: none (no Slurm or Kubernetes job in the environment)\n"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn pin_writes_every_digest_and_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/a.json"), "[1]").unwrap();
        std::fs::write(dir.path().join("x.wasm"), "\0asm-ish").unwrap();
        let file = dir.path().join("suite.toml");
        std::fs::write(
            &file,
            "[suite]\nname = \"t\"\nversion = \"1\"\n\n[[instrument]]\n# built by hand\nwasm = \"x.wasm\"\nsha256 = \"old\"\n[instrument.config]\nn = 1\n\n[files]\n\"data/a.json\" = \"0000\"\n",
        )
        .unwrap();
        let said = pin(&file).unwrap();
        assert_eq!(said.len(), 2, "{said:?}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(&format!("sha256 = \"{}\"", sha256_hex(b"\0asm-ish"))), "{text}");
        assert!(text.contains(&format!("\"data/a.json\" = \"{}\"", sha256_hex(b"[1]"))), "{text}");
        assert!(text.contains("# built by hand") && text.contains("n = 1"), "{text}");
        let suite = crate::suite::load(&file).unwrap();
        assert_eq!(suite.files["data/a.json"], b"[1]");
        // Pinned again: nothing to say.
        assert!(pin(&file).unwrap().is_empty());
        // A component not built yet is named, and nothing is written.
        std::fs::remove_file(dir.path().join("x.wasm")).unwrap();
        let before = std::fs::read_to_string(&file).unwrap();
        let err = pin(&file).unwrap_err();
        assert!(err.message.contains("x.wasm") && err.message.contains("build the component first"), "{err}");
        assert!(err.message.contains("suite.toml:7: x.wasm: "), "named by its line: {err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }

    #[test]
    fn a_new_instrument_is_a_crate_and_a_suite_that_loads_once_pinned() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("echo-words");
        let said = new_instrument(&dir, "echo-words").unwrap();
        assert!(said.contains("cargo build --target wasm32-wasip2 --release"), "{said}");
        let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(cargo.contains(&format!("sparktest-sdk = \"{SDK_VERSION}\"")) && !cargo.contains("path ="), "{cargo}");
        // Not yet built: the suite names its component; pin says to build.
        assert!(pin(&dir.join("suite.toml")).unwrap_err().message.contains("echo_words.wasm"));
        assert!(new_instrument(&dir, "echo-words").unwrap_err().message.contains("already exists"));
        assert!(new_instrument(&root.path().join("x"), "Bad Name").is_err());
        // Where the SDK is not on a registry: how to build against this
        // checkout's, in the output and the crate's README.
        let patch = format!("[patch.crates-io]\n  {}", sdk_patch());
        assert!(said.contains(&patch) && sdk_patch().contains("/plugins/lib/sdk\""), "{said}");
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains(&format!("[patch.crates-io]\n{}", sdk_patch())), "{readme}");
        let init_at = init(root.path()).unwrap();
        let config = crate::config::Config::load(root.path(), Some(&init_at)).unwrap();
        assert!(config.targets.contains_key("my-server"), "{}", init_at.display());
        assert!(init(root.path()).unwrap_err().message.contains("already exists"));
    }

    #[test]
    fn pin_edits_toml_as_toml_keeping_quotes_and_comments_and_the_pinned_suite_loads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/a.json"), "[1]").unwrap();
        std::fs::write(dir.path().join("data/b.json"), "[2]").unwrap();
        std::fs::write(dir.path().join("x.wasm"), "x-bytes").unwrap();
        std::fs::write(dir.path().join("y.wasm"), "y-bytes").unwrap();
        let file = dir.path().join("suite.toml");
        // Single quotes and trailing comments on the very lines pin edits:
        // read as text, these said "every pin already matches".
        let text = "# written by hand\n[suite]\nname = 't'\nversion = \"1\"\n\n[[instrument]]\nwasm = 'x.wasm'   # built by hand\nsha256 = 'old'   # the component's pin\n[instrument.config]\nn = 1\n\n[[instrument]] # no pin yet\nwasm = \"y.wasm\"\n\n[files]\n'data/a.json' = \"0000\"  # the words\n\"data/b.json\" = '0000'\n";
        std::fs::write(&file, text).unwrap();
        let (x, y) = (sha256_hex(b"x-bytes"), sha256_hex(b"y-bytes"));
        let (a, b) = (sha256_hex(b"[1]"), sha256_hex(b"[2]"));
        let said = pin(&file).unwrap();
        assert_eq!(
            said,
            [format!("x.wasm: {x}"), format!("y.wasm: {y}"), format!("data/a.json: {a}"), format!("data/b.json: {b}")]
        );
        let pinned = std::fs::read_to_string(&file).unwrap();
        let want = text
            .replace("sha256 = 'old'", &format!("sha256 = '{x}'"))
            .replace("wasm = \"y.wasm\"\n", &format!("wasm = \"y.wasm\"\nsha256 = \"{y}\"\n"))
            .replace("'data/a.json' = \"0000\"", &format!("'data/a.json' = \"{a}\""))
            .replace("\"data/b.json\" = '0000'", &format!("\"data/b.json\" = '{b}'"));
        assert_eq!(pinned, want, "only the pins changed, each in its own quotes, every comment kept");
        // The pinned suite loads, and its components match their pins as a run checks them.
        let suite = crate::suite::load(&file).unwrap();
        assert_eq!(suite.files["data/b.json"], b"[2]");
        let pins: Vec<_> = suite
            .instruments
            .iter()
            .map(|i| match &i.source {
                crate::suite::Source::Wasm { sha256, .. } => sha256.clone().unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(pins, [x, y]);
        // Pinned again: nothing to say, nothing written; a pin in capitals
        // matches too, as the run compares.
        assert!(pin(&file).unwrap().is_empty());
        std::fs::write(&file, pinned.replace(&a, &a.to_uppercase())).unwrap();
        assert!(pin(&file).unwrap().is_empty());
        assert!(std::fs::read_to_string(&file).unwrap().contains(&a.to_uppercase()));
    }

    #[test]
    fn pin_writes_nothing_a_run_would_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("o.json"), "[1]").unwrap();
        std::os::unix::fs::symlink(outside.path().join("o.json"), dir.path().join("o.json")).unwrap();
        let file = dir.path().join("suite.toml");
        let text = "[suite]\nname = \"t\"\nversion = \"1\"\n[files]\n\"o.json\" = \"0000\"\n";
        std::fs::write(&file, text).unwrap();
        // A data file that resolves out of the suite: pinned, the run still
        // refuses it, so nothing is written.
        let err = pin(&file).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Setup);
        assert!(err.message.contains("outside the suite folder") && err.message.contains("left as it was"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        // A file that is not TOML is named, and left alone.
        std::fs::write(&file, "[suite\n").unwrap();
        assert!(pin(&file).unwrap_err().message.contains("suite.toml"));
    }

    #[test]
    fn a_new_instrument_s_name_must_make_a_crate_and_a_type_that_build() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("x");
        for (name, why) in [
            ("self", "`self` is a Rust keyword (the crate would be `self` and its type `Self`)"),
            ("crate", "`crate` is a Rust keyword"),
            ("super", "`super` is a Rust keyword"),
            ("fn", "`fn` is a Rust keyword"),
            ("async", "`async` is a Rust keyword"),
            ("yield", "`yield` is a Rust keyword"),
            ("gen", "`gen` is a Rust keyword"),
            ("std", "a crate of Rust's own"),
            ("proc-macro", "`proc_macro` is the name of a crate of Rust's own"),
            ("config", "type would be `Config`, a name its src/lib.rs already uses"),
            ("chat-request", "`ChatRequest`"),
            ("ok", "`Ok`"),
            ("Self", "lowercase letters"),
            ("r#fn", "lowercase letters"),
            ("a_b", "lowercase letters"),
            ("a--b", "lowercase letters"),
            ("9lives", "lowercase letters"),
        ] {
            let err = new_instrument(&dir, name).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Setup, "{name}: exit 3: {err}");
            assert!(err.message.contains(&format!("new instrument: {name:?}: ")), "{err}");
            assert!(err.message.contains(why), "{name}: {err}");
            assert!(!dir.exists(), "{name}: nothing written");
        }
        // A keyword as one word of several is a name like any other.
        for name in ["self-check", "type-speed", "r2"] {
            assert!(new_instrument(&root.path().join(name), name).is_ok(), "{name}");
        }
        let lib = std::fs::read_to_string(root.path().join("self-check/src/lib.rs")).unwrap();
        assert!(lib.contains("struct SelfCheck;") && lib.contains("register_instrument!(SelfCheck);"), "{lib}");
        // Every name the list guards is one the template uses.
        for used in TEMPLATE_NAMES {
            let word = |w: &str| w == used;
            assert!(LIB_RS.split(|c: char| !c.is_ascii_alphanumeric()).any(word), "{used}");
        }
    }
}
