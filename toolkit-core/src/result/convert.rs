//! Conversions from what a tool naturally returns into a [`ToolResult`].

use std::borrow::Cow;
use std::fmt::Display;

use serde::Serialize;
use serde_json::Value;

use crate::{Block, Image, ToolResult};

/// A value a tool can return.
///
/// Implemented for text (`String`, `&str`, `Cow<str>`), `()` (no content),
/// [`Image`], [`Block`], `Vec<Block>`, [`ToolResult`] itself,
/// `serde_json::Value` and [`Json<T>`] for any `T: Serialize` (structured
/// JSON), `Option<T>` (`None` is no content) and `Result<T, E>` where
/// `E: Display`: an `Err` becomes an error result carrying the error's
/// message, never a panic.
///
/// ```
/// use toolkit_core::{IntoToolResult, Json};
///
/// assert_eq!("found 3".into_tool_result().as_text().unwrap(), "found 3");
///
/// let failed: Result<String, std::io::Error> =
///     Err(std::io::Error::other("disk full"));
/// assert_eq!(failed.into_tool_result().error_message(), Some("disk full"));
///
/// #[derive(serde::Serialize)]
/// struct Hit { title: String }
/// let hits = Json(vec![Hit { title: "Rust".into() }]);
/// assert_eq!(hits.into_tool_result().to_text(), r#"[{"title":"Rust"}]"#);
/// ```
pub trait IntoToolResult {
    /// Converts `self` into a result.
    fn into_tool_result(self) -> ToolResult;
}

/// Structured JSON output: wrap any `Serialize` value to return it as JSON.
///
/// A value that fails to serialize (a map with non-string keys, a
/// `Serialize` impl that errors) becomes an error result saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for Cow<'_, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([])
    }
}

impl IntoToolResult for Image {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([Block::image(self)])
    }
}

impl IntoToolResult for Block {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([self])
    }
}

impl IntoToolResult for Vec<Block> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks(self)
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::json(self)
    }
}

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::serialized(&self.0)
    }
}

impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Some(value) => value.into_tool_result(),
            None => ToolResult::blocks([]),
        }
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            // The alternate form carries the cause chain for error types that
            // keep one (anyhow, eyre) and is the plain message for the rest.
            Err(error) => ToolResult::error(format!("{error:#}")),
        }
    }
}
