//! Prompt logprobs and the likelihood arithmetic, on recorded engine
//! responses (no engine with prompt logprobs runs on this machine: vLLM and
//! SGLang need a GPU, llama.cpp gives none).
//!
//! The bits-per-character code is the likelihood instrument's own
//! (`sparktest_contract::likelihood::bpc`, which the instrument calls).

use serde_json::{Value, json};
use sparktest_contract::likelihood::bpc;
use sparktest_endpoint::{CallError, EngineKind, LlamaCpp, Vllm, parse_echo_logprobs, parse_sglang_logprobs};

use super::client;
use super::fake_server::{FakeServer, Script};

const PROMPT: &str = "The step of boiling water is: ";

/// vLLM v0.16.0 (`Intel/Qwen3-Coder-Next-int4-AutoRound`, no BOS), a
/// `/v1/completions` reply to `echo: true, logprobs: 5, max_tokens: 1` for
/// [`PROMPT`], posted in ggml-org/llama.cpp PR #15189 (comment of
/// 2026-03-01). `id` through `text`, `text_offset`, `token_logprobs` and
/// `tokens` are verbatim; the stored copy is cut inside `top_logprobs`, so
/// that and everything after it (`finish_reason`, `usage`) are left out.
fn vllm_echo_body() -> Value {
    json!({"id":"cmpl-8c16f81d43846721","object":"text_completion","created":1772367069,"model":"Intel/Qwen3-Coder-Next-int4-AutoRound","choices":[{"index":0,"text":"The step of boiling water is: 1","logprobs":{"text_offset":[0,3,8,11,19,25,28,29,30],"token_logprobs":[null,-8.818763732910156,-1.552642822265625,-13.55989933013916,-2.0115487575531006,-2.2331151962280273,-8.53701114654541,-1.2870503664016724,-0.41059786081314087],"tokens":["The"," step"," of"," boiling"," water"," is",":"," ","1"]}}]})
}

/// Σ of the seven scored prompt logprobs above (the generated "1" and the
/// unscored first token excluded), in nats, summed by hand.
const NATS: f64 = -8.818763732910156
    - 1.552642822265625
    - 13.55989933013916
    - 2.0115487575531006
    - 2.2331151962280273
    - 8.53701114654541
    - 1.2870503664016724;

#[test]
fn vllm_echo_reply_gives_the_prompt_tokens_only() {
    let tokens = parse_echo_logprobs(&vllm_echo_body(), 1).unwrap();
    assert_eq!(tokens.len(), 8, "the generated token is dropped");
    assert_eq!(tokens[0].logprob, None);
    assert_eq!(tokens.iter().map(|t| t.token.as_str()).collect::<String>(), PROMPT);
    // With usage present, usage.prompt_tokens decides.
    let mut with_usage = vllm_echo_body();
    with_usage["usage"] = json!({"prompt_tokens": 8, "completion_tokens": 1, "total_tokens": 9});
    assert_eq!(parse_echo_logprobs(&with_usage, 5).unwrap(), tokens);
}

#[test]
fn bits_per_character_of_the_recorded_vllm_reply() {
    let tokens = parse_echo_logprobs(&vllm_echo_body(), 1).unwrap();
    let s = bpc::score(PROMPT, tokens.iter().map(|t| t.logprob));
    assert_eq!((s.chars, s.scored_tokens, s.unscored_tokens), (30, 7, 1));
    let bits = -NATS / std::f64::consts::LN_2;
    assert!((s.bits - bits).abs() < 1e-9, "{} vs {bits}", s.bits);
    assert!((s.bits - 54.822_456_785).abs() < 1e-6, "{}", s.bits);
    assert!((s.bpc() - 1.827_415_226).abs() < 1e-6, "{}", s.bpc());
    // The corpus figure is total bits over total characters, not a mean of
    // per-text figures.
    let short = bpc::score("ab", [None, Some(-std::f64::consts::LN_2)]);
    let corpus = bpc::corpus_bpc(&[s, short]);
    assert!((corpus - (s.bits + 1.0) / 32.0).abs() < 1e-12);
}

#[test]
fn characters_are_counted_from_the_text_sent_not_from_tokens() {
    // A BOS token and detokeniser artefacts (vllm-project/vllm#5334) must
    // not change the character count.
    let s = bpc::score("é\n1", [None, Some(-1.0), Some(-1.0), Some(-1.0)]);
    assert_eq!(s.chars, 3);
}

#[test]
fn sglang_input_token_logprobs() {
    // The shape SGLang's /generate documents for `return_logprob` with
    // `return_text_in_logprobs` ([logprob, token_id, text], the first
    // logprob null). Constructed from that documentation, not recorded.
    let body = json!({"text": "x", "meta_info": {"input_token_logprobs": [[null, 1, "The"], [-8.5, 3019, " step"], [-1.5, 315, " of"]]}});
    let tokens = parse_sglang_logprobs(&body).unwrap();
    assert_eq!(tokens.len(), 3);
    assert_eq!(tokens[0].logprob, None);
    assert_eq!(tokens[1].logprob, Some(-8.5));
    assert_eq!(tokens[2].token, " of");
    let bad = json!({"meta_info": {}});
    assert!(
        matches!(parse_sglang_logprobs(&bad), Err(CallError::Lost { reason: r, .. }) if r.contains("input_token_logprobs"))
    );
}

#[tokio::test]
async fn vllm_prompt_logprobs_over_http() {
    let server = FakeServer::start(Script::json(200, &vllm_echo_body().to_string())).await;
    // The recorded reply names its model: the client must serve it.
    let client = sparktest_endpoint::Client::new(
        &server.url(),
        "Intel/Qwen3-Coder-Next-int4-AutoRound",
        sparktest_endpoint::ClientConfig { timeouts: crate::TIMEOUTS, ..Default::default() },
    )
    .unwrap();
    let tokens = Vllm.prompt_logprobs(&client, PROMPT).await.unwrap();
    assert_eq!(tokens.len(), 8);
    let sent = server.exchanges();
    let (head, body) = sent[0].request.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("POST /v1/completions "), "{head}");
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        (body["echo"].as_bool(), body["logprobs"].as_u64(), body["max_tokens"].as_u64()),
        (Some(true), Some(1), Some(1))
    );
    assert_eq!(body["prompt"], PROMPT);
}

#[tokio::test]
async fn llama_cpp_has_no_prompt_logprobs() {
    let url = super::fake_server::closed_port_url().await;
    let err = LlamaCpp.prompt_logprobs(&client(&url), PROMPT).await.unwrap_err();
    assert_eq!(err, CallError::Unsupported("engine returns no prompt logprobs".into()));
}
