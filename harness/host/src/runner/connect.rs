//! Reaching the run's targets: the one under test, each paired arm's, and
//! the judge. A target is launched (and stopped when dropped) or reached at
//! its URL, probed, and recorded with what it held before any request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sparktest_contract::facts as fact;
use sparktest_record::TargetInfo;

use crate::config::{Config, ForcedToolChoice, TargetConfig};
use crate::error::{Error, ErrorKind};
use crate::plugin::Restarter;
use crate::redact::Redactor;
use crate::target::{self, Launched};
use sparktest_endpoint::{
    Client, ClientConfig, Endpoint, Footprint, ProbeError, RetryBudget, Secret, Timeouts, redact_url,
};

/// A target the run reaches.
pub struct Connected {
    /// What the manifest records.
    pub info: TargetInfo,
    /// How cases reach it.
    pub endpoint: Arc<Endpoint>,
    /// The server, when the harness launched it (stopped on drop).
    pub launched: Option<Arc<Mutex<Launched>>>,
}

impl Connected {
    /// Restarting the server, for a launched one.
    pub fn restarter(&self) -> Option<Restarter> {
        let launched = self.launched.clone()?;
        Some(Arc::new(move || launched.lock().unwrap_or_else(|p| p.into_inner()).restart().map_err(|e| e.message)))
    }
}

/// What every connection of a run shares.
pub struct Connector<'a> {
    /// The project configuration.
    pub config: &'a Config,
    /// Keys met so far, to keep them out of every output.
    pub redactor: Redactor,
    /// One retry budget for the whole run.
    pub retry: Arc<RetryBudget>,
}

/// Where the harness keeps its cache (components, logs, digests).
pub fn cache_dir(config: &Config) -> PathBuf {
    config.path(Path::new("target/sparktest"))
}

/// A run's targets by name, with the keys they use.
pub fn api_key(name: &str, cfg: &TargetConfig) -> Result<Option<String>, Error> {
    let Some(var) = &cfg.api_key_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(key) if !key.is_empty() => Ok(Some(key)),
        _ => Err(Error::new(
            ErrorKind::Setup,
            format!("target {name}: api-key-env names {var}, which is not set in the environment"),
        )),
    }
}

impl Connector<'_> {
    /// A connector for a run, its retry budget and the keys of every target
    /// it may reach (so no output ever holds one).
    pub fn new<'c>(config: &'c Config, targets: &[(&str, &TargetConfig)]) -> Result<Connector<'c>, Error> {
        let mut redactor = Redactor::default();
        for (name, cfg) in targets {
            // A missing key is an error when the target is reached, not here
            // (listing cases needs no key).
            if let Ok(Some(key)) = api_key(name, cfg)
                && !redactor.add(&key)
            {
                // A key that short could not be redacted without rewriting
                // ordinary words: refused, as the README says.
                return Err(Error::new(
                    ErrorKind::Setup,
                    format!(
                        "target {name}: the API key in {} is shorter than {} characters; keys that short are refused, \
                         since they could not be redacted safely",
                        cfg.api_key_env.as_deref().unwrap_or("its api-key-env"),
                        crate::redact::MIN_SECRET
                    ),
                ));
            }
            if let Some(url) = &cfg.base_url
                && let Some((_, rest)) = url.split_once("://")
            {
                let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
                if let Some((userinfo, _)) = authority.rsplit_once('@') {
                    redactor.add(userinfo);
                    if let Some((_, password)) = userinfo.split_once(':') {
                        redactor.add(password);
                    }
                }
            }
        }
        let run = &config.run;
        let retry = Arc::new(RetryBudget::new(Duration::from_secs(run.retry_budget_secs), run.retry_attempts.max(1)));
        Ok(Connector { config, redactor, retry })
    }

    fn client_config(&self, key: Option<String>, model_aliases: &[String]) -> ClientConfig {
        let run = &self.config.run;
        ClientConfig {
            timeouts: Timeouts {
                connect: Duration::from_secs(run.connect_timeout_secs),
                request: Duration::from_secs(run.request_timeout_secs),
                idle: Duration::from_secs(run.idle_timeout_secs),
                head: Duration::from_secs(run.head_timeout_secs),
                aux: Duration::from_secs(run.aux_timeout_secs),
            },
            max_reply_bytes: usize::try_from(run.max_reply_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            max_event_bytes: usize::try_from(run.max_event_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            retry: self.retry.clone(),
            api_key: key.map(Secret::new),
            model_aliases: model_aliases.to_vec(),
        }
    }

    /// Launch (if configured) and probe one target. For a launched target,
    /// what it holds before any request is added to its facts.
    pub fn connect(&self, rt: &tokio::runtime::Runtime, name: &str, cfg: &TargetConfig) -> Result<Connected, Error> {
        let config = self.config;
        let key = api_key(name, cfg)?;
        let mut launched: Option<Launched> = None;
        let mut footprint = None;
        let base_url = match (&cfg.base_url, &cfg.launch) {
            (Some(url), _) => url.clone(),
            (None, Some(launch)) => {
                crate::warn_line!("sparktest: launching target {name} …");
                let before = crate::hostinfo::memory_available();
                let l = rt.block_on(target::launch(
                    config,
                    name,
                    launch,
                    &cache_dir(config),
                    key.as_deref(),
                    &self.redactor,
                ))?;
                // Measured once healthy and before any request: what the
                // serve holds doing nothing.
                if let Some((rss, pids)) = crate::hostinfo::process_tree(l.pid) {
                    footprint = Some(Footprint {
                        resident_bytes: rss,
                        gpu_process_memory_mib: crate::hostinfo::gpu_process_memory_mib(&pids),
                        mem_available_before_bytes: before,
                        mem_available_after_bytes: crate::hostinfo::memory_available(),
                    });
                }
                let url = l.base_url.clone();
                launched = Some(l);
                url
            }
            (None, None) => unreachable!("config validation guarantees a base-url or a launch"),
        };
        let client = Client::new(&base_url, &cfg.model, self.client_config(key, &cfg.model_aliases))
            .map_err(|e| Error::new(ErrorKind::Target, e))?;
        let command = launched.as_ref().map(|l| l.argv());
        let mut endpoint = rt.block_on(Endpoint::connect(client, command)).map_err(|e| {
            let hint = match e {
                ProbeError::ModelMismatch { .. } | ProbeError::Unauthorized { .. } => "; the run stops before any case",
                ProbeError::Unreachable { .. } => "",
            };
            Error::new(ErrorKind::Target, self.redactor.redact(&format!("target {name}: {e}{hint}")))
        })?;
        // What the box has free with the serve loaded and idle, and what a
        // token of KV costs: only where the harness can see the box (for a
        // server it did not launch, without its command and log).
        let local = launched.is_some() || is_loopback(&base_url);
        let kv_bytes = local.then(|| {
            let (command, log) =
                launched.as_ref().map_or((Vec::new(), String::new()), |l| (l.argv().to_vec(), l.log_text()));
            endpoint.engine().kv_bytes_per_token(endpoint.facts(), &command, &log)
        });
        let facts = endpoint.facts_mut();
        facts.kv_bytes = kv_bytes.flatten();
        if local {
            facts.memory_pools = crate::hostinfo::memory_pools();
        } else {
            facts.memory_unseen = Some(
                "the server is on another machine: the harness cannot see its memory (run the harness on the box)"
                    .into(),
            );
        }
        match &footprint {
            Some(f) => {
                facts.extra.push((fact::FOOTPRINT_RSS_BYTES.name().into(), f.resident_bytes.to_string()));
                if let Some(mib) = f.gpu_process_memory_mib {
                    facts.extra.push((fact::FOOTPRINT_GPU_PROCESS_MEMORY_MIB.name().into(), mib.to_string()));
                }
                if let Some(b) = f.mem_available_before_bytes {
                    facts.extra.push((fact::FOOTPRINT_MEM_AVAILABLE_BEFORE_BYTES.name().into(), b.to_string()));
                }
                if let Some(a) = f.mem_available_after_bytes {
                    facts.extra.push((fact::FOOTPRINT_MEM_AVAILABLE_AFTER_BYTES.name().into(), a.to_string()));
                }
            }
            None => {
                let why = if launched.is_some() {
                    "the harness launched this server but could not read its processes' memory"
                } else {
                    "the harness did not launch this server, so it cannot see its memory"
                };
                facts.extra.push((fact::FOOTPRINT_NOT_MEASURED.name().into(), why.into()));
                facts.footprint_unmeasured = Some(why.into());
            }
        }
        facts.footprint = footprint;
        if cfg.tool_choice == Some(ForcedToolChoice::Required) {
            endpoint.require_tool_calls();
        }
        let facts = endpoint.facts().clone();
        let info = target_info(name, cfg, &base_url, &facts, launched.as_ref(), config);
        Ok(Connected { info, endpoint: Arc::new(endpoint), launched: launched.map(|l| Arc::new(Mutex::new(l))) })
    }
}

/// Whether a URL's host is this machine.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.split_once(']'))
        .map_or_else(|| host.split(':').next().unwrap_or(""), |(h, _)| h);
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn target_info(
    name: &str,
    cfg: &TargetConfig,
    base_url: &str,
    facts: &sparktest_endpoint::ServerFacts,
    launched: Option<&Launched>,
    config: &Config,
) -> TargetInfo {
    let mut target_facts: Vec<(String, String)> =
        cfg.pins.iter().map(|(k, v)| (format!("pin.{k}"), v.clone())).collect();
    if let Some(l) = launched {
        target_facts.extend(l.provisioned_digests.iter().map(|(k, v)| (format!("provisioned.{k}"), v.clone())));
    }
    target_facts.extend(facts.extra.iter().cloned());
    for (k, v) in [
        (fact::CONTEXT_PER_REQUEST.name(), facts.context_per_request.map(|n| n.to_string())),
        (fact::SLOTS.name(), facts.slots.map(|n| n.to_string())),
        (fact::KV_POOL_TOKENS.name(), facts.kv_pool_tokens.map(|n| n.to_string())),
        (fact::VISION.name(), facts.vision.map(|v| v.to_string())),
        ("kv_bytes_per_token", facts.kv_bytes.as_ref().map(|k| format!("{:.1} ({})", k.per_token, k.source))),
        ("memory_unseen", facts.memory_unseen.clone()),
    ] {
        if let Some(v) = v {
            target_facts.push((k.to_string(), v));
        }
    }
    for p in &facts.memory_pools {
        target_facts.push((
            format!("memory_pool.{}", p.kind.as_str()),
            format!("{}: {} of {} bytes free", p.device, p.free_bytes, p.total_bytes),
        ));
    }
    if let Some(l) = launched {
        target_facts.push((sparktest_record::LAUNCH_PORT.to_string(), l.port.to_string()));
    }
    // The model file: the engine's own word (llama.cpp's /props), else
    // what the launch gave it (vLLM reports none); a folder's digest is the
    // one its provisioning program printed.
    let served = launched.and_then(|l| l.model.as_ref());
    let model_path = facts.model_path.clone().or_else(|| served.map(|m| m.path.clone()));
    let model_sha256 = launched.and_then(|_| {
        let path = model_path.as_deref()?;
        if Path::new(path).is_dir() {
            let printed = served.filter(|m| m.path == path).and_then(|m| m.sha256.clone());
            if printed.is_none() {
                crate::warn_line!(
                    "sparktest: warning: model digest not taken: {path} is a folder and no digest of it was provisioned"
                );
            }
            return printed;
        }
        crate::hostinfo::file_sha256(Path::new(path), &cache_dir(config))
            .map_err(|e| crate::warn_line!("sparktest: warning: model digest not taken: {e}"))
            .ok()
    });
    TargetInfo {
        name: name.to_string(),
        base_url: redact_url(base_url),
        model_id: facts.model_id.clone(),
        engine: facts.engine.clone(),
        build: facts.build.clone(),
        model_path,
        model_sha256,
        launch_command: launched.map(|l| l.command.clone()),
        facts: target_facts,
        host: launched.map(|_| crate::hostinfo::snapshot()),
        tool_choice: cfg.tool_choice.map(|ForcedToolChoice::Required| "required".to_string()),
        label: cfg.label.clone(),
        note: cfg.note.clone(),
        description: (!cfg.description.is_empty()).then(|| cfg.description.clone()),
    }
}

/// The run's targets by name: connected once each, whatever roles they
/// play (target, arm, judge).
#[derive(Default)]
pub struct Targets(pub BTreeMap<String, Connected>);

impl Targets {
    /// Connect `name` unless it already is.
    pub fn ensure(
        &mut self,
        rt: &tokio::runtime::Runtime,
        c: &Connector,
        name: &str,
        cfg: &TargetConfig,
    ) -> Result<(), Error> {
        if !self.0.contains_key(name) {
            let connected = c.connect(rt, name, cfg)?;
            self.0.insert(name.to_string(), connected);
        }
        Ok(())
    }

    /// A connected target.
    pub fn get(&self, name: &str) -> &Connected {
        &self.0[name]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_this_machine() {
        for url in ["http://127.0.0.1:8080", "http://localhost:1/v1", "http://[::1]:8000", "http://u:p@127.0.0.2:9"] {
            assert!(is_loopback(url), "{url}");
        }
        for url in ["http://spark.local:8000", "http://10.0.0.5:8000", "https://api.example.com"] {
            assert!(!is_loopback(url), "{url}");
        }
    }
}
