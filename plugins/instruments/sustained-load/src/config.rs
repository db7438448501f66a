//! The suite's `[instrument.config]`, read field by field so that every
//! refusal names its field (`rates[1]`, `mixes[0].objectives.ttft`): the
//! host turns the refusal into exit 3, naming the suite file, before any
//! request is sent.
//!
//! ```toml
//! [instrument.config]
//! arrival = "poisson"            # constant | poisson | gamma (then burstiness = …)
//! seed = 20261202                # the arrival schedule's seed, recorded
//! rates = [0.1, 0.25]            # req/s: one `rate::<mix>::<rate>` case each
//! requests = 10                  # measured requests per rate (or duration_secs)
//! warmup = 1                     # sent first at each rate, left out
//! sweep_points = 5               # synchronous, throughput, then 3 rates between
//! sweep_below = [0.25, 0.5, 0.75] # and these shares of the synchronous rate first
//! goodput_threshold_pct = 90     # the row's figure: the highest rate meeting it
//! lost_budget_pct = 10           # more lost than this saturates a rate
//! objectives = { ttft = "2 s", tpot = "250 ms" }
//!
//! [[instrument.config.mixes]]
//! name = "agent-turn"
//! prompts = "sustained-load/agent-turn.json"
//! max_tokens = 24
//! ```

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::figures::Objectives;

/// How the intervals between intended sends are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Every interval `1/rate`.
    Constant,
    /// A Poisson process: exponential intervals.
    Poisson,
    /// Gamma intervals with this burstiness (vLLM's `--burstiness`).
    Gamma(f64),
}

impl Arrival {
    /// In words, for the record: `constant`, `poisson`, `gamma(0.5)`.
    pub fn words(self) -> String {
        match self {
            Arrival::Constant => "constant".into(),
            Arrival::Poisson => "poisson".into(),
            Arrival::Gamma(b) => format!("gamma({b})"),
        }
    }
}

/// One prompt of a mix: an optional system turn and the user's.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// The system turn, if any.
    #[serde(default)]
    pub system: Option<String>,
    /// The user's turn.
    pub user: String,
}

/// A mix of prompt and output lengths: one case per rate, and a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// The mix's name, a segment of its case names.
    pub name: String,
    /// The suite file of its prompts.
    pub prompts: String,
    /// Output tokens asked of each request.
    pub max_tokens: u32,
    /// Ask the engine to write all `max_tokens` (`ignore_eos`), so that
    /// every request has the same output length.
    pub ignore_eos: bool,
    /// Its fixed offered rates, req/s.
    pub rates: Vec<f64>,
    /// What a good request meets.
    pub objectives: Objectives,
}

/// The instrument's settings, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The mixes, each its own cases.
    pub mixes: Vec<Mix>,
    /// The arrival process of every rated load.
    pub arrival: Arrival,
    /// The schedule's seed.
    pub seed: u64,
    /// Measured requests of a load.
    pub requests: u32,
    /// Where set, a rated load sends `ceil(rate × duration)` requests (at
    /// least two) instead of `requests`.
    pub duration_secs: Option<f64>,
    /// Warm-up requests before each load's measured ones.
    pub warmup: u32,
    /// At most this many in flight at an offered rate.
    pub max_concurrency: Option<u32>,
    /// Points of a sweep: the synchronous baseline, the throughput, and
    /// `sweep_points - 2` rates.
    pub sweep_points: u32,
    /// Shares of the synchronous baseline's achieved rate a sweep offers
    /// first, below the rates between the baseline and the throughput: an
    /// open loop queues where one request at a time never waits, so a
    /// server may hold none of the rates above its one-at-a-time rate and
    /// still hold half of it.
    pub sweep_below: Vec<f64>,
    /// The goodput a rate must reach for the row's figure, %.
    pub goodput_threshold_pct: f64,
    /// More lost or refused than this share, %, saturates a rate.
    pub lost_budget_pct: f64,
}

impl Settings {
    /// Measured requests at `rate` (None: the sweep's unrated points), at
    /// most [`MAX_REQUESTS`] (a fixed rate past it is refused by
    /// [`fits`]; a sweep's computed rate is held to it).
    pub fn count(&self, rate: Option<f64>) -> u32 {
        match (rate, self.duration_secs) {
            (Some(rate), Some(secs)) => ((rate * secs).ceil().min(f64::from(MAX_REQUESTS)) as u32).max(2),
            _ => self.requests,
        }
    }
}

/// What the host allows a case, as [`fits`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// A case's wall-clock limit, seconds.
    pub case_secs: f64,
    /// One request's limit, seconds.
    pub request_secs: f64,
    /// The most requests one load may send.
    pub max_load_requests: u32,
}

/// Whether every fixed rate's load fits the host's limits, or the first
/// that does not, naming its field: more requests than one load may send
/// (`duration_secs` × the rate), or a schedule whose last send comes after
/// the case's wall-clock limit, or so close to it that the last replies
/// get less than one request's limit. Checked when the suite loads, so a
/// setting that cannot run is refused before any case (exit 3), never a
/// trap as it runs. A sweep's rates are the server's to find: a point that
/// would not fit is not sent, and the sweep says so.
pub fn fits(s: &Settings, limits: Limits) -> Result<(), String> {
    for (i, mix) in s.mixes.iter().enumerate() {
        for (j, rate) in mix.rates.iter().enumerate() {
            let at = format!("mixes[{i}].rates[{j}] = {}", number(*rate));
            let wanted = s.duration_secs.map_or(f64::from(s.requests), |d| (rate * d).ceil().max(2.0));
            let total = wanted + f64::from(s.warmup);
            if wanted > f64::from(MAX_REQUESTS) || total > f64::from(limits.max_load_requests) {
                return Err(format!(
                    "{at}: {wanted} measured requests (duration_secs {} × the rate) and {} warm-up; a load measures \
                     at most {MAX_REQUESTS} and sends at most {}",
                    s.duration_secs.unwrap_or_default(),
                    s.warmup,
                    limits.max_load_requests
                ));
            }
            // The mean interval times the intervals: the host's seeded
            // schedule comes to about this.
            let last_send = (total - 1.0) / rate;
            if !(last_send.is_finite() && last_send < limits.case_secs) {
                return Err(format!(
                    "{at}: its {total} requests' last send comes about {} s after the first, past the case's \
                     wall-clock limit of {:.0} s (case-timeout-secs): offer a higher rate or fewer requests",
                    number(last_send.round()),
                    limits.case_secs
                ));
            }
            if limits.request_secs < limits.case_secs && last_send > limits.case_secs - limits.request_secs {
                return Err(format!(
                    "{at}: its last send comes about {last_send:.0} s in, leaving the last replies less than one \
                     request's limit ({:.0} s, request-timeout-secs) within the case's {:.0} s (case-timeout-secs)",
                    limits.request_secs, limits.case_secs
                ));
            }
        }
    }
    Ok(())
}

/// A number as a person reads it: `0.25`, `1e-300`, `2e300` (plain
/// decimals for the everyday, exponents for the extremes).
fn number(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e9).contains(&x.abs()) { format!("{x:e}") } else { format!("{x}") }
}

/// The most points a sweep may have.
pub const MAX_SWEEP_POINTS: u32 = 50;
/// The shares of the synchronous rate a sweep offers first, unless the
/// suite says otherwise.
pub const DEFAULT_SWEEP_BELOW: [f64; 3] = [0.25, 0.5, 0.75];
/// The most measured requests of one load (the host sends at most 100,000).
pub const MAX_REQUESTS: u32 = 10_000;

const KEYS: &[&str] = &[
    "mixes",
    "arrival",
    "burstiness",
    "seed",
    "rates",
    "requests",
    "duration_secs",
    "warmup",
    "max_concurrency",
    "sweep_points",
    "sweep_below",
    "goodput_threshold_pct",
    "lost_budget_pct",
    "objectives",
];
const MIX_KEYS: &[&str] = &["name", "prompts", "max_tokens", "ignore_eos", "rates", "objectives"];

/// `field` of `table` as a `T`, or `default` when absent; the error names
/// the field.
fn field<T: DeserializeOwned>(table: &Map<String, Value>, at: &str, key: &str, default: T) -> Result<T, String> {
    match table.get(key) {
        None => Ok(default),
        Some(v) => serde_json::from_value(v.clone()).map_err(|err| format!("{at}{key}: {err}")),
    }
}

fn unknown_keys(table: &Map<String, Value>, at: &str, known: &[&str]) -> Result<(), String> {
    match table.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("{at}{k}: unknown field (expected one of {})", known.join(", "))),
        None => Ok(()),
    }
}

/// A segment of a case name: lowercase letters, digits, `-` or `_`.
fn name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn rates(list: &[f64], at: &str) -> Result<Vec<f64>, String> {
    for (i, rate) in list.iter().enumerate() {
        if !(rate.is_finite() && *rate > 0.0) {
            return Err(format!("{at}rates[{i}] = {rate}: an offered rate must be above 0 requests per second"));
        }
        if list[..i].contains(rate) {
            return Err(format!("{at}rates[{i}] = {rate}: given twice"));
        }
    }
    Ok(list.to_vec())
}

/// One objective, `"500 ms"` or `"2 s"`, in milliseconds.
fn duration_ms(value: &Value, at: &str) -> Result<f64, String> {
    let Some(text) = value.as_str() else {
        return Err(match value.as_f64() {
            Some(n) => format!("{at} = {n} has no unit: write \"{n} ms\" or \"{n} s\""),
            None => format!("{at} = {value}: an objective is a duration with its unit, \"500 ms\" or \"2 s\""),
        });
    };
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim());
    let Ok(n) = number.parse::<f64>() else {
        return Err(format!("{at} = {text:?}: an objective is a duration with its unit, \"500 ms\" or \"2 s\""));
    };
    let ms = match unit {
        "" => return Err(format!("{at} = {text:?} has no unit: write \"{number} ms\" or \"{number} s\"")),
        "ms" => n,
        "s" => n * 1000.0,
        other => return Err(format!("{at} = {text:?}: unknown unit {other:?} (ms or s)")),
    };
    if !(ms.is_finite() && ms > 0.0) {
        return Err(format!("{at} = {text:?}: an objective must be above 0"));
    }
    Ok(ms)
}

fn objectives(table: &Map<String, Value>, at: &str) -> Result<Objectives, String> {
    let mut o = Objectives::default();
    for (key, value) in table {
        let slot = match key.as_str() {
            "ttft" => &mut o.ttft_ms,
            "tpot" => &mut o.tpot_ms,
            "e2el" => &mut o.e2e_ms,
            _ => return Err(format!("{at}{key}: unknown objective (ttft, tpot or e2el, as vLLM's --goodput)")),
        };
        *slot = Some(duration_ms(value, &format!("{at}{key}"))?);
    }
    Ok(o)
}

fn table<'a>(value: &'a Value, at: &str) -> Result<&'a Map<String, Value>, String> {
    value.as_object().ok_or_else(|| format!("{at}: expected a table, found {value}"))
}

/// The checked settings of a suite's config table.
pub fn settings(config: &Map<String, Value>) -> Result<Settings, String> {
    unknown_keys(config, "", KEYS)?;
    let arrival = arrival(config)?;
    let requests: u32 = field(config, "", "requests", 20)?;
    if !(2..=MAX_REQUESTS).contains(&requests) {
        return Err(format!(
            "requests = {requests}: a load measures 2 to {MAX_REQUESTS} requests (its achieved rate is taken between replies)"
        ));
    }
    let duration_secs: Option<f64> = field(config, "", "duration_secs", None)?;
    if let Some(d) = duration_secs
        && !(d.is_finite() && d > 0.0)
    {
        return Err(format!("duration_secs = {d}: must be above 0"));
    }
    let max_concurrency: Option<u32> = field(config, "", "max_concurrency", None)?;
    if max_concurrency == Some(0) {
        return Err("max_concurrency = 0: would send nothing (1 is one request at a time)".into());
    }
    let (sweep_points, sweep_below) = sweep(config)?;
    let goodput_threshold_pct: f64 = field(config, "", "goodput_threshold_pct", 90.0)?;
    if !(goodput_threshold_pct > 0.0 && goodput_threshold_pct <= 100.0) {
        return Err(format!("goodput_threshold_pct = {goodput_threshold_pct}: a share above 0 and at most 100"));
    }
    let lost_budget_pct: f64 = field(config, "", "lost_budget_pct", 10.0)?;
    if !(0.0..100.0).contains(&lost_budget_pct) {
        return Err(format!("lost_budget_pct = {lost_budget_pct}: a share from 0 to below 100"));
    }
    let default_rates = rates(&field::<Vec<f64>>(config, "", "rates", Vec::new())?, "")?;
    let default_objectives = match config.get("objectives") {
        Some(v) => Some(objectives(table(v, "objectives")?, "objectives.")?),
        None => None,
    };
    let list: Vec<Value> = field(config, "", "mixes", Vec::new())?;
    if list.is_empty() {
        return Err("mixes: none given (each mix names its prompts file and max_tokens)".into());
    }
    let mut mixes: Vec<Mix> = Vec::new();
    for (i, value) in list.iter().enumerate() {
        let m = mix(i, value, &mixes, &default_rates, default_objectives)?;
        mixes.push(m);
    }
    Ok(Settings {
        mixes,
        arrival,
        seed: field(config, "", "seed", 0)?,
        requests,
        duration_secs,
        warmup: field(config, "", "warmup", 1)?,
        max_concurrency,
        sweep_points,
        sweep_below,
        goodput_threshold_pct,
        lost_budget_pct,
    })
}

/// The arrival process, with its burstiness where it takes one (gamma).
fn arrival(config: &Map<String, Value>) -> Result<Arrival, String> {
    let burstiness: Option<f64> = field(config, "", "burstiness", None)?;
    let arrival = match field::<String>(config, "", "arrival", "poisson".into())?.as_str() {
        "constant" => Arrival::Constant,
        "poisson" => Arrival::Poisson,
        "gamma" => match burstiness {
            Some(b) if b.is_finite() && b > 0.0 => Arrival::Gamma(b),
            Some(b) => return Err(format!("burstiness = {b}: the burstiness factor must be above 0")),
            None => {
                return Err("burstiness: arrival = \"gamma\" needs its burstiness factor (as vLLM's --burstiness: \
                            1 is Poisson, below 1 burstier, above 1 more even)"
                    .into());
            }
        },
        other => return Err(format!("arrival = {other:?}: unknown arrival process (constant, poisson or gamma)")),
    };
    if burstiness.is_some() && !matches!(arrival, Arrival::Gamma(_)) {
        return Err(format!("burstiness: applies only to arrival = \"gamma\", not {:?}", arrival.words()));
    }
    Ok(arrival)
}

/// The sweep: how many points, and the shares of the synchronous rate
/// offered below it.
fn sweep(config: &Map<String, Value>) -> Result<(u32, Vec<f64>), String> {
    let sweep_points: u32 = field(config, "", "sweep_points", 5)?;
    if sweep_points < 2 {
        return Err(format!(
            "sweep_points = {sweep_points}: a sweep needs at least two points (the synchronous baseline and the maximum throughput)"
        ));
    }
    if sweep_points > MAX_SWEEP_POINTS {
        return Err(format!("sweep_points = {sweep_points}: at most {MAX_SWEEP_POINTS}"));
    }
    let sweep_below: Vec<f64> = field(config, "", "sweep_below", DEFAULT_SWEEP_BELOW.to_vec())?;
    for (i, share) in sweep_below.iter().enumerate() {
        if !(share.is_finite() && *share > 0.0 && *share < 1.0) {
            return Err(format!(
                "sweep_below[{i}] = {share}: a share of the synchronous rate, above 0 and below 1 (0.5 offers half of it)"
            ));
        }
        if sweep_below[..i].contains(share) {
            return Err(format!("sweep_below[{i}] = {share}: given twice"));
        }
    }
    if sweep_below.len() > MAX_SWEEP_POINTS as usize {
        return Err(format!("sweep_below: {} shares, at most {MAX_SWEEP_POINTS}", sweep_below.len()));
    }
    Ok((sweep_points, sweep_below))
}

/// Mix `i` of the list (`before`: the mixes read before it), its rates and
/// objectives its own or the top level's.
fn mix(
    i: usize,
    value: &Value,
    before: &[Mix],
    default_rates: &[f64],
    default_objectives: Option<Objectives>,
) -> Result<Mix, String> {
    let at = format!("mixes[{i}].");
    let t = table(value, &format!("mixes[{i}]"))?;
    unknown_keys(t, &at, MIX_KEYS)?;
    let name: String = field(t, &at, "name", String::new())?;
    if !name_ok(&name) {
        return Err(format!(
            "{at}name = {name:?}: a mix is named in lowercase letters, digits, '-' or '_' (it is part of the case names)"
        ));
    }
    if before.iter().any(|m| m.name == name) {
        return Err(format!("{at}name = {name:?}: given twice"));
    }
    let prompts: String = field(t, &at, "prompts", String::new())?;
    if prompts.is_empty() {
        return Err(format!("{at}prompts: the suite file of the mix's prompts is needed"));
    }
    let max_tokens: u32 = field(t, &at, "max_tokens", 0)?;
    if max_tokens == 0 {
        return Err(format!("{at}max_tokens: the output tokens asked of each request, at least 1"));
    }
    let own_rates = match t.get("rates") {
        Some(_) => rates(&field::<Vec<f64>>(t, &at, "rates", Vec::new())?, &at)?,
        None => default_rates.to_vec(),
    };
    let objectives = match t.get("objectives") {
        Some(v) => objectives(table(v, &format!("{at}objectives"))?, &format!("{at}objectives."))?,
        None => default_objectives.ok_or_else(|| {
            format!("{at}objectives: none given, here or at the top (ttft, tpot or e2el, e.g. ttft = \"2 s\")")
        })?,
    };
    if objectives == Objectives::default() {
        return Err(format!("{at}objectives: empty (ttft, tpot or e2el, e.g. ttft = \"2 s\")"));
    }
    Ok(Mix { name, prompts, max_tokens, ignore_eos: field(t, &at, "ignore_eos", false)?, rates: own_rates, objectives })
}

/// The prompts of `mix`, from the text of its file.
pub fn prompts(mix: &Mix, text: &str) -> Result<Vec<Prompt>, String> {
    let list: Vec<Prompt> = serde_json::from_str(text).map_err(|err| format!("{}: {err}", mix.prompts))?;
    if list.is_empty() {
        return Err(format!("{}: no prompts", mix.prompts));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_as_json: Value) -> Result<Settings, String> {
        settings(toml_as_json.as_object().unwrap())
    }

    fn base() -> Value {
        serde_json::json!({
            "rates": [0.1, 0.25],
            "objectives": { "ttft": "2 s", "tpot": "250 ms" },
            "mixes": [
                { "name": "agent-turn", "prompts": "a.json", "max_tokens": 24 },
                { "name": "long-prefill", "prompts": "b.json", "max_tokens": 8, "rates": [0.05],
                  "objectives": { "ttft": "8s" } }
            ]
        })
    }

    fn with(key: &str, value: Value) -> Value {
        let mut v = base();
        v.as_object_mut().unwrap().insert(key.into(), value);
        v
    }

    #[test]
    fn a_good_config_reads_with_its_defaults() {
        let s = parse(base()).unwrap();
        assert_eq!(s.arrival, Arrival::Poisson);
        assert_eq!((s.requests, s.warmup, s.sweep_points, s.seed), (20, 1, 5, 0));
        assert_eq!(s.sweep_below, DEFAULT_SWEEP_BELOW);
        assert_eq!((s.goodput_threshold_pct, s.lost_budget_pct), (90.0, 10.0));
        assert_eq!(s.mixes[0].rates, [0.1, 0.25]);
        assert_eq!(s.mixes[0].objectives, Objectives { ttft_ms: Some(2000.0), tpot_ms: Some(250.0), e2e_ms: None });
        assert_eq!(s.mixes[1].rates, [0.05]);
        assert_eq!(s.mixes[1].objectives.ttft_ms, Some(8000.0));
        assert_eq!(s.mixes[1].objectives.tpot_ms, None);
        let g = parse(with("arrival", "gamma".into()).tap_insert("burstiness", 0.5.into())).unwrap();
        assert_eq!(g.arrival, Arrival::Gamma(0.5));
    }

    trait TapInsert {
        fn tap_insert(self, key: &str, value: Value) -> Value;
    }
    impl TapInsert for Value {
        fn tap_insert(mut self, key: &str, value: Value) -> Value {
            self.as_object_mut().unwrap().insert(key.into(), value);
            self
        }
    }

    /// The refusal of `config`, which must name `field`.
    fn refused(config: Value, field: &str) -> String {
        let err = parse(config).expect_err("refused");
        assert!(err.starts_with(field), "{err:?} should name {field}");
        err
    }

    #[test]
    fn a_rate_of_zero_or_below_is_refused_naming_it() {
        assert!(refused(with("rates", serde_json::json!([0.5, 0])), "rates[1]").contains("above 0"));
        refused(with("rates", serde_json::json!([-1.0])), "rates[0]");
        let mut v = base();
        v["mixes"][1]["rates"] = serde_json::json!([0.2, -0.1]);
        refused(v, "mixes[1].rates[1]");
        refused(with("rates", serde_json::json!([0.5, 0.5])), "rates[1]");
    }

    #[test]
    fn an_unknown_arrival_process_is_refused_naming_it() {
        let err = refused(with("arrival", "uniform".into()), "arrival");
        assert!(err.contains("constant, poisson or gamma"), "{err}");
        refused(with("arrival", "gamma".into()), "burstiness");
        refused(with("arrival", "gamma".into()).tap_insert("burstiness", 0.0.into()), "burstiness");
        refused(with("burstiness", 2.0.into()), "burstiness");
    }

    #[test]
    fn an_objective_without_a_unit_is_refused_naming_it() {
        let err = refused(with("objectives", serde_json::json!({"ttft": 500})), "objectives.ttft");
        assert!(err.contains("has no unit"), "{err}");
        let err = refused(with("objectives", serde_json::json!({"ttft": "500"})), "objectives.ttft");
        assert!(err.contains("has no unit"), "{err}");
        refused(with("objectives", serde_json::json!({"tpot": "5 min"})), "objectives.tpot");
        refused(with("objectives", serde_json::json!({"ttft": "0 ms"})), "objectives.ttft");
        refused(with("objectives", serde_json::json!({"itl": "5 ms"})), "objectives.itl");
        let mut v = base();
        v["mixes"][1]["objectives"] = serde_json::json!({"ttft": 8});
        refused(v, "mixes[1].objectives.ttft");
        let mut v = base();
        v.as_object_mut().unwrap().remove("objectives");
        refused(v, "mixes[0].objectives");
    }

    #[test]
    fn a_sweep_of_fewer_than_two_points_is_refused_naming_it() {
        let err = refused(with("sweep_points", 1.into()), "sweep_points");
        assert!(err.contains("at least two points"), "{err}");
        refused(with("sweep_points", 0.into()), "sweep_points");
        assert_eq!(parse(with("sweep_points", 2.into())).unwrap().sweep_points, 2);
        for bad in [serde_json::json!([0.5, 1.0]), serde_json::json!([0.0]), serde_json::json!([0.5, 0.5])] {
            refused(with("sweep_below", bad), "sweep_below[");
        }
        assert_eq!(parse(with("sweep_below", serde_json::json!([]))).unwrap().sweep_below, Vec::<f64>::new());
    }

    #[test]
    fn other_mistakes_name_their_field() {
        refused(with("requests", 1.into()), "requests");
        refused(with("requests", "ten".into()), "requests");
        refused(with("max_concurrency", 0.into()), "max_concurrency");
        refused(with("goodput_threshold_pct", 0.into()), "goodput_threshold_pct");
        refused(with("goodput_threshold_pct", 101.into()), "goodput_threshold_pct");
        refused(with("lost_budget_pct", 100.into()), "lost_budget_pct");
        refused(with("duration_secs", 0.into()), "duration_secs");
        refused(with("ratez", 1.into()), "ratez");
        let mut v = base();
        v["mixes"][0]["name"] = "Agent Turn".into();
        refused(v, "mixes[0].name");
        let mut v = base();
        v["mixes"][1]["name"] = "agent-turn".into();
        refused(v, "mixes[1].name");
        let mut v = base();
        v["mixes"][0]["max_tokens"] = 0.into();
        refused(v, "mixes[0].max_tokens");
        refused(with("mixes", serde_json::json!([])), "mixes");
    }

    #[test]
    fn a_fixed_rate_that_cannot_fit_the_case_is_refused_naming_it() {
        let limits = Limits { case_secs: 1800.0, request_secs: 600.0, max_load_requests: 100_000 };
        assert_eq!(fits(&parse(base()).unwrap(), limits), Ok(()));
        // A rate so low its first measured send comes past the case's limit.
        let err = fits(&parse(with("rates", serde_json::json!([0.25, 1e-300]))).unwrap(), limits).unwrap_err();
        assert!(err.starts_with("mixes[0].rates[1] = 1e-300") && err.contains("case-timeout-secs"), "{err}");
        // 20 + 1 requests at 0.02/s: the last send 1,000 s in, leaving 800 s:
        // fits; at 0.015/s (1,333 s) the last replies have under 600 s.
        let mut v = base();
        v["mixes"][1]["rates"] = serde_json::json!([0.02]);
        assert_eq!(fits(&parse(v.clone()).unwrap(), limits), Ok(()));
        v["mixes"][1]["rates"] = serde_json::json!([0.015]);
        let err = fits(&parse(v).unwrap(), limits).unwrap_err();
        assert!(err.starts_with("mixes[1].rates[0] = 0.015") && err.contains("request-timeout-secs"), "{err}");
        // duration × rate past what a load may send.
        let err = fits(&parse(with("duration_secs", 1_000_000.into())).unwrap(), limits).unwrap_err();
        assert!(err.starts_with("mixes[0].rates[0] = 0.1") && err.contains("at most 10000"), "{err}");
        let tight = Limits { max_load_requests: 15, ..limits };
        assert!(fits(&parse(base()).unwrap(), tight).unwrap_err().contains("sends at most 15"));
        // A sweep's point is held to the cap, never past it.
        let s = parse(with("duration_secs", 1e9.into())).unwrap();
        assert_eq!(s.count(Some(1e6)), MAX_REQUESTS);
    }

    #[test]
    fn a_duration_sizes_each_rated_load() {
        let s = parse(with("duration_secs", 30.into())).unwrap();
        assert_eq!((s.count(Some(0.1)), s.count(Some(0.5)), s.count(Some(0.01)), s.count(None)), (3, 15, 2, 20));
    }
}
