//! Prompt-logprob replies, by shape: OpenAI-style `echo` completions (vLLM)
//! and SGLang's `/generate`.

use serde_json::Value;

use crate::types::{CallError, TokenLogprob};

fn malformed(what: &str) -> CallError {
    CallError::lost(format!("malformed prompt-logprobs response: {what}"))
}

/// The prompt's tokens from an OpenAI-style completion with `echo: true` and
/// `logprobs`: the first `usage.prompt_tokens` entries of
/// `choices[0].logprobs`, or, without usage, all but the last `generated`
/// (the tokens the request let the engine generate).
pub fn parse_echo_logprobs(value: &Value, generated: usize) -> Result<Vec<TokenLogprob>, CallError> {
    let logprobs = value.pointer("/choices/0/logprobs").ok_or_else(|| malformed("no choices[0].logprobs"))?;
    let tokens = logprobs.get("tokens").and_then(Value::as_array).ok_or_else(|| malformed("no logprobs.tokens"))?;
    let lps = logprobs
        .get("token_logprobs")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no logprobs.token_logprobs"))?;
    if tokens.len() != lps.len() {
        return Err(malformed("tokens and token_logprobs differ in length"));
    }
    let prompt_tokens = value
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .or_else(|| tokens.len().checked_sub(generated))
        .ok_or_else(|| malformed("fewer echoed tokens than the request generates"))?;
    if prompt_tokens > tokens.len() {
        return Err(malformed("fewer echoed tokens than usage.prompt_tokens"));
    }
    tokens[..prompt_tokens]
        .iter()
        .zip(&lps[..prompt_tokens])
        .map(|(t, lp)| {
            Ok(TokenLogprob {
                token: t.as_str().ok_or_else(|| malformed("a token is not a string"))?.to_string(),
                logprob: match lp {
                    Value::Null => None,
                    v => Some(v.as_f64().ok_or_else(|| malformed("a logprob is not a number"))?),
                },
            })
        })
        .collect()
}

/// The prompt's tokens from SGLang's `/generate` `meta_info.input_token_logprobs`:
/// `[logprob, token_id, text]` per token, the first logprob null.
pub fn parse_sglang_logprobs(value: &Value) -> Result<Vec<TokenLogprob>, CallError> {
    let entries = value
        .pointer("/meta_info/input_token_logprobs")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no meta_info.input_token_logprobs"))?;
    entries
        .iter()
        .map(|e| {
            let e = e.as_array().ok_or_else(|| malformed("an input_token_logprobs entry is not a list"))?;
            let logprob = match e.first() {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_f64().ok_or_else(|| malformed("a logprob is not a number"))?),
            };
            let token = match e.get(2) {
                Some(Value::String(t)) => t.clone(),
                _ => e.get(1).map(Value::to_string).unwrap_or_default(),
            };
            Ok(TokenLogprob { token, logprob })
        })
        .collect()
}
