//! Conversions from what a tool naturally returns into a [`ToolResult`].

use std::borrow::Cow;
use std::error::Error;

use serde::Serialize;
use serde_json::Value;

use crate::{Audio, Block, EmbeddedResource, Image, ResourceLink, ToolResult};

/// A value a tool can return.
///
/// Implemented for text (`String`, `&str`, `Cow<str>`), `()` (no content),
/// [`Image`], [`Audio`], [`EmbeddedResource`], [`ResourceLink`], [`Block`], `Vec<Block>`, [`ToolResult`] itself,
/// `serde_json::Value` and [`Json<T>`] for any `T: Serialize` (structured
/// JSON), `Option<T>` (`None` is no content) and `Result<T, E>` where `E`
/// is an error: any `std::error::Error + Send + Sync + 'static`, an
/// `anyhow::Error` or `eyre::Report`, a `String` or a `&str` (anything
/// `Into<Box<dyn Error + Send + Sync>>`). An `Err` becomes an error result,
/// never a panic: the model reads the error's message followed by its
/// causes, and the host gets the error itself back
/// ([`ToolResult::downcast_error`]). See [`ToolResult::from_error`].
///
/// ```
/// use toolkit_core::{IntoToolResult, Json};
///
/// assert_eq!("found 3".into_tool_result().as_text().unwrap(), "found 3");
///
/// let failed: Result<String, std::io::Error> =
///     Err(std::io::Error::other("disk full"));
/// let result = failed.into_tool_result();
/// assert_eq!(result.error_message(), Some("disk full"));
/// assert!(result.downcast_error::<std::io::Error>().is_some());
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
// Exhaustive on purpose: a newtype, built as `Json(value)`.
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

impl IntoToolResult for Audio {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([Block::audio(self)])
    }
}

impl IntoToolResult for EmbeddedResource {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([Block::resource(self)])
    }
}

impl IntoToolResult for ResourceLink {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::blocks([Block::resource_link(self)])
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

// The bound is the one `Box<dyn Error + Send + Sync>` converts from, as
// tower's `BoxError` is: it takes typed errors (whose causes and type must
// survive), anyhow's and eyre's (which convert into such a box, causes and
// all) and plain messages alike.
impl<T, E> IntoToolResult for Result<T, E>
where
    T: IntoToolResult,
    E: Into<Box<dyn Error + Send + Sync + 'static>>,
{
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => ToolResult::from_boxed_error(error.into()),
        }
    }
}
