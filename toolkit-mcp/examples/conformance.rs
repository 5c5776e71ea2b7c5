//! The server the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) checks: every fixture the suite
//! calls by name that this crate can serve, over Streamable HTTP.
//!
//! ```text
//! cargo run -q -p toolkit-mcp --example conformance -- --http 127.0.0.1:8080
//! ```
//!
//! Port 0 takes a free port; the line `serving MCP at URL` on standard
//! error names it.
//!
//! `scripts/conformance` starts it and runs the suite against
//! `http://127.0.0.1:PORT/mcp`, for protocol revisions 2025-11-25 and
//! 2026-07-28. The fixtures' names and contents are the suite's.
//! Besides tools it offers the suite's resources (static text and bytes, a
//! template, one to subscribe to) and prompts (plain, with arguments, with
//! an embedded resource, with an image, one asking the user first). What
//! it cannot show yet is listed, with its reason, in
//! `toolkit-mcp/conformance/expected-failures-*.yml`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use toolkit_core::{
    Audio, Block, CallContext, ElicitRequest, Elicited, EmbeddedResource, Image, LogLevel,
    Registry, Root, RootsRequest, SampleRequest, Sampled, ToolDef, ToolResult, tool, tools,
};
use toolkit_mcp::{
    HttpOptions, McpServer, Prompt, PromptContent, PromptMessage, Resource, ResourceContents,
    ResourceTemplate,
};

const USAGE: &str = "usage: conformance --http ADDRESS:PORT";

/// A 1×1 red PNG.
const RED_PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// Returns a fixed text.
#[tool]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Returns a 1×1 red PNG.
#[tool]
fn test_image_content() -> Result<ToolResult, String> {
    let image = Image::from_base64("image/png", RED_PIXEL).map_err(|error| error.to_string())?;
    Ok(ToolResult::blocks([Block::image(image)]))
}

/// Returns a short silent WAV.
#[tool]
fn test_audio_content() -> Result<ToolResult, String> {
    let audio = Audio::wav(&silent_wav()).map_err(|error| error.to_string())?;
    Ok(ToolResult::blocks([Block::audio(audio)]))
}

/// Returns an embedded text resource.
#[tool]
fn test_embedded_resource() -> Result<ToolResult, String> {
    let resource = EmbeddedResource::from_text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
    .with_mime_type("text/plain")
    .map_err(|error| error.to_string())?;
    Ok(ToolResult::blocks([Block::resource(resource)]))
}

/// Returns text, an image and an embedded JSON resource, in that order.
#[tool]
fn test_multiple_content_types() -> Result<ToolResult, String> {
    let image = Image::from_base64("image/png", RED_PIXEL).map_err(|error| error.to_string())?;
    let resource = EmbeddedResource::from_text(
        "test://mixed-content-resource",
        r#"{"test":"data","value":123}"#,
    )
    .with_mime_type("application/json")
    .map_err(|error| error.to_string())?;
    Ok(ToolResult::blocks([
        Block::text("Multiple content types test:"),
        Block::image(image),
        Block::resource(resource),
    ]))
}

/// A WAV file of a tenth of a second of silence: 8 kHz, 8-bit, mono.
fn silent_wav() -> Vec<u8> {
    const SAMPLES: u32 = 800;
    let mut wav = Vec::with_capacity(44 + SAMPLES as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + SAMPLES).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // the format chunk's size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // channels
    wav.extend_from_slice(&8000u32.to_le_bytes()); // samples a second
    wav.extend_from_slice(&8000u32.to_le_bytes()); // bytes a second
    wav.extend_from_slice(&1u16.to_le_bytes()); // bytes a frame
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits a sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&SAMPLES.to_le_bytes());
    // 8-bit PCM is unsigned: 128 is silence.
    wav.resize(44 + SAMPLES as usize, 128);
    wav
}

/// Always fails.
#[tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
#[tool]
async fn test_tool_with_progress(#[tool(context)] call: CallContext) -> String {
    for done in [0.0, 50.0, 100.0] {
        if done > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        call.report_progress(done, Some(100.0), None);
    }
    "Progress reported: 0, 50 and 100 of 100.".to_owned()
}

/// Logs three messages at `info`, about 50 ms apart.
#[tool]
async fn test_tool_with_logging(#[tool(context)] call: CallContext) -> String {
    call.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    call.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    call.log(LogLevel::Info, "Tool execution completed");
    "Logged three messages.".to_owned()
}

/// Logs one message at each level: the client hears those at or above the
/// level it asked for, and none when it asked for none.
#[tool]
fn test_logging_tool(#[tool(context)] call: CallContext) -> String {
    for level in LogLevel::ALL {
        call.log(level, format!("a message at {level}"));
    }
    "Logged a message at each level.".to_owned()
}

/// Answers after 100 ms, long enough for a client to leave the call's event
/// stream and come back with `Last-Event-ID` (the session keeps the
/// stream's events for it).
#[tool]
async fn test_reconnection() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed".to_owned()
}

/// How long a tool waits for the client's answer to a question.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// Asks the user `question`: without an answer, the tool fails with the
/// reason.
async fn ask_user(call: &CallContext, question: ElicitRequest) -> Result<Elicited, String> {
    call.elicit_with(question, ANSWER_WITHIN)
        .await
        .map_err(|error| error.to_string())
}

/// Asks the client's model `request`: without an answer, the tool fails
/// with the reason.
async fn ask_model(call: &CallContext, request: SampleRequest) -> Result<Sampled, String> {
    call.sample(request, ANSWER_WITHIN)
        .await
        .map_err(|error| error.to_string())
}

/// Asks the client for its roots (`client_roots`): without an answer, the
/// tool fails with the reason.
async fn ask_roots(call: &CallContext) -> Result<Vec<Root>, String> {
    call.roots_with(RootsRequest::new().key("client_roots"), ANSWER_WITHIN)
        .await
        .map_err(|error| error.to_string())
}

/// Asks the client's model to complete the prompt.
#[tool]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let sampled = ask_model(&call, SampleRequest::new(prompt, 100)).await?;
    Ok(format!("LLM response: {}", sampled.text))
}

/// Needs the client's model: a 2026-07-28 client that did not declare
/// `sampling` gets `MissingRequiredClientCapabilityError` (`-32021`).
#[tool]
async fn test_missing_capability(#[tool(context)] call: CallContext) -> Result<String, String> {
    let sampled = ask_model(&call, SampleRequest::new("Say hello.", 20)).await?;
    Ok(sampled.text)
}

/// Asks the user `message` with a form of `schema`, and says what came
/// back, as the suite's elicitation tools do.
async fn elicitation_completed(
    call: &CallContext,
    message: &str,
    schema: Value,
) -> Result<String, String> {
    let answer = ask_user(call, ElicitRequest::new(message, schema)).await?;
    Ok(format!("Elicitation completed: {}", answer_text(&answer)))
}

/// Asks the user a question in the middle of a call. On 2026-07-28, which
/// has no requests from server to client, the question fails and the call
/// ends in an error result: its stream carries no request.
#[tool]
async fn test_streaming_elicitation(#[tool(context)] call: CallContext) -> Result<String, String> {
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}});
    elicitation_completed(&call, "Anything to add?", schema).await
}

/// A question for the user named `key`, asking for a name.
fn name_question(key: &str, message: &str) -> ElicitRequest {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    ElicitRequest::new(message, schema).key(key)
}

/// The question most fixtures ask: the user's name, as `user_name`.
fn your_name() -> ElicitRequest {
    name_question("user_name", "What is your name?")
}

/// The text the user gave for `field`, or `otherwise`.
fn answered(answer: &Elicited, field: &str, otherwise: &str) -> String {
    answer
        .content
        .as_ref()
        .and_then(|content| content[field].as_str())
        .unwrap_or(otherwise)
        .to_owned()
}

/// The name in an answer to [`name_question`].
fn name_in(answer: &Elicited) -> String {
    answered(answer, "name", "nobody")
}

/// Asks the user's name, and greets them.
async fn greet(call: &CallContext) -> Result<String, String> {
    let answer = ask_user(call, your_name()).await?;
    Ok(format!("Hello, {}!", name_in(&answer)))
}

/// Asks the user's name (`user_name`): on 2026-07-28, in the call's
/// answer, and the call comes again with it.
#[tool]
async fn test_input_required_result_elicitation(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    greet(&call).await
}

/// Asks the client's model a question (`capital_question`).
#[tool]
async fn test_input_required_result_sampling(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let request = SampleRequest::new("What is the capital of France?", 100).key("capital_question");
    let sampled = ask_model(&call, request).await?;
    Ok(format!("The model answered: {}", sampled.text))
}

/// Asks for a confirmation (`confirm`); the answer reaches the tool
/// through the state the client handed back.
#[tool]
async fn test_input_required_result_request_state(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    let question = ElicitRequest::new("Please confirm", schema).key("confirm");
    let answer = ask_user(&call, question).await?;
    Ok(format!("state-ok: {}", answer_text(&answer)))
}

/// Asks the client for its roots (`client_roots`).
#[tool]
async fn test_input_required_result_list_roots(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let roots = ask_roots(&call).await?;
    Ok(format!("roots: {}", root_uris(&roots)))
}

/// The roots' URIs, one after the other.
fn root_uris(roots: &[Root]) -> String {
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    uris.join(", ")
}

/// Asks the user, the model and the client's roots at once (`user_name`,
/// `greeting`, `client_roots`).
#[tool]
async fn test_input_required_result_multiple_inputs(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let (name, greeting, roots) = tokio::join!(
        ask_user(&call, your_name()),
        ask_model(
            &call,
            SampleRequest::new("Generate a greeting", 50).key("greeting")
        ),
        ask_roots(&call),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} {} (working in {})",
        greeting.text,
        name_in(&name),
        root_uris(&roots)
    ))
}

/// Asks two questions one after the other (`step1`, then `step2`): two
/// rounds of questions before the answer.
#[tool]
async fn test_input_required_result_multi_round(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let name = ask_user(&call, name_question("step1", "Step 1: What is your name?")).await?;
    let schema = json!({
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"]
    });
    let question = ElicitRequest::new("Step 2: What is your favorite color?", schema).key("step2");
    let color = ask_user(&call, question).await?;
    Ok(format!(
        "{} likes {}",
        name_in(&name),
        answered(&color, "color", "none")
    ))
}

/// Asks the user and the model at once: a client that declared only one
/// of the capabilities is asked only what it can answer.
#[tool]
async fn test_input_required_result_capabilities(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let (name, sampled) = tokio::join!(
        ask_user(&call, your_name()),
        ask_model(&call, SampleRequest::new("Say hello.", 50).key("greeting")),
    );
    Ok(format!(
        "name: {}; greeting: {}",
        name.map_or_else(|error| error, |name| name_in(&name)),
        sampled.map_or_else(|error| error, |sampled| sampled.text)
    ))
}

/// Asks a question whose answer must come back with the state this server
/// wrote, unchanged.
#[tool]
async fn test_input_required_result_tampered_state(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    greet(&call).await
}

/// The user's answer, as the suite's elicitation tools write it.
fn answer_text(answer: &Elicited) -> String {
    let content = answer.content.clone().unwrap_or(Value::Null);
    format!("action={}, content={content}", answer.action)
}

/// Asks the user for a name and an e-mail address.
#[tool]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = ask_user(&call, ElicitRequest::new(message, schema)).await?;
    Ok(format!("User response: {}", answer_text(&answer)))
}

/// Asks the user with a default for every primitive type (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    let message = "Please review and update the form fields with defaults";
    elicitation_completed(&call, message, schema).await
}

/// Asks the user with the five kinds of enum (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose an option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose a titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose a legacy option",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose multiple options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose multiple titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        }
    });
    let message = "Please select options from the enum fields";
    elicitation_completed(&call, message, schema).await
}

/// The registry being served, for `test_trigger_tool_change`.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

/// The tool `test_trigger_tool_change` adds and removes in turn.
const CHANGING_TOOL: &str = "test_changing_tool";

/// Adds a tool to the served list, or removes it when it is there: a change
/// of the tool list, which clients that listen hear of.
#[tool]
fn test_trigger_tool_change() -> Result<String, String> {
    let registry = SERVED.get().ok_or("the registry is not served yet")?;
    if registry.remove(CHANGING_TOOL) {
        return Ok(format!("removed `{CHANGING_TOOL}`"));
    }
    let changing = ToolDef::builder(CHANGING_TOOL)
        .description("Comes and goes with `test_trigger_tool_change`.")
        .handler(|_arguments: Value, _call: CallContext| async { "here".to_owned() });
    registry.add(changing).map_err(|error| error.to_string())?;
    Ok(format!("added `{CHANGING_TOOL}`"))
}

/// A tool whose input schema uses JSON Schema 2020-12's vocabulary
/// (`$schema`, `$defs` with an `$anchor`, `$ref`, `allOf`/`anyOf`,
/// `if`/`then`/`else`, `additionalProperties`): served as given.
fn json_schema_2020_12_tool() -> ToolDef {
    ToolDef::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }))
        .handler(|_arguments: Value, _call: CallContext| async { "ok".to_owned() })
}

/// The suite's resources and prompts, offered beside the registry's tools.
fn with_resources_and_prompts(server: McpServer) -> Result<McpServer, String> {
    let pixel = Image::from_base64("image/png", RED_PIXEL).map_err(|error| error.to_string())?;
    let pixel_bytes = base64::engine::general_purpose::STANDARD
        .decode(RED_PIXEL)
        .map_err(|error| error.to_string())?;
    let template = ResourceTemplate::new(
        "test://template/{id}/data",
        "template-data",
        |_uri, variables| async move {
            let id = &variables["id"];
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(ResourceContents::text("application/json", data.to_string()))
        },
    )
    .description("A resource template with one parameter")
    .mime_type("application/json");
    let embedded = Prompt::new(
        "test_prompt_with_embedded_resource",
        |arguments| async move {
            let uri = arguments.get("resourceUri").cloned().unwrap_or_default();
            Ok(vec![
                PromptMessage::user(PromptContent::Resource {
                    uri,
                    contents: ResourceContents::text(
                        "text/plain",
                        "Embedded resource content for testing.",
                    ),
                }),
                PromptMessage::user("Please process the embedded resource above."),
            ])
        },
    )
    .description("A prompt with an embedded resource")
    .argument("resourceUri", "URI of the resource to embed", true);
    let with_arguments = Prompt::new("test_prompt_with_arguments", |arguments| async move {
        let (arg1, arg2) = (&arguments["arg1"], &arguments["arg2"]);
        Ok(vec![PromptMessage::user(format!(
            "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
        ))])
    })
    .description("A prompt with arguments")
    .argument("arg1", "First test argument", true)
    .argument("arg2", "Second test argument", true);
    let asking = Prompt::asking(
        "test_input_required_result_prompt",
        |_arguments, context| async move {
            let schema = json!({
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"]
            });
            let question = ElicitRequest::new("What context should the prompt use?", schema)
                .key("user_context");
            let answer = context.elicit_with(question, ANSWER_WITHIN).await?;
            let given = answered(&answer, "context", "none");
            Ok(vec![PromptMessage::user(format!(
                "Answer with this context in mind: {given}"
            ))])
        },
    )
    .description("A prompt that asks the user for its context first");
    Ok(server
        .resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "text/plain",
                "This is the content of the static text resource.",
            )
            .description("A static text resource"),
        )
        .resource(
            Resource::binary(
                "test://static-binary",
                "static-binary",
                "image/png",
                pixel_bytes,
            )
            .description("A static binary resource (a 1×1 red PNG)"),
        )
        .resource(
            Resource::text(
                "test://watched-resource",
                "watched-resource",
                "text/plain",
                "This resource can be subscribed to.",
            )
            .description("A resource to subscribe to"),
        )
        .resource_template(template)
        .prompt(
            Prompt::fixed(
                "test_simple_prompt",
                [PromptMessage::user("This is a simple prompt for testing.")],
            )
            .description("A simple prompt without arguments"),
        )
        .prompt(with_arguments)
        .prompt(embedded)
        .prompt(asking)
        .prompt(
            Prompt::fixed(
                "test_prompt_with_image",
                [
                    PromptMessage::user(pixel),
                    PromptMessage::user("Please analyze the image above."),
                ],
            )
            .description("A prompt with an image"),
        ))
}

/// A tool with a parameter the client mirrors into an HTTP header
/// (`x-mcp-header`, SEP-2243), which the server checks against the body.
fn test_headers() -> ToolDef {
    ToolDef::builder("test_headers")
        .description("Echoes the region, which travels in the Mcp-Param-Region header too.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "description": "The region.", "x-mcp-header": "Region"}
            },
            "required": ["region"]
        }))
        .handler(|arguments: Value, _call: CallContext| async move {
            format!(
                "region: {}",
                arguments["region"].as_str().unwrap_or_default()
            )
        })
}

/// The suite's fixtures as a registry.
fn registry() -> Result<Registry, toolkit_core::RegistryError> {
    Registry::builder()
        .tools(tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_error_handling,
            test_tool_with_progress,
            test_tool_with_logging,
            test_logging_tool,
            test_sampling,
            test_missing_capability,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_streaming_elicitation,
            test_input_required_result_elicitation,
            test_input_required_result_sampling,
            test_input_required_result_request_state,
            test_input_required_result_list_roots,
            test_input_required_result_multiple_inputs,
            test_input_required_result_multi_round,
            test_input_required_result_capabilities,
            test_input_required_result_tampered_state,
            test_trigger_tool_change,
            test_reconnection,
        ])
        .tool(json_schema_2020_12_tool())
        .tool(test_headers())
        .build()
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut address: Option<SocketAddr> = None;
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--http" => match arguments.next().map(|address| address.parse()) {
                Some(Ok(parsed)) => address = Some(parsed),
                _ => {
                    eprintln!(
                        "conformance: --http takes an address such as 127.0.0.1:8080\n{USAGE}"
                    );
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!("conformance: unknown argument `{argument}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(address) = address else {
        eprintln!("conformance: no address\n{USAGE}");
        return ExitCode::from(2);
    };
    let registry = match registry() {
        Ok(registry) => Arc::new(registry),
        Err(error) => {
            eprintln!("conformance: {error}");
            return ExitCode::FAILURE;
        }
    };
    let _ = SERVED.set(Arc::clone(&registry));
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("conformance: cannot listen on {address}: {error}");
            return ExitCode::FAILURE;
        }
    };
    // Port 0 picks a free port: the line names the one taken, for
    // scripts/conformance to read.
    match listener.local_addr() {
        Ok(bound) => eprintln!("serving MCP at http://{bound}/mcp"),
        Err(error) => {
            eprintln!("conformance: {error}");
            return ExitCode::FAILURE;
        }
    }
    let server =
        McpServer::new(registry).identity("toolkit-conformance", env!("CARGO_PKG_VERSION"));
    let server = match with_resources_and_prompts(server) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("conformance: {error}");
            return ExitCode::FAILURE;
        }
    };
    match server.serve_http(listener, &HttpOptions::new()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance: {error}");
            ExitCode::FAILURE
        }
    }
}
