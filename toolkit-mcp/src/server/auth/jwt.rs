//! JSON Web Tokens checked on *ring*, against a key set (JWKS) the host
//! gives or names by URL.
//!
//! A module of its own rather than the `jsonwebtoken` crate: its current
//! releases verify on aws-lc or on the RustCrypto crates, and neither is
//! in this crate's tree, while *ring* already is (the TLS of every HTTP
//! client here).

use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::{Map, Value};

use super::{Grant, TokenRefusal, TokenValidator};

/// Checks bearer tokens that are JWTs (RFC 9068 access tokens, or any JWT
/// an authorization server signs): the signature against a key of the set,
/// the issuer, the audience (this server's resource), the expiry and
/// not-before times, and reads the scopes from `scope` (space-separated)
/// or `scp` (a list).
///
/// Algorithms: RS256/384/512, PS256/384/512, ES256, ES384 and EdDSA
/// (Ed25519). `none` and the shared-secret HS* algorithms are refused:
/// a key set holds public keys. A token must carry `exp`; a minute of
/// clock skew is allowed either way.
///
/// ```
/// use toolkit_mcp::JwtValidator;
///
/// let jwks = r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1",
///     "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
///     "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#;
/// let validator = JwtValidator::new("https://auth.example.com", "https://tools.example.com/mcp")
///     .keys(jwks)?;
/// # Ok::<(), toolkit_mcp::JwksError>(())
/// ```
#[derive(Clone)]
pub struct JwtValidator {
    issuer: String,
    audience: String,
    leeway: Duration,
    refresh_interval: Duration,
    keys: Arc<RwLock<Vec<Key>>>,
    #[cfg(feature = "http-client")]
    source: Option<Arc<KeySource>>,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

/// Why a key set could not be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum JwksError {
    /// The text is not a JSON Web Key Set (`{"keys": [...]}`).
    NotAKeySet(String),
    /// No key of the set can check a signature here.
    NoUsableKey,
}

impl std::fmt::Display for JwksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAKeySet(why) => write!(f, "not a JSON Web Key Set: {why}"),
            Self::NoUsableKey => f.write_str(
                "no key of the set is usable (RSA, EC P-256/P-384 or Ed25519 public keys, for signatures)",
            ),
        }
    }
}

impl std::error::Error for JwksError {}

impl JwtValidator {
    /// A validator for tokens issued by `issuer` (the `iss` claim, exactly)
    /// for `audience` (one of the `aud` claim's values: this server's
    /// resource, as in its protected-resource metadata). Give it keys
    /// ([`keys`](Self::keys)) or where to fetch them
    /// ([`jwks_url`](Self::jwks_url)); without either, every token is
    /// refused.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            audience: audience.into(),
            leeway: Duration::from_secs(60),
            refresh_interval: Duration::from_secs(60),
            keys: Arc::default(),
            #[cfg(feature = "http-client")]
            source: None,
        }
    }

    /// The keys, as a JSON Web Key Set (`{"keys": [...]}`). Keys of kinds
    /// that cannot check signatures here are skipped; a set with none left
    /// is an error.
    pub fn keys(self, jwks: &str) -> Result<Self, JwksError> {
        let keys = read_key_set(jwks)?;
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
        Ok(self)
    }

    /// How long after fetching the key set a token naming an unknown key
    /// may make it fetch again (a minute unless set): forged tokens with
    /// made-up key ids cannot make it fetch more often.
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (a minute unless set).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Fetches the key set from `url` (the authorization server's
    /// `jwks_uri`) on the first token, and again when a token names a key
    /// the set does not hold (keys rotate), at most once per
    /// [`refresh_interval`](Self::refresh_interval).
    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.source = Some(Arc::new(KeySource {
            url: url.into(),
            fetched: tokio::sync::Mutex::new(None),
        }));
        self
    }

    fn check(&self, token: &str, now: u64) -> Result<Grant, Checked> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Checked::Refused(TokenRefusal::malformed(
                "not a JWT (three dot-separated parts)",
            )));
        };
        let header: Map<String, Value> = decode_json(header)
            .ok_or_else(|| Checked::Refused(TokenRefusal::malformed("unreadable header")))?;
        let algorithm = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let Some(algorithm) = Algorithm::named(algorithm) else {
            return Err(Checked::Refused(TokenRefusal::malformed(format!(
                "algorithm `{algorithm}` is not accepted"
            ))));
        };
        // A critical extension must be understood (RFC 7515, 4.1.11), and
        // none is here.
        if header.contains_key("crit") {
            return Err(Checked::Refused(TokenRefusal::malformed(
                "a critical header extension is not understood",
            )));
        }
        let kid = header.get("kid").and_then(Value::as_str);
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| Checked::Refused(TokenRefusal::malformed("unreadable signature")))?;
        let signed = &token[..header_and_payload_len(token)];
        {
            let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
            let candidates: Vec<&Key> = keys
                .iter()
                .filter(|key| key.fits(algorithm) && (kid.is_none() || key.kid.as_deref() == kid))
                .collect();
            if candidates.is_empty() {
                return Err(Checked::UnknownKey);
            }
            if !candidates
                .iter()
                .any(|key| key.verify(algorithm, signed.as_bytes(), &signature))
            {
                return Err(Checked::Refused(TokenRefusal::signature()));
            }
        }
        let claims: Map<String, Value> = decode_json(payload)
            .ok_or_else(|| Checked::Refused(TokenRefusal::malformed("unreadable claims")))?;
        self.claims(claims, now).map_err(Checked::Refused)
    }

    fn claims(&self, claims: Map<String, Value>, now: u64) -> Result<Grant, TokenRefusal> {
        let leeway = self.leeway.as_secs();
        let Some(expires) = numeric_date(&claims, "exp")? else {
            return Err(TokenRefusal::malformed("no `exp` claim"));
        };
        if now > expires.saturating_add(leeway) {
            return Err(TokenRefusal::expired());
        }
        if let Some(not_before) = numeric_date(&claims, "nbf")?
            && now.saturating_add(leeway) < not_before
        {
            return Err(TokenRefusal::not_yet_valid());
        }
        if claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(TokenRefusal::issuer());
        }
        let audience_matches = match claims.get("aud") {
            Some(Value::String(one)) => *one == self.audience,
            Some(Value::Array(many)) => many.iter().any(|aud| aud.as_str() == Some(&self.audience)),
            _ => false,
        };
        if !audience_matches {
            return Err(TokenRefusal::audience());
        }
        let mut scopes = BTreeSet::new();
        match claims.get("scope") {
            Some(Value::String(list)) => scopes.extend(list.split_whitespace().map(str::to_owned)),
            Some(_) => return Err(TokenRefusal::malformed("`scope` is not a string")),
            None => match claims.get("scp") {
                Some(Value::Array(list)) => {
                    scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
                }
                Some(Value::String(list)) => {
                    scopes.extend(list.split_whitespace().map(str::to_owned));
                }
                _ => {}
            },
        }
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut grant = Grant::new(scopes);
        grant.subject = text("sub");
        grant.client_id = text("client_id").or_else(|| text("azp"));
        grant.expires_at = Some(UNIX_EPOCH + Duration::from_secs(expires));
        Ok(grant)
    }

    #[cfg(feature = "http-client")]
    async fn refresh(&self) -> bool {
        let Some(source) = &self.source else {
            return false;
        };
        let mut fetched = source.fetched.lock().await;
        if fetched.is_some_and(|at: std::time::Instant| at.elapsed() < self.refresh_interval) {
            return false;
        }
        *fetched = Some(std::time::Instant::now());
        let Ok(keys) = fetch_key_set(&source.url).await else {
            tracing::warn!(url = %source.url, "the key set could not be fetched");
            return false;
        };
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
        true
    }

    #[cfg(not(feature = "http-client"))]
    async fn refresh(&self) -> bool {
        false
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Grant, TokenRefusal>> {
        Box::pin(async move {
            let now = seconds_now();
            match self.check(token, now) {
                Ok(grant) => Ok(grant),
                Err(Checked::Refused(refusal)) => Err(refusal),
                Err(Checked::UnknownKey) => {
                    if self.refresh().await {
                        return match self.check(token, now) {
                            Ok(grant) => Ok(grant),
                            Err(Checked::Refused(refusal)) => Err(refusal),
                            Err(Checked::UnknownKey) => Err(TokenRefusal::unknown_key()),
                        };
                    }
                    Err(TokenRefusal::unknown_key())
                }
            }
        })
    }
}

#[cfg(feature = "http-client")]
struct KeySource {
    url: String,
    fetched: tokio::sync::Mutex<Option<std::time::Instant>>,
}

#[cfg(feature = "http-client")]
async fn fetch_key_set(url: &str) -> Result<Vec<Key>, Box<dyn std::error::Error + Send + Sync>> {
    let client = toolkit_http::client_builder()?
        .timeout(Duration::from_secs(10))
        .build()?;
    let response = client.get(url).send().await?.error_for_status()?;
    // A key set is a few kilobytes; a megabyte is far past any real one.
    let body = response.bytes().await?;
    if body.len() > 1 << 20 {
        return Err("the key set is over 1 MiB".into());
    }
    Ok(read_key_set(std::str::from_utf8(&body)?)?)
}

enum Checked {
    Refused(TokenRefusal),
    /// No key of the set fits the token's algorithm and key id.
    UnknownKey,
}

fn seconds_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The NumericDate claim `name` in whole seconds (RFC 7519 allows a
/// fraction, dropped here: a fraction of a second is within any leeway).
/// A claim that is not a non-negative number refuses the token rather
/// than being ignored, so that a `nbf` written as a string still holds.
fn numeric_date(claims: &Map<String, Value>, name: &str) -> Result<Option<u64>, TokenRefusal> {
    let Some(value) = claims.get(name) else {
        return Ok(None);
    };
    if let Some(whole) = value.as_u64() {
        return Ok(Some(whole));
    }
    match value.as_f64() {
        Some(seconds) if seconds.is_finite() && seconds >= 0.0 => Ok(Some(seconds as u64)),
        _ => Err(TokenRefusal::malformed(format!(
            "`{name}` is not a date (seconds since 1970)"
        ))),
    }
}

fn header_and_payload_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

fn decode_json(part: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(part).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Algorithm {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Algorithm {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => Self::Rs256,
            "RS384" => Self::Rs384,
            "RS512" => Self::Rs512,
            "PS256" => Self::Ps256,
            "PS384" => Self::Ps384,
            "PS512" => Self::Ps512,
            "ES256" => Self::Es256,
            "ES384" => Self::Es384,
            "EdDSA" => Self::EdDsa,
            _ => return None,
        })
    }
}

/// One usable public key of a set.
#[derive(Debug)]
struct Key {
    kid: Option<String>,
    /// The algorithm the set pins the key to, if it does.
    alg: Option<String>,
    material: Material,
}

#[derive(Debug)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point, `04 || x || y`.
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

impl Key {
    fn fits(&self, algorithm: Algorithm) -> bool {
        let kind = matches!(
            (&self.material, algorithm),
            (
                Material::Rsa { .. },
                Algorithm::Rs256
                    | Algorithm::Rs384
                    | Algorithm::Rs512
                    | Algorithm::Ps256
                    | Algorithm::Ps384
                    | Algorithm::Ps512,
            ) | (Material::P256(_), Algorithm::Es256)
                | (Material::P384(_), Algorithm::Es384)
                | (Material::Ed25519(_), Algorithm::EdDsa)
        );
        // A key the set pins to one algorithm checks that one only.
        kind && self
            .alg
            .as_deref()
            .is_none_or(|alg| Algorithm::named(alg) == Some(algorithm))
    }

    fn verify(&self, algorithm: Algorithm, message: &[u8], signature: &[u8]) -> bool {
        match &self.material {
            Material::Rsa { n, e } => {
                let parameters: &signature::RsaParameters = match algorithm {
                    Algorithm::Rs256 => &signature::RSA_PKCS1_2048_8192_SHA256,
                    Algorithm::Rs384 => &signature::RSA_PKCS1_2048_8192_SHA384,
                    Algorithm::Rs512 => &signature::RSA_PKCS1_2048_8192_SHA512,
                    Algorithm::Ps256 => &signature::RSA_PSS_2048_8192_SHA256,
                    Algorithm::Ps384 => &signature::RSA_PSS_2048_8192_SHA384,
                    Algorithm::Ps512 => &signature::RSA_PSS_2048_8192_SHA512,
                    _ => return false,
                };
                RsaPublicKeyComponents { n, e }
                    .verify(parameters, message, signature)
                    .is_ok()
            }
            Material::P256(point) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            Material::P384(point) => {
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            Material::Ed25519(key) => UnparsedPublicKey::new(&signature::ED25519, key)
                .verify(message, signature)
                .is_ok(),
        }
    }
}

fn read_key_set(jwks: &str) -> Result<Vec<Key>, JwksError> {
    let set: Value =
        serde_json::from_str(jwks).map_err(|error| JwksError::NotAKeySet(error.to_string()))?;
    let Some(entries) = set.get("keys").and_then(Value::as_array) else {
        return Err(JwksError::NotAKeySet("no `keys` list".to_owned()));
    };
    let keys: Vec<Key> = entries.iter().filter_map(read_key).collect();
    if keys.is_empty() {
        return Err(JwksError::NoUsableKey);
    }
    Ok(keys)
}

fn read_key(entry: &Value) -> Option<Key> {
    let text = |name: &str| entry.get(name).and_then(Value::as_str);
    let bytes = |name: &str| text(name).and_then(|b64| URL_SAFE_NO_PAD.decode(b64).ok());
    // A key for encryption only does not check signatures.
    if text("use").is_some_and(|usage| usage != "sig") {
        return None;
    }
    let material = match (text("kty")?, text("crv")) {
        ("RSA", _) => Material::Rsa {
            n: bytes("n")?,
            e: bytes("e")?,
        },
        ("EC", Some(curve @ ("P-256" | "P-384"))) => {
            let (x, y) = (bytes("x")?, bytes("y")?);
            let size = if curve == "P-256" { 32 } else { 48 };
            if x.len() != size || y.len() != size {
                return None;
            }
            let mut point = Vec::with_capacity(1 + 2 * size);
            point.push(4);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            if curve == "P-256" {
                Material::P256(point)
            } else {
                Material::P384(point)
            }
        }
        ("OKP", Some("Ed25519")) => Material::Ed25519(bytes("x")?),
        _ => return None,
    };
    Some(Key {
        kid: text("kid").map(str::to_owned),
        alg: text("alg").map(str::to_owned),
        material,
    })
}
