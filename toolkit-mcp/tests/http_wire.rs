//! Our server over Streamable HTTP, spoken to message by message: every
//! message it writes is validated against the official schema of the
//! revision in use (2025-11-25 with a session, 2026-07-28 stateless), and
//! a client that disconnects cancels its call.
//!
//! The test binary is its own server (see `support`).

mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use support::schema::{Revision, assert_valid};
use support::{HttpServer, block_on};
use toolkit_tests::runner::{self, Test};

/// What one POST brought back: its status, headers and messages (one JSON
/// body, or the events of a stream).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    messages: Vec<Value>,
}

struct Client {
    http: reqwest::Client,
    url: String,
    headers: Vec<(&'static str, String)>,
}

impl Client {
    fn new(url: &str) -> Self {
        Self {
            http: support::plain_http_client(),
            url: url.to_owned(),
            headers: Vec::new(),
        }
    }

    fn request(&self, body: String, extra: &[(&'static str, String)]) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body);
        for (name, value) in self.headers.iter().chain(extra) {
            request = request.header(*name, value);
        }
        request
    }

    async fn post(&self, body: &Value, extra: &[(&'static str, String)]) -> Answer {
        let response = self
            .request(body.to_string(), extra)
            .send()
            .await
            .expect("the server answers");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("a body");
        let messages = if headers
            .get("content-type")
            .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"))
        {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .filter(|data| !data.is_empty())
                .map(|data| serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}")))
                .collect()
        } else if headers
            .get("content-type")
            .is_some_and(|kind| kind.as_bytes().starts_with(b"application/json"))
        {
            vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))]
        } else {
            // A refusal before JSON-RPC (a 413, a 403 for a foreign host).
            Vec::new()
        };
        Answer {
            status,
            headers,
            messages,
        }
    }
}

/// Checks every message of an answer against `revision`'s schema and
/// returns the response to request `id`, the notifications before it.
fn response(revision: Revision, answer: &Answer, id: i64) -> (Value, Vec<Value>) {
    let mut notifications = Vec::new();
    for message in &answer.messages {
        assert_valid(revision, "JSONRPCMessage", message);
        if message.get("id") == Some(&json!(id)) {
            return (message.clone(), notifications);
        }
        assert_valid(revision, "ServerNotification", message);
        notifications.push(message.clone());
    }
    panic!(
        "no answer to {id} (HTTP {}): {:?}",
        answer.status, answer.messages
    );
}

/// The `initialize` request of a 2025-11-25 client, id 1.
fn initialize_2025() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "http-wire-test", "version": "0"}
    }})
}

/// Revision 2025-11-25: `initialize` opens a session, whose id the later
/// requests carry.
async fn with_session(server: &HttpServer) {
    const V: Revision = Revision::V2025_11_25;
    let mut client = Client::new(&server.url);
    let init = client.post(&initialize_2025(), &[]).await;
    assert_eq!(init.status, StatusCode::OK);
    let session = init
        .headers
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .expect("text")
        .to_owned();
    let (init, _) = response(V, &init, 1);
    assert_valid(V, "InitializeResult", &init["result"]);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    client.headers = vec![
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];
    let initialized = client
        .post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await;
    assert_eq!(initialized.status, StatusCode::ACCEPTED);

    let list = client
        .post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
            &[],
        )
        .await;
    let (list, _) = response(V, &list, 2);
    assert_valid(V, "ListToolsResult", &list["result"]);
    assert_eq!(support::tool_names(&list["result"]), support::TOOLS);

    let call = |id: i64, name: &str, arguments: Value, meta: Option<Value>| {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    for (id, name, arguments) in [
        (3, "add", json!({"a": 2, "b": 3})),
        (4, "pixel", json!({})),
        (5, "weather", json!({"city": "Oslo"})),
        (6, "fail", json!({})),
        (7, "add", json!({"a": "two"})),
    ] {
        let answer = client.post(&call(id, name, arguments, None), &[]).await;
        let (result, _) = response(V, &answer, id);
        assert_valid(V, "CallToolResult", &result["result"]);
        assert!(result["result"].get("resultType").is_none(), "{result}");
    }
    let unknown = client.post(&call(8, "nope", json!({}), None), &[]).await;
    let (unknown, _) = response(V, &unknown, 8);
    assert_valid(V, "JSONRPCErrorResponse", &unknown);
    assert_eq!(unknown["error"]["code"], -32602);

    // Progress notifications on the call's own event stream, before its
    // result.
    let counted = client
        .post(
            &call(
                9,
                "count",
                json!({"to": 3}),
                Some(json!({"progressToken": 9})),
            ),
            &[],
        )
        .await;
    let (result, notifications) = response(V, &counted, 9);
    assert_eq!(result["result"]["content"][0]["text"], "counted to 3");
    let steps: Vec<f64> = notifications
        .iter()
        .inspect(|message| assert_valid(V, "ProgressNotification", message))
        .filter_map(|message| message["params"]["progress"].as_f64())
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);

    // Ending the session: a success the official clients take as one
    // (200 or 204), after which the session is gone.
    let mut end = client.http.delete(&client.url);
    for (name, value) in &client.headers {
        end = end.header(*name, value);
    }
    let ended = end.send().await.expect("the server answers");
    assert!(
        matches!(ended.status(), StatusCode::OK | StatusCode::NO_CONTENT),
        "{}",
        ended.status()
    );
    let after = client
        .post(
            &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {}}),
            &[],
        )
        .await;
    assert_eq!(after.status, StatusCode::NOT_FOUND);
}

/// The `_meta` every request of revision 2026-07-28 carries.
fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-wire-test", "version": "0"}
    })
}

/// A request of revision 2026-07-28, valid by its schema, and the headers
/// that go with it.
fn request_2026(id: i64, method: &str, mut params: Value) -> (Value, Vec<(&'static str, String)>) {
    params["_meta"] = meta_2026();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    assert_valid(Revision::V2026_07_28, "JSONRPCRequest", &request);
    (request, headers)
}

/// Revision 2026-07-28: no session, every request on its own.
async fn stateless(server: &HttpServer) {
    const V: Revision = Revision::V2026_07_28;
    let client = Client::new(&server.url);
    let send = |id: i64, method: &'static str, params: Value| {
        let (request, headers) = request_2026(id, method, params);
        let client = &client;
        async move {
            let answer = client.post(&request, &headers).await;
            assert!(
                answer.headers.get("mcp-session-id").is_none(),
                "a stateless answer opened a session"
            );
            response(V, &answer, id)
        }
    };

    let (discover, _) = send(1, "server/discover", json!({})).await;
    assert_valid(V, "DiscoverResult", &discover["result"]);
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .expect("versions")
            .contains(&json!("2026-07-28")),
        "{discover}"
    );
    assert_eq!(
        discover["result"]["capabilities"]["tools"]["listChanged"],
        true
    );

    let (list, _) = send(2, "tools/list", json!({})).await;
    assert_valid(V, "ListToolsResult", &list["result"]);
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["tools"][3]["title"], "Weather today");

    let (sum, _) = send(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_valid(V, "CallToolResult", &sum["result"]);
    assert_eq!(sum["result"]["resultType"], "complete");
    assert_eq!(sum["result"]["content"][0]["text"], "5");
    let (weather, _) = send(
        4,
        "tools/call",
        json!({"name": "weather", "arguments": {"city": "Oslo"}}),
    )
    .await;
    assert_valid(V, "CallToolResult", &weather["result"]);
    assert_eq!(
        weather["result"]["structuredContent"],
        json!({"city": "Oslo", "celsius": 21})
    );
    let (failing, _) = send(5, "tools/call", json!({"name": "fail", "arguments": {}})).await;
    assert_valid(V, "CallToolResult", &failing["result"]);
    assert_eq!(failing["result"]["isError"], true);
    let (unknown, _) = send(6, "tools/call", json!({"name": "nope", "arguments": {}})).await;
    assert_valid(V, "JSONRPCErrorResponse", &unknown);

    let mut params = json!({"name": "count", "arguments": {"to": 3}});
    let (mut request, headers) = request_2026(7, "tools/call", params.take());
    request["params"]["_meta"]["progressToken"] = json!("count-7");
    let answer = client.post(&request, &headers).await;
    let (result, notifications) = response(V, &answer, 7);
    assert_valid(V, "CallToolResult", &result["result"]);
    assert_eq!(notifications.len(), 3, "{notifications:?}");
    for notification in &notifications {
        assert_valid(V, "ProgressNotification", notification);
    }

    // A tool's question needs a capability the request did not declare:
    // the protocol's own error, naming it, with HTTP 400.
    let (ask, headers) = request_2026(
        10,
        "tools/call",
        json!({"name": "summarize", "arguments": {"text": "a day"}}),
    );
    let answer = client.post(&ask, &headers).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let (error, _) = response(V, &answer, 10);
    assert_valid(V, "JSONRPCErrorResponse", &error);
    assert_eq!(error["error"]["code"], -32021, "{error}");
    assert_eq!(
        error["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );

    // A question of a client that declared the capability goes back in the
    // call's answer; the call made again with the answer completes.
    let (mut ask, headers) = request_2026(
        11,
        "tools/call",
        json!({"name": "confirm", "arguments": {"what": "go"}}),
    );
    ask["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let answer = client.post(&ask, &headers).await;
    let (first, _) = response(V, &answer, 11);
    assert_valid(V, "InputRequiredResult", &first["result"]);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let question = &first["result"]["inputRequests"]["elicitation_0"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert_eq!(question["params"]["message"], "Really go?");
    let state = first["result"]["requestState"].clone();
    ask["id"] = json!(12);
    ask["params"]["inputResponses"] =
        json!({"elicitation_0": {"action": "accept", "content": {"sure": true}}});
    ask["params"]["requestState"] = state;
    let answer = client.post(&ask, &headers).await;
    let (second, _) = response(V, &answer, 12);
    assert_valid(V, "CallToolResult", &second["result"]);
    assert_eq!(
        second["result"]["content"][0]["text"],
        r#"accept: {"sure":true}"#
    );
    // A state this server did not write is refused.
    ask["id"] = json!(13);
    ask["params"]["requestState"] = json!("forged");
    let answer = client.post(&ask, &headers).await;
    let (forged, _) = response(V, &answer, 13);
    assert_eq!(forged["error"]["code"], -32602, "{forged}");

    // A prompt's and a tool's roots question: both go back in the answer,
    // and are answered as a tool's are; refused without the capability.
    let (mut plan, headers) = request_2026(14, "prompts/get", json!({"name": "plan"}));
    let answer = client.post(&plan, &headers).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let (error, _) = response(V, &answer, 14);
    assert_eq!(error["error"]["code"], -32021, "{error}");
    assert_eq!(
        error["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    plan["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let answer = client.post(&plan, &headers).await;
    let (first, _) = response(V, &answer, 14);
    assert_valid(V, "InputRequiredResult", &first["result"]);
    assert_eq!(
        first["result"]["inputRequests"]["goal"]["params"]["message"], "What is the goal?",
        "{first}"
    );
    plan["params"]["inputResponses"] =
        json!({"goal": {"action": "accept", "content": {"goal": "calm"}}});
    plan["params"]["requestState"] = first["result"]["requestState"].clone();
    let answer = client.post(&plan, &headers).await;
    let (second, _) = response(V, &answer, 14);
    assert_valid(V, "GetPromptResult", &second["result"]);
    assert_eq!(
        second["result"]["messages"][0]["content"]["text"], "Plan how to reach calm.",
        "{second}"
    );
    let (mut roots, headers) = request_2026(
        15,
        "tools/call",
        json!({"name": "workspace", "arguments": {}}),
    );
    roots["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"roots": {}});
    let answer = client.post(&roots, &headers).await;
    let (first, _) = response(V, &answer, 15);
    assert_valid(V, "InputRequiredResult", &first["result"]);
    assert_eq!(
        first["result"]["inputRequests"]["roots_0"]["method"], "roots/list",
        "{first}"
    );
    roots["params"]["inputResponses"] =
        json!({"roots_0": {"roots": [{"uri": "file:///srv", "name": "srv"}]}});
    let answer = client.post(&roots, &headers).await;
    let (second, _) = response(V, &answer, 15);
    assert_eq!(
        second["result"]["content"][0]["text"], "roots: file:///srv (srv)",
        "{second}"
    );

    // Log messages only at or above the level the request names, and none
    // when it names none.
    let (quiet, headers) =
        request_2026(8, "tools/call", json!({"name": "chatty", "arguments": {}}));
    let answer = client.post(&quiet, &headers).await;
    let (result, notifications) = response(V, &answer, 8);
    assert_eq!(result["result"]["content"][0]["text"], "chatted");
    assert_eq!(notifications, Vec::<Value>::new());
    let (mut loud, headers) =
        request_2026(9, "tools/call", json!({"name": "chatty", "arguments": {}}));
    loud["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let answer = client.post(&loud, &headers).await;
    let (_, notifications) = response(V, &answer, 9);
    let levels: Vec<&Value> = notifications
        .iter()
        .inspect(|notification| assert_valid(V, "LoggingMessageNotification", notification))
        .map(|notification| &notification["params"]["level"])
        .collect();
    assert_eq!(levels, [&json!("info"), &json!("error")]);
}

/// One event of an event stream: its id, and its data when there is some.
struct Event {
    id: Option<String>,
    data: Option<Value>,
}

/// Reads events from `response` until `done` says to stop, or the stream
/// ends (then `None`).
async fn read_events(
    response: &mut reqwest::Response,
    mut done: impl FnMut(&Event) -> bool,
) -> Option<Vec<Event>> {
    let mut events = Vec::new();
    let mut pending = String::new();
    let mut event = Event {
        id: None,
        data: None,
    };
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("an event within 10 s")
            .expect("a readable stream")?;
        pending.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        while let Some(end) = pending.find('\n') {
            let line = pending[..end].trim_end_matches('\r').to_owned();
            pending.drain(..=end);
            if line.is_empty() {
                let finished = std::mem::replace(
                    &mut event,
                    Event {
                        id: None,
                        data: None,
                    },
                );
                let stop = done(&finished);
                events.push(finished);
                if stop {
                    return Some(events);
                }
            } else if let Some(id) = line.strip_prefix("id:") {
                event.id = Some(id.trim().to_owned());
            } else if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim();
                if !data.is_empty() {
                    event.data =
                        Some(serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}")));
                }
            }
        }
    }
}

/// A 2025-11-25 client whose call's event stream breaks reconnects with
/// `Last-Event-ID` and receives the rest of the call: the events it missed
/// and the result.
async fn resume(server: &HttpServer) {
    const V: Revision = Revision::V2025_11_25;
    let mut client = Client::new(&server.url);
    let init = client.post(&initialize_2025(), &[]).await;
    let session = init.headers["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    client.headers = vec![
        ("Mcp-Session-Id", session.clone()),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];
    client
        .post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await;

    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "count", "arguments": {"to": 5}, "_meta": {"progressToken": "resume-7"}}
    });
    let mut response = client
        .request(call.to_string(), &[])
        .send()
        .await
        .expect("the server answers");
    // The first event with an id (the priming event, or the first report),
    // then the connection drops.
    let first = read_events(&mut response, |event| event.id.is_some())
        .await
        .expect("an event with an id");
    let last_id = first
        .last()
        .and_then(|event| event.id.clone())
        .expect("an id");
    drop(response);

    let mut resumed = client
        .http
        .get(&client.url)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("Last-Event-ID", &last_id)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(resumed.status(), StatusCode::OK);
    let rest = read_events(&mut resumed, |event| {
        event
            .data
            .as_ref()
            .is_some_and(|data| data.get("id") == Some(&json!(7)))
    })
    .await
    .expect("the result after resuming");
    let messages: Vec<&Value> = rest
        .iter()
        .filter_map(|event| event.data.as_ref())
        .collect();
    let result = messages.last().expect("the result");
    assert_valid(V, "CallToolResult", &result["result"]);
    assert_eq!(result["result"]["content"][0]["text"], "counted to 5");
    // Nothing is told twice: the reports after the one seen, in order.
    let seen_before: Vec<&Value> = first
        .iter()
        .filter_map(|event| event.data.as_ref())
        .collect();
    let progress: Vec<f64> = seen_before
        .iter()
        .chain(&messages)
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| message["params"]["progress"].as_f64().expect("a number"))
        .collect();
    assert!(
        progress.windows(2).all(|pair| pair[0] < pair[1]),
        "{progress:?}"
    );
}

/// A client that goes away mid-call cancels the call.
async fn disconnect(server: &HttpServer) {
    let client = Client::new(&server.url);
    let (request, headers) =
        request_2026(1, "tools/call", json!({"name": "slow", "arguments": {}}));
    let pending = client.request(request.to_string(), &headers).send();
    // The request is sent and the tool running when the client gives up
    // (the tool sleeps 10 s unless cancelled; the wait leaves a loaded
    // machine time to start it).
    let gave_up = tokio::time::timeout(Duration::from_secs(2), pending).await;
    assert!(gave_up.is_err(), "slow answered at once: {gave_up:?}");
    let deadline = Instant::now() + Duration::from_secs(7);
    let mut id = 2;
    loop {
        let (request, headers) = request_2026(
            id,
            "tools/call",
            json!({"name": "was_cancelled", "arguments": {}}),
        );
        let answer = client.post(&request, &headers).await;
        let (seen, _) = response(Revision::V2026_07_28, &answer, id);
        if seen["result"]["content"][0]["text"] == "true" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tool never saw the disconnect"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        id += 1;
    }
}

/// A body over the limit is refused, and the server goes on serving.
async fn too_large(server: &HttpServer) {
    let client = Client::new(&server.url);
    let (mut request, headers) = request_2026(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
    );
    request["params"]["arguments"]["pad"] = json!("x".repeat(80 * 1024));
    let answer = client.post(&request, &headers).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    let (request, headers) = request_2026(2, "tools/list", json!({}));
    let answer = client.post(&request, &headers).await;
    let (list, _) = response(Revision::V2026_07_28, &answer, 2);
    assert_valid(Revision::V2026_07_28, "ListToolsResult", &list["result"]);
}

/// A body that is not a readable message gets a JSON-RPC error, and the
/// server goes on serving.
async fn malformed(server: &HttpServer) {
    const V: Revision = Revision::V2026_07_28;
    let client = Client::new(&server.url);
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
    ];
    let answer = client
        .request("{this is not json".to_owned(), &headers[..1])
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let error: Value = answer.json().await.expect("a JSON-RPC error");
    assert_valid(V, "JSONRPCErrorResponse", &error);
    assert_eq!(error["error"]["code"], -32700, "{error}");

    let mut request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"arguments": {}}});
    request["params"]["_meta"] = meta_2026();
    let answer = client.post(&request, &headers).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let (error, _) = response(V, &answer, 7);
    assert_valid(V, "JSONRPCErrorResponse", &error);
    assert_eq!(error["error"]["code"], -32602, "{error}");

    // A method 2026-07-28 removed is unknown there, whatever its params.
    for (id, method) in [
        (9, "logging/setLevel"),
        (10, "initialize"),
        (11, "resources/subscribe"),
    ] {
        let (request, headers) = request_2026(id, method, json!({}));
        let answer = client.post(&request, &headers).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method}");
        let (error, _) = response(V, &answer, id);
        assert_valid(V, "JSONRPCErrorResponse", &error);
        assert_eq!(error["error"]["code"], -32601, "{error}");
    }

    let (request, headers) = request_2026(8, "tools/list", json!({}));
    let answer = client.post(&request, &headers).await;
    let (list, _) = response(V, &answer, 8);
    assert_valid(V, "ListToolsResult", &list["result"]);
}

/// A request from a host the server does not serve (a DNS-rebinding page)
/// is refused for its `Host` whatever its body: a readable message, one
/// that is not JSON and one over the size limit alike get 403, so such a
/// page learns nothing from the body's fate.
async fn foreign_host(server: &HttpServer) {
    let client = Client::new(&server.url);
    let (request, _) = request_2026(1, "tools/list", json!({}));
    let oversized = json!({"pad": "x".repeat(80 * 1024)}).to_string();
    for body in [
        request.to_string(),
        "{this is not json".to_owned(),
        oversized,
    ] {
        let foreign = [
            ("Host", "attacker.example".to_owned()),
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ];
        let answer = client
            .request(body.clone(), &foreign)
            .send()
            .await
            .expect("an answer");
        assert_eq!(
            answer.status(),
            StatusCode::FORBIDDEN,
            "{}",
            &body[..body.len().min(40)]
        );
    }
    // The same server still serves its own host.
    let (request, headers) = request_2026(2, "tools/list", json!({}));
    let answer = client.post(&request, &headers).await;
    let (list, _) = response(Revision::V2026_07_28, &answer, 2);
    assert_valid(Revision::V2026_07_28, "ListToolsResult", &list["result"]);
}

/// A stateless server promises list changes only to the clients that can
/// hear them: those of 2026-07-28, which subscribe per request. A client
/// that opens with `initialize` gets no session, so no event stream.
async fn stateless_promises(server: &HttpServer) {
    let client = Client::new(&server.url);
    let init = client.post(&initialize_2025(), &[]).await;
    assert!(
        init.headers.get("mcp-session-id").is_none(),
        "a stateless server opened a session"
    );
    let (init, _) = response(Revision::V2025_11_25, &init, 1);
    assert_valid(Revision::V2025_11_25, "InitializeResult", &init["result"]);
    let tools = &init["result"]["capabilities"]["tools"];
    assert!(tools.is_object(), "{init}");
    assert!(tools.get("listChanged").is_none(), "{init}");

    let (request, headers) = request_2026(2, "server/discover", json!({}));
    let answer = client.post(&request, &headers).await;
    let (discover, _) = response(Revision::V2026_07_28, &answer, 2);
    assert_eq!(
        discover["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
}

/// A server of its own for each scenario (what one leaves behind, a
/// session or a call, never meets the next), with a request size limit
/// `too_large` reaches.
fn limited() -> HttpServer {
    HttpServer::start_with(false, &[("TOOLKIT_MCP_TEST_MAX_BYTES", "65536")])
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("with_session", || block_on(with_session(&limited()))),
        Test::new("resume", || block_on(resume(&limited()))),
        Test::new("stateless", || block_on(stateless(&limited()))),
        Test::new("disconnect", || block_on(disconnect(&limited()))),
        Test::new("too_large", || block_on(too_large(&limited()))),
        Test::new("malformed", || block_on(malformed(&limited()))),
        Test::new("foreign_host", || block_on(foreign_host(&limited()))),
        Test::new("stateless_promises", || {
            block_on(stateless_promises(&HttpServer::start(true)))
        }),
    ])
}
