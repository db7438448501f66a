//! The sandbox: wasmtime engine, component cache, limits, one store per case.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sparktest_record::{InstrumentInfo, Metric};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Cache, CacheConfig, Config, Engine, Store, StoreLimitsBuilder, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

use super::bindings::{self, InstrumentPre, Verdict};
use super::state::{CallLog, CaseState};
use crate::endpoint::Endpoint;
use crate::error::{Error, ErrorKind};
use crate::suite::sha256_hex;

/// Limits applied to every instance.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Guest CPU budget per case, in fuel units (about one per instruction).
    pub fuel: u64,
    /// Guest linear memory cap, bytes.
    pub memory_bytes: usize,
    /// Wall-clock limit per case, server time included.
    pub case_timeout: Duration,
}

/// The wasmtime engine and linker shared by all instruments.
pub struct PluginHost {
    engine: Engine,
    linker: Linker<CaseState>,
    reporter_linker: Linker<CaseState>,
    limits: Limits,
}

/// A clock that always reads zero: instruments get no time but the host's.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A loaded instrument component, ready to instantiate per case.
#[derive(Clone)]
pub struct InstrumentPlugin {
    pre: InstrumentPre<CaseState>,
    /// What it says about itself, and the digest of its component.
    pub info: InstrumentInfo,
}

/// A case's cases list entry, host side.
#[derive(Debug, Clone)]
pub struct CaseInfo {
    /// `group::case`.
    pub name: String,
    /// Rows or categories it feeds.
    pub tags: Vec<String>,
}

/// How a case ended, host side.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseVerdict {
    /// Passed.
    Pass,
    /// Failed, with the reason.
    Fail(String),
    /// Lost, with the reason.
    Lost(String),
    /// Not applicable, with the reason.
    NotApplicable(String),
}

/// Everything a finished case produced.
pub struct CaseResult {
    /// The verdict after the host's rules (a lost call loses the case).
    pub verdict: CaseVerdict,
    /// The instrument's figures.
    pub metrics: Vec<Metric>,
    /// The instrument's notes.
    pub notes: Vec<(String, String)>,
    /// Snapshots to check: name and content.
    pub snapshots: Vec<(String, String)>,
    /// The endpoint calls.
    pub log: CallLog,
    /// Wall time of the case.
    pub elapsed: Duration,
}

impl PluginHost {
    /// An engine with fuel metering and, when `cache_dir` is given, the
    /// on-disk compilation cache.
    pub fn new(cache_dir: Option<&Path>, limits: Limits) -> Result<Self, Error> {
        let plugin_err = |what: &str, err: wasmtime::Error| Error::new(ErrorKind::Plugin, format!("{what}: {err:#}"));
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        if let Some(dir) = cache_dir {
            let mut cache = CacheConfig::new();
            cache.with_directory(dir);
            let cache = Cache::new(cache).map_err(|e| plugin_err("failed to open the component cache", e))?;
            config.cache(Some(cache));
        }
        let engine = Engine::new(&config).map_err(|e| plugin_err("failed to start wasmtime", e))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|e| plugin_err("failed to link WASI", e))?;
        bindings::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| plugin_err("failed to link the endpoint imports", e))?;
        // A reporter gets WASI (nothing granted) and the suite-data files only.
        let mut reporter_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut reporter_linker).map_err(|e| plugin_err("failed to link WASI", e))?;
        bindings::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| plugin_err("failed to link the reporter imports", e))?;
        Ok(PluginHost { engine, linker, reporter_linker, limits })
    }

    fn store(&self, endpoint: Option<Arc<Endpoint>>, files: Arc<BTreeMap<String, Vec<u8>>>) -> (Store<CaseState>, MemoryOutputPipe) {
        let stderr = MemoryOutputPipe::new(64 * 1024);
        // No preopened folders, no environment, no arguments, no sockets,
        // frozen clocks: the only way out is the endpoint import.
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .wall_clock(FrozenClock)
            .monotonic_clock(FrozenClock)
            .insecure_random_seed(0)
            .allow_ip_name_lookup(false)
            .allow_tcp(false)
            .allow_udp(false)
            .build();
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .trap_on_grow_failure(true)
            .build();
        let state = CaseState { wasi, table: ResourceTable::new(), limits, endpoint, files, log: CallLog::default(), last_window: None };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        // set_fuel only fails when fuel is off, and it is on.
        let _ = store.set_fuel(self.limits.fuel);
        (store, stderr)
    }

    /// Read a component and compile it (or fetch it from the cache).
    fn compile(&self, wasm: &Path) -> Result<(Vec<u8>, Component), Error> {
        let err = |what: String| Error::new(ErrorKind::Plugin, what);
        let bytes = std::fs::read(wasm).map_err(|e| err(format!("failed to read component {}: {e}", wasm.display())))?;
        let component = Component::new(&self.engine, &bytes)
            .map_err(|e| err(format!("failed to compile component {}: {e:#}", wasm.display())))?;
        Ok((bytes, component))
    }

    /// Load (compile or fetch from cache) a component and ask it to describe
    /// itself.
    pub async fn load(&self, wasm: &Path) -> Result<InstrumentPlugin, Error> {
        let err = |what: String| Error::new(ErrorKind::Plugin, what);
        let (bytes, component) = self.compile(wasm)?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| err(format!("component {} does not fit the instrument world: {e:#}", wasm.display())))?;
        let pre = InstrumentPre::new(pre)
            .map_err(|e| err(format!("component {} does not export the instrument world: {e:#}", wasm.display())))?;
        let (mut store, stderr) = self.store(None, Arc::default());
        let info = async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance.call_describe(&mut store).await
        }
        .await
        .map_err(|e| err(format!("{} failed to describe itself: {}", wasm.display(), trap_message(&e, &stderr, &self.limits))))?;
        Ok(InstrumentPlugin {
            pre,
            info: InstrumentInfo {
                name: info.name,
                row: info.row,
                version: info.version,
                description: info.description,
                component_sha256: sha256_hex(&bytes),
            },
        })
    }

    /// Run a reporter component: measurement files in, artifacts out
    /// (relative paths, checked to stay inside the output folder).
    pub async fn render(
        &self,
        wasm: &Path,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        measurements: Vec<String>,
        config: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let err = |what: String| Error::new(ErrorKind::Plugin, what);
        let (_, component) = self.compile(wasm)?;
        let pre = self
            .reporter_linker
            .instantiate_pre(&component)
            .map_err(|e| err(format!("component {} does not fit the reporter world: {e:#}", wasm.display())))?;
        let pre = bindings::reporter::ReporterPre::new(pre)
            .map_err(|e| err(format!("component {} does not export the reporter world: {e:#}", wasm.display())))?;
        let (mut store, stderr) = self.store(None, files);
        let result = async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance.call_render(&mut store, &measurements, config).await
        }
        .await
        .map_err(|e| err(format!("reporter {} failed: {}", wasm.display(), trap_message(&e, &stderr, &self.limits))))?;
        let artifacts = result.map_err(|e| Error::new(ErrorKind::Setup, format!("reporter {} refused: {e}", wasm.display())))?;
        artifacts
            .into_iter()
            .map(|a| {
                let safe = !a.path.is_empty()
                    && Path::new(&a.path).components().all(|c| matches!(c, std::path::Component::Normal(_)));
                if safe {
                    Ok((a.path, a.content))
                } else {
                    Err(err(format!("reporter {} wrote outside its folder: {:?}", wasm.display(), a.path)))
                }
            })
            .collect()
    }

    /// The instrument's cases for this config.
    pub async fn cases(
        &self,
        plugin: &InstrumentPlugin,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        config: &str,
    ) -> Result<Vec<CaseInfo>, Error> {
        let name = &plugin.info.name;
        let (mut store, stderr) = self.store(None, files);
        let result = async {
            let instance = plugin.pre.instantiate_async(&mut store).await?;
            instance.call_cases(&mut store, config).await
        }
        .await
        .map_err(|e| Error::new(ErrorKind::Plugin, format!("instrument {name} failed to list its cases: {}", trap_message(&e, &stderr, &self.limits))))?;
        let cases = result.map_err(|e| Error::new(ErrorKind::Plugin, format!("instrument {name} refused its config: {e}")))?;
        Ok(cases.into_iter().map(|c| CaseInfo { name: c.name, tags: c.tags }).collect())
    }

    /// Run one case in a fresh instance, within the limits.
    pub async fn run(
        &self,
        plugin: &InstrumentPlugin,
        endpoint: Arc<Endpoint>,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        config: &str,
        case: &str,
    ) -> CaseResult {
        let started = Instant::now();
        let (mut store, stderr) = self.store(Some(endpoint), files);
        let run = async {
            let instance = plugin.pre.instantiate_async(&mut store).await?;
            instance.call_run(&mut store, config, case).await
        };
        let outcome = tokio::time::timeout(self.limits.case_timeout, run).await;
        let log = std::mem::take(&mut store.data_mut().log);
        let mut result = CaseResult {
            verdict: CaseVerdict::Pass,
            metrics: Vec::new(),
            notes: Vec::new(),
            snapshots: Vec::new(),
            log,
            elapsed: Duration::ZERO,
        };
        result.verdict = match outcome {
            Err(_) => CaseVerdict::Lost(format!(
                "the case exceeded its wall-clock limit of {}s (server time included)",
                self.limits.case_timeout.as_secs()
            )),
            Ok(Err(trap)) => CaseVerdict::Fail(trap_message(&trap, &stderr, &self.limits)),
            Ok(Ok(outcome)) => {
                result.metrics = outcome
                    .metrics
                    .into_iter()
                    .map(|m| Metric { name: m.name, value: m.value, unit: m.unit })
                    .collect();
                result.notes = outcome.notes.into_iter().map(|p| (p.key, p.value)).collect();
                result.snapshots = outcome.snapshots.into_iter().map(|s| (s.name, s.content)).collect();
                // NaN and infinities have no JSON form: a record holding one
                // could not be read back. Such a figure fails the case by name.
                let bad: Vec<String> = result
                    .metrics
                    .iter()
                    .filter(|m| !m.value.is_finite())
                    .map(|m| format!("{} = {}", m.name, m.value))
                    .collect();
                result.metrics.retain(|m| m.value.is_finite());
                match outcome.verdict {
                    _ if !bad.is_empty() => {
                        CaseVerdict::Fail(format!("instrument reported figures that are not finite numbers: {}", bad.join(", ")))
                    }
                    Verdict::Pass => CaseVerdict::Pass,
                    Verdict::Fail(r) => CaseVerdict::Fail(r),
                    Verdict::Lost(r) => CaseVerdict::Lost(r),
                    Verdict::NotApplicable(r) => CaseVerdict::NotApplicable(r),
                }
            }
        };
        result.verdict = lost_wins(result.verdict, result.log.first_lost.as_deref());
        result.elapsed = started.elapsed();
        result
    }
}

/// A lost call loses the case whatever the instrument concluded: a dead
/// server is never scored as a wrong answer, nor a swallowed error as a pass.
fn lost_wins(verdict: CaseVerdict, first_lost: Option<&str>) -> CaseVerdict {
    match (verdict, first_lost) {
        (CaseVerdict::Lost(r), _) => CaseVerdict::Lost(r),
        (_, Some(reason)) => CaseVerdict::Lost(reason.to_string()),
        (other, None) => other,
    }
}

/// A trap as a sentence naming its cause: CPU budget, memory limit, panic
/// (with the guest's own message from stderr), or the trap itself.
fn trap_message(err: &wasmtime::Error, stderr: &MemoryOutputPipe, limits: &Limits) -> String {
    let guest_said = String::from_utf8_lossy(&stderr.contents()).trim().to_string();
    let full = format!("{err:#}");
    if matches!(err.downcast_ref::<Trap>(), Some(Trap::OutOfFuel)) {
        return format!("instrument exceeded its CPU budget of {} fuel units (does it loop?)", limits.fuel);
    }
    if full.contains("growing memory") {
        return format!("instrument exceeded its memory limit of {} MiB", limits.memory_bytes / (1024 * 1024));
    }
    if let Some(at) = guest_said.find("panicked at") {
        return format!("instrument panicked: {}", guest_said[at..].replace('\n', " "));
    }
    if guest_said.is_empty() {
        format!("instrument trapped: {full}")
    } else {
        format!("instrument trapped: {full} (stderr: {guest_said})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_call_overrides_any_other_verdict() {
        let lost = Some("connection refused");
        assert_eq!(lost_wins(CaseVerdict::Pass, lost), CaseVerdict::Lost("connection refused".into()));
        assert_eq!(lost_wins(CaseVerdict::Fail("wrong".into()), lost), CaseVerdict::Lost("connection refused".into()));
        assert_eq!(
            lost_wins(CaseVerdict::NotApplicable("n/a".into()), lost),
            CaseVerdict::Lost("connection refused".into())
        );
        assert_eq!(lost_wins(CaseVerdict::Lost("own".into()), lost), CaseVerdict::Lost("own".into()));
        assert_eq!(lost_wins(CaseVerdict::Pass, None), CaseVerdict::Pass);
    }
}
