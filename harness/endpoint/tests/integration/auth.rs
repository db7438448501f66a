//! Credentials: sent as a bearer token on every call; refused credentials
//! are the setup's fault (`Unauthorized`), never a model's wrong answer; a
//! key never shows in an error.

use sparktest_endpoint::{CallError, ClientConfig, Secret};

use crate::fake_server::{FakeServer, Script, openai};
use crate::{client_config, ok, request};

const KEY: &str = "sk-planted-4f1c2e";

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token() {
    let script = Script::sse().data(&openai::content("hi")).data(&openai::finish("stop"));
    let server = FakeServer::start(script).await;
    let config = ClientConfig { timeouts: crate::TIMEOUTS, api_key: Some(Secret::new(KEY)), ..ClientConfig::default() };
    ok(client_config(&server.url(), config).chat(&request(true)).await);
    let seen = &server.exchanges()[0].request;
    assert!(seen.to_lowercase().contains(&format!("authorization: bearer {}", KEY.to_lowercase())), "{seen}");
}

#[tokio::test]
async fn refused_credentials_are_unauthorized_and_never_echo_the_key() {
    for status in [401, 403] {
        let server = FakeServer::start(Script::json(status, r#"{"error":"invalid api key"}"#)).await;
        let url = server.url().replacen("http://", &format!("http://user:{KEY}@"), 1);
        let config =
            ClientConfig { timeouts: crate::TIMEOUTS, api_key: Some(Secret::new(KEY)), ..ClientConfig::default() };
        let client = client_config(&url, config);
        assert!(!client.base_url().contains(KEY), "{}", client.base_url());
        let err = client.chat(&request(false)).await.unwrap_err();
        assert!(matches!(err, CallError::Unauthorized { status: s, .. } if s == status), "{err}");
        assert!(!err.to_string().contains(KEY), "{err}");
    }
    // A connection error's message holds no URL, so no credential.
    let url = format!("http://user:{KEY}@127.0.0.1:9");
    let err = client_config(&url, ClientConfig { timeouts: crate::TIMEOUTS, ..ClientConfig::default() })
        .chat(&request(false))
        .await
        .unwrap_err();
    assert!(!err.to_string().contains(KEY), "{err}");
}
