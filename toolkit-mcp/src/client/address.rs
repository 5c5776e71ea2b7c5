//! Which addresses the OAuth flow of a server may reach.
//!
//! The endpoints of an authorization come from metadata the MCP server (or
//! the authorization server it names) publishes, so a hostile server could
//! name an address inside the host's network — a cloud metadata service, an
//! admin page on loopback — and have the client send requests there. The
//! check is made on the addresses connected to: names are resolved here and
//! their forbidden answers dropped, so a name that resolves to a public
//! address when looked at and to a private one when used gains nothing.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The kind of an IP address, as the address check of the OAuth flow sees
/// it (see [`AddressPolicy`]).
///
/// An IPv6 address carrying an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) has the class of
/// the IPv4 address, since that is where it leads.
///
/// ```
/// use std::net::IpAddr;
/// use toolkit_mcp::AddressClass;
///
/// let mapped: IpAddr = "::ffff:169.254.169.254".parse().unwrap();
/// assert_eq!(AddressClass::of(mapped), AddressClass::LinkLocal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub enum AddressClass {
    /// A globally routed address: always allowed.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` (RFC 1918), unique
    /// local `fc00::/7` and the old site-local `fec0::/10`.
    Private,
    /// `169.254.0.0/16` (where cloud instance metadata lives), `fe80::/10`.
    LinkLocal,
    /// The carrier-grade NAT range `100.64.0.0/10` (RFC 6598).
    SharedAddressSpace,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`,
    /// `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Any other special-purpose address (`240.0.0.0/4`, `192.0.0.0/24`,
    /// Teredo, IPv6 outside `2000::/3`, ...).
    Reserved,
}

impl AddressClass {
    /// The class of `ip`.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self::of_v4(v4),
            IpAddr::V6(v6) => match embedded_v4(v6) {
                Some(v4) => Self::of_v4(v4),
                None => Self::of_v6(v6),
            },
        }
    }

    fn of_v4(ip: Ipv4Addr) -> Self {
        let [a, b, c, _] = ip.octets();
        match (a, b, c) {
            (0, ..) => Self::Unspecified,
            (127, ..) => Self::Loopback,
            (10, ..) | (192, 168, _) => Self::Private,
            (172, 16..=31, _) => Self::Private,
            (169, 254, _) => Self::LinkLocal,
            (100, 64..=127, _) => Self::SharedAddressSpace,
            (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Self::Documentation,
            (198, 18..=19, _) => Self::Benchmarking,
            (224..=239, ..) => Self::Multicast,
            _ if ip.is_broadcast() => Self::Broadcast,
            (240..=255, ..) | (192, 0, 0) | (192, 88, 99) => Self::Reserved,
            _ => Self::Public,
        }
    }

    fn of_v6(ip: Ipv6Addr) -> Self {
        let s = ip.segments();
        if ip.is_unspecified() {
            Self::Unspecified
        } else if ip.is_loopback() {
            Self::Loopback
        } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
            Self::Private
        } else if s[0] & 0xffc0 == 0xfe80 {
            Self::LinkLocal
        } else if s[0] & 0xff00 == 0xff00 {
            Self::Multicast
        } else if s[..2] == [0x2001, 0x0db8] || s[0] & 0xfff0 == 0x3ff0 {
            Self::Documentation
        } else if s[..3] == [0x2001, 0x0002, 0] {
            Self::Benchmarking
        } else if s[0] & 0xe000 != 0x2000 || s[0] == 0x2001 && s[1] < 0x0200 {
            // Outside global unicast, or in the protocol assignments block
            // (Teredo among them, which can lead anywhere).
            Self::Reserved
        } else {
            Self::Public
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Public => "a public address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private address",
            Self::LinkLocal => "a link-local address",
            Self::SharedAddressSpace => "a shared (carrier-grade NAT) address",
            Self::Unspecified => "an unspecified address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::Reserved => "a reserved address",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The IPv4 address an IPv6 one leads to, if it embeds one.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s[..6] {
        // IPv4-mapped, NAT64 well-known prefix.
        [0, 0, 0, 0, 0, 0xffff] | [0x64, 0xff9b, 0, 0, 0, 0] => Some(low),
        // IPv4-compatible (`::` and `::1` are IPv6's own).
        [0, 0, 0, 0, 0, 0] if s[6] != 0 || s[7] > 1 => Some(low),
        // 6to4.
        [0x2002, ..] => Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        )),
        _ => None,
    }
}

/// Which addresses and schemes the OAuth requests made for one MCP server
/// may use.
///
/// Public addresses are always allowed. Of the others, only the class of
/// the MCP server's own address is: a server at `127.0.0.1` (or
/// `localhost`) may have its authorization server on loopback, one at
/// `10.1.2.3` may have it on a private address, and a server named by any
/// other host name may have it on public addresses only (what that name
/// resolves to never widens the policy, since the server's owner controls
/// it). Every endpoint must be `https`, except when the MCP server itself is
/// reached over plain `http` at a loopback or private address.
/// [`OAuth::allow_addresses`](crate::OAuth::allow_addresses) widens it.
///
/// ```
/// use toolkit_mcp::{AddressClass, AddressPolicy};
///
/// let remote = AddressPolicy::for_server("https://mcp.example.com/mcp");
/// assert!(!remote.allows("127.0.0.1".parse().unwrap()));
/// assert!(!remote.allows_plain_http());
///
/// let local = AddressPolicy::for_server("http://127.0.0.1:8080/mcp");
/// assert!(local.allows("127.0.0.1".parse().unwrap()));
/// assert!(!local.allows("169.254.169.254".parse().unwrap()));
/// assert!(local.allows_plain_http());
///
/// let widened = remote.allow(AddressClass::Private);
/// assert!(widened.allows("10.0.0.9".parse().unwrap()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub struct AddressPolicy {
    allowed: Vec<AddressClass>,
    plain_http: bool,
}

impl AddressPolicy {
    /// The policy for the OAuth flow of the MCP server at `server_url`. A
    /// URL that does not parse gets the narrowest policy.
    pub fn for_server(server_url: &str) -> Self {
        let url = Url::parse(server_url).ok();
        let class = url.as_ref().and_then(host_class);
        let plain_http = url.as_ref().is_some_and(|url| url.scheme() == "http")
            && matches!(class, Some(AddressClass::Loopback | AddressClass::Private));
        Self {
            allowed: class.into_iter().collect(),
            plain_http,
        }
    }

    /// Also allows addresses of `class`.
    #[must_use]
    pub fn allow(mut self, class: AddressClass) -> Self {
        if !self.allowed.contains(&class) {
            self.allowed.push(class);
        }
        self
    }

    /// Whether a request may connect to `ip`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        let class = AddressClass::of(ip);
        class == AddressClass::Public || self.allowed.contains(&class)
    }

    /// Whether endpoints may be plain `http`.
    pub fn allows_plain_http(&self) -> bool {
        self.plain_http
    }

    /// Checks that `url` is `https`, or plain `http` where allowed.
    pub(crate) fn check_scheme(&self, url: &Url) -> Result<(), EndpointRefused> {
        let refuse = |reason| Err(EndpointRefused::new(url, reason));
        match url.scheme() {
            "https" => Ok(()),
            "http" if self.plain_http => Ok(()),
            "http" => refuse(Reason::PlainHttp),
            other => refuse(Reason::Scheme(other.to_owned())),
        }
    }

    /// Checks what can be checked of `url` before connecting: its scheme,
    /// and its address when it names one (a request to an IP literal
    /// resolves nothing, so [`Resolver`] never sees it).
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), EndpointRefused> {
        self.check_scheme(url)?;
        let refuse = |reason| Err(EndpointRefused::new(url, reason));
        let Some(host) = url.host_str() else {
            return refuse(Reason::NoHost);
        };
        let Some(ip) = literal_ip(host) else {
            return Ok(());
        };
        if self.allows(ip) {
            Ok(())
        } else {
            refuse(Reason::Address(ip, AddressClass::of(ip)))
        }
    }
}

/// The class of the server's own host when it names one without asking
/// DNS: an IP literal, or `localhost` (which RFC 6761 keeps on loopback).
fn host_class(url: &Url) -> Option<AddressClass> {
    let host = url.host_str()?;
    let class = match literal_ip(host) {
        Some(ip) => AddressClass::of(ip),
        None => {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                AddressClass::Loopback
            } else {
                return None;
            }
        }
    };
    (class != AddressClass::Public).then_some(class)
}

/// The address a URL's host names literally (IPv6 in brackets).
fn literal_ip(host: &str) -> Option<IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|host| host.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse().ok()
}

/// Why an endpoint was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reason {
    Address(IpAddr, AddressClass),
    /// Every address the name resolved to was forbidden.
    Resolved(Vec<AddressClass>),
    PlainHttp,
    Scheme(String),
    NoHost,
}

/// An OAuth endpoint the client would not connect to, named without its
/// query (which may carry codes or secrets), and why: its address is one
/// the [`AddressPolicy`] forbids, or it is not `https`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub struct EndpointRefused {
    endpoint: String,
    reason: Reason,
}

impl EndpointRefused {
    fn new(url: &Url, reason: Reason) -> Self {
        let mut endpoint = url.clone();
        endpoint.set_query(None);
        endpoint.set_fragment(None);
        let _ = endpoint.set_username("");
        let _ = endpoint.set_password(None);
        Self {
            endpoint: endpoint.to_string(),
            reason,
        }
    }

    /// The endpoint refused: a URL without query, or a host name when the
    /// refusal came from resolving it.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The class of the forbidden address, when the endpoint was refused
    /// for its address (for a name, the class of the first address it
    /// resolved to).
    pub fn address_class(&self) -> Option<AddressClass> {
        match &self.reason {
            Reason::Address(_, class) => Some(*class),
            Reason::Resolved(classes) => classes.first().copied(),
            _ => None,
        }
    }

    /// The same refusal named by the whole endpoint URL, when it was
    /// named by the host the resolver saw.
    pub(crate) fn at(self, url: &Url) -> Self {
        match self.reason {
            Reason::Resolved(_) => Self::new(url, self.reason),
            _ => self,
        }
    }
}

impl fmt::Display for EndpointRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoint = &self.endpoint;
        match &self.reason {
            Reason::Address(ip, class) => write!(
                f,
                "refused to connect to OAuth endpoint {endpoint}: {ip} is {class}, \
                 which this MCP server's authorization may not reach"
            ),
            Reason::Resolved(classes) => {
                let classes: Vec<_> = classes.iter().map(|class| class.describe()).collect();
                write!(
                    f,
                    "refused to connect to OAuth endpoint {endpoint}: it resolves only to \
                     forbidden addresses ({})",
                    classes.join(", ")
                )
            }
            Reason::PlainHttp => write!(
                f,
                "refused OAuth endpoint {endpoint}: not https (plain http is allowed only \
                 when the MCP server itself is plain http on a loopback or private address)"
            ),
            Reason::Scheme(scheme) => write!(
                f,
                "refused OAuth endpoint {endpoint}: scheme `{scheme}` is not https"
            ),
            Reason::NoHost => write!(f, "refused OAuth endpoint {endpoint}: it names no host"),
        }
    }
}

impl std::error::Error for EndpointRefused {}

/// Resolves names for the OAuth requests, keeping only the addresses the
/// policy allows: the check is of the addresses the connection is made to.
pub(crate) struct Resolver {
    policy: Arc<AddressPolicy>,
}

impl Resolver {
    pub(crate) fn new(policy: Arc<AddressPolicy>) -> Self {
        Self { policy }
    }
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let (allowed, refused): (Vec<_>, Vec<_>) =
                found.into_iter().partition(|addr| policy.allows(addr.ip()));
            if refused.is_empty() && allowed.is_empty() {
                return Err(format!("{host} resolved to no address").into());
            }
            if allowed.is_empty() {
                let mut classes: Vec<AddressClass> = Vec::new();
                for addr in &refused {
                    let class = AddressClass::of(addr.ip());
                    if !classes.contains(&class) {
                        classes.push(class);
                    }
                }
                return Err(Box::new(EndpointRefused {
                    endpoint: host,
                    reason: Reason::Resolved(classes),
                })
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The refusal somewhere in `error`'s chain of sources, if it has one.
pub(crate) fn refusal_in(error: &(dyn std::error::Error + 'static)) -> Option<EndpointRefused> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(refused) = error.downcast_ref::<EndpointRefused>() {
            return Some(refused.clone());
        }
        current = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves `host` (through the system's resolver) under the policy of
    /// the server at `server`.
    async fn resolve(server: &str, host: &str) -> Result<Vec<SocketAddr>, EndpointRefused> {
        let resolver = Resolver::new(Arc::new(AddressPolicy::for_server(server)));
        match resolver.resolve(host.parse().unwrap()).await {
            Ok(addrs) => Ok(addrs.collect()),
            Err(error) => Err(refusal_in(&*error).expect("a refusal")),
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_forbidden_addresses_is_refused() {
        // `localhost` stands for any name whose answers lead inside.
        let refused = resolve("https://mcp.example.com/mcp", "localhost")
            .await
            .expect_err("loopback only");
        assert_eq!(refused.address_class(), Some(AddressClass::Loopback));
        assert_eq!(refused.endpoint(), "localhost");
        assert!(refused.to_string().contains("loopback"), "{refused}");

        let addrs = resolve("http://127.0.0.1:1/mcp", "localhost")
            .await
            .expect("loopback is the local server's own class");
        assert!(addrs.iter().all(|addr| addr.ip().is_loopback()));
    }
}
