//! The `#[tool]` attribute, documented here where users find it.

/// Turns a plain function into a tool: the function stays as written and
/// callable, and beside it the macro generates, at compile time, a static
/// [`ToolDef`](crate::ToolDef): name, description, parameter schema and an
/// entry point that takes JSON arguments.
///
/// ```
/// use serde::Deserialize;
/// use schemars::JsonSchema;
/// use toolkit_core::{Registry, tool, tools};
///
/// /// Result ordering.
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "snake_case")]
/// enum Order {
///     /// Best match first.
///     Relevance,
///     /// Newest first.
///     Newest,
/// }
///
/// /// Search the document index.
/// ///
/// /// Returns matching titles, one per line.
/// ///
/// /// # Examples
/// ///
/// /// Everything from this heading on is for humans only.
/// #[tool]
/// async fn search(
///     /// The full-text query.
///     query: String,
///     /// Maximum number of hits.
///     limit: Option<u32>,
///     /// Tags to filter by.
///     tags: Vec<String>,
///     /// Result ordering.
///     order: Order,
/// ) -> Result<String, std::io::Error> {
///     Ok(format!("{query}: no hits"))
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // Still a plain function:
/// assert_eq!(search("rust".into(), None, vec![], Order::Newest).await?, "rust: no hits");
///
/// let registry = Registry::builder().tools(tools![search]).build().unwrap();
/// let outcome = registry
///     .dispatch(("search", r#"{"query": "rust", "tags": [], "order": "newest"}"#))
///     .await;
/// assert_eq!(outcome.result.as_text(), Ok("rust: no hits"));
/// # Ok::<(), std::io::Error>(())
/// # }).unwrap();
/// ```
///
/// # Descriptions
///
/// - The tool's description is its doc comment up to the first `#` heading,
///   paragraph breaks kept: `# Examples`, `# Errors` and the like are for
///   humans and stay out. `#[tool(description = "...")]` replaces it. A tool
///   without a description does not compile.
/// - Each parameter is described by a `///` comment on it (the macro removes
///   it, so rustc accepts it), or by an entry of an `# Arguments` section of
///   the function's doc (`` * `query` - The full-text query. ``). Doc
///   comments on your own structs, fields and enum variants reach the schema
///   too.
/// - **Every parameter the model sees must be described.** A parameter with
///   no description is a compile error, unless marked
///   `#[tool(undocumented)]`: the author opts out in so many words.
///
/// # Parameters
///
/// Any owned `T: Deserialize + JsonSchema` (schemars 1.x): numbers, `bool`,
/// `String`, `Option<T>` (optional: left out of `required`), `Vec<T>`, maps,
/// your own structs and enums, nested. An `Option<Option<T>>` tells the
/// three apart: absent is `None`, `null` is `Some(None)` (as in "clear
/// it"), a value is `Some(Some(value))`. Borrowed types (`&str`, `&[T]`,
/// `Cow<'_, str>`) cannot be read from a call's JSON and are refused with a
/// message naming the owned type to use.
///
/// Options on a parameter, in `#[tool(...)]`:
///
/// | option | meaning |
/// |---|---|
/// | `state` | hidden: a value the host gave the registry with [`RegistryBuilder::state`](crate::RegistryBuilder::state), looked up by the parameter's type (cloned per call, so share with `Arc`). A registry missing it fails to build. |
/// | `context` | hidden: the [`CallContext`](crate::CallContext) (call id, tool name, cancellation). |
/// | `rename = "..."` | the parameter's name in the schema and arguments. |
/// | `undocumented` | allow this parameter to have no description. |
///
/// Hidden parameters never appear in the schema.
///
/// # Options on the tool
///
/// `#[tool(name = "...", description = "...")]`. A name must match
/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, which every provider accepts; by
/// default it is the function's name. `#[tool(catalogue = false)]` keeps the
/// tool out of the global catalogue (for a library's tools that need setup
/// before use).
///
/// # Return values
///
/// Anything that converts with [`IntoToolResult`](crate::IntoToolResult)
/// (text, `()`, images, blocks, a whole [`ToolResult`](crate::ToolResult)),
/// any other `Serialize` value (sent as structured JSON), and `Result<T, E>`
/// of either where `E` converts into `Box<dyn Error + Send + Sync>` (any
/// `std::error::Error + Send + Sync + 'static`, `anyhow::Error`, `String`):
/// an `Err` becomes an error result whose message the model reads with its
/// causes, and whose typed error the host gets back
/// ([`CallOutcome::downcast_error`](crate::CallOutcome::downcast_error)).
/// Written out as `Result<T, E>`, the `E` may also be any `Display` type,
/// sent as its message.
///
/// # Sync and async
///
/// An `async fn` runs on the caller's task. A plain `fn` runs on tokio's
/// blocking pool (`spawn_blocking`), so a slow sync tool never holds up the
/// runtime's worker threads; a time limit cannot stop it, only stop waiting
/// for it.
///
/// # Registries and the catalogue
///
/// Next to `fn search` the macro defines a hidden type also named `search`
/// implementing [`Tool`](crate::Tool), so
/// [`tools![search, fetch]`](crate::tools) lists definitions by function
/// name. Every `#[tool]` in the program also joins a global catalogue at
/// link time, from which
/// [`RegistryBuilder::catalogue`](crate::RegistryBuilder::catalogue) and its
/// siblings build registries by
/// module or by name.
///
/// # Mistakes are compile errors
///
/// A generic, `unsafe`, `extern` or variadic function; a `self` parameter; a
/// pattern, reference, lifetime or `impl Trait` parameter; a parameter type
/// that is not `Deserialize + JsonSchema`; a return type that cannot become
/// a result; a missing description; an invalid name; two parameters with
/// the same name; an unknown option: each is reported at the offending
/// token, with the fix, and all of them at once.
pub use toolkit_macros::tool;
