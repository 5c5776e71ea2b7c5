//! The registry the MCP tests serve, and the switch that makes a test
//! binary its own server: started with `TOOLKIT_MCP_TEST_SERVE=1`, it
//! serves this registry over stdio instead of running its tests.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use toolkit_core::{Block, CallContext, Image, Json, Registry, ToolResult, tool, tools};

/// Adds two numbers.
#[tool(read_only, idempotent)]
fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> String {
    (a + b).to_string()
}

/// Always fails.
#[tool]
fn fail() -> Result<String, String> {
    Err("the disk is full".to_owned())
}

/// A one-pixel image.
#[tool]
fn pixel() -> ToolResult {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let image = Image::from_base64("image/png", PNG).expect("a valid PNG");
    ToolResult::blocks([Block::text("one pixel"), Block::image(image)])
}

/// A forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: i32,
}

/// Today's weather.
#[tool(title = "Weather today")]
fn weather(
    /// The city.
    city: String,
) -> Json<Forecast> {
    Json(Forecast { city, celsius: 21 })
}

/// The registry being served, for `toggle`.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

/// Disables a tool.
#[tool]
async fn toggle(
    /// The tool to disable.
    name: String,
) -> String {
    let registry = SERVED.get().expect("set before serving");
    format!("disabled: {}", registry.set_enabled(&name, false))
}

/// Whether `slow` saw its call cancelled.
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Waits up to ten seconds, unless the call is cancelled.
#[tool]
async fn slow(#[tool(context)] call: CallContext) -> String {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(10)) => "slept".to_owned(),
        () = call.cancellation().cancelled() => {
            CANCELLED.store(true, Ordering::SeqCst);
            "cancelled".to_owned()
        }
    }
}

/// Whether a call of `slow` was cancelled.
#[tool]
fn was_cancelled() -> String {
    CANCELLED.load(Ordering::SeqCst).to_string()
}

/// The names of the served tools, in order.
pub const TOOLS: [&str; 7] = [
    "add",
    "fail",
    "pixel",
    "weather",
    "toggle",
    "slow",
    "was_cancelled",
];

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .tools(tools![
                add,
                fail,
                pixel,
                weather,
                toggle,
                slow,
                was_cancelled
            ])
            .build()
            .expect("the test tools are valid"),
    )
}

/// Serves the registry over stdio and returns `true` when this process was
/// started as the server; `false` when it should run its tests.
pub fn serve_if_asked() -> bool {
    if std::env::var_os("TOOLKIT_MCP_TEST_SERVE").is_none() {
        return false;
    }
    let registry = registry();
    let _ = SERVED.set(Arc::clone(&registry));
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    if let Err(error) = runtime.block_on(toolkit_mcp::serve_stdio(registry)) {
        eprintln!("{error}");
        std::process::exit(1);
    }
    true
}
