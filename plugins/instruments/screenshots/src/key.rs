//! The answer key and its deterministic scoring, written before any model
//! saw an item (`suites/screenshots/key.json`, format in its README).
//!
//! - An empty reply scores 0 and is not answered.
//! - Reply and facts are lower-cased, whitespace runs collapsed; a fact is
//!   present when it is a substring of the reply (a list: any alternative).
//! - A critical entry's pattern is searched case-insensitively (leftmost
//!   match, first group); a captured value that differs from the expected
//!   one, both normalised (lower-case, thousands separators and surrounding
//!   whitespace and currency symbols dropped), scores the item 0: a
//!   confidently wrong number or name counts against the whole reading.
//! - Otherwise every `full` fact present: 1; every `half` fact: 0.5; else 0.

use regex::RegexBuilder;
use serde::Deserialize;

/// The key file.
#[derive(Debug, Deserialize)]
pub struct Key {
    /// The one prompt every item is asked with.
    pub prompt: String,
    /// The items.
    pub items: Vec<Item>,
}

/// One screenshot or photo.
#[derive(Debug, Deserialize)]
pub struct Item {
    /// Id (a case name part).
    pub id: String,
    /// What it shows, e.g. `chat screenshot`.
    pub kind: String,
    /// The image file.
    pub image: String,
    /// Every one required for 1.
    pub full: Vec<Fact>,
    /// Every one required for 0.5.
    pub half: Vec<Fact>,
    /// Values a wrong reading of which scores 0.
    #[serde(default)]
    pub critical: Vec<Critical>,
}

/// A fact: one string, or alternatives.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Fact {
    /// One way to say it.
    One(String),
    /// Several.
    Any(Vec<String>),
}

/// A value that must not be read wrong.
#[derive(Debug, Deserialize)]
pub struct Critical {
    /// What it is, e.g. `invoice total`.
    pub what: String,
    /// A regex with one group capturing the value the reply states.
    pub pattern: String,
    /// The right value.
    pub expect: String,
}

fn norm_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn norm_value(v: &str) -> String {
    let v = v.to_lowercase();
    let chars: Vec<char> = v.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let between_digits =
            *c == ',' && i > 0 && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if !between_digits {
            out.push(*c);
        }
    }
    out.trim_matches(|c: char| c.is_whitespace() || "$£€¥₹".contains(c)).to_string()
}

impl Fact {
    fn present(&self, reply: &str) -> bool {
        match self {
            Fact::One(s) => reply.contains(&norm_text(s)),
            Fact::Any(alts) => alts.iter().any(|s| reply.contains(&norm_text(s))),
        }
    }

    fn shown(&self) -> String {
        match self {
            Fact::One(s) => s.clone(),
            Fact::Any(alts) => alts.join(" | "),
        }
    }
}

/// A scored reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// 0, 0.5 or 1.
    pub score: f64,
    /// The reply said anything at all.
    pub answered: bool,
    /// Why, in words.
    pub why: String,
}

/// Score a reply. A pattern that does not compile is the key's fault: an
/// error naming it.
pub fn score(item: &Item, reply: &str) -> Result<Reading, String> {
    if reply.trim().is_empty() {
        return Ok(Reading { score: 0.0, answered: false, why: "unanswered".into() });
    }
    let mut wrong = Vec::new();
    for c in &item.critical {
        let re = RegexBuilder::new(&c.pattern)
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("key item {}: pattern for {}: {e}", item.id, c.what))?;
        if let Some(got) = re.captures(reply).and_then(|m| m.get(1))
            && norm_value(got.as_str()) != norm_value(&c.expect)
        {
            wrong.push(format!("{} read as {:?} (the key says {:?})", c.what, got.as_str(), c.expect));
        }
    }
    if !wrong.is_empty() {
        return Ok(Reading { score: 0.0, answered: true, why: format!("confidently wrong: {}", wrong.join("; ")) });
    }
    let r = norm_text(reply);
    let missing = |facts: &[Fact]| facts.iter().filter(|f| !f.present(&r)).map(Fact::shown).collect::<Vec<_>>();
    let (full, half) = (missing(&item.full), missing(&item.half));
    Ok(if full.is_empty() {
        Reading { score: 1.0, answered: true, why: "every fact read".into() }
    } else if half.is_empty() {
        Reading { score: 0.5, answered: true, why: format!("the gist; missing {}", full.join(", ")) }
    } else {
        Reading { score: 0.0, answered: true, why: format!("missing {}", half.join(", ")) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        serde_json::from_str(include_str!("../../../../suites/screenshots/key.json")).unwrap()
    }

    #[derive(Deserialize)]
    struct Sample {
        id: String,
        reply: String,
        expect_score: f64,
    }

    /// The key's own sample replies (a correct, two confidently wrong and a
    /// half reading per item) score as its author wrote them down.
    #[test]
    fn the_sample_replies_score_as_expected() {
        let key = key();
        let samples: Vec<Sample> =
            serde_json::from_str(include_str!("../../../../suites/screenshots/samples.json")).unwrap();
        assert!(samples.len() >= 4 * 19, "{} samples", samples.len());
        for s in &samples {
            let item = key.items.iter().find(|i| i.id == s.id).unwrap();
            let got = score(item, &s.reply).unwrap();
            assert_eq!(got.score, s.expect_score, "{}: {:?} → {}", s.id, s.reply, got.why);
        }
    }

    #[test]
    fn every_pattern_compiles_and_every_item_has_facts() {
        let key = key();
        assert_eq!(key.items.len(), 19);
        for item in &key.items {
            assert!(!item.full.is_empty() && !item.half.is_empty(), "{}", item.id);
            score(item, "something").unwrap();
        }
    }

    #[test]
    fn crafted_rules() {
        let item: Item = serde_json::from_str(
            r#"{"id":"x","kind":"k","image":"i.png","full":["Maya Chen",["1,284.50","1284.50"],"paid"],"half":[["1,284.50","1284.50"]],
               "critical":[{"what":"total","pattern":"total[^0-9]{0,10}([0-9][0-9,]*\\.[0-9]{2})","expect":"1,284.50"}]}"#,
        )
        .unwrap();
        assert_eq!(score(&item, "Invoice for maya  chen, total $1284.50, status PAID").unwrap().score, 1.0);
        // Half credit: the gist without every fact.
        let half = score(&item, "An invoice; the total is 1,284.50.").unwrap();
        assert_eq!(half.score, 0.5, "{}", half.why);
        // A confidently wrong total ruins an otherwise full reading.
        let wrong = score(&item, "Maya Chen paid; total: $1,248.50").unwrap();
        assert_eq!(wrong.score, 0.0);
        assert!(wrong.why.contains("total read as"), "{}", wrong.why);
        // Unanswered.
        assert_eq!(score(&item, "  ").unwrap(), Reading { score: 0.0, answered: false, why: "unanswered".into() });
    }
}
