//! A program's calls are traced as a model's are: an `execute_tool` span
//! per call, each a child of the program's `execute_code` span, itself a
//! child of the `run_code` call's span when the program came through the
//! tool.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolkit_code::CodeMode;
use toolkit_core::{Registry, tool, tools};
use tracing::Subscriber;
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// Doubles a number.
#[tool]
async fn double(
    /// The number.
    n: i64,
) -> i64 {
    n * 2
}

/// Every span opened: its name, its `gen_ai.tool.name` if any, and its
/// parent's name.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<(String, String)>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("the span exists");
        let parent = span
            .parent()
            .map(|parent| parent.name().to_owned())
            .unwrap_or_default();
        let _ = attrs;
        self.0
            .lock()
            .unwrap()
            .push((span.name().to_owned(), parent));
    }
}

#[tokio::test]
async fn each_call_is_a_span_under_the_program_and_the_program_under_run_code() {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _default = tracing::subscriber::set_default(subscriber);

    let registry = Arc::new(Registry::builder().tools(tools![double]).build().unwrap());
    let mode = CodeMode::new(registry);
    let outer = Registry::builder().tool(mode.tool()).build().unwrap();
    let outcome = outer
        .dispatch((
            "run_code",
            &json!({"code": "const [a, b, c] = await Promise.all([1, 2, 3].map((n) => tools.double({ n }))); return Number(a) + Number(b) + Number(c);"}),
        ))
        .await;
    assert_eq!(outcome.result.to_text(), "12");

    let spans = spans.0.lock().unwrap().clone();
    let count = |name: &str, parent: &str| {
        spans
            .iter()
            .filter(|(n, p)| n == name && p == parent)
            .count()
    };
    assert_eq!(count("execute_tool", ""), 1, "{spans:?}");
    assert_eq!(count("execute_code", "execute_tool"), 1, "{spans:?}");
    assert_eq!(count("execute_tool", "execute_code"), 3, "{spans:?}");
}
