//! The judges must accept the providers' documented examples and reject the
//! mistakes an emitter could make; a judge that cannot fail proves nothing.
//! Each rejection also checks the reason, so a test cannot pass because the
//! judge tripped over something other than the defect under test.

use serde_json::{Value, json};
use toolkit_tests::judges::{anthropic, gemini, gemini_schema};

/// A valid 1x1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Valid base64 for bytes starting with the JPEG signature.
const JPEG_HEADER: &str = "/9j/4AAQ";

#[track_caller]
fn assert_rejects<T: std::fmt::Debug>(verdict: Result<T, String>, reason: &str) {
    match verdict {
        Ok(parsed) => panic!("accepted, expected a rejection for {reason:?}: {parsed:#?}"),
        Err(error) => assert!(
            error.contains(reason),
            "rejected for the wrong reason; expected {reason:?} in {error:?}"
        ),
    }
}

mod anthropic_judge {
    use super::*;
    use anthropic::{
        CacheTtl, ContentBlockParam, ImageMediaType, ImageSource, Role, TextOrBlocks,
        ToolResultContentBlock, check_message, check_user_message,
    };

    fn tool_result_with_image() -> Value {
        json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
            "content": [
                {"type": "text", "text": "Found 2 photos."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
            ]
        }]})
    }

    fn with_result_content(content: Value) -> Value {
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": content}
        ]})
    }

    fn with_image_source(source: Value) -> Value {
        with_result_content(json!([{"type": "image", "source": source}]))
    }

    #[test]
    fn accepts_the_documented_image_result() {
        let message = check_user_message(&tool_result_with_image()).unwrap();
        let TextOrBlocks::Blocks(blocks) = &message.content else {
            panic!("expected blocks");
        };
        let [ContentBlockParam::ToolResult(result)] = blocks.as_slice() else {
            panic!("expected one tool_result: {blocks:?}");
        };
        let Some(TextOrBlocks::Blocks(inner)) = &result.content else {
            panic!("expected block content");
        };
        let [
            ToolResultContentBlock::Text(_),
            ToolResultContentBlock::Image(image),
        ] = inner.as_slice()
        else {
            panic!("expected text then image: {inner:?}");
        };
        assert!(matches!(
            image.source,
            ImageSource::Base64 {
                media_type: ImageMediaType::Png,
                ..
            }
        ));
    }

    #[test]
    fn accepts_the_documented_error_result() {
        let message = check_user_message(&json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": "Error: tag 'vacation' does not exist.",
            "is_error": true
        }]}))
        .unwrap();
        let TextOrBlocks::Blocks(blocks) = &message.content else {
            panic!("expected blocks");
        };
        assert!(matches!(
            &blocks[0],
            ContentBlockParam::ToolResult(result) if result.is_error == Some(true)
        ));
    }

    #[test]
    fn accepts_parallel_results_then_text_and_caching() {
        let message = check_user_message(&json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "12"},
            {"type": "tool_result", "tool_use_id": "toolu_02"},
            {"type": "text", "text": "Both tools ran.",
             "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ]}))
        .unwrap();
        let TextOrBlocks::Blocks(blocks) = &message.content else {
            panic!("expected blocks");
        };
        let ContentBlockParam::Text(text) = &blocks[2] else {
            panic!("expected text last");
        };
        assert_eq!(
            text.cache_control,
            Some(anthropic::CacheControl::Ephemeral {
                ttl: Some(CacheTtl::OneHour)
            })
        );
    }

    #[test]
    fn accepts_plain_text_url_images_and_assistant_tool_use() {
        check_user_message(&json!({"role": "user", "content": "Hello, Claude"})).unwrap();
        check_user_message(&with_image_source(
            json!({"type": "url", "url": "https://example.com/photo.png"}),
        ))
        .unwrap();
        let message = check_message(&json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll search your photos."},
            {"type": "tool_use", "id": "toolu_01", "name": "search_photos",
             "input": {"query": "beach"}}
        ]}))
        .unwrap();
        assert_eq!(message.role, Role::Assistant);
    }

    #[test]
    fn rejects_unknown_fields() {
        let mut message = tool_result_with_image();
        message["content"][0]["name"] = json!("search_photos");
        assert_rejects(check_user_message(&message), "unknown field `name`");

        let mut message = tool_result_with_image();
        message["metadata"] = json!({});
        assert_rejects(check_user_message(&message), "unknown field `metadata`");

        assert_rejects(
            check_user_message(&with_image_source(
                json!({"type": "base64", "media_type": "image/png", "data": PNG, "detail": "high"}),
            )),
            "unknown field `detail`",
        );
    }

    #[test]
    fn rejects_wrong_types_and_block_kinds() {
        assert_rejects(
            check_message(&json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "f", "input": "{\"q\":1}"}
            ]})),
            "expected a map",
        );
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": "true"}
            ]})),
            "expected a boolean",
        );
        assert_rejects(
            check_user_message(&json!({"role": "tool", "content": "42"})),
            "unknown variant `tool`",
        );
        // OpenAI's image part is not an Anthropic block.
        assert_rejects(
            check_user_message(&with_result_content(json!([
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
            ]))),
            "unknown variant `image_url`",
        );
    }

    #[test]
    fn rejects_images_in_the_wrong_place() {
        // The source fields belong under `source`, not on the block.
        assert_rejects(
            check_user_message(&with_result_content(json!([
                {"type": "image", "media_type": "image/png", "data": PNG}
            ]))),
            "expected `source` or `cache_control`",
        );
        // A tool_use is not content a tool result can hold.
        assert_rejects(
            check_user_message(&with_result_content(json!([
                {"type": "tool_use", "id": "toolu_02", "name": "f", "input": {}}
            ]))),
            "unknown variant `tool_use`",
        );
        // A tool result belongs in a user message.
        let mut message = tool_result_with_image();
        message["role"] = json!("assistant");
        assert_rejects(check_message(&message), "belongs in a user message");
        assert_rejects(
            check_user_message(&json!({"role": "assistant", "content": "Hi"})),
            "expected \"user\"",
        );
    }

    #[test]
    fn rejects_a_tool_result_after_a_text_block() {
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": [
                {"type": "text", "text": "Here are the results:"},
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "12"}
            ]})),
            "content[1]: tool_result after another block",
        );
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "12"},
                {"type": "text", "text": "Also:"},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": "13"}
            ]})),
            "content[2]: tool_result after another block",
        );
    }

    #[test]
    fn rejects_empty_text_and_content() {
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": [{"type": "text", "text": ""}]})),
            "content[0]: text is empty",
        );
        assert_rejects(
            check_user_message(&with_result_content(
                json!([{"type": "text", "text": " \n"}]),
            )),
            "content[0].content[0]: text is empty",
        );
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": ""})),
            "text is empty",
        );
        assert_rejects(
            check_user_message(&json!({"role": "user", "content": []})),
            "no blocks",
        );
    }

    #[test]
    fn rejects_bad_base64_and_media_types() {
        let base64 = |data: &str| {
            with_image_source(json!({"type": "base64", "media_type": "image/png", "data": data}))
        };
        for bad in [
            format!("data:image/png;base64,{PNG}"),
            "/9j/4A".to_owned(),
            PNG.replace('/', "_"),
            format!("{PNG}\n"),
            String::new(),
        ] {
            assert_rejects(check_user_message(&base64(&bad)), "source: data is");
        }
        assert_rejects(
            check_user_message(&base64(JPEG_HEADER)),
            "does not start with the signature of image/png",
        );
        assert_rejects(
            check_user_message(&with_image_source(
                json!({"type": "base64", "media_type": "image/bmp", "data": PNG}),
            )),
            "unknown variant `image/bmp`",
        );
    }
}

mod gemini_judge {
    use super::*;
    use gemini::{FunctionResponsePart, PartData, Role, Scheduling, check_content};

    fn documented_multimodal_response() -> Value {
        json!({"role": "user", "parts": [{"functionResponse": {
            "id": "fc_7f3a",
            "name": "search_photos",
            "response": {"output": "Found 2 photos.", "image": {"$ref": "photo_0012.png"}},
            "parts": [{"inlineData": {
                "mimeType": "image/png", "displayName": "photo_0012.png", "data": PNG
            }}]
        }}]})
    }

    fn with_function_response(function_response: Value) -> Value {
        json!({"role": "user", "parts": [{"functionResponse": function_response}]})
    }

    fn with_images(response: Value, names: &[&str]) -> Value {
        let parts: Vec<Value> = names
            .iter()
            .map(|name| json!({"inlineData": {"mimeType": "image/png", "displayName": name, "data": PNG}}))
            .collect();
        with_function_response(json!({"name": "f", "response": response, "parts": parts}))
    }

    #[test]
    fn accepts_the_documented_multimodal_response() {
        let content = check_content(&documented_multimodal_response()).unwrap();
        assert_eq!(content.role, Role::User);
        let PartData::FunctionResponse(response) = &content.parts[0].data else {
            panic!("expected a functionResponse");
        };
        assert_eq!(response.response["output"], "Found 2 photos.");
        let [FunctionResponsePart::InlineData(blob)] = response.parts.as_deref().unwrap() else {
            panic!("expected one inline part");
        };
        assert_eq!(blob.display_name.as_deref(), Some("photo_0012.png"));
    }

    #[test]
    fn accepts_errors_and_the_pre_gemini_3_form() {
        check_content(&with_function_response(json!({
            "name": "search_photos",
            "response": {"error": "Error: tag 'vacation' does not exist."}
        })))
        .unwrap();
        check_content(&with_function_response(json!({
            "name": "search_photos",
            "response": {"output": "Tool execution completed successfully. Content in next message."},
            "willContinue": false,
            "scheduling": "WHEN_IDLE"
        })))
        .unwrap();
        check_content(&json!({"role": "user", "parts": [
            {"text": "Image returned by search_photos:"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}}
        ]}))
        .unwrap();
    }

    #[test]
    fn accepts_model_turns_files_and_nested_refs() {
        let content = check_content(&json!({"role": "model", "parts": [
            {"text": "Let me look."},
            {"functionCall": {"id": "fc_7f3a", "name": "search_photos", "args": {"query": "beach"}},
             "thoughtSignature": "c2lnbmF0dXJl"}
        ]}))
        .unwrap();
        assert_eq!(
            content.parts[1].thought_signature.as_deref(),
            Some("c2lnbmF0dXJl")
        );

        let content = check_content(&with_function_response(json!({
            "name": "fetch_report",
            "response": {"files": [{"report": {"$ref": "report.pdf"}}, {"$ref": "a.png"}]},
            "parts": [
                {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/f", "displayName": "report.pdf"}},
                {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "a.png"}}
            ],
            "scheduling": "SILENT"
        })))
        .unwrap();
        let PartData::FunctionResponse(response) = &content.parts[0].data else {
            panic!("expected a functionResponse");
        };
        assert_eq!(response.scheduling, Some(Scheduling::Silent));
    }

    #[test]
    fn rejects_a_response_that_is_not_an_object() {
        for response in [json!("Found 2 photos."), json!(["a", "b"]), json!(null)] {
            assert_rejects(
                check_content(&with_function_response(
                    json!({"name": "f", "response": response}),
                )),
                "expected a map",
            );
        }
        assert_rejects(
            check_content(&with_function_response(json!({"name": "f"}))),
            "missing field `response`",
        );
    }

    #[test]
    fn rejects_unknown_fields_and_snake_case() {
        let mut content = documented_multimodal_response();
        content["parts"][0]["functionResponse"]["parts"][0]["inlineData"]["mime_type"] =
            json!("image/png");
        assert_rejects(check_content(&content), "unknown field `mime_type`");

        let mut content = documented_multimodal_response();
        content["parts"][0]["functionResponse"]["isError"] = json!(true);
        assert_rejects(check_content(&content), "unknown field `isError`");

        assert_rejects(
            check_content(&json!({"role": "user", "parts": [{"function_response": {}}]})),
            "unknown field `function_response`",
        );
        assert_rejects(
            check_content(&json!({"role": "function", "parts": [{"text": "hi"}]})),
            "unknown variant `function`",
        );
        assert_rejects(
            check_content(&with_function_response(
                json!({"name": "f", "response": {}, "scheduling": "LATER"}),
            )),
            "unknown variant `LATER`",
        );
    }

    #[test]
    fn rejects_images_in_the_wrong_place() {
        // Media beside the function response in the same part: two oneof fields.
        assert_rejects(
            check_content(&json!({"role": "user", "parts": [{
                "functionResponse": {"name": "f", "response": {"output": "ok"}},
                "inlineData": {"mimeType": "image/png", "data": PNG}
            }]})),
            "found 2",
        );
        // Media directly on the function response instead of in its parts.
        assert_rejects(
            check_content(&with_function_response(json!({
                "name": "f", "response": {},
                "inlineData": {"mimeType": "image/png", "data": PNG}
            }))),
            "unknown field `inlineData`",
        );
        // Function response parts hold media only, not text.
        assert_rejects(
            check_content(&with_function_response(
                json!({"name": "f", "response": {}, "parts": [{"text": "caption"}]}),
            )),
            "unknown variant `text`",
        );
        assert_rejects(
            check_content(&json!({"role": "user", "parts": [{}]})),
            "found 0",
        );
    }

    #[test]
    fn rejects_misplaced_calls_and_responses() {
        let mut content = documented_multimodal_response();
        content["role"] = json!("model");
        assert_rejects(
            check_content(&content),
            "functionResponse belongs in a user turn",
        );
        assert_rejects(
            check_content(&json!({"role": "user", "parts": [
                {"functionCall": {"name": "f", "args": {}}}
            ]})),
            "functionCall belongs in a model turn",
        );
        assert_rejects(
            check_content(&json!({"role": "model", "parts": [
                {"functionCall": {"name": "f", "args": "{}"}}
            ]})),
            "expected a map",
        );
    }

    #[test]
    fn rejects_empty_parts_and_text() {
        assert_rejects(
            check_content(&json!({"role": "user", "parts": []})),
            "must not be empty",
        );
        assert_rejects(
            check_content(&json!({"role": "user", "parts": [{"text": ""}]})),
            "parts[0].text: empty",
        );
    }

    #[test]
    fn rejects_dangling_and_miscounted_refs() {
        assert_rejects(
            check_content(&with_images(
                json!({"image": {"$ref": "b.png"}}),
                &["a.png"],
            )),
            "$ref \"b.png\" names no displayName",
        );
        assert_rejects(
            check_content(&with_images(json!({"image": {"$ref": "a.png"}}), &[])),
            "$ref \"a.png\" names no displayName",
        );
        assert_rejects(
            check_content(&with_images(json!({"output": "ok"}), &["a.png"])),
            "\"a.png\" is referenced 0 times",
        );
        assert_rejects(
            check_content(&with_images(
                json!({"first": {"$ref": "a.png"}, "again": [{"$ref": "a.png"}]}),
                &["a.png"],
            )),
            "\"a.png\" is referenced 2 times",
        );
        assert_rejects(
            check_content(&with_images(
                json!({"a": {"$ref": "a.png"}, "b": {"$ref": "a.png"}}),
                &["a.png", "a.png"],
            )),
            "displayName \"a.png\" is not unique",
        );
        assert_rejects(
            check_content(&with_images(
                json!({"image": {"$ref": "a.png", "caption": "x"}}),
                &["a.png"],
            )),
            "a $ref must be",
        );
    }

    #[test]
    fn rejects_bad_base64_and_unsupported_media() {
        let image = |mime: &str, data: &str| {
            with_function_response(json!({
                "name": "f",
                "response": {"image": {"$ref": "a"}},
                "parts": [{"inlineData": {"mimeType": mime, "data": data, "displayName": "a"}}]
            }))
        };
        assert_rejects(
            check_content(&image("image/png", "not base64!")),
            "data is not valid standard base64",
        );
        assert_rejects(
            check_content(&image("image/png", JPEG_HEADER)),
            "does not start with the signature of image/png",
        );
        assert_rejects(
            check_content(&image("image/gif", "R0lGODlhAQABAAAAACw=")),
            "MIME type Some(\"image/gif\") is not one of",
        );
        assert_rejects(
            check_content(&json!({"role": "user", "parts": [
                {"inlineData": {"mimeType": "image/png", "data": format!("data:image/png;base64,{PNG}")}}
            ]})),
            "parts[0].inlineData: data is not valid standard base64",
        );
    }
}

#[test]
fn gemini_schema_judge_accepts_the_subset() {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The query."},
            "order": {"type": "string", "format": "enum", "enum": ["newest", "oldest"]},
            "limit": {"type": "integer", "nullable": true, "minimum": 0}
        },
        "required": ["query", "order"],
        "propertyOrdering": ["query", "order", "limit"]
    });
    assert_eq!(gemini_schema::problems(&schema), Vec::<String>::new());
}

#[test]
fn gemini_schema_judge_rejects_what_the_api_refuses() {
    let cases = [
        (
            json!({"type": "object", "properties": {}, "propertyOrdering": [], "additionalProperties": false}),
            "keyword additionalProperties",
        ),
        (json!({"type": ["string", "null"]}), "type"),
        (
            json!({"type": "string", "enum": ["a"]}),
            "enum without format enum",
        ),
        (
            json!({"type": "integer", "format": "enum", "enum": [1, 2]}),
            "enum of other than strings",
        ),
        (
            json!({"anyOf": [{"type": "string"}], "description": "x"}),
            "anyOf is not alone",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            "propertyOrdering",
        ),
        (
            json!({"type": "object", "properties": {"a": {"const": 1}}, "propertyOrdering": ["a"]}),
            "properties.a: keyword const",
        ),
    ];
    for (schema, expected) in cases {
        let problems = gemini_schema::problems(&schema);
        assert!(
            problems.iter().any(|problem| problem.contains(expected)),
            "{schema}: expected a problem with {expected:?}, got {problems:?}"
        );
    }
}
