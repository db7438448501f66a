//! `repro`: does the same request at temperature 0 give the same reply?
//!
//! Each probe is sent N times (sequentially, temperature 0, fixed seed).
//! Byte-identical and answer-identical (after NFC-free normalisation: trimmed,
//! whitespace collapsed, lower-cased) are judged and recorded separately; the
//! case passes only when every reply is byte-identical. The first reply is
//! returned as an insta snapshot, so a drift between runs leaves a pending
//! snapshot for `cargo insta review`.

use serde::Deserialize;
use sparktest_sdk::*;

struct Repro;

#[derive(Deserialize)]
struct Config {
    #[serde(default = "default_probes")]
    probes: String,
    #[serde(default = "default_repeats")]
    repeats: u32,
}

fn default_probes() -> String {
    "repro/probes.json".into()
}

fn default_repeats() -> u32 {
    5
}

#[derive(Deserialize)]
struct Probe {
    name: String,
    prompt: String,
    max_tokens: u32,
    /// JSON Schema the reply must follow, for the structured probe.
    #[serde(default)]
    schema: Option<serde_json::Value>,
}

fn load(config: &str) -> Result<(Config, Vec<Probe>), String> {
    let config: Config = serde_json::from_str(config).map_err(|err| format!("repro config: {err}"))?;
    if config.repeats < 2 {
        return Err(format!("repro config: repeats must be at least 2, got {}", config.repeats));
    }
    let text = read_text(&config.probes)?;
    let probes = serde_json::from_str(&text).map_err(|err| format!("{}: {err}", config.probes))?;
    Ok((config, probes))
}

/// The answer as a reader would compare it: trimmed, whitespace collapsed,
/// lower-cased.
fn answer_form(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Number of distinct values.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen.len()
}

impl Instrument for Repro {
    fn describe() -> Info {
        Info::new(
            "repro",
            "Reproducibility",
            env!("CARGO_PKG_VERSION"),
            "Identical repeated requests at temperature 0 and a fixed seed, compared \
             byte-for-byte and answer-for-answer; the two are reported separately. The \
             first reply is kept as a snapshot per target, so a change between runs or \
             restarts shows up for review.",
        )
    }

    fn cases(config: &str) -> Result<Vec<CaseInfo>, String> {
        let (_, probes) = load(config)?;
        Ok(probes
            .iter()
            .map(|p| CaseInfo::new(format!("probe::{}", p.name)).tag("Reproducibility"))
            .collect())
    }

    fn run(config: &str, case: &str) -> Outcome {
        let (config, probes) = match load(config) {
            Ok(loaded) => loaded,
            Err(err) => return Outcome::fail(err),
        };
        let Some(probe) = probes.iter().find(|p| format!("probe::{}", p.name) == case) else {
            return Outcome::fail(format!("no probe named {case}"));
        };
        let mut req = ChatRequest::new(vec![Message::user(&probe.prompt)]).greedy().max_tokens(probe.max_tokens);
        req.seed = Some(42);
        if let Some(schema) = &probe.schema {
            req.response_format = Some(ResponseFormat::JsonSchema(JsonSchemaFormat {
                name: probe.name.clone(),
                schema: schema.to_string(),
                strict: true,
            }));
        }
        let mut replies = Vec::new();
        for _ in 0..config.repeats {
            match chat(&req) {
                Ok(reply) => replies.push(reply),
                Err(err) => return err.into(),
            }
        }
        let bytes = distinct(replies.iter().map(|r| r.text.as_str()));
        let forms: Vec<String> = replies.iter().map(|r| answer_form(&r.text)).collect();
        let answers = distinct(forms.iter().map(String::as_str));
        let first = &replies[0];
        let snapshot = format!(
            "finish: {}\ncompletion_tokens: {}\n---\n{}",
            first.finish_reason.as_deref().unwrap_or("none"),
            first.usage.completion_tokens.map_or("none".to_string(), |n| n.to_string()),
            first.text
        );
        let outcome = if bytes == 1 {
            Outcome::pass()
        } else if answers == 1 {
            Outcome::fail(format!(
                "byte-nondeterministic: {bytes} distinct replies in {} repeats, answers identical",
                config.repeats
            ))
        } else {
            Outcome::fail(format!(
                "nondeterministic: {bytes} distinct replies, {answers} distinct answers in {} repeats",
                config.repeats
            ))
        };
        outcome
            .note("byte-identical", if bytes == 1 { "yes" } else { "no" })
            .note("answer-identical", if answers == 1 { "yes" } else { "no" })
            .metric("distinct-replies", bytes as f64, "count")
            .metric("distinct-answers", answers as f64, "count")
            .metric("repeats", config.repeats as f64, "count")
            .snapshot(&probe.name, snapshot)
    }
}

register_instrument!(Repro);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_form_forgives_case_and_spacing_only() {
        assert_eq!(answer_form("  Paris\n"), answer_form("paris"));
        assert_ne!(answer_form("Paris."), answer_form("Paris"));
    }

    #[test]
    fn distinct_counts() {
        assert_eq!(distinct(["a", "b", "a"].into_iter()), 2);
        assert_eq!(distinct(["a", "a"].into_iter()), 1);
    }
}
