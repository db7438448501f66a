//! `screenshots` (row "Real-world screenshot & photo reading"): everyday
//! screenshots and photos, one fixed prompt, each reading scored 0, 0.5 or
//! 1 against an answer key written before any model saw an item ([`key`]).
//! An unanswered item scores 0; a build without vision rejects the images,
//! recorded as such, never as lost.

pub mod key;

use serde::Deserialize;
use sparktest_sdk::contract;
use sparktest_sdk::contract::screenshots as names;
use sparktest_sdk::*;

struct Screenshots;

/// The suite's config.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The answer key.
    #[serde(default = "key_file")]
    key: String,
    #[serde(default = "max_tokens")]
    max_tokens: u32,
}

fn key_file() -> String {
    "key.json".into()
}
fn max_tokens() -> u32 {
    512
}

/// The key; an item with no `full` fact would score 1 for any reply, so a
/// key with one is refused, naming it.
fn load(c: &Config) -> Result<key::Key, String> {
    let key: key::Key = serde_json::from_str(&read_text(&c.key)?).map_err(|e| format!("{}: {e}", c.key))?;
    if let Some(item) = key.items.iter().find(|i| i.full.is_empty()) {
        return Err(format!("{}: item {} has no `full` facts: any reply would score 1", c.key, item.id));
    }
    Ok(key)
}

/// One case: an item of the key, and the prompt every item is asked with.
struct Shown {
    prompt: String,
    item: key::Item,
}

impl Instrument for Screenshots {
    type Config = Config;
    type Case = Shown;

    fn describe() -> Info {
        Info::new(
            "screenshots",
            names::ROW.title,
            env!("CARGO_PKG_VERSION"),
            "Screenshots and photos from everyday work (chat screenshots, dashboards, \
             spreadsheets, social posts, dialogs, phone screenshots, product photos), one fixed \
             prompt, each reading scored 0, 0.5 or 1 against an answer key written before any \
             model saw an item: every required fact for 1, the gist for 0.5. A confidently wrong \
             number or name scores the reading 0 even when the rest is right; an unanswered item \
             scores 0. The row's figure is 10 x the mean score.",
        )
    }

    fn cases(c: &Config) -> Result<Vec<Case<Shown>>, String> {
        let key = load(c)?;
        let prompt = key.prompt;
        Ok(key
            .items
            .into_iter()
            .map(|item| {
                let (name, kind) = (format!("item::{}", item.id), format!("kind:{}", item.kind));
                Case::new(name, Shown { prompt: prompt.clone(), item }).tag(names::ROW.title).tag(kind)
            })
            .collect())
    }

    fn run(c: &Config, shown: &Shown) -> Finding {
        let item = &shown.item;
        let reply = match chat_with_images(&shown.prompt, &[&item.image], c.max_tokens) {
            Ok(r) => r,
            Err(not_read) => return not_read,
        };
        let reading = match key::score(item, &reply.text) {
            Ok(r) => r,
            Err(err) => return Finding::fail(err),
        };
        let outcome = if reading.score == 1.0 { Finding::pass() } else { Finding::fail(reading.why.clone()) };
        outcome
            .note(contract::vision::VISION, contract::vision::READ)
            .note(names::READING, reading.why)
            .metric(names::SCORE, reading.score, "0-1")
            .metric(names::ANSWERED, if reading.answered { 1.0 } else { 0.0 }, "bool")
    }
}

register_instrument!(Screenshots);
