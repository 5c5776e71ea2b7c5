//! The `server.json` the MCP Registry takes to list a server, written
//! from what the server already says of itself (`serverInfo`).

use std::fmt;

use serde_json::{Map, Value, json};

use super::McpServer;

/// The revision of the registry's `server.json` schema written.
pub const SERVER_JSON_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// A server's entry for the MCP Registry (`server.json`): its name in the
/// registry, what it says of itself, and where to get it (packages) or
/// reach it (remotes). Made by [`McpServer::server_json`], written with
/// [`to_json`](Self::to_json), which refuses what the registry would.
///
/// ```
/// use std::sync::Arc;
/// use toolkit_core::Registry;
/// use toolkit_mcp::McpServer;
///
/// let server = McpServer::new(Arc::new(Registry::builder().build()?))
///     .identity("weather", "1.2.0")
///     .description("Forecasts and alerts for any city");
/// let entry = server
///     .server_json("io.github.example/weather")
///     .repository("https://github.com/example/weather", "github")
///     .package("oci", "ghcr.io/example/weather:1.2.0")
///     .remote("https://weather.example.com/mcp");
/// let json = entry.to_json()?;
/// assert_eq!(json["version"], "1.2.0");
/// assert_eq!(json["packages"][0]["transport"]["type"], "stdio");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct ServerJson {
    name: String,
    version: String,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    repository: Option<(String, String)>,
    packages: Vec<(String, String, String)>,
    remotes: Vec<String>,
}

/// Why a `server.json` would be refused by the registry: each problem,
/// named.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct ServerJsonError {
    problems: Vec<String>,
}

impl ServerJsonError {
    /// Each problem, in the order of the fields.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for ServerJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server.json would be refused: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for ServerJsonError {}

impl McpServer {
    /// This server's entry for the MCP Registry under `name` (reverse-DNS,
    /// one slash: `io.github.you/weather`), with its version, title,
    /// description and website as the server gives them to clients
    /// ([`identity`](Self::identity), [`description`](Self::description)).
    #[cfg_attr(docsrs, doc(cfg(feature = "server")))]
    pub fn server_json(&self, name: impl Into<String>) -> ServerJson {
        ServerJson {
            name: name.into(),
            version: self.identity.version.clone(),
            title: self.identity.title.clone(),
            description: self.identity.description.clone(),
            website_url: self.identity.website_url.clone(),
            repository: None,
            packages: Vec::new(),
            remotes: Vec::new(),
        }
    }
}

impl ServerJson {
    /// What the server does, in at most 100 characters (the server's own
    /// description unless set).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A name to show people (the server's own title unless set).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Where its source is (`url`), and the forge (`source`: `github`,
    /// `gitlab`, ...).
    pub fn repository(mut self, url: impl Into<String>, source: impl Into<String>) -> Self {
        self.repository = Some((url.into(), source.into()));
        self
    }

    /// A package that runs the server over stdio: its registry type
    /// (`oci`, `npm`, `pypi`, `nuget`, `mcpb`) and identifier, at the
    /// server's version.
    pub fn package(
        mut self,
        registry_type: impl Into<String>,
        identifier: impl Into<String>,
    ) -> Self {
        let version = self.version.clone();
        self.packages
            .push((registry_type.into(), identifier.into(), version));
        self
    }

    /// A URL where the server is served over Streamable HTTP.
    pub fn remote(mut self, url: impl Into<String>) -> Self {
        self.remotes.push(url.into());
        self
    }

    /// The `server.json`, or every reason the registry would refuse it.
    pub fn to_json(&self) -> Result<Value, ServerJsonError> {
        let mut problems = Vec::new();
        let name_ok = (3..=200).contains(&self.name.len())
            && self
                .name
                .split_once('/')
                .is_some_and(|(namespace, server)| {
                    !namespace.is_empty()
                        && !server.is_empty()
                        && namespace
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
                        && server
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                });
        if !name_ok {
            problems.push(format!(
                "the name `{}` is not reverse-DNS with one slash (`io.github.you/server`)",
                self.name
            ));
        }
        match &self.description {
            None => problems.push("a description is required".to_owned()),
            Some(text) if text.is_empty() || text.chars().count() > 100 => problems.push(format!(
                "the description has {} characters; 1 to 100 are taken",
                text.chars().count()
            )),
            Some(_) => {}
        }
        if let Some(title) = &self.title
            && (title.is_empty() || title.chars().count() > 100)
        {
            problems.push("the title must have 1 to 100 characters".to_owned());
        }
        if is_range(&self.version) || self.version.len() > 255 {
            problems.push(format!(
                "the version `{}` is not one version (no ranges, no `latest`)",
                self.version
            ));
        }
        let repository = self.repository.iter().map(|(url, _)| url);
        for url in self
            .remotes
            .iter()
            .chain(&self.website_url)
            .chain(repository)
        {
            // The schema's own rule for a remote: a scheme, then at least
            // one character and no whitespace.
            let rest = url
                .strip_prefix("https://")
                .or_else(|| url.strip_prefix("http://"));
            if rest.is_none_or(|rest| rest.is_empty() || rest.contains(char::is_whitespace)) {
                problems.push(format!("`{url}` is not an HTTP URL"));
            }
        }
        if !problems.is_empty() {
            return Err(ServerJsonError { problems });
        }
        let mut json = Map::new();
        json.insert("$schema".into(), json!(SERVER_JSON_SCHEMA));
        json.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            json.insert("title".into(), json!(title));
        }
        json.insert("description".into(), json!(self.description));
        json.insert("version".into(), json!(self.version));
        if let Some(url) = &self.website_url {
            json.insert("websiteUrl".into(), json!(url));
        }
        if let Some((url, source)) = &self.repository {
            json.insert("repository".into(), json!({"url": url, "source": source}));
        }
        if !self.packages.is_empty() {
            let packages: Vec<Value> = self
                .packages
                .iter()
                .map(|(registry_type, identifier, version)| {
                    json!({"registryType": registry_type, "identifier": identifier,
                        "version": version, "transport": {"type": "stdio"}})
                })
                .collect();
            json.insert("packages".into(), Value::Array(packages));
        }
        if !self.remotes.is_empty() {
            let remotes: Vec<Value> = self
                .remotes
                .iter()
                .map(|url| json!({"type": "streamable-http", "url": url}))
                .collect();
            json.insert("remotes".into(), Value::Array(remotes));
        }
        Ok(Value::Object(json))
    }
}

/// Whether `version` is a range or a moving name, which the registry
/// refuses.
fn is_range(version: &str) -> bool {
    version.is_empty()
        || version == "latest"
        || version.starts_with(['^', '~', '>', '<', '='])
        || version.contains(['*', ' ', '|'])
        || version.split('.').any(|part| part == "x" || part == "X")
}
