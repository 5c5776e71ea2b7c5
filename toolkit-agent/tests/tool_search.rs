//! Tool search on a catalog of 1,223 real tools (GitHub's REST API, from
//! the npm package `@octokit/openapi`: tests/fixtures/tool_catalog/).

use std::collections::HashSet;

use serde_json::Value;
use toolkit_core::search::ToolIndex;
use toolkit_core::{CallContext, Registry, ToolDef, name};

const CATALOG: &str = include_str!("fixtures/tool_catalog/github-rest.json");
const REQUESTS: &str = include_str!("fixtures/tool_catalog/requests.json");

/// The catalog's tools as run-time tools, each answering with its name.
fn catalog(deferred: bool) -> Vec<ToolDef> {
    let catalog: Value = serde_json::from_str(CATALOG).unwrap();
    catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let original = tool["name"].as_str().unwrap().to_owned();
            let called = original.clone();
            ToolDef::builder(original.clone())
                .wire_name(name::portable(&original))
                .description(tool["description"].as_str().unwrap())
                .input_schema(tool["input_schema"].clone())
                .read_only(true)
                .deferred(deferred)
                .handler(move |_: Value, _: CallContext| {
                    let called = called.clone();
                    async move { format!("{called} ran") }
                })
        })
        .collect()
}

fn registry(deferred: bool) -> Registry {
    Registry::builder().tools(catalog(deferred)).build().unwrap()
}

/// The labelled requests: `(request, the tool's name as models call it)`.
fn requests() -> Vec<(String, String)> {
    let requests: Value = serde_json::from_str(REQUESTS).unwrap();
    requests
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair["request"].as_str().unwrap().to_owned(),
                name::portable(pair["tool"].as_str().unwrap()).into_owned(),
            )
        })
        .collect()
}

#[test]
fn the_catalog_and_its_requests_are_as_documented() {
    let registry = registry(true);
    assert!(registry.names().count() >= 1_000);
    let requests = requests();
    assert!(requests.len() >= 200);
    let names: HashSet<String> = registry.names().collect();
    for (_, tool) in &requests {
        assert!(names.contains(tool), "{tool}");
    }
}

#[test]
fn the_right_tool_is_in_the_top_five_for_nine_requests_in_ten() {
    let registry = registry(true);
    let tools = registry.tools();
    let index = ToolIndex::of_tools(&tools);
    let requests = requests();
    let mut missed = Vec::new();
    for (request, tool) in &requests {
        let found = index.search(request, 5);
        if !found.iter().any(|hit| &hit.name == tool) {
            missed.push(format!(
                "{request:?} -> {tool}, found {:?}",
                found.iter().map(|hit| hit.name.as_str()).collect::<Vec<_>>()
            ));
        }
    }
    let recall = 1.0 - missed.len() as f64 / requests.len() as f64;
    eprintln!("recall@5: {recall:.3} ({} of {} missed)", missed.len(), requests.len());
    for miss in &missed {
        eprintln!("  {miss}");
    }
    assert!(recall >= 0.9, "recall@5 {recall:.3}");
}
