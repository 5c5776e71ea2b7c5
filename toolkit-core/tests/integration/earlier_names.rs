//! The names renamed in 0.1.1 still compile, with a deprecation warning
//! naming the new one, and do exactly what the new names do.
#![allow(deprecated)]

use serde_json::json;
use toolkit_core::schema::{Json as EarlierJson, OrderedJson};
use toolkit_core::{
    Definitions, DefinitionsError, Origin, Provider, Registry, ToolDef, ToolResult, tool, tools,
};

/// Says hello.
#[tool(catalogue = false)]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

#[test]
fn finish_and_show_once_mark_the_result_as_the_new_names_do() {
    for success in [true, false] {
        let earlier = ToolResult::text("x").finish(success);
        let new = ToolResult::text("x").with_done(success);
        assert_eq!(earlier.completion(), new.completion());
        assert_eq!(earlier.success(), Some(success));
    }
    let earlier = ToolResult::text("x").with_memory("m").show_once();
    let new = ToolResult::text("x").with_memory("m").with_show_once();
    assert!(earlier.is_show_once());
    assert_eq!(
        serde_json::to_string(&earlier).unwrap(),
        serde_json::to_string(&new).unwrap()
    );
}

#[test]
fn definitions_is_the_tool_list() {
    let registry = Registry::builder().tools(tools![hello]).build().unwrap();
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        let earlier: Definitions = registry.definitions(provider).unwrap();
        let new = registry.tool_list(provider).unwrap();
        assert_eq!(earlier.to_json_string(), new.to_json_string());
    }
    // The error keeps its earlier name too: a free-form map cannot go to
    // OpenAI's strict mode.
    let free_form = ToolDef::builder("free")
        .input_schema(json!({"type": "object", "additionalProperties": true}))
        .handler(|_: serde_json::Value, _: toolkit_core::CallContext| async { "" });
    let registry = Registry::builder().tool(free_form).build().unwrap();
    let earlier: Result<Definitions, DefinitionsError> =
        registry.definitions(Provider::OpenAiStrict);
    assert_eq!(
        earlier.unwrap_err(),
        registry.tool_list(Provider::OpenAiStrict).unwrap_err()
    );
}

#[test]
fn module_path_reads_the_origin() {
    let registry = Registry::builder().tools(tools![hello]).build().unwrap();
    let def = registry.get("hello").unwrap();
    let Origin::Function { module_path, .. } = def.origin() else {
        panic!("a #[tool] has a function origin: {:?}", def.origin());
    };
    assert_eq!(def.module_path(), module_path);
    assert!(module_path.ends_with("earlier_names"), "{module_path}");

    let handler = |_: serde_json::Value, _: toolkit_core::CallContext| async { "" };
    let sourced = ToolDef::builder("a").source("plugin").handler(handler);
    assert_eq!(sourced.module_path(), "plugin");
    let bare = ToolDef::builder("b").handler(handler);
    assert_eq!(bare.module_path(), "");
}

#[test]
fn json_is_ordered_json() {
    let value: EarlierJson = OrderedJson::Array(vec![OrderedJson::Bool(true), OrderedJson::Null]);
    assert_eq!(value.to_json_string(), "[true,null]");
}
