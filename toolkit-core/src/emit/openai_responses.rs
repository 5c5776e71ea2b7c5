//! OpenAI Responses: `function_call_output` items.

use serde_json::Value;

use super::resolve::{Part, Resolved, data_url, object, string};
use super::{EmitOptions, Emitted};
use crate::{Provider, ToolCallResult};

/// One turn's results as OpenAI Responses `function_call_output` items, one
/// per call, in call order.
///
/// A result without images or note has a string `output` (`Error: …` first
/// when the tool failed). Otherwise `output` is a list of `input_text` and
/// `input_image` (data URL, `detail: "auto"`) parts in content order, the
/// note last.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{ToolCallResult, ToolResult};
///
/// let turn = [ToolCallResult::new("call_1", "search", ToolResult::error("index offline"))];
/// let items = emit::openai_responses(&turn, &EmitOptions::default()).items;
/// assert_eq!(
///     items[0],
///     serde_json::json!({
///         "type": "function_call_output",
///         "call_id": "call_1",
///         "output": "Error: index offline",
///     })
/// );
/// ```
pub fn openai_responses(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let mut problems = Vec::new();
    let resolved = Resolved::turn(turn, options, Provider::OpenAiResponses, &mut problems);
    let items = resolved
        .iter()
        .map(|call| {
            let output = if call.has_images() || call.note.is_some() {
                let mut parts: Vec<Value> = call.parts.iter().map(output_part).collect();
                if let Some(note) = call.note {
                    parts.push(object([
                        ("type", string("input_text")),
                        ("text", string(note)),
                    ]));
                }
                Value::Array(parts)
            } else {
                Value::String(call.joined_text())
            };
            object([
                ("type", string("function_call_output")),
                ("call_id", string(&call.call.call_id)),
                ("output", output),
            ])
        })
        .collect();
    Emitted { items, problems }
}

fn output_part(part: &Part<'_>) -> Value {
    match part {
        Part::Image { mime_type, data } => object([
            ("type", string("input_image")),
            ("image_url", string(data_url(mime_type, data))),
            ("detail", string("auto")),
        ]),
        text => object([("type", string("input_text")), ("text", text.text_value())]),
    }
}
