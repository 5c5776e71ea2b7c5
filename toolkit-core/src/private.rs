//! What the code `#[tool]` generates calls into. Not a public API: it may
//! change in any release.

use std::cell::Cell;
use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::context::CallSite;
use crate::tool_schema::ToolSchema;
use crate::{Arguments, CallError, IntoToolResult, ToolDef, ToolResult};

/// A `#[tool]` in the program's global catalogue.
pub struct CatalogueEntry(pub &'static ToolDef);

inventory::collect!(CatalogueEntry);

/// Parses a call's arguments into the tool's generated argument struct.
///
/// The fast path is a plain `serde_json` parse; only a failed parse is
/// parsed again, tracking the path, to say where the problem is.
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: Arguments<'_>,
    tool: &str,
) -> Result<T, CallError> {
    let invalid = |path: Option<String>, message: String| CallError::InvalidArguments {
        tool: tool.to_owned(),
        path,
        message,
    };
    let value = match arguments {
        Arguments::Text(text) => {
            let error = match serde_json::from_str(text) {
                Ok(parsed) => return Ok(parsed),
                // Blank arguments, as some models send for a tool without
                // parameters, mean no arguments. Checked only here, so a
                // well-formed call does not pay for the scan.
                Err(error) if error.is_eof() && text.trim().is_empty() => {
                    return parse_arguments(Arguments::Text("{}"), tool);
                }
                Err(error) => error,
            };
            if !error.is_data() {
                return Err(invalid(
                    None,
                    format!("the arguments are not valid JSON: {error}"),
                ));
            }
            match serde_json::from_str::<Value>(text) {
                Ok(value) => value,
                Err(_) => return Err(invalid(None, without_position(&error))),
            }
        }
        Arguments::Value(Value::Null) => Value::Object(serde_json::Map::new()),
        Arguments::Value(value) => match T::deserialize(value) {
            Ok(parsed) => return Ok(parsed),
            Err(_) => value.clone(),
        },
    };
    // Strict-mode and Gemini schemas mark optional fields nullable, so a
    // model may send `null` for a field that is merely defaulted
    // (`#[serde(default)]`). Absent means the same to the tool.
    let mut without_nulls = value.clone();
    remove_null_fields(&mut without_nulls);
    if let Ok(parsed) = T::deserialize(&without_nulls) {
        return Ok(parsed);
    }
    // Parse again, tracking the path, to say where the problem is.
    match serde_path_to_error::deserialize::<_, T>(&value) {
        Err(traced) => {
            let (path, message) = located(traced.path(), traced.inner());
            Err(invalid(path, message))
        }
        Ok(parsed) => Ok(parsed),
    }
}

fn remove_null_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, field| !field.is_null());
            map.values_mut().for_each(remove_null_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_null_fields),
        _ => {}
    }
}

fn located(
    path: &serde_path_to_error::Path,
    error: &serde_json::Error,
) -> (Option<String>, String) {
    let path = path.to_string();
    let path = (path != ".").then_some(path);
    (path, without_position(error))
}

/// serde_json's message without its ` at line 1 column 9` suffix, which
/// means nothing to a model that sent the arguments as one value.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(at) if error.line() > 0 => message[..at].to_owned(),
        _ => message,
    }
}

/// The host's value for a `#[tool(state)]` parameter.
pub fn state<T: Clone + Send + Sync + 'static>(
    site: &CallSite<'_>,
    type_name: &str,
) -> Result<T, CallError> {
    site.state::<T>().ok_or_else(|| CallError::MissingState {
        tool: site.tool_name().to_owned(),
        type_name: type_name.to_owned(),
    })
}

/// Runs a sync tool on tokio's blocking pool, so that it never holds up the
/// runtime's worker threads.
pub async fn run_blocking<F>(tool: &'static str, body: F) -> Result<ToolResult, CallError>
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    let runtime = tokio::runtime::Handle::try_current().map_err(|error| CallError::Runtime {
        tool: tool.to_owned(),
        message: error.to_string(),
    })?;
    runtime.spawn_blocking(body).await.map_err(|error| {
        if error.is_panic() {
            CallError::Panicked {
                tool: tool.to_owned(),
                message: crate::panic_message(error.into_panic().as_ref()),
            }
        } else {
            CallError::Runtime {
                tool: tool.to_owned(),
                message: error.to_string(),
            }
        }
    })
}

/// The schemas of a tool whose argument struct is `T`, its parameters in
/// declaration order.
pub fn schema_of<T: schemars::JsonSchema>(params: &[&str]) -> ToolSchema {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let generated = settings.into_generator().into_root_schema_for::<T>();
    ToolSchema::build(generated.as_value(), params)
}

/// Holds a tool's return value for the conversion below.
pub struct Wrap<T>(Cell<Option<T>>);

impl<T> Wrap<T> {
    pub fn new(value: T) -> Self {
        Self(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        // Each conversion method below takes the value exactly once.
        self.0.take().expect("a return value is converted once")
    }
}

// Conversion by autoref specialisation: `(&&&Wrap::new(v)).__into_tool_result()`
// picks the first of these that applies, so a tool can return anything that
// converts into a result, a `Result` whose `Ok` side merely serializes, or any
// other `Serialize` value (as JSON).

/// Values that convert into a result.
pub trait ViaIntoToolResult {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T: IntoToolResult> ViaIntoToolResult for &&Wrap<T> {
    fn __into_tool_result(&self) -> ToolResult {
        self.take().into_tool_result()
    }
}

/// `Result<T, E>` whose `T` serializes.
pub trait ViaSerializeResult {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T: Serialize, E: Display> ViaSerializeResult for &Wrap<Result<T, E>> {
    fn __into_tool_result(&self) -> ToolResult {
        match self.take() {
            Ok(value) => ToolResult::serialized(&value),
            Err(error) => ToolResult::error(format!("{error:#}")),
        }
    }
}

/// Any value that serializes, as JSON.
pub trait ViaSerialize {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T: Serialize> ViaSerialize for Wrap<T> {
    fn __into_tool_result(&self) -> ToolResult {
        ToolResult::serialized(&self.take())
    }
}

/// Asserts at compile time that a parameter type can be read from JSON and
/// described by a schema; the error lands on the parameter's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive both: `#[derive(serde::Deserialize, schemars::JsonSchema)]`, or mark the parameter `#[tool(state)]` if the host provides it"
)]
pub trait ToolParam {}

impl<T: DeserializeOwned + schemars::JsonSchema + Send + 'static> ToolParam for T {}

pub const fn assert_param<T: ToolParam>() {}
