//! The compile cache: the native code wasmtime compiled from a component,
//! kept so that the next run need not compile it again.
//!
//! That code runs outside the sandbox, so it is trusted only as far as the
//! folder that holds it. The folder is the user's own (`compiled/` in the
//! user cache, mode 0700, owned by this user, never a symlink), never a
//! project, measurement or other shared folder. Each artifact has a record
//! beside it, written when this user compiled it: the sha256 of the
//! component it came from, the engine's configuration, and the artifact's
//! own sha256. An artifact is deserialized only when its record names the
//! component being loaded and this engine, and its bytes hash to the
//! record's digest; anything else (a swapped, flipped, truncated or foreign
//! file) is compiled again from the pinned bytes and written over.
//!
//! A folder this user cannot trust (another user's, writable by others, a
//! symlink, or holding anything that is not a regular file or folder of
//! this user's that only this user may write) is not used at all and left
//! as it is: components are compiled in memory, every run, and said so
//! once. Each record and artifact is opened without following links and
//! read only when it is this user's alone.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::files::{private, private_folder, read_private, replace_private, sha256_hex};

/// The compile cache's folder: `compiled/` in the user cache
/// (`~/.cache/sparktest/compiled`), whatever project is run.
pub fn compile_cache_dir() -> PathBuf {
    crate::files::user_cache().join("compiled")
}

/// What the cache did for one component (for tests and a verbose log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetched {
    /// An artifact whose record matched was loaded.
    Hit,
    /// Nothing usable was there: compiled, and written for next time.
    Compiled,
    /// No trusted cache: compiled in memory only.
    Uncached,
}

/// A folder of compiled components only this user can write.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

/// The first line of every record; a record of another layout is not read.
const RECORD_HEAD: &str = "sparktest compiled component 1";

impl CompileCache {
    /// No cache: every component is compiled in memory.
    pub fn none() -> Self {
        CompileCache { dir: None }
    }

    /// The cache in `dir`, created mode 0700 when missing. A folder that is
    /// not this user's alone is refused with the reason; the caller then
    /// compiles without it.
    pub fn open(dir: &Path) -> Result<Self, String> {
        private_folder(dir)?;
        Ok(CompileCache { dir: Some(dir.to_path_buf()) })
    }

    /// The component compiled from `bytes` (whose sha256 is `digest`, as the
    /// caller computed it to check the pin) for `engine`: the cached
    /// artifact when its record vouches for it, else compiled now (and
    /// cached).
    pub fn component(&self, engine: &Engine, bytes: &[u8], digest: &str) -> wasmtime::Result<(Component, Fetched)> {
        // Checked again at each load: the folder may have been replaced
        // since the cache was opened.
        let Some(dir) = self.dir.as_ref().filter(|d| private(d).is_ok()) else {
            return Ok((Component::new(engine, bytes)?, Fetched::Uncached));
        };
        let config = engine_key(engine);
        let slot = Slot { dir: dir.join(&config), source: digest.to_ascii_lowercase(), config };
        if let Some(component) = slot.load(engine) {
            return Ok((component, Fetched::Hit));
        }
        let artifact = engine.precompile_component(bytes)?;
        // SAFETY: these bytes were compiled by this engine just now, in this
        // process; nothing else has seen them.
        let component = unsafe { Component::deserialize(engine, &artifact)? };
        // A cache that cannot be written costs the next run a compile,
        // nothing else.
        let _ = slot.store(&artifact);
        Ok((component, Fetched::Compiled))
    }
}

/// The engine's configuration as a folder name: artifacts of one engine
/// never meet another's.
fn engine_key(engine: &Engine) -> String {
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Where one component's artifact and record live.
struct Slot {
    dir: PathBuf,
    source: String,
    config: String,
}

impl Slot {
    fn artifact(&self) -> PathBuf {
        self.dir.join(format!("{}.cwasm", self.source))
    }

    fn record(&self) -> PathBuf {
        self.dir.join(format!("{}.record", self.source))
    }

    fn record_text(&self, artifact_sha256: &str) -> String {
        format!("{RECORD_HEAD}\ncomponent {}\nengine {}\nartifact {artifact_sha256}\n", self.source, self.config)
    }

    /// The cached artifact, only when its record names this component and
    /// engine and its bytes are the ones recorded.
    fn load(&self, engine: &Engine) -> Option<Component> {
        private(&self.dir).ok()?;
        let record = String::from_utf8(read_private(&self.record())?).ok()?;
        let bytes = read_private(&self.artifact())?;
        if record != self.record_text(&sha256_hex(&bytes)) {
            return None;
        }
        // SAFETY: the bytes are the ones this user's host compiled from the
        // component with this digest for this engine's configuration (the
        // record, written then, in a folder only this user can write, says
        // so and the digest matches); wasmtime checks the engine again.
        unsafe { Component::deserialize(engine, &bytes) }.ok()
    }

    /// Write the artifact, then its record, each whole or not at all.
    fn store(&self, artifact: &[u8]) -> std::io::Result<()> {
        std::fs::DirBuilder::new().mode(0o700).recursive(true).create(&self.dir)?;
        private(&self.dir).map_err(std::io::Error::other)?;
        replace_private(&self.artifact(), artifact)?;
        replace_private(&self.record(), self.record_text(&sha256_hex(artifact)).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn engine() -> Engine {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        Engine::new(&config).unwrap()
    }

    /// The cache's answer for `bytes`, with their digest as the host gives it.
    fn fetch(cache: &CompileCache, e: &Engine, bytes: &[u8]) -> wasmtime::Result<(Component, Fetched)> {
        cache.component(e, bytes, &sha256_hex(bytes))
    }

    /// A component holding one core module whose one function returns `n`
    /// (`n` below 64: one LEB byte), so that each `n` compiles to other
    /// code.
    fn returning(n: u8) -> Vec<u8> {
        let code = [0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, n, 0x0b];
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        module.extend_from_slice(&[0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f]); // type: () -> i32
        module.extend_from_slice(&[0x03, 0x02, 0x01, 0x00]); // one function of type 0
        module.extend_from_slice(&code);
        let mut component = b"\0asm\x0d\0\x01\0".to_vec();
        component.push(0x01); // core module section
        component.push(module.len() as u8);
        component.extend_from_slice(&module);
        component
    }

    #[test]
    fn a_component_is_compiled_once_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("compiled")).unwrap();
        let e = engine();
        let a = returning(1);
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Hit);
        let mode = std::fs::metadata(dir.path().join("compiled")).unwrap().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    fn artifacts(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for sub in std::fs::read_dir(dir).unwrap() {
            for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|x| x == "cwasm") {
                    found.push(p);
                }
            }
        }
        found.sort();
        found
    }

    fn replaced(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        if let Some(at) = out.windows(from.len()).position(|w| w == from) {
            out[at..at + to.len()].copy_from_slice(to);
        }
        out
    }

    #[test]
    fn a_swapped_flipped_or_foreign_artifact_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("compiled");
        let cache = CompileCache::open(&root).unwrap();
        let e = engine();
        let (a, b) = (returning(1), returning(42));
        fetch(&cache, &e, &a).unwrap();
        fetch(&cache, &e, &b).unwrap();
        let files = artifacts(&root);
        assert_eq!(files.len(), 2);
        let (first, second) = (std::fs::read(&files[0]).unwrap(), std::fs::read(&files[1]).unwrap());
        assert!(first != second, "two components, two artifacts");
        // Swapped: each holds the other's code.
        std::fs::write(&files[0], &second).unwrap();
        std::fs::write(&files[1], &first).unwrap();
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        assert_eq!(fetch(&cache, &e, &b).unwrap().1, Fetched::Compiled);
        assert!(std::fs::read(&files[0]).unwrap() == first, "rewritten from the pinned bytes");
        assert!(std::fs::read(&files[1]).unwrap() == second);
        // One byte flipped.
        let mut flipped = first.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x01;
        std::fs::write(&files[0], &flipped).unwrap();
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        // A file of another wasmtime: this artifact with the major version
        // its engine section names (a length byte, then "48") changed.
        let foreign = replaced(&first, b"\x0248", b"\x0247");
        assert!(foreign != first, "the artifact names its wasmtime version");
        std::fs::write(&files[0], &foreign).unwrap();
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Hit);
    }

    #[test]
    fn a_folder_others_may_write_is_refused_and_left_alone_and_a_symlink_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("compiled");
        std::fs::create_dir(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = CompileCache::open(&root).unwrap_err();
        assert!(e.contains("may be written by other users (mode 0777)"), "{e}");
        assert_eq!(std::fs::metadata(&root).unwrap().mode() & 0o777, 0o777, "left as it was");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        let e = CompileCache::open(&link).unwrap_err();
        assert!(e.contains("is not a folder"), "{e}");
        // A folder replaced after the cache was opened is not used.
        let cache = CompileCache::open(&root).unwrap();
        std::fs::rename(&root, dir.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("moved"), &root).unwrap();
        assert_eq!(fetch(&cache, &engine(), &returning(1)).unwrap().1, Fetched::Uncached);
        // A parent every user may write is refused.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = CompileCache::open(&open.join("compiled")).unwrap_err();
        assert!(e.contains("written by every user"), "{e}");
    }

    /// The cache's artifacts and records made another user's (nobody,
    /// 65534), as if planted while the folder was open to them.
    fn planted_by_another_user(root: &Path) -> Vec<PathBuf> {
        let mut planted = Vec::new();
        for sub in std::fs::read_dir(root).unwrap() {
            for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
                planted.push(p);
            }
        }
        planted
    }

    #[test]
    fn an_artifact_and_record_another_user_planted_are_never_loaded() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: giving a file to another user needs root (CI runs as root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("compiled");
        let e = engine();
        let a = returning(3);
        let cache = CompileCache::open(&root).unwrap();
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        // The artifact and its record match: only their owner is wrong.
        let planted = planted_by_another_user(&root);
        assert_eq!(planted.len(), 2);
        // A cache opened now refuses the folder, naming the file, and
        // leaves it as it is.
        let why = CompileCache::open(&root).unwrap_err();
        assert!(why.contains("belongs to user 65534"), "{why}");
        assert!(planted.iter().any(|p| why.contains(&p.display().to_string())), "{why}");
        for p in &planted {
            assert_eq!(std::fs::metadata(p).unwrap().uid(), 65534);
        }
        // One opened before they were planted compiles again rather than
        // load them.
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
        // A link in place of an artifact is not followed either.
        let artifact = artifacts(&root).remove(0);
        let elsewhere = dir.path().join("elsewhere.cwasm");
        std::fs::rename(&artifact, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &artifact).unwrap();
        let why = CompileCache::open(&root).unwrap_err();
        assert!(why.contains("is not a regular file"), "{why}");
        assert_eq!(fetch(&cache, &e, &a).unwrap().1, Fetched::Compiled);
    }
}
