//! The parts of a request's content in the tracing conventions' shapes,
//! which each dialect's trace view is written in.

use serde_json::{Value, json};

/// A text part.
pub(crate) fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

/// A call's arguments as an object where they parse, else as sent.
pub(crate) fn tool_call(id: &str, name: &str, arguments: &Value) -> Value {
    let arguments = match arguments {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| arguments.clone()),
        other => other.clone(),
    };
    json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments})
}

pub(crate) fn tool_response(id: &str, response: &Value) -> Value {
    json!({"type": "tool_call_response", "id": id, "response": response})
}

/// A part the conventions have no shape for: its type only.
pub(crate) fn other_part(block: &Value) -> Value {
    json!({"type": block.get("type").and_then(Value::as_str).unwrap_or("unknown")})
}

/// A message; one holding only tool results is the `tool` role's.
pub(crate) fn message(role: &str, parts: Vec<Value>) -> Value {
    let all_results = !parts.is_empty()
        && parts
            .iter()
            .all(|part| part["type"] == "tool_call_response");
    let role = if all_results { "tool" } else { role };
    json!({"role": role, "parts": parts})
}
