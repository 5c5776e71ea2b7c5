//! Against a real model: llama.cpp's server with Gemma 3 270M, started here
//! on 127.0.0.1 (see support/llama.rs). The calls the loop runs are the
//! model's own, truncated ones included.

#[path = "support/llama.rs"]
mod llama;

use futures_util::StreamExt;
use serde_json::json;
use toolkit_agent::{
    Agent, AnswerSchema, Conversation, Event, Limits, Model, ModelError, Session, Settings,
    StopReason, ToolChoice,
};
use toolkit_core::{Provider, Registry, tools};

/// A small answer for structured output.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Conversion {
    /// The converted value.
    value: f64,
    /// The unit it is in.
    unit: Unit,
    /// Whether the value is rounded (optional, so that the schema holds a
    /// nullable field; not free text, which a small model may write on
    /// until its output limit cuts the JSON short).
    rounded: Option<bool>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// A conversation with the example tools, short answers.
fn fresh() -> Conversation {
    let registry = toolkit_example_tools::registry().unwrap();
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_instructions("You are a careful assistant. Use the tools.");
    conversation.set_tools(&registry).unwrap();
    conversation.set("max_tokens", json!(48));
    conversation
}

#[tokio::test(flavor = "multi_thread")]
async fn real_model() {
    let Some(server) = llama::start(8192) else {
        return;
    };
    let model = server.model();
    let calling = server.calling_model();
    let registry = std::sync::Arc::new(toolkit_example_tools::registry().unwrap());

    three_turns(&server).await;

    // Every tool choice is accepted.
    for choice in [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool("convert_temperature".into()),
    ] {
        let mut conversation = fresh();
        conversation.set_tool_choice(choice.clone());
        conversation.set_settings(Settings::new().parallel_calls(false));
        conversation.push_user("Convert 20 degrees celsius to fahrenheit.");
        let turn = model.complete(&conversation.request()).await;
        assert!(turn.is_ok(), "{choice:?}: {turn:?}");
    }

    // Typed settings reach the server in Chat Completions' current fields:
    // `max_completion_tokens` bounds the answer, `stop` ends it.
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_settings(
        Settings::new()
            .max_output_tokens(5)
            .seed(1)
            .temperature(0.0),
    );
    conversation.push_user("Write a long story about a lighthouse keeper.");
    let turn = model.complete(&conversation.request()).await.unwrap();
    let usage = turn.usage.unwrap();
    assert!(usage.output_tokens <= 5, "{usage:?}: {}", turn.text);
    assert_eq!(turn.finish_reason.as_deref(), Some("length"), "{turn:?}");

    // Structured output: `response_format` with the schema of a small
    // struct; llama-server constrains decoding to it, and the answer reads
    // into the struct.
    let schema = AnswerSchema::of::<Conversion>().unwrap();
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_instructions("Answer in JSON.");
    conversation.set_settings(Settings::new().max_output_tokens(200));
    conversation.set_answer_schema(Some(schema.clone()));
    conversation.push_user("Convert 20 degrees celsius to fahrenheit.");
    let request = conversation.request();
    assert_eq!(request["response_format"]["type"], "json_schema");
    let turn = model.complete(&request).await.unwrap();
    let conversion: Conversion = schema
        .read(&turn.text)
        .unwrap_or_else(|error| panic!("{error}\n{}", turn.text));
    assert!(conversion.value.is_finite(), "{conversion:?}");

    // The same through an agent's typed run, tools offered beside the
    // schema: the value comes back as the struct.
    let agent = Agent::builder(model.clone(), Registry::builder().build().unwrap())
        .instructions("Answer in JSON.")
        .settings(Settings::new().max_output_tokens(200))
        .build()
        .unwrap();
    let typed = agent
        .run("Convert 20 degrees celsius to fahrenheit.")
        .answer::<Conversion>()
        .await
        .unwrap();
    let conversion = typed.value.expect("a value that fits");
    assert!(conversion.value.is_finite(), "{conversion:?}");
    assert_eq!(typed.outcome.stop, StopReason::Answered);

    // The model's own call, cut off by `max_tokens` mid-arguments: kept,
    // flagged, answered with an error that quotes it; the next request
    // (tool message, then two user messages) is accepted, because the
    // malformed call is echoed as `{}`.
    let mut conversation = fresh();
    conversation.set_tool_choice(ToolChoice::Required);
    conversation.set("max_tokens", json!(14));
    conversation.push_user("Convert 20 degrees celsius to fahrenheit.");
    let turn = calling.complete(&conversation.request()).await.unwrap();
    assert!(turn.has_calls(), "{turn:?}");
    let (call, info) = (&turn.calls[0], &turn.call_info[0]);
    assert!(info.malformed.is_some(), "cut off mid-arguments: {call:?}");
    assert!(call.is_malformed(), "{call:?}");
    let written = call.arguments_text().unwrap().to_owned();
    conversation.push_turn(&turn);
    let outcome = registry.dispatch_turn(&turn.calls).await;
    let error = outcome.results[0].result.to_text();
    assert!(outcome.results[0].result.is_error(), "{error}");
    conversation.push_results(&turn, outcome.results);
    conversation.push_user("Thanks.");
    conversation.push_user("Now answer in one sentence.");
    let request = conversation.request();
    let reply = model.complete(&request).await;
    assert!(reply.is_ok(), "{reply:?}\n{request:#}");

    // The same conversation with the model's truncated text echoed
    // verbatim is what the server refuses: the sanitising above is what
    // keeps a run going.
    let mut verbatim = request.clone();
    let messages = verbatim["messages"].as_array_mut().unwrap();
    let assistant = messages
        .iter_mut()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assistant["tool_calls"][0]["function"]["arguments"] = json!(written);
    match model.complete(&verbatim).await {
        Err(ModelError::Status { status, body, .. }) => {
            assert!(status >= 400, "{status}: {body}");
        }
        other => panic!("the server took a malformed echoed call: {other:?}"),
    }

    // Streaming gives a turn, and reports progress.
    let mut conversation = fresh();
    conversation.push_user("Say hello.");
    let mut events = 0;
    let mut progress = |_: &toolkit_core::response::Accumulator| events += 1;
    let streamed = model
        .stream(&conversation.request(), &mut progress)
        .await
        .unwrap();
    assert!(events > 1, "{events} events");
    assert!(!streamed.text.is_empty() || streamed.has_calls());

    // A streaming run hands the host the model's text as it arrives: in
    // several pieces, which make up the step's whole text.
    let agent = Agent::builder(model.clone(), registry.clone())
        .instructions("Answer in one short sentence.")
        .tool_choice(ToolChoice::None)
        .streaming(true)
        .configure(|conversation| conversation.set("max_tokens", json!(32)))
        .build()
        .unwrap();
    let (run, events) = agent.run("Say hello to Ada.").events();
    let (outcome, events) = tokio::join!(run, events.collect::<Vec<Event>>());
    let outcome = outcome.unwrap();
    let log: Vec<String> = events.iter().map(|event| format!("{event:?}")).collect();
    let log = log.join("\n");
    assert!(
        matches!(outcome.stop, StopReason::Answered | StopReason::Truncated),
        "{:?}\n{log}",
        outcome.stop
    );
    let pieces: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::TextDelta { step: 1, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = events.iter().find_map(|event| match event {
        Event::Text { step: 1, text } => Some(text.as_str()),
        _ => None,
    });
    assert!(pieces.len() > 1, "{log}");
    assert_eq!(Some(pieces.concat().as_str()), text, "{log}");
    assert_eq!(outcome.answer.as_deref(), text);

    // Runs driven by the model's own calls: every answer cut short (each
    // call malformed, answered with an error, the run going on to the step
    // limit), then room enough for whole calls that run (with the tools
    // whose arguments are short: given `search`, the model writes
    // arguments longer than any budget).
    let short = std::sync::Arc::new(
        Registry::builder()
            .tools(tools![
                toolkit_example_tools::convert_temperature,
                toolkit_example_tools::word_count,
                toolkit_example_tools::done
            ])
            .build()
            .unwrap(),
    );
    for (max_tokens, whole_calls) in [(14, false), (128, true)] {
        let tools = if whole_calls { &short } else { &registry };
        let agent = Agent::builder(calling.clone(), tools.clone())
            .instructions("Use the tools, then call done.")
            .tool_choice(ToolChoice::Required)
            .limits(Limits::default().max_steps(3).max_failures(10))
            .configure(move |conversation| conversation.set("max_tokens", json!(max_tokens)))
            .build()
            .unwrap();
        let (run, events) = agent
            .run("Convert 20 C to F, then count the words of 'a b c'.")
            .events();
        let (outcome, events) = tokio::join!(run, events.collect::<Vec<Event>>());
        let outcome = outcome.unwrap();
        let log: Vec<String> = events.iter().map(Event::to_string).collect();
        let log = log.join("\n");
        assert!(
            matches!(outcome.stop, StopReason::StepLimit | StopReason::Done),
            "every request was accepted: {:?}\n{log}",
            outcome.stop
        );
        assert!(outcome.usage.input_tokens > 0);
        let calls: Vec<(&Option<String>, &str)> = events
            .iter()
            .filter_map(|event| match event {
                Event::Call {
                    malformed, call, ..
                } => Some((malformed, call.name.as_str())),
                _ => None,
            })
            .collect();
        assert!(calls.len() >= outcome.steps, "a call every step\n{log}");
        let results: Vec<bool> = events
            .iter()
            .filter_map(|event| match event {
                Event::Result { is_error, .. } => Some(*is_error),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), calls.len(), "every call answered\n{log}");
        if whole_calls {
            assert!(
                results.iter().any(|is_error| !is_error),
                "a call of the model's ran\n{log}"
            );
        } else {
            assert_eq!(outcome.steps, 3, "{log}");
            assert!(
                calls.iter().all(|(malformed, _)| malformed.is_some()),
                "{log}"
            );
            assert!(results.iter().all(|is_error| *is_error), "{log}");
        }
    }
}

/// A chat of three turns, saved as JSON and loaded back between turns:
/// each request continues the one before, and the server accepts each.
async fn three_turns(server: &llama::Server) {
    let agent = Agent::builder(server.model(), toolkit_example_tools::registry().unwrap())
        .instructions("Answer in one short sentence.")
        .tool_choice(ToolChoice::None)
        .configure(|conversation| conversation.set("max_tokens", json!(32)))
        .build()
        .unwrap();
    let mut saved = agent.session().to_json().unwrap();
    let mut answers = Vec::new();
    for line in ["My name is Ada.", "I like green tea.", "What is my name?"] {
        let mut session = Session::from_json(&saved).unwrap();
        let outcome = agent.send(&mut session, line).await.unwrap();
        assert!(
            matches!(outcome.stop, StopReason::Answered | StopReason::Truncated),
            "{:?}",
            outcome.stop
        );
        answers.push(outcome.answer.unwrap_or_default());
        saved = session.to_json().unwrap();
    }
    let session = Session::from_json(&saved).unwrap();
    let request = session.conversation().request();
    let messages = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    let said: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(said, answers);
    assert!(
        request["tools"].is_array(),
        "the tools went through JSON too"
    );
}
