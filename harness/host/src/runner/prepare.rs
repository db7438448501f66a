//! Building and loading a suite's instruments and listing their cases. A
//! build failure, or a file that is not an instrument component, stops the
//! run before any case (exit 5); a trap or panic while describing itself or
//! listing, or names that are not valid, break only that instrument.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::limits::Limits;
use crate::names::check_segments;
use crate::plugin::{self, CaseInfo, InstrumentPlugin, PluginHost};
use crate::suite::{self, Suite};

/// One instrument as the run uses it (a paired instrument once per arm).
pub struct Instrument {
    /// The loaded component.
    pub plugin: InstrumentPlugin,
    /// Its config as JSON text (with `arm` for a paired copy).
    pub config: String,
    /// Its cases.
    pub cases: Vec<CaseInfo>,
    /// Its cases run alone.
    pub exclusive: bool,
    /// For a paired instrument: this copy's arm and its target's name.
    pub arm: Option<(String, String)>,
}

impl Instrument {
    /// The case id prefix: `name` or `name::arm`.
    pub fn prefix(&self) -> String {
        match &self.arm {
            Some((arm, _)) => format!("{}::{arm}", self.plugin.info.name),
            None => self.plugin.info.name.clone(),
        }
    }
}

/// An instrument that could not describe itself or list its cases: it
/// becomes one failing case, and the other instruments go on.
pub struct Broken {
    /// A name for it (its own, or its source's).
    pub name: String,
    /// Why.
    pub message: String,
}

impl Broken {
    /// `<name>::setup::load`.
    pub fn case_id(&self) -> String {
        format!("{}::setup::load", self.name)
    }
}

/// What a suite prepared into.
pub struct Prepared {
    /// The sandbox.
    pub host: PluginHost,
    /// Instruments that listed their cases.
    pub instruments: Vec<Instrument>,
    /// Instruments that did not.
    pub broken: Vec<Broken>,
}

impl Prepared {
    /// Every case id, instruments' then broken ones'.
    pub fn case_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .instruments
            .iter()
            .flat_map(|i| i.cases.iter().map(move |c| format!("{}::{}", i.prefix(), c.name)))
            .collect();
        ids.extend(self.broken.iter().map(Broken::case_id));
        ids
    }
}

/// A name for an instrument that could not say its own (a file name is not
/// trusted either: it is reduced to a valid name).
fn source_label(source: &suite::Source) -> String {
    let raw = match source {
        suite::Source::Crate(name) => name.clone(),
        suite::Source::Wasm { path, .. } => {
            path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned())
        }
    };
    let clean: String =
        raw.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    match clean.trim_start_matches(['_', '-']) {
        "" => "instrument".into(),
        s => s.to_string(),
    }
}

/// Build and load the suite's instruments and list their cases.
pub fn prepare(
    rt: &tokio::runtime::Runtime,
    config: &Config,
    suite: &Suite,
    files: &Arc<BTreeMap<String, Vec<u8>>>,
    arm_overrides: &[(String, String)],
) -> Result<Prepared, Error> {
    let host = PluginHost::new(Some(&crate::plugin::compile_cache_dir()), Limits::of_run(config))?;
    let mut instruments: Vec<Instrument> = Vec::new();
    let mut broken = Vec::new();
    let trusted = plugin::trusted_workspaces(&config.root);
    for (i, entry) in suite.instruments.iter().enumerate() {
        let (wasm, pin) = plugin::component_for(&suite.dir, &entry.source, &trusted)?;
        let pin = pin.as_deref();
        // A file that is not an instrument component is the suite's to
        // fix, said before any case: never a measurement file with a
        // failed case in its place.
        let loaded = rt.block_on(host.load(&wasm, pin)).map_err(|e| {
            Error::new(
                e.kind,
                format!("{}: instrument #{}: {}", suite.dir.join("suite.toml").display(), i + 1, e.message),
            )
        })?;
        let plugin = match loaded {
            Ok(plugin) => plugin,
            Err(message) => {
                broken.push(Broken { name: source_label(&entry.source), message });
                continue;
            }
        };
        if let Err(why) = check_segments("instrument name", &plugin.info.name).and_then(|()| {
            if plugin.info.name.contains("::") {
                Err(format!("instrument name {:?} holds \"::\"", plugin.info.name))
            } else {
                Ok(())
            }
        }) {
            broken.push(Broken { name: source_label(&entry.source), message: why });
            continue;
        }
        if let Some(twin) = instruments.iter().find(|i| i.plugin.info.name == plugin.info.name && i.arm.is_none()) {
            return Err(Error::new(
                ErrorKind::Setup,
                format!("suite {}: two instruments are named {}", suite.name, twin.plugin.info.name),
            ));
        }
        // A paired instrument runs once per arm, told its arm in its config.
        let copies: Vec<(Option<(String, String)>, String)> = if entry.arms.is_empty() {
            vec![(None, entry.config.clone())]
        } else {
            entry
                .arms
                .iter()
                .map(|(arm, default_target)| {
                    let target = arm_overrides.iter().find(|(a, _)| a == arm).map_or(default_target, |(_, t)| t);
                    let mut table: serde_json::Map<String, serde_json::Value> =
                        serde_json::from_str(&entry.config).unwrap_or_default();
                    table.insert("arm".into(), arm.clone().into());
                    (Some((arm.clone(), target.clone())), serde_json::Value::Object(table).to_string())
                })
                .collect()
        };
        for (arm, config) in copies {
            let label = match &arm {
                Some((a, _)) => format!("{}::{a}", plugin.info.name),
                None => plugin.info.name.clone(),
            };
            check_text_files(suite, &label, &config, files)?;
            let listed = rt.block_on(host.cases(&plugin, files.clone(), &config)).and_then(|cases| {
                for c in &cases {
                    check_segments("case name", &c.name).map_err(|e| Error::new(ErrorKind::Plugin, e))?;
                }
                Ok(cases)
            });
            // A config or data file the instrument refuses is the suite's
            // error: the run stops before any case (exit 3), naming the suite
            // file, the instrument and its words (the field).
            let listed = match listed {
                Err(e) if e.kind == ErrorKind::Setup => {
                    return Err(Error::new(
                        ErrorKind::Setup,
                        format!("{}: {}", suite.dir.join("suite.toml").display(), e.message),
                    ));
                }
                other => other.map_err(|e| e.message),
            };
            match listed {
                Ok(cases) => instruments.push(Instrument {
                    plugin: plugin.clone(),
                    config,
                    cases,
                    exclusive: entry.exclusive,
                    arm,
                }),
                Err(message) => broken.push(Broken { name: label, message }),
            }
        }
    }
    let prepared = Prepared { host, instruments, broken };
    check_row_instruments(suite, &prepared)?;
    // One record per case: an id twice (two entries of one instrument, or a
    // case listed twice) would have its records and snapshots collide.
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = prepared.case_ids().into_iter().find(|id| !seen.insert(id.clone())) {
        return Err(Error::setup(format!("suite {}: case {dup} is listed twice", suite.name)));
    }
    Ok(prepared)
}

/// Every row the suite declares is fed by one of its instruments, by the
/// name the instrument gives itself: a row no instrument feeds is the
/// suite's error (exit 3), said before any case. Not checked while an
/// instrument of the suite failed to load (its name is not known).
fn check_row_instruments(suite: &Suite, prepared: &Prepared) -> Result<(), Error> {
    if !prepared.broken.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = prepared.instruments.iter().map(|i| i.plugin.info.name.as_str()).collect();
    for (i, row) in suite.rows.iter().enumerate() {
        if !names.contains(&row.instrument.as_str()) {
            return Err(Error::new(
                ErrorKind::Setup,
                format!(
                    "{}: row #{} ({:?}): instrument: {:?} is no instrument of this suite (its instruments: {})",
                    suite.dir.join("suite.toml").display(),
                    i + 1,
                    row.title,
                    row.instrument,
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Data files an instrument's config names that must be text (by their
/// extension) and are not UTF-8: the suite's error, found before any case
/// runs rather than as a failed case.
fn check_text_files(
    suite: &Suite,
    instrument: &str,
    config: &str,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), Error> {
    const TEXT: &[&str] = &["json", "jsonl", "txt", "toml", "md", "csv", "tsv", "yaml", "yml", "py"];
    fn walk<'a>(field: String, v: &'a serde_json::Value, out: &mut Vec<(String, &'a str)>) {
        match v {
            serde_json::Value::String(s) => out.push((field, s)),
            serde_json::Value::Array(a) => {
                a.iter().enumerate().for_each(|(i, v)| walk(format!("{field}[{i}]"), v, out))
            }
            serde_json::Value::Object(o) => o
                .iter()
                .for_each(|(k, v)| walk(if field.is_empty() { k.clone() } else { format!("{field}.{k}") }, v, out)),
            _ => {}
        }
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(config) else { return Ok(()) };
    let mut named = Vec::new();
    walk(String::new(), &value, &mut named);
    for (field, path) in named {
        let Some(bytes) = files.get(path) else { continue };
        let text = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| TEXT.contains(&e.to_ascii_lowercase().as_str()));
        if text && let Err(e) = std::str::from_utf8(bytes) {
            return Err(Error::new(
                ErrorKind::Setup,
                format!(
                    "{}: instrument {instrument}: field {field}: data file {path} is not UTF-8 text (invalid byte at offset {})",
                    suite.dir.join("suite.toml").display(),
                    e.valid_up_to()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuse `--arm NAME=…` for an arm the suite does not have.
pub fn check_arm_overrides(suite: &Suite, arms: &[(String, String)]) -> Result<(), Error> {
    match arms.iter().find(|(a, _)| !suite.instruments.iter().any(|i| i.arms.contains_key(a))) {
        Some((arm, _)) => Err(Error::setup(format!("--arm {arm}=…: suite {} has no arm named {arm}", suite.name))),
        None => Ok(()),
    }
}
