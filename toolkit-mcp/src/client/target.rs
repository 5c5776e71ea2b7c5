//! Where the server is: a child process to start, or (with the
//! `http-client` feature) an HTTP endpoint with what its requests carry.

use std::ffi::OsString;
#[cfg(feature = "http-client")]
use std::fmt;
use std::path::PathBuf;

#[cfg(feature = "auth")]
use super::auth::OAuth;

/// How to reach the server.
#[derive(Debug, Clone)]
pub(super) enum Target {
    Command {
        program: OsString,
        args: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
        dir: Option<PathBuf>,
    },
    #[cfg(feature = "http-client")]
    Http { url: String, access: Access },
}

/// What requests to an HTTP server carry besides MCP: headers and
/// credentials, whose values never appear in `Debug` output.
#[cfg(feature = "http-client")]
#[derive(Clone, Default)]
pub(super) struct Access {
    pub(super) headers: Vec<(String, String)>,
    pub(super) credentials: Given,
}

/// The credentials the host chose.
#[cfg(feature = "http-client")]
#[derive(Clone, Default)]
pub(super) enum Given {
    #[default]
    None,
    Bearer(String),
    #[cfg(feature = "auth")]
    OAuth(OAuth),
}

#[cfg(feature = "http-client")]
impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        let credentials: &dyn fmt::Debug = match &self.credentials {
            Given::None => &"none",
            Given::Bearer(_) => &"bearer <hidden>",
            #[cfg(feature = "auth")]
            Given::OAuth(oauth) => oauth,
        };
        f.debug_struct("Access")
            .field("headers", &names)
            .field("credentials", credentials)
            .finish()
    }
}
