//! Several replicas: two server processes in stateless HTTP mode behind a
//! round-robin proxy (an ordinary load balancer, written here in a few
//! lines), and one client whose requests alternate between them.
//!
//! The test binary is its own server (see `support`).

mod support;

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::json;
use support::HttpServer;
use toolkit_core::Registry;
use toolkit_mcp::McpClient;
use toolkit_tests::runner::{self, Test};

/// Sends each request to the next backend in turn.
struct RoundRobin {
    backends: Vec<String>,
    next: AtomicUsize,
    served: Vec<AtomicUsize>,
    http: reqwest::Client,
}

async fn forward(State(proxy): State<Arc<RoundRobin>>, request: Request) -> Response {
    let turn = proxy.next.fetch_add(1, Ordering::Relaxed) % proxy.backends.len();
    proxy.served[turn].fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .expect("a request body");
    let mut forwarded = proxy
        .http
        .request(parts.method, &proxy.backends[turn])
        .body(body);
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            forwarded = forwarded.header(name, value);
        }
    }
    let answer = forwarded.send().await.expect("the backend answers");
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .expect("a response")
}

async fn run() {
    let replicas = [HttpServer::start(true), HttpServer::start(true)];
    let proxy = Arc::new(RoundRobin {
        backends: replicas.iter().map(|replica| replica.url.clone()).collect(),
        next: AtomicUsize::new(0),
        served: vec![AtomicUsize::new(0), AtomicUsize::new(0)],
        http: support::plain_http_client(),
    });
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(Arc::clone(&proxy));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    // A client of either revision: 2026-07-28 stateless, and 2025-11-25,
    // whose `initialize` one replica answers and later requests the other.
    for stateless in [true, false] {
        let client = McpClient::http("replicas", &url)
            .stateless(stateless)
            .connect()
            .await
            .expect("connected through the proxy");
        let registry = Registry::builder()
            .tools(client.tools().await.expect("tools"))
            .build()
            .expect("a registry");
        for i in 0..6 {
            let sum = registry
                .dispatch(("replicas_add", json!({"a": i, "b": 1}).to_string().as_str()))
                .await;
            assert_eq!(sum.result.to_text(), (i + 1).to_string());
        }
        let mut answered_by = Vec::new();
        for _ in 0..6 {
            let who = registry.dispatch(("replicas_whoami", "{}")).await;
            answered_by.push(who.result.to_text());
        }
        let distinct: BTreeSet<&String> = answered_by.iter().collect();
        assert_eq!(
            distinct.len(),
            2,
            "stateless: {stateless}; answered by {answered_by:?}"
        );
        client.close().await;
    }
    let served: Vec<usize> = proxy
        .served
        .iter()
        .map(|count| count.load(Ordering::Relaxed))
        .collect();
    assert!(served.iter().all(|&count| count >= 12), "{served:?}");
    println!("scale_out: requests per replica {served:?}");
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    runner::run(vec![Test::new("two_replicas_behind_a_proxy", || {
        support::block_on(run())
    })])
}
