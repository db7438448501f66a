//! Fault-injection tests of the endpoint client against a scripted loopback
//! server. Only faults a real engine cannot be made to produce on demand are
//! scripted here; each test checks the exact classification and that the
//! reason names the fault.

use sparktest_test_support::fake_server;

mod answer;
mod auth;
mod body;
mod edges;
mod limits;
mod load;
mod logprobs;
mod probe;
mod protocol;
mod reply;
mod resend;
mod retry;
mod status;
mod transport;
mod waiting;

use std::time::Duration;

use sparktest_endpoint::{CallError, ChatRequest, Client, ClientConfig, Message, Reply, Role, Timeouts};

/// Generous enough for a loaded 2-core machine, small enough to fail fast.
const TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    request: Duration::from_secs(5),
    idle: Duration::from_secs(5),
    head: Duration::from_secs(5),
    aux: Duration::from_secs(5),
};

fn client(url: &str) -> Client {
    client_with(url, TIMEOUTS)
}

fn client_with(url: &str, timeouts: Timeouts) -> Client {
    client_config(url, ClientConfig { timeouts, ..ClientConfig::default() })
}

fn client_config(url: &str, config: ClientConfig) -> Client {
    Client::new(url, "fake-model", config).expect("failed to build the client")
}

fn request(stream: bool) -> ChatRequest {
    let mut req = ChatRequest::new(vec![Message::text(Role::User, "Say hello.")]);
    req.stream = stream;
    req
}

/// The reason of a `Lost`, or a panic naming what came instead.
fn lost(result: Result<Reply, CallError>) -> String {
    match result {
        Err(CallError::Lost { reason, .. }) => reason,
        other => panic!("expected Lost, got {other:?}"),
    }
}

/// The reply of an `Ok`, or a panic naming the error.
fn ok(result: Result<Reply, CallError>) -> Reply {
    result.unwrap_or_else(|err| panic!("expected a reply, got {err:?}"))
}
