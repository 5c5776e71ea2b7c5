//! Tool search on a catalog of 1,223 real tools (GitHub's REST API, from
//! the npm package `@octokit/openapi`: tests/fixtures/tool_catalog/).

use std::collections::HashSet;

use serde_json::{Value, json};
use toolkit_agent::{
    Agent, Conversation, HttpModel, NativeSearch, RetryPolicy, TOOL_SEARCH_TOOL, ToolChoice,
    ToolSearch,
};
use toolkit_core::search::ToolIndex;
use toolkit_core::{CallContext, Provider, Registry, ToolDef, name};
use toolkit_tests::http::{Reply, Request, TestServer};
use toolkit_tests::judges::{anthropic_request, gemini_request};

const CATALOG: &str = include_str!("fixtures/tool_catalog/github-rest.json");
const REQUESTS: &str = include_str!("fixtures/tool_catalog/requests.json");

/// The catalog's tools as run-time tools, each answering with its name.
fn catalog(deferred: bool) -> Vec<ToolDef> {
    let catalog: Value = serde_json::from_str(CATALOG).unwrap();
    catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let original = tool["name"].as_str().unwrap().to_owned();
            let called = original.clone();
            ToolDef::builder(original.clone())
                .wire_name(name::portable(&original))
                .description(tool["description"].as_str().unwrap())
                .input_schema(tool["input_schema"].clone())
                .read_only(true)
                .deferred(deferred)
                .handler(move |_: Value, _: CallContext| {
                    let called = called.clone();
                    async move { format!("{called} ran") }
                })
        })
        .collect()
}

fn registry(deferred: bool) -> Registry {
    Registry::builder()
        .tools(catalog(deferred))
        .build()
        .unwrap()
}

/// The catalog as `provider` takes it: Gemini refuses 12 of its tools,
/// whose parameter `enterprise-team` is no name it accepts (a host would
/// rename it; here they are left out).
fn registry_for(provider: Provider, deferred: bool) -> Registry {
    let tools = catalog(deferred)
        .into_iter()
        .filter(|def| def.schema().lowered(provider).is_ok());
    Registry::builder().tools(tools).build().unwrap()
}

/// The catalog's tools for issues and pull requests: the test server
/// keeps the first MiB of a body, and a provider's own search sends every
/// definition.
fn issue_and_pull_tools(deferred: bool) -> Registry {
    let tools = catalog(deferred)
        .into_iter()
        .filter(|def| def.name().starts_with("issues_") || def.name().starts_with("pulls_"));
    Registry::builder().tools(tools).build().unwrap()
}

/// The labelled requests: `(request, the tool's name as models call it)`.
fn requests() -> Vec<(String, String)> {
    let requests: Value = serde_json::from_str(REQUESTS).unwrap();
    requests
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair["request"].as_str().unwrap().to_owned(),
                name::portable(pair["tool"].as_str().unwrap()).into_owned(),
            )
        })
        .collect()
}

#[test]
fn the_catalog_and_its_requests_are_as_documented() {
    let registry = registry(true);
    assert!(registry.names().count() >= 1_000);
    let requests = requests();
    assert!(requests.len() >= 200);
    let names: HashSet<String> = registry.names().collect();
    for (_, tool) in &requests {
        assert!(names.contains(tool), "{tool}");
    }
}

#[test]
fn the_right_tool_is_in_the_top_five_for_nine_requests_in_ten() {
    let registry = registry(true);
    let tools = registry.tools();
    let index = ToolIndex::of_tools(&tools);
    let requests = requests();
    let mut missed = Vec::new();
    for (request, tool) in &requests {
        let found = index.search(request, 5);
        if !found.iter().any(|hit| &hit.name == tool) {
            missed.push(format!(
                "{request:?} -> {tool}, found {:?}",
                found
                    .iter()
                    .map(|hit| hit.name.as_str())
                    .collect::<Vec<_>>()
            ));
        }
    }
    let recall = 1.0 - missed.len() as f64 / requests.len() as f64;
    eprintln!(
        "recall@5: {recall:.3} ({} of {} missed)",
        missed.len(),
        requests.len()
    );
    for miss in &missed {
        eprintln!("  {miss}");
    }
    assert!(recall >= 0.9, "recall@5 {recall:.3}");
}

/// The tool list of a request body, as JSON text (Gemini's within its
/// one `functionDeclarations` entry).
fn tools_text(body: &Value) -> String {
    let tools = body.get("tools");
    let gemini = tools.and_then(|tools| tools.pointer("/0/functionDeclarations"));
    gemini.or(tools).map(Value::to_string).unwrap_or_default()
}

/// The first request of a conversation over the catalog, every tool
/// deferred on itself or none.
fn first_request(provider: Provider, deferred: bool, search: Option<ToolSearch>) -> Value {
    let registry = registry_for(provider, deferred);
    let mut conversation = Conversation::new(provider);
    conversation.set_tool_search(search);
    conversation.set_tools(&registry).unwrap();
    conversation.push_user("Open an issue about the crash.");
    conversation.request()
}

const PROVIDERS: [Provider; 4] = [
    Provider::OpenAi,
    Provider::OpenAiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

#[test]
fn the_first_request_carries_at_most_five_percent_of_the_tool_section() {
    // The `tools` field as sent.
    let section = |body: &Value| body["tools"].to_string().len();
    for provider in PROVIDERS {
        let full = section(&first_request(provider, false, None));
        let local = first_request(
            provider,
            true,
            Some(ToolSearch::new().native(NativeSearch::Off)),
        );
        let sent = section(&local);
        eprintln!(
            "{provider}: tool section {full} bytes whole, {sent} bytes deferred ({:.2}%)",
            100.0 * sent as f64 / full as f64
        );
        assert!(full > 500_000, "{provider}: {full}");
        assert!(sent * 20 <= full, "{provider}: {sent} of {full}");
        let tools = local["tools"].to_string();
        assert!(tools.contains(TOOL_SEARCH_TOOL));
        assert!(!tools.contains("issues_create"));
    }
}

#[test]
fn native_search_sends_every_definition_marked_deferred() {
    for provider in [Provider::Anthropic, Provider::OpenAiResponses] {
        let body = first_request(provider, true, None);
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(
            tools.len(),
            1_224,
            "{provider}: the search tool and every tool"
        );
        assert!(tools[1..].iter().all(|tool| tool["defer_loading"] == true));
        assert!(tools[0].get("defer_loading").is_none());
        let search = match provider {
            Provider::Anthropic => {
                json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
            }
            _ => json!({"type": "tool_search"}),
        };
        assert_eq!(tools[0], search, "{provider}");
        // Nothing deferred, nothing marked, no search tool.
        let whole = first_request(provider, false, None);
        assert_eq!(whole["tools"].as_array().unwrap().len(), 1_223);
        assert!(!whole["tools"].to_string().contains("defer_loading"));
    }
    let regex = first_request(
        Provider::Anthropic,
        true,
        Some(ToolSearch::new().native(NativeSearch::Regex)),
    );
    assert_eq!(regex["tools"][0]["type"], "tool_search_tool_regex_20251119");
    assert_eq!(regex["tools"][0]["name"], "tool_search_tool_regex");
    // Chat Completions and Gemini have none: their own search tool.
    for provider in [Provider::OpenAi, Provider::Gemini] {
        let body = first_request(provider, true, None);
        assert!(body["tools"].to_string().contains(TOOL_SEARCH_TOOL));
        assert!(!body["tools"].to_string().contains("defer_loading"));
    }
}

#[test]
fn tools_are_deferred_by_name_all_at_once_or_kept() {
    let registry = registry(false);
    let names = |conversation: &Conversation| -> Vec<String> {
        conversation.request()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_tools(&registry).unwrap();
    conversation.set_tool_search(Some(ToolSearch::new().defer_all().keep("issues_create")));
    assert_eq!(names(&conversation), ["issues_create", TOOL_SEARCH_TOOL]);
    conversation.set_tool_search(Some(ToolSearch::new().defer("issues_create")));
    let sent = names(&conversation);
    assert_eq!(sent.len(), 1_223, "one deferred, the search tool added");
    assert!(!sent.contains(&"issues_create".to_owned()));
    assert_eq!(sent.last().unwrap(), TOOL_SEARCH_TOOL);
    // A tool the model must call is sent, deferred or not.
    conversation.set_tool_search(Some(ToolSearch::new().defer_all()));
    conversation.set_tool_choice(ToolChoice::Tool("pulls_list".into()));
    assert_eq!(names(&conversation), ["pulls_list", TOOL_SEARCH_TOOL]);
}

/// A Chat Completions reply calling one tool.
fn chat_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}}))
}

/// Each request's tool list is the one before with tools appended: its
/// JSON text, up to the closing bracket, is a prefix of the next one's.
fn assert_tools_only_grow(bodies: &[Value]) {
    for pair in bodies.windows(2) {
        let before = tools_text(&pair[0]);
        let after = tools_text(&pair[1]);
        let open = before.strip_suffix(']').unwrap();
        assert!(
            after.starts_with(open),
            "the tool list changed other than by appending"
        );
    }
}

/// The names of the tools a Chat Completions request offers.
fn chat_tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn an_agent_finds_tools_and_its_requests_keep_their_prefix() {
    let server = TestServer::replying([
        chat_call("c1", TOOL_SEARCH_TOOL, json!({"query": "create an issue"})),
        chat_call(
            "c2",
            "issues_create",
            json!({"owner": "o", "repo": "r", "title": "crash"}),
        ),
        chat_call(
            "c3",
            TOOL_SEARCH_TOOL,
            json!({"query": "list the reviews of a pull request"}),
        ),
        chat_call(
            "c4",
            "pulls_list-reviews",
            json!({"owner": "o", "repo": "r", "pull_number": 7}),
        ),
        chat_call("c5", TOOL_SEARCH_TOOL, json!({"query": "create an issue"})),
        chat_text("Done."),
    ]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder(model, registry(true)).build().unwrap();
    let outcome = agent
        .run("File the crash, then read the reviews of PR 7.")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Done."));
    let bodies: Vec<Value> = server.requests().iter().map(Request::json).collect();
    assert_eq!(bodies.len(), 6);
    assert_eq!(chat_tool_names(&bodies[0]), [TOOL_SEARCH_TOOL]);
    // The search's matches are offered from the next request on.
    let second = chat_tool_names(&bodies[1]);
    assert_eq!(second[0], TOOL_SEARCH_TOOL);
    assert!(second.contains(&"issues_create"), "{second:?}");
    assert!(second.len() <= 6);
    let fourth = chat_tool_names(&bodies[3]);
    assert!(fourth.contains(&"pulls_list-reviews"), "{fourth:?}");
    assert_eq!(&fourth[..second.len()], &second[..]);
    // Found again, nothing new: the same list.
    assert_eq!(tools_text(&bodies[5]), tools_text(&bodies[4]));
    assert_tools_only_grow(&bodies);
    // The model read what it found, and the found tools ran.
    let results: Vec<String> = bodies[5]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        results[0].contains("`issues_create`: Create an issue."),
        "{}",
        results[0]
    );
    assert_eq!(results[1], "issues/create ran");
    assert_eq!(results[3], "pulls/list-reviews ran");
    for body in &bodies {
        judge_chat(body);
    }
}

fn judge_chat(body: &Value) {
    let typed: async_openai::types::chat::CreateChatCompletionRequest =
        serde_json::from_value(body.clone()).unwrap_or_else(|error| panic!("{error}"));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(back["tools"], body["tools"]);
}

#[tokio::test]
async fn a_saved_conversation_keeps_what_was_found() {
    for provider in [Provider::OpenAi, Provider::Gemini, Provider::Anthropic] {
        let registry = registry_for(provider, true);
        let mut conversation = Conversation::new(provider);
        conversation.set_tool_search(Some(
            ToolSearch::new().native(NativeSearch::Off).max_results(2),
        ));
        conversation.set_tools(&registry).unwrap();
        conversation.push_user("Star the repository.");
        let found = conversation.search_tools("star a repository for the authenticated user");
        assert_eq!(found.len(), 2);
        assert_eq!(conversation.found_tools(), &found[..]);
        let saved = serde_json::to_string(&conversation).unwrap();
        let mut loaded: Conversation = serde_json::from_str(&saved).unwrap();
        assert_eq!(loaded.request(), conversation.request(), "{provider}");
        // Set again from the registry (as a run does), nothing changes.
        loaded.set_tools(&registry).unwrap();
        assert_eq!(loaded.request(), conversation.request(), "{provider}");
        assert!(loaded.request()["tools"].to_string().contains(&found[0]));
    }
}

#[test]
fn local_requests_are_judged_by_the_providers_types() {
    let search = ToolSearch::new().native(NativeSearch::Off);
    for provider in PROVIDERS {
        let registry = registry_for(provider, true);
        let mut conversation = Conversation::new(provider);
        conversation.set_tool_search(Some(search.clone()));
        conversation.set_tools(&registry).unwrap();
        conversation.push_user("Who starred octocat/hello-world?");
        conversation.search_tools("list the people who starred a repository");
        let mut body = conversation.request();
        if provider != Provider::Gemini {
            body["model"] = json!("m");
        }
        match provider {
            Provider::OpenAi => judge_chat(&body),
            Provider::OpenAiResponses => judge_responses(&body),
            Provider::Anthropic => {
                anthropic_request::check_request(&body).unwrap();
            }
            _ => {
                gemini_request::check_request(&body).unwrap();
            }
        }
    }
}

/// In every provider's form, each search appends what it found and
/// nothing else: the tool list of a request is the one before's with tools
/// added at its end.
#[test]
fn found_tools_are_appended_in_every_provider() {
    for provider in PROVIDERS {
        let registry = registry_for(provider, true);
        let mut conversation = Conversation::new(provider);
        conversation.set_tool_search(Some(ToolSearch::new().native(NativeSearch::Off)));
        conversation.set_tools(&registry).unwrap();
        conversation.push_user("Triage the repository.");
        let mut bodies = vec![conversation.request()];
        for query in [
            "list the open issues of a repository",
            "add labels to an issue",
            "list the open issues of a repository",
            "lock an issue",
        ] {
            conversation.search_tools(query);
            bodies.push(conversation.request());
        }
        assert_tools_only_grow(&bodies);
        assert_eq!(tools_text(&bodies[3]), tools_text(&bodies[2]), "{provider}");
        assert!(tools_text(&bodies[4]).len() > tools_text(&bodies[3]).len());
    }
}

fn judge_responses(body: &Value) {
    let typed: async_openai::types::responses::CreateResponse =
        serde_json::from_value(body.clone()).unwrap_or_else(|error| panic!("{error}"));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(back["tools"], body["tools"]);
}

#[tokio::test]
async fn anthropic_searches_natively_with_its_beta_header() {
    let search_turn = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5},
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
             "input": {"query": "create issue"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "issues_create"}]}},
            {"type": "tool_use", "id": "toolu_1", "name": "issues_create",
             "input": {"owner": "o", "repo": "r", "title": "crash"}}]});
    let server = TestServer::replying([
        Reply::json(&search_turn),
        Reply::json(
            &json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "m",
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5},
            "content": [{"type": "text", "text": "Filed."}]}),
        ),
    ]);
    let model = HttpModel::anthropic("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder(model, issue_and_pull_tools(true))
        .build()
        .unwrap();
    let outcome = agent.run("File the crash.").await.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Filed."));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.header("anthropic-beta"),
            Some("advanced-tool-use-2025-11-20")
        );
        let body = request.json();
        anthropic_request::check_request(&body).unwrap();
    }
    let bodies: Vec<Value> = requests.iter().map(Request::json).collect();
    // The same tools both times: the provider loaded what it found.
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    let echoed = &bodies[1]["messages"][1]["content"];
    assert_eq!(echoed[1]["type"], "tool_search_tool_result");
    assert_eq!(
        bodies[1]["messages"][2]["content"][0]["content"][0]["text"],
        "issues/create ran"
    );
}

#[tokio::test]
async fn responses_searches_on_the_server() {
    let server = TestServer::replying([
        Reply::json(
            &json!({"id": "resp_1", "status": "completed", "model": "m", "output": [
            {"type": "tool_search_call", "id": "ts_1", "call_id": null, "execution": "server",
             "arguments": {"query": "create issue"}, "status": "completed"},
            {"type": "tool_search_output", "id": "tso_1", "call_id": null, "execution": "server",
             "status": "completed", "tools": [{"type": "function", "name": "issues_create",
                "description": "Create an issue.", "parameters": {"type": "object", "properties": {}},
                "strict": false, "defer_loading": true}]},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "issues_create",
             "arguments": "{\"owner\":\"o\",\"repo\":\"r\",\"title\":\"crash\"}", "status": "completed"}]}),
        ),
        Reply::json(
            &json!({"id": "resp_2", "status": "completed", "model": "m", "output": [
            {"type": "message", "id": "m_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Filed.", "annotations": []}]}]}),
        ),
    ]);
    let model = HttpModel::openai_responses("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder(model, issue_and_pull_tools(true))
        .build()
        .unwrap();
    let outcome = agent.run("File the crash.").await.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Filed."));
    let bodies: Vec<Value> = server.requests().iter().map(Request::json).collect();
    for body in &bodies {
        judge_responses(body);
    }
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    let input = bodies[1]["input"].as_array().unwrap();
    assert!(
        input
            .iter()
            .any(|item| item["type"] == "tool_search_output")
    );
    let output = input
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["output"], "issues/create ran");
}

/// The Anthropic judge is no pushover about tool search: deferred tools
/// without a search tool, a search tool misnamed or deferred, and every
/// tool deferred are refused.
#[test]
fn the_anthropic_judge_refuses_broken_tool_search() {
    let mut conversation = Conversation::new(Provider::Anthropic);
    conversation.set_tools(&issue_and_pull_tools(true)).unwrap();
    conversation.push_user("File the crash.");
    let mut good = conversation.request();
    good["model"] = json!("m");
    anthropic_request::check_request(&good).unwrap();
    let broken = |change: &dyn Fn(&mut Value)| {
        let mut body = good.clone();
        change(&mut body);
        anthropic_request::check_request(&body).unwrap_err()
    };
    let no_search = broken(&|body| {
        body["tools"].as_array_mut().unwrap().remove(0);
    });
    assert!(no_search.contains("need a tool search tool"), "{no_search}");
    let misnamed = broken(&|body| body["tools"][0]["name"] = json!("search"));
    assert!(misnamed.contains("is named"), "{misnamed}");
    let deferred = broken(&|body| body["tools"][0]["defer_loading"] = json!(true));
    assert!(deferred.contains("never deferred"), "{deferred}");
}

#[test]
fn an_agent_refuses_a_tool_search_naming_no_tool() {
    let model = HttpModel::openai_chat("m").no_key().build().unwrap();
    let built = Agent::builder(model, issue_and_pull_tools(false))
        .tool_search(ToolSearch::new().defer("issues_craete"))
        .build();
    let error = built.expect_err("a typo is refused").to_string();
    assert!(
        error.contains("`tool_search` names `issues_craete`"),
        "{error}"
    );
    // The original name is a tool's name too.
    let model = HttpModel::openai_chat("m").no_key().build().unwrap();
    let agent = Agent::builder(model, issue_and_pull_tools(false))
        .tool_search(ToolSearch::new().defer("issues/create"))
        .build()
        .unwrap();
    let conversation = agent.conversation("File the crash.").unwrap();
    assert!(conversation.is_deferred("issues_create"));
    assert!(!conversation.is_deferred("issues_list"));
}
