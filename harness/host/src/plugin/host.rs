//! The sandbox: wasmtime engine, component cache, limits, one store per case.
//!
//! A plugin is untrusted code. It gets no files, sockets, environment or
//! clocks; its memories, tables and instances are capped, an instrument's
//! CPU is metered by fuel (and it yields often, so a wall-clock limit can
//! always fire), a reporter's is bounded by the wall-clock limit alone
//! (epoch interruption: it yields every tick), and what it hands the host
//! in one call is capped. `describe`, `cases`,
//! `render` and `run` each have a wall-clock limit. How a case's run ended
//! ([`Ended`]: the guest's finding, out of time while waiting on the server
//! or not, a trap) is reported as it is; what verdict that makes is the
//! runner's (`runner::verdict`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sparktest_record::InstrumentInfo;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimitsBuilder, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

use super::adapter::{Finding, GuestInfo};
use super::cache::CompileCache;
use super::state::RunLimits;
use super::state::{CallLog, CaseState, Judge, Restarter};
use super::{v1, v2, v3, v4, v5};
use crate::error::{Error, ErrorKind};
use crate::files::sha256_hex;
use crate::limits::Limits;
use sparktest_endpoint::Endpoint;

/// Fuel between yields to the async runtime: a guest in a tight loop still
/// lets the wall-clock limit fire.
const YIELD_EVERY_FUEL: u64 = 10_000_000;

/// The released interface versions, oldest first.
pub const INTERFACES: [&str; 5] = ["0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0"];

/// How often a reporter yields to the async runtime, so that its wall-clock
/// limit can fire.
const REPORTER_TICK: Duration = Duration::from_millis(10);

/// The wasmtime engines and linkers shared by all plugins.
pub struct PluginHost {
    engine: Engine,
    linker: Linker<CaseState>,
    /// Reporters run on an engine of their own, without fuel metering: a
    /// board of a thousand measurement files spent about 10% of its render
    /// counting fuel. A reporter is one call with no server to wait on, so
    /// its wall-clock limit bounds its CPU; epoch interruption makes it
    /// yield every [`REPORTER_TICK`] so that the limit fires.
    reporter_engine: Engine,
    reporter_linker: Linker<CaseState>,
    limits: Limits,
    cache: CompileCache,
}

/// The CPU bound of a store: fuel (instruments), or the epoch ticks of
/// [`Ticker`] (reporters).
#[derive(Clone, Copy, PartialEq)]
enum Meter {
    Fuel,
    Epoch,
}

/// Advances an engine's epoch every [`REPORTER_TICK`] while it lives.
struct Ticker(Option<std::sync::mpsc::Sender<()>>, Option<std::thread::JoinHandle<()>>);

impl Ticker {
    fn start(engine: &Engine) -> Result<Ticker, Error> {
        Self::start_on(engine, std::thread::Builder::new().name("sparktest-reporter-ticker".into()))
    }

    /// Without its thread a reporter never yields and its wall-clock limit
    /// cannot fire: no render starts then.
    fn start_on(engine: &Engine, thread: std::thread::Builder) -> Result<Ticker, Error> {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let engine = engine.clone();
        let thread = thread
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(REPORTER_TICK) {
                    engine.increment_epoch();
                }
            })
            .map_err(|e| {
                plugin_err(format!(
                    "failed to start the reporter's clock thread, without which its wall-clock limit cannot fire: {e}"
                ))
            })?;
        Ok(Ticker(Some(stop), Some(thread)))
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        // Dropping the sender ends the thread's wait at once.
        self.0.take();
        if let Some(t) = self.1.take() {
            let _ = t.join();
        }
    }
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

/// The instrument world of one released interface version.
#[derive(Clone)]
enum Pre {
    V1(v1::InstrumentPre<CaseState>),
    V2(v2::InstrumentPre<CaseState>),
    V3(v3::InstrumentPre<CaseState>),
    V4(v4::InstrumentPre<CaseState>),
    V5(v5::InstrumentPre<CaseState>),
}

/// The reporter world of one released interface version.
enum ReporterPre {
    V1(v1::reporter::ReporterPre<CaseState>),
    V2(v2::reporter::ReporterPre<CaseState>),
    V3(v3::reporter::ReporterPre<CaseState>),
    V4(v4::reporter::ReporterPre<CaseState>),
    V5(v5::reporter::ReporterPre<CaseState>),
}

/// The same call on whichever version a component was built against: the
/// generated types differ by version, the calls do not.
macro_rules! each_version {
    (reporter $pre:expr, $p:ident => $call:expr) => {
        match $pre {
            ReporterPre::V1($p) => $call,
            ReporterPre::V2($p) => $call,
            ReporterPre::V3($p) => $call,
            ReporterPre::V4($p) => $call,
            ReporterPre::V5($p) => $call,
        }
    };
    ($pre:expr, $p:ident => $call:expr) => {
        match $pre {
            Pre::V1($p) => $call,
            Pre::V2($p) => $call,
            Pre::V3($p) => $call,
            Pre::V4($p) => $call,
            Pre::V5($p) => $call,
        }
    };
}

/// A loaded instrument component, ready to instantiate per case.
#[derive(Clone)]
pub struct InstrumentPlugin {
    pre: Pre,
    /// What it says about itself, and the digest of its component.
    pub info: InstrumentInfo,
    /// The interface version it was built against, e.g. `0.4.0`.
    pub interface: &'static str,
}

/// A case's cases list entry, host side.
#[derive(Debug, Clone)]
pub struct CaseInfo {
    /// `group::case`.
    pub name: String,
    /// Rows or categories it feeds.
    pub tags: Vec<String>,
}

/// How a guest's `run` ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// It returned its finding.
    Returned(Finding),
    /// It ran past its wall-clock limit: while a call to the server was in
    /// flight, or while it computed or slept.
    OutOfTime {
        /// A call was in flight when the limit fired.
        waiting_on_server: bool,
        /// The limit.
        limit: Duration,
    },
    /// It trapped (its CPU or memory limit, a panic …), in words.
    Trapped(String),
}

/// Everything a finished case produced, as it happened: the verdict is the
/// runner's to make from it (`runner::verdict`).
pub struct CaseResult {
    /// How the guest's run ended: its finding, or why there is none.
    pub ended: Ended,
    /// The endpoint calls.
    pub log: CallLog,
    /// Wall time of the case.
    pub elapsed: Duration,
}

impl CaseResult {
    /// The guest's finding, when it returned one.
    pub fn finding(&self) -> Option<&Finding> {
        match &self.ended {
            Ended::Returned(finding) => Some(finding),
            _ => None,
        }
    }
}

/// What a case may reach besides its own target.
#[derive(Clone, Default)]
pub struct Reach {
    /// The judge, when the run has one.
    pub judge: Option<Arc<Judge>>,
    /// How to restart the target, for an exclusive instrument on a server the
    /// harness launched.
    pub restart: Option<Restarter>,
    /// The client's own ceiling, measured before the run: a load that
    /// streamed past its margin is client-bound.
    pub ceiling: Option<sparktest_record::ClientCeiling>,
}

fn plugin_err(message: String) -> Error {
    Error::new(ErrorKind::Plugin, message)
}

impl PluginHost {
    /// An engine with fuel metering and, when `cache_dir` is given, the
    /// compile cache there (`plugin/cache.rs`: a folder private to this
    /// user; one that is not is left unused, said once on stderr).
    pub fn new(cache_dir: Option<&Path>, limits: Limits) -> Result<Self, Error> {
        let err = |what: &str, e: wasmtime::Error| plugin_err(format!("{what}: {e:#}"));
        let cache = match cache_dir.map(CompileCache::open) {
            Some(Ok(cache)) => cache,
            Some(Err(why)) => {
                crate::warn_line!("note: compiled components are not cached this run: {why}");
                CompileCache::none()
            }
            None => CompileCache::none(),
        };
        let engine_for = |meter: Meter| {
            let mut config = Config::new();
            config.wasm_component_model(true);
            config.consume_fuel(meter == Meter::Fuel);
            config.epoch_interruption(meter == Meter::Epoch);
            Engine::new(&config).map_err(|e| err("failed to start wasmtime", e))
        };
        let engine = engine_for(Meter::Fuel)?;
        let reporter_engine = engine_for(Meter::Epoch)?;
        // One linker holds every version's imports: their names carry the
        // package version, so they never clash.
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|e| err("failed to link WASI", e))?;
        v1::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| err("failed to link the 0.1.0 imports", e))?;
        v2::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| err("failed to link the 0.2.0 imports", e))?;
        v3::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| err("failed to link the 0.3.0 imports", e))?;
        v4::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| err("failed to link the 0.4.0 imports", e))?;
        v5::Instrument::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| err("failed to link the 0.5.0 imports", e))?;
        // A reporter gets WASI (nothing granted) and the suite-data files only.
        let mut reporter_linker = Linker::new(&reporter_engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut reporter_linker).map_err(|e| err("failed to link WASI", e))?;
        v1::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| err("failed to link the 0.1.0 reporter imports", e))?;
        v2::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| err("failed to link the 0.2.0 reporter imports", e))?;
        v3::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| err("failed to link the 0.3.0 reporter imports", e))?;
        v4::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| err("failed to link the 0.4.0 reporter imports", e))?;
        v5::reporter::Reporter::add_to_linker::<_, HasSelf<_>>(&mut reporter_linker, |s| s)
            .map_err(|e| err("failed to link the 0.5.0 reporter imports", e))?;
        Ok(PluginHost { engine, linker, reporter_engine, reporter_linker, limits, cache })
    }

    fn store(
        &self,
        meter: Meter,
        endpoint: Option<Arc<Endpoint>>,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        reach: Reach,
    ) -> (Store<CaseState>, MemoryOutputPipe, Arc<AtomicBool>) {
        let stderr = MemoryOutputPipe::new(1 << 20);
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
        // Memory per linear memory, and a count of everything a component
        // can multiply: memories, tables, their elements, core instances.
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .memories(8)
            .tables(32)
            .table_elements(100_000)
            .instances(64)
            .trap_on_grow_failure(true)
            .build();
        let in_call = Arc::new(AtomicBool::new(false));
        let state = CaseState {
            run_limits: RunLimits {
                case_timeout: self.limits.case_timeout,
                request_timeout: self.limits.request_timeout,
                max_load_requests: sparktest_endpoint::MAX_LOAD_REQUESTS,
            },
            wasi,
            table: ResourceTable::new(),
            limits: super::state::Watched { limits, peak: 0 },
            endpoint,
            judge: reach.judge,
            restart: reach.restart,
            ceiling: reach.ceiling,
            files,
            log: CallLog::default(),
            last_window: None,
            in_call: in_call.clone(),
            deadline: None,
        };
        let engine = match meter {
            Meter::Fuel => &self.engine,
            Meter::Epoch => &self.reporter_engine,
        };
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_hostcall_fuel(self.limits.hostcall_bytes);
        store.set_max_component_handles(10_000);
        match meter {
            Meter::Fuel => {
                // set_fuel and the yield interval only fail when fuel is off,
                // and on this engine it is on.
                let _ = store.set_fuel(self.limits.fuel);
                let _ = store.fuel_async_yield_interval(Some(YIELD_EVERY_FUEL));
            }
            Meter::Epoch => {
                store.set_epoch_deadline(1);
                store.epoch_deadline_async_yield_and_update(1);
            }
        }
        (store, stderr, in_call)
    }

    /// Read a component and compile it (or fetch what this user compiled
    /// from the same bytes), with its sha256 (computed once: the pin, the
    /// cache and the record all use it); with a pin, the bytes compiled are
    /// the bytes checked.
    fn compile(&self, engine: &Engine, wasm: &Path, pin: Option<&str>) -> Result<(String, Component), Error> {
        let bytes =
            std::fs::read(wasm).map_err(|e| plugin_err(format!("failed to read component {}: {e}", wasm.display())))?;
        let digest = sha256_hex(&bytes);
        if let Some(expected) = pin
            && !digest.eq_ignore_ascii_case(expected)
        {
            return Err(Error::new(
                ErrorKind::Setup,
                format!("component {} changed after its pin was checked", wasm.display()),
            ));
        }
        let (component, _) = self
            .cache
            .component(engine, &bytes, &digest)
            .map_err(|e| plugin_err(format!("failed to compile component {}: {e:#}", wasm.display())))?;
        Ok((digest, component))
    }

    /// Refuse a component built against an interface version this host
    /// does not load (a component of a newer cargo-sparktest), saying so,
    /// before any linking that could only say "does not fit".
    fn known_interfaces(engine: &Engine, component: &Component, wasm: &Path) -> Result<(), Error> {
        let ty = component.component_type();
        let names: Vec<String> = ty.imports(engine).map(|(name, _)| name.to_string()).collect();
        match unknown_interface(names.iter().map(String::as_str)) {
            None => Ok(()),
            Some(version) => Err(plugin_err(format!(
                "component {} was built against interface sparktest:plugin@{version}, which this cargo-sparktest \
                 ({}) does not load (it loads {}): it comes from a newer build; run it with that build, or \
                 rebuild it against sparktest-sdk {}",
                wasm.display(),
                env!("CARGO_PKG_VERSION"),
                INTERFACES.join(", "),
                env!("CARGO_PKG_VERSION")
            ))),
        }
    }

    /// The version of the `sparktest:plugin` package a component imports
    /// (the oldest, if it names several); None when it imports none of it.
    fn imports_version(engine: &Engine, component: &Component) -> Option<&'static str> {
        let ty = component.component_type();
        let versions: Vec<&'static str> = ty
            .imports(engine)
            .filter_map(|(name, _)| name.strip_prefix("sparktest:plugin/"))
            .filter_map(|name| INTERFACES.into_iter().find(|v| name.ends_with(&format!("@{v}"))))
            .collect();
        versions.into_iter().min()
    }

    /// Run a setup call (`describe`, `cases`, `render`) within its limit.
    async fn setup<T>(
        &self,
        what: &str,
        stderr: &MemoryOutputPipe,
        call: impl std::future::Future<Output = wasmtime::Result<T>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(self.limits.setup_timeout, call).await {
            Err(_) => Err(format!("{what} exceeded its wall-clock limit of {}s", self.limits.setup_timeout.as_secs())),
            Ok(Err(trap)) => {
                // Only `render` is a reporter's call.
                let who = if what == "render" { "reporter" } else { "instrument" };
                Err(format!("{what}: {}", trap_message(who, &trap, stderr, &self.limits)))
            }
            Ok(Ok(v)) => Ok(v),
        }
    }

    /// Load (compile or fetch from cache) a component of any released
    /// version and ask it to describe itself.
    ///
    /// The outer error is the file's: not a component, not of the
    /// instrument world, or changed after its pin was checked; the run
    /// stops on it. The inner one is the instrument's own failure to
    /// describe itself (a trap, a panic, its wall-clock limit), which
    /// breaks only that instrument.
    pub async fn load(&self, wasm: &Path, pin: Option<&str>) -> Result<Result<InstrumentPlugin, String>, Error> {
        let (digest, component) = self.compile(&self.engine, wasm, pin)?;
        Self::known_interfaces(&self.engine, &component, wasm)?;
        let pre = self.linker.instantiate_pre(&component).map_err(|e| {
            plugin_err(format!(
                "component {} does not fit the instrument world ({}): {e:#}",
                wasm.display(),
                INTERFACES.join(", ")
            ))
        })?;
        // The exports of every version have the same shape, so they cannot
        // tell the versions apart: the imports' package version does. A
        // component that imports none of the package is tried as the newest,
        // then the older ones.
        let pre = match Self::imports_version(&self.engine, &component) {
            Some("0.1.0") => v1::InstrumentPre::new(pre).map(Pre::V1),
            Some("0.2.0") => v2::InstrumentPre::new(pre).map(Pre::V2),
            Some("0.3.0") => v3::InstrumentPre::new(pre).map(Pre::V3),
            Some("0.4.0") => v4::InstrumentPre::new(pre).map(Pre::V4),
            _ => v5::InstrumentPre::new(pre.clone()).map(Pre::V5).or_else(|e5| {
                v4::InstrumentPre::new(pre.clone())
                    .map(Pre::V4)
                    .or_else(|_| v3::InstrumentPre::new(pre.clone()).map(Pre::V3))
                    .or_else(|_| v2::InstrumentPre::new(pre.clone()).map(Pre::V2))
                    .or_else(|_| v1::InstrumentPre::new(pre).map(Pre::V1))
                    .map_err(|_| e5)
            }),
        }
        .map_err(|e| plugin_err(format!("component {} does not export the instrument world: {e:#}", wasm.display())))?;
        let (mut store, stderr, _) = self.store(Meter::Fuel, None, Arc::default(), Reach::default());
        let call = async {
            Ok::<GuestInfo, wasmtime::Error>(each_version!(&pre, p => {
                p.instantiate_async(&mut store).await?.call_describe(&mut store).await?.into()
            }))
        };
        let info = match self.setup("describe", &stderr, call).await {
            Ok(info) => info,
            Err(e) => return Ok(Err(format!("{} failed to describe itself: {e}", wasm.display()))),
        };
        let interface = match pre {
            Pre::V1(_) => "0.1.0",
            Pre::V2(_) => "0.2.0",
            Pre::V3(_) => "0.3.0",
            Pre::V4(_) => "0.4.0",
            Pre::V5(_) => "0.5.0",
        };
        Ok(Ok(InstrumentPlugin {
            pre,
            info: InstrumentInfo {
                name: info.name,
                row: info.row,
                version: info.version,
                description: info.description,
                component_sha256: digest,
                interface: Some(interface.to_string()),
            },
            interface,
        }))
    }

    /// Run a reporter component: measurement files in, artifacts out
    /// (relative paths, checked to stay inside the output folder).
    pub async fn render(
        &self,
        wasm: &Path,
        pin: Option<&str>,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        measurements: Vec<String>,
        config: &str,
    ) -> Result<Rendered, Error> {
        let (_, component) = self.compile(&self.reporter_engine, wasm, pin)?;
        Self::known_interfaces(&self.reporter_engine, &component, wasm)?;
        let pre = self
            .reporter_linker
            .instantiate_pre(&component)
            .map_err(|e| plugin_err(format!("component {} does not fit the reporter world: {e:#}", wasm.display())))?;
        let (mut store, stderr, _) = self.store(Meter::Epoch, None, files, Reach::default());
        let pre = match Self::imports_version(&self.reporter_engine, &component) {
            Some("0.1.0") => v1::reporter::ReporterPre::new(pre).map(ReporterPre::V1),
            Some("0.2.0") => v2::reporter::ReporterPre::new(pre).map(ReporterPre::V2),
            Some("0.3.0") => v3::reporter::ReporterPre::new(pre).map(ReporterPre::V3),
            Some("0.4.0") => v4::reporter::ReporterPre::new(pre).map(ReporterPre::V4),
            _ => v5::reporter::ReporterPre::new(pre.clone()).map(ReporterPre::V5).or_else(|e5| {
                v4::reporter::ReporterPre::new(pre.clone())
                    .map(ReporterPre::V4)
                    .or_else(|_| v3::reporter::ReporterPre::new(pre.clone()).map(ReporterPre::V3))
                    .or_else(|_| v2::reporter::ReporterPre::new(pre.clone()).map(ReporterPre::V2))
                    .or_else(|_| v1::reporter::ReporterPre::new(pre).map(ReporterPre::V1))
                    .map_err(|_| e5)
            }),
        }
        .map_err(|e| plugin_err(format!("component {} does not export the reporter world: {e:#}", wasm.display())))?;
        let call = async {
            let out = each_version!(reporter &pre, p => p
                .instantiate_async(&mut store)
                .await?
                .call_render(&mut store, &measurements, config)
                .await?
                .map(|list| list.into_iter().map(|a| (a.path, a.content)).collect::<Vec<_>>()));
            Ok::<_, wasmtime::Error>(out)
        };
        let ticking = Ticker::start(&self.reporter_engine)?;
        let result = self.setup("render", &stderr, call).await;
        drop(ticking);
        let result = result.map_err(|e| plugin_err(format!("reporter {} failed: {e}", wasm.display())))?;
        let artifacts = result.map_err(|e| Error::setup(format!("reporter {} refused: {e}", wasm.display())))?;
        let peak_memory = store.data().limits.peak;
        let artifacts = artifacts
            .into_iter()
            .map(|(path, content)| {
                let safe = !path.is_empty()
                    && Path::new(&path).components().all(|c| matches!(c, std::path::Component::Normal(_)));
                if safe {
                    Ok((path, content))
                } else {
                    Err(plugin_err(format!("reporter {} wrote outside its folder: {path:?}", wasm.display())))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Rendered { artifacts, peak_memory })
    }

    /// The instrument's cases for this config.
    pub async fn cases(
        &self,
        plugin: &InstrumentPlugin,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        config: &str,
    ) -> Result<Vec<CaseInfo>, Error> {
        let name = &plugin.info.name;
        let (mut store, stderr, _) = self.store(Meter::Fuel, None, files, Reach::default());
        let call = async {
            let listed = each_version!(&plugin.pre, p => p
                .instantiate_async(&mut store)
                .await?
                .call_cases(&mut store, config)
                .await?
                .map(|v| v.into_iter().map(|c| CaseInfo { name: c.name, tags: c.tags }).collect()));
            Ok::<Result<Vec<CaseInfo>, String>, wasmtime::Error>(listed)
        };
        let result = self
            .setup("listing", &stderr, call)
            .await
            .map_err(|e| plugin_err(format!("instrument {name} failed to list its cases: {e}")))?;
        // The instrument ran and said no: its config or data are wrong (a
        // setup error, exit 3), not the instrument broken.
        result.map_err(|e| Error::setup(format!("instrument {name} refused its config: {e}")))
    }

    /// Run one case in a fresh instance, within the limits.
    pub async fn run(
        &self,
        plugin: &InstrumentPlugin,
        endpoint: Arc<Endpoint>,
        files: Arc<BTreeMap<String, Vec<u8>>>,
        reach: Reach,
        config: &str,
        case: &str,
    ) -> CaseResult {
        let started = Instant::now();
        let (mut store, stderr, in_call) = self.store(Meter::Fuel, Some(endpoint), files, reach);
        let limit = self.limits.case_timeout;
        // A load is sized against the time the case has left.
        store.data_mut().deadline = Some((started + limit, limit));
        let run = async {
            Ok::<Finding, wasmtime::Error>(each_version!(&plugin.pre, p => {
                p.instantiate_async(&mut store).await?.call_run(&mut store, config, case).await?.into()
            }))
        };
        let ended = match tokio::time::timeout(limit, run).await {
            // Who used the time is known only here: the server (a call
            // was in flight) or the instrument.
            Err(_) => Ended::OutOfTime { waiting_on_server: in_call.load(Ordering::SeqCst), limit },
            Ok(Err(trap)) => Ended::Trapped(trap_message("instrument", &trap, &stderr, &self.limits)),
            Ok(Ok(finding)) => Ended::Returned(finding),
        };
        let log = std::mem::take(&mut store.data_mut().log);
        CaseResult { ended, log, elapsed: started.elapsed() }
    }
}

/// The first `sparktest:plugin` interface version among a component's
/// import names that this host does not load, if any.
fn unknown_interface<'a>(imports: impl Iterator<Item = &'a str>) -> Option<String> {
    imports.filter_map(|name| name.strip_prefix("sparktest:plugin/")).find_map(|rest| {
        let version = rest.split_once('@')?.1;
        (!INTERFACES.contains(&version)).then(|| version.to_string())
    })
}

/// A trap as a sentence naming its cause: CPU budget, memory limit, a limit
/// on what the instrument may hand the host, panic (with the guest's own
/// message from stderr), or the trap itself; `who` is the kind of plugin.
/// What a reporter made, and the most memory it grew to making it.
#[derive(Debug)]
pub struct Rendered {
    /// Each file's path (inside the board's folder) and bytes.
    pub artifacts: Vec<(String, Vec<u8>)>,
    /// Its largest linear memory at its peak, in bytes.
    pub peak_memory: usize,
}

fn trap_message(who: &str, err: &wasmtime::Error, stderr: &MemoryOutputPipe, limits: &Limits) -> String {
    let guest_said = String::from_utf8_lossy(&stderr.contents()).trim().to_string();
    let full = format!("{err:#}");
    if matches!(err.downcast_ref::<Trap>(), Some(Trap::OutOfFuel)) {
        return format!("{who} exceeded its CPU budget of {} fuel units (does it loop?)", limits.fuel);
    }
    if full.contains("growing memory") {
        return format!("{who} exceeded its memory limit of {} MiB", limits.memory_bytes / (1024 * 1024));
    }
    if full.contains("fuel allocated for hostcalls") || full.contains("too much data is being copied") {
        return format!(
            "{who} handed the host more than its limit of {} MiB in one call ({full})",
            limits.hostcall_bytes >> 20
        );
    }
    if let Some(at) = guest_said.find("panicked at") {
        return format!("{who} panicked: {}", guest_said[at..].replace('\n', " "));
    }
    if guest_said.is_empty() {
        format!("{who} trapped: {full}")
    } else {
        format!("{who} trapped: {full} (stderr: {guest_said})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            fuel: 1_000_000,
            memory_bytes: 1 << 20,
            case_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            setup_timeout: Duration::from_secs(5),
            hostcall_bytes: 1 << 20,
        }
    }

    #[test]
    fn a_component_of_an_interface_this_host_does_not_load_is_named() {
        let known = ["wasi:io/streams@0.2.0", "sparktest:plugin/endpoint@0.5.0", "sparktest:plugin/run@0.5.0"];
        assert_eq!(unknown_interface(known.into_iter()), None);
        let newer = ["sparktest:plugin/endpoint@0.5.0", "sparktest:plugin/endpoint@0.6.0"];
        assert_eq!(unknown_interface(newer.into_iter()).as_deref(), Some("0.6.0"));
    }

    #[test]
    fn a_reporter_whose_clock_thread_cannot_start_does_not_run() {
        let host = PluginHost::new(None, limits()).unwrap();
        // A stack no machine can map: the thread cannot be made.
        let thread = std::thread::Builder::new().stack_size(1 << 60);
        let Err(err) = Ticker::start_on(&host.reporter_engine, thread) else {
            panic!("a thread with a stack of 2^60 bytes started")
        };
        assert_eq!(err.kind, ErrorKind::Plugin, "{err}");
        assert!(err.message.starts_with("failed to start the reporter's clock thread"), "{err}");
        // The usual thread starts, and stops with its ticker.
        drop(Ticker::start(&host.reporter_engine).unwrap());
    }

    #[test]
    fn a_file_that_is_not_a_component_is_the_files_error_not_a_broken_instrument() {
        let host = PluginHost::new(None, limits()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // Text, and a core module (a wasm file, not a component).
        for (name, bytes) in [("passwd", &b"root:x:0:0:root:/root:/bin/bash\n"[..]), ("core.wasm", b"\0asm\x01\0\0\0")]
        {
            let file = dir.path().join(name);
            std::fs::write(&file, bytes).unwrap();
            let Err(err) = rt.block_on(host.load(&file, Some(&sha256_hex(bytes)))) else {
                panic!("{name} loaded as an instrument, or broke as one")
            };
            assert_eq!(err.kind, ErrorKind::Plugin, "{name}: {err}");
            assert!(err.message.contains("failed to compile component") && err.message.contains(name), "{err}");
        }
        // A file changed after its pin was checked: the suite's error.
        let file = dir.path().join("passwd");
        let err = rt.block_on(host.load(&file, Some(&"0".repeat(64)))).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Setup, "{err}");
    }
}
