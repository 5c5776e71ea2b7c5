//! What a malformed message deserves, on either transport: rmcp drops a
//! line that is not JSON, reads a standard request whose parameters it
//! cannot read as a request of an unknown method (`-32601`), and over HTTP
//! answers a body that is not JSON with a plain-text 415. Here a message
//! that is not JSON gets a parse error (`-32700`), one that is not a
//! JSON-RPC message an invalid request (`-32600`, with its id when it has
//! one), a standard request with unreadable parameters invalid params
//! (`-32602`); a notification gets no answer.

#[cfg(feature = "http-server")]
use rmcp::model::{CallToolRequestMethod, CallToolRequestParams, JsonRpcVersion2_0, RequestId};
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage};
use serde_json::{Value, json};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;

/// The methods revision 2026-07-28 removed (sessions, per-session logging
/// and subscriptions): a request of that revision for one is of an unknown
/// method, whatever its parameters.
const REMOVED_IN_2026_07_28: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// A message that gets an error instead of an answer.
#[derive(Debug)]
pub(crate) struct Malformed {
    id: Option<Value>,
    code: i64,
    message: String,
}

impl Malformed {
    /// A message longer than the limit.
    pub(crate) fn too_large(limit: usize) -> Self {
        Self {
            id: None,
            code: INVALID_REQUEST,
            message: format!(
                "Invalid request: the message is longer than the limit of {limit} bytes"
            ),
        }
    }

    /// Whether the method is unknown (HTTP 404), rather than the message
    /// malformed (HTTP 400).
    #[cfg(feature = "http-server")]
    pub(crate) fn is_unknown_method(&self) -> bool {
        self.code == METHOD_NOT_FOUND
    }

    /// The JSON-RPC error response.
    pub(crate) fn to_response(&self) -> Value {
        let mut error =
            json!({"jsonrpc": "2.0", "error": {"code": self.code, "message": self.message}});
        // An error about a message whose id cannot be read carries none.
        if let Some(id) = self
            .id
            .as_ref()
            .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        {
            error["id"] = id.clone();
        }
        error
    }
}

/// The message in `text`; `None` for nothing to answer (blank, or a
/// notification that cannot be read).
pub(crate) fn read_message(text: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Malformed> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // Nearly every message reads at once; the slower reading below, which
    // tells what is wrong, is for the rest.
    if let Ok(message) = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text)
        && standard_method_misread(&message).is_none()
    {
        return Ok(Some(message));
    }
    let value: Value = serde_json::from_slice(text).map_err(|error| Malformed {
        id: None,
        code: PARSE_ERROR,
        message: format!("Parse error: {error}"),
    })?;
    let id = value.get("id").cloned();
    let request_like = value.get("jsonrpc") == Some(&json!("2.0"))
        && value.get("method").is_some_and(Value::is_string);
    let malformed = |code, message| Malformed {
        id: id.clone(),
        code,
        message,
    };
    // A request of 2026-07-28 for a method that revision removed: its
    // parameters do not matter.
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let revision = value
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    if request_like
        && id.is_some()
        && REMOVED_IN_2026_07_28.contains(&method)
        && revision.is_some_and(|revision| revision >= "2026-07-28")
    {
        return Err(malformed(
            METHOD_NOT_FOUND,
            format!("Method not found: {method} (removed in 2026-07-28)"),
        ));
    }
    match serde_json::from_value(value) {
        Ok(message) => match standard_method_misread(&message) {
            Some(method) => Err(malformed(
                INVALID_PARAMS,
                format!("Invalid params for {method}"),
            )),
            None => Ok(Some(message)),
        },
        Err(_) if request_like && id.is_none() => Ok(None),
        Err(error) if request_like => Err(malformed(
            INVALID_PARAMS,
            format!("Invalid params: {error}"),
        )),
        Err(error) => Err(malformed(
            INVALID_REQUEST,
            format!("Invalid request: {error}"),
        )),
    }
}

/// Whether `text` is a `tools/call` request that rmcp reads as one, told
/// without building rmcp's message.
///
/// The HTTP transport checks a body before rmcp reads it, and rmcp's own
/// reading (an untagged enum of every request, buffered and tried in turn)
/// costs as much as the rest of a call. A call is by far the most frequent
/// message, and its shape is read here straight into the same types rmcp
/// uses, which costs a fraction of that. Anything else, or a call this
/// reading refuses, goes through [`read_message`], which has the last word.
#[cfg(feature = "http-server")]
pub(crate) fn is_plain_call(text: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct PlainCall {
        #[serde(rename = "jsonrpc")]
        _version: JsonRpcVersion2_0,
        #[serde(rename = "id")]
        _id: RequestId,
        #[serde(rename = "method")]
        _method: CallToolRequestMethod,
        #[serde(rename = "params")]
        _params: CallToolRequestParams,
    }
    serde_json::from_slice::<PlainCall>(text).is_ok()
}

/// The methods of the protocol's requests from a client.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// The method of a standard request that was read as a custom one.
fn standard_method_misread(message: &RxJsonRpcMessage<RoleServer>) -> Option<&str> {
    match message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom)
                if STANDARD_METHODS.contains(&custom.method.as_str()) =>
            {
                Some(&custom.method)
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "http-server")]
    #[test]
    fn a_plain_call_is_told_apart_from_what_needs_a_closer_reading() {
        let call = |params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#)
        };
        for plain in [
            call(r#"{"name":"echo","arguments":{"text":"hi"}}"#),
            call(r#"{"name":"echo"}"#),
            call(r#"{"name":"echo","_meta":{"progressToken":1}}"#),
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"e"}}"#.into(),
        ] {
            assert!(is_plain_call(plain.as_bytes()), "{plain}");
            // What passes here, rmcp reads as a call.
            assert!(matches!(
                read_message(plain.as_bytes()),
                Ok(Some(JsonRpcMessage::Request(request)))
                    if matches!(request.request, ClientRequest::CallToolRequest(_))
            ));
        }
        for other in [
            call(r#"{"arguments":{}}"#),
            call(r#"{"name":"echo","arguments":[1]}"#),
            call(r#"{"name":7}"#),
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"e"}}"#.into(),
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"e"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"e"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e""#.into(),
        ] {
            assert!(!is_plain_call(other.as_bytes()), "{other}");
        }
        // Those among them that are requests with unreadable parameters
        // still get their own error from the closer reading.
        let unreadable = read_message(call(r#"{"name":"echo","arguments":[1]}"#).as_bytes());
        assert_eq!(unreadable.unwrap_err().code, INVALID_PARAMS);
    }
}
