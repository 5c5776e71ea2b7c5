//! Our client reaching our server over HTTP behind authorization: a bearer
//! token and extra headers given by the host, and OAuth 2.1 against an
//! authorization server the test serves (discovery, registration, PKCE,
//! the token exchange, refresh, a step-up of scopes), all on 127.0.0.1;
//! and the address check that keeps the flow's requests off addresses the
//! server's metadata should not send them to.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolkit_core::{Registry, tool, tools};
use toolkit_mcp::{
    AddressClass, AddressPolicy, Authorizer, Authorizing, HttpOptions, McpClient, McpServer, OAuth,
};

/// Says hello.
#[tool]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello, {name}")
}

/// A JSON answer.
fn json_reply(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// The pairs of a query or of a form body.
fn pairs(encoded: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://form.invalid/?{encoded}"))
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

async fn body_text(request: Request) -> String {
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 16)
        .await
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What the test's servers saw.
#[derive(Default)]
struct Seen {
    /// The `Authorization` and `X-Api-Key` headers of each MCP request.
    mcp: Vec<(Option<String>, Option<String>)>,
    /// The query of each authorization request.
    authorizations: Vec<HashMap<String, String>>,
    /// The form of each token request.
    tokens: Vec<HashMap<String, String>>,
}

#[derive(Clone)]
struct Shared {
    seen: Arc<Mutex<Seen>>,
    base: String,
    /// The access token the MCP endpoint takes, and the scope a request
    /// needs (none: any valid token will do).
    token: &'static str,
    needs_scope: Option<&'static str>,
    /// The lifetime of a token got for a code, in seconds.
    first_expiry: u64,
    /// Where the authorization server's metadata says to register and to
    /// get tokens (none: beside it).
    registration_endpoint: Option<&'static str>,
    token_endpoint: Option<&'static str>,
}

impl Shared {
    /// A server taking `token` (with `needs_scope`), its tokens for a code
    /// lasting `first_expiry` seconds, its endpoints beside it; the base
    /// URL is set when it is served.
    fn new(token: &'static str, needs_scope: Option<&'static str>, first_expiry: u64) -> Self {
        Self {
            seen: Arc::default(),
            base: String::new(),
            token,
            needs_scope,
            first_expiry,
            registration_endpoint: None,
            token_endpoint: None,
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }
}

/// The MCP endpoint's guard: records the headers, and lets in a request
/// with the expected token (and, when one is needed, a token with the
/// scope).
async fn guard(State(shared): State<Shared>, request: Request, next: Next) -> Response {
    // Out of the request before any await: a body is not `Sync`.
    let (authorization, key) = {
        let text = |name: &str| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        (text("authorization"), text("x-api-key"))
    };
    shared.seen().mcp.push((authorization.clone(), key));
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", shared.base);
    let presented = authorization
        .as_deref()
        .and_then(|value| value.strip_prefix("Bearer "));
    let Some(presented) = presented.filter(|token| token.starts_with(shared.token)) else {
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                format!("Bearer resource_metadata=\"{metadata}\""),
            )],
        )
            .into_response();
    };
    if let Some(scope) = shared.needs_scope
        && !presented.contains(scope)
    {
        return (
            StatusCode::FORBIDDEN,
            [(
                header::WWW_AUTHENTICATE,
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\""
                ),
            )],
        )
            .into_response();
    }
    next.run(request).await
}

async fn resource_metadata(State(shared): State<Shared>) -> Response {
    let metadata = json!({
        "resource": format!("{}/mcp", shared.base),
        "authorization_servers": [shared.base],
        "scopes_supported": ["notes:read"],
    });
    json_reply(StatusCode::OK, &metadata)
}

async fn server_metadata(State(shared): State<Shared>) -> Response {
    let base = &shared.base;
    let metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": shared
            .token_endpoint
            .map_or_else(|| format!("{base}/token"), str::to_owned),
        "registration_endpoint": shared
            .registration_endpoint
            .map_or_else(|| format!("{base}/register"), str::to_owned),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    });
    json_reply(StatusCode::OK, &metadata)
}

async fn register(request: Request) -> Response {
    let body: Value = serde_json::from_str(&body_text(request).await).unwrap_or_default();
    let client = json!({
        "client_id": "registered-client",
        "redirect_uris": body["redirect_uris"],
    });
    json_reply(StatusCode::CREATED, &client)
}

/// Approves at once: back to the redirect URI with a code that remembers
/// the scopes asked for.
async fn authorize(State(shared): State<Shared>, request: Request) -> Response {
    let query = pairs(request.uri().query().unwrap_or_default());
    let scope = query.get("scope").cloned().unwrap_or_default();
    let to = format!(
        "{}?code=code-{}&state={}&iss={}",
        query["redirect_uri"],
        scope.replace(' ', "+"),
        query["state"],
        shared.base
    );
    shared.seen().authorizations.push(query);
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

/// Gives a token naming the scopes the code was for, with a refresh
/// token; a refreshed token ends with `.refreshed`.
async fn token(State(shared): State<Shared>, request: Request) -> Response {
    let form = pairs(&body_text(request).await);
    let answer = if form.get("grant_type").map(String::as_str) == Some("refresh_token") {
        json!({
            "access_token": format!("{}.refreshed", shared.token),
            "token_type": "Bearer",
            "expires_in": 3600,
        })
    } else {
        let scopes = form
            .get("code")
            .and_then(|code| code.strip_prefix("code-"))
            .unwrap_or_default()
            .replace(' ', "+");
        json!({
            "access_token": format!("{}.{scopes}", shared.token),
            "token_type": "Bearer",
            "expires_in": shared.first_expiry,
            "refresh_token": "refresh-1",
        })
    };
    shared.seen().tokens.push(form);
    json_reply(StatusCode::OK, &answer)
}

/// Serves the MCP endpoint behind the guard, and the authorization server
/// beside it.
async fn serve(access_token: &'static str, needs_scope: Option<&'static str>) -> Shared {
    serve_expiring(access_token, needs_scope, 3600).await
}

/// [`serve`], with tokens got for a code lasting `first_expiry` seconds.
async fn serve_expiring(
    access_token: &'static str,
    needs_scope: Option<&'static str>,
    first_expiry: u64,
) -> Shared {
    serve_shared(Shared::new(access_token, needs_scope, first_expiry)).await
}

/// [`serve`], with the authorization server's metadata naming these
/// registration and token endpoints.
async fn serve_naming(
    registration_endpoint: Option<&'static str>,
    token_endpoint: Option<&'static str>,
) -> Shared {
    serve_shared(Shared {
        registration_endpoint,
        token_endpoint,
        ..Shared::new("oauth-token", None, 3600)
    })
    .await
}

/// Serves what `shared` describes on a port of its own, its `base` the
/// server's URL.
async fn serve_shared(mut shared: Shared) -> Shared {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    shared.base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let registry = Arc::new(Registry::builder().tools(tools![hello]).build().unwrap());
    let mcp = McpServer::new(registry)
        .router(&HttpOptions::new())
        .layer(middleware::from_fn_with_state(shared.clone(), guard));
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(shared.clone())
        .merge(mcp);
    tokio::spawn(async move { axum::serve(listener, app).await });
    shared
}

/// Approves by fetching the authorization URL and reading the redirect, as
/// a browser whose user agrees would land there.
struct Agrees;

impl Authorizer for Agrees {
    fn authorize<'a>(&'a self, url: &'a str) -> Authorizing<'a> {
        Box::pin(async move {
            let client = toolkit_http::client_builder()
                .map_err(|error| error.to_string())?
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|error| error.to_string())?;
            let response = client.get(url).send().await.map_err(|e| e.to_string())?;
            response
                .headers()
                .get(header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| "no redirect".to_owned())
        })
    }
}

/// A user who says no.
struct Refuses;

impl Authorizer for Refuses {
    fn authorize<'a>(&'a self, _url: &'a str) -> Authorizing<'a> {
        Box::pin(async { Err("the user closed the page".to_owned()) })
    }
}

async fn greet(client: &McpClient) -> String {
    let registry = Registry::builder()
        .tools(client.tools().await.expect("a tool list"))
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(("site_hello", r#"{"name": "Ada"}"#))
        .await;
    outcome.result.to_text()
}

/// Connects to `server` with `oauth`, calls its tool and goes away.
async fn greet_with_oauth(server: &Shared, oauth: OAuth) {
    let client = McpClient::http("site", format!("{}/mcp", server.base))
        .oauth(oauth)
        .connect()
        .await
        .expect("connected with OAuth");
    assert_eq!(greet(&client).await, "hello, Ada");
    client.close().await;
}

#[tokio::test]
async fn a_bearer_token_and_headers_reach_the_server() {
    let server = serve("static-token", None).await;
    let builder = McpClient::http("site", format!("{}/mcp", server.base))
        .bearer("static-token")
        .header("X-Api-Key", "key-123");
    let shown = format!("{builder:?}");
    assert!(!shown.contains("static-token"), "{shown}");
    assert!(!shown.contains("key-123"), "{shown}");
    assert!(shown.contains("X-Api-Key"), "{shown}");
    let client = builder.connect().await.expect("connected");
    assert!(!format!("{client:?}").contains("static-token"));
    assert_eq!(greet(&client).await, "hello, Ada");
    client.close().await;

    let seen = server.seen();
    assert!(!seen.mcp.is_empty());
    for (authorization, key) in &seen.mcp {
        assert_eq!(authorization.as_deref(), Some("Bearer static-token"));
        assert_eq!(key.as_deref(), Some("key-123"));
    }
}

#[tokio::test]
async fn a_wrong_token_or_header_is_a_clear_error() {
    let server = serve("static-token", None).await;
    let refused = McpClient::http("site", format!("{}/mcp", server.base))
        .bearer("another-token")
        .connect()
        .await
        .expect_err("refused");
    assert!(
        refused.to_string().contains("MCP server `site`"),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("the server refused the bearer token (HTTP 401)"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("another-token"), "{refused}");

    let invalid = McpClient::http("site", format!("{}/mcp", server.base))
        .header("X Api Key", "1")
        .connect()
        .await
        .expect_err("not a header name");
    assert!(invalid.to_string().contains("`X Api Key`"), "{invalid}");
}

#[tokio::test]
async fn oauth_authorizes_when_the_server_asks() {
    let server = serve("oauth-token", None).await;
    let oauth = OAuth::new("http://127.0.0.1:8976/callback", Agrees);
    greet_with_oauth(&server, oauth).await;
    let seen = server.seen();
    let resource = format!("{}/mcp", server.base);
    let [authorization] = seen.authorizations.as_slice() else {
        panic!("one authorization: {:?}", seen.authorizations);
    };
    assert_eq!(authorization["client_id"], "registered-client");
    assert_eq!(authorization["code_challenge_method"], "S256");
    assert_eq!(authorization["resource"], resource);
    // No scope in the challenge: the resource's `scopes_supported`.
    assert_eq!(authorization["scope"], "notes:read");
    let [token] = seen.tokens.as_slice() else {
        panic!("one token request: {:?}", seen.tokens);
    };
    assert_eq!(token["grant_type"], "authorization_code");
    assert!(!token["code_verifier"].is_empty());
    assert_eq!(token["resource"], resource);
    // Every request after the first carried the token.
    let (first, rest) = seen.mcp.split_first().unwrap();
    assert_eq!(first.0, None);
    assert!(rest.iter().all(|(authorization, _)| {
        authorization
            .as_deref()
            .is_some_and(|value| value.starts_with("Bearer oauth-token"))
    }));
}

#[tokio::test]
async fn oauth_steps_up_the_scopes_a_server_asks_for() {
    let server = serve("oauth-token", Some("notes:write")).await;
    let oauth = OAuth::new("http://127.0.0.1:8976/callback", Agrees);
    greet_with_oauth(&server, oauth).await;
    let seen = server.seen();
    let scopes: Vec<&str> = seen
        .authorizations
        .iter()
        .map(|query| query["scope"].as_str())
        .collect();
    assert_eq!(scopes, ["notes:read", "notes:read notes:write"]);
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed() {
    // Ten seconds is within the time before expiry when rmcp refreshes.
    let server = serve_expiring("oauth-token", None, 10).await;
    greet_with_oauth(
        &server,
        OAuth::new("http://127.0.0.1:8976/callback", Agrees),
    )
    .await;
    let seen = server.seen();
    let grants: Vec<&str> = seen
        .tokens
        .iter()
        .map(|form| form["grant_type"].as_str())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(seen.tokens[1]["refresh_token"], "refresh-1");
    let (last, _) = seen.mcp.last().unwrap();
    assert_eq!(last.as_deref(), Some("Bearer oauth-token.refreshed"));
}

#[tokio::test]
async fn a_refused_authorization_is_a_clear_error() {
    let server = serve("oauth-token", None).await;
    let error = McpClient::http("site", format!("{}/mcp", server.base))
        .oauth(OAuth::new("http://127.0.0.1:8976/callback", Refuses))
        .connect()
        .await
        .expect_err("not authorized");
    let message = error.to_string();
    assert!(message.contains("the user closed the page"), "{message}");
    assert!(server.seen().tokens.is_empty());
}

#[test]
fn a_client_secret_is_never_shown() {
    let oauth = OAuth::new("http://127.0.0.1:8976/callback", Agrees)
        .client_id("registered-client")
        .client_secret("s3cret");
    let shown = format!("{oauth:?}");
    assert!(shown.contains("registered-client"), "{shown}");
    assert!(!shown.contains("s3cret"), "{shown}");
    let builder = McpClient::http("site", "http://127.0.0.1:1/mcp").oauth(oauth);
    assert!(!format!("{builder:?}").contains("s3cret"));
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn every_address_class_is_told_apart() {
    let cases = [
        ("93.184.215.14", AddressClass::Public),
        ("2606:4700::1111", AddressClass::Public),
        ("127.0.0.1", AddressClass::Loopback),
        ("127.255.0.9", AddressClass::Loopback),
        ("::1", AddressClass::Loopback),
        ("10.255.255.1", AddressClass::Private),
        ("172.16.0.1", AddressClass::Private),
        ("172.31.255.255", AddressClass::Private),
        ("192.168.1.1", AddressClass::Private),
        ("fd00::1", AddressClass::Private),
        ("169.254.169.254", AddressClass::LinkLocal),
        ("fe80::1", AddressClass::LinkLocal),
        ("100.64.0.1", AddressClass::SharedAddressSpace),
        ("100.127.255.254", AddressClass::SharedAddressSpace),
        ("0.0.0.0", AddressClass::Unspecified),
        ("::", AddressClass::Unspecified),
        ("224.0.0.1", AddressClass::Multicast),
        ("ff02::1", AddressClass::Multicast),
        ("255.255.255.255", AddressClass::Broadcast),
        ("192.0.2.1", AddressClass::Documentation),
        ("198.51.100.7", AddressClass::Documentation),
        ("203.0.113.9", AddressClass::Documentation),
        ("2001:db8::1", AddressClass::Documentation),
        ("198.18.0.1", AddressClass::Benchmarking),
        ("2001:2::1", AddressClass::Benchmarking),
        ("240.0.0.1", AddressClass::Reserved),
        ("2001::1", AddressClass::Reserved),
        // IPv6 forms of IPv4 addresses lead where the IPv4 one does.
        ("::ffff:127.0.0.1", AddressClass::Loopback),
        ("::ffff:10.0.0.1", AddressClass::Private),
        ("::ffff:169.254.169.254", AddressClass::LinkLocal),
        ("::ffff:100.64.0.1", AddressClass::SharedAddressSpace),
        ("::ffff:0.0.0.0", AddressClass::Unspecified),
        ("::ffff:93.184.215.14", AddressClass::Public),
        ("64:ff9b::a9fe:a9fe", AddressClass::LinkLocal),
        ("2002:a9fe:a9fe::1", AddressClass::LinkLocal),
        // Just outside the ranges.
        ("172.32.0.1", AddressClass::Public),
        ("100.128.0.1", AddressClass::Public),
        ("169.255.0.1", AddressClass::Public),
    ];
    for (address, class) in cases {
        assert_eq!(AddressClass::of(ip(address)), class, "{address}");
    }
}

#[test]
fn a_remote_server_reaches_public_addresses_only() {
    let policy = AddressPolicy::for_server("https://mcp.example.com/mcp");
    assert!(policy.allows(ip("93.184.215.14")));
    assert!(policy.allows(ip("2606:4700::1111")));
    for refused in [
        "127.0.0.1",
        "::1",
        "10.255.255.1",
        "172.16.0.1",
        "192.168.1.1",
        "fd00::1",
        "169.254.169.254",
        "fe80::1",
        "100.64.0.1",
        "0.0.0.0",
        "::",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
        "192.0.2.1",
        "2001:db8::1",
        "198.18.0.1",
        "240.0.0.1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
    ] {
        assert!(!policy.allows(ip(refused)), "{refused}");
    }
    assert!(!policy.allows_plain_http());
    // What a name resolves to never widens it: only the URL's own words.
    assert_eq!(
        AddressPolicy::for_server("http://internal.example/mcp"),
        AddressPolicy::for_server("https://mcp.example.com/mcp"),
    );
}

#[test]
fn a_local_server_reaches_its_own_class_of_address() {
    for server in [
        "http://127.0.0.1:8080/mcp",
        "http://localhost:8080/mcp",
        "http://[::1]:8080/mcp",
    ] {
        let policy = AddressPolicy::for_server(server);
        assert!(policy.allows(ip("127.0.0.1")), "{server}");
        assert!(policy.allows(ip("::ffff:127.0.0.1")), "{server}");
        assert!(policy.allows(ip("93.184.215.14")), "{server}");
        assert!(!policy.allows(ip("10.255.255.1")), "{server}");
        assert!(!policy.allows(ip("169.254.169.254")), "{server}");
        assert!(!policy.allows(ip("::ffff:169.254.169.254")), "{server}");
        assert!(policy.allows_plain_http(), "{server}");
    }

    let private = AddressPolicy::for_server("http://10.1.2.3/mcp");
    assert!(private.allows(ip("192.168.1.1")));
    assert!(private.allows(ip("fd00::1")));
    assert!(!private.allows(ip("127.0.0.1")));
    assert!(!private.allows(ip("169.254.169.254")));
    assert!(private.allows_plain_http());

    // Plain http only when the server itself is plain http.
    assert!(!AddressPolicy::for_server("https://127.0.0.1/mcp").allows_plain_http());
    // A server at a link-local address is not a reason for plain http.
    assert!(!AddressPolicy::for_server("http://169.254.1.1/mcp").allows_plain_http());
}

#[test]
fn a_policy_is_widened_only_as_asked() {
    let policy =
        AddressPolicy::for_server("https://mcp.example.com/mcp").allow(AddressClass::Private);
    assert!(policy.allows(ip("10.0.0.9")));
    assert!(policy.allows(ip("::ffff:10.0.0.9")));
    assert!(!policy.allows(ip("127.0.0.1")));
    assert!(!policy.allows(ip("169.254.169.254")));
}

/// Connects with OAuth and a short limit, so that a client which tried to
/// reach the unroutable address would fail on the limit instead; the
/// address check must refuse an endpoint of `class`, whose URL it names.
async fn connect_expecting_refusal(
    server: &Shared,
    class: AddressClass,
) -> (toolkit_mcp::ClientError, String) {
    let error = McpClient::http("site", format!("{}/mcp", server.base))
        .oauth(OAuth::new("http://127.0.0.1:8976/callback", Agrees))
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect_err("refused");
    let refused = error
        .endpoint_refused()
        .expect("refused by the address check");
    assert_eq!(refused.address_class(), Some(class));
    let endpoint = refused.endpoint().to_owned();
    (error, endpoint)
}

#[tokio::test]
async fn a_registration_endpoint_at_cloud_metadata_is_refused() {
    let server = serve_naming(
        Some("http://169.254.169.254/latest/register?key=s3cret"),
        None,
    )
    .await;
    let (error, endpoint) = connect_expecting_refusal(&server, AddressClass::LinkLocal).await;
    assert_eq!(endpoint, "http://169.254.169.254/latest/register");
    let message = error.to_string();
    assert!(message.contains("169.254.169.254"), "{message}");
    assert!(message.contains("link-local"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
    assert!(server.seen().authorizations.is_empty());
}

#[tokio::test]
async fn a_token_endpoint_on_a_private_address_is_refused() {
    // 10.255.255.1 is unroutable here: a connection attempt would fail
    // (or hang until the limit) instead of being refused.
    let server = serve_naming(None, Some("http://10.255.255.1/token")).await;
    let (error, endpoint) = connect_expecting_refusal(&server, AddressClass::Private).await;
    assert_eq!(endpoint, "http://10.255.255.1/token");
    let message = error.to_string();
    assert!(message.contains("10.255.255.1"), "{message}");
    assert!(message.contains("private"), "{message}");
}

#[tokio::test]
async fn an_address_written_as_a_number_is_refused_too() {
    // 2852039166 is 169.254.169.254 written as one number.
    let server = serve_naming(None, Some("http://2852039166/token")).await;
    connect_expecting_refusal(&server, AddressClass::LinkLocal).await;
}

#[tokio::test]
async fn a_widened_policy_lets_the_class_through() {
    // Widened to link-local, the request is made, and fails for want of a
    // server there: no longer refused by the check.
    let server = serve_naming(Some("http://169.254.0.1/register"), None).await;
    let error = McpClient::http("site", format!("{}/mcp", server.base))
        .oauth(
            OAuth::new("http://127.0.0.1:8976/callback", Agrees)
                .allow_addresses([AddressClass::LinkLocal]),
        )
        .connect_timeout(Duration::from_secs(3))
        .connect()
        .await
        .expect_err("nothing there");
    assert!(error.endpoint_refused().is_none(), "{error}");
}
