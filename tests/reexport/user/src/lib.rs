//! Tools written against a re-export of `toolkit_core`.

use toolkit_facade_fixture::agents::{self, tool};

/// Adds two numbers.
#[tool(crate = toolkit_facade_fixture::agents)]
pub fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> String {
    (a + b).to_string()
}

/// Today's total, as structured output.
#[tool(crate = "toolkit_facade_fixture::agents", read_only)]
pub async fn total(
    /// The amounts.
    amounts: Vec<i64>,
) -> agents::Json<serde_json::Value> {
    agents::Json(serde_json::json!({"total": amounts.iter().sum::<i64>()}))
}

/// The registry of this crate's tools.
pub fn registry() -> agents::Registry {
    agents::Registry::builder()
        .tools(agents::tools![add, total])
        .build()
        .expect("the tools are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tools_work_through_the_reexport() {
        let registry = registry();
        let outcome = registry.dispatch(("add", r#"{"a": 2, "b": 40}"#)).await;
        assert_eq!(outcome.result.as_text(), Ok("42"));
        let definitions = registry
            .tool_list(agents::Provider::Mcp)
            .unwrap()
            .to_value();
        assert_eq!(definitions[1]["annotations"]["readOnlyHint"], true);
        // In the catalogue too, through the re-exported path.
        let all = agents::Registry::builder()
            .catalogue_module("toolkit_facade_user_fixture")
            .build()
            .unwrap();
        assert_eq!(all.names().collect::<Vec<_>>(), ["add", "total"]);
    }
}
