//! A request is never sent again once its bytes were written: a connection
//! the server read and then reset or closed, new or reused, may be
//! generating now. Lost, naming the reset and the one send.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::fake_server::{FakeServer, Script, openai};
use serde_json::json;
use sparktest_endpoint::{Arrival, Endpoint, LoadPlan, Sends};

use crate::{client, lost, ok, request};

#[tokio::test]
async fn a_new_connection_read_whole_then_reset_is_lost_and_sent_once() {
    let server = FakeServer::start(Script::reset()).await;
    let reason = lost(client(&server.url()).chat(&request(true)).await);
    assert!(reason.to_lowercase().contains("reset"), "names the reset: {reason}");
    assert!(reason.contains("(1 send: not sent again"), "{reason}");
    assert_eq!(server.exchanges().len(), 1, "the server read one POST");
    // Closed (FIN) instead of reset: the same, and non-streamed too.
    let server = FakeServer::start(Script::hang_up()).await;
    let reason = lost(client(&server.url()).chat(&request(false)).await);
    assert!(reason.contains("(1 send: not sent again"), "{reason}");
    assert_eq!(server.exchanges().len(), 1, "the server read one POST");
}

/// Read one request (head and `Content-Length` body): its head, lowercased;
/// None at EOF.
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Some(head);
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Write one whole response (`status` as "200 OK"); whether it went out.
async fn respond(stream: &mut tokio::net::TcpStream, status: &str, kind: &str, body: &str) -> bool {
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).await.is_ok() && stream.write_all(body.as_bytes()).await.is_ok()
}

/// The first connection answers its first request and closes when reused
/// (no byte of reply); every later connection reads its request whole and
/// resets. Counts the POSTs read.
async fn closes_reused_then_resets_new() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let posts = Arc::new(AtomicUsize::new(0));
    let count = posts.clone();
    let task = tokio::spawn(async move {
        let mut connections = 0;
        while let Ok((mut stream, _)) = listener.accept().await {
            let (count, first) = (count.clone(), connections == 0);
            connections += 1;
            tokio::spawn(async move {
                let mut served = 0;
                while read_request(&mut stream).await.is_some() {
                    count.fetch_add(1, Ordering::SeqCst);
                    if !first {
                        let _ = stream.set_zero_linger();
                        return;
                    }
                    if served == 1 {
                        return;
                    }
                    let body = format!("data: {}\n\ndata: {}\n\n", openai::content("ok"), openai::finish("stop"));
                    if !respond(&mut stream, "200 OK", "text/event-stream", &body).await {
                        return;
                    }
                    served += 1;
                }
            });
        }
    });
    (url, posts, task)
}

#[tokio::test]
async fn a_reused_connection_the_server_read_and_closed_is_lost_never_sent_again() {
    let (url, posts, task) = closes_reused_then_resets_new().await;
    let client = client(&url);
    assert_eq!(ok(client.chat(&request(true)).await).attempts, 1);
    // Reused, read whole and closed with no byte of reply: the server had
    // the request, so it is lost, in either mode, and never goes again.
    for mode in [Sends::Retrying, Sends::Once] {
        let err = client.chat_sent(&request(true), mode).await.unwrap_err();
        assert_eq!(err.attempts(), 1, "{mode:?}: {err}");
        assert!(lost(Err(err)).contains("(1 send: not sent again"), "{mode:?}");
    }
    assert_eq!(posts.load(Ordering::SeqCst), 3, "one answered, then one send of each later call");
    task.abort();
}

/// A server that reads every request and answers every other one, by the
/// order it read them; the rest it closes with no byte of a reply. Answers
/// `GET /v1/models`; any other GET is a 404. Counts the POSTs read.
async fn drops_every_second_request() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let posts = Arc::new(AtomicUsize::new(0));
    let count = posts.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                while let Some(head) = read_request(&mut stream).await {
                    let (kind, body) = if head.starts_with("get /v1/models") {
                        let models = json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]});
                        ("application/json", models.to_string())
                    } else if head.starts_with("get ") {
                        ("text/plain", String::new())
                    } else if count.fetch_add(1, Ordering::SeqCst) % 2 == 1 {
                        return; // read whole, closed with no byte of a reply
                    } else {
                        let sse = format!(
                            "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                            openai::content("ok"),
                            openai::finish("stop"),
                            openai::usage(5, 1)
                        );
                        ("text/event-stream", sse)
                    };
                    let status = if kind == "text/plain" { "404 Not Found" } else { "200 OK" };
                    if !respond(&mut stream, status, kind, &body).await {
                        return;
                    }
                }
            });
        }
    });
    (url, posts, task)
}

/// An open loop against a server that reads every request and drops every
/// second one: each scheduled request reaches the server once, the drops
/// are lost, and goodput is the half the server answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_sends_each_scheduled_request_once_and_keeps_the_drops_lost() {
    let (url, posts, task) = drops_every_second_request().await;
    let e = Endpoint::connect(client(&url), None).await.expect("the fake connects");
    let plan = LoadPlan {
        requests: vec![request(true)],
        rate: Some(50.0),
        arrival: Arrival::Constant,
        seed: 1,
        warmup: 0,
        count: 20,
        max_concurrency: None,
    };
    let result = e.open_loop(&plan).await;
    assert_eq!(result.requests.len(), 20);
    assert_eq!(posts.load(Ordering::SeqCst), 20, "every scheduled request sent once: {:?}", result.requests);
    let answered = result.requests.iter().filter(|r| r.reply.is_ok()).count();
    assert_eq!(answered, 10, "{:?}", result.requests);
    for r in &result.requests {
        match &r.reply {
            Ok(reply) => assert_eq!(reply.attempts, 1),
            Err(err) => {
                assert_eq!(err.attempts(), 1, "{err}");
                assert!(lost(Err(err.clone())).contains("(1 send: not sent again"), "{err}");
            }
        }
    }
    task.abort();
}
