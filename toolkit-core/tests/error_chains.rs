//! The public errors of the core, produced for real, walked as a host's
//! reporter (anyhow's `{:#}`) walks them: no message repeats its source's,
//! no sentence is said twice along a chain.

use std::collections::HashMap;

use serde_json::json;
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::schema::{self, Dialect};
use toolkit_core::{
    Block, Image, LogLevel, Provider, Registry, ToolCallResult, ToolDef, ToolResult, tool, tools,
};
use toolkit_tests::error_chain::{assert_no_repeats, messages};
use toolkit_tests::fixtures::ScratchDir;

/// Takes a free-form map.
#[tool]
fn tag(
    /** Tags. */
    tags: HashMap<String, String>,
) -> String {
    format!("{} tags", tags.len())
}

#[test]
fn schema_and_registry_errors() {
    // A root that is not an object.
    let error = schema::canonical_of::<Vec<String>>().unwrap_err();
    assert_no_repeats("SchemaError", &error);

    // A map strict mode cannot take.
    let def = tag_tool();
    let canonical = schema::canonical_of::<Tags>().unwrap();
    let error = schema::lower(&canonical, Dialect::OpenAiStrict).unwrap_err();
    assert_no_repeats("LoweringError", &error);
    let error = def.schema().lowered(Provider::OpenAiStrict).unwrap_err();
    assert_eq!(messages(&error).len(), 1);
    assert_no_repeats("ToolSchemaError", &error);

    let registry = Registry::builder().tools(tools![tag]).build().unwrap();
    let error = registry.tool_list(Provider::OpenAiStrict).unwrap_err();
    assert_no_repeats("ToolListError", &error);

    // Two tools of one name, and a provider that refuses one.
    let error = Registry::builder()
        .tools(tools![tag, tag])
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap_err();
    assert_no_repeats("RegistryError", &error);
}

fn tag_tool() -> ToolDef {
    tools![tag].into_iter().next().unwrap().clone()
}

/// Free-form tags.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct Tags {
    /// Tags.
    tags: HashMap<String, String>,
}

#[test]
fn emit_problems_say_where_and_return_why() {
    let dir = ScratchDir::new("error-chains-emit");
    let image = Image::from_path("image/png", "missing.png").unwrap();
    let turn = vec![ToolCallResult::new(
        "call_1",
        "screenshot",
        ToolResult::blocks([Block::image(image)]),
    )];
    let emitted = emit::mcp(&turn, &EmitOptions::default().with_image_dir(&dir));
    let problem = &emitted.problems[0];
    let chain = messages(problem);
    assert_eq!(chain.len(), 2, "{chain:?}");
    assert!(chain[0].contains("call_1"), "{chain:?}");
    assert_eq!(chain[1], problem.error.to_string());
    assert_no_repeats("EmitProblem", problem);
}

#[test]
fn leaf_errors_say_everything_once() {
    let error = "nope".parse::<Provider>().unwrap_err();
    assert_no_repeats("UnknownProvider", &error);
    let error = "loud".parse::<LogLevel>().unwrap_err();
    assert_no_repeats("UnknownLogLevel", &error);
    let error = Provider::OpenAi.read_slice(b"{not json").unwrap_err();
    assert_no_repeats("ReadError", &error);
    let error = Provider::OpenAi.read_slice(&serde_json::to_vec(&json!({"choices": 3})).unwrap());
    assert_no_repeats("ReadError", &error.unwrap_err());
    let error = Image::png(b"not a png").unwrap_err();
    assert_no_repeats("ImageError", &error);
    let error = ToolResult::blocks([Block::text("a"), Block::text("b")])
        .as_text()
        .map(str::to_owned)
        .unwrap_err();
    assert_no_repeats("NotSingleText", &error);
}
