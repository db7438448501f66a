//! `repro`: does the same request at temperature 0 give the same reply?
//!
//! Each probe is sent N times (sequentially, temperature 0, fixed seed).
//! Byte-identical and answer-identical (after NFC-free normalisation: trimmed,
//! whitespace collapsed, lower-cased) are judged and recorded separately; the
//! case passes only when every reply is byte-identical. The first reply is
//! returned as an insta snapshot, so a drift between runs leaves a pending
//! snapshot for `cargo insta review`.
//!
//! Restart to restart: where the harness launched the server and the
//! instrument runs alone (`exclusive = true`), the server is restarted after
//! the repeats and the probe asked again; the reply after the restart is
//! compared with the session's, byte for byte and answer for answer. Where
//! the harness cannot restart it, the record says why.

use serde::Deserialize;
use sparktest_sdk::contract::repro as names;
use sparktest_sdk::*;

struct Repro;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_probes")]
    probes: String,
    #[serde(default = "default_repeats")]
    repeats: u32,
    /// Restart the server after the repeats and ask again.
    #[serde(default = "yes")]
    restart: bool,
}

fn yes() -> bool {
    true
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

fn load(config: &Config) -> Result<Vec<Probe>, String> {
    if config.repeats < 2 {
        return Err(format!("repro config: repeats must be at least 2, got {}", config.repeats));
    }
    let text = read_text(&config.probes)?;
    serde_json::from_str(&text).map_err(|err| format!("{}: {err}", config.probes))
}

/// The answer as a reader would compare it: trimmed, whitespace collapsed,
/// lower-cased.
fn answer_form(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The reply after a server restart, against the session's.
enum Restart {
    Compared { bytes: bool, answer: bool },
    Skipped(String),
}

fn yes_no(b: bool) -> &'static str {
    if b { names::YES } else { names::NO }
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
    type Config = Config;
    type Case = Probe;

    fn describe() -> Info {
        Info::new(
            "repro",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Identical repeated requests at temperature 0 and a fixed seed, compared \
             byte-for-byte and answer-for-answer; the two are reported separately. The \
             first reply is kept as a snapshot per target, so a change between runs or \
             restarts shows up for review. Where the harness launched the server and the \
             instrument runs alone, the server is restarted after the repeats and the probe \
             asked again: restart-to-restart is reported apart from within-session.",
        )
    }

    fn cases(config: &Config) -> Result<Vec<Case<Probe>>, String> {
        let probes = load(config)?;
        Ok(probes.into_iter().map(|p| Case::new(format!("probe::{}", p.name), p).tag(names::ROW.title)).collect())
    }

    fn run(config: &Config, probe: &Probe) -> Finding {
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
        // Restart to restart: the first reply after a restart against the
        // session's first.
        let restart = if !config.restart {
            Restart::Skipped("restart = false in the suite".into())
        } else {
            match restart_server() {
                Err(CallError::Unsupported(f)) => Restart::Skipped(f.reason),
                Err(err) => return err.into(),
                Ok(()) => match chat(&req) {
                    Ok(after) => Restart::Compared {
                        bytes: after.text == first.text,
                        answer: answer_form(&after.text) == forms[0],
                    },
                    Err(err) => return err.into(),
                },
            }
        };
        let snapshot = format!(
            "finish: {}\ncompletion_tokens: {}\n---\n{}",
            first.finish_reason.as_deref().unwrap_or("none"),
            first.usage.completion_tokens.map_or("none".to_string(), |n| n.to_string()),
            first.text
        );
        let outcome = if bytes == 1 {
            match &restart {
                Restart::Compared { bytes: false, answer } => Finding::fail(format!(
                    "identical within the session, but the reply after a server restart differs ({})",
                    if *answer { "same answer, other bytes" } else { "another answer" }
                )),
                _ => Finding::pass(),
            }
        } else if answers == 1 {
            Finding::fail(format!(
                "byte-nondeterministic: {bytes} distinct replies in {} repeats, answers identical",
                config.repeats
            ))
        } else {
            Finding::fail(format!(
                "nondeterministic: {bytes} distinct replies, {answers} distinct answers in {} repeats",
                config.repeats
            ))
        };
        let (restart_bytes, restart_answer) = match &restart {
            Restart::Compared { bytes, answer } => (yes_no(*bytes).to_string(), yes_no(*answer).to_string()),
            Restart::Skipped(why) => (format!("not measured: {why}"), format!("not measured: {why}")),
        };
        outcome
            .note(names::RESTART_BYTE_IDENTICAL, restart_bytes)
            .note(names::RESTART_ANSWER_IDENTICAL, restart_answer)
            .note(names::BYTE_IDENTICAL, yes_no(bytes == 1))
            .note(names::ANSWER_IDENTICAL, yes_no(answers == 1))
            .metric(names::DISTINCT_REPLIES, bytes as f64, "count")
            .metric(names::DISTINCT_ANSWERS, answers as f64, "count")
            .metric(names::REPEATS, config.repeats as f64, "count")
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
