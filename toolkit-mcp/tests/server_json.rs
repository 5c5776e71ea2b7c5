//! The `server.json` a server writes for the MCP Registry, judged by the
//! registry's own schema (2025-12-11, `tests/data`): what we write passes
//! it, and what we refuse to write, it refuses too.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::Registry;
use toolkit_mcp::{McpServer, SERVER_JSON_SCHEMA};
use toolkit_tests::runner::{self, Test};

fn judge() -> jsonschema::Validator {
    let schema: Value =
        serde_json::from_str(include_str!("data/server-2025-12-11.schema.json")).expect("JSON");
    assert_eq!(schema["$id"], SERVER_JSON_SCHEMA);
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the registry's schema")
}

fn errors(judge: &jsonschema::Validator, value: &Value) -> Vec<String> {
    judge
        .iter_errors(value)
        .map(|error| error.to_string())
        .collect()
}

fn server() -> McpServer {
    let registry = toolkit_examples::registry().expect("the example registry");
    McpServer::new(Arc::new(registry))
        .identity("assistant", "0.3.1")
        .title("Documents and calendar")
        .description("Reads documents and books meetings for an assistant")
        .website_url("https://assistant.example.com")
}

fn written_entries_pass_the_registry_schema() {
    let judge = judge();
    let entry = server()
        .server_json("io.github.example/assistant")
        .repository("https://github.com/example/assistant", "github")
        .package("oci", "ghcr.io/example/assistant:0.3.1")
        .remote("https://assistant.example.com/mcp");
    let json = entry.to_json().expect("a valid entry");
    assert_eq!(errors(&judge, &json), Vec::<String>::new(), "{json:#}");
    assert_eq!(json["version"], "0.3.1");
    assert_eq!(json["title"], "Documents and calendar");
    assert_eq!(json["websiteUrl"], "https://assistant.example.com");
    assert_eq!(
        json["packages"],
        json!([{"registryType": "oci", "identifier": "ghcr.io/example/assistant:0.3.1",
            "version": "0.3.1", "transport": {"type": "stdio"}}])
    );
    assert_eq!(
        json["remotes"],
        json!([{"type": "streamable-http", "url": "https://assistant.example.com/mcp"}])
    );
    // The least an entry can be: a name, a description, a version.
    let bare = McpServer::new(Arc::new(Registry::builder().build().expect("a registry")))
        .identity("bare", "1.0.0")
        .description("Nothing much")
        .server_json("com.example/bare")
        .to_json()
        .expect("a valid entry");
    assert_eq!(errors(&judge, &bare), Vec::<String>::new(), "{bare:#}");
}

fn refused_entries_are_refused_by_the_registry_schema_too() {
    let judge = judge();
    let valid = server()
        .server_json("io.github.example/assistant")
        .to_json()
        .expect("a valid entry");
    let long = "x".repeat(101);
    for (case, made, field, value) in [
        (
            "no slash",
            server().server_json("assistant").to_json(),
            "name",
            json!("assistant"),
        ),
        (
            "two slashes",
            server()
                .server_json("io.github/example/assistant")
                .to_json(),
            "name",
            json!("io.github/example/assistant"),
        ),
        (
            "a long description",
            server()
                .server_json("io.github.example/assistant")
                .description(long.clone())
                .to_json(),
            "description",
            json!(long),
        ),
        (
            "an empty description",
            server()
                .server_json("io.github.example/assistant")
                .description("")
                .to_json(),
            "description",
            json!(""),
        ),
    ] {
        let refusal = made.expect_err(case);
        assert!(!refusal.problems().is_empty(), "{case}");
        let mut written = valid.clone();
        written[field] = value;
        assert!(
            !errors(&judge, &written).is_empty(),
            "{case}: the schema takes {written:#}"
        );
    }
    // Refused here beyond the schema's letter, as the registry's own
    // checks refuse it: a version range, a moving version, no description.
    for version in ["^1.2.3", "~1.2", ">=1.0.0", "1.x", "latest"] {
        let refusal = server()
            .identity("assistant", version)
            .server_json("io.github.example/assistant")
            .to_json()
            .expect_err(version);
        assert!(refusal.to_string().contains(version), "{refusal}");
    }
    let undescribed = McpServer::new(Arc::new(Registry::builder().build().expect("a registry")))
        .server_json("com.example/bare")
        .to_json()
        .expect_err("no description");
    assert!(undescribed.to_string().contains("description"));
    // A package at `latest` is one the schema itself refuses.
    let mut latest = valid.clone();
    latest["packages"] = json!([{"registryType": "npm", "identifier": "x", "version": "latest",
        "transport": {"type": "stdio"}}]);
    assert!(!errors(&judge, &latest).is_empty());
}

/// Whatever `to_json` writes, the schema takes: an entry it cannot take
/// is refused here, with a reason, rather than written.
fn nothing_written_is_refused_by_the_schema() {
    let judge = judge();
    let entries = [
        (
            "a remote with a space",
            server()
                .server_json("io.github.example/assistant")
                .remote("https://assistant.example.com/m cp"),
        ),
        (
            "a bare scheme as remote",
            server()
                .server_json("io.github.example/assistant")
                .remote("https://"),
        ),
        (
            "a repository that is no URL",
            server()
                .server_json("io.github.example/assistant")
                .repository("not a url", "github"),
        ),
        (
            "a website with a space",
            McpServer::new(Arc::new(Registry::builder().build().expect("a registry")))
                .identity("assistant", "1.0.0")
                .description("Something")
                .website_url("https://assistant example.com")
                .server_json("io.github.example/assistant"),
        ),
        (
            "an empty package",
            server()
                .server_json("io.github.example/assistant")
                .package("", ""),
        ),
        (
            "a version with a newline",
            McpServer::new(Arc::new(Registry::builder().build().expect("a registry")))
                .identity("assistant", "1.0.0\n")
                .description("Something")
                .server_json("io.github.example/assistant"),
        ),
    ];
    for (case, entry) in entries {
        if let Ok(json) = entry.to_json() {
            assert_eq!(
                errors(&judge, &json),
                Vec::<String>::new(),
                "{case}: written {json:#}"
            );
        }
    }
}

fn main() -> ExitCode {
    runner::run(vec![
        Test::new(
            "written_entries_pass_the_registry_schema",
            written_entries_pass_the_registry_schema,
        ),
        Test::new(
            "refused_entries_are_refused_by_the_registry_schema_too",
            refused_entries_are_refused_by_the_registry_schema_too,
        ),
        Test::new(
            "nothing_written_is_refused_by_the_schema",
            nothing_written_is_refused_by_the_schema,
        ),
    ])
}
