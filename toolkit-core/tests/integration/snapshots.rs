//! The example registry's tool definitions, as every provider receives them,
//! pinned byte for byte, and judged: each parameter schema against the JSON
//! Schema 2020-12 meta-schema, each definition by the provider's SDK types
//! where one exists.
//!
//! After an intended change, rewrite the snapshots with
//! `UPDATE_SNAPSHOTS=1 cargo test -p toolkit-core --test integration snapshots::` and
//! review the diff.

use std::path::PathBuf;

use serde_json::Value;
use toolkit_core::{Provider, Tool};
use toolkit_tests::judges::gemini_schema;
use toolkit_tests::meta_schema::assert_valid_2020_12;

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.json"))
}

/// Compares `actual` with the pinned snapshot, or pins it when asked.
pub(crate) fn check_snapshot(name: &str, actual: &str) {
    let path = snapshot_path(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot at {}; create it with UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{name} differs from {}:\n--- pinned\n{expected}\n--- now\n{actual}\n(UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

fn definitions(provider: Provider) -> String {
    let registry = toolkit_example_tools::registry().unwrap();
    let definitions = registry.tool_list(provider).unwrap();
    let mut text = serde_json::to_string_pretty(&definitions).unwrap();
    text.push('\n');
    text
}

#[test]
fn canonical_schemas_are_pinned() {
    let registry = toolkit_example_tools::registry().unwrap();
    let mut text = String::new();
    for def in registry.tools() {
        let canonical = def.schema().canonical().unwrap();
        text.push_str(&format!("{}: {canonical}\n", def.name()));
        assert_valid_2020_12(&serde_json::from_str(canonical).unwrap());
    }
    check_snapshot("canonical", &text);
}

#[test]
fn definitions_are_pinned_for_every_provider() {
    for provider in Provider::ALL {
        check_snapshot(&format!("tool-list-{provider}"), &definitions(provider));
    }
}

#[test]
fn the_same_code_yields_the_same_bytes() {
    for provider in Provider::ALL {
        assert_eq!(definitions(provider), definitions(provider), "{provider}");
    }
}

#[test]
fn every_json_schema_passes_the_2020_12_meta_schema() {
    // Gemini's `parameters` are an OpenAPI 3.0 subset, not JSON Schema
    // (`nullable`, `format: "enum"`), and are checked below instead.
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiStrict,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Mcp,
    ] {
        let list: Value = serde_json::from_str(&definitions(provider)).unwrap();
        for definition in list.as_array().unwrap() {
            let schema = definition
                .pointer("/function/parameters")
                .or_else(|| definition.get("parameters"))
                .or_else(|| definition.get("input_schema"))
                .or_else(|| definition.get("inputSchema"))
                .unwrap_or_else(|| panic!("{provider}: no schema in {definition}"));
            assert_valid_2020_12(schema);
        }
    }
}

#[test]
fn openai_definitions_deserialize_into_async_openai_types() {
    use async_openai::types::chat::ChatCompletionTools;
    use async_openai::types::responses::Tool as ResponsesTool;

    for provider in [Provider::OpenAi, Provider::OpenAiStrict] {
        let list: Vec<Value> = serde_json::from_str(&definitions(provider)).unwrap();
        for definition in list {
            let tool: ChatCompletionTools = serde_json::from_value(definition.clone()).unwrap();
            assert_eq!(
                serde_json::to_value(&tool).unwrap(),
                definition,
                "{provider}"
            );
            let ChatCompletionTools::Function(function) = tool else {
                panic!("{provider}: not a function tool")
            };
            assert_eq!(
                function.function.strict,
                (provider == Provider::OpenAiStrict).then_some(true)
            );
        }
    }
    let list: Vec<Value> = serde_json::from_str(&definitions(Provider::OpenAiResponses)).unwrap();
    for definition in list {
        let tool: ResponsesTool = serde_json::from_value(definition.clone()).unwrap();
        assert_eq!(serde_json::to_value(&tool).unwrap(), definition);
        let ResponsesTool::Function(function) = tool else {
            panic!("not a function tool")
        };
        assert!(function.strict.is_some(), "strict is always explicit");
    }
}

#[test]
fn mcp_definitions_deserialize_into_rmcp_tools() {
    let list: Vec<Value> = serde_json::from_str(&definitions(Provider::Mcp)).unwrap();
    for definition in list {
        let tool: rmcp::model::Tool = serde_json::from_value(definition.clone()).unwrap();
        assert_eq!(serde_json::to_value(&tool).unwrap(), definition);
        assert_eq!(tool.input_schema.get("type"), Some(&Value::from("object")));
    }
}

#[test]
fn gemini_parameters_stay_in_the_openapi_subset() {
    let list: Value = serde_json::from_str(&definitions(Provider::Gemini)).unwrap();
    for definition in list.as_array().unwrap() {
        let keys: Vec<&str> = definition
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(
            keys.iter()
                .all(|k| ["name", "description", "parameters"].contains(k))
        );
        assert_eq!(
            gemini_schema::problems(&definition["parameters"]),
            Vec::<String>::new(),
            "{}",
            definition["name"]
        );
    }
}

#[test]
fn the_schema_is_built_once_and_shared() {
    let definition = <toolkit_example_tools::search as Tool>::definition();
    let first = definition.schema().canonical().unwrap();
    let second = definition.schema().canonical().unwrap();
    assert!(std::ptr::eq(first, second));
    assert_eq!(definition.params(), ["query", "limit", "tags", "order"]);
}
