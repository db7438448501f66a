//! Any server that speaks the OpenAI API and answers none of the known
//! engines' probes in their shape.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{EngineKind, Identity};
use crate::client::Client;
use crate::types::{CallError, ServerFacts, TokenLogprob};

/// An OpenAI-compatible server of unknown make.
#[derive(Debug)]
pub struct Generic;

impl EngineKind for Generic {
    fn name(&self) -> &'static str {
        "openai-compatible"
    }

    fn identify<'a>(&'a self, _client: &'a Client, _model: &'a Value) -> BoxFuture<'a, Option<Identity>> {
        Box::pin(async move {
            Some(Identity {
                facts: ServerFacts::default(),
                evidence: "no known engine's probe answered in its shape; /v1/models only".into(),
            })
        })
    }

    /// It may take `echo` + `logprobs` on completions; one that refuses has
    /// none to give.
    fn prompt_logprobs<'a>(
        &'a self,
        client: &'a Client,
        text: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TokenLogprob>, CallError>> {
        Box::pin(async move {
            match super::vllm::echo_logprobs(client, text).await {
                Err(
                    CallError::Rejected { status, body, .. }
                    | CallError::Unanswered { status: status @ (404 | 405), body, .. },
                ) => Err(CallError::Unsupported(format!(
                    "engine returns no prompt logprobs (echo refused: HTTP {status}: {body})"
                ))),
                // A 200 without logprobs: the server ignored `echo`.
                Err(CallError::Lost { reason: why, .. }) if why.starts_with("malformed prompt-logprobs response") => {
                    Err(CallError::Unsupported(format!("engine returns no prompt logprobs ({why})")))
                }
                other => other,
            }
        })
    }
}
