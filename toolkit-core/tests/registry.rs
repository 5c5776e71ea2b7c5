//! The registry: building it, and dispatch that never panics and never loses
//! an error.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_core::{
    CallContext, CallError, CallOutcome, Problem, Provider, Registry, ToolCall, ToolResult, tool,
    tools,
};

/// A nested argument.
#[derive(Deserialize, JsonSchema)]
struct Window {
    /// Where it starts.
    start: Slot,
}

/// A time.
#[derive(Deserialize, JsonSchema)]
struct Slot {
    /// Minutes past midnight.
    minutes: u16,
}

/// Adds two numbers.
#[tool]
async fn add(
    /// The first number.
    a: i64,
    /// The second number, 1 if left out.
    b: Option<i64>,
) -> String {
    (a + b.unwrap_or(1)).to_string()
}

/// Books a window.
#[tool]
fn book(
    /// The window.
    window: Window,
) -> String {
    format!("booked at {}", window.start.minutes)
}

/// Takes no arguments.
#[tool]
fn ping() -> &'static str {
    "pong"
}

/// Panics, as buggy code does.
#[tool]
async fn explode() -> String {
    panic!("the tool hit a bug")
}

/// Panics in a sync tool.
#[tool]
fn explode_sync() -> String {
    let empty: Vec<u8> = Vec::new();
    empty[3].to_string()
}

/// Waits forever, unless cancelled.
#[tool]
async fn hang(#[tool(context)] call: CallContext) -> String {
    call.cancellation().cancelled().await;
    "cancelled".into()
}

/// Sleeps on its thread.
#[tool]
fn slow_sync(
    /// How long, in milliseconds.
    millis: u64,
) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    format!("slept {millis}ms")
}

/// Says which call it answers.
#[tool]
async fn whoami(#[tool(context)] call: CallContext) -> String {
    format!("{} {}", call.tool_name(), call.call_id())
}

/// Counts calls in host state.
#[tool]
async fn count(#[tool(state)] counter: Arc<AtomicUsize>) -> String {
    (counter.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

/// Takes a free-form map, which OpenAI strict mode cannot express.
#[tool]
async fn tag(
    /// Labels by name.
    labels: HashMap<String, String>,
) -> usize {
    labels.len()
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![add, book, ping, explode, explode_sync, whoami])
        .build()
        .unwrap()
}

fn error_text(outcome: &toolkit_core::CallOutcome) -> &str {
    assert!(outcome.result.is_error(), "{outcome:?}");
    outcome.result.error_message().unwrap()
}

#[tokio::test]
async fn calls_with_text_or_value_arguments() {
    let registry = registry();
    assert_eq!(
        registry
            .dispatch(("add", r#"{"a": 2, "b": 3}"#))
            .await
            .result
            .as_text(),
        Ok("5")
    );
    assert_eq!(
        registry
            .dispatch(("add", &json!({"a": 2})))
            .await
            .result
            .as_text(),
        Ok("3")
    );
    assert_eq!(
        registry.dispatch(("ping", "")).await.result.as_text(),
        Ok("pong")
    );
    assert_eq!(
        registry
            .dispatch(("ping", &Value::Null))
            .await
            .result
            .as_text(),
        Ok("pong")
    );
    let outcome = registry
        .dispatch(("book", r#"{"window": {"start": {"minutes": 90}}}"#))
        .await;
    assert_eq!(outcome.result.as_text(), Ok("booked at 90"));
    assert!(outcome.error.is_none());
}

#[tokio::test]
async fn malformed_json_is_an_error_result() {
    let outcome = registry().dispatch(("add", r#"{"a": 2,"#)).await;
    assert!(
        error_text(&outcome).contains("not valid JSON"),
        "{outcome:?}"
    );
    assert!(matches!(
        outcome.error,
        Some(CallError::InvalidArguments { .. })
    ));
}

#[tokio::test]
async fn field_errors_name_the_path_the_expected_type_and_what_came() {
    let registry = registry();
    let missing = registry.dispatch(("add", r#"{"b": 1}"#)).await;
    assert_eq!(
        error_text(&missing),
        "invalid arguments for `add`: at `a`: missing required field: expected an integer"
    );

    let unknown = registry
        .dispatch(("add", r#"{"a": 1, "b": 2, "c": 2}"#))
        .await;
    assert_eq!(
        error_text(&unknown),
        "invalid arguments for `add`: at `c`: unknown field; expected one of `a`, `b`"
    );

    let mistyped = registry.dispatch(("add", r#"{"a": "two", "b": 2}"#)).await;
    assert_eq!(
        error_text(&mistyped),
        "invalid arguments for `add`: at `a`: expected an integer, got \"two\""
    );
    let Some(CallError::InvalidArguments { path, .. }) = &mistyped.error else {
        panic!("{mistyped:?}")
    };
    assert_eq!(path.as_deref(), Some("a"));

    let nested = registry
        .dispatch(("book", &json!({"window": {"start": {"minutes": -5}}})))
        .await;
    assert!(
        error_text(&nested).contains("at `window.start.minutes`: expected at least 0, got -5"),
        "{nested:?}"
    );

    // Every problem at once, each with its path.
    let several = registry.dispatch(("add", r#"{"a": "two", "c": 3}"#)).await;
    assert_eq!(
        error_text(&several),
        "invalid arguments for `add`: 2 problems: at `a`: expected an integer, got \"two\"; \
         at `c`: unknown field; expected one of `a`, `b`"
    );
}

#[tokio::test]
async fn unknown_tools_list_the_closest_names() {
    let outcome = registry().dispatch(("addd", "{}")).await;
    assert_eq!(
        error_text(&outcome),
        "there is no tool named `addd`; did you mean `add`?"
    );
    let Some(CallError::UnknownTool { suggestions, .. }) = &outcome.error else {
        panic!("{outcome:?}")
    };
    assert_eq!(suggestions, &["add"]);
}

#[tokio::test]
async fn a_panicking_tool_is_caught_and_the_registry_keeps_working() {
    let registry = registry();
    for name in ["explode", "explode_sync"] {
        let outcome = registry.dispatch((name, "{}")).await;
        assert!(
            error_text(&outcome).contains("failed unexpectedly"),
            "{outcome:?}"
        );
        assert!(matches!(outcome.error, Some(CallError::Panicked { .. })));
    }
    assert!(error_text(&registry.dispatch(("explode", "{}")).await).contains("the tool hit a bug"));
    assert_eq!(
        registry
            .dispatch(("add", r#"{"a": 1}"#))
            .await
            .result
            .as_text(),
        Ok("2")
    );
}

#[tokio::test]
async fn a_tool_past_its_time_limit_is_stopped() {
    let registry = Registry::builder()
        .tools(tools![hang, slow_sync, add])
        .timeout(Duration::from_secs(30))
        .tool_timeout("hang", Duration::from_millis(50))
        .tool_timeout("slow_sync", Duration::from_millis(50))
        .build()
        .unwrap();
    let started = Instant::now();
    let outcome = registry.dispatch(("hang", "{}")).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(outcome.error, Some(CallError::TimedOut { .. })),
        "{outcome:?}"
    );
    assert!(
        error_text(&outcome).contains("did not finish within 0.1s"),
        "{outcome:?}"
    );

    let outcome = registry.dispatch(("slow_sync", r#"{"millis": 500}"#)).await;
    assert!(
        matches!(outcome.error, Some(CallError::TimedOut { .. })),
        "{outcome:?}"
    );
    assert_eq!(
        registry
            .dispatch(("add", r#"{"a": 1}"#))
            .await
            .result
            .as_text(),
        Ok("2")
    );
}

#[tokio::test]
async fn cancellation_reaches_the_tool() {
    let registry = Registry::builder().tools(tools![hang]).build().unwrap();
    let cancellation = toolkit_core::Cancellation::new();
    let call = ToolCall::new("c1", "hang", json!({}));
    let (outcome, ()) = tokio::join!(
        registry.dispatch(&call).cancellation(&cancellation),
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancellation.cancel();
        }
    );
    assert_eq!(outcome.result.as_text(), Ok("cancelled"));
}

#[tokio::test]
async fn hidden_parameters_get_state_and_context() {
    let counter = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tools(tools![count, whoami])
        .state(Arc::clone(&counter))
        .build()
        .unwrap();
    assert_eq!(
        registry.dispatch(("count", "{}")).await.result.as_text(),
        Ok("1")
    );
    assert_eq!(
        registry.dispatch(("count", "{}")).await.result.as_text(),
        Ok("2")
    );
    assert_eq!(counter.load(Ordering::SeqCst), 2);

    let call = ToolCall::new("call_42", "whoami", json!({}));
    let outcome = registry.dispatch(&call).await;
    assert_eq!(outcome.result.as_text(), Ok("whoami call_42"));

    // Hidden parameters are not in the schema.
    let schema = <count as toolkit_core::Tool>::definition()
        .schema()
        .canonical()
        .unwrap();
    assert_eq!(
        schema,
        r#"{"type":"object","properties":{},"additionalProperties":false}"#
    );
}

#[test]
fn missing_state_fails_the_build() {
    let error = Registry::builder()
        .tools(tools![count])
        .build()
        .unwrap_err();
    assert_eq!(
        error.problems(),
        [Problem::MissingState {
            tool: "count".to_owned(),
            type_name: "Arc<AtomicUsize>",
        }]
    );
    assert!(error.to_string().contains("provide it with `.state(...)`"));
}

mod elsewhere {
    use toolkit_core::tool;

    /// Another tool called `add`.
    #[tool(name = "add")]
    pub async fn plus(
        /// A number.
        a: i64,
    ) -> String {
        a.to_string()
    }
}

#[test]
fn duplicate_names_are_an_error_not_an_overwrite() {
    let error = Registry::builder()
        .tools(tools![add, elsewhere::plus])
        .build()
        .unwrap_err();
    let [
        Problem::Duplicate {
            name,
            first,
            second,
        },
    ] = error.problems()
    else {
        panic!("{error}")
    };
    assert_eq!(*name, "add");
    // The two functions, not just their modules: `plus` is the one to find.
    assert_eq!(*first, "registry::add");
    assert_eq!(*second, "registry::elsewhere::plus");
    assert!(
        error
            .to_string()
            .contains("`registry::add` and `registry::elsewhere::plus`"),
        "{error}"
    );

    // The same definition twice is one tool.
    let registry = Registry::builder().tools(tools![add, add]).build().unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["add"]);
}

#[test]
fn every_problem_is_reported_at_once() {
    let error = Registry::builder()
        .tools(tools![add, count])
        .exclude(["ad"])
        .tool_timeout("nope", Duration::from_secs(1))
        .build()
        .unwrap_err();
    assert_eq!(error.problems().len(), 3, "{error}");
    let text = error.to_string();
    assert!(text.starts_with("3 problems:"), "{text}");
    assert!(
        text.contains("no tool is named `ad`; did you mean `add`?"),
        "{text}"
    );
}

#[tokio::test]
async fn excluded_and_disabled_tools() {
    let registry = Registry::builder()
        .tools(tools![add, ping, book])
        .exclude(["book"])
        .build()
        .unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["add", "ping"]);
    assert!(matches!(
        registry.dispatch(("book", "{}")).await.error,
        Some(CallError::UnknownTool { .. })
    ));

    assert!(registry.set_enabled("ping", false));
    assert!(!registry.is_enabled("ping"));
    let outcome = registry.dispatch(("ping", "{}")).await;
    assert_eq!(error_text(&outcome), "the tool `ping` is disabled");
    assert_eq!(registry.tool_list(Provider::OpenAi).unwrap().len(), 1);
    assert!(registry.set_enabled("ping", true));
    assert_eq!(
        registry.dispatch(("ping", "{}")).await.result.as_text(),
        Ok("pong")
    );
    assert!(!registry.set_enabled("nope", true));
}

#[tokio::test(flavor = "current_thread")]
async fn a_turn_runs_concurrently_and_answers_in_call_order() {
    let registry = Registry::builder()
        .tools(tools![slow_sync, add, whoami, explode])
        .build()
        .unwrap();
    let calls = [
        ToolCall::new("c1", "slow_sync", json!({"millis": 300})),
        ToolCall::new("c2", "add", json!("{\"a\": 41}")),
        ToolCall::new("c3", "whoami", json!({})),
        ToolCall::new("c4", "explode", json!({})),
        ToolCall::new("c5", "nope", json!({})),
    ];
    let started = Instant::now();
    let turn = registry.dispatch_turn(&calls).await;
    let ids: Vec<&str> = turn.results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"]);
    assert_eq!(turn.results[0].result.as_text(), Ok("slept 300ms"));
    assert_eq!(turn.results[1].result.as_text(), Ok("42"));
    assert_eq!(turn.results[2].result.as_text(), Ok("whoami c3"));
    assert!(turn.results[3].result.is_error());
    let failed: Vec<usize> = turn.errors.iter().map(|(i, _)| *i).collect();
    assert_eq!(failed, [3, 4]);
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// Waits at a barrier both calls of a turn must reach.
#[tool]
async fn meet(#[tool(state)] barrier: Arc<tokio::sync::Barrier>) -> String {
    barrier.wait().await;
    "met".into()
}

#[tokio::test(flavor = "current_thread")]
async fn async_calls_of_a_turn_overlap() {
    // Two calls that each wait for the other can only finish if they run
    // at the same time.
    let registry = Registry::builder()
        .tools(tools![meet])
        .state(Arc::new(tokio::sync::Barrier::new(2)))
        .build()
        .unwrap();
    let calls = [
        ToolCall::new("a", "meet", json!({})),
        ToolCall::new("b", "meet", json!({})),
    ];
    let turn = tokio::time::timeout(Duration::from_secs(10), registry.dispatch_turn(&calls))
        .await
        .expect("the calls ran one after the other");
    assert!(turn.results.iter().all(|r| r.result.as_text() == Ok("met")));
}

/// Records when it ran.
#[tool]
async fn stamp(#[tool(state)] stamps: Arc<std::sync::Mutex<Vec<Instant>>>) -> String {
    stamps.lock().unwrap().push(Instant::now());
    "stamped".into()
}

#[tokio::test(flavor = "current_thread")]
async fn a_sync_tool_does_not_block_the_runtime() {
    // On a single-threaded runtime, an async call finishes while a sync call
    // sleeps only if the sync call runs off the runtime's thread.
    let stamps: Arc<std::sync::Mutex<Vec<Instant>>> = Arc::default();
    let registry = Registry::builder()
        .tools(tools![slow_sync, stamp])
        .state(Arc::clone(&stamps))
        .build()
        .unwrap();
    let started = Instant::now();
    let calls = [
        ToolCall::new("a", "slow_sync", json!({"millis": 3000})),
        ToolCall::new("b", "stamp", json!({})),
    ];
    registry.dispatch_turn(&calls).await;
    let stamped = stamps.lock().unwrap()[0];
    // Long before the sleeping tool is done (the margin is for a loaded
    // machine; a blocked runtime would stamp after 3 s).
    assert!(stamped.duration_since(started) < Duration::from_millis(2500));
}

#[test]
fn strict_mode_problems_are_caught_when_the_registry_is_built() {
    let error = Registry::builder()
        .tools(tools![add, tag])
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap_err();
    let [
        Problem::Provider {
            tool,
            provider,
            reason,
        },
    ] = error.problems()
    else {
        panic!("{error}")
    };
    assert_eq!((tool.as_str(), *provider), ("tag", Provider::OpenAiStrict));
    assert!(reason.contains("labels"), "{reason}");

    // Without the requirement, the list for strict mode names the tool.
    let registry = Registry::builder().tools(tools![add, tag]).build().unwrap();
    let error = registry.tool_list(Provider::OpenAiStrict).unwrap_err();
    assert_eq!(error.tools[0].0, "tag");
    // Responses says `strict: false` for it, `true` for the others.
    let responses = registry
        .tool_list(Provider::OpenAiResponses)
        .unwrap()
        .to_value();
    assert_eq!(responses[0]["strict"], true);
    assert_eq!(responses[1]["strict"], false);
}

#[tokio::test]
async fn action_model() {
    let registry = registry();
    let schema: Value = serde_json::from_str(&registry.action_schema().unwrap()).unwrap();
    assert_eq!(schema["maxProperties"], 1);
    assert_eq!(
        schema["properties"]["add"]["description"],
        "Adds two numbers."
    );
    assert_eq!(
        schema["properties"]["add"]["properties"]["a"]["type"],
        "integer"
    );
    let action = json!({"add": {"a": 1, "b": 2}});
    let outcome = registry.dispatch(registry.action(&action).unwrap()).await;
    assert_eq!(outcome.result.as_text(), Ok("3"));
    for bad in [
        json!({}),
        json!({"add": {}, "ping": {}}),
        json!([1]),
        json!("add"),
    ] {
        let error = registry.action(&bad).unwrap_err();
        assert!(matches!(error, CallError::InvalidAction { .. }), "{bad}");
        let outcome = CallOutcome::failed(error);
        assert!(error_text(&outcome).contains("exactly one key"));
    }
}

#[test]
fn plain_text_description() {
    let text = registry().describe();
    assert!(
        text.contains(
            "add(a: integer, b?: integer)\n  Adds two numbers.\n  - a: The first number."
        ),
        "{text}"
    );
    assert!(text.contains("ping()\n  Takes no arguments."), "{text}");
}

/// Which messages to search.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filters {
    /// Sender's address.
    from: String,
    /// Only these folders.
    folders: Option<Vec<Folder>>,
    /// When the message arrived.
    window: Option<Window>,
}

/// A mail folder.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Folder {
    Inbox,
    Archive,
}

/// Searches the mailbox.
#[tool]
fn search_mail(
    /// What to look for.
    filters: Filters,
    /// Free-form labels.
    labels: HashMap<String, String>,
) -> String {
    let _ = (filters, labels);
    String::new()
}

#[test]
fn plain_text_description_shows_what_an_object_holds() {
    let registry = Registry::builder()
        .tools(tools![search_mail])
        .build()
        .unwrap();
    let text = registry.describe();
    // Not `filters: object`: a model reading only this text must know the
    // fields, down through `$ref`s, nullable types and arrays of enums.
    assert!(
        text.contains(
            r#"search_mail(filters: {from: string, folders?: ("inbox" | "archive")[], window?: {start: {minutes: integer}}}, labels: {string: string})"#
        ),
        "{text}"
    );
}

/// Moves the cursor.
#[tool]
fn move_to(
    /// Where to, as `[x, y]`.
    point: (u16, u16),
    /// A label and its colour.
    label: Option<(String, Folder)>,
) -> String {
    let _ = (point, label);
    String::new()
}

#[test]
fn plain_text_description_shows_each_position_of_a_tuple() {
    let registry = Registry::builder().tools(tools![move_to]).build().unwrap();
    let text = registry.describe();
    assert!(
        text.contains(
            r#"move_to(point: [integer, integer], label?: [string, "inbox" | "archive"])"#
        ),
        "{text}"
    );
}

/// Ends the task.
#[tool]
fn done() -> ToolResult {
    ToolResult::text("done")
        .with_done(true)
        .with_memory("Finished")
        .with_attribute("elapsed_ms", 3)
}

#[tokio::test]
async fn a_returned_tool_result_keeps_every_field() {
    let registry = Registry::builder().tools(tools![done]).build().unwrap();
    let result = registry.dispatch(("done", "{}")).await.result;
    assert_eq!(result.success(), Some(true));
    assert_eq!(result.memory(), Some("Finished"));
    assert_eq!(result.attributes()["elapsed_ms"], 3);
}

/// Options with a default.
#[derive(Deserialize, JsonSchema)]
struct Options {
    /// Say more.
    #[serde(default)]
    verbose: bool,
}

/// Reports its options.
#[tool]
async fn report(
    /// How to report.
    options: Options,
) -> String {
    format!("verbose: {}", options.verbose)
}

#[tokio::test]
async fn null_for_a_defaulted_field_means_absent() {
    // Strict-mode schemas make optional fields nullable, so models send null.
    let schema = <report as toolkit_core::Tool>::definition()
        .schema()
        .lowered(Provider::OpenAiStrict)
        .unwrap();
    assert!(schema.contains(r#""type":["boolean","null"]"#), "{schema}");
    let registry = Registry::builder().tools(tools![report]).build().unwrap();
    for arguments in [r#"{"options": {"verbose": null}}"#, r#"{"options": {}}"#] {
        assert_eq!(
            registry
                .dispatch(("report", arguments))
                .await
                .result
                .as_text(),
            Ok("verbose: false"),
            "{arguments}"
        );
    }
    let outcome = registry
        .dispatch(("report", r#"{"options": {"verbose": "yes"}}"#))
        .await;
    assert!(
        error_text(&outcome).contains("at `options.verbose`"),
        "{outcome:?}"
    );
}

#[test]
fn the_global_catalogue_holds_every_tool_of_the_program() {
    // By module: only `elsewhere`'s tools.
    let module = concat!(module_path!(), "::elsewhere");
    let registry = Registry::builder()
        .catalogue_module(module)
        .build()
        .unwrap();
    let tools: Vec<_> = registry
        .tools()
        .iter()
        .map(|t| (t.name().to_owned(), t.origin().to_string()))
        .collect();
    assert_eq!(tools, [("add".to_owned(), format!("{module}::plus"))]);

    // By name, in module-path then name order.
    let registry = Registry::builder()
        .catalogue_names(["ping", "done"])
        .build()
        .unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["done", "ping"]);

    let error = Registry::builder()
        .catalogue_names(["pong"])
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains("no tool is named `pong`"),
        "{error}"
    );

    // Everything: this file's tools, without the crate's own ready tools,
    // which stay out of the catalogue. Two `add`s clash.
    let error = Registry::builder().catalogue().build().unwrap_err();
    assert!(
        error
            .problems()
            .iter()
            .any(|p| matches!(p, Problem::Duplicate { name, .. } if name == "add")),
        "{error}"
    );
    let all = Registry::builder()
        .catalogue()
        .exclude(["add"])
        .state(Arc::new(AtomicUsize::new(0)))
        .state(Arc::new(tokio::sync::Barrier::new(1)))
        .state(Arc::new(std::sync::Mutex::new(Vec::<Instant>::new())))
        .build();
    // `exclude` leaves out both `add`s; everything else builds.
    let all = all.unwrap();
    let names: Vec<String> = all.names().collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert!(
        names.contains(&"ping") && names.contains(&"whoami"),
        "{names:?}"
    );
    assert!(!names.contains(&"read_output"), "{names:?}");
}

/// Every tool of this file keeps the property of schema and dispatch
/// agreement (`toolkit_tests::agreement`); the long runs are in
/// `schema_agreement.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_here_accepts_exactly_what_its_schemas_say() {
    // `slow_sync` sleeps as long as it is told, on a thread no time limit
    // stops: its schema is a plain `u64`, which the corpus covers.
    let all = Registry::builder()
        .catalogue()
        .exclude(["add", "slow_sync"])
        .tools(tools![add])
        .state(Arc::new(AtomicUsize::new(0)))
        .state(Arc::new(tokio::sync::Barrier::new(1)))
        .state(Arc::new(std::sync::Mutex::new(Vec::<Instant>::new())))
        .timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let report = toolkit_tests::agreement::check_registry(&all, 0x5eed_0003, 3).await;
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert!(report.accepted > 0 && report.refused > 0, "{report:?}");
}
