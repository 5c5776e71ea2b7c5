//! Allowed-domain patterns and the URL check built on them.

use std::fmt;

use url::{Host, Url};

/// One allowed-domain pattern: `example.com` (that host only),
/// `*.example.com` (the domain and every subdomain), `127.0.0.1`,
/// `[::1]`, `localhost`, each optionally with a port (`127.0.0.1:8080`,
/// `*.example.com:443`) and a scheme (`https://example.com`).
///
/// Host names are compared as the browser sees them: lower case, without a
/// trailing dot, internationalised names in their `xn--` form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    scheme: Option<String>,
    host: HostPattern,
    port: Option<u16>,
    /// As written, for messages.
    source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// This host exactly (a domain, an IPv4 address or `[v6]`).
    Exact(String),
    /// This domain and every subdomain of it.
    Subdomains(String),
}

/// A domain pattern that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pattern: String,
    reason: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a domain pattern: {}; write `example.com`, `*.example.com`, \
             `127.0.0.1:8080` or `https://example.com`",
            self.pattern, self.reason
        )
    }
}

impl std::error::Error for PatternError {}

impl DomainPattern {
    /// Parses a pattern (see the type's documentation).
    ///
    /// # Errors
    ///
    /// [`PatternError`] for an empty pattern, a wildcard anywhere but a
    /// leading `*.`, a path, or a host the URL standard rejects.
    pub fn parse(pattern: &str) -> Result<Self, PatternError> {
        let error = |reason: &str| PatternError {
            pattern: pattern.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err(error("it is empty"));
        }
        let (scheme, rest) = match trimmed.split_once("://") {
            Some((scheme, rest)) => {
                let scheme = scheme.to_ascii_lowercase();
                if scheme != "http" && scheme != "https" {
                    return Err(error("only http and https schemes can be restricted"));
                }
                (Some(scheme), rest)
            }
            None => (None, trimmed),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#', '@']) {
            return Err(error("it holds more than a host and a port"));
        }
        let (wildcard, rest) = match rest.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        if rest.contains('*') {
            return Err(error("`*` is allowed only as a leading `*.`"));
        }
        // The URL parser normalises the host (case, IDNA, IPv4 forms) and
        // splits off the port exactly as the browser does.
        let parsed = Url::parse(&format!("http://{rest}")).map_err(|e| error(&e.to_string()))?;
        let host = match parsed.host() {
            Some(Host::Domain(domain)) => domain.trim_end_matches('.').to_owned(),
            Some(Host::Ipv4(ip)) => ip.to_string(),
            Some(Host::Ipv6(ip)) => format!("[{ip}]"),
            None => return Err(error("it names no host")),
        };
        if host.is_empty() {
            return Err(error("it names no host"));
        }
        if wildcard && matches!(parsed.host(), Some(Host::Ipv4(_) | Host::Ipv6(_))) {
            return Err(error("an IP address has no subdomains"));
        }
        // `Url` drops a port that is the scheme's default; say it again.
        let port = parsed.port().or_else(|| {
            let explicit = rest.rsplit_once(':').map(|(_, p)| p);
            explicit.and_then(|p| p.parse().ok())
        });
        Ok(Self {
            scheme,
            host: if wildcard {
                HostPattern::Subdomains(host)
            } else {
                HostPattern::Exact(host)
            },
            port,
            source: trimmed.to_owned(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `url` (an http or https URL) is on this pattern's domain.
    pub fn matches(&self, url: &Url) -> bool {
        if let Some(scheme) = &self.scheme
            && scheme != url.scheme()
        {
            return false;
        }
        if let Some(port) = self.port
            && url.port_or_known_default() != Some(port)
        {
            return false;
        }
        let Some(host) = host_of(url) else {
            return false;
        };
        match &self.host {
            HostPattern::Exact(exact) => host == *exact,
            HostPattern::Subdomains(domain) => {
                host == *domain
                    || host
                        .strip_suffix(domain.as_str())
                        .is_some_and(|head| head.ends_with('.'))
            }
        }
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// The host of `url` as patterns compare it.
pub(crate) fn host_of(url: &Url) -> Option<String> {
    match url.host()? {
        Host::Domain(domain) => Some(domain.trim_end_matches('.').to_ascii_lowercase()),
        Host::Ipv4(ip) => Some(ip.to_string()),
        Host::Ipv6(ip) => Some(format!("[{ip}]")),
    }
}

/// The host (and port, when not the default) of `url`, for messages.
pub(crate) fn site_of(url: &Url) -> String {
    let host = host_of(url).unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    }
}

/// Whether any of `patterns` matches `url`.
pub(crate) fn any_matches(patterns: &[DomainPattern], url: &Url) -> bool {
    patterns.iter().any(|p| p.matches(url))
}

/// The patterns as a list for messages: `127.0.0.1, *.example.com`.
pub(crate) fn list(patterns: &[DomainPattern]) -> String {
    patterns
        .iter()
        .map(DomainPattern::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn exact_hosts_match_only_themselves() {
        let p = DomainPattern::parse("Example.COM").unwrap();
        assert!(p.matches(&url("https://example.com/a")));
        assert!(p.matches(&url("http://example.com.:8080/")));
        assert!(!p.matches(&url("https://www.example.com/")));
        assert!(!p.matches(&url("https://example.com.evil.net/")));
        assert!(!p.matches(&url("https://notexample.com/")));
    }

    #[test]
    fn wildcards_match_the_domain_and_its_subdomains() {
        let p = DomainPattern::parse("*.example.com").unwrap();
        assert!(p.matches(&url("https://example.com/")));
        assert!(p.matches(&url("https://a.b.example.com/")));
        assert!(!p.matches(&url("https://badexample.com/")));
        assert!(!p.matches(&url("https://example.com.evil.net/")));
    }

    #[test]
    fn ports_and_schemes_narrow_a_pattern() {
        let p = DomainPattern::parse("127.0.0.1:8080").unwrap();
        assert!(p.matches(&url("http://127.0.0.1:8080/x")));
        assert!(!p.matches(&url("http://127.0.0.1:8081/x")));
        let any_port = DomainPattern::parse("127.0.0.1").unwrap();
        assert!(any_port.matches(&url("http://127.0.0.1:9/")));
        assert!(!any_port.matches(&url("http://localhost:9/")));
        let https = DomainPattern::parse("https://example.com").unwrap();
        assert!(https.matches(&url("https://example.com/")));
        assert!(!https.matches(&url("http://example.com/")));
        // A default port written out still counts.
        let p443 = DomainPattern::parse("example.com:443").unwrap();
        assert!(p443.matches(&url("https://example.com/")));
        assert!(!p443.matches(&url("http://example.com/")));
        let v6 = DomainPattern::parse("[::1]:3000").unwrap();
        assert!(v6.matches(&url("http://[::1]:3000/")));
    }

    #[test]
    fn internationalised_names_are_compared_in_ascii() {
        let p = DomainPattern::parse("*.bücher.de").unwrap();
        assert!(p.matches(&url("https://www.xn--bcher-kva.de/")));
        assert!(p.matches(&url("https://shop.bücher.de/")));
    }

    #[test]
    fn bad_patterns_are_refused_with_a_reason() {
        for bad in [
            "",
            "*",
            "*example.com",
            "ex*ample.com",
            "example.com/path",
            "ftp://example.com",
            "*.127.0.0.1",
            "user@example.com",
        ] {
            let error = DomainPattern::parse(bad).unwrap_err();
            assert!(
                error.to_string().contains("not a domain pattern"),
                "{error}"
            );
        }
    }
}
