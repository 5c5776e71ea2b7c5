//! A served registry that requires bearer tokens, tried with our own
//! client and with plain HTTP: valid, expired, wrong-audience,
//! wrong-scope, tampered and missing tokens; the metadata that tells a
//! client where to get one; a key set fetched by URL, and rotated.
//!
//! Tokens are signed here with keys made for the run (ES256 and EdDSA,
//! on *ring*), and checked by the server against their public halves.

mod support;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};
use toolkit_core::{CallContext, Registry, tool, tools};
use toolkit_mcp::{Authorization, Grant, HttpOptions, JwtValidator, McpClient, McpServer};
use toolkit_tests::runner::{self, Test};

const ISSUER: &str = "https://auth.example.test";

/// Reads the notes.
#[tool]
fn read_notes(#[tool(context)] context: CallContext) -> String {
    let grant = context.state::<Grant>().expect("the call's grant");
    format!("notes for {}", grant.subject.unwrap_or_default())
}

/// Deletes the notes.
#[tool]
fn delete_notes() -> String {
    "deleted".to_owned()
}

/// A key that signs tokens, and its public half as a JWK.
enum Signer {
    Es256(EcdsaKeyPair, String),
    EdDsa(Ed25519KeyPair, String),
}

impl Signer {
    fn es256(kid: &str) -> Self {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &random)
                .expect("a key");
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &random,
        )
        .expect("a key pair");
        Self::Es256(pair, kid.to_owned())
    }

    fn eddsa(kid: &str) -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).expect("a key");
        Self::EdDsa(
            Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("a key pair"),
            kid.to_owned(),
        )
    }

    fn jwk(&self) -> Value {
        match self {
            Self::Es256(pair, kid) => {
                let point = pair.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                    "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                    "y": URL_SAFE_NO_PAD.encode(&point[33..65])})
            }
            Self::EdDsa(pair, kid) => json!({"kty": "OKP", "crv": "Ed25519", "kid": kid,
                "x": URL_SAFE_NO_PAD.encode(pair.public_key().as_ref())}),
        }
    }

    fn sign(&self, claims: &Value) -> String {
        let (alg, kid) = match self {
            Self::Es256(_, kid) => ("ES256", kid),
            Self::EdDsa(_, kid) => ("EdDSA", kid),
        };
        let header = json!({"alg": alg, "typ": "at+jwt", "kid": kid});
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = match self {
            Self::Es256(pair, _) => pair
                .sign(&SystemRandom::new(), signed.as_bytes())
                .expect("a signature")
                .as_ref()
                .to_vec(),
            Self::EdDsa(pair, _) => pair.sign(signed.as_bytes()).as_ref().to_vec(),
        };
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

fn key_set(signers: &[&Signer]) -> String {
    json!({"keys": signers.iter().map(|signer| signer.jwk()).collect::<Vec<_>>()}).to_string()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// Claims for `audience` with `scope`, valid for an hour unless `exp`
/// is given.
fn claims(audience: &str, scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": audience, "sub": "ada", "scope": scope,
        "iat": now(), "exp": now() + 3600, "client_id": "test-client"})
}

/// A served registry requiring tokens.
struct Served {
    url: String,
    /// The endpoint's URL: the audience its tokens are issued for.
    resource: String,
}

/// A POST of JSON-RPC to the endpoint at `url`, taking either answer.
fn mcp_post(url: &str) -> reqwest::RequestBuilder {
    plain_http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

fn plain_http() -> reqwest::Client {
    support::plain_http_client()
}

/// What a bare `tools/list` POST with `token` is answered.
async fn answer_to(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = mcp_post(url)
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
        );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("an answer");
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().expect("text").to_owned())
        .unwrap_or_default();
    (response.status().as_u16(), challenge)
}

async fn names(url: &str, token: &str) -> Result<Vec<String>, String> {
    let client = McpClient::http("notes", url)
        .bearer(token)
        .connect()
        .await
        .map_err(|error| format!("{error:#}"))?;
    let tools = client.tools().await.map_err(|error| error.to_string())?;
    Ok(tools.iter().map(|tool| tool.name().to_owned()).collect())
}

async fn tokens_decide_what_is_listed_and_called() {
    let signer = Signer::es256("k1");
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    })
    .await;
    let reader = signer.sign(&claims(&served.resource, "notes:read"));
    let writer = signer.sign(&claims(&served.resource, "notes:read notes:write"));

    // Read scope: only the tool that needs no more is listed.
    assert_eq!(
        names(&served.url, &reader).await.unwrap(),
        ["notes_read_notes"]
    );
    let client = McpClient::http("notes", &served.url)
        .bearer(&writer)
        .connect()
        .await
        .expect("connected");
    let registry = Registry::builder()
        .tools(client.tools().await.expect("tools"))
        .build()
        .expect("a registry");
    let mut listed: Vec<String> = registry.names().collect();
    listed.sort();
    assert_eq!(listed, ["notes_delete_notes", "notes_read_notes"]);
    // The tool reads the grant of the request that called it.
    let read = registry.dispatch(("notes_read_notes", "{}")).await;
    assert_eq!(read.result.to_text(), "notes for ada");
    let deleted = registry.dispatch(("notes_delete_notes", "{}")).await;
    assert_eq!(deleted.result.to_text(), "deleted");
    client.close().await;

    // A reader's call of the writer's tool, sent as a client would: 403
    // with the scopes to step up to.
    let response = mcp_post(&served.url)
        .bearer_auth(&reader)
        .header("mcp-protocol-version", "2026-07-28")
        .body(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "delete_notes", "arguments": {}}})
            .to_string(),
        )
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 403);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(
        challenge.contains(r#"scope="notes:read notes:write""#),
        "{challenge}"
    );
    // A body naming the tool twice is refused on the name rmcp reads, by
    // the handler, whatever the guard made of it.
    let twice = r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_notes", "arguments": {}, "name": "delete_notes"}}"#;
    let response = mcp_post(&served.url)
        .bearer_auth(&reader)
        .header("mcp-protocol-version", "2026-07-28")
        .body(twice)
        .send()
        .await
        .expect("an answer");
    let text = response.text().await.unwrap_or_default();
    assert!(
        !text.contains("deleted"),
        "a reader deleted the notes: {text}"
    );
}

async fn refused_tokens_are_told_why() {
    let signer = Signer::eddsa("e1");
    let stranger = Signer::eddsa("e1");
    let validator_for = |resource: &str| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    };
    let served = serve_with(&validator_for).await;
    let resource = &served.resource;
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        served.url.trim_end_matches("/mcp")
    );

    // Missing: 401 naming the metadata and the scopes to ask for.
    let (status, challenge) = answer_to(&served.url, None).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="notes:read""#)
    );
    // The metadata document, at the path-inserted well-known address and
    // at the root.
    for url in [
        metadata_url.clone(),
        format!(
            "{}/.well-known/oauth-protected-resource",
            served.url.trim_end_matches("/mcp")
        ),
    ] {
        let document: Value = plain_http()
            .get(&url)
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("JSON");
        assert_eq!(document["resource"], json!(resource));
        assert_eq!(document["authorization_servers"], json!([ISSUER]));
        assert_eq!(
            document["scopes_supported"],
            json!(["notes:read", "notes:write"])
        );
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }

    let expired = {
        let mut claims = claims(resource, "notes:read");
        claims["exp"] = json!(now() - 3600);
        signer.sign(&claims)
    };
    let wrong_audience = signer.sign(&claims("https://elsewhere.example.test/mcp", "notes:read"));
    let wrong_issuer = {
        let mut claims = claims(resource, "notes:read");
        claims["iss"] = json!("https://impostor.example.test");
        signer.sign(&claims)
    };
    let by_a_stranger = stranger.sign(&claims(resource, "notes:read"));
    let tampered = {
        let token = signer.sign(&claims(resource, "notes:read"));
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = URL_SAFE_NO_PAD.encode(claims(resource, "notes:read notes:write").to_string());
        parts.join(".")
    };
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
        URL_SAFE_NO_PAD.encode(claims(resource, "notes:read").to_string())
    );
    for (case, token, reason) in [
        ("expired", expired.as_str(), "expired"),
        ("wrong audience", &wrong_audience, "another resource"),
        ("wrong issuer", &wrong_issuer, "another issuer"),
        ("a stranger's key", &by_a_stranger, "signature"),
        ("tampered", &tampered, "signature"),
        ("alg none", &unsigned, "`none` is not accepted"),
        ("not a JWT", "opaque-token", "not a JWT"),
    ] {
        let (status, challenge) = answer_to(&served.url, Some(token)).await;
        assert_eq!(status, 401, "{case}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{case}: {challenge}"
        );
        assert!(challenge.contains(reason), "{case}: {challenge}");
        assert!(challenge.contains(&metadata_url), "{case}: {challenge}");
        // Our client is refused as well, with the reason in its error.
        let refused = names(&served.url, token).await.expect_err(case);
        assert!(
            refused.contains("401") || refused.to_lowercase().contains("unauthorized"),
            "{case}: {refused}"
        );
    }

    // Wrong scope: a valid token without the scope every request needs.
    let no_scope = signer.sign(&claims(resource, "profile"));
    let (status, challenge) = answer_to(&served.url, Some(&no_scope)).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(challenge.contains(r#"scope="notes:read""#), "{challenge}");

    // And a valid one passes.
    let valid = signer.sign(&claims(resource, "notes:read"));
    assert_eq!(answer_to(&served.url, Some(&valid)).await.0, 200);
}

/// A served registry requiring tokens checked by the validator made for
/// its URL.
async fn serve_with(validator_for: &dyn Fn(&str) -> JwtValidator) -> Served {
    // The resource is the endpoint's URL, known once the port is.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![read_notes, delete_notes])
            .build()
            .expect("a registry"),
    );
    let authorization = Authorization::new(&url, validator_for(&url))
        .authorization_server(ISSUER)
        .required_scopes(["notes:read"])
        .tool_scopes("delete_notes", ["notes:write"]);
    let options = HttpOptions::new().authorization(authorization);
    tokio::spawn(async move {
        McpServer::new(registry)
            .serve_http(listener, &options)
            .await
    });
    Served {
        resource: url.clone(),
        url,
    }
}

async fn keys_are_fetched_and_rotated() {
    let first = Signer::es256("2026-a");
    let second = Signer::es256("2026-b");
    let published = Arc::new(std::sync::Mutex::new(key_set(&[&first])));
    let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let jwks = {
        let published = Arc::clone(&published);
        let fetches = Arc::clone(&fetches);
        axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let body = published.lock().unwrap().clone();
                fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move { body }
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let jwks_url = format!(
        "http://{}/jwks.json",
        listener.local_addr().expect("an address")
    );
    tokio::spawn(async move { axum::serve(listener, jwks).await });

    // Fetched again at most every 0 s here: a minute unless set.
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .jwks_url(&jwks_url)
            .refresh_interval(std::time::Duration::ZERO)
    })
    .await;
    let fetched = || fetches.load(std::sync::atomic::Ordering::SeqCst);
    let token = first.sign(&claims(&served.resource, "notes:read"));
    assert_eq!(answer_to(&served.url, Some(&token)).await.0, 200);
    assert_eq!(answer_to(&served.url, Some(&token)).await.0, 200);
    assert_eq!(fetched(), 1, "fetched once, on the first token");

    // Rotated: a token naming a key the set did not hold makes the server
    // fetch the set again, and the new key is taken.
    *published.lock().unwrap() = key_set(&[&first, &second]);
    let rotated = second.sign(&claims(&served.resource, "notes:read"));
    assert_eq!(answer_to(&served.url, Some(&rotated)).await.0, 200);
    assert_eq!(fetched(), 2);
    assert_eq!(answer_to(&served.url, Some(&token)).await.0, 200);
    assert_eq!(fetched(), 2, "known keys need no fetch");
    // A key never published stays refused, after one more look.
    let unknown = Signer::es256("2026-z").sign(&claims(&served.resource, "notes:read"));
    let (status, challenge) = answer_to(&served.url, Some(&unknown)).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("no known key"), "{challenge}");
    assert_eq!(fetched(), 3);
}

/// A POST of `body` with `token`, in session `session`, as a client of
/// `version` sends it; `extra` headers are added.
async fn send(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &Value,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let version = if session.is_some() || body["method"] == "initialize" {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    let mut request = mcp_post(url)
        .header("mcp-protocol-version", version)
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.send().await.expect("an answer")
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

/// A session of 2025-11-25 serves the holder of the token that opened
/// it: another holder's valid token, on the same session id, neither
/// reads its stream, lists, calls nor ends it (the id may have leaked).
async fn a_session_serves_only_its_holder() {
    let signer = Signer::es256("k1");
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    })
    .await;
    let ada = signer.sign(&claims(&served.resource, "notes:read"));
    let mallory = {
        let mut claims = claims(&served.resource, "notes:read");
        claims["sub"] = json!("mallory");
        claims["client_id"] = json!("another-client");
        signer.sign(&claims)
    };
    let opened = send(&served.url, Some(&ada), None, &initialize(), &[]).await;
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = send(&served.url, Some(&ada), Some(&session), &initialized, &[]).await;
    assert_eq!(answer.status().as_u16(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let answer = send(&served.url, Some(&ada), Some(&session), &list, &[]).await;
    assert_eq!(answer.status().as_u16(), 200);

    // Another holder's token on Ada's session: as if there were none.
    let answer = send(&served.url, Some(&mallory), Some(&session), &list, &[]).await;
    assert_eq!(
        answer.status().as_u16(),
        404,
        "another holder used the session"
    );
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read_notes", "arguments": {}}});
    let answer = send(&served.url, Some(&mallory), Some(&session), &call, &[]).await;
    assert_eq!(
        answer.status().as_u16(),
        404,
        "another holder called in the session"
    );
    let stream = plain_http()
        .get(&served.url)
        .bearer_auth(&mallory)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("an answer");
    assert_eq!(
        stream.status().as_u16(),
        404,
        "another holder read the stream"
    );
    for token in [Some(mallory.as_str()), None] {
        let ended = plain_http()
            .delete(&served.url)
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session);
        let ended = match token {
            Some(token) => ended.bearer_auth(token),
            None => ended,
        };
        let status = ended.send().await.expect("an answer").status().as_u16();
        assert!(
            status == 404 || status == 401,
            "{token:?} ended it: {status}"
        );
    }
    // Ada's session lives on, and a new token of hers (a refresh) keeps it.
    let refreshed = {
        let mut claims = claims(&served.resource, "notes:read");
        claims["exp"] = json!(now() + 7200);
        signer.sign(&claims)
    };
    let answer = send(&served.url, Some(&refreshed), Some(&session), &list, &[]).await;
    assert_eq!(answer.status().as_u16(), 200);
}

/// A page reached through DNS rebinding is refused for its `Host` before
/// anything of its token is looked at or told: the same answer with a
/// forged token, a malformed one, or none.
async fn a_foreign_host_is_refused_before_the_token() {
    let signer = Signer::es256("k1");
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    })
    .await;
    let foreign = [("host", "attacker.example")];
    let forged = Signer::es256("k1").sign(&claims(&served.resource, "notes:read"));
    let no_scope = signer.sign(&claims(&served.resource, "profile"));
    let bare = send(&served.url, None, None, &initialize(), &foreign).await;
    assert_eq!(bare.status().as_u16(), 403);
    assert!(bare.headers().get("www-authenticate").is_none());
    for (case, token) in [
        ("forged", forged.as_str()),
        ("not a JWT", "opaque"),
        ("without the scope", &no_scope),
    ] {
        let answer = send(&served.url, Some(token), None, &initialize(), &foreign).await;
        assert_eq!(answer.status().as_u16(), 403, "{case}");
        assert!(
            answer.headers().get("www-authenticate").is_none(),
            "{case}: the token was judged for a foreign host: {:?}",
            answer.headers().get("www-authenticate")
        );
    }
}

/// Two `Authorization` headers are a malformed request (400,
/// `invalid_request`): which of them a proxy in front checked is unknown.
async fn two_authorizations_are_malformed() {
    let signer = Signer::es256("k1");
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    })
    .await;
    let valid = signer.sign(&claims(&served.resource, "notes:read"));
    let answer = mcp_post(&served.url)
        .header("authorization", format!("Bearer {valid}"))
        .header("authorization", "Bearer something-else")
        .body(initialize().to_string())
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status().as_u16(), 400);
    let challenge = answer.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains(r#"error="invalid_request""#),
        "{challenge}"
    );
}

/// No spelling of a call reaches a tool the token lacks the scope for:
/// escapes, case, spaces, a batch, the method's casing.
async fn no_spelling_of_a_call_passes_the_scope() {
    let signer = Signer::es256("k1");
    let served = serve_with(&|resource| {
        JwtValidator::new(ISSUER, resource)
            .keys(&key_set(&[&signer]))
            .expect("keys")
    })
    .await;
    let reader = signer.sign(&claims(&served.resource, "notes:read"));
    let call = |name: &str| {
        format!(
            r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"name": {name}, "arguments": {{}}}}}}"#
        )
    };
    let mut bodies = vec![
        call(r#""delete\u005fnotes""#),
        call(r#""\u0064elete_notes""#),
        call(r#""Delete_Notes""#),
        call(r#"" delete_notes""#),
        call(r#""delete_notes ""#),
        call(r#""delete_notes\u0000""#),
        format!("[{}]", call(r#""delete_notes""#)),
        format!(
            "[{}, {}]",
            call(r#""read_notes""#),
            call(r#""delete_notes""#)
        ),
        call(r#""delete_notes""#).replace("tools/call", "Tools/call"),
        call(r#""delete_notes""#).replace(r#""name""#, r#""n\u0061me""#),
    ];
    bodies.push(
        r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "delete_notes", "name": "read_notes", "arguments": {}}}"#.to_owned(),
    );
    for body in bodies {
        for version in ["2026-07-28", "2025-11-25"] {
            let answer = mcp_post(&served.url)
                .bearer_auth(&reader)
                .header("mcp-protocol-version", version)
                .body(body.clone())
                .send()
                .await
                .expect("an answer");
            let status = answer.status().as_u16();
            let text = answer.text().await.unwrap_or_default();
            assert!(
                !text.contains("deleted"),
                "{version} {body}: a reader deleted the notes ({status}): {text}"
            );
        }
    }
}

/// Claims of a signed token that the validator must read as RFC 7519
/// says: times are numbers, integer or not; a `crit` header it does not
/// understand refuses the token.
async fn claims_are_read_strictly() {
    use toolkit_mcp::TokenValidator as _;
    let signer = Signer::es256("k1");
    let resource = "https://tools.example.test/mcp";
    let validator = JwtValidator::new(ISSUER, resource)
        .keys(&key_set(&[&signer]))
        .expect("keys");
    let with = |name: &str, value: Value| {
        let mut claims = claims(resource, "notes:read");
        claims[name] = value;
        signer.sign(&claims)
    };
    let later = (now() + 3600) as f64 + 0.5;
    for (case, token) in [
        ("nbf a float, an hour ahead", with("nbf", json!(later))),
        (
            "nbf a string",
            with("nbf", json!((now() + 3600).to_string())),
        ),
        (
            "exp a string",
            with("exp", json!((now() + 3600).to_string())),
        ),
        ("exp negative", with("exp", json!(-1))),
        ("exp missing", with("exp", Value::Null)),
    ] {
        assert!(validator.validate(&token).await.is_err(), "{case} passed");
    }
    // A fractional expiry an hour ahead is a valid NumericDate.
    let token = with("exp", json!(later));
    assert!(
        validator.validate(&token).await.is_ok(),
        "a fractional exp was refused"
    );
    // A critical header extension the validator does not know.
    let critical = {
        let token = signer.sign(&claims(resource, "notes:read"));
        let header = json!({"alg": "ES256", "kid": "k1", "crit": ["exp-bound"], "exp-bound": 1});
        let payload = token.split('.').nth(1).unwrap().to_owned();
        let signed = format!("{}.{payload}", URL_SAFE_NO_PAD.encode(header.to_string()));
        let Signer::Es256(pair, _) = &signer else {
            unreachable!()
        };
        let signature = pair
            .sign(&SystemRandom::new(), signed.as_bytes())
            .expect("a signature");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    };
    assert!(
        validator.validate(&critical).await.is_err(),
        "a token with an unknown critical header passed"
    );
}

fn main() -> ExitCode {
    runner::run(vec![
        Test::new("tokens_decide_what_is_listed_and_called", || {
            support::block_on(tokens_decide_what_is_listed_and_called())
        }),
        Test::new("refused_tokens_are_told_why", || {
            support::block_on(refused_tokens_are_told_why())
        }),
        Test::new("keys_are_fetched_and_rotated", || {
            support::block_on(keys_are_fetched_and_rotated())
        }),
        Test::new("a_session_serves_only_its_holder", || {
            support::block_on(a_session_serves_only_its_holder())
        }),
        Test::new("a_foreign_host_is_refused_before_the_token", || {
            support::block_on(a_foreign_host_is_refused_before_the_token())
        }),
        Test::new("two_authorizations_are_malformed", || {
            support::block_on(two_authorizations_are_malformed())
        }),
        Test::new("no_spelling_of_a_call_passes_the_scope", || {
            support::block_on(no_spelling_of_a_call_passes_the_scope())
        }),
        Test::new("claims_are_read_strictly", || {
            support::block_on(claims_are_read_strictly())
        }),
    ])
}
