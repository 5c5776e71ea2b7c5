//! The tools whose calls the trace tests follow: one that answers and one
//! that fails.

use std::sync::Arc;

use toolkit_core::{Registry, tool, tools};

/// The weather in a city.
#[tool]
fn weather(
    /** The city. */
    city: String,
) -> String {
    format!("rainy in {city}")
}

/// Always fails.
#[tool]
fn broken() -> Result<String, String> {
    Err("the disk is full".to_owned())
}

/// `weather` and `broken`.
pub fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .tools(tools![weather, broken])
            .build()
            .expect("valid tools"),
    )
}
