//! The served side of MCP authorization: bearer tokens required on the
//! Streamable HTTP endpoint, the protected-resource metadata (RFC 9728)
//! that tells a client where to get one, and scopes deciding which tools
//! a token lists and calls.

pub(crate) mod jwt;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// What a valid token grants: its scopes, and who it was issued to and
/// for. When the server requires authorization, a tool reads its call's
/// grant with [`CallContext::state`](toolkit_core::CallContext::state)
/// (`context.state::<Grant>()`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Grant {
    /// The scopes the token carries.
    pub scopes: BTreeSet<String>,
    /// Whom the token was issued for (`sub`), if it says.
    pub subject: Option<String>,
    /// The client it was issued to (`client_id` or `azp`), if it says.
    pub client_id: Option<String>,
    /// When it expires, if it says.
    pub expires_at: Option<SystemTime>,
}

impl Grant {
    /// A grant of `scopes`, for a validator of the host's.
    pub fn new<S: Into<String>>(scopes: impl IntoIterator<Item = S>) -> Self {
        Self {
            scopes: scopes.into_iter().map(Into::into).collect(),
            subject: None,
            client_id: None,
            expires_at: None,
        }
    }

    /// The same grant, for `subject`.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// The same grant, issued to `client_id`.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Whether the grant has every scope of `needed`.
    pub fn has_all<'s>(&self, needed: impl IntoIterator<Item = &'s String>) -> bool {
        needed.into_iter().all(|scope| self.scopes.contains(scope))
    }
}

/// Why a token was refused: answered with HTTP 401 and
/// `error="invalid_token"`, the reason in `error_description`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRefusal {
    kind: RefusalKind,
    reason: String,
}

/// What was wrong with a refused token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalKind {
    /// Not a token this server can read.
    Malformed,
    /// Its signature does not check out.
    Signature,
    /// No key of the set fits it.
    UnknownKey,
    /// It has expired.
    Expired,
    /// It is not valid yet.
    NotYetValid,
    /// Another authorization server issued it.
    Issuer,
    /// It was issued for another resource.
    Audience,
    /// The host's validator refused it.
    Other,
}

impl TokenRefusal {
    /// A refusal of the host's validator, saying why.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            kind: RefusalKind::Other,
            reason: reason.into(),
        }
    }

    /// What was wrong.
    pub fn kind(&self) -> RefusalKind {
        self.kind
    }

    fn of(kind: RefusalKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            reason: reason.into(),
        }
    }

    pub(crate) fn malformed(why: impl Into<String>) -> Self {
        Self::of(RefusalKind::Malformed, why)
    }
    pub(crate) fn signature() -> Self {
        Self::of(RefusalKind::Signature, "the signature is not valid")
    }
    pub(crate) fn unknown_key() -> Self {
        Self::of(RefusalKind::UnknownKey, "no known key signed it")
    }
    pub(crate) fn expired() -> Self {
        Self::of(RefusalKind::Expired, "the token has expired")
    }
    pub(crate) fn not_yet_valid() -> Self {
        Self::of(RefusalKind::NotYetValid, "the token is not valid yet")
    }
    pub(crate) fn issuer() -> Self {
        Self::of(RefusalKind::Issuer, "the token has another issuer")
    }
    pub(crate) fn audience() -> Self {
        Self::of(
            RefusalKind::Audience,
            "the token was issued for another resource",
        )
    }
}

impl fmt::Display for TokenRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for TokenRefusal {}

/// Checks a bearer token and says what it grants. [`JwtValidator`]
/// checks JWTs against a key set; a host with opaque tokens implements
/// this with its authorization server's introspection.
///
/// [`JwtValidator`]: crate::JwtValidator
pub trait TokenValidator: Send + Sync {
    /// What `token` grants, or why it is refused.
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Grant, TokenRefusal>>;
}

/// Bearer tokens required on a served Streamable HTTP endpoint
/// ([`HttpOptions::authorization`](crate::HttpOptions::authorization)).
///
/// Every request must carry `Authorization: Bearer <token>` that the
/// validator accepts; a request without one is answered 401 with a
/// `WWW-Authenticate` challenge naming the protected-resource metadata,
/// which the server serves at `/.well-known/oauth-protected-resource`
/// followed by the endpoint's path (RFC 9728), and a refused token 401
/// with `error="invalid_token"`. Scopes decide the rest:
/// [`required_scopes`](Self::required_scopes) for any request, and
/// [`tool_scopes`](Self::tool_scopes) for one tool, which a token
/// without them neither lists nor calls (a call is answered 403 with
/// `error="insufficient_scope"` and the scopes to ask for, so that a
/// client can step up). A session serves only the subject and client
/// of the grant whose token opened it.
///
/// ```
/// use toolkit_mcp::{Authorization, HttpOptions, JwtValidator};
///
/// # fn keys() -> &'static str { r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"# }
/// let validator = JwtValidator::new("https://auth.example.com", "https://tools.example.com/mcp")
///     .keys(keys())?;
/// let authorization = Authorization::new("https://tools.example.com/mcp", validator)
///     .authorization_server("https://auth.example.com")
///     .required_scopes(["tools:read"])
///     .tool_scopes("delete_file", ["files:write"]);
/// let options = HttpOptions::new()
///     .allowed_hosts(["tools.example.com"])
///     .authorization(authorization);
/// # Ok::<(), toolkit_mcp::JwksError>(())
/// ```
#[derive(Clone)]
pub struct Authorization {
    pub(crate) resource: String,
    pub(crate) servers: Vec<String>,
    pub(crate) required: BTreeSet<String>,
    pub(crate) tools: BTreeMap<String, BTreeSet<String>>,
    pub(crate) validator: Arc<dyn TokenValidator>,
    pub(crate) name: Option<String>,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("servers", &self.servers)
            .field("required", &self.required)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Tokens for `resource` (this endpoint's canonical URL, the audience
    /// tokens must be issued for), checked by `validator`.
    pub fn new(resource: impl Into<String>, validator: impl TokenValidator + 'static) -> Self {
        Self {
            resource: resource.into(),
            servers: Vec::new(),
            required: BTreeSet::new(),
            tools: BTreeMap::new(),
            validator: Arc::new(validator),
            name: None,
        }
    }

    /// An authorization server that issues tokens for this resource
    /// (listed in the metadata; at least one is expected by clients).
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.servers.push(issuer.into());
        self
    }

    /// Scopes every request's token must carry.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes a token must carry to list and call the tool `name` (as
    /// served, prefix included).
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tools
            .entry(name.into())
            .or_default()
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// A name for the resource, shown to people (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Whether `grant` may list and call the tool `name`.
    pub(crate) fn allows_tool(&self, grant: &Grant, name: &str) -> bool {
        self.tools
            .get(name)
            .is_none_or(|needed| grant.has_all(needed))
    }

    /// The scopes a call of `name` needs beyond the required ones.
    pub(crate) fn scopes_for_tool(&self, name: &str) -> BTreeSet<String> {
        let mut scopes = self.required.clone();
        if let Some(tool) = self.tools.get(name) {
            scopes.extend(tool.iter().cloned());
        }
        scopes
    }

    /// The protected-resource metadata document (RFC 9728).
    pub(crate) fn metadata(&self) -> Value {
        let mut supported: BTreeSet<&String> = self.required.iter().collect();
        supported.extend(self.tools.values().flatten());
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.servers,
            "bearer_methods_supported": ["header"],
            "scopes_supported": supported,
        });
        if let Some(name) = &self.name {
            document["resource_name"] = json!(name);
        }
        document
    }
}

/// The metadata's URL for an endpoint at `path` of `resource`'s origin.
pub(crate) fn metadata_url(resource: &str, path: &str) -> String {
    let origin_end = resource
        .find("://")
        .map(|scheme| {
            resource[scheme + 3..]
                .find('/')
                .map_or(resource.len(), |slash| scheme + 3 + slash)
        })
        .unwrap_or(resource.len());
    format!("{}{}", &resource[..origin_end], metadata_path(path))
}

/// The grant a request came with, put there by the HTTP guard.
pub(crate) fn grant_of(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Option<Grant> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Grant>())
        .cloned()
}

/// The path the metadata is served at for an endpoint at `path`: the
/// well-known prefix inserted before it (RFC 9728, section 3.1).
pub(crate) fn metadata_path(path: &str) -> String {
    let path = path.trim_end_matches('/');
    format!("/.well-known/oauth-protected-resource{path}")
}

/// A `WWW-Authenticate` challenge: `Bearer` with each parameter quoted.
pub(crate) fn challenge(parameters: &[(&str, &str)]) -> String {
    let mut header = String::from("Bearer");
    for (index, (name, value)) in parameters.iter().enumerate() {
        header.push_str(if index == 0 { " " } else { ", " });
        header.push_str(name);
        header.push_str("=\"");
        // Quoted-string: a quote or backslash is escaped; control
        // characters cannot appear in a header and are dropped.
        for c in value.chars() {
            match c {
                '"' | '\\' => {
                    header.push('\\');
                    header.push(c);
                }
                c if c.is_control() => {}
                c => header.push(c),
            }
        }
        header.push('"');
    }
    header
}
