//! The declarative checker language of the agent instruments (`a-bench`,
//! `adversarial`). Tasks are data; a check is JSON:
//!
//! | check | passes when |
//! |---|---|
//! | `{"tool_calls": [CALL…], "any_order": true}` | the reply makes exactly these calls |
//! | `{"no_tool_calls": true, "text": CHECK?}` | the reply makes no call (and its text passes) |
//! | `{"json": {"schema": {…}, "fields": {"/ptr": MATCH}}}` | the whole reply is JSON, valid, with these values |
//! | `{"contains": […]}`, `{"not_contains": […]}`, `{"regex": "…"}` | on the normalised text |
//! | `{"order": ["a", "b", …]}` | each appears, first occurrences in this order |
//! | `{"all": [CHECK…]}`, `{"any": [CHECK…]}` | all / any pass |
//!
//! A CALL is `{"name": "f", "arguments": {"param": MATCH, …}}`, checked the way
//! the Berkeley Function Calling Leaderboard checks: the name; every listed
//! parameter present unless `"optional": true`; no parameter that is not
//! listed; the argument types of the tool's own schema; each value within
//! its allowed answers. Arguments that are not a JSON object are a failure,
//! never an abstention.
//!
//! A MATCH is a JSON literal or an object of `one_of`, `range`, `regex`,
//! `contains`, `optional`.
//!
//! Text is compared after [`normalise`]: Unicode NFC, lower-cased, whitespace
//! runs collapsed to one space, trimmed; string values also ignore a
//! trailing period.
#![warn(missing_docs)]

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;

/// NFC, lower case, whitespace collapsed, trimmed.
pub fn normalise(text: &str) -> String {
    let nfc: String = text.nfc().collect::<String>().to_lowercase();
    nfc.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn normalise_value(text: &str) -> String {
    let n = normalise(text);
    n.strip_suffix('.').map(str::to_string).unwrap_or(n)
}

/// A tool call as the instrument saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Function name.
    pub name: String,
    /// Arguments as the server sent them (JSON text, possibly invalid).
    pub arguments: String,
}

/// What a check looks at.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    /// The reply text.
    pub text: &'a str,
    /// The calls it made.
    pub calls: &'a [Call],
    /// Offered tools by name → their parameters schema, for type checks.
    pub tools: &'a BTreeMap<String, Value>,
}

/// A value matcher.
#[derive(Debug, Clone)]
pub struct Match {
    one_of: Vec<Value>,
    range: Option<(f64, f64)>,
    regex: Option<Regex>,
    contains: Vec<String>,
    /// The parameter may be absent.
    pub optional: bool,
}

/// A parsed check.
#[derive(Debug, Clone)]
pub enum Check {
    /// Exactly these calls.
    ToolCalls {
        /// Expected calls.
        calls: Vec<(String, BTreeMap<String, Match>)>,
        /// Matched in any order.
        any_order: bool,
    },
    /// No call; maybe a text check.
    NoToolCalls(Option<Box<Check>>),
    /// Whole reply is JSON, valid, with field values.
    Json {
        /// Compiled schema.
        schema: Box<jsonschema::Validator>,
        /// JSON pointer → matcher.
        fields: Vec<(String, Match)>,
    },
    /// All substrings present.
    Contains(Vec<String>),
    /// No substring present.
    NotContains(Vec<String>),
    /// Regex on the normalised text.
    Regex(Regex),
    /// First occurrences in this order.
    Order(Vec<String>),
    /// All pass.
    All(Vec<Check>),
    /// Any passes.
    Any(Vec<Check>),
}

fn strings(v: &Value, at: &str) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("{at}: expected a list of strings"))?
        .iter()
        .map(|s| s.as_str().map(normalise).ok_or_else(|| format!("{at}: expected a list of strings")))
        .collect()
}

fn regex(v: &Value, at: &str) -> Result<Regex, String> {
    let pattern = v.as_str().ok_or_else(|| format!("{at}: expected a regex string"))?;
    Regex::new(pattern).map_err(|err| format!("{at}: bad regex: {err}"))
}

impl Match {
    /// Parse a matcher; `at` names where it is, for errors.
    pub fn parse(v: &Value, at: &str) -> Result<Self, String> {
        let mut m = Match { one_of: Vec::new(), range: None, regex: None, contains: Vec::new(), optional: false };
        let Some(obj) = v.as_object().filter(|o| {
            o.keys().all(|k| matches!(k.as_str(), "one_of" | "range" | "regex" | "contains" | "optional"))
                && !o.is_empty()
        }) else {
            m.one_of.push(v.clone());
            return Ok(m);
        };
        for (k, val) in obj {
            let at = format!("{at}.{k}");
            match k.as_str() {
                "one_of" => m.one_of = val.as_array().ok_or(format!("{at}: expected a list"))?.clone(),
                "range" => {
                    let r = val.as_array().filter(|r| r.len() == 2).ok_or(format!("{at}: expected [min, max]"))?;
                    let (lo, hi) = (r[0].as_f64(), r[1].as_f64());
                    m.range = Some((lo.ok_or(format!("{at}: min"))?, hi.ok_or(format!("{at}: max"))?));
                }
                "regex" => m.regex = Some(regex(val, &at)?),
                "contains" => m.contains = strings(val, &at)?,
                "optional" => m.optional = val.as_bool().ok_or(format!("{at}: expected true or false"))?,
                _ => unreachable!("keys filtered above"),
            }
        }
        Ok(m)
    }

    /// Why `v` does not match, or `None` when it does.
    pub fn mismatch(&self, v: &Value) -> Option<String> {
        if !self.one_of.is_empty() && !self.one_of.iter().any(|want| values_equal(want, v)) {
            return Some(format!("{} is not one of {}", v, Value::Array(self.one_of.clone())));
        }
        if let Some((lo, hi)) = self.range {
            match v.as_f64() {
                Some(n) if (lo..=hi).contains(&n) => {}
                _ => return Some(format!("{v} is not a number in [{lo}, {hi}]")),
            }
        }
        if let Some(re) = &self.regex {
            match v.as_str() {
                Some(s) if re.is_match(&normalise(s)) => {}
                _ => return Some(format!("{v} does not match /{re}/")),
            }
        }
        if !self.contains.is_empty() {
            let text = v.as_str().map(normalise).unwrap_or_else(|| normalise(&v.to_string()));
            if let Some(missing) = self.contains.iter().find(|c| !text.contains(c.as_str())) {
                return Some(format!("{v} does not contain {missing:?}"));
            }
        }
        None
    }
}

/// Equal after normalisation: strings by [`normalise`] (and a trailing
/// period), numbers by value (1 == 1.0), arrays element-wise, objects by key.
pub fn values_equal(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(a), Value::String(b)) => normalise_value(a) == normalise_value(b),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_equal(x, y)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| values_equal(x, y)))
        }
        _ => want == got,
    }
}

impl Check {
    /// Parse a check; `at` names where it is (task id), for errors.
    pub fn parse(v: &Value, at: &str) -> Result<Self, String> {
        let obj = v.as_object().ok_or_else(|| format!("{at}: a check must be an object"))?;
        let key = |k: &str| obj.get(k);
        let check = if let Some(calls) = key("tool_calls") {
            let list = calls.as_array().ok_or(format!("{at}.tool_calls: expected a list"))?;
            let mut parsed = Vec::new();
            for (i, c) in list.iter().enumerate() {
                let at = format!("{at}.tool_calls[{i}]");
                let name = c.get("name").and_then(Value::as_str).ok_or(format!("{at}.name: missing"))?;
                let mut args = BTreeMap::new();
                let empty = Map::new();
                for (p, m) in c.get("arguments").and_then(Value::as_object).unwrap_or(&empty) {
                    args.insert(p.clone(), Match::parse(m, &format!("{at}.arguments.{p}"))?);
                }
                parsed.push((name.to_string(), args));
            }
            Check::ToolCalls { calls: parsed, any_order: key("any_order").and_then(Value::as_bool).unwrap_or(true) }
        } else if key("no_tool_calls").is_some() {
            let text = match key("text") {
                Some(t) => Some(Box::new(Check::parse(t, &format!("{at}.text"))?)),
                None => None,
            };
            Check::NoToolCalls(text)
        } else if let Some(json) = key("json") {
            let schema = json.get("schema").cloned().unwrap_or(Value::Bool(true));
            let schema = jsonschema::validator_for(&schema).map_err(|err| format!("{at}.json.schema: {err}"))?;
            let mut fields = Vec::new();
            for (ptr, m) in json.get("fields").and_then(Value::as_object).unwrap_or(&Map::new()) {
                fields.push((ptr.clone(), Match::parse(m, &format!("{at}.json.fields.{ptr}"))?));
            }
            Check::Json { schema: Box::new(schema), fields }
        } else if let Some(v) = key("contains") {
            Check::Contains(strings(v, &format!("{at}.contains"))?)
        } else if let Some(v) = key("not_contains") {
            Check::NotContains(strings(v, &format!("{at}.not_contains"))?)
        } else if let Some(v) = key("regex") {
            Check::Regex(regex(v, &format!("{at}.regex"))?)
        } else if let Some(v) = key("order") {
            Check::Order(strings(v, &format!("{at}.order"))?)
        } else if let Some(v) = key("all").or(key("any")) {
            let list = v.as_array().ok_or(format!("{at}: all/any expects a list"))?;
            let parsed = list
                .iter()
                .enumerate()
                .map(|(i, c)| Check::parse(c, &format!("{at}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            if key("all").is_some() { Check::All(parsed) } else { Check::Any(parsed) }
        } else {
            return Err(format!("{at}: unknown check {}", Value::Object(obj.clone())));
        };
        // A check object has one kind: extra keys are a typo, not a wish.
        let allowed: &[&str] = match &check {
            Check::ToolCalls { .. } => &["tool_calls", "any_order"],
            Check::NoToolCalls(_) => &["no_tool_calls", "text"],
            Check::Json { .. } => &["json"],
            Check::Contains(_) => &["contains"],
            Check::NotContains(_) => &["not_contains"],
            Check::Regex(_) => &["regex"],
            Check::Order(_) => &["order"],
            Check::All(_) => &["all"],
            Check::Any(_) => &["any"],
        };
        if let Some(extra) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "{at}: unexpected key {extra:?} beside {:?} (one kind of check per object)",
                allowed[0]
            ));
        }
        Ok(check)
    }

    /// `Ok` when the reply passes; otherwise the reason, naming what broke.
    pub fn evaluate(&self, reply: &Reply) -> Result<(), String> {
        match self {
            Check::ToolCalls { calls, any_order } => match_calls(calls, *any_order, reply),
            Check::NoToolCalls(text) => {
                if let Some(c) = reply.calls.first() {
                    return Err(format!("expected no tool call, got {}({})", c.name, c.arguments));
                }
                text.as_ref().map_or(Ok(()), |t| t.evaluate(reply))
            }
            Check::Json { schema, fields } => {
                let value: Value = serde_json::from_str(reply.text.trim())
                    .map_err(|err| format!("reply is not JSON ({err}): {}", clip(reply.text)))?;
                if let Some(err) = schema.iter_errors(&value).next() {
                    return Err(format!("reply does not follow the schema: {err} at {}", err.instance_path()));
                }
                for (ptr, m) in fields {
                    let got = value.pointer(ptr).ok_or_else(|| format!("field {ptr} is missing"))?;
                    if let Some(why) = m.mismatch(got) {
                        return Err(format!("field {ptr}: {why}"));
                    }
                }
                Ok(())
            }
            Check::Contains(parts) => {
                let text = normalise(reply.text);
                match parts.iter().find(|p| !text.contains(p.as_str())) {
                    Some(missing) => Err(format!("reply lacks {missing:?}: {}", clip(reply.text))),
                    None => Ok(()),
                }
            }
            Check::NotContains(parts) => {
                let text = normalise(reply.text);
                match parts.iter().find(|p| text.contains(p.as_str())) {
                    Some(found) => Err(format!("reply contains {found:?}")),
                    None => Ok(()),
                }
            }
            Check::Regex(re) => {
                if re.is_match(&normalise(reply.text)) {
                    Ok(())
                } else {
                    Err(format!("reply does not match /{re}/: {}", clip(reply.text)))
                }
            }
            Check::Order(steps) => {
                let text = normalise(reply.text);
                let mut last: Option<(usize, &str)> = None;
                for step in steps {
                    let at = text.find(step.as_str()).ok_or_else(|| format!("step {step:?} is missing"))?;
                    if let Some((prev, prev_step)) = last
                        && at <= prev
                    {
                        return Err(format!("step {step:?} comes before {prev_step:?}"));
                    }
                    last = Some((at, step));
                }
                Ok(())
            }
            Check::All(list) => list.iter().try_for_each(|c| c.evaluate(reply)),
            Check::Any(list) => {
                let mut reasons = Vec::new();
                for c in list {
                    match c.evaluate(reply) {
                        Ok(()) => return Ok(()),
                        Err(why) => reasons.push(why),
                    }
                }
                Err(format!("none of the alternatives passed: {}", reasons.join("; ")))
            }
        }
    }
}

fn clip(text: &str) -> String {
    let t: String = text.trim().chars().take(160).collect();
    format!("{t:?}")
}

/// Why one call does not match one expectation.
fn call_mismatch(want: &(String, BTreeMap<String, Match>), got: &Call, reply: &Reply) -> Option<String> {
    let (name, args) = want;
    if normalise(&got.name) != normalise(name) {
        return Some(format!("called {} instead of {name}", got.name));
    }
    let parsed: Value = match serde_json::from_str(if got.arguments.trim().is_empty() { "{}" } else { &got.arguments })
    {
        Ok(v) => v,
        Err(err) => {
            return Some(format!("{name}: arguments are not JSON ({err}): {}", clip(&got.arguments)));
        }
    };
    let Some(obj) = parsed.as_object() else {
        return Some(format!("{name}: arguments are not a JSON object: {parsed}"));
    };
    if let Some(schema) = reply.tools.get(name)
        && let Ok(validator) = jsonschema::validator_for(schema)
        && let Some(err) = validator.iter_errors(&parsed).next()
    {
        return Some(format!("{name}: arguments break the tool's schema: {err}"));
    }
    if let Some(extra) = obj.keys().find(|k| !args.contains_key(*k)) {
        return Some(format!("{name}: unexpected parameter {extra}"));
    }
    for (param, m) in args {
        match obj.get(param) {
            None | Some(Value::Null) if m.optional => {}
            None => return Some(format!("{name}: missing parameter {param}")),
            Some(v) => {
                if let Some(why) = m.mismatch(v) {
                    return Some(format!("{name}.{param}: {why}"));
                }
            }
        }
    }
    None
}

fn match_calls(want: &[(String, BTreeMap<String, Match>)], any_order: bool, reply: &Reply) -> Result<(), String> {
    if reply.calls.len() != want.len() {
        let got: Vec<&str> = reply.calls.iter().map(|c| c.name.as_str()).collect();
        let names: Vec<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!("expected {} call(s) {names:?}, got {} {got:?}", want.len(), reply.calls.len()));
    }
    if !any_order {
        for (w, g) in want.iter().zip(reply.calls) {
            if let Some(why) = call_mismatch(w, g, reply) {
                return Err(why);
            }
        }
        return Ok(());
    }
    // Any order: find a one-to-one assignment (calls are few, so a
    // backtracking search is enough).
    fn assign(
        want: &[(String, BTreeMap<String, Match>)],
        used: &mut Vec<bool>,
        reply: &Reply,
        why: &mut Option<String>,
    ) -> bool {
        let Some((first, rest)) = want.split_first() else {
            return true;
        };
        for i in 0..reply.calls.len() {
            if used[i] {
                continue;
            }
            match call_mismatch(first, &reply.calls[i], reply) {
                None => {
                    used[i] = true;
                    if assign(rest, used, reply, why) {
                        return true;
                    }
                    used[i] = false;
                }
                Some(reason) => {
                    why.get_or_insert(reason);
                }
            }
        }
        false
    }
    let mut used = vec![false; reply.calls.len()];
    let mut why = None;
    if assign(want, &mut used, reply, &mut why) {
        Ok(())
    } else {
        Err(why.unwrap_or_else(|| "the calls do not match".into()))
    }
}

#[cfg(test)]
mod tests;
