//! OAuth 2.1 authorization of an HTTP server, as the MCP authorization
//! specification asks: a server's `401` starts it, a `403
//! insufficient_scope` steps the scopes up.
//!
//! rmcp's `auth` module does the protocol (protected-resource and
//! authorization-server metadata discovery, client registration, PKCE, the
//! token exchange with its `resource` and `iss` checks, refresh); this file
//! decides when to run it, and hands the user's approval to the host.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex, PoisonError};

use reqwest::Url;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use tokio::sync::Mutex;

use super::address::{AddressClass, AddressPolicy, EndpointRefused, Resolver, refusal_in};

/// What an [`Authorizer`] gives back: the URL the authorization server
/// redirected the user's browser to (with its `code`, `state` and, when the
/// server sends it, `iss`), or why there is none.
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub type Authorizing<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// The host's part of an OAuth authorization: shows the user the
/// authorization server's page and brings back where it redirected to.
///
/// A desktop host opens `url` in a browser and listens on the redirect URI
/// given to [`OAuth::new`]; a test or a headless host may fetch `url`
/// itself and read the redirect's `Location`.
///
/// ```
/// use toolkit_mcp::{Authorizer, Authorizing};
///
/// /// Asks on the terminal for the address the browser was sent to.
/// struct Terminal;
///
/// impl Authorizer for Terminal {
///     fn authorize<'a>(&'a self, url: &'a str) -> Authorizing<'a> {
///         Box::pin(async move {
///             println!("Open {url}, approve, and paste the address you land on:");
///             let mut line = String::new();
///             std::io::stdin().read_line(&mut line).map_err(|error| error.to_string())?;
///             Ok(line.trim().to_owned())
///         })
///     }
/// }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub trait Authorizer: Send + Sync {
    /// Has the user approve the authorization request at `url`.
    fn authorize<'a>(&'a self, url: &'a str) -> Authorizing<'a>;
}

/// How [`McpClient`](crate::McpClient) gets an access token for a server
/// that asks for one: OAuth 2.1 with PKCE, as the MCP authorization
/// specification describes. Given to
/// [`McpClientBuilder::oauth`](crate::McpClientBuilder::oauth).
///
/// The client registers itself with the authorization server the first way
/// that applies: the client ID given here ([`client_id`](Self::client_id)),
/// a client ID metadata document ([`client_metadata_url`](Self::client_metadata_url))
/// when the server takes them, or dynamic client registration.
/// The client secret never appears in `Debug` output.
///
/// The endpoints of the authorization come from metadata the server
/// publishes, so the requests to them are checked against an
/// [`AddressPolicy`] on the addresses they connect to (names resolved,
/// redirects followed): a server cannot send the client to its host's
/// loopback, private network or cloud metadata service, unless it is itself
/// on such an address. The requests go direct, never through a proxy (a
/// proxy would resolve the names, out of the check's sight).
/// [`allow_addresses`](Self::allow_addresses) widens the policy.
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub struct OAuth {
    redirect_uri: String,
    authorizer: Arc<dyn Authorizer>,
    client_name: String,
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    step_ups: u32,
    allowed: Vec<AddressClass>,
}

impl OAuth {
    /// Authorization with the user's approval coming from `authorizer`,
    /// redirected to `redirect_uri` (for a native host, a loopback address
    /// such as `http://127.0.0.1:8976/callback`).
    pub fn new(redirect_uri: impl Into<String>, authorizer: impl Authorizer + 'static) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            authorizer: Arc::new(authorizer),
            client_name: "toolkit-mcp".to_owned(),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            step_ups: 2,
            allowed: Vec::new(),
        }
    }

    /// The name the client registers under (`toolkit-mcp` unless set).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client ID registered with the authorization server beforehand: no
    /// registration is made.
    #[must_use]
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The secret of the [`client_id`](Self::client_id), for a confidential
    /// client; sent as the authorization server asks (HTTP Basic or in the
    /// form).
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The HTTPS URL of this client's metadata document, used as its client
    /// ID by authorization servers that advertise
    /// `client_id_metadata_document_supported`.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The scopes to ask for. Unless set, they come from the server's
    /// challenge (`WWW-Authenticate: Bearer scope=...`), else from its
    /// protected-resource metadata (`scopes_supported`), else none are
    /// asked for.
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How many times one request may ask the user for more scopes after
    /// the server refused it with `403 insufficient_scope` (2 unless set),
    /// so that a server that never accepts cannot loop.
    #[must_use]
    pub fn step_ups(mut self, limit: u32) -> Self {
        self.step_ups = limit;
        self
    }

    /// Also lets the authorization's requests reach addresses of these
    /// classes, beyond what [`AddressPolicy::for_server`] allows: for
    /// instance [`AddressClass::Private`] for a server on a public name
    /// whose authorization server is inside the host's network, or for a
    /// server on an intranet name (one that resolves to a private
    /// address), whose own metadata is otherwise out of reach.
    ///
    /// ```
    /// use toolkit_mcp::{AddressClass, Authorizer, Authorizing, OAuth};
    /// # struct Browser;
    /// # impl Authorizer for Browser {
    /// #     fn authorize<'a>(&'a self, _: &'a str) -> Authorizing<'a> {
    /// #         Box::pin(async { Err("no browser".to_owned()) })
    /// #     }
    /// # }
    ///
    /// let oauth = OAuth::new("http://127.0.0.1:8976/callback", Browser)
    ///     .allow_addresses([AddressClass::Private]);
    /// ```
    #[must_use]
    pub fn allow_addresses(mut self, classes: impl IntoIterator<Item = AddressClass>) -> Self {
        for class in classes {
            if !self.allowed.contains(&class) {
                self.allowed.push(class);
            }
        }
        self
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<hidden>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("step_ups", &self.step_ups)
            .field("allowed", &self.allowed)
            .finish_non_exhaustive()
    }
}

/// The authorization of one server: its configuration and, once the user
/// approved, the manager holding the tokens.
pub(crate) struct Authorization {
    config: OAuth,
    server: String,
    policy: Arc<AddressPolicy>,
    http: Arc<dyn OAuthHttpClient>,
    manager: Mutex<Option<AuthorizationManager>>,
    /// The latest endpoint refused by the address check, which rmcp's
    /// errors carry only as text.
    refused: Arc<StdMutex<Option<EndpointRefused>>>,
}

impl Authorization {
    pub(crate) fn new(config: OAuth, server: &str) -> Result<Self, String> {
        let policy = config
            .allowed
            .iter()
            .fold(AddressPolicy::for_server(server), |policy, class| {
                policy.allow(*class)
            });
        let policy = Arc::new(policy);
        let refused = Arc::default();
        Ok(Self {
            http: Arc::new(OAuthHttp::new(Arc::clone(&policy), Arc::clone(&refused))?),
            config,
            server: server.to_owned(),
            policy,
            manager: Mutex::new(None),
            refused,
        })
    }

    /// The endpoint the address check refused since this was last asked.
    pub(crate) fn take_refusal(&self) -> Option<EndpointRefused> {
        self.refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// `error`, or the refusal behind it told plainly (rmcp's message for
    /// it names only the step that failed).
    fn explain(&self, error: AuthError) -> AuthError {
        let refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        match &*refused {
            Some(refusal) => AuthError::AuthorizationFailed(refusal.to_string()),
            None => error,
        }
    }

    /// How many step-ups one request may make.
    pub(crate) fn step_ups(&self) -> u32 {
        self.config.step_ups
    }

    /// The access token held, refreshed first when it is about to expire;
    /// none before the first authorization (the request then goes without,
    /// and the server's challenge starts one).
    pub(crate) async fn token(&self) -> Result<Option<String>, AuthError> {
        self.take_refusal();
        self.held_token().await.map_err(|error| self.explain(error))
    }

    async fn held_token(&self) -> Result<Option<String>, AuthError> {
        let manager = self.manager.lock().await;
        let Some(manager) = &*manager else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Runs a new authorization after the server refused `sent` with
    /// `challenge` (its `WWW-Authenticate`): discovery starts again from
    /// the challenge, so an authorization server that changed is found,
    /// and nothing registered with the previous one is reused. A token
    /// another request got meanwhile is taken instead.
    pub(crate) async fn authorize(
        &self,
        sent: Option<&str>,
        challenge: &str,
    ) -> Result<String, AuthError> {
        self.take_refusal();
        self.run_authorization(sent, challenge)
            .await
            .map_err(|error| self.explain(error))
    }

    async fn run_authorization(
        &self,
        sent: Option<&str>,
        challenge: &str,
    ) -> Result<String, AuthError> {
        let mut held = self.manager.lock().await;
        if let Some(manager) = &*held
            && let Ok(token) = manager.get_access_token().await
            && Some(token.as_str()) != sent
        {
            return Ok(token);
        }
        *held = None;
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(&*self.server, Arc::clone(&self.http))
                .await?;
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?;
        manager.set_metadata(resolution.metadata);
        let config = &self.config;
        let mut request = AuthorizationRequest::new(config.redirect_uri.as_str())
            .with_client_name(config.client_name.as_str())
            .with_initial_scope_selection()
            .with_challenge(challenge);
        if !config.scopes.is_empty() {
            request = request.with_scopes(config.scopes.iter().cloned());
        }
        if let Some(id) = &config.client_id {
            request = request.with_preregistered_client(id.as_str());
        }
        if let Some(secret) = &config.client_secret {
            request = request.with_client_secret(secret.as_str());
        }
        if let Some(url) = &config.client_metadata_url {
            request = request.with_client_metadata_url(url.as_str());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, error)| error)?;
        let redirected = self.approve(session.get_authorization_url()).await?;
        session.handle_callback_url(&redirected).await?;
        let manager = session.auth_manager;
        let token = manager.get_access_token().await?;
        *held = Some(manager);
        Ok(token)
    }

    /// Asks the user for the scope the server said it needs (`403
    /// insufficient_scope`), on top of the ones held.
    pub(crate) async fn step_up(&self, required_scope: &str) -> Result<String, AuthError> {
        self.take_refusal();
        self.run_step_up(required_scope)
            .await
            .map_err(|error| self.explain(error))
    }

    async fn run_step_up(&self, required_scope: &str) -> Result<String, AuthError> {
        let held = self.manager.lock().await;
        let Some(manager) = &*held else {
            return Err(AuthError::AuthorizationRequired);
        };
        // The limit is the request's own (`step_ups`); rmcp's counter spans
        // the manager's life.
        manager.reset_scope_upgrade_attempts().await;
        let url = manager.request_scope_upgrade(required_scope).await?;
        let redirected = self.approve(&url).await?;
        let callback = AuthorizationCallback::from_redirect_url(&redirected)?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        manager.get_access_token().await
    }

    /// Has the user approve at `url`, the authorization endpoint: opened
    /// by the user's browser, not by this client, so only its scheme is
    /// checked.
    async fn approve(&self, url: &str) -> Result<String, AuthError> {
        // Discovery and registration went through: a refusal on the way
        // (of one candidate among several) is not why anything after fails.
        self.take_refusal();
        let parsed = Url::parse(url)?;
        if let Err(refusal) = self.policy.check_scheme(&parsed) {
            *self.refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(refusal.clone());
            return Err(AuthError::AuthorizationFailed(refusal.to_string()));
        }
        self.config
            .authorizer
            .authorize(url)
            .await
            .map_err(|reason| AuthError::AuthorizationFailed(format!("not approved: {reason}")))
    }
}

/// Largest metadata or token response read.
const MAX_OAUTH_BODY: usize = 1 << 20;

/// Most redirects one OAuth request follows.
const MAX_OAUTH_REDIRECTS: usize = 10;

/// The OAuth requests go through clients of their own, with the toolkit's
/// TLS (rmcp's default client would need a process-wide TLS provider) and
/// the address check: names resolve through [`Resolver`], and IP-literal
/// hosts (which resolve nothing) are checked before each request and
/// redirect.
struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: Arc<AddressPolicy>,
    refused: Arc<StdMutex<Option<EndpointRefused>>>,
}

impl OAuthHttp {
    fn new(
        policy: Arc<AddressPolicy>,
        refused: Arc<StdMutex<Option<EndpointRefused>>>,
    ) -> Result<Self, String> {
        let build = |redirect: reqwest::redirect::Policy| {
            toolkit_http::client_builder()
                .map_err(|error| format!("TLS could not be set up: {error}"))?
                .redirect(redirect)
                .dns_resolver(Resolver::new(Arc::clone(&policy)))
                // Through a proxy, the proxy would resolve the names.
                .no_proxy()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .map_err(|error| format!("the HTTP client could not be made: {error}"))
        };
        let checked = Arc::clone(&policy);
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if let Err(refusal) = checked.check_url(attempt.url()) {
                attempt.error(refusal)
            } else if attempt.previous().len() > MAX_OAUTH_REDIRECTS {
                attempt.error(format!("more than {MAX_OAUTH_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        Ok(Self {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy,
            refused,
        })
    }

    fn refuse(&self, refusal: EndpointRefused) -> rmcp::transport::auth::OAuthHttpClientError {
        tracing::warn!("{refusal}");
        *self.refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(refusal.clone());
        Box::new(refusal)
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let request = reqwest::Request::try_from(request.request)?;
            let url = request.url().clone();
            if let Err(refusal) = self.policy.check_url(&url) {
                return Err(self.refuse(refusal));
            }
            let mut response = match client.execute(request).await {
                Ok(response) => response,
                Err(error) => {
                    return Err(match refusal_in(&error) {
                        Some(refusal) => self.refuse(refusal.at(&url)),
                        None => error.into(),
                    });
                }
            };
            let mut answer = ::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_OAUTH_BODY {
                    return Err(format!("an OAuth response over {MAX_OAUTH_BODY} bytes").into());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(answer.body(body)?)
        })
    }
}
